//! SentencePiece's normalizer (normalizer.cc): the precompiled character map applied by
//! longest match, user-defined symbols passed through untouched, whitespace handling
//! (remove_extra_whitespaces, add_dummy_prefix, escape_whitespaces, treat_whitespace_as_suffix),
//! and the alignment of every normalized byte to the original byte it came from.
use std::borrow::Cow;

use super::darts::DoubleArray;
use super::proto::{NormalizerSpec, TrainerSpec};
use crate::error::Result;
use crate::normalizers::Precompiled;

/// "▁" (U+2581), SentencePiece's visible whitespace.
pub const SPACE_SYMBOL: &str = "\u{2581}";
const REPLACEMENT_CHARACTER: &str = "\u{FFFD}";

#[derive(Debug, Clone)]
pub struct SpNormalizer {
    charsmap: Option<Precompiled>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    /// User-defined symbols, which are matched (longest first) before any rule and kept as is.
    user_defined: Option<DoubleArray>,
}

/// Normalized text plus, for each of its bytes (and one past the end), the byte offset in the
/// original text it comes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Normalized {
    pub text: String,
    pub norm_to_orig: Vec<usize>,
}

impl SpNormalizer {
    pub fn new(spec: &NormalizerSpec, treat_whitespace_as_suffix: bool, user_defined: Option<DoubleArray>) -> Result<Self> {
        let charsmap = match spec.precompiled_charsmap.as_deref() {
            Some(bytes) if !bytes.is_empty() => Some(Precompiled::from_charsmap(bytes)?),
            _ => None,
        };
        Ok(SpNormalizer {
            charsmap,
            add_dummy_prefix: spec.add_dummy_prefix(),
            remove_extra_whitespaces: spec.remove_extra_whitespaces(),
            escape_whitespaces: spec.escape_whitespaces(),
            treat_whitespace_as_suffix,
            user_defined,
        })
    }

    /// The normalizer of a model (its normalizer spec and the trainer spec's whitespace option).
    pub fn for_model(spec: &NormalizerSpec, trainer: &TrainerSpec, user_defined: Option<DoubleArray>) -> Result<Self> {
        SpNormalizer::new(spec, trainer.treat_whitespace_as_suffix(), user_defined)
    }

    /// The denormalizer (only the charsmap applies; SentencePiece builds it from the spec alone).
    pub fn denormalizer(spec: &NormalizerSpec) -> Result<Option<Self>> {
        if spec.precompiled_charsmap.as_deref().is_none_or(|c| c.is_empty()) {
            return Ok(None);
        }
        SpNormalizer::new(spec, false, None).map(Some)
    }

    /// Normalizes one prefix of `input`: the replacement text and how many input bytes it uses.
    fn normalize_prefix<'a>(&'a self, input: &'a [u8]) -> (Cow<'a, [u8]>, usize) {
        if let Some(matcher) = &self.user_defined {
            if let Some((_, len)) = matcher.longest_prefix(input) {
                return (Cow::Borrowed(&input[..len]), len);
            }
        }
        if let Some((replacement, len)) = self.charsmap.as_ref().and_then(|c| c.longest_match(input)) {
            return (Cow::Borrowed(replacement.as_bytes()), len);
        }
        match utf8_char_len(input) {
            Some(len) => (Cow::Borrowed(&input[..len]), len),
            // A malformed byte becomes U+FFFD and uses one byte (as SentencePiece).
            None => (Cow::Borrowed(REPLACEMENT_CHARACTER.as_bytes()), 1),
        }
    }

    /// Normalizes `input` (SentencePiece's `Normalizer::Normalize`).
    pub fn normalize(&self, input: &str) -> Normalized {
        self.normalize_bytes(input.as_bytes())
    }

    pub fn normalize_bytes(&self, input: &[u8]) -> Normalized {
        let mut out = Normalized::default();
        let mut input = input;
        if input.is_empty() {
            return out;
        }
        let mut consumed = 0usize;
        if self.remove_extra_whitespaces {
            while !input.is_empty() {
                let (piece, len) = self.normalize_prefix(input);
                if &*piece != b" " {
                    break;
                }
                input = &input[len..];
                consumed += len;
            }
        }
        if input.is_empty() {
            return out;
        }
        let mut text: Vec<u8> = Vec::with_capacity(input.len() * 3 / 2 + 4);
        let norm_to_orig = &mut out.norm_to_orig;
        norm_to_orig.reserve(input.len() * 3 / 2 + 4);
        let space: &[u8] = if self.escape_whitespaces { SPACE_SYMBOL.as_bytes() } else { b" " };
        let push_space = |text: &mut Vec<u8>, map: &mut Vec<usize>, at: usize| {
            text.extend_from_slice(space);
            map.extend(std::iter::repeat_n(at, space.len()));
        };
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            push_space(&mut text, norm_to_orig, consumed);
        }
        let mut is_prev_space = self.remove_extra_whitespaces;
        while !input.is_empty() {
            let (piece, len) = self.normalize_prefix(input);
            let mut piece: &[u8] = &piece;
            while is_prev_space && piece.first() == Some(&b' ') {
                piece = &piece[1..];
            }
            if !piece.is_empty() {
                for &byte in piece {
                    if byte == b' ' {
                        push_space(&mut text, norm_to_orig, consumed);
                    } else {
                        text.push(byte);
                        norm_to_orig.push(consumed);
                    }
                }
                is_prev_space = piece.last() == Some(&b' ');
            }
            consumed += len;
            input = &input[len..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            while text.ends_with(space) {
                let length = text.len() - space.len();
                consumed = norm_to_orig[length];
                text.truncate(length);
                norm_to_orig.truncate(length);
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            push_space(&mut text, norm_to_orig, consumed);
        }
        norm_to_orig.push(consumed);
        // Replacements are validated UTF-8 and whole characters are copied, so this only
        // fails on input that was not UTF-8 to begin with (which bytes input may be).
        out.text = String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        out
    }
}

/// The length of the valid UTF-8 character at the start of `bytes`, or `None`.
pub(crate) fn utf8_char_len(bytes: &[u8]) -> Option<usize> {
    let len = match *bytes.first()? {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let chunk = bytes.get(..len)?;
    std::str::from_utf8(chunk).ok().map(|_| len)
}

/// SentencePiece's `OneCharLen`: the length a UTF-8 lead byte announces (1 for stray bytes).
#[inline]
pub(crate) fn one_char_len(byte: u8) -> usize {
    const LENGTHS: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LENGTHS[(byte >> 4) as usize]
}
