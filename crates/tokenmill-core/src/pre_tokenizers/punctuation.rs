//! Punctuation: split on every punctuation char, handled as `behavior` says.
use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

/// ASCII punctuation (which includes symbols such as `$`, `+`, `^`) or a char of a Unicode
/// punctuation category (Pc, Pd, Ps, Pe, Pi, Pf, Po). Uses the `unicode_categories` tables,
/// the ones `tokenizers` uses, so both agree on every char.
pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Punctuation {
    #[serde(default = "default_behavior")]
    pub behavior: SplitDelimiterBehavior,
}

fn default_behavior() -> SplitDelimiterBehavior {
    SplitDelimiterBehavior::Isolated
}

impl Default for Punctuation {
    fn default() -> Self {
        Punctuation { behavior: default_behavior() }
    }
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
