//! Normalization rules and the precompiled character map the trainer writes into a model.
//!
//! The built-in rules are generated here with SentencePiece's builder algorithm (builder.cc:
//! per-character NFKC, the sequences NFKC composes, redundant rules dropped, then the NMT
//! additions and simple case folding) from the Unicode data of the `unicode-normalization`
//! crate — not copied from SentencePiece's tables. Where that crate's Unicode version differs
//! from the one SentencePiece's tables were built with (characters assigned since), results
//! differ for those characters. Whatever the rules, a model saved by tokenmill carries them in
//! its charsmap, so `sentencepiece` normalizes it exactly as tokenmill. Training takes the
//! built-in charsmaps from `charsmaps/*.bin`, this builder's output embedded in the crate (a test
//! keeps them equal).
use std::collections::{BTreeMap, BTreeSet};

use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};
use crate::utils::darts::DoubleArray;

/// The rule names SentencePiece knows.
pub const RULE_NAMES: [&str; 5] = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"];

/// Control characters the NMT rules delete.
fn nmt_removes(c: char) -> bool {
    matches!(c as u32, 0x0001..=0x0008 | 0x000B | 0x000E..=0x001F | 0x007F | 0x008F | 0x009F)
}

/// Characters the NMT rules turn into a plain space (not U+200D ZERO WIDTH JOINER, which
/// SentencePiece leaves alone so that emoji sequences survive).
fn nmt_space(c: char) -> bool {
    matches!(
        c as u32,
        0x0009
            | 0x000A
            | 0x000C
            | 0x000D
            | 0x1680
            | 0x200B
            | 0x200C
            | 0x200E
            | 0x200F
            | 0x2028
            | 0x2029
            | 0x2581
            | 0xFEFF
            | 0xFFFD
    )
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

/// A rule set: code-point sequence → replacement.
type CharsMap = BTreeMap<Vec<char>, Vec<char>>;

/// Every Unicode scalar value that is a character (ICU's `U_IS_UNICODE_CHAR`: no
/// noncharacters), from U+0001.
fn unicode_chars() -> impl Iterator<Item = char> {
    (1u32..=0x10FFFF)
        .filter(|&c| (c & 0xFFFE) != 0xFFFE && !(0xFDD0..=0xFDEF).contains(&c))
        .filter_map(char::from_u32)
}

/// NFKC as rules (SentencePiece's builder algorithm): every character NFKC changes, plus every
/// sequence that NFKC composes — each character's full decomposition, with each of its parts
/// replaced in every way by a character that decomposes to that part alone — then only the
/// sequence rules the shorter rules do not already imply.
fn nfkc_map() -> CharsMap {
    let nfkc = |s: &[char]| -> Vec<char> { s.iter().copied().nfkc().collect() };
    let mut map = CharsMap::new();
    let mut decomposed: BTreeSet<Vec<char>> = BTreeSet::new();
    // Character → the other characters whose decomposition is that one character (a character
    // that decomposes to itself is its own original; leaving those out keeps this map small).
    let mut originals: BTreeMap<char, Vec<char>> = BTreeMap::new();
    let mut parts: Vec<char> = Vec::new();
    for c in unicode_chars() {
        parts.clear();
        unicode_normalization::char::decompose_compatible(c, |p| parts.push(p));
        if parts[..] == [c] {
            continue; // no decomposition: NFKC and NFKD leave it alone
        }
        let composed = nfkc(&[c]);
        if composed != [c] {
            map.insert(vec![c], composed);
        }
        match parts[..] {
            [single] => originals.entry(single).or_default().push(c),
            _ => drop(decomposed.insert(parts.clone())),
        }
    }
    for parts in decomposed {
        let composed = nfkc(&parts);
        if composed == parts {
            continue; // the one-character rules cover it
        }
        let mut sequences: Vec<Vec<char>> = vec![vec![]];
        for &part in &parts {
            // A part of a decomposition decomposes to itself, so it is one of its originals.
            let alternatives: Vec<char> = std::iter::once(part)
                .chain(originals.get(&part).into_iter().flatten().copied())
                .collect();
            sequences = sequences
                .iter()
                .flat_map(|s| alternatives.iter().map(move |&c| [s.as_slice(), &[c]].concat()))
                .collect();
        }
        for sequence in sequences.into_iter().filter(|s| *s != composed) {
            map.insert(sequence, composed.clone());
        }
    }
    remove_redundant(map)
}

/// `src` rewritten by `map` with longest matches of at most `max_len` characters.
fn apply_map(
    map: &rustc_hash::FxHashMap<&[char], &[char]>,
    src: &[char],
    max_len: usize,
) -> Vec<char> {
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        let longest = (1..=max_len.min(src.len() - i))
            .rev()
            .find_map(|len| map.get(&src[i..i + len]).map(|v| (len, v)));
        match longest {
            Some((len, replacement)) => {
                out.extend_from_slice(replacement);
                i += len;
            }
            None => {
                out.push(src[i]);
                i += 1;
            }
        }
    }
    out
}

/// Drops the sequence rules that shorter rules already imply (SentencePiece's
/// `RemoveRedundantMap`), so the charsmap stays small. (The kept rules are looked up in a hash
/// map: this runs for every sequence rule, and the ordered map's lookups were most of the time
/// of building a charsmap.)
fn remove_redundant(map: CharsMap) -> CharsMap {
    let max_len = map.keys().map(Vec::len).max().unwrap_or(1);
    let mut kept: rustc_hash::FxHashMap<&[char], &[char]> = map
        .iter()
        .filter(|(k, _)| k.len() == 1)
        .map(|(k, v)| (k.as_slice(), v.as_slice()))
        .collect();
    for len in 2..=max_len {
        for (key, value) in map.iter().filter(|(k, _)| k.len() == len) {
            if *value != apply_map(&kept, key, len - 1) {
                kept.insert(key, value);
            }
        }
    }
    kept.into_iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

/// SentencePiece's NMT additions: its whitespace set becomes a space, C0/C1 controls vanish,
/// and the full-width tilde is left alone (it differs from "~" in Japanese).
fn merge_nmt(map: &mut CharsMap) {
    for c in unicode_chars().filter(|&c| nmt_space(c)) {
        map.insert(vec![c], vec![' ']);
    }
    for c in unicode_chars().take(0xA0).filter(|&c| nmt_removes(c)) {
        map.insert(vec![c], vec![]);
    }
    map.remove(&vec!['\u{FF5E}']);
}

/// Case folding on top of a rule set: replacements are folded, and every character that
/// folds and has no rule yet gets one.
fn merge_case_fold(map: &mut CharsMap) {
    for value in map.values_mut() {
        value.iter_mut().for_each(|c| *c = simple_case_fold(*c));
    }
    for c in unicode_chars() {
        let folded = simple_case_fold(c);
        if folded != c {
            map.entry(vec![c]).or_insert_with(|| vec![folded]);
        }
    }
}

/// The rules of a built-in rule set (SentencePiece's builder: NFKC, then the NMT additions,
/// then case folding), built from the Unicode tables. Slow (most of a second): training uses
/// the embedded [`builtin_charsmap`], which the tests keep equal to what this builds.
pub fn builtin_rules(name: &str) -> Result<Vec<(String, String)>> {
    check_rule_name(name)?;
    let mut map = if name == "identity" { CharsMap::new() } else { nfkc_map() };
    if name.starts_with("nmt_") {
        merge_nmt(&mut map);
        map = remove_redundant(map);
    }
    if name.ends_with("_cf") {
        merge_case_fold(&mut map);
        map = remove_redundant(map);
    }
    Ok(map.into_iter().map(|(k, v)| (k.into_iter().collect(), v.into_iter().collect())).collect())
}

fn check_rule_name(name: &str) -> Result<()> {
    if RULE_NAMES.contains(&name) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "unknown normalization_rule_name {name:?} (expected one of {RULE_NAMES:?})"
        )))
    }
}

/// The precompiled charsmap of a built-in rule set: `compile_charsmap(&builtin_rules(name))`,
/// generated once and embedded, as SentencePiece ships its own (building it from the Unicode
/// tables took 0.5-0.7 s of every training). The test
/// `embedded_charsmaps_are_what_the_builder_makes` fails if they go stale (a new
/// `unicode-normalization` or a builder change); `TOKENMILL_BLESS_CHARSMAPS=1` rewrites them.
pub fn builtin_charsmap(name: &str) -> Result<&'static [u8]> {
    check_rule_name(name)?;
    Ok(match name {
        "nmt_nfkc" => include_bytes!("charsmaps/nmt_nfkc.bin"),
        "nfkc" => include_bytes!("charsmaps/nfkc.bin"),
        "nmt_nfkc_cf" => include_bytes!("charsmaps/nmt_nfkc_cf.bin"),
        "nfkc_cf" => include_bytes!("charsmaps/nfkc_cf.bin"),
        _ => &[], // identity: no rules, an empty charsmap (as in SentencePiece)
    })
}

/// Rules from a TSV: each line `source<TAB>target`, both as space-separated hexadecimal code
/// points (SentencePiece's format; a third column, a comment, is ignored).
pub fn rules_from_tsv(tsv: &str) -> Result<Vec<(String, String)>> {
    let mut rules = Vec::new();
    for (n, line) in tsv.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |what: &str| Error::Format {
            path: None,
            line: Some(n + 1),
            byte_offset: None,
            message: format!("normalization rule TSV: {what}"),
        };
        let mut cols = line.split('\t');
        let (Some(src), Some(dst)) = (cols.next(), cols.next()) else {
            return Err(bad("expected `source<TAB>target`"));
        };
        let decode = |col: &str| -> Result<String> {
            col.split_whitespace()
                .map(|hex| {
                    u32::from_str_radix(hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| bad(&format!("{hex:?} is not a hexadecimal code point")))
                })
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
            return Err(Error::InvalidArgument(format!(
                "normalization rule for {source:?}: the replacement holds a NUL character"
            )));
        }
        let offset = *offsets.entry(target.as_str()).or_insert_with(|| {
            let at = replacements.len() as u32;
            replacements.extend_from_slice(target.as_bytes());
            replacements.push(0);
            at
        });
        keys.push((source.as_bytes(), offset));
    }
    let trie = DoubleArray::build_sharing_suffixes(&keys)?;
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
        // Every rule, so the shared subtrees are checked from every path into them.
        let rules = builtin_rules("nmt_nfkc_cf").unwrap();
        assert!(rules.len() > 1000);
        let charsmap =
            Precompiled::from_charsmap(builtin_charsmap("nmt_nfkc_cf").unwrap()).unwrap();
        for (source, target) in &rules {
            assert_eq!(
                charsmap.longest_match(source.as_bytes()),
                Some((target.as_str(), source.len())),
                "{source:?}"
            );
        }
        assert_eq!(charsmap.longest_match("a".as_bytes()), None);
        assert_eq!(charsmap.longest_match("ﬁ".as_bytes()), Some(("fi", 3)));
    }

    #[test]
    fn embedded_charsmaps_are_what_the_builder_makes() {
        let bless = std::env::var_os("TOKENMILL_BLESS_CHARSMAPS").is_some();
        for name in RULE_NAMES {
            let built = compile_charsmap(&builtin_rules(name).unwrap()).unwrap();
            if bless && name != "identity" {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(format!("src/sentencepiece/charsmaps/{name}.bin"));
                std::fs::write(&path, &built).unwrap();
                continue; // the embedded copy is the one this test binary was built with
            }
            assert!(
                built == builtin_charsmap(name).unwrap(),
                "the embedded {name} charsmap is \
                stale: rerun this test with TOKENMILL_BLESS_CHARSMAPS=1"
            );
        }
    }
}
