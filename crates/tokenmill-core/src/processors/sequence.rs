//! `Sequence`: post-processors applied one after the other.
use serde::{Deserialize, Serialize};

use super::PostProcessorWrapper;
use crate::error::Result;
use crate::tokenizer::{Encoding, PostProcessor};
use crate::utils::type_tag::strict_type_tag;

strict_type_tag!(SequenceType, "Sequence");

/// Serialized `{"type":"Sequence","processors":[...]}` (`"type"` checked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    #[serde(rename = "type")]
    type_: SequenceType,
    pub processors: Vec<PostProcessorWrapper>,
}

impl Sequence {
    pub fn new(processors: Vec<PostProcessorWrapper>) -> Self {
        Sequence { type_: SequenceType, processors }
    }

    /// The sum over the chained processors.
    pub fn added_tokens(&self, is_pair: bool) -> usize {
        self.processors.iter().map(|p| p.added_tokens(is_pair)).sum()
    }

    pub fn process_encodings(
        &self,
        mut encodings: Vec<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Vec<Encoding>> {
        for p in &self.processors {
            encodings = p.process_encodings(encodings, add_special_tokens)?;
        }
        Ok(encodings)
    }
}
