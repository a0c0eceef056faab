//! `Replace` decoder: every match of a string or regex in each token replaced by `content`.
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::tokenizer::Pattern;
use crate::utils::regex::Regex;

/// What `Replace` looks for; serialized `{"String":"▁"}` or `{"Regex":"\\s+"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplacePattern {
    String(String),
    Regex(String),
}

/// Serialized `{"type":"Replace","pattern":{"String":"▁"},"content":" "}` (`"type"` not checked;
/// an invalid regex is an error when reading).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", try_from = "ReplaceFields")]
pub struct Replace {
    pub pattern: ReplacePattern,
    pub content: String,
    #[serde(skip)]
    regex: Regex,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
struct ReplaceFields {
    pattern: ReplacePattern,
    content: String,
}

impl TryFrom<ReplaceFields> for Replace {
    type Error = crate::Error;
    fn try_from(f: ReplaceFields) -> Result<Self> {
        Replace::new(f.pattern, f.content)
    }
}

impl PartialEq for Replace {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.content == other.content
    }
}

impl Replace {
    /// A string pattern is matched literally, through the regex engine like `tokenizers`
    /// (so an empty string matches between every two characters).
    pub fn new(pattern: ReplacePattern, content: impl Into<String>) -> Result<Self> {
        let regex = match &pattern {
            ReplacePattern::String(s) => Regex::new(&fancy_regex::escape(s))?,
            ReplacePattern::Regex(r) => Regex::new(r)?,
        };
        Ok(Replace { pattern, content: content.into(), regex })
    }

    pub fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        tokens
            .into_iter()
            .map(|token| {
                let mut out = String::with_capacity(token.len());
                for ((start, end), is_match) in (&self.regex).find_matches(&token)? {
                    out.push_str(if is_match { &self.content } else { &token[start..end] });
                }
                Ok(out)
            })
            .collect()
    }
}
