//! The one Unigram Viterbi: the best segmentation of a string over byte positions, keeping only
//! the best path ending at each position (sentencepiece's `EncodeOptimized`; the same search as
//! `tokenizers`' `encode_optimized`), without building a lattice.
//!
//! The score arithmetic is the type parameter `T` ([`Real`], monomorphized): `f32` sums the
//! path scores in single precision, as `sentencepiece` does (rebased to 0 when they pass
//! ±[`SENTENCEPIECE_SCORE_RESET`]); `f64` in double, as `tokenizers`. Ties keep the
//! earlier-found candidate (the leftmost start, then the shorter piece), the rule of both
//! libraries. With `TRACK` the search also records how close its decisions were
//! ([`Decisions`]), which is what lets a word's path be cached and reused exactly, although the
//! rounding of the sums depends on the score the word is reached with ([`exact_prefix_limit`]).
//!
//! The forward pass ([`best_path`]) takes its candidates from a [`Candidates`] source
//! (monomorphized): the model's trie walk here, the Unigram trainer's precomputed edges in
//! `trainers::unigram`, so both keep the same tie rule ([`relax`]).
use super::lattice::Real;
use super::model::{Segmentation, Unigram};
use crate::error::Result;
use crate::utils::offsets::utf8_len;

/// The best path ending at one byte position: its last piece and where that starts.
#[derive(Clone, Copy)]
pub struct Cell<T> {
    pub(crate) id: u32,
    score: T,
    pub(crate) start: usize,
}

const UNSET: usize = usize::MAX;

/// sentencepiece's `kScoreResetThreshold` (unigram_model.cc, `EncodeOptimized`, 0.2.3): when the
/// best score at the start of the next character is beyond ±this, it is subtracted (in float)
/// from every reached position from there to the farthest end found so far, and the search
/// goes on from 0 ([`rebase`]). Only with sentencepiece's rules; `tokenizers` never rebases.
pub const SENTENCEPIECE_SCORE_RESET: f64 = 100_000.0;

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
    fn candidate<T: Real>(&mut self, candidate: T, current: Option<T>) {
        if !candidate.is_finite() {
            self.min_margin = 0.0;
            return;
        }
        let candidate = candidate.to_f64();
        self.max_abs = self.max_abs.max(candidate.abs());
        if let Some(current) = current {
            let margin = (candidate - current.to_f64()).abs();
            if margin.is_nan() || margin < self.min_margin {
                self.min_margin = margin;
            }
        }
    }
}

impl Unigram {
    /// The Viterbi of `bytes` (a whole text, or one of its words), starting from the path score
    /// `start_score`: appends the best path's `(id, start, end)` to `out` and returns its score.
    /// `best` is scratch space, reused between calls. With `TRACK`, records its decisions in
    /// `decisions`. Unknown characters are single unk pieces (not fused); the error is a missing
    /// unk piece when one is needed.
    pub fn viterbi<T: Real, const TRACK: bool>(
        &self,
        bytes: &[u8],
        start_score: T,
        best: &mut Vec<Cell<T>>,
        decisions: &mut Decisions,
        out: &mut Segmentation,
    ) -> Result<T> {
        let size = bytes.len();
        if size == 0 {
            return Ok(start_score);
        }
        let source = TrieCandidates {
            model: self,
            bytes,
            scores: T::select(&self.match_scores_f32, &self.match_scores_f64),
            unk_score: T::from_f64(self.unk_score()),
            unk_id: self.unk_id().map(|u| u as u32),
            reset: T::from_f64(match self.is_sentencepiece() {
                true => SENTENCEPIECE_SCORE_RESET,
                false => f64::INFINITY,
            }),
        };
        best_path::<T, TRACK, _>(source, size, start_score, best, decisions)?;
        let first = out.len();
        // Always reached: every character is covered by a piece or an unk node.
        backtrack(best, size, |cell, end| out.push((cell.id, cell.start, end)));
        out[first..].reverse();
        Ok(best[size].score)
    }

    /// The best segmentation of `text` in the model's arithmetic (`f32` with sentencepiece's
    /// rules, `f64` with `tokenizers`'); unknown characters are single unk pieces (not fused).
    pub fn best_segmentation(&self, text: &str) -> Result<Segmentation> {
        match self.is_sentencepiece() {
            true => self.best_path::<f32>(text),
            false => self.best_path::<f64>(text),
        }
    }

    fn best_path<T: Real>(&self, text: &str) -> Result<Segmentation> {
        let (mut best, mut out) = (vec![], vec![]);
        let decisions = &mut Decisions::default();
        self.viterbi::<T, false>(text.as_bytes(), T::ZERO, &mut best, decisions, &mut out)?;
        Ok(out)
    }

    /// The score the Viterbi adds for piece `id` matched over `length` bytes, `None` for a
    /// piece that never matches: what a cached path's pieces add up to
    /// ([`Unigram::viterbi`]'s arithmetic).
    #[inline]
    pub fn match_score<T: Real>(&self, id: u32, length: usize) -> Option<T> {
        if Some(id as usize) == self.unk_id() {
            return Some(T::from_f64(self.unk_score()));
        }
        let scores = T::select(&self.match_scores_f32, &self.match_scores_f64);
        match scores.get(id as usize) {
            Some(&s) if s.is_finite() => Some(s),
            _ => self.viterbi_piece_score(id, length),
        }
    }
}

/// Where the best-path search finds its candidate pieces: the model's trie walk over bytes, the
/// trainer's precomputed edges over characters. Each source offers the pieces starting at a
/// position in the order ties should favour (the shorter piece first), so the one tie rule of
/// [`relax`] gives every caller the same path.
pub(crate) trait Candidates<T: Real> {
    /// Whether every start the search visits is reached by some path, so that the search need
    /// not check (the model's: each character has a piece or an unk node).
    const REACHES_EVERY_START: bool;

    /// Calls `offer(id, end, score)` for every piece starting at position `start`, and returns
    /// the next start.
    fn offer(&mut self, start: usize, offer: impl FnMut(u32, usize, T)) -> Result<usize>;

    /// The |score| beyond which the search rebases the scores ([`SENTENCEPIECE_SCORE_RESET`]);
    /// infinite (never) unless the source says otherwise.
    fn reset(&self) -> T {
        T::from_f64(f64::INFINITY)
    }
}

/// The forward pass shared by every Unigram Viterbi: fills `best[end]` with the best path
/// ending at each position of `0..=len` (positions in the source's unit), left to right, from
/// the path score `start_score`. Candidates from unreached starts are left out. When the score
/// at a start is beyond ± the source's [`Candidates::reset`], the scores are [`rebase`]d there
/// first, as sentencepiece does. With `TRACK`, records its decisions in `decisions`.
#[inline(always)]
pub(crate) fn best_path<T: Real, const TRACK: bool, S: Candidates<T>>(
    mut source: S,
    len: usize,
    start_score: T,
    best: &mut Vec<Cell<T>>,
    decisions: &mut Decisions,
) -> Result<()> {
    best.clear();
    best.resize(len + 1, Cell { id: u32::MAX, score: T::ZERO, start: UNSET });
    best[0].score = start_score;
    let (mut start, mut frontier, reset) = (0, 0, source.reset());
    while start < len {
        let mut here = best[start];
        if here.score > reset || here.score < T::ZERO - reset {
            rebase(best, start, frontier);
            here.score = T::ZERO;
        }
        let reached = S::REACHES_EVERY_START || start == 0 || here.start != UNSET;
        start = source.offer(start, |id, end, score| {
            if reached {
                frontier = frontier.max(end);
                let candidate = Cell { id, score: score + here.score, start };
                relax::<T, TRACK>(&mut best[end], candidate, decisions);
            }
        })?;
        decisions.chars += 1;
    }
    Ok(())
}

/// sentencepiece's score reset: subtracts the score at `start` from it and from every reached
/// position after it up to `frontier` (the farthest end of a piece found so far), each a
/// rounded subtraction in `T`. Positions not reached yet keep their placeholder score.
#[cold]
fn rebase<T: Real>(best: &mut [Cell<T>], start: usize, frontier: usize) {
    let offset = best[start].score;
    for (i, cell) in best[start..=frontier.max(start)].iter_mut().enumerate() {
        if i == 0 || cell.start != UNSET {
            cell.score = cell.score - offset;
        }
    }
}

/// Walks the best path back from position `end`, calling `visit(cell, cell_end)` for each of its
/// pieces right to left; false when the path does not reach position 0.
#[inline]
pub(crate) fn backtrack<T: Real>(
    best: &[Cell<T>],
    mut end: usize,
    mut visit: impl FnMut(Cell<T>, usize),
) -> bool {
    while end > 0 {
        let cell = best[end];
        if cell.start == UNSET {
            return false;
        }
        visit(cell, end);
        end = cell.start;
    }
    true
}

/// The model's candidates: the pieces the trie matches at each character start of `bytes`, then
/// an unk node over the character when no piece covers exactly it.
struct TrieCandidates<'a, T> {
    model: &'a Unigram,
    bytes: &'a [u8],
    scores: &'a [T],
    unk_score: T,
    unk_id: Option<u32>,
    /// [`Candidates::reset`]: sentencepiece's threshold with its rules.
    reset: T,
}

impl<T: Real> Candidates<T> for TrieCandidates<'_, T> {
    const REACHES_EVERY_START: bool = true;

    fn reset(&self) -> T {
        self.reset
    }

    #[inline(always)]
    fn offer(&mut self, start: usize, mut offer: impl FnMut(u32, usize, T)) -> Result<usize> {
        let size = self.bytes.len();
        let char_len = utf8_len(self.bytes[start]).min(size - start);
        let mut has_single_node = false;
        self.model.trie.prefixes(&self.bytes[start..], |id, length| {
            let mut score = self.scores.get(id as usize).copied().unwrap_or(T::ZERO);
            if !score.is_finite() {
                // A sentinel (unused, user-defined) or a real non-finite score.
                match self.model.viterbi_piece_score(id, length) {
                    Some(s) => score = s,
                    None => return,
                }
            }
            offer(id, start + length, score);
            has_single_node |= length == char_len;
        });
        if !has_single_node {
            let unk = self.unk_id.ok_or_else(Unigram::missing_unk)?;
            offer(unk, start + char_len, self.unk_score);
        }
        Ok(start + char_len)
    }
}

/// Keeps `candidate` as the best path ending at `target`'s position when none is set yet or it
/// scores strictly higher (ties keep the earlier-found path); with `TRACK`, records the decision.
#[inline(always)]
fn relax<T: Real, const TRACK: bool>(
    target: &mut Cell<T>,
    candidate: Cell<T>,
    decisions: &mut Decisions,
) {
    let is_set = target.start != UNSET;
    if TRACK {
        decisions.candidate(candidate.score, is_set.then_some(target.score));
    }
    if !is_set || candidate.score > target.score {
        *target = candidate;
    }
}

/// The largest |prefix score| P for which a word's Viterbi taken from score 0 in arithmetic `T`
/// (`decisions`) decides exactly as the Viterbi of the whole text does when it reaches the word
/// with score P; negative when there is none (a tie, a non-finite score).
///
/// Why it holds: a cell's score is its path's piece scores summed left to right, each sum
/// rounded to `T` (unit roundoff u: 2⁻²⁴ for f32, 2⁻⁵³ for f64). Along a path of k pieces the
/// whole-text scores differ from P + the word's own scores by at most k·u·(|P| + 2M), M bounding
/// the word's scores; a comparison involves two paths of at most `chars` pieces plus the
/// candidate's rounding, so its two sides move by less than (2·chars + 4)·u·(|P| + 2M). When
/// every comparison of the word was decided by more than that, all decide the same way (and
/// none is a tie), so the best path is the same. The factor (1 + 2⁻¹⁰) covers the second-order
/// terms and the f64 arithmetic here; subnormal scores get an absolute slack.
pub fn exact_prefix_limit<T: Real>(decisions: &Decisions) -> f64 {
    if decisions.chars > 4096 || !decisions.max_abs.is_finite() {
        return -1.0;
    }
    let steps = (2 * decisions.chars + 4) as f64;
    let margin = decisions.min_margin - steps * T::SUBNORMAL_SLACK;
    let limit =
        margin / (steps * T::UNIT_ROUNDOFF * (1.0 + 1.0 / 1024.0)) - 2.0 * decisions.max_abs;
    if limit > 0.0 {
        // Shrunk so that the f64 arithmetic here cannot enlarge it.
        limit * (1.0 - 1e-6)
    } else {
        -1.0
    }
}
