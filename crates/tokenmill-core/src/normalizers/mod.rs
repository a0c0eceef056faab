//! Normalizers: rewrite text before it is split, keeping alignments (see `NormalizedString`).
//!
//! PLACEHOLDER: the stage owner replaces this enum with the real components. The contract:
//! `NormalizerWrapper` is an enum over every component of this stage, implements `Normalizer`, `Clone`,
//! `Debug`, `Send + Sync`, and (de)serializes exactly as `tokenizers`' tokenizer.json does.
use serde::{Deserialize, Serialize};

use crate::tokenizer::Normalizer;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum NormalizerWrapper {}

impl Normalizer for NormalizerWrapper {
    fn normalize(&self, _n: &mut crate::tokenizer::NormalizedString) -> crate::Result<()> { match *self {} }
}
