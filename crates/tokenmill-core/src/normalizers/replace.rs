//! Replace: every match of a string or a regex becomes a fixed content.
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::pre_tokenizers::split::oniguruma_compatible;
use crate::tokenizer::{NormalizedString, Normalizer, Pattern};
use crate::utils::regex::{LiteralOrRegex, Regex};

/// What `Replace` looks for (the name `tokenizers` gives it).
pub type ReplacePattern = LiteralOrRegex;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", try_from = "ReplaceFields")]
pub struct Replace {
    pattern: ReplacePattern,
    pub content: String,
    /// Compiled from `pattern`; a string pattern is escaped and matched through the regex engine
    /// as `tokenizers` does (so an empty string matches between every two characters).
    #[serde(skip)]
    regex: Regex,
}

/// The serialized fields, checked (the regex compiled) by `Replace::new`.
#[derive(Deserialize)]
struct ReplaceFields {
    pattern: ReplacePattern,
    content: String,
}

impl TryFrom<ReplaceFields> for Replace {
    type Error = crate::Error;
    fn try_from(fields: ReplaceFields) -> Result<Self> {
        Replace::new(fields.pattern, fields.content)
    }
}

impl PartialEq for Replace {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.content == other.content
    }
}

impl Replace {
    /// Fails with `Error::Regex` if the pattern is a regex that does not compile.
    pub fn new(pattern: impl Into<ReplacePattern>, content: impl Into<String>) -> Result<Self> {
        let pattern = pattern.into();
        let regex = match &pattern {
            ReplacePattern::String(s) => Regex::new(&fancy_regex::escape(s))?,
            // tokenizers compiles it with Oniguruma (Ruby syntax: `^` and `$` match at lines).
            ReplacePattern::Regex(r) => Regex::new(&oniguruma_compatible(r))?,
        };
        Ok(Replace { pattern, content: content.into(), regex })
    }

    pub fn pattern(&self) -> &ReplacePattern {
        &self.pattern
    }

    /// Replaces the matches in one string, without alignments (the `Replace` decoder is this
    /// same component, as in `tokenizers`).
    pub fn replace_in(&self, text: &str) -> Result<String> {
        let mut out = String::with_capacity(text.len());
        for ((start, end), is_match) in (&self.regex).find_matches(text)? {
            out.push_str(if is_match { &self.content } else { &text[start..end] });
        }
        Ok(out)
    }
}

impl Normalizer for Replace {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        normalized.replace(&self.regex, &self.content)?;
        Ok(())
    }
}
