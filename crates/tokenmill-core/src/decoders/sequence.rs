//! `Sequence` decoder: decoders chained, each taking the previous one's pieces.
use super::DecoderWrapper;
use crate::error::Result;
use crate::tokenizer::Decoder;
use crate::utils::type_tag::tagged_sequence;

tagged_sequence! {
    /// Serialized `{"type":"Sequence","decoders":[...]}` (`"type"` checked).
    decoders: Vec<DecoderWrapper>
}

impl Sequence {
    pub fn decode_chain(&self, mut tokens: Vec<String>) -> Result<Vec<String>> {
        for d in &self.decoders {
            tokens = d.decode_chain(tokens)?;
        }
        Ok(tokens)
    }
}
