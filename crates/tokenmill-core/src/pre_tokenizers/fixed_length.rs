//! FixedLength: cut each piece into chunks of `length` chars.
use educe::Educe;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::tokenizer::{PreTokenizedString, PreTokenizer};

/// Chunks of 5 chars by default (also when tokenizer.json omits `length`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Educe)]
#[educe(Default)]
#[serde(tag = "type", default)]
pub struct FixedLength {
    #[educe(Default = 5)]
    pub length: usize,
}

impl FixedLength {
    pub fn new(length: usize) -> Self {
        FixedLength { length }
    }
}

impl PreTokenizer for FixedLength {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        if self.length == 0 {
            return Err(Error::InvalidArgument("FixedLength: length must be at least 1".into()));
        }
        pretokenized.split(|_, piece| {
            let text = piece.get();
            let mut bounds: Vec<usize> =
                text.char_indices().map(|(i, _)| i).step_by(self.length).collect();
            bounds.push(text.len());
            Ok(bounds.windows(2).filter_map(|w| piece.slice(w[0]..w[1])).collect::<Vec<_>>())
        })
    }
}
