//! BertNormalizer: the text cleanup of the original BERT tokenizer.
use std::sync::LazyLock;

use educe::Educe;
use serde::{Deserialize, Serialize};
use unicode_categories::UnicodeCategories;

use crate::error::Result;
use crate::tokenizer::{NormalizedString, Normalizer};

/// Cleans text (drops NUL, U+FFFD and control chars, turns whitespace into ' '), puts spaces
/// around CJK ideographs, strips accents (NFD then drop nonspacing marks) and lowercases.
/// `strip_accents: None` means "strip when lowercasing", as in the original BERT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Educe)]
#[educe(Default)]
#[serde(tag = "type", default)]
pub struct BertNormalizer {
    #[educe(Default = true)]
    pub clean_text: bool,
    #[educe(Default = true)]
    pub handle_chinese_chars: bool,
    pub strip_accents: Option<bool>,
    #[educe(Default = true)]
    pub lowercase: bool,
}

/// BERT's notion of whitespace: tab, newline, carriage return, and Unicode whitespace.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// BERT's notion of control: an "Other" char (`unicode_categories`' `is_other`: Cc, Cf, Co, as
/// in `tokenizers`) except tab and newlines.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && category_flags(c) & OTHER != 0
}

/// True for the chars that `clean_text` turns into a space (whitespace it does not drop): where
/// raw text can be cut into pieces that normalize independently (the training fast path).
pub(crate) fn cleaned_to_space(c: char) -> bool {
    is_whitespace(c) && !(c == '\0' || c == '\u{FFFD}' || is_control(c))
}

/// A nonspacing mark (Mn) per `unicode_categories`, as in `tokenizers`.
fn is_nonspacing_mark(c: char) -> bool {
    category_flags(c) & NONSPACING_MARK != 0
}

const OTHER: u8 = 1;
const NONSPACING_MARK: u8 = 2;

/// The two categories BERT asks about for every char. `unicode_categories` answers by binary
/// searches over long tables (a third of BERT normalization time), so the answers for the
/// Basic Multilingual Plane are computed once from the same crate into a 64 kB table.
fn category_flags(c: char) -> u8 {
    static BMP: LazyLock<Vec<u8>> = LazyLock::new(|| {
        (0..=0xFFFFu32).map(|u| char::from_u32(u).map_or(0, slow_category_flags)).collect()
    });
    if c.is_ascii() {
        return if c.is_ascii_control() { OTHER } else { 0 };
    }
    match BMP.get(c as usize) {
        Some(&flags) => flags,
        None => slow_category_flags(c),
    }
}

fn slow_category_flags(c: char) -> u8 {
    (if c.is_other() { OTHER } else { 0 })
        | (if c.is_mark_nonspacing() { NONSPACING_MARK } else { 0 })
}

/// The CJK Unified Ideographs blocks (and extensions / compatibility) BERT surrounds with spaces.
pub fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

impl BertNormalizer {
    pub fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
    ) -> Self {
        BertNormalizer { clean_text, handle_chinese_chars, strip_accents, lowercase }
    }

    fn clean_text(normalized: &mut NormalizedString) {
        normalized.flat_map(|c| {
            let dropped = c == '\0' || c == '\u{FFFD}' || is_control(c);
            (!dropped).then_some(if is_whitespace(c) { ' ' } else { c })
        });
    }

    fn handle_chinese_chars(normalized: &mut NormalizedString) {
        if normalized.get().is_ascii() {
            return;
        }
        normalized.flat_map(|c| {
            let surround = is_chinese_char(c);
            let (before, after) = if surround { (Some(' '), Some(' ')) } else { (None, None) };
            before.into_iter().chain(std::iter::once(c)).chain(after)
        });
    }

    fn strip_accents(normalized: &mut NormalizedString) {
        if normalized.get().is_ascii() {
            return;
        }
        normalized.nfd().filter(|c| !is_nonspacing_mark(c));
    }
}

impl Normalizer for BertNormalizer {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        if self.clean_text {
            Self::clean_text(normalized);
        }
        if self.handle_chinese_chars {
            Self::handle_chinese_chars(normalized);
        }
        if self.strip_accents.unwrap_or(self.lowercase) {
            Self::strip_accents(normalized);
        }
        if self.lowercase {
            normalized.lowercase();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_categories::UnicodeCategories;

    #[test]
    fn category_table_agrees_with_unicode_categories() {
        for u in (0..0x11000u32).chain([0xE0001, 0xF0000, 0x10FFFD]) {
            let Some(c) = char::from_u32(u) else { continue };
            assert_eq!(category_flags(c) & OTHER != 0, c.is_other(), "{u:X}");
            assert_eq!(is_nonspacing_mark(c), c.is_mark_nonspacing(), "{u:X}");
        }
    }
}
