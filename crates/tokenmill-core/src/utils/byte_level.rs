//! The GPT-2 byte ↔ unicode alphabet, shared by everything byte-level: the ByteLevel
//! pre-tokenizer (bytes → visible chars), the ByteLevel decoder (chars → bytes), the BPE
//! trainer (initial alphabet) and the tiktoken ↔ tokenizer.json conversion.
//!
//! Each of the 256 byte values gets one printable char: the printable Latin-1 bytes
//! (`!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`) stand for themselves; the 68 others (controls, space,
//! soft hyphen, …) get `U+0100 + k`, `k` counting them in byte order (so `' '` → `'Ġ'`,
//! `'\n'` → `'Ċ'`). This is the exact table of GPT-2's `bytes_to_unicode()`.
//!
//! Use [`byte_to_char`] / [`char_to_byte`] (table lookups, no hashing), [`BYTES_TO_CHARS`] for
//! the whole table, [`alphabet`] for the 256 chars, [`bytes_to_string`] / [`string_to_bytes`]
//! for whole tokens.

/// Whether GPT-2 keeps byte `b` as the char of the same code point.
const fn is_kept(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

const fn build_byte_to_char() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut shifted = 0u32;
    let mut b = 0usize;
    while b < 256 {
        let code = if is_kept(b as u8) {
            b as u32
        } else {
            shifted += 1;
            0x100 + shifted - 1
        };
        // Every code is < 0x144, a valid scalar value.
        table[b] = match char::from_u32(code) {
            Some(c) => c,
            None => '\0',
        };
        b += 1;
    }
    table
}

/// `BYTES_TO_CHARS[b]` is the char that stands for byte `b`.
pub const BYTES_TO_CHARS: [char; 256] = build_byte_to_char();

/// All chars of the alphabet are below this code point.
const CHAR_LIMIT: usize = 0x144;

const fn build_char_to_byte() -> [i16; CHAR_LIMIT] {
    let mut table = [-1i16; CHAR_LIMIT];
    let mut b = 0usize;
    while b < 256 {
        table[BYTES_TO_CHARS[b] as usize] = b as i16;
        b += 1;
    }
    table
}

/// Inverse table indexed by code point; `-1` for chars outside the alphabet.
const CHARS_TO_BYTES: [i16; CHAR_LIMIT] = build_char_to_byte();

/// The char that stands for byte `b`.
#[inline]
pub fn byte_to_char(b: u8) -> char {
    BYTES_TO_CHARS[b as usize]
}

/// The byte a char of the alphabet stands for; `None` for any other char.
#[inline]
pub fn char_to_byte(c: char) -> Option<u8> {
    match CHARS_TO_BYTES.get(c as usize) {
        Some(&b) if b >= 0 => Some(b as u8),
        _ => None,
    }
}

/// The 256 chars of the alphabet, in byte order.
pub fn alphabet() -> Vec<char> {
    BYTES_TO_CHARS.to_vec()
}

/// Maps bytes to their alphabet chars (e.g. a token's raw bytes to its tokenizer.json form).
pub fn bytes_to_string(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    s.extend(bytes.iter().map(|&b| byte_to_char(b)));
    s
}

/// Maps a string of alphabet chars back to bytes; `None` if a char is outside the alphabet.
pub fn string_to_bytes(s: &str) -> Option<Vec<u8>> {
    s.chars().map(char_to_byte).collect()
}

/// `raw`'s bytes as byte-level chars, with the origin of every byte of the result: `origins[k]`
/// is the byte of `raw` that mapped byte `k` stands for, and `origins[mapped.len()]` is
/// `raw.len()`, so a byte span of the mapped text converts to a span of `raw` by two lookups.
pub fn map_bytes_with_origins(raw: &[u8]) -> (String, Vec<usize>) {
    let mut mapped = String::with_capacity(2 * raw.len());
    let mut origins = Vec::with_capacity(2 * raw.len() + 1);
    for (k, &byte) in raw.iter().enumerate() {
        let c = BYTES_TO_CHARS[byte as usize];
        mapped.push(c);
        origins.extend(std::iter::repeat_n(k, c.len_utf8()));
    }
    origins.push(raw.len());
    (mapped, origins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_entries() {
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(b'a'), 'a');
        assert_eq!(byte_to_char(0), '\u{100}');
        assert_eq!(byte_to_char(0xAD), '\u{143}');
        assert_eq!(byte_to_char(0xFF), 'ÿ');
    }

    #[test]
    fn is_a_bijection() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..=255u8 {
            let c = byte_to_char(b);
            assert!(seen.insert(c));
            assert_eq!(char_to_byte(c), Some(b));
        }
        assert_eq!(char_to_byte('\u{144}'), None);
        assert_eq!(char_to_byte(' '), None);
        assert_eq!(
            string_to_bytes(&bytes_to_string(b"hi \xff\x00")),
            Some(b"hi \xff\x00".to_vec())
        );
    }
}
