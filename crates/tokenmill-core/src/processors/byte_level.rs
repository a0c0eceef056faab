//! `ByteLevel` as a post-processor: trims whitespace off the offsets of byte-level tokens.
//!
//! As in `tokenizers`, one settings struct serves the ByteLevel pre-tokenizer, post-processor
//! and decoder (tokenizer.json stores the same fields for all three); it lives with the
//! pre-tokenizer, this file adds the post-processing.
use crate::tokenizer::Encoding;
use crate::utils::byte_level::byte_to_char;

pub use crate::pre_tokenizers::byte_level::ByteLevel;

/// Trims offsets (when `settings.trim_offsets`), in every encoding and its overflowing
/// windows, and tags each encoding with its sequence index.
pub fn process_encodings(settings: &ByteLevel, mut encodings: Vec<Encoding>) -> Vec<Encoding> {
    if settings.trim_offsets {
        for e in &mut encodings {
            trim_offsets(e, settings.add_prefix_space);
            e.overflowing.iter_mut().for_each(|o| trim_offsets(o, settings.add_prefix_space));
        }
    }
    for (i, e) in encodings.iter_mut().enumerate() {
        e.set_sequence_id(i);
    }
    encodings
}

/// Narrows each token's offsets to exclude its leading and trailing spaces, counted in
/// characters of the token text that are `'Ġ'` (the byte-level space) or Unicode whitespace.
/// The single leading space that `add_prefix_space` inserted before the first token (index 0,
/// or any token starting at offset 0) is not part of the input, so it is not trimmed.
/// Offsets are expected in characters, as `tokenizers` has them at this stage.
pub fn trim_offsets(encoding: &mut Encoding, add_prefix_space: bool) {
    let space = byte_to_char(b' ');
    let is_space = |c: &char| *c == space || c.is_whitespace();
    for (i, (token, offsets)) in encoding.tokens.iter().zip(encoding.offsets.iter_mut()).enumerate()
    {
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
