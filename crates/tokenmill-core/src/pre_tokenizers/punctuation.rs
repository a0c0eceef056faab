//! Punctuation: split on every punctuation char, handled as `behavior` says.
use educe::Educe;
use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

/// ASCII punctuation (which includes symbols such as `$`, `+`, `^`) or a char of a Unicode
/// punctuation category (Pc, Pd, Ps, Pe, Pi, Pf, Po). Uses the `unicode_categories` tables,
/// the ones `tokenizers` uses, so both agree on every char.
pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// Punctuation isolated by default (also when tokenizer.json omits `behavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Educe)]
#[educe(Default)]
#[serde(tag = "type", default)]
pub struct Punctuation {
    #[educe(Default = SplitDelimiterBehavior::Isolated)]
    pub behavior: SplitDelimiterBehavior,
}

impl Punctuation {
    pub fn new(behavior: SplitDelimiterBehavior) -> Self {
        Punctuation { behavior }
    }
}

impl PreTokenizer for Punctuation {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized.split(|_, piece| piece.split(is_punctuation, self.behavior))
    }
}
