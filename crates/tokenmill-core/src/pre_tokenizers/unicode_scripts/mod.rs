//! UnicodeScripts: cut where the Unicode script changes (SentencePiece's rule), exactly as
//! `tokenizers` does: Hiragana, Katakana and `ー` count as Han; the space and unassigned chars
//! belong to no script and never cause a cut (they stay with the piece before them). Common and
//! Inherited are scripts like any other here.
//!
//! Scripts are those of `tokenizers`' own table, Unicode 9.0 (see [`table`]), not a current
//! Unicode database: chars assigned since 9.0 have no script, and the few chars Unicode moved
//! to another script since (U+0589 ARMENIAN FULL STOP was Common) keep their 9.0 script.
use std::cmp::Ordering;

use unicode_script::Script;

use super::impl_unit_serde;
use crate::tokenizer::{PreTokenizedString, PreTokenizer};

/// `tokenizers`' script of every code point (with its fixups), generated from its behaviour
/// by `tools/gen_unicode_scripts_table.py` (run it again, should `tokenizers` change its table).
/// Our own table rather than the `unicode-script` crate's: no maintained crate carries the
/// Unicode 9.0 scripts that `tokenizers` froze, and a crate update must not change our cuts.
mod table;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnicodeScripts;
impl_unit_serde!(UnicodeScripts);

/// The scripts of ASCII chars, read off [`table::SCRIPT_RANGES`] at compile time.
const ASCII_SCRIPTS: [Option<Script>; 128] = {
    let mut scripts = [None; 128];
    let mut i = 0;
    while i < table::SCRIPT_RANGES.len() {
        let (first, last, script) = table::SCRIPT_RANGES[i];
        let mut code = first;
        while code <= last && code < 128 {
            scripts[code as usize] = Some(script);
            code += 1;
        }
        i += 1;
    }
    scripts
};

/// The scripts used for cutting (`None` for chars that belong to none), char after char.
/// ASCII comes from a table; other chars from a binary search over the ranges, skipped while
/// the chars stay within the range (or gap between ranges) of the last search, as the chars
/// of a word do. Measured 2-5x faster than a search per char on non-Latin text.
struct ScriptLookup {
    first: u32,
    last: u32,
    script: Option<Script>,
}

impl ScriptLookup {
    fn new() -> Self {
        Self { first: 1, last: 0, script: None } // an empty range: the first search always runs
    }

    fn script(&mut self, c: char) -> Option<Script> {
        if c.is_ascii() {
            return ASCII_SCRIPTS[c as usize];
        }
        let code = c as u32;
        if !(self.first..=self.last).contains(&code) {
            (self.first, self.last, self.script) = range_of(code);
        }
        self.script
    }
}

/// The range of `table::SCRIPT_RANGES` holding `code` with its script, or the gap between two
/// ranges holding it, with no script.
fn range_of(code: u32) -> (u32, u32, Option<Script>) {
    let ranges = table::SCRIPT_RANGES;
    let found = ranges.binary_search_by(|&(first, last, _)| {
        if last < code {
            Ordering::Less
        } else if first > code {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    });
    match found {
        Ok(i) => (ranges[i].0, ranges[i].1, Some(ranges[i].2)),
        Err(i) => {
            let first = if i == 0 { 0 } else { ranges[i - 1].1 + 1 };
            let last = ranges.get(i).map_or(char::MAX as u32, |r| r.0 - 1);
            (first, last, None)
        }
    }
}

impl PreTokenizer for UnicodeScripts {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized.split(|_, piece| {
            let text = piece.get();
            // A piece starts at each char whose script differs from the previous char that
            // had one. Script-less chars before the first such char are dropped (as in
            // `tokenizers`); a piece of only script-less chars disappears.
            let mut cuts = Vec::new();
            let mut last: Option<Script> = None;
            let mut lookup = ScriptLookup::new();
            for (i, c) in text.char_indices() {
                if let Some(script) = lookup.script(c) {
                    if last != Some(script) {
                        cuts.push(i);
                    }
                    last = Some(script);
                }
            }
            cuts.push(text.len());
            Ok(cuts.windows(2).filter_map(|w| piece.slice(w[0]..w[1])).collect::<Vec<_>>())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_disjoint() {
        assert!(table::SCRIPT_RANGES.iter().all(|&(first, last, _)| first <= last));
        assert!(table::SCRIPT_RANGES.windows(2).all(|w| w[0].1 < w[1].0));
    }

    fn fixed_script(c: char) -> Option<Script> {
        ScriptLookup::new().script(c)
    }

    #[test]
    fn cached_range_gives_the_same_scripts() {
        let mut lookup = ScriptLookup::new();
        for code in (0..=char::MAX as u32).step_by(7) {
            if let Some(c) = char::from_u32(code) {
                assert_eq!(lookup.script(c), fixed_script(c), "U+{code:04X}");
                assert_eq!(lookup.script(c), range_of(code).2, "U+{code:04X}");
            }
        }
    }

    #[test]
    fn scripts_are_tokenizers_unicode_9_scripts() {
        assert_eq!(fixed_script('a'), Some(Script::Latin));
        assert_eq!(fixed_script('0'), Some(Script::Common));
        assert_eq!(fixed_script(' '), None);
        assert_eq!(fixed_script('\t'), Some(Script::Common));
        for c in ['京', 'い', 'グ', 'ー'] {
            assert_eq!(fixed_script(c), Some(Script::Han), "{c}");
        }
        assert_eq!(fixed_script('\u{0589}'), Some(Script::Common)); // Armenian since Unicode 11
        assert_eq!(fixed_script('\u{0531}'), Some(Script::Armenian));
        assert_eq!(fixed_script('\u{1C90}'), None); // Georgian Mtavruli: Unicode 11
        assert_eq!(fixed_script('\u{E000}'), None); // private use
        assert_eq!(fixed_script('\u{10FFFF}'), None);
    }
}
