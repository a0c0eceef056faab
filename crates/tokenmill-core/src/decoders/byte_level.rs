//! `ByteLevel` decoder: GPT-2 alphabet characters back to bytes, then UTF-8.
//!
//! The settings struct is the pre-tokenizer's (tokenizer.json stores the same fields for
//! both); decoding ignores them.
use crate::utils::byte_level::char_to_byte;

pub use crate::pre_tokenizers::byte_level::ByteLevel;

/// One string: every token whose characters all belong to the byte alphabet contributes those
/// bytes, any other token its UTF-8 as is; the bytes are decoded lossily (each invalid sequence
/// becomes U+FFFD by the "maximal subpart" rule, as `String::from_utf8_lossy` and `tokenizers` do).
pub fn decode_chain(tokens: Vec<String>) -> Vec<String> {
    let mut bytes = Vec::with_capacity(tokens.iter().map(String::len).sum());
    for token in &tokens {
        let start = bytes.len();
        let all_mapped = token.chars().all(|c| match char_to_byte(c) {
            Some(b) => {
                bytes.push(b);
                true
            }
            None => false,
        });
        if !all_mapped {
            bytes.truncate(start);
            bytes.extend_from_slice(token.as_bytes());
        }
    }
    vec![String::from_utf8_lossy(&bytes).into_owned()]
}
