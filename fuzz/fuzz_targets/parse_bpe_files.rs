//! BPE `vocab.json` + `merges.txt` (and the data-gym `encoder.json` + `vocab.bpe`): reading
//! never panics; a pair that loads tokenizes words. The input is the vocabulary, a NUL byte,
//! then the merges; both go through real files, as users give them.
#![no_main]
use std::io::Write;

use libfuzzer_sys::fuzz_target;
use tokenmill_core::models::bpe::{files, BpeOptions};
use tokenmill_core::tokenizer::Model;

fuzz_target!(|data: &[u8]| {
    let (vocab, merges) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (vocab_path, merges_path) = (dir.path().join("vocab.json"), dir.path().join("merges.txt"));
    std::fs::File::create(&vocab_path).unwrap().write_all(vocab).unwrap();
    std::fs::File::create(&merges_path).unwrap().write_all(merges).unwrap();
    let Ok(bpe) = files::from_files(&vocab_path, &merges_path, BpeOptions::default()) else {
        return;
    };
    for word in ["hello", "lower", "ça", "你好", "🙂"] {
        if let Ok(tokens) = bpe.tokenize(word) {
            let known = tokens.iter().all(|t| bpe.id_to_token(t.id).is_some());
            assert!(known, "bpe: an id that is not in the vocabulary");
        }
    }
});
