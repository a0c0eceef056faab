//! GPT-2's byte ↔ unicode alphabet: every byte gets a printable character so that byte-level
//! BPE works on ordinary strings. Printable Latin-1 bytes map to themselves; the other 68 bytes
//! map, in byte order, to U+0100, U+0101, ... (`'Ġ'` = U+0120 is the space byte 0x20).

/// Bytes that stand for themselves: `!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`.
const fn is_self_mapped(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

const fn build_bytes_char() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next_shifted = 256u32;
    let mut b = 0usize;
    while b < 256 {
        table[b] = if is_self_mapped(b as u8) {
            b as u8 as char
        } else {
            let c = match char::from_u32(next_shifted) {
                Some(c) => c,
                None => panic!("shifted byte chars stay below U+0144"),
            };
            next_shifted += 1;
            c
        };
        b += 1;
    }
    table
}

/// Number of bytes that are not self-mapped (they take U+0100 ..= U+0143).
const N_SHIFTED: usize = 68;

const fn build_shifted_bytes() -> [u8; N_SHIFTED] {
    let mut out = [0u8; N_SHIFTED];
    let mut n = 0;
    let mut b = 0usize;
    while b < 256 {
        if !is_self_mapped(b as u8) {
            out[n] = b as u8;
            n += 1;
        }
        b += 1;
    }
    out
}

static BYTES_CHAR: [char; 256] = build_bytes_char();
static SHIFTED_BYTES: [u8; N_SHIFTED] = build_shifted_bytes();

/// The character standing for each byte.
pub fn bytes_char() -> &'static [char; 256] {
    &BYTES_CHAR
}

/// The byte a character stands for, if it belongs to the alphabet.
pub fn char_bytes(c: char) -> Option<u8> {
    let code = c as u32;
    if code < 256 && is_self_mapped(code as u8) {
        Some(code as u8)
    } else if (256..256 + N_SHIFTED as u32).contains(&code) {
        Some(SHIFTED_BYTES[(code - 256) as usize])
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_known_chars() {
        for b in 0..=255u8 {
            assert_eq!(char_bytes(bytes_char()[b as usize]), Some(b));
        }
        assert_eq!(bytes_char()[b' ' as usize], 'Ġ');
        assert_eq!(bytes_char()[b'\n' as usize], 'Ċ');
        assert_eq!(bytes_char()[0xAD], 'Ń');
        assert_eq!(char_bytes('a'), Some(b'a'));
        assert_eq!(char_bytes(' '), None);
        assert_eq!(char_bytes('€'), None);
    }
}
