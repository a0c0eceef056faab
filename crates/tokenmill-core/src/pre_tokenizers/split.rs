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
use crate::utils::regex::{LiteralOrRegex, Regex};

/// What `Split` looks for (the name `tokenizers` gives it).
pub type SplitPattern = LiteralOrRegex;

#[derive(Debug, Clone)]
pub struct Split {
    pub pattern: SplitPattern,
    regex: Regex,
    pub behavior: SplitDelimiterBehavior,
    pub invert: bool,
}

impl PartialEq for Split {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
            && self.behavior == other.behavior
            && self.invert == other.invert
    }
}

impl Split {
    /// Compiles the pattern; an invalid regex is an `Error::Regex` naming it.
    pub fn new(
        pattern: impl Into<SplitPattern>,
        behavior: SplitDelimiterBehavior,
        invert: bool,
    ) -> Result<Self> {
        let pattern = pattern.into();
        let regex = match &pattern {
            // A literal is matched as an escaped regex, like `tokenizers` does; this keeps its
            // edge cases (the empty string matches between every two chars).
            SplitPattern::String(s) => Regex::new(&regex::escape(s))?,
            SplitPattern::Regex(r) => {
                Regex::new(&oniguruma_compatible(r)).map_err(|e| match e {
                    Error::Regex { message, .. } => Error::Regex { pattern: r.clone(), message },
                    other => other,
                })?
            }
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
        SplitJson { pattern: self.pattern.clone(), behavior: self.behavior, invert: self.invert }
            .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Split {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let json = SplitJson::deserialize(deserializer)?;
        Split::new(json.pattern, json.behavior, json.invert).map_err(serde::de::Error::custom)
    }
}

/// Rewrites an Oniguruma pattern (as `tokenizers` compiles it: Ruby syntax) into one that
/// tokenmill's engine (fancy-regex, Perl/Rust syntax) reads with the same meaning.
///
/// The differences handled, each one seen in real patterns:
/// - `^` / `$` are line anchors in Ruby: the `m` flag is added when they occur outside classes
///   (except `\s++$`, where it changes nothing: the possessive run already ate any `\n`).
/// - Ruby's inline `m` flag means "dot matches newline": `s` here.
/// - `X{n,m}+` is `(?:X{n,m})+` in Ruby, not a possessive repeat (tiktoken's cl100k pattern has
///   `\p{N}{1,3}+`, which Oniguruma reads as "one or more groups of 1-3 digits").
/// - Ruby's `\w` does not include the joiners U+200C/U+200D (Rust's does) but includes the
///   Latin-1 `²³¹¼½¾` (outside classes only); `\W` is its complement.
/// - `\h` / `\H` are (non-)hex digits; `\p{^X}` negates.
///
/// The well-known split patterns come out byte-identical (so they keep their fast scanners).
pub fn oniguruma_compatible(pattern: &str) -> Cow<'_, str> {
    let rewritten = Rewriter::default().run(pattern);
    if rewritten == pattern {
        Cow::Borrowed(pattern)
    } else {
        Cow::Owned(rewritten)
    }
}

/// Oniguruma's `\w`: Rust's, plus the Latin-1 digits of category No (`²³¹¼½¾`), minus the
/// joiners U+200C/U+200D.
const ONIG_WORD: &str = r"[[\w\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}]--[\x{200C}\x{200D}]]";
/// Its complement (Oniguruma's `\W`).
const ONIG_NOT_WORD: &str = r"[\x{200C}\x{200D}[^\w\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}]]";

/// Inside a character class, Oniguruma's `\w` lacks the Latin-1 extras (but still the joiners).
const ONIG_CLASS_WORD: &str = r"[\w--[\x{200C}\x{200D}]]";
const ONIG_CLASS_NOT_WORD: &str = r"\W\x{200C}\x{200D}";

#[derive(Default)]
struct Rewriter {
    out: String,
    /// Where (in `out`) the last complete atom starts, for wrapping `X{n,m}+`.
    atom_start: usize,
    /// `out` positions of the open groups.
    groups: Vec<usize>,
    class_depth: usize,
    needs_multiline: bool,
}

impl Rewriter {
    fn run(mut self, pattern: &str) -> String {
        let chars: Vec<char> = pattern.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            i = self.step(&chars, i);
        }
        if self.needs_multiline {
            self.out.insert_str(0, "(?m)");
        }
        self.out
    }

    /// Consumes the token at `i`, returns the index after it.
    fn step(&mut self, chars: &[char], i: usize) -> usize {
        let c = chars[i];
        let start = self.out.len();
        match c {
            '\\' => return self.escape(chars, i),
            '[' => {
                self.class_depth += 1;
                if self.class_depth == 1 {
                    self.atom_start = start;
                }
                self.out.push('[');
                let mut j = i + 1;
                if chars.get(j) == Some(&'^') {
                    self.out.push('^');
                    j += 1;
                }
                // A `]` right after `[` or `[^` is a literal.
                if chars.get(j) == Some(&']') {
                    self.out.push(']');
                    j += 1;
                }
                return j;
            }
            ']' if self.class_depth > 0 => {
                self.class_depth -= 1;
                self.out.push(']');
            }
            _ if self.class_depth > 0 => self.out.push(c),
            '(' => {
                self.groups.push(start);
                self.out.push('(');
                if chars.get(i + 1) == Some(&'?') {
                    return self.group_flags(chars, i + 1);
                }
            }
            ')' => {
                self.atom_start = self.groups.pop().unwrap_or(0);
                self.out.push(')');
            }
            '{' => {
                if let Some(end) = interval_end(chars, i) {
                    let interval: String = chars[i..=end].iter().collect();
                    if chars.get(end + 1) == Some(&'+') {
                        // Ruby: a repeat of the interval, not a possessive one.
                        self.out.insert_str(self.atom_start, "(?:");
                        self.out.push_str(&interval);
                        self.out.push_str(")+");
                        return end + 2;
                    }
                    self.out.push_str(&interval);
                    return end + 1;
                }
                self.atom_start = start;
                self.out.push('{');
            }
            '^' | '$' => {
                let possessive_space_run = c == '$' && self.out.ends_with(r"\s++");
                self.needs_multiline |= !possessive_space_run;
                self.out.push(c);
            }
            '*' | '+' | '?' | '|' => self.out.push(c),
            _ => {
                self.atom_start = start;
                self.out.push(c);
            }
        }
        i + 1
    }

    /// An escape at `i` (the backslash).
    fn escape(&mut self, chars: &[char], i: usize) -> usize {
        let start = self.out.len();
        if self.class_depth == 0 {
            self.atom_start = start;
        }
        let Some(&e) = chars.get(i + 1) else {
            self.out.push('\\');
            return i + 1;
        };
        let replacement = match e {
            'w' if self.class_depth > 0 => Some(ONIG_CLASS_WORD),
            'W' if self.class_depth > 0 => Some(ONIG_CLASS_NOT_WORD),
            'w' => Some(ONIG_WORD),
            'W' => Some(ONIG_NOT_WORD),
            'h' => Some(r"[0-9a-fA-F]"),
            'H' => Some(r"[^0-9a-fA-F]"),
            _ => None,
        };
        if let Some(r) = replacement {
            self.out.push_str(r);
            return i + 2;
        }
        self.out.push('\\');
        if (e == 'p' || e == 'P')
            && chars.get(i + 2) == Some(&'{')
            && chars.get(i + 3) == Some(&'^')
        {
            // `\p{^L}` is `\P{L}`.
            self.out.push(if e == 'p' { 'P' } else { 'p' });
            self.out.push('{');
            return self.copy_braces(chars, i + 4);
        }
        self.out.push(e);
        if e.is_ascii_alphabetic() && chars.get(i + 2) == Some(&'{') {
            self.out.push('{');
            return self.copy_braces(chars, i + 3);
        }
        i + 2
    }

    /// Copies up to and including the next `}`.
    fn copy_braces(&mut self, chars: &[char], mut j: usize) -> usize {
        while let Some(&c) = chars.get(j) {
            self.out.push(c);
            j += 1;
            if c == '}' {
                break;
            }
        }
        j
    }

    /// `(?` at `i`: copies inline flags, with Ruby's `m` (dot-all) written as `s`.
    fn group_flags(&mut self, chars: &[char], i: usize) -> usize {
        self.out.push('?');
        let mut j = i + 1;
        while let Some(&c) = chars.get(j) {
            match c {
                'm' => self.out.push('s'),
                'i' | 'x' | '-' => self.out.push(c),
                _ => break,
            }
            j += 1;
        }
        j
    }
}

/// If `chars[i..]` starts with a `{n}`, `{n,}`, `{,m}` or `{n,m}` interval, the index of its `}`.
fn interval_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let mut digits = 0;
    let mut commas = 0;
    while let Some(&c) = chars.get(j) {
        match c {
            '0'..='9' => digits += 1,
            ',' => commas += 1,
            '}' => return (digits > 0 && commas <= 1).then_some(j),
            _ => return None,
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::pieces;

    fn words(split: &Split, s: &str) -> Vec<String> {
        pieces(split, s).into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn string_and_regex_patterns() {
        let s = Split::new(",", SplitDelimiterBehavior::Removed, false).unwrap();
        assert_eq!(
            pieces(&s, "one,two,three"),
            vec![("one".into(), (0, 3)), ("two".into(), (4, 7)), ("three".into(), (8, 13))]
        );
        let s =
            Split::new(SplitPattern::Regex(r"\s+".into()), SplitDelimiterBehavior::Isolated, false)
                .unwrap();
        assert_eq!(words(&s, "hello   world"), ["hello", "   ", "world"]);
        let s =
            Split::new(SplitPattern::Regex(r"\s+".into()), SplitDelimiterBehavior::Removed, true)
                .unwrap();
        assert_eq!(words(&s, "hello   world"), ["   "]);
        let s = Split::new(".", SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "a.b"), ["a", ".", "b"]);
        let s = Split::new("", SplitDelimiterBehavior::Isolated, false).unwrap();
        assert_eq!(words(&s, "abc"), ["a", "b", "c"]);
    }

    #[test]
    fn oniguruma_rewrites() {
        use super::super::byte_level::GPT2_PATTERN;
        let cl100k = crate::pre_tokenizers::scanners::CL100K_PATTERN;
        assert_eq!(oniguruma_compatible(GPT2_PATTERN), GPT2_PATTERN);
        assert!(oniguruma_compatible(cl100k).contains(r"(?:\p{N}{1,3})+"));
        assert!(!oniguruma_compatible(cl100k).starts_with("(?m)"));
        assert_eq!(oniguruma_compatible(r"[^a.$]\p{^L}\."), r"[^a.$]\P{L}\.");
        assert_eq!(oniguruma_compatible(r"[]a]$"), r"(?m)[]a]$");
        assert_eq!(oniguruma_compatible(r"(?m:a.b)"), r"(?s:a.b)");
        assert_eq!(oniguruma_compatible(r"(ab){2}+x"), r"(?:(ab){2})+x");
        assert_eq!(oniguruma_compatible(r"a{2,}?"), r"a{2,}?");
        let words = |p: &str, s: &str| {
            let split =
                Split::new(SplitPattern::Regex(p.into()), SplitDelimiterBehavior::Removed, true)
                    .unwrap();
            pieces(&split, s).into_iter().map(|(w, _)| w).collect::<Vec<_>>()
        };
        assert_eq!(words("a.b", "a\nb axb"), ["axb"]);
        assert_eq!(words("(?m)a.b", "a\nb"), ["a\nb"]);
        assert_eq!(words("a$", "a\na a"), ["a", "a"]);
        assert_eq!(words(r"\w+", "a\u{200d}b"), ["a", "b"]);
        assert_eq!(words(r"[^\w\s]", "a\u{200d}b"), ["\u{200d}"]);
        assert_eq!(words(r"\w+", "x½ ①"), ["x½"]);
        assert_eq!(words(r"\W+", "x½ ①\u{200c}"), [" ①\u{200c}"]);
        assert_eq!(words(r"\h+", "xff1"), ["ff1"]);
        assert_eq!(words(r"a{2}+", "aaaaa"), ["aaaa"]);
    }

    #[test]
    fn bad_regex_is_an_error() {
        match Split::new(SplitPattern::Regex("(a".into()), SplitDelimiterBehavior::Isolated, false)
        {
            Err(Error::Regex { pattern, .. }) => assert_eq!(pattern, "(a"),
            other => panic!("{other:?}"),
        }
    }
}
