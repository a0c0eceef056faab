//! `Sequence`: post-processors applied one after the other.
use super::PostProcessorWrapper;
use crate::error::Result;
use crate::tokenizer::{Encoding, PostProcessor};
use crate::utils::type_tag::tagged_sequence;

tagged_sequence! {
    /// Serialized `{"type":"Sequence","processors":[...]}` (`"type"` checked).
    processors: Vec<PostProcessorWrapper>
}

impl Sequence {
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
