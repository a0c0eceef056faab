//! CharDelimiterSplit: split on one char, dropping it (like `str.split(c)` without empty parts).
use serde::{Deserialize, Serialize};

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "CharDelimiterSplit")]
pub struct CharDelimiterSplit {
    pub delimiter: char,
}

impl CharDelimiterSplit {
    pub fn new(delimiter: char) -> Self {
        CharDelimiterSplit { delimiter }
    }
}

impl PreTokenizer for CharDelimiterSplit {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized.split(|_, piece| piece.split(self.delimiter, SplitDelimiterBehavior::Removed))
    }
}
