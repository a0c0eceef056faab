//! Decoders: turn tokens back into text.
//!
//! PLACEHOLDER: the stage owner replaces this enum with the real components. The contract:
//! `DecoderWrapper` is an enum over every component of this stage, implements `Decoder`, `Clone`,
//! `Debug`, `Send + Sync`, and (de)serializes exactly as `tokenizers`' tokenizer.json does.
use serde::{Deserialize, Serialize};

use crate::tokenizer::Decoder;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DecoderWrapper {}

impl Decoder for DecoderWrapper {
    fn decode_chain(&self, _t: Vec<String>) -> crate::Result<Vec<String>> { match *self {} }
}
