//! `RobertaProcessing`: `<s> A </s>` and `<s> A </s> </s> B </s>`, all type ids 0, with the
//! ByteLevel offset trimming.
use serde::{Deserialize, Serialize};

use super::byte_level::trim_offsets;
use super::{surround_each, SpecialPair};
use crate::tokenizer::Encoding;

/// Serialized `{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,
/// "add_prefix_space":true}`; every field is required when reading, `"type"` is not checked
/// (as in `tokenizers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct RobertaProcessing {
    pub sep: SpecialPair,
    pub cls: SpecialPair,
    pub trim_offsets: bool,
    pub add_prefix_space: bool,
}

impl Default for RobertaProcessing {
    fn default() -> Self {
        RobertaProcessing {
            sep: ("</s>".into(), 2),
            cls: ("<s>".into(), 0),
            trim_offsets: true,
            add_prefix_space: true,
        }
    }
}

impl RobertaProcessing {
    pub fn new(sep: SpecialPair, cls: SpecialPair) -> Self {
        RobertaProcessing { sep, cls, ..Default::default() }
    }

    pub fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            4
        } else {
            2
        }
    }

    /// Trims offsets (when asked), sets every type id to 0, then (with special tokens) wraps
    /// the first encoding as `<s> A </s>` and the second as `</s> B </s>`, overflowing windows too.
    pub fn process_encodings(
        &self,
        mut encodings: Vec<Encoding>,
        add_special_tokens: bool,
    ) -> Vec<Encoding> {
        if self.trim_offsets {
            for e in &mut encodings {
                trim_offsets(e, self.add_prefix_space);
                e.overflowing.iter_mut().for_each(|o| trim_offsets(o, self.add_prefix_space));
            }
        }
        for e in &mut encodings {
            e.set_type_ids(0);
        }
        if !add_special_tokens {
            return encodings;
        }
        surround_each(encodings, |i| {
            let first = if i == 0 { &self.cls } else { &self.sep };
            (Some(first), Some(&self.sep), 0, Some(0))
        })
    }
}
