//! Split: cuts on every match of a string or a regex, the delimiters handled as
//! `SplitDelimiterBehavior` says; `invert` splits on what lies between the matches instead.
//!
//! `tokenizers` runs these patterns with Oniguruma; tokenmill's `Regex` is fancy-regex (or a
//! hand-written scanner for well-known patterns). Where the two read a pattern differently in
//! ways real patterns hit, `oniguruma_compatible` rewrites the pattern so the matches agree.
use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Invert;
use crate::error::{Error, Result};
use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::utils::regex::Regex;

/// What `Split` looks for: a literal string, or a regex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SplitPattern {
    String(String),
    Regex(String),
}

impl From<&str> for SplitPattern {
    fn from(s: &str) -> Self {
        SplitPattern::String(s.to_string())
    }
}

impl From<String> for SplitPattern {
    fn from(s: String) -> Self {
        SplitPattern::String(s)
    }
}

#[derive(Debug, Clone)]
pub struct Split {
    pub pattern: SplitPattern,
    regex: Regex,
    pub behavior: SplitDelimiterBehavior,
    pub invert: bool,
}

impl PartialEq for Split {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern && self.behavior == other.behavior && self.invert == other.invert
    }
}

impl Split {
    /// Compiles the pattern; an invalid regex is an `Error::Regex` naming it.
    pub fn new(pattern: impl Into<SplitPattern>, behavior: SplitDelimiterBehavior, invert: bool) -> Result<Self> {
        let pattern = pattern.into();
        let regex = match &pattern {
            // A literal is matched as an escaped regex, like `tokenizers` does; this keeps its
            // edge cases (the empty string matches between every two chars).
            SplitPattern::String(s) => Regex::new(&regex::escape(s))?,
            SplitPattern::Regex(r) => Regex::new(&oniguruma_compatible(r))
                .map_err(|e| match e {
                    Error::Regex { message, .. } => Error::Regex { pattern: r.clone(), message },
                    other => other,
                })?,
        };
        Ok(Split { pattern, regex, behavior, invert })
    }

    /// The compiled matcher.
    pub fn regex(&self) -> &Regex {
        &self.regex
    }
}

impl PreTokenizer for Split {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> Result<()> {
        if self.invert {
            pretokenized.split(|_, piece| piece.split(Invert(&self.regex), self.behavior))
        } else {
            pretokenized.split(|_, piece| piece.split(&self.regex, self.behavior))
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename = "Split")]
struct SplitJson {
    pattern: SplitPattern,
    behavior: SplitDelimiterBehavior,
    #[serde(default)]
    invert: bool,
}

impl Serialize for Split {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        SplitJson { pattern: self.pattern.clone(), behavior: self.behavior, invert: self.invert }.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Split {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let json = SplitJson::deserialize(deserializer)?;
        Split::new(json.pattern, json.behavior, json.invert).map_err(serde::de::Error::custom)
    }
}

/// Rewrites an Oniguruma pattern (as `tokenizers` compiles it) for tokenmill's engine.
///
/// With the options `tokenizers` uses, Oniguruma's `.` also matches `\n`, and `^` / `$` match
/// at line starts / ends; fancy-regex needs the `s` and `m` flags for that. The flags are added
/// only when the pattern uses these outside a character class, so the well-known split
/// patterns (which don't) stay byte-identical and keep their fast scanners.
pub fn oniguruma_compatible(pattern: &str) -> Cow<'_, str> {
    if uses_dot_or_anchors(pattern) {
        Cow::Owned(format!("(?sm){pattern}"))
    } else {
        Cow::Borrowed(pattern)
    }
}

/// Whether `pattern` has an unescaped `.`, `^` or `$` outside character classes.
fn uses_dot_or_anchors(pattern: &str) -> bool {
    let mut chars = pattern.chars().peekable();
    let mut class_depth = 0usize;
    // Right after a class's `[` (or `[^`), a `]` is a literal, not the end.
    let mut class_just_opened = false;
    while let Some(c) = chars.next() {
        let just_opened = std::mem::take(&mut class_just_opened);
        match c {
            '\\' => {
                // Skip the escaped char, and a `{...}` argument (`\p{^L}`, `\x{41}`).
                if let Some(e) = chars.next() {
                    if e.is_ascii_alphabetic() && chars.peek() == Some(&'{') {
                        for c in chars.by_ref() {
                            if c == '}' {
                                break;
                            }
                        }
                    }
                }
            }
            '[' => {
                class_depth += 1;
                class_just_opened = true;
                if chars.peek() == Some(&'^') {
                    chars.next();
                }
            }
            ']' if class_depth > 0 && !just_opened => class_depth -= 1,
            '.' | '^' | '$' if class_depth == 0 => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{OffsetReferential, OffsetType, Offsets};

    fn run(split: &Split, s: &str) -> Vec<(String, Offsets)> {
        let mut p = PreTokenizedString::from(s);
        split.pre_tokenize(&mut p).unwrap();
        p.get_splits(OffsetReferential::Original, OffsetType::Char).into_iter().map(|(s, o, _)| (s.to_string(), o)).collect()
    }

    fn words(split: &Split, s: &str) -> Vec<String> {
        run(split, s).into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn string_and_regex_patterns() {
        let s = Split::new(",", SplitDelimiterBehavior::Removed, false).unwrap();
        assert_eq!(run(&s, "one,two,three"), vec![("one".into(), (0, 3)), ("two".into(), (4, 7)), ("three".into(), (8, 13))]);
        let s = Split::new(SplitPattern::Regex(r"\s+".into()), SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "hello   world"), ["hello", "   ", "world"]);
        let s = Split::new(SplitPattern::Regex(r"\s+".into()), SplitDelimiterBehavior::Removed, true).unwrap();
        assert_eq!(words(&s, "hello   world"), ["   "]);
        let s = Split::new(".", SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "a.b"), ["a", ".", "b"]);
        let s = Split::new("", SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "abc"), ["a", "b", "c"]);
    }

    #[test]
    fn oniguruma_dot_and_anchors() {
        assert_eq!(oniguruma_compatible(super::super::byte_level::GPT2_PATTERN), super::super::byte_level::GPT2_PATTERN);
        assert_eq!(oniguruma_compatible(r"[^a.$]\p{^L}\."), r"[^a.$]\p{^L}\.");
        assert_eq!(oniguruma_compatible(r"[]a]."), r"(?sm)[]a].");
        let s = Split::new(SplitPattern::Regex("a.b".into()), SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "a\nb"), ["a\nb"]);
        let s = Split::new(SplitPattern::Regex("a$".into()), SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "a\na"), ["a", "\n", "a"]);
    }

    #[test]
    fn bad_regex_is_an_error() {
        match Split::new(SplitPattern::Regex("(a".into()), SplitDelimiterBehavior::Isolated, false) {
            Err(Error::Regex { pattern, .. }) => assert_eq!(pattern, "(a"),
            other => panic!("{other:?}"),
        }
    }
}
