//! The pieces of a SentencePiece model and its four segmentation algorithms (model_interface.cc,
//! bpe_model.cc, unigram_model.cc's optimized Viterbi, char_model.cc, word_model.cc), on the
//! normalized text. Results are byte spans of the normalized text with their ids.
use rustc_hash::FxHashMap;

use super::darts::DoubleArray;
use super::normalizer::{one_char_len, SPACE_SYMBOL};
use super::proto::{ModelProto, ModelType, PieceType};
use super::unigram_cache::{self, CacheView};
use crate::error::{Error, Result};
use crate::utils::word_cache::{short_key, MAX_CACHED_WORD_BYTES};

/// One piece of a segmentation: `text[start..end]` of the normalized text, and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub id: u32,
}

/// The vocabulary with SentencePiece's lookup rules.
#[derive(Debug, Clone)]
pub struct Vocab {
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub types: Vec<PieceType>,
    /// NORMAL, USER_DEFINED and UNUSED pieces (what the segmenters may produce).
    normal: FxHashMap<String, u32>,
    /// CONTROL, UNKNOWN and BYTE pieces (looked up first by `piece_to_id`).
    reserved: FxHashMap<String, u32>,
    pub unk_id: u32,
    /// The id of `<0xNN>` for every byte, when byte_fallback is on.
    pub byte_ids: Option<Box<[u32; 256]>>,
    /// User-defined symbols, for the prefix matcher.
    pub user_defined: Option<DoubleArray>,
    /// No piece holds ▁ right after another character, so no piece can span the start of a
    /// "▁..." word ([`independent_words`]): every Unigram path passes through every word start.
    pub pieces_stay_in_words: bool,
    /// `pieces_stay_in_words` and there are no unused pieces: BPE may then segment each word
    /// on its own (and cache it), with the same result as on the whole text.
    pub words_are_independent: bool,
}

/// `<0xNN>` → NN, for the 256 byte pieces (upper-case hex, as SentencePiece writes them).
pub fn piece_to_byte(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

pub fn byte_to_piece(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

impl Vocab {
    /// Checks the pieces as SentencePiece's `InitializePieces` does; every problem is an error.
    pub fn from_proto(proto: &ModelProto) -> Result<Self> {
        let byte_fallback = proto.trainer_spec.as_ref().is_some_and(|t| t.byte_fallback());
        let n = proto.pieces.len();
        let bad = |i: usize, what: String| {
            Error::format(format!("SentencePiece model: piece {i}: {what}"))
        };
        let mut vocab = Vocab {
            pieces: Vec::with_capacity(n),
            scores: Vec::with_capacity(n),
            types: Vec::with_capacity(n),
            normal: FxHashMap::default(),
            reserved: FxHashMap::default(),
            unk_id: 0,
            byte_ids: None,
            user_defined: None,
            pieces_stay_in_words: false,
            words_are_independent: false,
        };
        if n >= i32::MAX as usize {
            return Err(Error::format("SentencePiece model: too many pieces"));
        }
        let mut unk = None;
        let mut bytes = [u32::MAX; 256];
        for (i, sp) in proto.pieces.iter().enumerate() {
            let piece = sp.piece.clone().unwrap_or_default();
            if piece.is_empty() {
                return Err(bad(i, "piece must not be empty".into()));
            }
            let kind = match sp.r#type {
                None => PieceType::Normal,
                Some(t) => PieceType::try_from(t)
                    .map_err(|_| bad(i, format!("{piece:?} has unknown piece type {t}")))?,
            };
            let is_normal =
                matches!(kind, PieceType::Normal | PieceType::UserDefined | PieceType::Unused);
            let map = if is_normal { &mut vocab.normal } else { &mut vocab.reserved };
            if map.insert(piece.clone(), i as u32).is_some() {
                return Err(bad(i, format!("{piece:?} is already defined")));
            }
            match kind {
                PieceType::Unknown => {
                    if unk.is_some() {
                        return Err(bad(i, "unk is already defined".into()));
                    }
                    unk = Some(i as u32);
                }
                PieceType::Byte => {
                    if !byte_fallback {
                        return Err(bad(
                            i,
                            format!(
                                "byte piece {piece:?} is found although `byte_fallback` is false"
                            ),
                        ));
                    }
                    let byte = piece_to_byte(&piece)
                        .ok_or_else(|| bad(i, format!("byte piece {piece:?} is invalid")))?;
                    bytes[byte as usize] = i as u32;
                }
                _ => {}
            }
            vocab.pieces.push(piece);
            vocab.scores.push(sp.score.unwrap_or(0.0));
            vocab.types.push(kind);
        }
        vocab.unk_id = unk.ok_or_else(|| {
            Error::format("SentencePiece model: unk is not defined (no piece of type UNKNOWN)")
        })?;
        if byte_fallback {
            if bytes.contains(&u32::MAX) {
                return Err(Error::format(
                    "SentencePiece model: there are not 256 byte pieces \
                    although `byte_fallback` is true",
                ));
            }
            vocab.byte_ids = Some(Box::new(bytes));
        }
        let user: Vec<(&[u8], u32)> = (0..n)
            .filter(|&i| vocab.types[i] == PieceType::UserDefined)
            .map(|i| (vocab.pieces[i].as_bytes(), i as u32))
            .filter(|(k, _)| !k.contains(&0))
            .collect();
        if !user.is_empty() {
            vocab.user_defined = Some(DoubleArray::build(&user)?);
        }
        vocab.pieces_stay_in_words = !vocab.normal.keys().any(|p| {
            p.char_indices()
                .any(|(i, c)| i > 0 && c == '\u{2581}' && !p[..i].ends_with(SPACE_SYMBOL))
        });
        // BPE splits merged unused pieces back by the last pair seen in the whole text, which
        // couples the words (Unigram never matches unused pieces).
        vocab.words_are_independent =
            vocab.pieces_stay_in_words && !vocab.types.contains(&PieceType::Unused);
        Ok(vocab)
    }

    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// SentencePiece's `PieceToId`: reserved pieces first, then the others, else unk.
    pub fn piece_to_id(&self, piece: &str) -> u32 {
        self.reserved.get(piece).or_else(|| self.normal.get(piece)).copied().unwrap_or(self.unk_id)
    }

    /// Only NORMAL, USER_DEFINED and UNUSED pieces.
    #[inline]
    pub fn normal_id(&self, piece: &str) -> Option<u32> {
        self.normal.get(piece).copied()
    }

    pub fn kind(&self, id: u32) -> Option<PieceType> {
        self.types.get(id as usize).copied()
    }

    pub fn is(&self, id: u32, kind: PieceType) -> bool {
        self.kind(id) == Some(kind)
    }

    /// The length of the symbol at the start of `text`: a user-defined symbol (`true`) or one
    /// character (SentencePiece's `PrefixMatcher::PrefixMatch`).
    #[inline]
    pub fn prefix_match(&self, text: &[u8]) -> (usize, bool) {
        if let Some((_, len)) = self.user_defined.as_ref().and_then(|m| m.longest_prefix(text)) {
            return (len, true);
        }
        (one_char_len(text[0]).min(text.len()), false)
    }
}

/// char_model.cc: one piece per character (or user-defined symbol).
pub fn encode_char(vocab: &Vocab, text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let (len, _) = vocab.prefix_match(&bytes[pos..]);
        out.push(Span { start: pos, end: pos + len, id: vocab.piece_to_id(&text[pos..pos + len]) });
        pos += len;
    }
    out
}

/// word_model.cc: one piece per whitespace-delimited word (with its leading ▁).
pub fn encode_word(vocab: &Vocab, text: &str) -> Vec<Span> {
    split_into_words(text, false, false)
        .into_iter()
        .map(|(start, end)| Span { start, end, id: vocab.piece_to_id(&text[start..end]) })
        .collect()
}

/// model_interface.cc's `SplitIntoWords`: byte spans of the words of a normalized text, each
/// starting with ▁ (or, with `treat_ws_as_suffix`, ending with it).
pub fn split_into_words(
    text: &str,
    treat_ws_as_suffix: bool,
    allow_ws_only_pieces: bool,
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let space = SPACE_SYMBOL.as_bytes();
    let mut result: Vec<(usize, usize)> = Vec::new();
    let mut in_ws_sequence = false;
    let mut pos = 0;
    if treat_ws_as_suffix {
        if !bytes.is_empty() {
            result.push((0, 0));
        }
        while pos < bytes.len() {
            let len = one_char_len(bytes[pos]).min(bytes.len() - pos);
            let is_ws = &bytes[pos..pos + len] == space;
            if is_ws {
                in_ws_sequence = true;
            } else if in_ws_sequence {
                if allow_ws_only_pieces {
                    result.push((pos, pos));
                }
                in_ws_sequence = false;
            }
            if let Some(last) = result.last_mut() {
                last.1 += len;
            }
            pos += len;
            if pos < bytes.len() && is_ws && !allow_ws_only_pieces {
                result.push((pos, pos));
            }
        }
    } else {
        while pos < bytes.len() {
            let len = one_char_len(bytes[pos]).min(bytes.len() - pos);
            let is_ws = &bytes[pos..pos + len] == space;
            if pos == 0 || (is_ws && (!in_ws_sequence || !allow_ws_only_pieces)) {
                result.push((pos, pos));
                in_ws_sequence = true;
            }
            if in_ws_sequence && !is_ws {
                in_ws_sequence = false;
            }
            if let Some(last) = result.last_mut() {
                last.1 += len;
            }
            pos += len;
        }
    }
    result
}

/// The Unigram model's lookup structures (unigram_model.cc).
#[derive(Debug, Clone)]
pub struct UnigramIndex {
    pub trie: DoubleArray,
    pub min_score: f32,
    pub max_score: f32,
    /// Per id, the lattice score of a normal piece; NaN for unused pieces (never matched),
    /// +inf for user-defined ones (their score depends on the match length). One read per
    /// match in the Viterbi loop; the type is read only behind a non-finite value.
    lattice_scores: Vec<f32>,
}

/// What SentencePiece subtracts from the lowest score to score an unknown character.
pub const UNK_PENALTY: f32 = 10.0;

impl UnigramIndex {
    pub fn new(vocab: &Vocab) -> Result<Self> {
        let mut min_score = f32::MAX;
        // SentencePiece starts the maximum at FLT_MIN (the smallest positive float), so with
        // the usual negative log-probabilities it stays there.
        let mut max_score = f32::MIN_POSITIVE;
        for (i, kind) in vocab.types.iter().enumerate() {
            if *kind == PieceType::Normal {
                min_score = min_score.min(vocab.scores[i]);
                max_score = max_score.max(vocab.scores[i]);
            }
        }
        let keys: Vec<(&[u8], u32)> = vocab
            .normal
            .iter()
            .map(|(piece, &id)| (piece.as_bytes(), id))
            .filter(|(k, _)| !k.contains(&0))
            .collect();
        if keys.is_empty() {
            return Err(Error::format(
                "SentencePiece model: no entry is found in the trie (no normal pieces)",
            ));
        }
        let lattice_scores = vocab
            .types
            .iter()
            .zip(&vocab.scores)
            .map(|(kind, &score)| match kind {
                PieceType::Unused => f32::NAN,
                PieceType::UserDefined => f32::INFINITY,
                _ => score,
            })
            .collect();
        Ok(UnigramIndex { trie: DoubleArray::build(&keys)?, min_score, max_score, lattice_scores })
    }

    pub fn unk_score(&self) -> f32 {
        self.min_score - UNK_PENALTY
    }

    /// The score SentencePiece gives a piece in the lattice: user-defined symbols get a bonus
    /// that makes them always win (`length * max_score - 0.1`).
    #[inline]
    pub fn node_score(&self, vocab: &Vocab, id: u32, length: usize) -> f32 {
        if vocab.types[id as usize] == PieceType::UserDefined {
            (length as f64 * self.max_score as f64 - 0.1) as f32
        } else {
            vocab.scores[id as usize]
        }
    }
}

/// unigram_model.cc's `EncodeOptimized` (the default encoder): Viterbi over byte positions,
/// keeping only the best path ending at each position. Ties keep the earlier-found node (the
/// leftmost start, then the shorter piece). Scores are summed in single precision, as the
/// `sentencepiece` releases do, so that ties and near-ties resolve the same way.
pub fn encode_unigram(vocab: &Vocab, index: &UnigramIndex, text: &str) -> Vec<Span> {
    let mut out = Vec::new();
    encode_unigram_into(vocab, index, text, &mut Vec::new(), &mut out);
    out
}

/// The best path ending at one byte position of [`encode_unigram`]'s Viterbi.
#[derive(Clone, Copy)]
pub struct ViterbiCell {
    id: u32,
    score: f32,
    start: usize,
}

/// [`encode_unigram`] into `out` (cleared first), with `best` as reusable scratch space.
pub fn encode_unigram_into(
    vocab: &Vocab,
    index: &UnigramIndex,
    text: &str,
    best: &mut Vec<ViterbiCell>,
    out: &mut Vec<Span>,
) {
    out.clear();
    viterbi::<false>(vocab, index, text.as_bytes(), 0, 0.0, best, &mut Decisions::default(), out);
}

/// What a Viterbi run records about its decisions (when asked to), for the word cache's
/// exactness test ([`exact_prefix_limit`]).
#[derive(Debug, Clone, Copy)]
pub struct Decisions {
    /// The smallest |candidate − current best| of any comparison that had a current best (0
    /// after a tie or a non-finite score).
    min_margin: f64,
    /// The largest |score| of any candidate.
    max_abs: f64,
    /// Characters of the text (each piece covers at least one, so no path is longer).
    chars: usize,
}

impl Default for Decisions {
    fn default() -> Self {
        Decisions { min_margin: f64::INFINITY, max_abs: 0.0, chars: 0 }
    }
}

impl Decisions {
    #[inline]
    fn candidate(&mut self, candidate: f32, current: Option<f32>) {
        if !candidate.is_finite() {
            self.min_margin = 0.0;
            return;
        }
        self.max_abs = self.max_abs.max(candidate.abs() as f64);
        if let Some(current) = current {
            let margin = (candidate as f64 - current as f64).abs();
            if margin.is_nan() || margin < self.min_margin {
                self.min_margin = margin;
            }
        }
    }
}

/// The Viterbi of `text` (a whole normalized text, or one of its words at byte `offset`),
/// starting from the path score `start_score`: appends the best path's spans (at `offset`)
/// to `out` and returns its score. With `TRACK`, records its decisions in `decisions`.
#[allow(clippy::too_many_arguments)]
fn viterbi<const TRACK: bool>(
    vocab: &Vocab,
    index: &UnigramIndex,
    bytes: &[u8],
    offset: usize,
    start_score: f32,
    best: &mut Vec<ViterbiCell>,
    decisions: &mut Decisions,
    out: &mut Vec<Span>,
) -> f32 {
    let size = bytes.len();
    if size == 0 {
        return start_score;
    }
    let unk_score = index.unk_score();
    best.clear();
    best.resize(size + 1, ViterbiCell { id: u32::MAX, score: 0.0, start: usize::MAX });
    best[0].score = start_score;
    let mut start = 0;
    while start < size {
        let till_here = best[start].score;
        let char_len = one_char_len(bytes[start]).min(size - start);
        let mut has_single_node = false;
        index.trie.common_prefix_search(&bytes[start..], |id, length| {
            let mut score = index.lattice_scores.get(id as usize).copied().unwrap_or(f32::NAN);
            if !score.is_finite() {
                // The sentinels (a real score may be NaN or infinite too: the type decides).
                if vocab.types[id as usize] == PieceType::Unused {
                    return;
                }
                score = index.node_score(vocab, id, length);
            }
            let candidate = score + till_here;
            let target = &mut best[start + length];
            let is_set = target.start != usize::MAX;
            if TRACK {
                decisions.candidate(candidate, is_set.then_some(target.score));
            }
            if !is_set || candidate > target.score {
                *target = ViterbiCell { id, score: candidate, start };
            }
            if length == char_len {
                has_single_node = true;
            }
        });
        if !has_single_node {
            let candidate = unk_score + till_here;
            let target = &mut best[start + char_len];
            let is_set = target.start != usize::MAX;
            if TRACK {
                decisions.candidate(candidate, is_set.then_some(target.score));
            }
            if !is_set || candidate > target.score {
                *target = ViterbiCell { id: vocab.unk_id, score: candidate, start };
            }
        }
        decisions.chars += 1;
        start += char_len;
    }
    let first = out.len();
    let mut end = size;
    while end > 0 {
        let node = best[end];
        if node.start == usize::MAX {
            break; // unreachable: every character is covered by a piece or an unk node
        }
        out.push(Span { start: offset + node.start, end: offset + end, id: node.id });
        end = node.start;
    }
    out[first..].reverse();
    best[size].score
}

/// The largest |prefix score| P for which a word's Viterbi taken from score 0 (`decisions`)
/// decides exactly as the Viterbi of the whole text does when it reaches the word with score P;
/// negative when there is none (a tie, a non-finite score).
///
/// Why it holds: a cell's score is its path's piece scores summed left to right, each sum
/// rounded to f32 (unit roundoff u = 2⁻²⁴). Along a path of k pieces the whole-text scores
/// differ from P + the word's own scores by at most k·u·(|P| + 2M), M bounding the word's
/// scores; a comparison involves two paths of at most `chars` pieces plus the candidate's
/// rounding, so its two sides move by less than (2·chars + 4)·u·(|P| + 2M) together. When
/// every comparison of the word was decided by more than that, all decide the same way (and
/// none is a tie), so the best path is the same. The factor (1 + 2⁻¹⁰) covers the second-order
/// terms and the f64 arithmetic here; subnormal scores get an absolute slack.
fn exact_prefix_limit(decisions: &Decisions) -> f32 {
    const UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << 24) as f64;
    if decisions.chars > 4096 || !decisions.max_abs.is_finite() {
        return -1.0;
    }
    let steps = (2 * decisions.chars + 4) as f64;
    let margin = decisions.min_margin - steps * 2f64.powi(-140);
    let limit = margin / (steps * UNIT_ROUNDOFF * (1.0 + 1.0 / 1024.0)) - 2.0 * decisions.max_abs;
    if limit > 0.0 {
        // Shrunk so that rounding to f32 cannot enlarge it.
        (limit * (1.0 - 1e-6)) as f32
    } else {
        -1.0
    }
}

/// A word's [`exact_prefix_limit`] rounded down to a power of two, as a byte: 0 for none,
/// else the limit is 2^(code − 128) (what the word cache stores per word).
fn limit_code(limit: f32) -> u8 {
    if limit.is_nan() || limit < f32::MIN_POSITIVE {
        return 0;
    }
    // floor(log2(limit)) for a normal positive float is its unbiased exponent.
    let exponent = ((limit.to_bits() >> 23) & 0xFF) as i32 - 127;
    (exponent + 128).clamp(1, 255) as u8
}

/// The bound a [`limit_code`] stands for (exact: a power of two).
fn limit_of_code(code: u8) -> f32 {
    match code {
        // 2^-127 is subnormal: treated as no limit at all.
        0 | 1 => -1.0,
        // 2^(code − 128) as a float: biased exponent code − 1, zero mantissa.
        _ => f32::from_bits(u32::from(code - 1) << 23),
    }
}

/// Whether a vocabulary can use [`encode_unigram_words`]: no piece crosses a word start, and
/// ids fit the cache's packed tokens ([`unigram_cache::ID_BITS`]).
pub fn unigram_words_cacheable(vocab: &Vocab) -> bool {
    vocab.pieces_stay_in_words && vocab.len() < (1 << unigram_cache::ID_BITS)
}

/// The score a cached word's path (packed tokens) adds to `score`, in the Viterbi's arithmetic.
#[inline]
fn path_score(vocab: &Vocab, index: &UnigramIndex, mut score: f32, tokens: &[u32]) -> f32 {
    for &token in tokens {
        let id = token & unigram_cache::ID_MASK;
        let piece = if id == vocab.unk_id {
            index.unk_score()
        } else {
            match index.lattice_scores.get(id as usize) {
                Some(&s) if s.is_finite() => s,
                _ => index.node_score(vocab, id, (token >> unigram_cache::ID_BITS) as usize),
            }
        };
        score += piece;
    }
    score
}

/// Turns a segmentation into ids as SentencePiece's `PopulateSentencePieceText` does: with
/// byte fallback an unknown piece becomes the pieces of its bytes, without it a run of
/// unknown pieces becomes one.
pub struct IdWriter<'a> {
    unk_id: u32,
    byte_ids: Option<&'a [u32; 256]>,
    prev_unk: bool,
}

impl<'a> IdWriter<'a> {
    pub fn new(vocab: &'a Vocab) -> Self {
        IdWriter { unk_id: vocab.unk_id, byte_ids: vocab.byte_ids.as_deref(), prev_unk: false }
    }

    /// Appends the ids of piece `id` covering the normalized bytes `piece`.
    #[inline]
    pub fn push(&mut self, out: &mut Vec<u32>, id: u32, piece: &[u8]) {
        let is_unk = id == self.unk_id;
        match (self.byte_ids, is_unk) {
            (Some(bytes), true) => out.extend(piece.iter().map(|&b| bytes[b as usize])),
            (None, true) if self.prev_unk => {}
            _ => out.push(id),
        }
        self.prev_unk = is_unk;
    }

    /// Appends packed cached tokens ([`unigram_cache`]) of `word`.
    #[inline]
    fn push_packed(&mut self, out: &mut Vec<u32>, word: &[u8], tokens: &[u32], has_unk: bool) {
        if has_unk {
            let mut at = 0;
            for &token in tokens {
                let len = (token >> unigram_cache::ID_BITS) as usize;
                self.push(out, token & unigram_cache::ID_MASK, &word[at..at + len]);
                at += len;
            }
        } else if !tokens.is_empty() {
            out.extend(tokens.iter().map(|&token| token & unigram_cache::ID_MASK));
            self.prev_unk = false;
        }
    }
}

/// Reusable buffers of [`encode_unigram_words`].
#[derive(Default)]
pub struct UnigramBuffers {
    best: Vec<ViterbiCell>,
    spans: Vec<Span>,
    packed: Vec<u32>,
}

/// The ids of the Unigram Viterbi of `text`, appended to `out` (as [`IdWriter`] gives them),
/// word by word through `cache` (this model's word cache, as this thread sees it), for vocabularies
/// that pass [`unigram_words_cacheable`]: no piece crosses a word start, so every path passes
/// through every word start, and the whole text's best path is each word's best path from the score
/// the text reached there. A word's path is cached with the limit of [`exact_prefix_limit`]; it is
/// used when the score reached is within it, and otherwise the word's Viterbi runs from that score,
/// so the result is [`encode_unigram`]'s exactly, near-ties included.
pub fn encode_unigram_words(
    vocab: &Vocab,
    index: &UnigramIndex,
    text: &[u8],
    cache: &mut CacheView<'_>,
    buffers: &mut UnigramBuffers,
    out: &mut Vec<u32>,
) {
    /// Words whose cache lines are prefetched together before any of them is looked up
    /// ([`WordCache::prefetch`]; a sliding window 8 words ahead was no faster).
    const BATCH: usize = 16;
    let mut line = LineEncoder { vocab, index, buffers, ids: IdWriter::new(vocab), score: 0.0 };
    let mut words = independent_words(text);
    let mut batch = [(0usize, 0usize, None); BATCH];
    loop {
        let mut n = 0;
        for (start, end) in words.by_ref().take(BATCH) {
            let key = short_key(&text[start..end]);
            if let Some(key) = &key {
                cache.prefetch(key);
            }
            batch[n] = (start, end, key);
            n += 1;
        }
        if n == 0 {
            break;
        }
        for &(start, end, key) in &batch[..n] {
            line.word(cache, &text[start..end], key, out);
        }
    }
}

/// The state of [`encode_unigram_words`] along one text.
struct LineEncoder<'a> {
    vocab: &'a Vocab,
    index: &'a UnigramIndex,
    buffers: &'a mut UnigramBuffers,
    ids: IdWriter<'a>,
    /// The score of the best path up to the current word, as the whole-text Viterbi has it.
    score: f32,
}

impl LineEncoder<'_> {
    /// Appends the ids of the next word (`key`: its [`short_key`]).
    #[inline]
    fn word(
        &mut self,
        cache: &mut CacheView<'_>,
        word: &[u8],
        key: Option<[u64; 3]>,
        out: &mut Vec<u32>,
    ) {
        if word.len() >= MAX_CACHED_WORD_BYTES {
            return self.viterbi_from_score(word, out);
        }
        if let Some(cached) = cache.get_keyed(word, key) {
            return self.cached(word, cached.tokens, cached.limit_code, cached.has_unk, out);
        }
        let UnigramBuffers { best, spans, packed } = &mut *self.buffers;
        spans.clear();
        let mut decisions = Decisions::default();
        viterbi::<true>(self.vocab, self.index, word, 0, 0.0, best, &mut decisions, spans);
        packed.clear();
        packed.extend(
            spans.iter().map(|s| s.id | ((s.end - s.start) as u32) << unigram_cache::ID_BITS),
        );
        let has_unk = spans.iter().any(|s| s.id == self.vocab.unk_id);
        let code = limit_code(exact_prefix_limit(&decisions));
        cache.insert(word, packed, code, has_unk);
        let packed = std::mem::take(&mut self.buffers.packed);
        self.cached(word, &packed, code, has_unk, out);
        self.buffers.packed = packed;
    }

    /// A word's path from the cache (`tokens` packed) if it is exact at the current score,
    /// else the word's Viterbi from that score.
    #[inline]
    fn cached(
        &mut self,
        word: &[u8],
        tokens: &[u32],
        limit_code: u8,
        has_unk: bool,
        out: &mut Vec<u32>,
    ) {
        if self.score.abs() < limit_of_code(limit_code) {
            self.ids.push_packed(out, word, tokens, has_unk);
            self.score = path_score(self.vocab, self.index, self.score, tokens);
        } else {
            self.viterbi_from_score(word, out);
        }
    }

    /// The Viterbi of `word` from the current score: for words that cannot be cached or
    /// whose cached path may not be exact at this score.
    fn viterbi_from_score(&mut self, word: &[u8], out: &mut Vec<u32>) {
        let UnigramBuffers { best, spans, .. } = &mut *self.buffers;
        spans.clear();
        self.score = viterbi::<false>(
            self.vocab,
            self.index,
            word,
            0,
            self.score,
            best,
            &mut Decisions::default(),
            spans,
        );
        for span in spans.iter() {
            self.ids.push(out, span.id, &word[span.start..span.end]);
        }
    }
}

/// The words of a normalized text that BPE may segment on their own when
/// [`Vocab::words_are_independent`]: each starts at a ▁ that follows another character (the
/// first also at 0). Byte ranges.
pub fn independent_words(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        // Skip the ▁ run the word starts with, then find the next ▁.
        let mut pos = start;
        while bytes[pos..].starts_with(SPACE_BYTES) {
            pos += SPACE_BYTES.len();
        }
        let end = next_space(bytes, pos);
        let word = (start, end);
        start = end;
        Some(word)
    })
}

/// ▁ in UTF-8.
const SPACE_BYTES: &[u8] = SPACE_SYMBOL.as_bytes();

/// The position of the first ▁ at or after `from` (or the end): a `memchr` for its lead byte,
/// cheaper than a substring searcher on words a few bytes long.
#[inline]
fn next_space(bytes: &[u8], mut from: usize) -> usize {
    while let Some(i) = memchr::memchr(SPACE_BYTES[0], &bytes[from..]) {
        let at = from + i;
        if bytes[at..].starts_with(SPACE_BYTES) {
            return at;
        }
        from = at + 1;
    }
    bytes.len()
}

/// The model type of a proto, as an enum (unknown values are an error).
pub fn model_type(proto: &ModelProto) -> Result<ModelType> {
    let raw =
        proto.trainer_spec.as_ref().and_then(|t| t.model_type).unwrap_or(ModelType::Unigram as i32);
    ModelType::try_from(raw)
        .map_err(|_| Error::format(format!("SentencePiece model: unknown model_type {raw}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sentencepiece::proto::SentencePiece;
    use crate::sentencepiece::unigram_cache::{LongWords, WordCache};
    use rand::{Rng, SeedableRng};

    /// A Unigram vocabulary over "abc" whose multi-letter pieces score within a few f32 ulps of
    /// the sum of their parts, so that which segmentation wins depends on rounding, and so on
    /// the score a word is reached with.
    fn near_tie_vocab(rng: &mut rand::rngs::StdRng) -> (Vocab, UnigramIndex) {
        let mut pieces = vec![SentencePiece::new("<unk>", 0.0, PieceType::Unknown)];
        let mut scores: FxHashMap<String, f32> = FxHashMap::default();
        for unit in ["▁", "a", "b", "c"] {
            let score = -rng.gen_range(1.0f32..12.0);
            scores.insert(unit.to_string(), score);
            pieces.push(SentencePiece::new(unit, score, PieceType::Normal));
        }
        for piece in ["ab", "bc", "ca", "abc", "▁a", "▁ab", "bca", "aa", "▁▁"] {
            let mut chars: Vec<String> = piece.chars().map(String::from).collect();
            let last = chars.pop().unwrap_or_default();
            let rest: String = chars.concat();
            let parts = scores.get(&rest).copied().unwrap_or(-5.0) + scores[&last];
            let ulps = rng.gen_range(-3i32..=3);
            let score = f32::from_bits((parts.to_bits() as i32 + ulps) as u32);
            scores.insert(piece.to_string(), score);
            pieces.push(SentencePiece::new(piece, score, PieceType::Normal));
        }
        let proto = ModelProto {
            pieces,
            trainer_spec: None,
            normalizer_spec: None,
            self_test_data: None,
            denormalizer_spec: None,
        };
        let vocab = Vocab::from_proto(&proto).expect("vocab");
        let index = UnigramIndex::new(&vocab).expect("index");
        (vocab, index)
    }

    #[test]
    fn cached_unigram_words_match_the_whole_text_viterbi_at_near_ties() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut naive_differs = 0;
        for round in 0..60 {
            let (vocab, index) = near_tie_vocab(&mut rng);
            assert!(vocab.pieces_stay_in_words);
            let (cache, mut long_words) = (WordCache::default(), LongWords::default());
            for _ in 0..20 {
                let words: Vec<String> = (0..rng.gen_range(1..400))
                    .map(|_| {
                        (0..rng.gen_range(1..9))
                            .map(|_| ["a", "b", "c"][rng.gen_range(0..3)])
                            .collect::<String>()
                    })
                    .collect();
                let sep = if round % 5 == 0 { "▁▁" } else { "▁" };
                let text = format!("{sep}{}", words.join(sep));
                let whole = encode_unigram(&vocab, &index, &text);
                let mut whole_ids = Vec::new();
                let mut writer = IdWriter::new(&vocab);
                whole.iter().for_each(|s| {
                    writer.push(&mut whole_ids, s.id, &text.as_bytes()[s.start..s.end])
                });
                let mut buffers = UnigramBuffers::default();
                for _ in 0..2 {
                    // cold, then every word cached
                    let mut out = Vec::new();
                    encode_unigram_words(
                        &vocab,
                        &index,
                        text.as_bytes(),
                        &mut cache.view(&mut long_words),
                        &mut buffers,
                        &mut out,
                    );
                    assert_eq!(out, whole_ids, "{text}");
                }
                let naive: Vec<Span> = independent_words(text.as_bytes())
                    .flat_map(|(s, e)| {
                        encode_unigram(&vocab, &index, &text[s..e])
                            .into_iter()
                            .map(move |sp| Span { start: sp.start + s, end: sp.end + s, id: sp.id })
                    })
                    .collect();
                naive_differs += usize::from(naive != whole);
            }
        }
        // The construction does produce near-ties that the prefix score decides.
        assert!(naive_differs > 0);
    }

    #[test]
    fn limit_codes_round_down_to_powers_of_two() {
        for limit in [f32::MIN_POSITIVE, 1e-30, 0.75, 1.0, 3.0, 1e6, 3e38, f32::INFINITY] {
            let bound = limit_of_code(limit_code(limit));
            assert!(bound <= limit && bound > 0.0, "{limit} -> {bound}");
            assert!(bound * 2.0 > limit || limit == f32::INFINITY, "{limit} -> {bound}");
        }
        for limit in [-1.0, 0.0, f32::NAN, 1e-40] {
            assert!(limit_of_code(limit_code(limit)) < 0.0);
        }
    }
}
