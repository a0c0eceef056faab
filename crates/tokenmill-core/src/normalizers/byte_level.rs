//! ByteLevel normalizer: every UTF-8 byte becomes one printable char of the GPT-2 alphabet
//! (the table lives in `utils::byte_level`, shared with the pre-tokenizer and decoder).
use super::unicode::unit_normalizer;
use crate::utils::byte_level::BYTES_TO_CHARS;

unit_normalizer!(
    /// Maps each byte of the text to its GPT-2 char; every char produced from a multi-byte
    /// char keeps the span of the char it comes from (as in `tokenizers`).
    ByteLevel,
    |n| {
        let mut buf = [0u8; 4];
        n.flat_map(|c| {
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let mut out = [' '; 4];
            for (slot, b) in out.iter_mut().zip(bytes) {
                *slot = BYTES_TO_CHARS[*b as usize];
            }
            out.into_iter().take(bytes.len())
        });
    }
);

impl ByteLevel {
    pub fn new() -> Self {
        ByteLevel
    }
    /// The 256 chars the normalized text can contain.
    pub fn alphabet() -> Vec<char> {
        BYTES_TO_CHARS.to_vec()
    }
}
