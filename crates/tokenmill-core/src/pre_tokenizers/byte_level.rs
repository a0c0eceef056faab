//! ByteLevel: GPT-2's pre-tokenization. Optionally adds a space in front, splits with the GPT-2
//! regex, then rewrites every byte of each piece as a char of the GPT-2 byte alphabet
//! (`utils::byte_level`), each new char aligned to the original char its byte belongs to.
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::tokenizer::{
    NormalizedString, Offsets, PreTokenizedString, PreTokenizer, SplitDelimiterBehavior,
};
use crate::utils::byte_level::BYTES_TO_CHARS;
use crate::utils::regex::Regex;

/// The GPT-2 split pattern (also r50k/p50k's).
pub const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

static GPT2_REGEX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(GPT2_PATTERN).expect("the GPT-2 pattern compiles"));

/// The compiled GPT-2 split regex (shared so it is compiled once per process).
pub fn gpt2_regex() -> &'static Regex {
    &GPT2_REGEX
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct ByteLevel {
    /// Add a space in front of the text if it does not start with one ("hello" then splits
    /// like "say hello").
    #[serde(default = "default_true")]
    pub add_prefix_space: bool,
    /// Used by the ByteLevel post-processor (not here): trim spaces out of token offsets.
    #[serde(default = "default_true")]
    pub trim_offsets: bool,
    /// Split with the GPT-2 regex (otherwise each piece stays whole).
    #[serde(default = "default_true")]
    pub use_regex: bool,
}

fn default_true() -> bool {
    true
}

impl Default for ByteLevel {
    fn default() -> Self {
        ByteLevel { add_prefix_space: true, trim_offsets: true, use_regex: true }
    }
}

impl ByteLevel {
    pub fn new(add_prefix_space: bool, trim_offsets: bool, use_regex: bool) -> Self {
        ByteLevel { add_prefix_space, trim_offsets, use_regex }
    }

    /// The 256 chars bytes are mapped to.
    pub fn alphabet() -> Vec<char> {
        crate::utils::byte_level::alphabet()
    }
}

impl PreTokenizer for ByteLevel {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized.split(|_, mut piece| {
            // Like `tokenizers`, nothing is prepended to an empty piece.
            if self.add_prefix_space && !piece.is_empty() && !piece.get().starts_with(' ') {
                piece.prepend(" ");
            }
            if self.use_regex {
                piece.split(gpt2_regex(), SplitDelimiterBehavior::Isolated)
            } else {
                Ok(vec![piece])
            }
        })?;
        pretokenized.normalize(|piece| {
            *piece = to_byte_level(piece);
            Ok(())
        })
    }
}

/// Rewrites each byte of `piece` as its byte-level char. A char's first byte takes the
/// char's alignment, its other bytes the alignment of the char's last byte (what `tokenizers`
/// does: they are "inserted" after it), so token offsets map back to whole original chars.
pub fn to_byte_level(piece: &NormalizedString) -> NormalizedString {
    let text = piece.get();
    let alignments = piece.alignments();
    let mut normalized = String::with_capacity(text.len() * 2);
    let mut new_alignments: Vec<Offsets> = Vec::with_capacity(text.len() * 2);
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        for (k, &byte) in text.as_bytes()[start..end].iter().enumerate() {
            let align = if k == 0 { alignments[start] } else { alignments[end - 1] };
            let mapped = BYTES_TO_CHARS[byte as usize];
            normalized.push(mapped);
            new_alignments.extend(std::iter::repeat_n(align, mapped.len_utf8()));
        }
    }
    NormalizedString::from_parts(
        piece.get_original().to_string(),
        normalized,
        new_alignments,
        piece.original_shift(),
    )
}

/// The ByteLevel post-processor's `trim_offsets` rule for one token, shared so the processor
/// and anything else that needs it agree: leading and trailing spaces (`Ġ` or whitespace chars)
/// are cut out of `offsets`, except the one space `add_prefix_space` put in front of the first
/// token (`is_first`: first token of the sequence, or one whose offsets start at 0).
pub fn trimmed_offsets(
    token: &str,
    offsets: Offsets,
    is_first: bool,
    add_prefix_space: bool,
) -> Offsets {
    let is_space = |c: &char| *c == 'Ġ' || c.is_whitespace();
    let mut leading = token.chars().take_while(is_space).count();
    let trailing = token.chars().rev().take_while(is_space).count();
    let (mut start, mut end) = offsets;
    if leading > 0 {
        if is_first && add_prefix_space && leading == 1 {
            leading = 0;
        }
        start = (start + leading).min(end);
    }
    if trailing > 0 && end >= trailing {
        end = (end - trailing).max(start);
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::pieces;

    #[test]
    fn splits_and_maps_bytes() {
        let got = pieces(&ByteLevel::default(), "Hello my friend, how's it going?");
        let words: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(words, ["ĠHello", "Ġmy", "Ġfriend", ",", "Ġhow", "'s", "Ġit", "Ġgoing", "?"]);
        assert_eq!(got[0].1, (0, 5));
        assert_eq!(got[1].1, (5, 8));
    }

    #[test]
    fn multibyte_chars_align_to_the_whole_char() {
        let got = pieces(&ByteLevel::new(false, true, true), "é");
        assert_eq!(got, vec![("Ã©".to_string(), (0, 1))]);
        let mut p = PreTokenizedString::from("aé");
        ByteLevel::new(false, true, false).pre_tokenize(&mut p).unwrap();
        let piece = &p.splits()[0].normalized;
        assert_eq!(piece.get(), "aÃ©");
        // "Ã" (bytes 1..3) and "©" (3..5) both come from é (original bytes 1..3).
        assert_eq!(piece.convert_offsets_to_original(1..3), Some(1..3));
        assert_eq!(piece.convert_offsets_to_original(3..5), Some(1..3));
    }

    #[test]
    fn trim_rule() {
        assert_eq!(trimmed_offsets("Ġhello", (0, 6), true, true), (0, 6));
        assert_eq!(trimmed_offsets("Ġhello", (5, 11), false, true), (6, 11));
        assert_eq!(trimmed_offsets("ĠĠ", (3, 5), false, false), (5, 5));
    }
}
