//! `NormalizedString`: text that is being rewritten, which never forgets where each of its
//! bytes came from in the original input. Every normalizer and pre-tokenizer edits text through
//! it, so offsets of the final tokens point into the user's original string.
//!
//! The alignment rules are those of Hugging Face `tokenizers` (so offsets are identical):
//! - a char that *replaces* an old char takes the old char's span;
//! - a char that is *inserted* takes the span of the old char just before the insertion point
//!   (`(0, 0)` at the very start of the string);
//! - removed chars simply vanish: nothing absorbs their span.
//!
//! Consequences used by the fast paths below: a char-to-chars mapping (`flat_map`, `map`,
//! `filter`, `lowercase`) gives every produced char the span of the char it came from, and
//! alignments are always non-decreasing, so the span of a byte range is `(first.0, last.1)`.
//! Every operation is a single pass over the text (linear time).
use std::ops::Range;

use serde::{Deserialize, Serialize};
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

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

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NormalizedString {
    original: String,
    normalized: String,
    /// For each byte of `normalized`: the byte span of `original` it comes from. All bytes of
    /// one char share the same span, and spans never decrease from left to right.
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
        if s.is_ascii() {
            alignments.extend((0..s.len()).map(|i| (i, i + 1)));
        } else {
            for (i, c) in s.char_indices() {
                push_char_alignment(&mut alignments, c, (i, i + c.len_utf8()));
            }
        }
        NormalizedString { normalized: s.clone(), original: s, alignments, original_shift: 0 }
    }
}

#[inline]
fn push_char_alignment(alignments: &mut Vec<Offsets>, c: char, span: Offsets) {
    for _ in 0..c.len_utf8() {
        alignments.push(span);
    }
}

/// Appends `c` with its `span` to a text being built.
#[inline]
fn push_char(text: &mut String, alignments: &mut Vec<Offsets>, c: char, span: Offsets) {
    text.push(c);
    push_char_alignment(alignments, c, span);
}

/// Runs one of the Unicode normalization forms on a `NormalizedString`.
/// `unicode-normalization-alignments` (the crate `tokenizers` uses, so outputs and alignments
/// agree) says for each output char how it relates to the input chars, which is exactly what
/// `transform` consumes. Text that the quick check (same crate, same tables) proves normalized
/// is left alone, and only the non-ASCII stretches are run through the crate (see
/// `rewrite_non_ascii_runs`).
macro_rules! unicode_form {
    ($self:ident, $quick_check:ident, $form:ident, composes: $composes:expr) => {{
        if !($self.normalized.is_ascii()
            || $quick_check($self.normalized.chars()) == IsNormalized::Yes)
        {
            let (text, alignments) =
                rewrite_non_ascii_runs(&$self.normalized, &$self.alignments, $composes, |piece| {
                    piece.$form()
                });
            $self.normalized = text;
            $self.alignments = alignments;
        }
        $self
    }};
}

impl NormalizedString {
    /// Builds a string whose normalized form and alignments are given directly.
    pub fn from_parts(
        original: String,
        normalized: String,
        alignments: Vec<Offsets>,
        original_shift: usize,
    ) -> Self {
        debug_assert_eq!(normalized.len(), alignments.len());
        NormalizedString { original, normalized, alignments, original_shift }
    }

    pub fn get(&self) -> &str {
        &self.normalized
    }
    pub fn get_original(&self) -> &str {
        &self.original
    }
    /// Length of the normalized text, in bytes.
    pub fn len(&self) -> usize {
        self.normalized.len()
    }
    /// Length of the original text, in bytes.
    pub fn len_original(&self) -> usize {
        self.original.len()
    }
    pub fn is_empty(&self) -> bool {
        self.normalized.is_empty()
    }
    /// Per normalized byte: its span in `original` (not shifted).
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
    /// this string's own `original`, not shifted) that produced it. An empty range maps to an
    /// empty range at the original position of the normalized byte it points at.
    pub fn convert_offsets_to_original(&self, range: Range<usize>) -> Option<Range<usize>> {
        if range.start > range.end || range.end > self.normalized.len() {
            return None;
        }
        if range.start == range.end {
            let at = match self.alignments.get(range.start) {
                Some(a) => a.0,
                None => self.alignments.last().map_or(self.original.len(), |a| a.1),
            };
            return Some(at..at);
        }
        // Alignments never decrease, so the first and last bytes bound the whole range.
        let start = self.alignments[range.start].0;
        let end = self.alignments[range.end - 1].1.max(start);
        Some(start..end)
    }

    /// Like `convert_offsets_to_original`, but shifted into the whole input.
    pub fn convert_offsets_to_input(&self, range: Range<usize>) -> Option<Offsets> {
        self.convert_offsets_to_original(range)
            .map(|r| (r.start + self.original_shift, r.end + self.original_shift))
    }

    /// Maps a byte range of `original` (not shifted) to the normalized byte range built from
    /// it, as `tokenizers` does: it ends after the last normalized byte whose span ends inside
    /// `range`, and starts at the first one whose (non-empty) span starts inside it. An empty
    /// range is returned as is; `None` if no normalized byte ends inside `range`.
    pub fn convert_offsets_from_original(&self, range: Range<usize>) -> Option<Range<usize>> {
        if range.start > range.end || range.end > self.original.len() {
            return None;
        }
        if range.start == range.end {
            return Some(range);
        }
        // Spans are sorted, so binary searches find both ends.
        let end = self.alignments.partition_point(|a| a.1 <= range.end);
        if end == 0 {
            return None;
        }
        let first_inside = self.alignments[..end].partition_point(|a| a.0 < range.start);
        let start = (first_inside..end)
            .find(|&i| self.alignments[i].0 != self.alignments[i].1)
            .unwrap_or(end);
        Some(start..end)
    }

    /// Replaces the normalized bytes in `range` (on char boundaries) by the chars of `dest`.
    ///
    /// Each `(char, change)` says how the new char relates to the old chars of the range, read
    /// left to right (the `tokenizers` convention):
    /// - `0`: it replaces the next old char and takes its span;
    /// - `1` (any positive value): it is inserted and takes the span of the old char just before
    ///   the current position (`(0, 0)` at the very start of the string);
    /// - `-n`: it replaces the next old char, and the `n` old chars after that are removed.
    ///
    /// `initial_offset` old chars are removed before the first new char. Old chars left over at
    /// the end are removed. Runs in time linear in the length of the string.
    pub fn transform_range(
        &mut self,
        range: Range<usize>,
        dest: impl IntoIterator<Item = (char, isize)>,
        initial_offset: usize,
    ) {
        let range = self.clamp_to_chars(range);
        let (text, alignments) =
            rewrite(&self.normalized, &self.alignments, range.clone(), dest, initial_offset);
        self.install(range, text, alignments);
    }

    /// `transform_range` over the whole normalized text.
    pub fn transform(
        &mut self,
        dest: impl IntoIterator<Item = (char, isize)>,
        initial_offset: usize,
    ) {
        let (text, alignments) = rewrite(
            &self.normalized,
            &self.alignments,
            0..self.normalized.len(),
            dest,
            initial_offset,
        );
        self.normalized = text;
        self.alignments = alignments;
    }

    /// Clamps a byte range into the text and onto char boundaries (never panics).
    fn clamp_to_chars(&self, range: Range<usize>) -> Range<usize> {
        let floor = |mut i: usize| {
            i = i.min(self.normalized.len());
            while !self.normalized.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = floor(range.start);
        start..floor(range.end).max(start)
    }

    /// Puts a rewritten piece in place of `range`.
    fn install(&mut self, range: Range<usize>, text: String, alignments: Vec<Offsets>) {
        if range.start == 0 && range.end == self.normalized.len() {
            self.normalized = text;
            self.alignments = alignments;
        } else {
            self.normalized.replace_range(range.clone(), &text);
            self.alignments.splice(range, alignments);
        }
    }

    /// Rewrites each char into zero or more chars; each produced char takes the span of the
    /// char it comes from (what `tokenizers`' lowercase, filter, map do).
    ///
    /// Cheap in the common cases: nothing is allocated while every char maps to itself, and
    /// the alignments (16 bytes per byte) are only rebuilt once some char maps to something
    /// of a different byte length; until then only the text is rewritten.
    pub fn flat_map<I: IntoIterator<Item = char>>(
        &mut self,
        mut f: impl FnMut(char) -> I,
    ) -> &mut Self {
        let mut rewrite = Rewrite::Unchanged;
        for (i, c) in self.normalized.char_indices() {
            let mut produced = f(c).into_iter();
            let first = produced.next();
            let second = if first.is_some() { produced.next() } else { None };
            let same_shape =
                matches!((first, second), (Some(out), None) if out.len_utf8() == c.len_utf8());
            if same_shape && matches!(rewrite, Rewrite::Unchanged) && first == Some(c) {
                continue;
            }
            if same_shape {
                if let Rewrite::Unchanged = rewrite {
                    rewrite = Rewrite::SameShape(self.normalized[..i].to_string());
                }
            } else if let Rewrite::Unchanged | Rewrite::SameShape(_) = rewrite {
                // The first change of byte length: alignments up to here are still valid.
                let text = match std::mem::replace(&mut rewrite, Rewrite::Unchanged) {
                    Rewrite::SameShape(text) => text,
                    _ => self.normalized[..i].to_string(),
                };
                let mut alignments = Vec::with_capacity(self.alignments.len() + 16);
                alignments.extend_from_slice(&self.alignments[..i]);
                rewrite = Rewrite::Reshaped(text, alignments);
            }
            match &mut rewrite {
                Rewrite::SameShape(text) => text.extend(first),
                Rewrite::Reshaped(text, alignments) => {
                    let span = self.alignments[i];
                    for out in first.into_iter().chain(second).chain(produced) {
                        push_char(text, alignments, out, span);
                    }
                }
                Rewrite::Unchanged => {}
            }
        }
        match rewrite {
            Rewrite::Unchanged => {}
            Rewrite::SameShape(text) => self.normalized = text,
            Rewrite::Reshaped(text, alignments) => {
                self.normalized = text;
                self.alignments = alignments;
            }
        }
        self
    }

    /// Applies a char-to-char mapping.
    pub fn map(&mut self, mut f: impl FnMut(char) -> char) -> &mut Self {
        self.flat_map(|c| std::iter::once(f(c)))
    }

    /// Keeps only the chars for which `keep` is true.
    pub fn filter(&mut self, mut keep: impl FnMut(char) -> bool) -> &mut Self {
        self.flat_map(|c| keep(c).then_some(c))
    }

    pub fn lowercase(&mut self) -> &mut Self {
        if self.normalized.is_ascii() {
            // One byte stays one byte: alignments do not move.
            self.normalized.make_ascii_lowercase();
            return self;
        }
        self.flat_map(|c| c.to_lowercase())
    }

    pub fn uppercase(&mut self) -> &mut Self {
        if self.normalized.is_ascii() {
            self.normalized.make_ascii_uppercase();
            return self;
        }
        self.flat_map(|c| c.to_uppercase())
    }

    /// Unicode NFD (canonical decomposition).
    pub fn nfd(&mut self) -> &mut Self {
        unicode_form!(self, is_nfd_quick, nfd, composes: false)
    }
    /// Unicode NFKD (compatibility decomposition).
    pub fn nfkd(&mut self) -> &mut Self {
        unicode_form!(self, is_nfkd_quick, nfkd, composes: false)
    }
    /// Unicode NFC (canonical decomposition, then composition).
    pub fn nfc(&mut self) -> &mut Self {
        unicode_form!(self, is_nfc_quick, nfc, composes: true)
    }
    /// Unicode NFKC (compatibility decomposition, then canonical composition).
    pub fn nfkc(&mut self) -> &mut Self {
        unicode_form!(self, is_nfkc_quick, nfkc, composes: true)
    }

    /// Adds `s` in front. As in `tokenizers`, the new chars take the span of the first char,
    /// and nothing happens to an empty string.
    pub fn prepend(&mut self, s: &str) -> &mut Self {
        let Some(&span) = self.alignments.first() else { return self };
        if s.is_empty() {
            return self;
        }
        let mut alignments = Vec::with_capacity(s.len() + self.alignments.len());
        alignments.extend(std::iter::repeat_n(span, s.len()));
        alignments.extend_from_slice(&self.alignments);
        self.normalized.insert_str(0, s);
        self.alignments = alignments;
        self
    }

    /// Adds `s` at the end; the new chars take the span of the last char (`(0, 0)` if the
    /// string is empty, as in `tokenizers`).
    pub fn append(&mut self, s: &str) -> &mut Self {
        let span = self.alignments.last().copied().unwrap_or((0, 0));
        self.alignments.extend(std::iter::repeat_n(span, s.len()));
        self.normalized.push_str(s);
        self
    }

    /// Removes the whole normalized text; returns how many bytes were removed.
    pub fn clear(&mut self) -> usize {
        let len = self.normalized.len();
        self.normalized.clear();
        self.alignments.clear();
        len
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

    /// Removes leading and/or trailing whitespace (`char::is_whitespace`); kept chars keep their
    /// spans.
    pub fn strip_sides(&mut self, left: bool, right: bool) -> &mut Self {
        let text = &self.normalized;
        let start = if left { text.len() - text.trim_start().len() } else { 0 };
        let end = if right { text.trim_end().len() } else { text.len() };
        let end = end.max(start);
        if end < self.normalized.len() {
            self.normalized.truncate(end);
            self.alignments.truncate(end);
        }
        if start > 0 {
            self.normalized.drain(..start);
            self.alignments.drain(..start);
        }
        self
    }

    /// Replaces every match of `pattern` by `content`, in one pass. As in `tokenizers`, the
    /// chars of `content` all take the span of the last char of the match (for an empty match:
    /// of the char before it, or `(0, 0)` at the start).
    pub fn replace<P: Pattern>(&mut self, pattern: P, content: &str) -> Result<&mut Self> {
        let matches = pattern.find_matches(&self.normalized)?;
        if !matches.iter().any(|&(_, is_match)| is_match) {
            return Ok(self);
        }
        let mut text = String::with_capacity(self.normalized.len());
        let mut alignments = Vec::with_capacity(self.alignments.len());
        for ((start, end), is_match) in matches {
            if !is_match {
                text.push_str(&self.normalized[start..end]);
                alignments.extend_from_slice(&self.alignments[start..end]);
                continue;
            }
            let span = if end == 0 { (0, 0) } else { self.alignments[end - 1] };
            text.push_str(content);
            alignments.extend(std::iter::repeat_n(span, content.len()));
        }
        self.normalized = text;
        self.alignments = alignments;
        Ok(self)
    }

    /// A piece of this string, by normalized byte range. `None` if the range is not on char
    /// boundaries.
    pub fn slice(&self, range: Range<usize>) -> Option<NormalizedString> {
        if range.start > range.end
            || range.end > self.normalized.len()
            || !self.normalized.is_char_boundary(range.start)
            || !self.normalized.is_char_boundary(range.end)
        {
            return None;
        }
        let orig = self.convert_offsets_to_original(range.clone())?;
        let original = self.original.get(orig.clone())?.to_string();
        let alignments = self.alignments[range.clone()]
            .iter()
            .map(|&(s, e)| (s - orig.start, e - orig.start))
            .collect();
        Some(NormalizedString {
            original,
            normalized: self.normalized[range].to_string(),
            alignments,
            original_shift: self.original_shift + orig.start,
        })
    }

    /// Splits on `pattern`, handling the delimiters as `behavior` says. Empty pieces are dropped.
    pub fn split<P: Pattern>(
        &self,
        pattern: P,
        behavior: SplitDelimiterBehavior,
    ) -> Result<Vec<NormalizedString>> {
        let matches = pattern.find_matches(&self.normalized)?;
        let pieces = apply_split_behavior(matches, behavior);
        Ok(pieces
            .into_iter()
            .filter(|(s, e)| s < e)
            .filter_map(|(s, e)| self.slice(s..e))
            .collect())
    }
}

/// How far `flat_map` has had to go: nothing changed yet; only the text changed (every char so
/// far kept its byte length, so alignments are untouched); or text and alignments rebuilt.
enum Rewrite {
    Unchanged,
    SameShape(String),
    Reshaped(String, Vec<Offsets>),
}

/// The core of `transform_range`: builds the text and alignments that replace `range` of
/// `old_text` (see `transform_range` for the meaning of `dest`).
fn rewrite(
    old_text: &str,
    old_alignments: &[Offsets],
    range: Range<usize>,
    dest: impl IntoIterator<Item = (char, isize)>,
    initial_offset: usize,
) -> (String, Vec<Offsets>) {
    let mut text = String::with_capacity(range.len() + 16);
    let mut alignments = Vec::with_capacity(range.len() + 16);
    rewrite_into(old_text, old_alignments, range, dest, initial_offset, &mut text, &mut alignments);
    (text, alignments)
}

/// `rewrite`, appending to `text` / `alignments`. Never panics: a replacing char with no old
/// char left takes the span an inserted char would get.
fn rewrite_into(
    old_text: &str,
    old_alignments: &[Offsets],
    range: Range<usize>,
    dest: impl IntoIterator<Item = (char, isize)>,
    initial_offset: usize,
    text: &mut String,
    alignments: &mut Vec<Offsets>,
) {
    let mut old_chars = old_text[range.clone()].chars();
    // Byte position (in the old text) of the next old char to consume.
    let mut position = range.start;
    let mut consume = |n: usize, position: &mut usize| {
        for _ in 0..n {
            match old_chars.next() {
                Some(c) => *position += c.len_utf8(),
                None => break,
            }
        }
    };
    consume(initial_offset, &mut position);
    let span_before =
        |position: usize| if position == 0 { (0, 0) } else { old_alignments[position - 1] };
    for (c, change) in dest {
        let span = if change > 0 {
            span_before(position)
        } else {
            let span =
                old_alignments.get(position).copied().unwrap_or_else(|| span_before(position));
            consume(1 + change.unsigned_abs(), &mut position);
            span
        };
        push_char(text, alignments, c, span);
    }
}

/// Applies `form` (a Unicode normalization with alignment changes) to the whole text, but only
/// runs it on the stretches that contain non-ASCII chars; ASCII stretches are copied as they
/// are. This gives exactly the whole-text result because an ASCII char is a starter (canonical
/// combining class 0) that has no decomposition and is never the second char of a composition:
/// decomposition and reordering never cross it. Composition can join an ASCII char with the
/// marks after it (e + ◌́ → é), so for composing forms each stretch starts one char earlier.
fn rewrite_non_ascii_runs<'t, I: Iterator<Item = (char, isize)>>(
    old_text: &'t str,
    old_alignments: &[Offsets],
    composes: bool,
    form: impl Fn(&'t str) -> I,
) -> (String, Vec<Offsets>) {
    let bytes = old_text.as_bytes();
    let mut text = String::with_capacity(old_text.len() + 16);
    let mut alignments = Vec::with_capacity(old_alignments.len() + 16);
    let mut copied_to = 0;
    while let Some(found) = bytes[copied_to..].iter().position(|b| !b.is_ascii()) {
        let non_ascii = copied_to + found;
        let start = if composes && non_ascii > copied_to { non_ascii - 1 } else { non_ascii };
        let end = bytes[non_ascii..]
            .iter()
            .position(|b| b.is_ascii())
            .map_or(bytes.len(), |k| non_ascii + k);
        text.push_str(&old_text[copied_to..start]);
        alignments.extend_from_slice(&old_alignments[copied_to..start]);
        rewrite_into(
            old_text,
            old_alignments,
            start..end,
            form(&old_text[start..end]),
            0,
            &mut text,
            &mut alignments,
        );
        copied_to = end;
    }
    text.push_str(&old_text[copied_to..]);
    alignments.extend_from_slice(&old_alignments[copied_to..]);
    (text, alignments)
}

/// Turns a covering list of `(span, is_match)` into the spans to keep for `behavior`.
pub fn apply_split_behavior(
    matches: Vec<(Offsets, bool)>,
    behavior: SplitDelimiterBehavior,
) -> Vec<Offsets> {
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
    /// A covering, ordered list of `(span, is_match)` over `inside`: every byte is in exactly one
    /// span.
    fn find_matches(&self, inside: &str) -> Result<Vec<(Offsets, bool)>>;
}

/// Turns match spans into the covering list `Pattern::find_matches` returns.
pub fn cover_with_gaps(
    spans: impl IntoIterator<Item = Offsets>,
    len: usize,
) -> Vec<(Offsets, bool)> {
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
        let spans =
            inside.char_indices().filter(|(_, c)| self(*c)).map(|(i, c)| (i, i + c.len_utf8()));
        Ok(cover_with_gaps(spans, inside.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per normalized char: its span in the original (what `tokenizers` reports per char).
    fn char_spans(n: &NormalizedString) -> Vec<(char, Offsets)> {
        n.get().char_indices().map(|(i, c)| (c, n.alignments()[i])).collect()
    }

    #[test]
    fn offsets_convert_to_and_from_the_original() {
        // lowercase keeps the alignment: the combining dot comes from İ (original bytes 1..3)
        let mut n = NormalizedString::from("AİB");
        n.lowercase();
        assert_eq!(n.get(), "ai\u{307}b");
        assert_eq!(n.convert_offsets_to_original(1..4), Some(1..3));
        assert_eq!(n.convert_offsets_to_original(4..5), Some(3..4));
        let mut n = NormalizedString::from("ﬁx");
        n.nfkd();
        assert_eq!(n.get(), "fix");
        assert_eq!(n.convert_offsets_from_original(0..3), Some(0..2));
        assert_eq!(n.convert_offsets_from_original(3..4), Some(2..3));
    }

    #[test]
    fn flat_map_matches_a_plain_rebuild() {
        // Same-shape changes (text only), then a length change (alignments rebuilt), drops, growth.
        let rule = |c: char| -> Vec<char> {
            match c {
                'İ' => vec!['i', '\u{307}'],
                'x' => vec![],
                'w' => vec!['v', 'v'],
                _ => c.to_lowercase().collect(),
            }
        };
        for text in ["", "abc", "ABC", "ABCİxyzW", "İ", "xxA", "ЖжЖ wİx", "a\u{0}b"] {
            let mut n = NormalizedString::from(text);
            n.flat_map(rule);
            let mut expected_text = String::new();
            let mut expected_alignments = Vec::new();
            for (i, c) in text.char_indices() {
                for out in rule(c) {
                    push_char(
                        &mut expected_text,
                        &mut expected_alignments,
                        out,
                        (i, i + c.len_utf8()),
                    );
                }
            }
            assert_eq!(n.get(), expected_text, "{text:?}");
            assert_eq!(n.alignments(), &expected_alignments[..], "{text:?}");
        }
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
        let get =
            |b| n.split('-', b).unwrap().iter().map(|p| p.get().to_string()).collect::<Vec<_>>();
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

    #[test]
    fn replace_gives_content_the_span_of_the_match_end() {
        // Same as tokenizers: "bc" -> "XYZ" all align to "c"; empty matches to the char before.
        let mut n = NormalizedString::from("abcd");
        n.replace("bc", "XYZ").unwrap();
        assert_eq!(n.get(), "aXYZd");
        assert_eq!(
            char_spans(&n),
            vec![('a', (0, 1)), ('X', (2, 3)), ('Y', (2, 3)), ('Z', (2, 3)), ('d', (3, 4))]
        );
        let mut n = NormalizedString::from("abc");
        n.replace(&Regex::new("x*").unwrap(), "-").unwrap();
        assert_eq!(n.get(), "-a-b-c-");
        assert_eq!(n.alignments()[0], (0, 0));
        assert_eq!(n.alignments()[6], (2, 3));
        let mut n = NormalizedString::from("abc");
        n.replace('b', "").unwrap();
        assert_eq!(char_spans(&n), vec![('a', (0, 1)), ('c', (2, 3))]);
    }

    #[test]
    fn transform_follows_the_tokenizers_convention() {
        // Chinese-char handling: " 中 " where all three take the span of 中.
        let mut n = NormalizedString::from("a中b");
        n.transform(vec![('a', 0), (' ', 0), ('中', 1), (' ', 1), ('b', 0)], 0);
        assert_eq!(n.get(), "a 中 b");
        assert_eq!(
            char_spans(&n),
            vec![('a', (0, 1)), (' ', (1, 4)), ('中', (1, 4)), (' ', (1, 4)), ('b', (4, 5))]
        );
        // Removal via a negative change and via initial_offset: removed chars vanish.
        let mut n = NormalizedString::from("xxabyyc");
        n.transform(vec![('a', 0), ('b', -2), ('c', 0)], 2);
        assert_eq!(char_spans(&n), vec![('a', (2, 3)), ('b', (3, 4)), ('c', (6, 7))]);
        // An insertion at the very start takes (0, 0).
        let mut n = NormalizedString::from("ab");
        n.transform(vec![('^', 1), ('a', 0), ('b', 0)], 0);
        assert_eq!(n.alignments()[0], (0, 0));
        // Too many replacing chars: no panic, the extra ones act as insertions.
        let mut n = NormalizedString::from("ab");
        n.transform(vec![('a', 0), ('b', 0), ('c', 0)], 0);
        assert_eq!(char_spans(&n), vec![('a', (0, 1)), ('b', (1, 2)), ('c', (1, 2))]);
    }

    #[test]
    fn transform_range_edits_only_the_range() {
        let mut n = NormalizedString::from("hello world");
        n.transform_range(
            6..11,
            "WORLD!".chars().enumerate().map(|(i, c)| (c, if i < 5 { 0 } else { 1 })),
            0,
        );
        assert_eq!(n.get(), "hello WORLD!");
        assert_eq!(n.alignments()[11], (10, 11));
        assert_eq!(n.alignments()[..6], NormalizedString::from("hello ").alignments()[..]);
    }

    #[test]
    fn unicode_forms_keep_alignment() {
        let mut n = NormalizedString::from("ﬁ½é");
        n.nfkc();
        assert_eq!(n.get(), "fi1\u{2044}2é");
        let spans: Vec<Offsets> = char_spans(&n).into_iter().map(|(_, s)| s).collect();
        assert_eq!(spans, vec![(0, 3), (0, 3), (3, 5), (3, 5), (3, 5), (5, 7)]);
        let mut n = NormalizedString::from("e\u{301}");
        n.nfc();
        assert_eq!(n.get(), "é");
        assert_eq!(n.convert_offsets_to_original(0..2), Some(0..1));
        let mut n = NormalizedString::from("\u{301}a");
        n.nfd();
        assert_eq!(n.get(), "\u{301}a");
    }

    #[test]
    fn unicode_forms_by_stretches_equal_the_whole_text_run() {
        let texts = [
            "e\u{301}x a\u{323}\u{300}b ﬁ½ Ａ\u{301}",
            "\u{301}start é\u{301}e\u{301}\u{302} \u{1112}\u{1161}\u{11ab}x\u{1100}\u{1161}",
            "ascii only then 한국 and ǅ\u{327}\u{301}q",
        ];
        for text in texts {
            for form in 0..4 {
                let mut n = NormalizedString::from(text);
                let whole = NormalizedString::from(text);
                let (expected_text, expected_alignments) = match form {
                    0 => (n.nfd(), rewrite(text, whole.alignments(), 0..text.len(), text.nfd(), 0)),
                    1 => {
                        (n.nfkd(), rewrite(text, whole.alignments(), 0..text.len(), text.nfkd(), 0))
                    }
                    2 => (n.nfc(), rewrite(text, whole.alignments(), 0..text.len(), text.nfc(), 0)),
                    _ => {
                        (n.nfkc(), rewrite(text, whole.alignments(), 0..text.len(), text.nfkc(), 0))
                    }
                }
                .1;
                assert_eq!(n.get(), expected_text, "form {form} of {text:?}");
                assert_eq!(n.alignments(), &expected_alignments[..], "form {form} of {text:?}");
            }
        }
    }

    #[test]
    fn strip_and_append() {
        let mut n = NormalizedString::from("  ab  ");
        n.strip();
        assert_eq!(n.get(), "ab");
        assert_eq!(n.offsets_original(), (0, 6));
        assert_eq!(n.convert_offsets_to_original(0..2), Some(2..4));
        n.append("!");
        assert_eq!(n.alignments()[2], (3, 4));
        let mut empty = NormalizedString::from("");
        empty.prepend("x");
        assert_eq!(empty.get(), "");
        empty.append("y");
        assert_eq!(empty.alignments(), &[(0, 0)]);
    }

    #[test]
    fn slice_shifts_into_the_input() {
        let mut n = NormalizedString::from("Été là");
        n.lowercase();
        let s = n.slice(6..9).unwrap();
        assert_eq!(s.get(), "là");
        assert_eq!(s.get_original(), "là");
        assert_eq!(s.offsets_original(), (6, 9));
        assert_eq!(s.convert_offsets_to_input(1..3), Some((7, 9)));
        assert!(n.slice(1..2).is_none());
    }

    #[test]
    fn long_inputs_are_linear() {
        // 10 MB with a match every 2 bytes: a quadratic replace or transform would not finish.
        let text = "a b ".repeat(2_500_000);
        let mut n = NormalizedString::from(text.as_str());
        n.replace(' ', "▁").unwrap();
        assert_eq!(n.len(), text.len() + 2 * 2_500_000 * 2);
        n.filter(|c| c != 'b');
        n.lowercase();
        n.nfd();
        n.transform(n.get().to_string().chars().map(|c| (c, 0)).collect::<Vec<_>>(), 0);
        let last = n.len();
        assert_eq!(n.convert_offsets_to_original(last - 3..last), Some(text.len() - 1..text.len()));
        let mut accents = NormalizedString::from("é".repeat(1_000_000).as_str());
        accents.nfd().filter(|c| c == 'e');
        assert_eq!(accents.len(), 1_000_000);
    }
}
