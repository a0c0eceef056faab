//! `Sequence` decoder: decoders chained, each taking the previous one's pieces.
use serde::{Deserialize, Serialize};

use super::DecoderWrapper;
use crate::error::Result;
use crate::tokenizer::Decoder;
use crate::utils::type_tag::strict_type_tag;

strict_type_tag!(SequenceType, "Sequence");

/// Serialized `{"type":"Sequence","decoders":[...]}` (`"type"` checked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    #[serde(rename = "type")]
    type_: SequenceType,
    pub decoders: Vec<DecoderWrapper>,
}

impl Sequence {
    pub fn new(decoders: Vec<DecoderWrapper>) -> Self {
        Sequence { type_: SequenceType, decoders }
    }

    pub fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for d in &self.decoders {
            tokens = d.decode_chain(tokens)?;
        }
        Ok(tokens)
    }
}
