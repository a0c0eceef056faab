//! Pre-tokenizers: cut normalized text into words (see `PreTokenizedString`).
//!
//! PLACEHOLDER: the stage owner replaces this enum with the real components. The contract:
//! `PreTokenizerWrapper` is an enum over every component of this stage, implements `PreTokenizer`, `Clone`,
//! `Debug`, `Send + Sync`, and (de)serializes exactly as `tokenizers`' tokenizer.json does.
pub mod scanners;

use serde::{Deserialize, Serialize};

use crate::tokenizer::PreTokenizer;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PreTokenizerWrapper {}

impl PreTokenizer for PreTokenizerWrapper {
    fn pre_tokenize(&self, _p: &mut crate::tokenizer::PreTokenizedString) -> crate::Result<()> { match *self {} }
}
