//! Prepend: adds a fixed string in front of non-empty text (e.g. "▁" for SentencePiece models).
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::tokenizer::{NormalizedString, Normalizer};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Prepend {
    pub prepend: String,
}

impl Prepend {
    pub fn new(prepend: impl Into<String>) -> Self {
        Prepend { prepend: prepend.into() }
    }
}

impl Normalizer for Prepend {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        // `NormalizedString::prepend` leaves an empty string alone, as `tokenizers` does.
        normalized.prepend(&self.prepend);
        Ok(())
    }
}
