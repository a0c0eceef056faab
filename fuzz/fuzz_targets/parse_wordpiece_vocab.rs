//! WordPiece `vocab.txt`: parsing never panics; a vocabulary that parses builds a model (or
//! fails cleanly) that tokenizes words into ids of the vocabulary.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokenmill_core::models::wordpiece::{files, WordPiece};

fuzz_target!(|data: &[u8]| {
    let Ok(vocab) = files::read_bytes(data) else { return };
    let size = vocab.len();
    let unk = vocab.keys().min().cloned().unwrap_or_default();
    let Ok(model) = WordPiece::builder().vocab(vocab).unk_token(unk).build() else { return };
    for word in ["hello", "unaffable", "ça", "你好", "🙂🙂", "##"] {
        let mut ids = Vec::new();
        if model.tokenize_ids_into(word, &mut ids).is_ok() {
            tokenmill_fuzz::check_ids("wordpiece", &ids, size);
        }
    }
});
