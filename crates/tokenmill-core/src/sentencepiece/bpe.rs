//! SentencePiece BPE (bpe_model.cc) as a ranker over the BPE kernel (`models::bpe::merge`):
//! the pieces' scores decide the order, the kernel merges; unused pieces are split back here.
use rustc_hash::FxHashMap;

use super::model::{independent_words, Span, Vocab};
use super::proto::PieceType;
use crate::models::bpe::merge::{Dropout, Merge, PairRanker, Symbol, Word};
use crate::models::bpe::{cache, DEFAULT_CACHE_CAPACITY};

/// The id of a symbol that never merges (a user-defined symbol).
const USER_DEFINED: u32 = u32::MAX;
/// The id of a one-character symbol before any merge (never looked at).
const CHAR: u32 = 0;

/// SentencePiece's merge rule: two symbols merge if their text is a (normal, user-defined or
/// unused) piece, the highest score first (ties to the leftmost), into that piece. Neither
/// may be a user-defined symbol.
struct ScoreRanks<'a> {
    vocab: &'a Vocab,
    text: &'a str,
    /// Unused pieces ranked so far → the length of their left part; the last pair ranked
    /// wins (bpe_model.cc's `rev_merge`), which is why the kernel ranks in a fixed order.
    unmerge: FxHashMap<&'a str, usize>,
}

impl PairRanker for ScoreRanks<'_> {
    #[inline]
    fn rank(&mut self, left: &Symbol, right: &Symbol) -> Option<Merge> {
        if left.id == USER_DEFINED || right.id == USER_DEFINED {
            return None;
        }
        let piece = &self.text[left.start..right.end];
        let id = self.vocab.normal_id(piece)?;
        if self.vocab.types[id as usize] == PieceType::Unused {
            self.unmerge.insert(piece, left.end - left.start);
        }
        Some(Merge { priority: descending(self.vocab.scores[id as usize]), id })
    }

    /// Not with unused pieces: how they split back depends on every pair ranked, in order.
    fn windows_allowed(&self) -> bool {
        !self.vocab.types.contains(&PieceType::Unused)
    }
}

/// A priority that orders scores from the highest down, as `f32::total_cmp` orders them
/// (scores are finite in real models; NaN with the sign bit set sorts lowest): the bits made
/// monotonic as unsigned integers, then inverted.
#[inline]
fn descending(score: f32) -> u32 {
    let bits = score.to_bits();
    let ascending = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
    !ascending
}

/// SentencePiece BPE (bpe_model.cc): the whole normalized text starts as characters (and
/// user-defined symbols, which never merge); the adjacent pair whose concatenation is a piece
/// with the highest score merges first, ties to the leftmost; merged UNUSED pieces are split
/// back into the pieces they were made of. `dropout` (0..1) skips each merge with that
/// probability, drawing from `rng` (sentencepiece's rule: only for merges about to happen; a
/// skipped pair is not tried again until a merge beside it).
pub fn encode_bpe(
    vocab: &Vocab,
    text: &str,
    dropout: f32,
    rng: &mut dyn FnMut() -> f64,
) -> Vec<Span> {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Vec::new();
    }
    let mut word = Word::with_capacity(bytes.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let (len, user_defined) = vocab.prefix_match(&bytes[pos..]);
        word.push(if user_defined { USER_DEFINED } else { CHAR }, len);
        pos += len;
    }
    let mut ranks = ScoreRanks { vocab, text, unmerge: FxHashMap::default() };
    if dropout > 0.0 {
        let skip = || dropout >= 1.0 || rng() < dropout as f64;
        word.merge_with_dropout(&mut ranks, Dropout::Discard(skip));
    } else {
        word.merge(&mut ranks);
    }
    let mut out = Vec::with_capacity(word.len());
    for symbol in word.symbols() {
        resegment(vocab, text, symbol.start, symbol.end, &ranks.unmerge, &mut out);
    }
    out
}

/// Emits `text[start..end]`, split back into its parts while it is an UNUSED piece.
fn resegment(
    vocab: &Vocab,
    text: &str,
    start: usize,
    end: usize,
    unmerge: &FxHashMap<&str, usize>,
    out: &mut Vec<Span>,
) {
    let piece = &text[start..end];
    // Only ordinary pieces: a symbol that spells a control, unknown or byte piece is unknown.
    let id = vocab.normal_id(piece).unwrap_or(vocab.unk_id);
    if vocab.types[id as usize] == PieceType::Unused {
        if let Some(&left_len) = unmerge.get(piece) {
            resegment(vocab, text, start, start + left_len, unmerge, out);
            resegment(vocab, text, start + left_len, end, unmerge, out);
            return;
        }
    }
    out.push(Span { start, end, id });
}

/// SentencePiece BPE of `text` into `out` (cleared first), word by word with the word cache
/// of the BPE models (`cache_id` names this vocabulary there). Only for vocabularies
/// whose words are independent ([`Vocab::words_are_independent`]) and without dropout; the
/// result is [`encode_bpe`]'s exactly: merges never cross a word start, and within a word they
/// happen in the same order.
pub fn encode_bpe_words(
    vocab: &Vocab,
    text: &str,
    cache_id: u64,
    tokens: &mut Vec<(u32, u32)>,
    out: &mut Vec<Span>,
) {
    out.clear();
    for (start, end) in independent_words(text.as_bytes()) {
        let word = &text[start..end];
        let mut at = start;
        let cached = cache::replay(cache_id, word.as_bytes(), |id, len| {
            out.push(Span { start: at, end: at + len, id });
            at += len;
        });
        if cached {
            continue;
        }
        let spans = encode_bpe(vocab, word, 0.0, &mut || 1.0);
        tokens.clear();
        tokens.extend(spans.iter().map(|s| (s.id, (s.end - s.start) as u32)));
        cache::store(cache_id, DEFAULT_CACHE_CAPACITY, word.as_bytes(), tokens);
        out.extend(spans.iter().map(|s| Span {
            start: s.start + start,
            end: s.end + start,
            id: s.id,
        }));
    }
}
