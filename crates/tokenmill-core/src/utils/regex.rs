//! The regex engine used by pre-tokenizers and normalizers.
//!
//! `Regex` hides which engine runs a pattern: hand-written scanners for the well-known split
//! patterns (GPT-2, cl100k, o200k, Llama-3, Qwen2; see `pre_tokenizers::scanners`) when the
//! pattern is exactly one of them, otherwise `fancy-regex` (backtracking, needed for look-around
//! and possessive quantifiers). Callers only see byte spans; both engines give the same spans.
//! `LiteralOrRegex` is a pattern as tokenizer.json gives it (`Replace`, `Split`).
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::pre_tokenizers::scanners::Scanner;

/// What `Replace` and `Split` look for: a literal string or a regex; serialized as
/// `{"String": "..."}` or `{"Regex": "..."}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LiteralOrRegex {
    String(String),
    Regex(String),
}

impl From<&str> for LiteralOrRegex {
    fn from(s: &str) -> Self {
        LiteralOrRegex::String(s.to_string())
    }
}

impl From<String> for LiteralOrRegex {
    fn from(s: String) -> Self {
        LiteralOrRegex::String(s)
    }
}

#[derive(Debug, Clone)]
pub struct Regex {
    pattern: String,
    engine: Engine,
}

#[derive(Debug, Clone)]
enum Engine {
    Scanner(Scanner),
    Backtracking(fancy_regex::Regex),
}

impl Regex {
    /// Compiles `pattern`; a known split pattern gets its scanner.
    pub fn new(pattern: &str) -> Result<Self> {
        match Scanner::for_pattern(pattern) {
            Some(scanner) => {
                Ok(Regex { pattern: pattern.to_string(), engine: Engine::Scanner(scanner) })
            }
            None => Self::new_backtracking(pattern),
        }
    }

    /// Compiles `pattern` with the general engine even if a scanner exists for it (for the
    /// differential tests and benchmarks).
    pub fn new_backtracking(pattern: &str) -> Result<Self> {
        let engine =
            fancy_regex::RegexBuilder::new(pattern).backtrack_limit(100_000_000).build().map_err(
                |e| Error::Regex { pattern: pattern.to_string(), message: e.to_string() },
            )?;
        Ok(Regex { pattern: pattern.to_string(), engine: Engine::Backtracking(engine) })
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether a hand-written scanner runs this pattern.
    pub fn uses_scanner(&self) -> bool {
        matches!(self.engine, Engine::Scanner(_))
    }

    /// Calls `f(start, end)` for every non-overlapping match, left to right (byte offsets).
    #[inline]
    pub fn for_each_match(&self, text: &str, mut f: impl FnMut(usize, usize)) -> Result<()> {
        match &self.engine {
            Engine::Scanner(scanner) => {
                scanner.for_each_span(text, f);
                Ok(())
            }
            Engine::Backtracking(engine) => {
                for m in engine.find_iter(text) {
                    let m = m.map_err(|e| Error::Regex {
                        pattern: self.pattern.clone(),
                        message: e.to_string(),
                    })?;
                    f(m.start(), m.end());
                }
                Ok(())
            }
        }
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
