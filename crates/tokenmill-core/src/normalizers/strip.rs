//! Strip (leading / trailing whitespace) and StripAccents (combining marks).
use serde::{Deserialize, Serialize};
use unicode_normalization_alignments::char::is_combining_mark;

use super::unicode::unit_normalizer;
use crate::error::Result;
use crate::tokenizer::{NormalizedString, Normalizer};

/// Removes whitespace (`char::is_whitespace`) on the left and/or the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Strip {
    pub strip_left: bool,
    pub strip_right: bool,
}

impl Strip {
    pub fn new(strip_left: bool, strip_right: bool) -> Self {
        Strip { strip_left, strip_right }
    }
}

impl Default for Strip {
    fn default() -> Self {
        Strip::new(true, true)
    }
}

impl Normalizer for Strip {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        normalized.strip_sides(self.strip_left, self.strip_right);
        Ok(())
    }
}

unit_normalizer!(
    /// Removes combining marks (the same `is_combining_mark` table as `tokenizers`). Usually
    /// run after NFD, so that accents are separate marks.
    StripAccents,
    |n| {
        // ASCII has no combining marks.
        if !n.get().is_ascii() {
            n.filter(|c| !is_combining_mark(c));
        }
    }
);
