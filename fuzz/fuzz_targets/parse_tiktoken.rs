//! `.tiktoken` files (base64 token, rank per line): parsing never panics; ranks that parse
//! build an encoding (or fail cleanly) that encodes and decodes a text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rustc_hash::FxHashMap;
use tokenmill_core::tiktoken::{parse_tiktoken_bpe, CoreBpe};

fuzz_target!(|data: &[u8]| {
    let Ok(ranks) = parse_tiktoken_bpe(data) else { return };
    let specials = FxHashMap::from_iter([("<|endoftext|>".to_string(), u32::MAX - 1)]);
    let Ok(core) = CoreBpe::new(ranks, specials, tokenmill_fuzz::CL100K_PATTERN) else { return };
    for text in ["hello world", "ça va 🙂 <|endoftext|>", "  \n\n123456"] {
        if let Ok(ids) = core.encode(text, |_| true) {
            let _ = core.decode_bytes(&ids);
        }
    }
});
