//! BPE model files: `vocab.json` + `merges.txt` (GPT-2 layout), and the identical data-gym pair
//! `encoder.json` + `vocab.bpe`. The merges file holds one `a b` merge per line in rank order;
//! lines starting with `#version` are skipped (as `tokenizers` does). Writes are atomic: each file
//! is written to a temporary file in the target folder, then renamed over the target.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::model::{BpeBuilder, BpeOptions, Merges, Vocab, BPE};
use super::serialization::split_merge_line;
use crate::error::{Error, Result};
use crate::models::json::OrderedVocab;
use crate::utils::atomic::write_atomic;

/// The merges of a merges file with the 1-based line each came from (for error messages).
struct MergesFile {
    merges: Merges,
    lines: Vec<usize>,
}

fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// Reads `vocab.json` (or `encoder.json`): a JSON object from token to integer id.
pub fn read_vocab(path: &Path) -> Result<Vocab> {
    let bytes = read_bytes(path)?;
    let vocab: HashMap<String, u32> =
        serde_json::from_slice(&bytes).map_err(|e| Error::from(e).in_file(path))?;
    Ok(vocab)
}

fn read_merges_file(path: &Path) -> Result<MergesFile> {
    let bytes = read_bytes(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let offset = e.valid_up_to();
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::Utf8 { path: Some(path.to_path_buf()), line: Some(line), byte_offset: offset }
    })?;
    let mut merges = Vec::new();
    let mut lines = Vec::new();
    for (index, line) in text_lines(text).enumerate() {
        let line_number = index + 1;
        if line.starts_with("#version") {
            continue;
        }
        let (a, b) = split_merge_line(line).ok_or_else(|| Error::Format {
            path: Some(path.to_path_buf()),
            line: Some(line_number),
            byte_offset: None,
            message: format!("expected two tokens separated by one space, got {line:?}"),
        })?;
        merges.push((a.to_string(), b.to_string()));
        lines.push(line_number);
    }
    Ok(MergesFile { merges, lines })
}

/// Lines as Rust's `BufRead::lines` gives them (what `tokenizers` reads): split on `\n`, a
/// `\r` before the `\n` removed, no empty last line after a final newline.
pub(crate) fn text_lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n').filter(move |_| !empty).map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// Reads the merges file alone.
pub fn read_merges(path: &Path) -> Result<Merges> {
    Ok(read_merges_file(path)?.merges)
}

/// Reads a vocab file and a merges file.
pub fn read_file(vocab: &Path, merges: &Path) -> Result<(Vocab, Merges)> {
    Ok((read_vocab(vocab)?, read_merges(merges)?))
}

/// Builds a model from a vocab file and a merges file. A merge naming a token the vocabulary
/// lacks is a format error pointing at the merges file and line.
pub fn from_files(vocab_path: &Path, merges_path: &Path, options: BpeOptions) -> Result<BPE> {
    let vocab = read_vocab(vocab_path)?;
    let MergesFile { merges, lines } = read_merges_file(merges_path)?;
    BpeBuilder::new().vocab_and_merges(vocab, merges).options(options).build_with_merge_error(
        |index, message| Error::Format {
            path: Some(merges_path.to_path_buf()),
            line: lines.get(index).copied(),
            byte_offset: None,
            message: format!("{message} (vocabulary {})", vocab_path.display()),
        },
    )
}

/// Writes `vocab.json` (a JSON object token → id, in id order) to `path` atomically: the
/// vocabulary file of BPE and WordLevel models.
pub(crate) fn write_vocab_json(path: &Path, in_id_order: Vec<(&str, u32)>) -> Result<()> {
    write_atomic(path, &serde_json::to_vec(&OrderedVocab(in_id_order))?)
}

/// `[prefix-]base`: the name `tokenizers` gives a model file saved with a prefix.
pub(crate) fn prefixed_name(prefix: Option<&str>, base: &str) -> String {
    match prefix {
        Some(p) => format!("{p}-{base}"),
        None => base.to_string(),
    }
}

fn merges_txt(bpe: &BPE) -> Vec<u8> {
    let mut out = String::from("#version: 0.2\n");
    for (a, b) in bpe.merges() {
        out.push_str(&a);
        out.push(' ');
        out.push_str(&b);
        out.push('\n');
    }
    out.into_bytes()
}

/// Writes the vocabulary and merges under the given file names in `folder`.
pub fn save_as(
    bpe: &BPE,
    folder: &Path,
    vocab_name: &str,
    merges_name: &str,
) -> Result<Vec<PathBuf>> {
    let vocab_path = folder.join(vocab_name);
    let merges_path = folder.join(merges_name);
    write_vocab_json(&vocab_path, bpe.vocab_in_id_order())?;
    write_atomic(&merges_path, &merges_txt(bpe))?;
    Ok(vec![vocab_path, merges_path])
}

/// `[prefix-]vocab.json` and `[prefix-]merges.txt` in `folder` (the `tokenizers` names).
pub fn save(bpe: &BPE, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
    save_as(bpe, folder, &prefixed_name(prefix, "vocab.json"), &prefixed_name(prefix, "merges.txt"))
}

/// The data-gym pair `encoder.json` + `vocab.bpe` in `folder` (GPT-2's original file names).
pub fn save_data_gym(bpe: &BPE, folder: &Path) -> Result<Vec<PathBuf>> {
    save_as(bpe, folder, "encoder.json", "vocab.bpe")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn round_trip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let v = write(dir.path(), "v.json", r#"{"a":0,"b":1,"ab":2,"c":3,"abc":4}"#);
        let m = write(dir.path(), "m.txt", "#version: 0.2\r\na b\r\nab c\n");
        let bpe = from_files(&v, &m, BpeOptions::default()).unwrap();
        assert_eq!(bpe.tokenize("abc").unwrap()[0].id, 4);
        let saved = bpe.save(dir.path(), Some("x")).unwrap();
        let again = from_files(&saved[0], &saved[1], BpeOptions::default()).unwrap();
        assert_eq!(again, bpe);
        assert_eq!(std::fs::read_to_string(&saved[1]).unwrap(), "#version: 0.2\na b\nab c\n");
        assert_eq!(
            std::fs::read_to_string(&saved[0]).unwrap(),
            r#"{"a":0,"b":1,"ab":2,"c":3,"abc":4}"#
        );
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let v = write(dir.path(), "v.json", r#"{"a":0,"b":1,"ab":2}"#);
        let bad_line = write(dir.path(), "m1.txt", "#version: 0.2\na b\na b c\n");
        let err = from_files(&v, &bad_line, BpeOptions::default()).unwrap_err().to_string();
        assert!(err.contains("m1.txt:line 3"), "{err}");
        let unknown = write(dir.path(), "m2.txt", "#version: 0.2\na b\nb q\n");
        let err = from_files(&v, &unknown, BpeOptions::default()).unwrap_err().to_string();
        assert!(err.contains("m2.txt:line 3") && err.contains("\"q\""), "{err}");
        let bad_json = write(dir.path(), "v2.json", "{\"a\":0,\n\"b\":\"x\"}");
        let err = from_files(&bad_json, &unknown, BpeOptions::default()).unwrap_err().to_string();
        assert!(err.contains("v2.json:line 2"), "{err}");
    }
}
