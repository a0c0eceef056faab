//! `BertProcessing`: `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, type ids 0 for A, 1 for B.
use serde::{Deserialize, Serialize};

use super::{surround_each, SpecialPair};
use crate::tokenizer::Encoding;

/// Serialized `{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}`. Like
/// `tokenizers`, the `"type"` value is not checked when reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct BertProcessing {
    pub sep: SpecialPair,
    pub cls: SpecialPair,
}

impl Default for BertProcessing {
    fn default() -> Self {
        BertProcessing { sep: ("[SEP]".into(), 102), cls: ("[CLS]".into(), 101) }
    }
}

impl BertProcessing {
    pub fn new(sep: SpecialPair, cls: SpecialPair) -> Self {
        BertProcessing { sep, cls }
    }

    pub fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            3
        } else {
            2
        }
    }

    /// The first encoding becomes `[CLS] A [SEP]` (specials type 0), the second `B [SEP]`
    /// (the `[SEP]` type 1); overflowing windows are wrapped the same way. Content keeps its
    /// type ids.
    pub fn process_encodings(
        &self,
        encodings: Vec<Encoding>,
        add_special_tokens: bool,
    ) -> Vec<Encoding> {
        if !add_special_tokens {
            return encodings;
        }
        surround_each(encodings, |i| match i {
            0 => (Some(&self.cls), Some(&self.sep), 0, None),
            _ => (None, Some(&self.sep), 1, None),
        })
    }
}
