//! Replace: every match of a string or a regex becomes a fixed content.
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::tokenizer::{NormalizedString, Normalizer};
use crate::utils::regex::Regex;

/// What `Replace` looks for; serialized as `{"String": "..."}` or `{"Regex": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplacePattern {
    String(String),
    Regex(String),
}

impl From<&str> for ReplacePattern {
    fn from(s: &str) -> Self {
        ReplacePattern::String(s.to_string())
    }
}

impl From<String> for ReplacePattern {
    fn from(s: String) -> Self {
        ReplacePattern::String(s)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", try_from = "ReplaceFields")]
pub struct Replace {
    pattern: ReplacePattern,
    pub content: String,
    /// Compiled from `pattern` when it is a regex (a plain string is searched as is).
    #[serde(skip)]
    regex: Option<Regex>,
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
            ReplacePattern::String(_) => None,
            ReplacePattern::Regex(r) => Some(Regex::new(r)?),
        };
        Ok(Replace { pattern, content: content.into(), regex })
    }

    pub fn pattern(&self) -> &ReplacePattern {
        &self.pattern
    }

    /// Replaces the matches in one string (the `Replace` decoder uses this too).
    pub fn replace_in(&self, text: &str) -> Result<String> {
        let mut n = NormalizedString::from(text);
        self.normalize(&mut n)?;
        Ok(n.get().to_string())
    }
}

impl Normalizer for Replace {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        match (&self.regex, &self.pattern) {
            (Some(regex), _) => normalized.replace(regex, &self.content)?,
            // `new` compiles every regex pattern, so this is a plain string.
            (None, ReplacePattern::String(s) | ReplacePattern::Regex(s)) => normalized.replace(s.as_str(), &self.content)?,
        };
        Ok(())
    }
}
