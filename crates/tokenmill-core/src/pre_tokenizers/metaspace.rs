//! Metaspace (SentencePiece style): spaces become `replacement` (default `▁`), a `▁` is put in
//! front as `prepend_scheme` says, and (if `split`) each piece is cut before every `▁`.
use serde::{Deserialize, Deserializer, Serialize};

use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

/// When to put a `replacement` in front of a piece that does not start with one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrependScheme {
    /// Only in front of the piece that starts the input (offset 0).
    First,
    Never,
    Always,
}

impl PrependScheme {
    pub fn as_str(&self) -> &'static str {
        match self {
            PrependScheme::First => "first",
            PrependScheme::Never => "never",
            PrependScheme::Always => "always",
        }
    }
}

impl std::str::FromStr for PrependScheme {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "first" => Ok(PrependScheme::First),
            "never" => Ok(PrependScheme::Never),
            "always" => Ok(PrependScheme::Always),
            other => Err(crate::Error::InvalidArgument(format!(
                "{other:?} is an unknown prepend_scheme, should be one of \"first\", \"never\", \
                    \"always\""
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type")]
pub struct Metaspace {
    replacement: char,
    pub prepend_scheme: PrependScheme,
    pub split: bool,
    /// `replacement` as a string (what `replace`/`prepend` take).
    #[serde(skip)]
    replacement_str: String,
}

impl Default for Metaspace {
    fn default() -> Self {
        Metaspace::new('▁', PrependScheme::Always, true)
    }
}

impl Metaspace {
    pub fn new(replacement: char, prepend_scheme: PrependScheme, split: bool) -> Self {
        Metaspace { replacement, prepend_scheme, split, replacement_str: replacement.to_string() }
    }
    pub fn replacement(&self) -> char {
        self.replacement
    }
    pub fn set_replacement(&mut self, replacement: char) {
        self.replacement = replacement;
        self.replacement_str = replacement.to_string();
    }
}

impl<'de> Deserialize<'de> for Metaspace {
    /// Also reads the older form with `add_prefix_space` (true: the given or default scheme;
    /// false: `never`, and an error if a different scheme is declared, as in `tokenizers`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Helper {
            replacement: char,
            add_prefix_space: Option<bool>,
            prepend_scheme: Option<PrependScheme>,
            split: Option<bool>,
        }
        let h = Helper::deserialize(deserializer)?;
        let scheme = match (h.add_prefix_space, h.prepend_scheme) {
            (Some(false), Some(s)) if s != PrependScheme::Never => {
                return Err(serde::de::Error::custom(
                    "add_prefix_space does not match declared prepend_scheme",
                ))
            }
            (Some(false), _) => PrependScheme::Never,
            (_, Some(s)) => s,
            (_, None) => PrependScheme::Always,
        };
        Ok(Metaspace::new(h.replacement, scheme, h.split.unwrap_or(true)))
    }
}

impl PreTokenizer for Metaspace {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized.split(|_, mut piece| {
            // A char-for-char map in one pass (`replace` would splice once per space).
            if piece.get().contains(' ') {
                let replacement = self.replacement;
                piece.map(|c| if c == ' ' { replacement } else { c });
            }
            let prepend = match self.prepend_scheme {
                PrependScheme::Always => true,
                PrependScheme::First => piece.offsets_original().0 == 0,
                PrependScheme::Never => false,
            };
            if prepend && !piece.is_empty() && !piece.get().starts_with(self.replacement) {
                piece.prepend(&self.replacement_str);
            }
            if self.split {
                piece.split(self.replacement, SplitDelimiterBehavior::MergedWithNext)
            } else {
                Ok(vec![piece])
            }
        })
    }
}
