//! UnicodeScripts: cut where the Unicode script changes (SentencePiece's rule): Hiragana,
//! Katakana and `ー` count as Han; spaces (and unassigned chars) belong to no script and never
//! cause a cut (they stay with the piece before them). Common and Inherited are scripts like any other here.
//!
//! Scripts come from the `unicode-script` crate (a recent Unicode); `tokenizers` carries an
//! older table, so chars assigned in recent Unicode versions may be cut differently.
use unicode_script::{Script, UnicodeScript};

use super::impl_unit_serde;
use crate::tokenizer::{PreTokenizedString, PreTokenizer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UnicodeScripts;
impl_unit_serde!(UnicodeScripts);

/// The script used for cutting; `None` for chars that belong to none.
fn fixed_script(c: char) -> Option<Script> {
    if c == '\u{30FC}' {
        return Some(Script::Han);
    }
    if c == ' ' {
        return None;
    }
    match c.script() {
        Script::Hiragana | Script::Katakana => Some(Script::Han),
        Script::Unknown => None,
        script => Some(script),
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
            for (i, c) in text.char_indices() {
                if let Some(script) = fixed_script(c) {
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
