//! Normalization rules and the precompiled character map the trainer writes into a model.
//!
//! The built-in rules are generated here, one rule per code point, from the Unicode data of the
//! `unicode-normalization` crate (NFKC), Unicode simple case folding (the `_cf` variants) and
//! SentencePiece's documented NMT additions (control characters removed, the NMT whitespace
//! set mapped to a space) — not copied from SentencePiece's `.tsv` files. Rules on code-point
//! sequences (which SentencePiece's own NFKC tables also hold) are not generated, so a
//! decomposed sequence such as "e\u{301}" is kept as is. Whatever the rules, a model saved by
//! tokenmill carries them in its charsmap, so `sentencepiece` normalizes it exactly as tokenmill.
use unicode_normalization::UnicodeNormalization;

use super::darts::DoubleArray;
use crate::error::{Error, Result};

/// The rule names SentencePiece knows.
pub const RULE_NAMES: [&str; 5] = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"];

/// Control characters the NMT rules delete.
fn nmt_removes(c: char) -> bool {
    matches!(c as u32, 0x0001..=0x0008 | 0x000B | 0x000E..=0x001F | 0x007F | 0x008F | 0x009F)
}

/// Characters the NMT rules turn into a plain space (not U+200D ZERO WIDTH JOINER, which
/// SentencePiece leaves alone so that emoji sequences survive).
fn nmt_space(c: char) -> bool {
    matches!(c as u32, 0x0009 | 0x000A | 0x000C | 0x000D | 0x1680 | 0x200B | 0x200C | 0x200E | 0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD)
}

/// Unicode simple case folding (CaseFolding.txt, statuses C and S: ICU's `u_foldCase` with
/// the default option, what SentencePiece's `_cf` rules apply to each character). It equals the
/// one-character lowercase mapping except for the characters listed here; İ (whose lowercase
/// is two characters) has no simple folding and stays.
fn simple_case_fold(c: char) -> char {
    match c as u32 {
        0x00B5 => '\u{03BC}',
        0x017F => 's',
        0x0345 | 0x1FBE => '\u{03B9}',
        0x03C2 => '\u{03C3}',
        0x03D0 => '\u{03B2}',
        0x03D1 => '\u{03B8}',
        0x03D5 => '\u{03C6}',
        0x03D6 => '\u{03C0}',
        0x03F0 => '\u{03BA}',
        0x03F1 => '\u{03C1}',
        0x03F5 => '\u{03B5}',
        0x1E9B => '\u{1E61}',
        0x1E9E => '\u{00DF}',
        0x1C80 => '\u{0432}',
        0x1C81 => '\u{0434}',
        0x1C82 => '\u{043E}',
        0x1C83 => '\u{0441}',
        0x1C84 | 0x1C85 => '\u{0442}',
        0x1C86 => '\u{044A}',
        0x1C87 => '\u{0463}',
        0x1C88 => '\u{A64B}',
        // Cherokee folds to its capital letters.
        0x13A0..=0x13F5 => c,
        0x13F8..=0x13FD => char::from_u32(c as u32 - 8).unwrap_or(c),
        0xAB70..=0xABBF => char::from_u32(c as u32 - 0xAB70 + 0x13A0).unwrap_or(c),
        _ => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        }
    }
}

/// What one character becomes under a built-in rule set.
fn apply(name: &str, c: char) -> String {
    let nmt = name.starts_with("nmt_");
    if nmt && nmt_removes(c) {
        return String::new();
    }
    if nmt && nmt_space(c) {
        return " ".to_string();
    }
    let nfkc: String = std::iter::once(c).nfkc().collect();
    let mut out = if name.ends_with("_cf") { nfkc.chars().map(simple_case_fold).collect() } else { nfkc };
    if nmt {
        // The NMT rules also apply to what NFKC produced (e.g. a compatibility space).
        out = out.chars().filter(|&c| !nmt_removes(c)).map(|c| if nmt_space(c) { ' ' } else { c }).collect();
    }
    out
}

/// The rules of a built-in rule set: (source, replacement) for every character it changes.
pub fn builtin_rules(name: &str) -> Result<Vec<(String, String)>> {
    if !RULE_NAMES.contains(&name) {
        return Err(Error::InvalidArgument(format!("unknown normalization_rule_name {name:?} (expected one of {RULE_NAMES:?})")));
    }
    if name == "identity" {
        return Ok(Vec::new());
    }
    let mut rules = Vec::new();
    for c in (1u32..=0x10FFFF).filter_map(char::from_u32) {
        let replaced = apply(name, c);
        if replaced.len() != c.len_utf8() || !replaced.starts_with(c) {
            rules.push((c.to_string(), replaced));
        }
    }
    Ok(rules)
}

/// Rules from a TSV: each line `source<TAB>target`, both as space-separated hexadecimal code
/// points (SentencePiece's format; a third column, a comment, is ignored).
pub fn rules_from_tsv(tsv: &str) -> Result<Vec<(String, String)>> {
    let mut rules = Vec::new();
    for (n, line) in tsv.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| Error::Format { path: None, line: Some(n + 1), byte_offset: None, message: format!("normalization rule TSV: {what}") };
        let mut cols = line.split('\t');
        let (Some(src), Some(dst)) = (cols.next(), cols.next()) else { return Err(bad("expected `source<TAB>target`")) };
        let decode = |col: &str| -> Result<String> {
            col.split_whitespace()
                .map(|hex| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).ok_or_else(|| bad(&format!("{hex:?} is not a hexadecimal code point"))))
                .collect()
        };
        let source = decode(src)?;
        if source.is_empty() {
            return Err(bad("empty source"));
        }
        rules.push((source, decode(dst)?));
    }
    Ok(rules)
}

/// The charsmap blob: little-endian trie size, the double array, then NUL-terminated
/// replacements (identical replacements are stored once).
pub fn compile_charsmap(rules: &[(String, String)]) -> Result<Vec<u8>> {
    if rules.is_empty() {
        return Ok(Vec::new());
    }
    let mut replacements: Vec<u8> = Vec::new();
    let mut offsets: rustc_hash::FxHashMap<&str, u32> = Default::default();
    let mut keys: Vec<(&[u8], u32)> = Vec::with_capacity(rules.len());
    for (source, target) in rules {
        if target.contains('\0') {
            return Err(Error::InvalidArgument(format!("normalization rule for {source:?}: the replacement holds a NUL character")));
        }
        let offset = *offsets.entry(target.as_str()).or_insert_with(|| {
            let at = replacements.len() as u32;
            replacements.extend_from_slice(target.as_bytes());
            replacements.push(0);
            at
        });
        keys.push((source.as_bytes(), offset));
    }
    let trie = DoubleArray::build(&keys)?;
    let trie_bytes = trie.to_bytes();
    let mut blob = Vec::with_capacity(4 + trie_bytes.len() + replacements.len());
    blob.extend_from_slice(&(trie_bytes.len() as u32).to_le_bytes());
    blob.extend_from_slice(&trie_bytes);
    blob.extend_from_slice(&replacements);
    Ok(blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizers::Precompiled;

    #[test]
    fn compiled_rules_are_found_by_the_charsmap_reader() {
        let rules = builtin_rules("nmt_nfkc").unwrap();
        assert!(rules.len() > 1000);
        let charsmap = Precompiled::from_charsmap(&compile_charsmap(&rules).unwrap()).unwrap();
        for (source, target) in rules.iter().step_by(37) {
            assert_eq!(charsmap.longest_match(source.as_bytes()), Some((target.as_str(), source.len())), "{source:?}");
        }
        assert_eq!(charsmap.longest_match("a".as_bytes()), None);
        assert_eq!(charsmap.longest_match("ﬁ".as_bytes()), Some(("fi", 3)));
    }
}
