//! tiktoken-style encodings (r50k_base/GPT-2, cl100k_base, o200k_base from the shared pretrained
//! files) on any text: no panic, every id in the vocabulary, and decoding gives back the text's
//! bytes exactly (byte-level BPE is lossless), with special tokens disallowed or allowed. The
//! first byte picks the encoding and the mode.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let encodings = tokenmill_fuzz::tiktoken_encodings();
    let Some((encoding, kind, text)) = tokenmill_fuzz::pick(data, encodings) else { return };
    let what = encoding.name;
    let ids = if kind & 0x80 == 0 {
        encoding.core.encode_ordinary(text)
    } else {
        encoding.core.encode(text, |_| true)
    };
    let ids = ids.unwrap_or_else(|e| panic!("{what}: encoding {text:?} failed: {e}"));
    tokenmill_fuzz::check_ids(what, &ids, encoding.n_vocab as usize);
    let decoded = encoding.core.decode_bytes(&ids).expect("the ids decode");
    assert_eq!(decoded, text.as_bytes(), "{what}: decode(encode(x)) != x for {text:?}");
});
