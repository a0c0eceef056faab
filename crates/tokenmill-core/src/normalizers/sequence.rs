//! Sequence: runs normalizers one after the other.
use serde::{Deserialize, Serialize};

use super::NormalizerWrapper;
use crate::error::Result;
use crate::tokenizer::{NormalizedString, Normalizer};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Sequence {
    pub normalizers: Vec<NormalizerWrapper>,
}

impl Sequence {
    pub fn new(normalizers: Vec<NormalizerWrapper>) -> Self {
        Sequence { normalizers }
    }
}

impl Normalizer for Sequence {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        self.normalizers.iter().try_for_each(|n| n.normalize(normalized))
    }
}
