//! `vocab.txt`: one token per line, the line index (from 0) is its id. As in `tokenizers`,
//! trailing whitespace is removed from each line (Rust's `trim_end`, Unicode whitespace) and a
//! final newline does not add an empty token.
//!
//! Differences from `tokenizers`, on purpose: a token that appears twice (after trimming) is an
//! error naming both lines (`tokenizers` silently keeps the later id and leaves a hole in the
//! ids), and invalid UTF-8 is reported with its line and byte offset.
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use super::model::{Vocab, WordPiece};
use crate::error::{Error, Result};
use crate::models::bpe::files::{prefixed_name, text_lines};
use crate::utils::atomic::write_atomic;

/// Reads `vocab.txt` into token → id.
pub fn read_file(path: &Path) -> Result<Vocab> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    read_bytes(&bytes).map_err(|e| e.in_file(path))
}

/// Parses the contents of a `vocab.txt` (errors name the line, not the file).
pub fn read_bytes(bytes: &[u8]) -> Result<Vocab> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::Utf8 { path: None, line: Some(line), byte_offset: offset }
    })?;
    let mut first_line: FxHashMap<&str, usize> = FxHashMap::default();
    let mut vocab = Vocab::new();
    for (index, line) in text_lines(text).enumerate() {
        let token = line.trim_end();
        if let Some(earlier) = first_line.insert(token, index + 1) {
            return Err(Error::Format {
                path: None,
                line: Some(index + 1),
                byte_offset: None,
                message: format!(
                    "duplicate token {token:?} (first on line {earlier}); each token \
                    must appear once"
                ),
            });
        }
        vocab.insert(token.to_string(), index as u32);
    }
    Ok(vocab)
}

/// The `vocab.txt` text: tokens in increasing id order, one per line (ids missing from the
/// vocabulary are skipped, as `tokenizers` does). A token with a line break cannot be written.
fn vocab_txt(model: &WordPiece) -> Result<Vec<u8>> {
    let mut out = String::new();
    for (token, id) in model.vocab_in_id_order() {
        if token.contains(['\n', '\r']) {
            return Err(Error::InvalidArgument(format!(
                "token {token:?} (id {id}) has a line break: it cannot be written to vocab.txt"
            )));
        }
        out.push_str(token);
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// Writes `[prefix-]vocab.txt` into `folder` (atomically) and returns its path.
pub fn save(model: &WordPiece, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
    let path = folder.join(prefixed_name(prefix, "vocab.txt"));
    write_atomic(&path, &vocab_txt(model)?)?;
    Ok(vec![path])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn reads_trims_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "v.txt", "[UNK]\r\nhe \n##llo\u{2028}\n\nx".as_bytes());
        let vocab = read_file(&path).unwrap();
        assert_eq!(vocab.len(), 5);
        assert_eq!(vocab["he"], 1);
        assert_eq!(vocab["##llo"], 2);
        assert_eq!(vocab[""], 3);
        assert_eq!(vocab["x"], 4);
        let wp = WordPiece::from_file(&path).build().unwrap();
        assert_eq!(
            wp.tokenize("hello").unwrap().iter().map(|t| t.id).collect::<Vec<_>>(),
            vec![1, 2]
        );
        let saved = wp.save(dir.path(), Some("out")).unwrap();
        assert_eq!(std::fs::read_to_string(&saved[0]).unwrap(), "[UNK]\nhe\n##llo\n\nx\n");
        assert_eq!(WordPiece::from_file(&saved[0]).build().unwrap(), wp);
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let dup = write(dir.path(), "dup.txt", b"[UNK]\na\nb\na \n");
        let err = read_file(&dup).unwrap_err().to_string();
        assert!(err.contains("dup.txt:line 4") && err.contains("first on line 2"), "{err}");
        let bad = write(dir.path(), "bad.txt", b"[UNK]\na\n\xff\n");
        let err = read_file(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.txt:line 3") && err.contains("UTF-8"), "{err}");
        let no_unk = write(dir.path(), "nounk.txt", b"a\nb\n");
        let err = WordPiece::from_file(&no_unk).build().unwrap_err().to_string();
        assert!(err.contains("nounk.txt") && err.contains("[UNK]"), "{err}");
        let missing = dir.path().join("missing.txt");
        assert!(WordPiece::from_file(&missing)
            .build()
            .unwrap_err()
            .to_string()
            .contains("missing.txt"));
    }
}
