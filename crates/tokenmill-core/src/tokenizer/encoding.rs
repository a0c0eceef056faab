//! `Encoding`: the output of the pipeline for one input (or one pair of inputs). Every token
//! carries its id, text, span in the original input, word index, type id and masks, so that
//! any token can be traced back to the text it came from.
use std::collections::HashMap;
use std::ops::Range;

use crate::tokenizer::normalized::Offsets;

#[derive(Debug, Clone, Default, PartialEq)]
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

    /// Appends one token.
    pub fn push(&mut self, id: u32, token: String, offsets: Offsets, word: Option<u32>, type_id: u32, special: bool) {
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
        self.sequence_ranges.len().max(1)
    }

    /// Marks every token as belonging to sequence `id`.
    pub fn set_sequence_id(&mut self, id: usize) {
        self.sequence_ranges.insert(id, 0..self.len());
    }

    /// Sequence index of every token (`None` for tokens outside any sequence, e.g. added specials).
    pub fn sequence_ids(&self) -> Vec<Option<usize>> {
        let mut out = vec![None; self.len()];
        if self.sequence_ranges.is_empty() {
            out.iter_mut().for_each(|s| *s = Some(0));
        }
        for (seq, range) in &self.sequence_ranges {
            for s in &mut out[range.clone()] {
                *s = Some(*seq);
            }
        }
        out
    }

    pub fn set_type_ids(&mut self, type_id: u32) {
        self.type_ids.iter_mut().for_each(|t| *t = type_id);
    }

    /// Appends `other` after `self`. With `growing_offsets`, `other`'s offsets are shifted to
    /// continue after the end of `self`'s last offset (used when several inputs are concatenated).
    pub fn merge_with(&mut self, other: Encoding, growing_offsets: bool) {
        let shift = if growing_offsets { self.offsets.last().map_or(0, |o| o.1) } else { 0 };
        let base = self.len();
        for (seq, range) in other.sequence_ranges {
            self.sequence_ranges.insert(seq, base + range.start..base + range.end);
        }
        self.ids.extend(other.ids);
        self.type_ids.extend(other.type_ids);
        self.tokens.extend(other.tokens);
        self.words.extend(other.words);
        self.offsets.extend(other.offsets.into_iter().map(|(s, e)| (s + shift, e + shift)));
        self.special_tokens_mask.extend(other.special_tokens_mask);
        self.attention_mask.extend(other.attention_mask);
        self.overflowing.extend(other.overflowing);
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
