//! sentencepiece's Unigram (unigram_model.cc) as a thin adapter over the one Unigram engine
//! ([`crate::models::unigram`]): the model built from a `.model` vocabulary with sentencepiece's
//! rules (float scores, piece types), its Viterbi on the normalized text, and the word-by-word
//! encoder that caches each word's path ([`super::unigram_cache`]) and stays exact at near-ties.
use super::model::{independent_words, IdWriter, Span, Vocab};
use super::proto::PieceType;
use super::unigram_cache::{self, CacheView};
use crate::error::{Error, Result};
use crate::models::unigram::{
    exact_prefix_limit, Cell, Decisions, Segmentation, Unigram, SENTENCEPIECE_SCORE_RESET,
};
use crate::utils::word_cache::{short_key, MAX_CACHED_WORD_BYTES};

/// The Unigram model of a `.model` vocabulary, with sentencepiece's scoring rules. Unknown runs
/// are not fused and bytes not expanded there: the processor's `populate` and [`IdWriter`] do
/// both, as sentencepiece's `PopulateSentencePieceText`.
pub fn unigram_model(vocab: &Vocab) -> Result<Unigram> {
    // sentencepiece refuses a Unigram model with any non-finite score (BPE models keep theirs).
    if let Some(i) = vocab.scores.iter().position(|s| !s.is_finite()) {
        return Err(Error::format(format!(
            "SentencePiece model: piece {i} ({:?}): score is NaN or Inf ({})",
            vocab.pieces[i], vocab.scores[i]
        )));
    }
    let matchable = |i: usize| {
        matches!(vocab.types[i], PieceType::Normal | PieceType::UserDefined | PieceType::Unused)
            && !vocab.pieces[i].contains('\0')
    };
    if !(0..vocab.len()).any(matchable) {
        return Err(Error::format(
            "SentencePiece model: no entry is found in the trie (no normal pieces)",
        ));
    }
    let pieces = (0..vocab.len())
        .map(|i| (vocab.pieces[i].clone(), vocab.scores[i], vocab.types[i]))
        .collect();
    Unigram::from_sentencepiece(pieces, vocab.unk_id as usize, false)
}

/// unigram_model.cc's `EncodeOptimized` (the default encoder): the Viterbi of the normalized
/// `text`, in sentencepiece's arithmetic (float sums, rebased when they pass
/// ±[`SENTENCEPIECE_SCORE_RESET`]), so that ties and near-ties resolve the same way. A long text
/// whose pieces stay in words runs in chunks of whole words ([`CHUNK_BYTES`]), each from the
/// score the previous one ended with: the best path passes through every word start, so this
/// is the whole text's search, in bounded memory.
pub fn encode_unigram(vocab: &Vocab, model: &Unigram, text: &str) -> Result<Vec<Span>> {
    if !vocab.pieces_stay_in_words || text.len() <= CHUNK_BYTES {
        return Ok(to_spans(model.best_segmentation(text)?));
    }
    let (mut best, mut chunk, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    let mut score: Score = 0.0;
    for (start, end) in super::processor::chunk_at_word_starts(text.as_bytes(), CHUNK_BYTES) {
        chunk.clear();
        let decisions = &mut Decisions::default();
        let bytes = &text.as_bytes()[start..end];
        score = model.viterbi::<Score, false>(bytes, score, &mut best, decisions, &mut chunk)?;
        spans.extend(chunk.iter().map(|&(id, s, e)| Span { start: s + start, end: e + start, id }));
    }
    Ok(spans)
}

/// A core segmentation as spans.
pub fn to_spans(segmentation: Segmentation) -> Vec<Span> {
    segmentation.into_iter().map(|(id, start, end)| Span { start, end, id }).collect()
}

/// The path-score arithmetic of sentencepiece's Viterbi: float sums.
type Score = f32;

/// The bytes of whole words [`encode_unigram`] searches at a time in a long text (a memory
/// bound only: the chunks carry the score on, so the result is the whole text's search).
///
/// sentencepiece 0.2.3 (unigram_model.cc, `EncodeOptimized`) sums the path scores in float
/// and, at any character whose best score is beyond ±`kScoreResetThreshold` (1e5), subtracts
/// that score from the positions reached so far and goes on from 0, mid-word or not; the Viterbi
/// does the same ([`SENTENCEPIECE_SCORE_RESET`]).
pub const CHUNK_BYTES: usize = 1 << 16;

/// A word's [`exact_prefix_limit`] rounded down to a power of two, as a byte: 0 for none,
/// else the limit is 2^(code − 128) (what the word cache stores per word; limits above 2^127
/// are stored as 2^127).
fn limit_code(limit: f64) -> u8 {
    if limit.is_nan() || limit < f64::MIN_POSITIVE {
        return 0;
    }
    // floor(log2(limit)) for a normal positive double is its unbiased exponent.
    let exponent = ((limit.to_bits() >> 52) & 0x7FF) as i32 - 1023;
    (exponent + 128).clamp(1, 255) as u8
}

/// The bound a [`limit_code`] stands for (exact: a power of two).
fn limit_of_code(code: u8) -> f64 {
    match code {
        // 2^-127 and below: treated as no limit at all.
        0 | 1 => -1.0,
        _ => 2f64.powi(i32::from(code) - 128),
    }
}

/// Whether a vocabulary can use [`encode_unigram_words`]: no piece crosses a word start, and
/// ids fit the cache's packed tokens ([`unigram_cache::ID_BITS`]).
pub fn unigram_words_cacheable(vocab: &Vocab) -> bool {
    vocab.pieces_stay_in_words && vocab.len() < (1 << unigram_cache::ID_BITS)
}

/// The score a cached word's path (packed tokens) adds to `score`, in the Viterbi's arithmetic.
#[inline]
fn path_score(model: &Unigram, mut score: Score, tokens: &[u32]) -> Score {
    for &token in tokens {
        let id = token & unigram_cache::ID_MASK;
        let length = (token >> unigram_cache::ID_BITS) as usize;
        score += model.match_score::<Score>(id, length).unwrap_or(Score::NAN);
    }
    score
}

/// Reusable buffers of [`encode_unigram_words`].
#[derive(Default)]
pub struct UnigramBuffers {
    best: Vec<Cell<Score>>,
    spans: Segmentation,
    packed: Vec<u32>,
}

/// The ids of the Unigram Viterbi of `text`, appended to `out` (as [`IdWriter`] gives them),
/// word by word through `cache` (this model's word cache, as this thread sees it), for
/// vocabularies that pass [`unigram_words_cacheable`]: no piece crosses a word start, so every
/// path passes through every word start, and the whole text's best path is each word's best
/// path from the score the text reached there. A word's path is cached with the limit of
/// [`exact_prefix_limit`]; it is used when the score reached is within it, and otherwise the
/// word's Viterbi runs from that score, so the result is [`encode_unigram`]'s exactly,
/// near-ties included.
pub fn encode_unigram_words(
    vocab: &Vocab,
    model: &Unigram,
    text: &[u8],
    cache: &mut CacheView<'_>,
    buffers: &mut UnigramBuffers,
    out: &mut Vec<u32>,
) -> Result<()> {
    /// Words whose cache lines are prefetched together before any of them is looked up
    /// ([`CacheView::prefetch`]; a sliding window 8 words ahead was no faster).
    const BATCH: usize = 16;
    let ids = IdWriter::new(vocab);
    // A word of n bytes moves the scores by at most n × this (the slack covers the roundings).
    let per_byte = model.score_per_byte_bound().unwrap_or(f64::INFINITY) * (1.0 + 1.0 / 1024.0);
    let mut line = LineEncoder { vocab, model, buffers, ids, score: 0.0, per_byte };
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
            return Ok(());
        }
        for &(start, end, key) in &batch[..n] {
            line.word(cache, &text[start..end], key, out)?;
        }
    }
}

/// The state of [`encode_unigram_words`] along one text.
struct LineEncoder<'a> {
    vocab: &'a Vocab,
    model: &'a Unigram,
    buffers: &'a mut UnigramBuffers,
    ids: IdWriter<'a>,
    /// The score of the best path up to the current word, as the whole-text Viterbi has it.
    score: Score,
    /// A bound on the |score| a match adds per byte ([`Unigram::score_per_byte_bound`]).
    per_byte: f64,
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
    ) -> Result<()> {
        // A word whose scores may pass the reset threshold is searched from the score reached
        // (which rebases them as sentencepiece does); the others never rebase, so their cached
        // paths hold.
        let reach = f64::from(self.score.abs()) + word.len() as f64 * self.per_byte + 1.0;
        let may_rebase = reach.is_nan() || reach >= SENTENCEPIECE_SCORE_RESET;
        if word.len() >= MAX_CACHED_WORD_BYTES || may_rebase {
            return self.viterbi_from_score(word, out);
        }
        if let Some(cached) = cache.get_keyed(word, key) {
            return self.cached(word, cached.tokens, cached.limit_code, cached.has_unk, out);
        }
        let UnigramBuffers { best, spans, packed } = &mut *self.buffers;
        spans.clear();
        let mut decisions = Decisions::default();
        self.model.viterbi::<Score, true>(word, 0.0, best, &mut decisions, spans)?;
        packed.clear();
        packed.extend(
            spans
                .iter()
                .map(|&(id, start, end)| id | ((end - start) as u32) << unigram_cache::ID_BITS),
        );
        let has_unk = spans.iter().any(|s| s.0 == self.vocab.unk_id);
        let code = limit_code(exact_prefix_limit::<Score>(&decisions));
        cache.insert(word, packed, code, has_unk);
        let packed = std::mem::take(&mut self.buffers.packed);
        let result = self.cached(word, &packed, code, has_unk, out);
        self.buffers.packed = packed;
        result
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
    ) -> Result<()> {
        if f64::from(self.score.abs()) < limit_of_code(limit_code) {
            self.ids.push_packed(out, word, tokens, has_unk);
            self.score = path_score(self.model, self.score, tokens);
            Ok(())
        } else {
            self.viterbi_from_score(word, out)
        }
    }

    /// The Viterbi of `word` from the current score: for words that cannot be cached or
    /// whose cached path may not be exact at this score.
    fn viterbi_from_score(&mut self, word: &[u8], out: &mut Vec<u32>) -> Result<()> {
        let UnigramBuffers { best, spans, .. } = &mut *self.buffers;
        spans.clear();
        let decisions = &mut Decisions::default();
        self.score =
            self.model.viterbi::<Score, false>(word, self.score, best, decisions, spans)?;
        for &(id, start, end) in spans.iter() {
            self.ids.push(out, id, &word[start..end]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sentencepiece::proto::{ModelProto, SentencePiece};
    use crate::sentencepiece::unigram_cache::{LongWords, WordCache};
    use rand::{Rng, SeedableRng};
    use rustc_hash::FxHashMap;

    /// A Unigram vocabulary over "abc" whose multi-letter pieces score within a few f32 ulps of
    /// the sum of their parts, so that which segmentation wins depends on rounding, and so on
    /// the score a word is reached with.
    fn near_tie_vocab(rng: &mut rand::rngs::StdRng) -> (Vocab, Unigram) {
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
        let model = unigram_model(&vocab).expect("model");
        (vocab, model)
    }

    #[test]
    fn cached_unigram_words_match_the_whole_text_viterbi_at_near_ties() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut naive_differs = 0;
        for round in 0..60 {
            let (vocab, model) = near_tie_vocab(&mut rng);
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
                let whole = encode_unigram(&vocab, &model, &text).expect("encode");
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
                        &model,
                        text.as_bytes(),
                        &mut cache.view(&mut long_words),
                        &mut buffers,
                        &mut out,
                    )
                    .expect("encode");
                    assert_eq!(out, whole_ids, "{text}");
                }
                let naive: Vec<Span> = independent_words(text.as_bytes())
                    .flat_map(|(s, e)| {
                        encode_unigram(&vocab, &model, &text[s..e])
                            .expect("encode")
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
        for limit in [1e-37, 1e-30, 0.75, 1.0, 3.0, 1e6, 1e38, 3e38, f64::INFINITY] {
            let bound = limit_of_code(limit_code(limit));
            assert!(bound <= limit && bound > 0.0, "{limit} -> {bound}");
            assert!(bound * 2.0 > limit || limit > 1.7e38, "{limit} -> {bound}");
        }
        for limit in [-1.0, 0.0, f64::NAN, 1e-40] {
            assert!(limit_of_code(limit_code(limit)) < 0.0);
        }
    }
}
