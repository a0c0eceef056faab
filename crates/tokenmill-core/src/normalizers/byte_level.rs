//! ByteLevel normalizer: every UTF-8 byte becomes one printable char of the GPT-2 alphabet.
use std::sync::LazyLock;

use super::unicode::unit_normalizer;

/// GPT-2's byte → char table: printable Latin-1 bytes stand for themselves, the other 68
/// bytes get the chars from U+0100 on, in byte order.
pub fn bytes_char() -> [char; 256] {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut table = ['\0'; 256];
    let mut next_extra = 256u32;
    for b in 0..=255u8 {
        table[b as usize] = if printable(b) {
            b as char
        } else {
            let c = char::from_u32(next_extra).unwrap_or('\u{FFFD}');
            next_extra += 1;
            c
        };
    }
    table
}

static BYTES_CHAR: LazyLock<[char; 256]> = LazyLock::new(bytes_char);

unit_normalizer!(
    /// Maps each byte of the text to its GPT-2 char; every char of a multi-byte char keeps the
    /// span of the char it comes from.
    ByteLevel,
    |n| {
        let table = &*BYTES_CHAR;
        let mut buf = [0u8; 4];
        n.flat_map(|c| {
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let mut out = [' '; 4];
            for (slot, b) in out.iter_mut().zip(bytes) {
                *slot = table[*b as usize];
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
        BYTES_CHAR.to_vec()
    }
}
