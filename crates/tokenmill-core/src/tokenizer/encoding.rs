//! `Encoding`: the output of the pipeline for one input (or one pair of inputs). Every token
//! carries its id, text, span in the original input, word index, type id and masks, so that
//! any token can be traced back to the text it came from.
//!
//! The operations (merge, truncate, pad, the `*_to_*` lookups) follow `tokenizers`' `Encoding`
//! exactly, including its corner cases, so that encodings built here are interchangeable.
use std::collections::HashMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::normalized::Offsets;
use crate::tokenizer::Token;
use crate::utils::tokens_by_id::TokensById;

/// Which end of an encoding truncation cuts from (serialized `"Left"` / `"Right"` like
/// `tokenizers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TruncationDirection {
    Left,
    #[default]
    Right,
}

/// Which end of an encoding padding is added to (serialized `"Left"` / `"Right"` like
/// `tokenizers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PaddingDirection {
    Left,
    #[default]
    Right,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Encoding {
    pub ids: Vec<u32>,
    pub type_ids: Vec<u32>,
    pub tokens: Vec<String>,
    pub words: Vec<Option<u32>>,
    pub offsets: Vec<Offsets>,
    pub special_tokens_mask: Vec<u32>,
    pub attention_mask: Vec<u32>,
    /// Windows cut off by truncation, each a full `Encoding`.
    pub overflowing: Vec<Encoding>,
    /// Sequence index → token range of that sequence (empty when there is a single sequence).
    pub sequence_ranges: HashMap<usize, Range<usize>>,
}

impl Encoding {
    pub fn with_capacity(n: usize) -> Self {
        Encoding {
            ids: Vec::with_capacity(n),
            type_ids: Vec::with_capacity(n),
            tokens: Vec::with_capacity(n),
            words: Vec::with_capacity(n),
            offsets: Vec::with_capacity(n),
            special_tokens_mask: Vec::with_capacity(n),
            attention_mask: Vec::with_capacity(n),
            overflowing: Vec::new(),
            sequence_ranges: HashMap::new(),
        }
    }

    /// An encoding of model tokens: no words, every type id `type_id`, no special tokens.
    pub fn from_tokens(tokens: Vec<Token>, type_id: u32) -> Self {
        let mut encoding = Encoding::with_capacity(tokens.len());
        for t in tokens {
            encoding.push(t.id, t.value, t.offsets, None, type_id, false);
        }
        encoding
    }

    /// Fills the token texts a deferred encode left empty (see
    /// `EncodePlan::deferred_texts`) from `table`, here and in the overflowing windows.
    pub fn fill_deferred_tokens(&mut self, table: &TokensById) {
        for ((token, &id), &special) in
            self.tokens.iter_mut().zip(&self.ids).zip(&self.special_tokens_mask)
        {
            if let Some(text) = deferred_text(token, id, special, table) {
                *token = text.to_owned();
            }
        }
        self.overflowing.iter_mut().for_each(|o| o.fill_deferred_tokens(table));
    }

    /// The token texts with the deferred ones taken from `table` (see `fill_deferred_tokens`).
    pub fn tokens_filled(&self, table: &TokensById) -> Vec<String> {
        let texts = self.tokens.iter().zip(&self.ids).zip(&self.special_tokens_mask);
        texts
            .map(|((token, &id), &special)| {
                deferred_text(token, id, special, table)
                    .map_or_else(|| token.clone(), str::to_owned)
            })
            .collect()
    }

    /// An encoding made only of special tokens (offsets `(0, 0)`, no words, masked as special).
    pub fn from_special_tokens(ids: &[u32], tokens: &[String], type_id: u32) -> Self {
        let mut encoding = Encoding::with_capacity(ids.len());
        for (id, token) in ids.iter().zip(tokens) {
            encoding.push(*id, token.clone(), (0, 0), None, type_id, true);
        }
        encoding
    }

    /// Appends one token.
    pub fn push(
        &mut self,
        id: u32,
        token: String,
        offsets: Offsets,
        word: Option<u32>,
        type_id: u32,
        special: bool,
    ) {
        self.ids.push(id);
        self.tokens.push(token);
        self.offsets.push(offsets);
        self.words.push(word);
        self.type_ids.push(type_id);
        self.special_tokens_mask.push(special as u32);
        self.attention_mask.push(1);
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Number of sequences this encoding holds (1 unless it was built from a pair).
    pub fn n_sequences(&self) -> usize {
        n_sequences_of(&self.sequence_ranges)
    }

    /// Marks every token as belonging to sequence `id`.
    pub fn set_sequence_id(&mut self, id: usize) {
        self.sequence_ranges.insert(id, 0..self.len());
    }

    /// The token range of sequence `sequence_id`; the whole encoding when that sequence has no
    /// recorded range (as in `tokenizers`).
    pub fn sequence_range(&self, sequence_id: usize) -> Range<usize> {
        sequence_range_of(&self.sequence_ranges, sequence_id, self.len())
    }

    /// Sequence index of every token (`None` for tokens outside any sequence, e.g. added specials).
    /// Like `tokenizers`, sequences `0..n_sequences()` are painted in order, a sequence without a
    /// recorded range covering the whole encoding.
    pub fn sequence_ids(&self) -> Vec<Option<usize>> {
        sequence_ids_of(&self.sequence_ranges, self.len())
    }

    pub fn set_type_ids(&mut self, type_id: u32) {
        self.type_ids.iter_mut().for_each(|t| *t = type_id);
    }

    /// This encoding and all its overflowing windows, nested ones included.
    pub fn n_encodings(&self) -> usize {
        1 + self.overflowing.iter().map(Encoding::n_encodings).sum::<usize>()
    }

    /// Checks that the encoding is one the operations can work on (for one read from a pickled
    /// state): every per-token column as long as `ids`, offsets `(start, end)` with
    /// `start <= end`, sequence ranges inside the tokens, and the same of each overflowing
    /// window. The error names the field (and the window: `overflowing[1]: ...`).
    pub fn validate(&self) -> Result<()> {
        let len = self.len();
        let columns = [
            ("type_ids", self.type_ids.len()),
            ("tokens", self.tokens.len()),
            ("words", self.words.len()),
            ("offsets", self.offsets.len()),
            ("special_tokens_mask", self.special_tokens_mask.len()),
            ("attention_mask", self.attention_mask.len()),
        ];
        for (name, n) in columns {
            if n != len {
                return Err(Error::InvalidArgument(format!(
                    "'{name}' has {n} entries, 'ids' has {len}: every per-token field must have \
                     one entry per token"
                )));
            }
        }
        if let Some((i, (start, end))) = self.offsets.iter().enumerate().find(|(_, o)| o.0 > o.1) {
            return Err(Error::InvalidArgument(format!(
                "'offsets'[{i}] is ({start}, {end}): a start after its end"
            )));
        }
        let mut ranges: Vec<_> = self.sequence_ranges.iter().collect();
        ranges.sort_by_key(|(sequence, _)| **sequence);
        if let Some((sequence, range)) = ranges.iter().find(|(_, r)| r.start > r.end || r.end > len)
        {
            return Err(Error::InvalidArgument(format!(
                "'sequence_ranges' of sequence {sequence} is {}..{}, not a range of the {len} \
                 tokens",
                range.start, range.end
            )));
        }
        for (i, window) in self.overflowing.iter().enumerate() {
            window
                .validate()
                .map_err(|e| Error::InvalidArgument(format!("overflowing[{i}]: {e}")))?;
        }
        Ok(())
    }

    /// Takes the overflowing windows out, leaving none.
    pub fn take_overflowing(&mut self) -> Vec<Encoding> {
        std::mem::take(&mut self.overflowing)
    }

    /// Index of the sequence holding `token`. With no recorded ranges every index up to and
    /// including `len()` answers 0 (the `tokenizers` behaviour); past that, `None`.
    pub fn token_to_sequence(&self, token: usize) -> Option<usize> {
        if token > self.len() {
            None
        } else if self.sequence_ranges.is_empty() {
            Some(0)
        } else {
            // Ranges can overlap once `set_sequence_id` is called on a joined encoding; the lowest
            // sequence id wins then (`tokenizers` answers in hash-map order, i.e. at random).
            self.sequence_ranges.iter().filter(|(_, r)| r.contains(&token)).map(|(s, _)| *s).min()
        }
    }

    /// `(sequence, offsets)` of the token at `token`.
    pub fn token_to_chars(&self, token: usize) -> Option<(usize, Offsets)> {
        Some((self.token_to_sequence(token)?, *self.offsets.get(token)?))
    }

    /// `(sequence, word)` of the token at `token`, if it belongs to a word.
    pub fn token_to_word(&self, token: usize) -> Option<(usize, u32)> {
        Some((self.token_to_sequence(token)?, (*self.words.get(token)?)?))
    }

    /// The tokens `[start, end)` of word `word` in sequence `sequence_id`. Like `tokenizers`, the
    /// scan stops at the first token of a later word (words are ordered within a sequence).
    pub fn word_to_tokens(&self, word: u32, sequence_id: usize) -> Option<(usize, usize)> {
        let range = self.sequence_range(sequence_id);
        let words = self.words.get(range.clone())?;
        let mut found: Option<(usize, usize)> = None;
        for (i, w) in words.iter().enumerate() {
            // `None < Some(_)`: tokens without a word never stop the scan.
            if *w > Some(word) {
                break;
            }
            if *w == Some(word) {
                found = Some(match found {
                    None => (i, i + 1),
                    Some((start, _)) => (start, i + 1),
                });
            }
        }
        found.map(|(s, e)| (range.start + s, range.start + e))
    }

    /// Offsets spanning word `word` of sequence `sequence_id`.
    pub fn word_to_chars(&self, word: u32, sequence_id: usize) -> Option<Offsets> {
        let (start, end) = self.word_to_tokens(word, sequence_id)?;
        if end == 0 {
            return None;
        }
        Some((self.offsets.get(start)?.0, self.offsets.get(end - 1)?.1))
    }

    /// The first token of sequence `sequence_id` whose offsets contain `pos`.
    pub fn char_to_token(&self, pos: usize, sequence_id: usize) -> Option<usize> {
        let range = self.sequence_range(sequence_id);
        let offsets = self.offsets.get(range.clone())?;
        offsets.iter().position(|&(s, e)| pos >= s && pos < e).map(|i| range.start + i)
    }

    /// The word of sequence `sequence_id` that contains `pos`.
    pub fn char_to_word(&self, pos: usize, sequence_id: usize) -> Option<u32> {
        let token = self.char_to_token(pos, sequence_id)?;
        self.token_to_word(token).map(|(_, w)| w)
    }

    /// The tokens `range` as a new encoding without overflowing windows or sequence ranges.
    fn window(&self, range: Range<usize>) -> Encoding {
        Encoding {
            ids: self.ids[range.clone()].to_vec(),
            type_ids: self.type_ids[range.clone()].to_vec(),
            tokens: self.tokens[range.clone()].to_vec(),
            words: self.words[range.clone()].to_vec(),
            offsets: self.offsets[range.clone()].to_vec(),
            special_tokens_mask: self.special_tokens_mask[range.clone()].to_vec(),
            attention_mask: self.attention_mask[range].to_vec(),
            overflowing: Vec::new(),
            sequence_ranges: HashMap::new(),
        }
    }

    /// Cuts the encoding to `max_len` tokens; what is cut off becomes `overflowing` windows of
    /// `max_len` tokens, consecutive windows sharing `stride` tokens (as `tokenizers` does).
    /// `max_len == 0` moves everything into one overflowing window. The sequence ranges are lost.
    /// Errors when `stride >= max_len` (windows would not advance).
    pub fn truncate(
        &mut self,
        max_len: usize,
        stride: usize,
        direction: TruncationDirection,
    ) -> Result<()> {
        let len = self.len();
        if max_len >= len {
            return Ok(());
        }
        if max_len == 0 {
            let all = std::mem::take(self);
            self.overflowing.push(all);
            return Ok(());
        }
        if stride >= max_len {
            return Err(Error::InvalidArgument(format!(
                "truncation stride ({stride}) must be strictly less than max_length ({max_len}); \
                 note that max_length excludes the special tokens the post-processor adds"
            )));
        }
        self.sequence_ranges.clear();
        let windows = window_ranges(len, max_len, max_len - stride, direction);
        let mut windows = windows.into_iter();
        let Some(first) = windows.next() else { return Ok(()) };
        let overflowing = windows.map(|r| self.window(r)).collect();
        // Cut in place when most tokens stay (no copy: a batch of documents a little over the
        // limit); copied into an exactly-sized encoding otherwise, so that a long text cut
        // short does not keep the capacity of all its tokens.
        if 2 * first.len() >= len {
            self.keep(first);
        } else {
            *self = self.window(first);
        }
        self.overflowing = overflowing;
        Ok(())
    }

    /// Keeps only the tokens `range`, in place.
    fn keep(&mut self, range: Range<usize>) {
        fn keep<T>(values: &mut Vec<T>, range: &Range<usize>) {
            values.truncate(range.end);
            values.drain(..range.start);
        }
        keep(&mut self.ids, &range);
        keep(&mut self.type_ids, &range);
        keep(&mut self.tokens, &range);
        keep(&mut self.words, &range);
        keep(&mut self.offsets, &range);
        keep(&mut self.special_tokens_mask, &range);
        keep(&mut self.attention_mask, &range);
    }

    /// Pads up to `target_length` tokens (this encoding and each overflowing window); never cuts.
    /// Pad tokens have no word, offsets `(0, 0)`, attention 0 and are marked special.
    pub fn pad(
        &mut self,
        target_length: usize,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        direction: PaddingDirection,
    ) {
        for o in &mut self.overflowing {
            o.pad(target_length, pad_id, pad_type_id, pad_token, direction);
        }
        if self.len() >= target_length {
            return;
        }
        let n = target_length - self.len();
        match direction {
            PaddingDirection::Right => {
                self.ids.extend(std::iter::repeat_n(pad_id, n));
                self.type_ids.extend(std::iter::repeat_n(pad_type_id, n));
                self.tokens.extend(std::iter::repeat_n(pad_token.to_string(), n));
                self.words.extend(std::iter::repeat_n(None, n));
                self.attention_mask.extend(std::iter::repeat_n(0, n));
                self.special_tokens_mask.extend(std::iter::repeat_n(1, n));
                self.offsets.extend(std::iter::repeat_n((0, 0), n));
            }
            PaddingDirection::Left => {
                prepend_n(&mut self.ids, pad_id, n);
                prepend_n(&mut self.type_ids, pad_type_id, n);
                prepend_n(&mut self.tokens, pad_token.to_string(), n);
                prepend_n(&mut self.words, None, n);
                prepend_n(&mut self.attention_mask, 0, n);
                prepend_n(&mut self.special_tokens_mask, 1, n);
                prepend_n(&mut self.offsets, (0, 0), n);
                for range in self.sequence_ranges.values_mut() {
                    *range = range.start + n..range.end + n;
                }
            }
        }
    }

    /// Appends `other` after `self`. With `growing_offsets`, `other`'s offsets are shifted to
    /// continue after the end of `self`'s last offset (used when several inputs are concatenated).
    ///
    /// Overflowing windows combine as in `tokenizers`: each of ours followed by `other` and by
    /// each of `other`'s windows, then `self` followed by each of `other`'s windows.
    pub fn merge_with(&mut self, other: Encoding, growing_offsets: bool) {
        let mut overflowings = Vec::new();
        for mine in &self.overflowing {
            let mut joined = mine.clone();
            joined.merge_with(other.clone(), growing_offsets);
            overflowings.push(joined);
            for theirs in &other.overflowing {
                let mut joined = mine.clone();
                joined.merge_with(theirs.clone(), growing_offsets);
                overflowings.push(joined);
            }
        }
        for theirs in &other.overflowing {
            let mut joined = self.clone();
            joined.merge_with(theirs.clone(), growing_offsets);
            overflowings.push(joined);
        }

        let shift = if growing_offsets { self.offsets.last().map_or(0, |o| o.1) } else { 0 };
        let base = self.len();
        for (seq, range) in other.sequence_ranges {
            self.sequence_ranges.insert(seq, base + range.start..base + range.end);
        }
        self.ids.extend(other.ids);
        self.type_ids.extend(other.type_ids);
        self.tokens.extend(other.tokens);
        self.words.extend(other.words);
        // Saturating: offsets read from a pickled state may be anything (never past usize::MAX).
        let shifted = other.offsets.into_iter();
        self.offsets
            .extend(shifted.map(|(s, e)| (s.saturating_add(shift), e.saturating_add(shift))));
        self.special_tokens_mask.extend(other.special_tokens_mask);
        self.attention_mask.extend(other.attention_mask);
        self.overflowing = overflowings;
    }

    /// Checks that [`Encoding::merge`] of `encodings` can be held before it is made: its
    /// overflowing windows multiply (each window of one with each of the next), so a few
    /// encodings with windows can ask for more than any memory. An error then, where the merge
    /// would abort the process.
    pub fn check_merge(encodings: &[Encoding]) -> Result<()> {
        /// Encodings (windows included) worked out before giving up: a merge of more is
        /// refused whatever their sizes.
        const BUDGET: usize = 1 << 22;
        let mut budget = BUDGET;
        let mut acc = Some(Shape { len: 0, windows: Vec::new() });
        for e in encodings {
            acc = acc.and_then(|a| a.merged(&Shape::of(e), &mut budget));
        }
        let tokens = acc.as_ref().map(Shape::tokens);
        let text = encodings.iter().flat_map(|e| &e.tokens).map(String::len).max().unwrap_or(0);
        if tokens.is_some_and(|t| crate::utils::padding::tokens_fit(t, text)) {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "merging these {} encodings would make more overflowing windows than memory can \
             hold (each window of an encoding is joined with each window of the next)",
            encodings.len()
        )))
    }

    /// Concatenates encodings in order.
    pub fn merge(encodings: impl IntoIterator<Item = Encoding>, growing_offsets: bool) -> Encoding {
        let mut out = Encoding::default();
        for e in encodings {
            out.merge_with(e, growing_offsets);
        }
        out
    }
}

/// The number of tokens of an encoding and the shapes of its windows: what
/// [`Encoding::check_merge`] works out a merge's size on.
struct Shape {
    len: usize,
    windows: Vec<Shape>,
}

impl Shape {
    fn of(e: &Encoding) -> Shape {
        Shape { len: e.len(), windows: e.overflowing.iter().map(Shape::of).collect() }
    }

    /// The shape of `merge_with` of encodings of these shapes (the same windows, in the same
    /// way); None once more than `budget` shapes were made.
    fn merged(&self, other: &Shape, budget: &mut usize) -> Option<Shape> {
        *budget = budget.checked_sub(1)?;
        let mut windows = Vec::new();
        for mine in &self.windows {
            windows.push(mine.merged(other, budget)?);
            for theirs in &other.windows {
                windows.push(mine.merged(theirs, budget)?);
            }
        }
        for theirs in &other.windows {
            windows.push(self.merged(theirs, budget)?);
        }
        Some(Shape { len: self.len.saturating_add(other.len), windows })
    }

    fn tokens(&self) -> usize {
        self.windows.iter().fold(self.len, |sum, w| sum.saturating_add(w.tokens()))
    }
}

/// `Encoding::n_sequences` of an encoding with these sequence ranges (shared with
/// `PackedEncoding`).
pub(crate) fn n_sequences_of(ranges: &HashMap<usize, Range<usize>>) -> usize {
    ranges.len().max(1)
}

/// `Encoding::sequence_range` of an encoding of `len` tokens with these sequence ranges.
fn sequence_range_of(
    ranges: &HashMap<usize, Range<usize>>,
    sequence_id: usize,
    len: usize,
) -> Range<usize> {
    ranges.get(&sequence_id).cloned().unwrap_or(0..len)
}

/// `Encoding::sequence_ids` of an encoding of `len` tokens with these sequence ranges.
pub(crate) fn sequence_ids_of(
    ranges: &HashMap<usize, Range<usize>>,
    len: usize,
) -> Vec<Option<usize>> {
    let mut out = vec![None; len];
    for seq in 0..n_sequences_of(ranges) {
        let range = sequence_range_of(ranges, seq, len);
        for s in &mut out[range.start.min(len)..range.end.min(len)] {
            *s = Some(seq);
        }
    }
    out
}

fn prepend_n<T: Clone>(v: &mut Vec<T>, value: T, n: usize) {
    v.splice(0..0, std::iter::repeat_n(value, n));
}

/// The token windows truncation keeps, first the one that stays in the encoding. Windows hold
/// `max_len` tokens and start `step` apart; `Right` walks from the start and stops at the window
/// reaching the end, `Left` walks back from the end and stops at the window reaching the start.
fn window_ranges(
    len: usize,
    max_len: usize,
    step: usize,
    direction: TruncationDirection,
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    match direction {
        TruncationDirection::Right => {
            let mut start = 0;
            while start < len {
                let stop = (start + max_len).min(len);
                out.push(start..stop);
                if stop == len {
                    break;
                }
                start += step;
            }
        }
        TruncationDirection::Left => {
            // `tokenizers` steps over `(0..len).rev()`: window ends len, len-step, ... down to 1.
            let mut stop = len;
            while stop > 0 {
                let start = stop.saturating_sub(max_len);
                out.push(start..stop);
                if start == 0 {
                    break;
                }
                if stop <= step {
                    break;
                }
                stop -= step;
            }
        }
    }
    out
}

/// The text of a token whose text was deferred: a deferred token is a model token (never
/// marked special, unlike the post-processor's and padding's tokens) whose text was left empty.
/// None when the token has its text (a vocabulary whose token is "" reads the same either way).
pub(crate) fn deferred_text<'t>(
    token: &str,
    id: u32,
    special: u32,
    table: &'t TokensById,
) -> Option<&'t str> {
    (token.is_empty() && special == 0).then(|| table.get(id).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(tokens: &[&str]) -> Encoding {
        let mut e = Encoding::default();
        let mut pos = 0;
        for (i, t) in tokens.iter().enumerate() {
            e.push(i as u32 + 1, t.to_string(), (pos, pos + t.len()), Some(i as u32), 0, false);
            pos += t.len() + 1;
        }
        e
    }

    fn ids(e: &Encoding) -> Vec<u32> {
        e.ids.clone()
    }

    #[test]
    fn merge_with_growing_offsets() {
        let mut a = enc(&["Hello"]);
        let b = enc(&["World!"]);
        a.merge_with(b, true);
        assert_eq!(a.offsets, vec![(0, 5), (5, 11)]);
        assert_eq!(a.tokens, vec!["Hello", "World!"]);
    }

    #[test]
    fn truncate_right_without_stride() {
        let mut a = enc(&["Hello", "World", "!"]);
        a.truncate(2, 0, TruncationDirection::Right).unwrap();
        assert_eq!(ids(&a), vec![1, 2]);
        assert_eq!(a.overflowing.len(), 1);
        assert_eq!(ids(&a.overflowing[0]), vec![3]);
        assert_eq!(a.overflowing[0].offsets, vec![(12, 13)]);
    }

    #[test]
    fn truncate_to_empty_moves_everything() {
        let mut a = enc(&["a", "b", "c"]);
        let original = a.clone();
        a.truncate(0, 0, TruncationDirection::Right).unwrap();
        assert!(a.is_empty());
        assert_eq!(a.overflowing, vec![original]);
    }

    #[test]
    fn truncate_with_stride_both_directions() {
        // Same expectations as tokenizers' `truncate_overflow_with_stride` / left variant.
        let mut a = enc(&["42", "is", "the", "answer", "!"]);
        a.truncate(4, 2, TruncationDirection::Right).unwrap();
        assert_eq!(ids(&a), vec![1, 2, 3, 4]);
        let over: Vec<_> = a.overflowing.iter().map(ids).collect();
        assert_eq!(over, vec![vec![3, 4, 5]]);

        let mut b = enc(&["42", "is", "the", "answer", "!"]);
        b.truncate(4, 2, TruncationDirection::Left).unwrap();
        assert_eq!(ids(&b), vec![2, 3, 4, 5]);
        let over: Vec<_> = b.overflowing.iter().map(ids).collect();
        assert_eq!(over, vec![vec![1, 2, 3]]);

        let mut c = enc(&["a", "b", "c", "d", "e", "f", "g"]);
        c.truncate(3, 1, TruncationDirection::Left).unwrap();
        assert_eq!(ids(&c), vec![5, 6, 7]);
        let over: Vec<_> = c.overflowing.iter().map(ids).collect();
        assert_eq!(over, vec![vec![3, 4, 5], vec![1, 2, 3]]);
    }

    #[test]
    fn truncate_in_place_or_by_copy_keeps_the_same_tokens() {
        let tokens = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
        // 6 of 10 kept: cut in place; 3 of 10: copied.
        for max_len in [6, 3] {
            for direction in [TruncationDirection::Right, TruncationDirection::Left] {
                let full = enc(&tokens);
                let mut cut = full.clone();
                cut.sequence_ranges.insert(0, 0..10);
                cut.truncate(max_len, 1, direction).unwrap();
                let kept = window_ranges(10, max_len, max_len - 1, direction)[0].clone();
                assert_eq!(
                    Encoding { overflowing: Vec::new(), ..cut.clone() },
                    full.window(kept),
                    "{max_len} {direction:?}"
                );
                assert!(cut.sequence_ranges.is_empty());
                assert_eq!(
                    cut.overflowing.len(),
                    window_ranges(10, max_len, max_len - 1, direction).len() - 1
                );
            }
        }
    }

    #[test]
    fn truncate_rejects_stride_not_below_max_len() {
        let mut a = enc(&["a", "b", "c"]);
        assert!(a.truncate(2, 2, TruncationDirection::Right).is_err());
    }

    #[test]
    fn pad_both_directions() {
        let mut a = enc(&["a", "b"]);
        a.set_sequence_id(0);
        let mut left = a.clone();
        a.pad(4, 0, 7, "[PAD]", PaddingDirection::Right);
        assert_eq!(a.ids, vec![1, 2, 0, 0]);
        assert_eq!(a.attention_mask, vec![1, 1, 0, 0]);
        assert_eq!(a.special_tokens_mask, vec![0, 0, 1, 1]);
        assert_eq!(a.type_ids, vec![0, 0, 7, 7]);
        left.pad(4, 0, 0, "[PAD]", PaddingDirection::Left);
        assert_eq!(left.tokens, vec!["[PAD]", "[PAD]", "a", "b"]);
        assert_eq!(left.words, vec![None, None, Some(0), Some(1)]);
        assert_eq!(left.sequence_ranges[&0], 2..4);
        assert_eq!(left.char_to_token(2, 0), Some(3));
    }

    #[test]
    fn merge_combines_overflowing() {
        let mut a = enc(&["a", "b", "c"]);
        a.truncate(2, 0, TruncationDirection::Right).unwrap();
        let mut b = enc(&["x", "y", "z"]);
        b.truncate(2, 0, TruncationDirection::Right).unwrap();
        let merged = Encoding::merge([a, b], false);
        assert_eq!(merged.tokens, vec!["a", "b", "x", "y"]);
        let over: Vec<Vec<String>> = merged.overflowing.iter().map(|o| o.tokens.clone()).collect();
        assert_eq!(over, vec![vec!["c", "x", "y"], vec!["c", "z"], vec!["a", "b", "z"]]);
    }

    #[test]
    fn overlapping_sequence_ranges_answer_the_lowest_id() {
        let mut e = enc(&["a", "b", "c"]);
        e.sequence_ranges.insert(0, 1..3);
        e.set_sequence_id(1);
        assert_eq!(
            (0..3).map(|t| e.token_to_sequence(t)).collect::<Vec<_>>(),
            vec![Some(1), Some(0), Some(0)]
        );
    }

    #[test]
    fn lookups() {
        let mut a = enc(&["hel", "lo", "world"]);
        a.words = vec![Some(0), Some(0), Some(1)];
        a.set_sequence_id(0);
        let mut b = enc(&["pair"]);
        b.set_sequence_id(1);
        let mut e = Encoding::from_special_tokens(&[101], &["[CLS]".to_string()], 0);
        e.merge_with(a, false);
        e.merge_with(b, false);
        assert_eq!(e.sequence_ids(), vec![None, Some(0), Some(0), Some(0), Some(1)]);
        assert_eq!(e.token_to_sequence(0), None);
        assert_eq!(e.token_to_sequence(4), Some(1));
        assert_eq!(e.word_to_tokens(0, 0), Some((1, 3)));
        assert_eq!(e.word_to_tokens(0, 1), Some((4, 5)));
        assert_eq!(e.word_to_chars(0, 0), Some((0, 6)));
        assert_eq!(e.token_to_word(3), Some((0, 1)));
        assert_eq!(e.token_to_word(0), None);
        assert_eq!(e.token_to_chars(2), Some((0, (4, 6))));
        assert_eq!(e.char_to_token(4, 0), Some(2));
        assert_eq!(e.char_to_word(8, 0), Some(1));
        assert_eq!(e.char_to_token(2, 1), Some(4));
        assert_eq!(e.char_to_word(100, 0), None);
    }
}
