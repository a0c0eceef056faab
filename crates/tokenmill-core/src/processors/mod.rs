//! Post-processors: add special tokens and join pairs into one `Encoding`.
//!
//! PLACEHOLDER: the stage owner replaces this enum with the real components. The contract:
//! `PostProcessorWrapper` is an enum over every component of this stage, implements `PostProcessor`, `Clone`,
//! `Debug`, `Send + Sync`, and (de)serializes exactly as `tokenizers`' tokenizer.json does.
use serde::{Deserialize, Serialize};

use crate::tokenizer::PostProcessor;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PostProcessorWrapper {}

impl PostProcessor for PostProcessorWrapper {
    fn added_tokens(&self, _is_pair: bool) -> usize { match *self {} }
    fn process(&self, _e: crate::tokenizer::Encoding, _p: Option<crate::tokenizer::Encoding>, _a: bool) -> crate::Result<crate::tokenizer::Encoding> { match *self {} }
}
