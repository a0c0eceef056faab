//! Sequence: several pre-tokenizers, each applied to the pieces the previous one made.
use serde::{Deserialize, Serialize};

use super::PreTokenizerWrapper;
use crate::tokenizer::{PreTokenizedString, PreTokenizer};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "type")]
pub struct Sequence {
    pretokenizers: Vec<PreTokenizerWrapper>,
}

impl Sequence {
    pub fn new(pretokenizers: Vec<PreTokenizerWrapper>) -> Self {
        Sequence { pretokenizers }
    }
    pub fn pretokenizers(&self) -> &[PreTokenizerWrapper] {
        &self.pretokenizers
    }
    pub fn pretokenizers_mut(&mut self) -> &mut Vec<PreTokenizerWrapper> {
        &mut self.pretokenizers
    }
}

impl PreTokenizer for Sequence {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        self.pretokenizers.iter().try_for_each(|p| p.pre_tokenize(pretokenized))
    }
}
