//! `vocab.json`: a JSON object token → id (the BPE vocabulary file, read and written by the
//! same code). Differences from `tokenizers`, on purpose: an entry whose id is not a
//! non-negative integer is an error naming the file and line (`tokenizers` skips entries whose
//! value is not a number), and the file is written atomically.
use std::path::{Path, PathBuf};

use super::model::{Vocab, WordLevel};
use crate::error::Result;
use crate::models::bpe::files::{prefixed_name, read_vocab, write_vocab_json};

/// Reads `vocab.json` into token → id.
pub fn read_file(path: &Path) -> Result<Vocab> {
    read_vocab(path)
}

/// Writes `[prefix-]vocab.json` into `folder` (tokens in id order, atomically) and returns its
/// path.
pub fn save(model: &WordLevel, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
    let path = folder.join(prefixed_name(prefix, "vocab.json"));
    write_vocab_json(&path, model.vocab_in_id_order())?;
    Ok(vec![path])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    #[test]
    fn round_trips_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        std::fs::write(&path, r#"{"<unk>":0,"b":2,"a":1}"#).unwrap();
        let model = WordLevel::from_file(&path).build().unwrap();
        assert_eq!(model.token_to_id("b"), Some(2));
        let saved = model.save(dir.path(), Some("out")).unwrap();
        assert!(saved[0].ends_with("out-vocab.json"));
        assert_eq!(std::fs::read_to_string(&saved[0]).unwrap(), r#"{"<unk>":0,"a":1,"b":2}"#);
        assert_eq!(WordLevel::from_file(&saved[0]).build().unwrap(), model);
        std::fs::write(&path, "{\"a\":0,\n\"b\":-1}").unwrap();
        let err = read_file(&path).unwrap_err().to_string();
        assert!(err.contains("v.json:line 2"), "{err}");
        let missing = dir.path().join("missing.json");
        assert!(read_file(&missing).unwrap_err().to_string().contains("missing.json"));
    }
}
