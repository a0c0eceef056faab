//! `NormalizedString`: text that is being rewritten, which never forgets where each of its
//! bytes came from in the original input. Every normalizer and pre-tokenizer edits text through
//! it, so offsets of the final tokens point into the user's original string.
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::utils::regex::Regex;

/// A `(start, end)` byte span.
pub type Offsets = (usize, usize);

/// What to do with the delimiters when splitting (same names and meaning as `tokenizers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SplitDelimiterBehavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedString {
    original: String,
    normalized: String,
    /// For each byte of `normalized`: the byte span of `original` it comes from.
    alignments: Vec<Offsets>,
    /// Where `original` starts in the whole input (non-zero for pieces cut out by splits).
    original_shift: usize,
}

impl From<&str> for NormalizedString {
    fn from(s: &str) -> Self {
        NormalizedString::from(s.to_string())
    }
}

impl From<String> for NormalizedString {
    fn from(s: String) -> Self {
        let mut alignments = Vec::with_capacity(s.len());
        for (i, c) in s.char_indices() {
            let span = (i, i + c.len_utf8());
            alignments.extend(std::iter::repeat_n(span, c.len_utf8()));
        }
        NormalizedString { normalized: s.clone(), original: s, alignments, original_shift: 0 }
    }
}

impl NormalizedString {
    /// Builds a string whose normalized form and alignments are given directly.
    pub fn from_parts(original: String, normalized: String, alignments: Vec<Offsets>, original_shift: usize) -> Self {
        debug_assert_eq!(normalized.len(), alignments.len());
        NormalizedString { original, normalized, alignments, original_shift }
    }

    pub fn get(&self) -> &str {
        &self.normalized
    }
    pub fn get_original(&self) -> &str {
        &self.original
    }
    pub fn len(&self) -> usize {
        self.normalized.len()
    }
    pub fn len_original(&self) -> usize {
        self.original.len()
    }
    pub fn is_empty(&self) -> bool {
        self.normalized.is_empty()
    }
    pub fn alignments(&self) -> &[Offsets] {
        &self.alignments
    }
    pub fn original_shift(&self) -> usize {
        self.original_shift
    }
    /// The span this string covers in the whole original input.
    pub fn offsets_original(&self) -> Offsets {
        (self.original_shift, self.original_shift + self.original.len())
    }

    /// Maps a byte range of the normalized text to the byte range of `original` (relative to
    /// this string's own `original`, not shifted) that produced it.
    pub fn convert_offsets_to_original(&self, range: Range<usize>) -> Option<Range<usize>> {
        if range.start > range.end || range.end > self.normalized.len() {
            return None;
        }
        if range.start == range.end {
            let at = if range.start < self.alignments.len() {
                self.alignments[range.start].0
            } else if let Some(last) = self.alignments.last() {
                last.1
            } else {
                self.original.len()
            };
            return Some(at..at);
        }
        let spans = &self.alignments[range];
        let start = spans.iter().map(|s| s.0).min().unwrap();
        let end = spans.iter().map(|s| s.1).max().unwrap();
        Some(start..end)
    }

    /// Like `convert_offsets_to_original`, but shifted into the whole input.
    pub fn convert_offsets_to_input(&self, range: Range<usize>) -> Option<Offsets> {
        self.convert_offsets_to_original(range).map(|r| (r.start + self.original_shift, r.end + self.original_shift))
    }

    /// The original span of one normalized char starting at byte `at` of length `len`.
    fn char_alignment(&self, at: usize, len: usize) -> Offsets {
        let spans = &self.alignments[at..at + len];
        (spans.iter().map(|s| s.0).min().unwrap(), spans.iter().map(|s| s.1).max().unwrap())
    }

    /// Replaces the normalized bytes in `range` by the chars of `dest`.
    ///
    /// Each `(char, change)` says how the new char relates to the old chars of the range, read
    /// left to right: `0` replaces one old char; `1` (any positive value) is inserted and adopts
    /// the alignment of the old char before it (or after it, at the very start); `-n` replaces
    /// one old char and also absorbs the `n` old chars that follow, so its alignment covers them
    /// all. `initial_offset` old chars are dropped before the first new char (their alignment is
    /// given to it). Old chars left over at the end are dropped.
    pub fn transform_range(&mut self, range: Range<usize>, dest: impl IntoIterator<Item = (char, isize)>, initial_offset: usize) {
        let old: Vec<(usize, usize)> = self.normalized[range.clone()]
            .char_indices()
            .map(|(i, c)| (range.start + i, c.len_utf8()))
            .collect();
        let edge = if range.start < self.alignments.len() {
            let a = self.alignments[range.start].0;
            (a, a)
        } else if let Some(last) = self.alignments.last() {
            (last.1, last.1)
        } else {
            (0, 0)
        };
        let span_of = |this: &Self, from: usize, to: usize| -> Option<Offsets> {
            // Union of the alignments of old chars [from, to).
            if from >= to || from >= old.len() {
                return None;
            }
            let to = to.min(old.len());
            let first = this.char_alignment(old[from].0, old[from].1);
            let last = this.char_alignment(old[to - 1].0, old[to - 1].1);
            Some((first.0.min(last.0), first.1.max(last.1)))
        };

        let mut new_text = String::new();
        let mut new_align: Vec<Offsets> = Vec::new();
        let mut next_old = initial_offset.min(old.len());
        let mut pending_prefix = span_of(self, 0, next_old);
        let mut last_align: Option<Offsets> = None;
        for (c, change) in dest {
            let align = if change > 0 {
                last_align.or_else(|| span_of(self, next_old, next_old + 1)).unwrap_or(edge)
            } else {
                let absorbed = 1 + (-change).max(0) as usize;
                let a = span_of(self, next_old, next_old + absorbed).unwrap_or_else(|| last_align.unwrap_or(edge));
                next_old = (next_old + absorbed).min(old.len());
                a
            };
            let align = match pending_prefix.take() {
                Some(p) => (p.0.min(align.0), p.1.max(align.1)),
                None => align,
            };
            new_text.push(c);
            new_align.extend(std::iter::repeat_n(align, c.len_utf8()));
            last_align = Some(align);
        }
        self.normalized.replace_range(range.clone(), &new_text);
        self.alignments.splice(range, new_align);
    }

    /// `transform_range` over the whole normalized text.
    pub fn transform(&mut self, dest: impl IntoIterator<Item = (char, isize)>, initial_offset: usize) {
        self.transform_range(0..self.normalized.len(), dest, initial_offset)
    }

    /// Applies a char-to-char mapping.
    pub fn map(&mut self, f: impl Fn(char) -> char) -> &mut Self {
        let dest: Vec<(char, isize)> = self.normalized.chars().map(|c| (f(c), 0)).collect();
        self.transform(dest, 0);
        self
    }

    /// Applies a char-to-chars mapping (the first output char replaces the input char, the rest are inserted).
    pub fn flat_map<I: IntoIterator<Item = char>>(&mut self, f: impl Fn(char) -> I) -> &mut Self {
        let mut dest = Vec::with_capacity(self.normalized.len());
        for c in self.normalized.chars() {
            let mut produced = false;
            for (k, out) in f(c).into_iter().enumerate() {
                dest.push((out, if k == 0 { 0 } else { 1 }));
                produced = true;
            }
            if !produced {
                // Dropped char: absorbed by the previous output char, or skipped at the start.
                match dest.last_mut() {
                    Some(last) if last.1 <= 0 => last.1 -= 1,
                    _ => dest.push(('\u{0}', i8::MIN as isize)), // marker, fixed below
                }
            }
        }
        self.apply_with_markers(dest);
        self
    }

    /// Keeps only the chars for which `keep` is true.
    pub fn filter(&mut self, keep: impl Fn(char) -> bool) -> &mut Self {
        self.flat_map(|c| if keep(c) { Some(c) } else { None })
    }

    /// Resolves the drop markers that `flat_map` leaves where no previous output char exists.
    fn apply_with_markers(&mut self, dest: Vec<(char, isize)>) {
        let marker = i8::MIN as isize;
        let mut initial = 0usize;
        let mut out: Vec<(char, isize)> = Vec::with_capacity(dest.len());
        for (c, change) in dest {
            if change == marker {
                match out.last_mut() {
                    Some(last) if last.1 <= 0 => last.1 -= 1,
                    Some(_) => out.push(('\u{0}', marker)),
                    None => initial += 1,
                }
            } else {
                out.push((c, change));
            }
        }
        // An inserted char followed by a drop: rare (flat_map producing several chars then a
        // drop); attach the drop to the inserted char by turning it into a replacement.
        let mut fixed: Vec<(char, isize)> = Vec::with_capacity(out.len());
        for (c, change) in out {
            if change == marker {
                if let Some(last) = fixed.last_mut() {
                    last.1 = if last.1 > 0 { 0 } else { last.1 - 1 };
                }
            } else {
                fixed.push((c, change));
            }
        }
        self.transform(fixed, initial);
    }

    pub fn lowercase(&mut self) -> &mut Self {
        self.flat_map(|c| c.to_lowercase())
    }
    pub fn uppercase(&mut self) -> &mut Self {
        self.flat_map(|c| c.to_uppercase())
    }

    /// Adds `s` in front; the new chars align to the first char (an empty span if the string is empty).
    pub fn prepend(&mut self, s: &str) -> &mut Self {
        if s.is_empty() {
            return self;
        }
        let align = self.alignments.first().copied().map(|a| (a.0, a.1)).unwrap_or((0, 0));
        let mut aligns = Vec::with_capacity(s.len());
        for c in s.chars() {
            aligns.extend(std::iter::repeat_n(align, c.len_utf8()));
        }
        self.normalized.insert_str(0, s);
        self.alignments.splice(0..0, aligns);
        self
    }

    /// Adds `s` at the end; the new chars align to the last char.
    pub fn append(&mut self, s: &str) -> &mut Self {
        if s.is_empty() {
            return self;
        }
        let align = self.alignments.last().copied().unwrap_or((self.original.len(), self.original.len()));
        for c in s.chars() {
            self.alignments.extend(std::iter::repeat_n(align, c.len_utf8()));
        }
        self.normalized.push_str(s);
        self
    }

    pub fn strip(&mut self) -> &mut Self {
        self.strip_sides(true, true)
    }
    pub fn lstrip(&mut self) -> &mut Self {
        self.strip_sides(true, false)
    }
    pub fn rstrip(&mut self) -> &mut Self {
        self.strip_sides(false, true)
    }

    pub fn strip_sides(&mut self, left: bool, right: bool) -> &mut Self {
        let text = &self.normalized;
        let start = if left { text.len() - text.trim_start().len() } else { 0 };
        let end = if right { text.trim_end().len() } else { text.len() };
        let end = end.max(start);
        if start > 0 || end < self.normalized.len() {
            self.normalized = self.normalized[start..end].to_string();
            self.alignments = self.alignments[start..end].to_vec();
        }
        self
    }

    /// Replaces every match of `pattern` by `content`.
    pub fn replace<P: Pattern>(&mut self, pattern: P, content: &str) -> Result<&mut Self> {
        let matches = pattern.find_matches(&self.normalized)?;
        // Work from the end so earlier ranges stay valid.
        for ((start, end), is_match) in matches.into_iter().rev() {
            if !is_match || start == end {
                continue;
            }
            let old_chars = self.normalized[start..end].chars().count() as isize;
            let mut dest: Vec<(char, isize)> = Vec::new();
            let new_chars: Vec<char> = content.chars().collect();
            for (k, c) in new_chars.iter().enumerate() {
                dest.push((*c, if (k as isize) < old_chars { 0 } else { 1 }));
            }
            let initial = if new_chars.is_empty() { old_chars as usize } else { 0 };
            if !new_chars.is_empty() && (new_chars.len() as isize) < old_chars {
                let last = dest.last_mut().unwrap();
                last.1 = -(old_chars - new_chars.len() as isize);
            }
            self.transform_range(start..end, dest, initial);
        }
        Ok(self)
    }

    /// A piece of this string, by normalized byte range. `None` if the range is not on char boundaries.
    pub fn slice(&self, range: Range<usize>) -> Option<NormalizedString> {
        if range.start > range.end
            || range.end > self.normalized.len()
            || !self.normalized.is_char_boundary(range.start)
            || !self.normalized.is_char_boundary(range.end)
        {
            return None;
        }
        let orig = self.convert_offsets_to_original(range.clone())?;
        let alignments = self.alignments[range.clone()].iter().map(|&(s, e)| (s - orig.start, e - orig.start)).collect();
        Some(NormalizedString {
            original: self.original[orig.clone()].to_string(),
            normalized: self.normalized[range].to_string(),
            alignments,
            original_shift: self.original_shift + orig.start,
        })
    }

    /// Splits on `pattern`, handling the delimiters as `behavior` says. Empty pieces are dropped.
    pub fn split<P: Pattern>(&self, pattern: P, behavior: SplitDelimiterBehavior) -> Result<Vec<NormalizedString>> {
        let matches = pattern.find_matches(&self.normalized)?;
        let pieces = apply_split_behavior(matches, behavior);
        Ok(pieces.into_iter().filter(|(s, e)| s < e).filter_map(|(s, e)| self.slice(s..e)).collect())
    }
}

/// Turns a covering list of `(span, is_match)` into the spans to keep for `behavior`.
pub fn apply_split_behavior(matches: Vec<(Offsets, bool)>, behavior: SplitDelimiterBehavior) -> Vec<Offsets> {
    use SplitDelimiterBehavior::*;
    match behavior {
        Removed => matches.into_iter().filter(|(_, m)| !m).map(|(o, _)| o).collect(),
        Isolated => matches.into_iter().map(|(o, _)| o).collect(),
        MergedWithPrevious => {
            let mut out: Vec<Offsets> = Vec::with_capacity(matches.len());
            let mut previous_was_match = false;
            for (span, is_match) in matches {
                match out.last_mut() {
                    Some(last) if is_match && !previous_was_match => last.1 = span.1,
                    _ => out.push(span),
                }
                previous_was_match = is_match;
            }
            out
        }
        MergedWithNext => {
            let mut out: Vec<Offsets> = Vec::with_capacity(matches.len());
            let mut previous_was_match = false;
            for (span, is_match) in matches.into_iter().rev() {
                match out.last_mut() {
                    Some(last) if is_match && !previous_was_match => last.0 = span.0,
                    _ => out.push(span),
                }
                previous_was_match = is_match;
            }
            out.reverse();
            out
        }
        Contiguous => {
            // Runs of spans with the same flag are joined (consecutive non-matches only
            // happen with an inverted pattern, and are joined too, as in `tokenizers`).
            let mut out: Vec<Offsets> = Vec::with_capacity(matches.len());
            let mut previous_was_match = false;
            for (span, is_match) in matches {
                match out.last_mut() {
                    Some(last) if is_match == previous_was_match => last.1 = span.1,
                    _ => out.push(span),
                }
                previous_was_match = is_match;
            }
            out
        }
    }
}

/// Something that can find matches in a string: a char, a string, a regex, or a char predicate.
pub trait Pattern {
    /// A covering, ordered list of `(span, is_match)` over `inside`: every byte is in exactly one span.
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>>;
}

/// Turns match spans into the covering list `Pattern::find_matches` returns.
pub fn cover_with_gaps(spans: impl IntoIterator<Item = Offsets>, len: usize) -> Vec<(Offsets, bool)> {
    let mut out = Vec::new();
    let mut previous = 0;
    for (s, e) in spans {
        if s > previous {
            out.push(((previous, s), false));
        }
        out.push(((s, e), true));
        previous = e;
    }
    if previous < len || out.is_empty() {
        out.push(((previous, len), false));
    }
    out
}

impl Pattern for char {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        let c = *self;
        (move |x: char| x == c).find_matches(inside)
    }
}

impl Pattern for &str {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        if self.is_empty() {
            return Ok(vec![((0, inside.len()), false)]);
        }
        let spans = inside.match_indices(*self).map(|(i, m)| (i, i + m.len()));
        Ok(cover_with_gaps(spans, inside.len()))
    }
}

impl Pattern for &String {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        self.as_str().find_matches(inside)
    }
}

impl Pattern for &Regex {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        if inside.is_empty() {
            return Ok(vec![((0, 0), false)]);
        }
        Ok(cover_with_gaps(self.find_spans(inside)?, inside.len()))
    }
}

impl<F: Fn(char) -> bool> Pattern for F {
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>> {
        let spans = inside.char_indices().filter(|(_, c)| self(*c)).map(|(i, c)| (i, i + c.len_utf8()));
        Ok(cover_with_gaps(spans, inside.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_keeps_alignment() {
        let mut n = NormalizedString::from("AİB");
        n.lowercase();
        assert_eq!(n.get(), "ai\u{307}b");
        // the combining dot comes from İ (original bytes 1..3)
        assert_eq!(n.convert_offsets_to_original(1..4), Some(1..3));
        assert_eq!(n.convert_offsets_to_original(4..5), Some(3..4));
    }

    #[test]
    fn filter_and_split() {
        let mut n = NormalizedString::from("  hello,  world ");
        n.filter(|c| c != ',');
        let parts = n.split(' ', SplitDelimiterBehavior::Removed).unwrap();
        let texts: Vec<_> = parts.iter().map(|p| p.get().to_string()).collect();
        assert_eq!(texts, vec!["hello", "world"]);
        assert_eq!(parts[1].offsets_original(), (10, 15));
    }

    #[test]
    fn split_behaviors() {
        let n = NormalizedString::from("a-b--c");
        let get = |b| n.split('-', b).unwrap().iter().map(|p| p.get().to_string()).collect::<Vec<_>>();
        assert_eq!(get(SplitDelimiterBehavior::Removed), vec!["a", "b", "c"]);
        assert_eq!(get(SplitDelimiterBehavior::Isolated), vec!["a", "-", "b", "-", "-", "c"]);
        assert_eq!(get(SplitDelimiterBehavior::MergedWithPrevious), vec!["a-", "b-", "-", "c"]);
        assert_eq!(get(SplitDelimiterBehavior::MergedWithNext), vec!["a", "-b", "-", "-c"]);
        assert_eq!(get(SplitDelimiterBehavior::Contiguous), vec!["a", "-", "b", "--", "c"]);
    }

    #[test]
    fn replace_and_prepend() {
        let mut n = NormalizedString::from("a b");
        n.replace(' ', "▁").unwrap();
        n.prepend("▁");
        assert_eq!(n.get(), "▁a▁b");
        assert_eq!(n.convert_offsets_to_original(0..3), Some(0..1));
        assert_eq!(n.convert_offsets_to_original(4..7), Some(1..2));
    }
}
