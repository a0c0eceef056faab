//! `ByteLevel` as a post-processor: trims whitespace off the offsets of byte-level tokens.
//!
//! The same settings serve the ByteLevel pre-tokenizer and decoder in tokenizer.json
//! (`{"type":"ByteLevel","add_prefix_space":..,"trim_offsets":..,"use_regex":..}`), so this
//! struct is also what `decoders::ByteLevel` is.
use serde::{Deserialize, Serialize};

use super::strict_type_tag;
use crate::tokenizer::Encoding;
use crate::utils::byte_level::bytes_char;

strict_type_tag!(ByteLevelType, "ByteLevel");

fn default_true() -> bool {
    true
}

/// `"type"` must be `"ByteLevel"`; `add_prefix_space` and `trim_offsets` are required,
/// `use_regex` defaults to true (all as in `tokenizers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteLevel {
    #[serde(rename = "type")]
    type_: ByteLevelType,
    pub add_prefix_space: bool,
    pub trim_offsets: bool,
    #[serde(default = "default_true")]
    pub use_regex: bool,
}

impl Default for ByteLevel {
    fn default() -> Self {
        ByteLevel::new(true, true, true)
    }
}

impl ByteLevel {
    pub fn new(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        ByteLevel { type_: ByteLevelType, add_prefix_space, trim_offsets, use_regex }
    }

    /// Trims offsets (when asked), in every encoding and its overflowing windows, and tags
    /// each encoding with its sequence index.
    pub fn process_encodings(&self, mut encodings: Vec<Encoding>) -> Vec<Encoding> {
        if self.trim_offsets {
            for e in &mut encodings {
                trim_offsets(e, self.add_prefix_space);
                e.overflowing.iter_mut().for_each(|o| trim_offsets(o, self.add_prefix_space));
            }
        }
        for (i, e) in encodings.iter_mut().enumerate() {
            e.set_sequence_id(i);
        }
        encodings
    }
}

/// Narrows each token's offsets to exclude its leading and trailing spaces, counted in
/// characters of the token text that are `'Ġ'` (the byte-level space) or Unicode whitespace.
/// The single leading space that `add_prefix_space` inserted before the first token (index 0,
/// or any token starting at offset 0) is not part of the input, so it is not trimmed.
pub fn trim_offsets(encoding: &mut Encoding, add_prefix_space: bool) {
    let space = bytes_char()[b' ' as usize];
    let is_space = |c: &char| *c == space || c.is_whitespace();
    for (i, (token, offsets)) in encoding.tokens.iter().zip(encoding.offsets.iter_mut()).enumerate() {
        let mut leading = token.chars().take_while(is_space).count();
        let trailing = token.chars().rev().take_while(is_space).count();
        if leading > 0 {
            let is_first = i == 0 || offsets.0 == 0;
            if is_first && add_prefix_space && leading == 1 {
                leading = 0;
            }
            offsets.0 = (offsets.0 + leading).min(offsets.1);
        }
        if trailing > 0 && offsets.1 >= trailing {
            offsets.1 = (offsets.1 - trailing).max(offsets.0);
        }
    }
}
