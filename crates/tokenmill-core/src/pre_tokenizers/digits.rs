//! Digits: isolate numbers (runs of numeric chars, or each numeric char alone).
use serde::{Deserialize, Serialize};

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "type")]
pub struct Digits {
    /// Each digit on its own ("123" → "1", "2", "3") rather than one run ("123").
    #[serde(default)]
    pub individual_digits: bool,
}

impl Digits {
    pub fn new(individual_digits: bool) -> Self {
        Digits { individual_digits }
    }
}

impl PreTokenizer for Digits {
    /// "Numeric" is `char::is_numeric` (Unicode Nd, Nl, No), as in `tokenizers`.
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        let behavior = if self.individual_digits {
            SplitDelimiterBehavior::Isolated
        } else {
            SplitDelimiterBehavior::Contiguous
        };
        pretokenized.split(|_, piece| piece.split(char::is_numeric, behavior))
    }
}
