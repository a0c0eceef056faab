//! The Unigram model: a vocabulary of pieces with log-probabilities; a string is cut into the
//! most probable sequence of pieces (Viterbi, in `viterbi`), or into one of the n best, or into
//! a sampled one (on the lattice, `lattice`).
//!
//! Two scoring rules, chosen at construction:
//! * **tokenizers** ([`Unigram::from`]): `f64` scores; an unknown character costs
//!   `min(all scores) - 10`; runs of unknown characters are fused into one unk token; with
//!   `byte_fallback` an unknown run becomes `<0xXX>` byte tokens when all exist.
//! * **sentencepiece** ([`Unigram::from_sentencepiece`]): `f32` arithmetic; piece types as in a
//!   `.model` file: only normal, user-defined and unused pieces without a NUL byte are in the trie
//!   (as in sentencepiece's C-string keyed one), unused pieces never match, a user-defined piece
//!   scores `length × max_score - 0.1` (length in bytes for Viterbi, in characters for n-best and
//!   sampling, exactly as `unigram_model.cc`), unknown characters cost `min(normal scores) - 10`.
//!   `tokenize` fuses runs of unknown characters into one unk token (or their bytes with byte
//!   fallback), as sentencepiece's processor does;
//!   segmentations ([`Unigram::nbest`], [`Unigram::sample`], ...) keep one unk per character.
//!
//! Ties: among equal-scoring segmentations the one whose last piece starts earliest (the
//! longest last piece) wins, at every position — the rule of both libraries.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use educe::Educe;
use rustc_hash::FxHashMap;

use super::lattice::{pick_scored, Lattice, Real};
use crate::error::{Error, Result};
use crate::tokenizer::{Model, Token, TokenSink};
use crate::utils::atomic::write_atomic;
use crate::utils::darts::DoubleArray;
use crate::utils::shared_rng::SharedRng;
use crate::utils::vocabulary::debug_size;

/// The cost of an unknown character below the lowest piece score (both libraries).
pub const UNK_PENALTY: f64 = 10.0;

/// The type of a piece: sentencepiece's `ModelProto.SentencePiece.Type`, with its numbering (the
/// `.model` protobuf reads and writes this enum; `tokenizers`' rules treat every piece as normal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PieceType {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
}

/// sentencepiece's scoring data (see the module docs).
#[derive(Debug, Clone, PartialEq)]
struct SentencePieceRules {
    kinds: Vec<PieceType>,
    min_score: f32,
    max_score: f32,
}

/// A segmentation: `(id, byte start, byte end)` per piece, left to right.
pub type Segmentation = Vec<(u32, usize, usize)>;

/// How `Unigram::sample_and_score` samples (sentencepiece's `SampleEncodeAndScore` arguments).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredSampling {
    /// The inverse temperature the piece scores are multiplied by.
    pub inv_theta: f64,
    /// How many segmentations to draw.
    pub samples: usize,
    /// Distinct segmentations (sentencepiece's `wor`), else independent draws.
    pub without_replacement: bool,
    /// The best segmentation first (only without replacement).
    pub include_best: bool,
}

/// Finds every vocabulary piece that starts a string: the crate's double-array trie over the
/// pieces' bytes, plus the rare pieces that contain a NUL byte, which a double array cannot store.
#[derive(Clone)]
pub(super) struct PieceTrie {
    trie: Option<DoubleArray>,
    nul_pieces: Vec<(Vec<u8>, u32)>,
}

impl PieceTrie {
    /// `keys` must be unique.
    fn build(keys: Vec<(&[u8], u32)>) -> Result<Self> {
        let (nul_pieces, keys): (Vec<_>, Vec<_>) =
            keys.into_iter().filter(|(k, _)| !k.is_empty()).partition(|(k, _)| k.contains(&0));
        let trie = if keys.is_empty() { None } else { Some(DoubleArray::build(&keys)?) };
        let mut nul_pieces: Vec<_> = nul_pieces.into_iter().map(|(k, v)| (k.to_vec(), v)).collect();
        nul_pieces.sort_by_key(|(k, _)| k.len());
        Ok(PieceTrie { trie, nul_pieces })
    }

    /// Calls `f(id, byte length)` for each piece that is a prefix of `text`, shortest first.
    #[inline]
    pub(super) fn prefixes(&self, text: &[u8], mut f: impl FnMut(u32, usize)) {
        if self.nul_pieces.is_empty() {
            if let Some(trie) = &self.trie {
                trie.common_prefix_search(text, f);
            }
            return;
        }
        let mut found: Vec<(usize, u32)> = vec![];
        if let Some(trie) = &self.trie {
            trie.common_prefix_search(text, |id, len| found.push((len, id)));
        }
        found.extend(
            self.nul_pieces
                .iter()
                .filter(|(k, _)| text.starts_with(k))
                .map(|(k, id)| (k.len(), *id)),
        );
        found.sort_by_key(|&(len, _)| len);
        for (len, id) in found {
            f(id, len);
        }
    }
}

/// A Unigram model (see the module docs).
///
/// Equal vocabulary and options make equal models (as `tokenizers`: vocab, unk_id, alpha,
/// nbest_size); the tables built from the vocabulary and the generator's state do not count. A
/// clone gets a copy of the sampling generator's state.
#[derive(Clone, Educe)]
#[educe(PartialEq, Debug)]
pub struct Unigram {
    #[educe(Debug(method(debug_size)))]
    vocab: Vec<(String, f64)>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    token_to_ids: FxHashMap<String, u32>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    pub(super) trie: PieceTrie,
    /// Per id, the score the Viterbi adds for a match, in each arithmetic: the piece's score,
    /// or NaN (unused: never matches) or +inf (user-defined: scored by its length) with
    /// sentencepiece's rules. A non-finite value sends the Viterbi to
    /// [`Unigram::viterbi_piece_score`], so the hot loop reads one dense number per match.
    #[educe(PartialEq(ignore), Debug(ignore))]
    pub(super) match_scores_f32: Vec<f32>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    pub(super) match_scores_f64: Vec<f64>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    min_score: f64,
    unk_id: Option<usize>,
    byte_fallback: bool,
    #[educe(PartialEq(ignore), Debug(ignore))]
    byte_ids: Box<[Option<u32>; 256]>,
    #[educe(Debug(ignore))]
    spm: Option<SentencePieceRules>,
    /// Sampling in `tokenize` (not serialized, as in `tokenizers`): temperature.
    #[educe(Debug(ignore))]
    pub alpha: Option<f64>,
    /// Sampling in `tokenize`: draw from the n best (`Some(n)`, n > 0) or from the whole lattice.
    #[educe(Debug(ignore))]
    pub nbest_size: Option<usize>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    rng: SharedRng,
}

impl Default for Unigram {
    /// A model with only `<unk>` (id 0), as `tokenizers`' `Unigram()`.
    fn default() -> Self {
        Unigram::from(vec![("<unk>".to_string(), 0.0)], Some(0), false)
            .expect("a one-piece vocabulary is valid")
    }
}

impl Unigram {
    /// A model with `tokenizers`' rules. `unk_id` must index `vocab` when given.
    pub fn from(
        vocab: Vec<(String, f64)>,
        unk_id: Option<usize>,
        byte_fallback: bool,
    ) -> Result<Self> {
        Self::build(vocab, unk_id, byte_fallback, None)
    }

    /// A model with sentencepiece's rules: `pieces` are `(piece, score, type)` by id and
    /// `unk_id` is the id of the unknown piece.
    pub fn from_sentencepiece(
        pieces: Vec<(String, f32, PieceType)>,
        unk_id: usize,
        byte_fallback: bool,
    ) -> Result<Self> {
        let kinds: Vec<PieceType> = pieces.iter().map(|p| p.2).collect();
        let normal = || pieces.iter().filter(|p| p.2 == PieceType::Normal).map(|p| p.1);
        let min_score = normal().fold(f32::MAX, f32::min);
        let max_score = normal().fold(f32::MIN_POSITIVE, f32::max);
        let vocab = pieces.into_iter().map(|(p, s, _)| (p, s as f64)).collect();
        Self::build(
            vocab,
            Some(unk_id),
            byte_fallback,
            Some(SentencePieceRules { kinds, min_score, max_score }),
        )
    }

    fn build(
        vocab: Vec<(String, f64)>,
        unk_id: Option<usize>,
        byte_fallback: bool,
        spm: Option<SentencePieceRules>,
    ) -> Result<Self> {
        if let Some(unk) = unk_id {
            if vocab.is_empty() {
                return Err(Error::InvalidArgument(
                    "Unigram: the vocabulary is empty but unk_id needs a piece".into(),
                ));
            }
            if unk >= vocab.len() {
                return Err(Error::InvalidArgument(format!(
                    "Unigram: unk_id {unk} is not in the vocabulary ({} pieces)",
                    vocab.len()
                )));
            }
        }
        if vocab.len() >= (1 << 31) {
            return Err(Error::InvalidArgument("Unigram: too many pieces".into()));
        }
        let mut token_to_ids = FxHashMap::default();
        for (id, (piece, _)) in vocab.iter().enumerate() {
            token_to_ids.insert(piece.clone(), id as u32);
        }
        let in_trie = |id: usize| match &spm {
            None => true,
            Some(rules) => matches!(
                rules.kinds[id],
                PieceType::Normal | PieceType::UserDefined | PieceType::Unused
            ),
        };
        // By piece, the last id wins (as in `token_to_ids`). sentencepiece's rules leave pieces
        // with a NUL byte out, as its own (C-string keyed) trie does.
        let mut keys: FxHashMap<&[u8], u32> = FxHashMap::default();
        for (id, (piece, _)) in vocab.iter().enumerate() {
            if in_trie(id) && !(spm.is_some() && piece.contains('\0')) {
                keys.insert(piece.as_bytes(), id as u32);
            }
        }
        let trie = PieceTrie::build(keys.into_iter().collect())?;
        let match_scores_f64: Vec<f64> = vocab
            .iter()
            .enumerate()
            .map(|(id, (_, score))| match spm.as_ref().map(|rules| rules.kinds[id]) {
                Some(PieceType::Unused) => f64::NAN,
                Some(PieceType::UserDefined) => f64::INFINITY,
                _ => *score,
            })
            .collect();
        let match_scores_f32 = match_scores_f64.iter().map(|&s| s as f32).collect();
        let min_score = match &spm {
            None => vocab.iter().map(|v| v.1).fold(f64::INFINITY, f64::min),
            Some(rules) => rules.min_score as f64,
        };
        let mut byte_ids = Box::new([None; 256]);
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            *slot = token_to_ids.get(&format!("<0x{b:02X}>")).copied();
        }
        Ok(Unigram {
            vocab,
            token_to_ids,
            trie,
            match_scores_f32,
            match_scores_f64,
            min_score,
            unk_id,
            byte_fallback,
            byte_ids,
            spm,
            alpha: None,
            nbest_size: None,
            rng: SharedRng::new(None),
        })
    }

    pub fn vocab(&self) -> &[(String, f64)] {
        &self.vocab
    }
    pub fn unk_id(&self) -> Option<usize> {
        self.unk_id
    }
    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }
    /// The lowest piece score (what unknown characters are priced from).
    pub fn min_score(&self) -> f64 {
        self.min_score
    }
    pub fn score(&self, id: u32) -> Option<f64> {
        self.vocab.get(id as usize).map(|v| v.1)
    }

    /// Re-seeds the sampling generator (ChaCha8): the same seed gives the same samples.
    pub fn set_seed(&self, seed: u64) {
        self.rng.reseed(seed)
    }

    /// A seed drawn from the model's generator (for one-off reproducible generators).
    pub fn next_seed(&self) -> u64 {
        self.rng.next_seed()
    }

    /// The score of an unknown character (sentencepiece's rules: a float, `min_score - 10`
    /// rounded to `f32` as sentencepiece computes it).
    pub(super) fn unk_score(&self) -> f64 {
        match self.spm {
            Some(_) => (self.min_score as f32 - UNK_PENALTY as f32) as f64,
            None => self.min_score - UNK_PENALTY,
        }
    }

    /// With sentencepiece's rules, a bound on the |score| a match adds per byte it covers (a
    /// normal piece's score, the unk score, a user-defined piece's length-scaled score): what
    /// the path scores of a stretch of text can move by ([`super::SENTENCEPIECE_SCORE_RESET`]).
    /// `None` with `tokenizers`' rules.
    pub fn score_per_byte_bound(&self) -> Option<f64> {
        let rules = self.spm.as_ref()?;
        let normal = f64::from(rules.min_score.abs().max(rules.max_score.abs()));
        Some((normal + 0.1).max(self.unk_score().abs()))
    }

    /// Whether the model follows sentencepiece's rules (f32 arithmetic, piece types).
    pub(super) fn is_sentencepiece(&self) -> bool {
        self.spm.is_some()
    }

    /// The score a piece matched over `length` bytes gets in the Viterbi, `None` when it must
    /// not match (unused): sentencepiece's `EncodeOptimized` prices a user-defined piece
    /// `length × max_score − 0.1` in double, rounded to its float cell.
    #[inline]
    pub(super) fn viterbi_piece_score<T: Real>(&self, id: u32, length: usize) -> Option<T> {
        match &self.spm {
            Some(rules) if rules.kinds[id as usize] == PieceType::UserDefined => {
                let score = (length as f64 * rules.max_score as f64 - 0.1) as f32;
                Some(T::from_f64(score as f64))
            }
            _ => self.piece_score(id, length),
        }
    }

    /// The score a lattice node gets (sentencepiece's user-defined rule uses `length`, in
    /// characters, in float arithmetic); `None` when it must not match (unused).
    #[inline]
    fn piece_score<T: Real>(&self, id: u32, length: usize) -> Option<T> {
        match &self.spm {
            None => Some(T::from_f64(self.vocab[id as usize].1)),
            Some(rules) => match rules.kinds[id as usize] {
                PieceType::Unused => None,
                PieceType::UserDefined => {
                    Some(T::from_f64((length as f32 * rules.max_score - 0.1) as f64))
                }
                _ => Some(T::from_f64(self.vocab[id as usize].1)),
            },
        }
    }

    /// `tokenizers`' exact message (its test suite compares it), without the character.
    pub(super) fn missing_unk() -> Error {
        Error::InvalidArgument("Encountered an unknown token but `unk_id` is missing".into())
    }

    /// Fills `lattice` with every piece occurrence in `text` (sentencepiece's PopulateNodes).
    pub fn populate<T: Real>(&self, text: &str, lattice: &mut Lattice<T>) -> Result<()> {
        lattice.reset(text);
        let unk_score = T::from_f64(self.unk_score());
        let bytes = text.as_bytes();
        let starts: Vec<usize> = lattice.char_starts().to_vec();
        for pos in 0..lattice.len() {
            let begin = starts[pos];
            let mut has_single = false;
            let mut chars = 0;
            self.trie.prefixes(&bytes[begin..], |id, len| {
                while starts[pos + chars] < begin + len {
                    chars += 1;
                }
                let Some(score) = self.piece_score::<T>(id, chars) else { return };
                lattice.insert(pos, chars, score, id);
                has_single |= chars == 1;
            });
            if !has_single {
                let unk = self.unk_id.ok_or_else(Self::missing_unk)?;
                lattice.insert(pos, 1, unk_score, unk as u32);
            }
        }
        lattice.finish();
        Ok(())
    }

    fn lattice<T: Real>(&self, text: &str) -> Result<Lattice<T>> {
        let mut lattice = Lattice::new();
        self.populate(text, &mut lattice)?;
        Ok(lattice)
    }

    fn path_to_segmentation<T: Real>(lattice: &Lattice<T>, path: &[u32]) -> Segmentation {
        path.iter()
            .map(|&n| {
                let (s, e) = lattice.byte_span(n);
                (lattice.node(n).id, s, e)
            })
            .collect()
    }

    /// The `n` best segmentations of `text`, best first, with their scores (sentencepiece's
    /// NBestEncode: `n` is clamped to 1..=1024; for one, the Viterbi path with score 0).
    pub fn nbest(&self, text: &str, n: usize) -> Result<Vec<(Segmentation, f64)>> {
        self.nbest_until(text, n, None)
    }

    /// [`Unigram::nbest`] that falls back to the best path alone once `deadline` has passed
    /// (sentencepiece's n-best timeout).
    pub fn nbest_until(
        &self,
        text: &str,
        n: usize,
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<(Segmentation, f64)>> {
        if text.is_empty() {
            return Ok(vec![(vec![], 0.0)]);
        }
        let n = n.clamp(1, 1024);
        if n == 1 {
            return Ok(vec![(self.best_segmentation(text)?, 0.0)]);
        }
        let found = match self.spm {
            Some(_) => self.nbest_in::<f32>(text, n, deadline)?,
            None => self.nbest_in::<f64>(text, n, deadline)?,
        };
        match found {
            Some(found) => Ok(found),
            None => Ok(vec![(self.best_segmentation(text)?, 0.0)]),
        }
    }

    fn nbest_in<T: Real>(
        &self,
        text: &str,
        n: usize,
        deadline: Option<std::time::Instant>,
    ) -> Result<Option<Vec<(Segmentation, f64)>>> {
        let mut lattice = self.lattice::<T>(text)?;
        let Some(paths) = lattice.nbest_until(n, deadline) else { return Ok(None) };
        Ok(Some(
            paths
                .into_iter()
                .map(|(path, score)| (Self::path_to_segmentation(&lattice, &path), score.to_f64()))
                .collect(),
        ))
    }

    /// A segmentation drawn from the whole lattice with P ∝ exp(`inv_theta` × score)
    /// (forward filtering, backward sampling).
    pub fn sample(
        &self,
        text: &str,
        inv_theta: f64,
        rng: &mut impl rand::Rng,
    ) -> Result<Segmentation> {
        if text.is_empty() {
            return Ok(vec![]);
        }
        match self.spm {
            Some(_) => {
                let lattice = self.lattice::<f32>(text)?;
                Ok(Self::path_to_segmentation(&lattice, &lattice.sample(inv_theta as f32, rng)))
            }
            None => {
                let lattice = self.lattice::<f64>(text)?;
                Ok(Self::path_to_segmentation(&lattice, &lattice.sample(inv_theta, rng)))
            }
        }
    }

    /// sentencepiece's SampleEncode rule: `nbest_size` 1 or `alpha` 0 → the best path;
    /// `nbest_size` > 1 → from the n best; `nbest_size` < 0 (or 0) → from the whole lattice.
    pub fn sample_encode(
        &self,
        text: &str,
        nbest_size: i64,
        alpha: f64,
        rng: &mut impl rand::Rng,
    ) -> Result<Segmentation> {
        if nbest_size == 1 || alpha == 0.0 {
            self.best_segmentation(text)
        } else if nbest_size > 1 {
            let nbest = self.nbest(text, nbest_size.min(1024) as usize)?;
            Ok(pick_scored(nbest, alpha, rng).unwrap_or_default())
        } else {
            self.sample(text, alpha, rng)
        }
    }

    /// sentencepiece's `SampleEncodeAndScore`: `how.samples` segmentations of `text`, each with
    /// a score. With replacement (`without_replacement` false): independent draws from the whole
    /// lattice, each scored by its log-probability `inv_theta × score − log Z`. Without
    /// replacement: distinct paths by Gumbel top-k, each scored by the log of its inclusion
    /// probability; with `include_best` the best path comes first, with score 0. Empty for an
    /// empty text, or for `include_best` with replacement (as sentencepiece).
    pub fn sample_and_score(
        &self,
        text: &str,
        how: &ScoredSampling,
        rng: &mut impl rand::Rng,
    ) -> Result<Vec<(Segmentation, f64)>> {
        if text.is_empty() || (how.include_best && !how.without_replacement) {
            return Ok(vec![]);
        }
        match self.spm {
            Some(_) => self.sample_and_score_in::<f32>(text, how, rng),
            None => self.sample_and_score_in::<f64>(text, how, rng),
        }
    }

    fn sample_and_score_in<T: Real>(
        &self,
        text: &str,
        how: &ScoredSampling,
        rng: &mut impl rand::Rng,
    ) -> Result<Vec<(Segmentation, f64)>> {
        let &ScoredSampling { inv_theta, samples, without_replacement, include_best } = how;
        let mut lattice = self.lattice::<T>(text)?;
        let inv_theta = T::from_f64(inv_theta);
        let log_z = lattice.forward(inv_theta)[1];
        let mut results: Vec<(Vec<u32>, T)> = vec![];
        if include_best {
            results.push((lattice.viterbi().0, T::ZERO));
        }
        let lattice = lattice;
        let log_prob = |path: &[u32]| {
            path.iter().fold(T::ZERO, |sum, &n| sum + inv_theta * lattice.node(n).score) - log_z
        };
        if without_replacement {
            // k + 1 draws: the (k+1)-th perturbed score is the threshold of the inclusion
            // probabilities.
            let mut drawn = lattice.nbest_sampled(samples + 1, inv_theta, rng);
            if include_best {
                match drawn.iter().position(|(path, _)| *path == results[0].0) {
                    Some(i) => drop(drawn.remove(i)),
                    None => drop(drawn.pop()),
                }
            }
            if let Some((_, kappa)) = drawn.pop() {
                for (path, _) in drawn {
                    let score = log_prob(&path);
                    results.push((path, score));
                }
                for (_, score) in results.iter_mut().filter(|(_, s)| *s != T::ZERO) {
                    *score =
                        T::from_f64(log_inclusion_probability(score.to_f64() - kappa.to_f64()));
                }
            }
        } else {
            while results.len() < samples {
                let path = lattice.sample(inv_theta, rng);
                let score = log_prob(&path);
                results.push((path, score));
            }
        }
        Ok(results
            .into_iter()
            .map(|(path, score)| (Self::path_to_segmentation(&lattice, &path), score.to_f64()))
            .collect())
    }

    /// Entropy of the segmentation distribution of `text` at inverse temperature `inv_theta`.
    pub fn entropy(&self, text: &str, inv_theta: f64) -> Result<f64> {
        // sentencepiece takes θ as a float. The forward sums are in f64 under both rules: in
        // f32 their rounding swamps long texts (see `Lattice::entropy`).
        let inv_theta = if self.spm.is_some() { inv_theta as f32 as f64 } else { inv_theta };
        Ok(self.lattice::<f64>(text)?.entropy(inv_theta))
    }

    /// log P(text) under the model: the log-sum over all segmentations (what training maximizes).
    pub fn log_likelihood(&self, text: &str) -> Result<f64> {
        if text.is_empty() {
            return Ok(0.0);
        }
        let lattice = self.lattice::<f64>(text)?;
        let alpha = lattice.forward(1.0);
        Ok(alpha[1])
    }

    /// The segmentation `tokenize` uses: the best path, or a sample when `alpha` is set (and
    /// non-zero), following `tokenizers`' rule.
    fn segmentation_for_tokenize(&self, text: &str) -> Result<Segmentation> {
        match self.alpha {
            Some(alpha) if alpha != 0.0 => {
                let mut rng = self.rng.lock();
                match self.nbest_size {
                    Some(n) if n > 0 => {
                        Ok(pick_scored(self.nbest(text, n)?, alpha, &mut *rng).unwrap_or_default())
                    }
                    _ => self.sample(text, alpha, &mut *rng),
                }
            }
            _ => self.best_segmentation(text),
        }
    }

    /// Calls `emit(id, (start, end))` per token with `tokenizers`' output rules: consecutive
    /// unknown pieces are fused; a fused run found in the vocabulary gets that id; otherwise,
    /// with byte fallback and all its bytes in the vocabulary, one `<0xXX>` token per byte
    /// (each spanning the whole run); otherwise the unk id.
    pub fn tokenize_with(&self, text: &str, mut emit: impl TokenSink) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let path = self.segmentation_for_tokenize(text)?;
        let unk = self.unk_id.map(|u| u as u32);
        let mut i = 0;
        while i < path.len() {
            let (id, start, mut end) = path[i];
            i += 1;
            if Some(id) != unk {
                emit(id, (start, end));
                continue;
            }
            while i < path.len() && Some(path[i].0) == unk {
                end = path[i].2;
                i += 1;
            }
            self.emit_unknown(&text[start..end], start, &mut emit);
        }
        Ok(())
    }

    fn emit_unknown(&self, run: &str, start: usize, emit: &mut impl FnMut(u32, (usize, usize))) {
        let span = (start, start + run.len());
        // tokenizers looks the fused run up; sentencepiece's processor never does.
        if let Some(&id) = self.token_to_ids.get(run).filter(|_| self.spm.is_none()) {
            return emit(id, span);
        }
        if self.byte_fallback {
            let ids: Option<Vec<u32>> = run.bytes().map(|b| self.byte_ids[b as usize]).collect();
            if let Some(ids) = ids {
                return ids.into_iter().for_each(|id| emit(id, span));
            }
        }
        if let Some(unk) = self.unk_id {
            emit(unk as u32, span);
        }
    }

    /// Writes the model as `tokenizers`' tokenizer.json model section.
    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// Reads a model written by [`save`](Model::save) (a JSON Unigram model).
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::from(e).in_file(path))
    }
}

/// log P(Gumbel(x) > 0) = log(1 − exp(−exp(x))): the inclusion probability of a path whose
/// log-probability lies `x` above the threshold of a Gumbel top-k draw (a series for x ≤ −10,
/// where the closed form loses precision; as sentencepiece).
fn log_inclusion_probability(x: f64) -> f64 {
    let y = x.exp();
    if x <= -10.0 {
        x - y / 2.0 + y.powi(2) / 24.0 - y.powi(4) / 2880.0
    } else {
        (-(-y).exp_m1()).ln()
    }
}

impl Model for Unigram {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let mut tokens = vec![];
        self.tokenize_with(sequence, |id, (s, e)| {
            // Unknown runs keep their text; every other token is its piece (byte tokens: `<0xXX>`).
            let value = match self.vocab.get(id as usize) {
                Some(v) if Some(id as usize) != self.unk_id => v.0.clone(),
                _ => sequence[s..e].to_string(),
            };
            tokens.push(Token::new(id, value, (s, e)));
        })?;
        Ok(tokens)
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.token_to_ids.get(token).copied()
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        self.vocab.get(id as usize).map(|v| v.0.clone())
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        self.token_to_ids.iter().map(|(k, &v)| (k.clone(), v)).collect()
    }
    fn get_vocab_size(&self) -> usize {
        self.vocab.len()
    }
    /// Writes `unigram.json` (or `{prefix}-unigram.json`), as `tokenizers`.
    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        let name = match prefix {
            Some(p) => format!("{p}-unigram.json"),
            None => "unigram.json".to_string(),
        };
        let path = folder.join(name);
        write_atomic(&path, self.to_json()?.as_bytes())?;
        Ok(vec![path])
    }
}
