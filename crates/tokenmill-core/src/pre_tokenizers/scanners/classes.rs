//! Character classes the split patterns test, one byte of flags per code point.
//!
//! Why a generated table instead of a crate such as `unicode-general-category`: the scanners must
//! agree with `fancy-regex` on every code point, including ones assigned in recent Unicode
//! versions. Building the table from `regex-syntax` (the parser `fancy-regex` itself uses) gives
//! exactly the same Unicode data as the regex engine, and a flat table is one load per character.
use std::sync::OnceLock;

/// `\p{L}`
pub const LETTER: u8 = 1;
/// `\p{N}`
pub const NUMBER: u8 = 2;
/// `\s` (Unicode White_Space)
pub const SPACE: u8 = 4;
/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls, ...
pub const OTHER: u8 = 8;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` (o200k's "upper-ish" class)
pub const UPPERISH: u8 = 16;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` (o200k's "lower-ish" class)
pub const LOWERISH: u8 = 32;
/// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix before a word (cl100k, o200k, Llama-3)
pub const PREFIX: u8 = 64;

const CODE_POINTS: usize = 0x11_0000;

/// The flat flag table, indexed by code point (1.1 MB, built once per process in ~2 ms).
pub fn table() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(build_table)
}

fn build_table() -> Vec<u8> {
    let mut t = vec![0u8; CODE_POINTS];
    set_class(&mut t, r"\p{L}", LETTER);
    set_class(&mut t, r"\p{N}", NUMBER);
    set_class(&mut t, r"\s", SPACE);
    set_class(&mut t, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPERISH);
    set_class(&mut t, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWERISH);
    for (cp, flags) in t.iter_mut().enumerate() {
        if *flags & (LETTER | NUMBER | SPACE) == 0 {
            *flags |= OTHER;
        }
        if *flags & (LETTER | NUMBER) == 0 && cp != '\r' as usize && cp != '\n' as usize {
            *flags |= PREFIX;
        }
    }
    t
}

/// Sets `flag` on every code point of the (Unicode) class `pattern`, as regex-syntax sees it.
fn set_class(t: &mut [u8], pattern: &str, flag: u8) {
    use regex_syntax::hir::{Class, HirKind};
    // The patterns are constants of this file, so failing to parse them is a bug, not user input.
    let hir = regex_syntax::Parser::new().parse(pattern).expect("built-in class pattern parses");
    let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
        unreachable!("built-in class pattern {pattern} is a Unicode class")
    };
    for range in class.ranges() {
        for entry in &mut t[range.start() as usize..=range.end() as usize] {
            *entry |= flag;
        }
    }
}

/// Flags and byte length of the character starting at `i` (`text` is valid UTF-8, `i` a boundary).
#[inline(always)]
pub fn class_at(table: &[u8], text: &[u8], i: usize) -> (u8, usize) {
    let b0 = text[i];
    if b0 < 0x80 {
        return (table[b0 as usize], 1);
    }
    let (cp, len) = if b0 < 0xE0 {
        (((b0 as u32 & 0x1F) << 6) | (text[i + 1] as u32 & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 as u32 & 0x0F) << 12)
                | ((text[i + 1] as u32 & 0x3F) << 6)
                | (text[i + 2] as u32 & 0x3F),
            3,
        )
    } else {
        (
            ((b0 as u32 & 0x07) << 18)
                | ((text[i + 1] as u32 & 0x3F) << 12)
                | ((text[i + 2] as u32 & 0x3F) << 6)
                | (text[i + 3] as u32 & 0x3F),
            4,
        )
    };
    (table[cp as usize], len)
}
