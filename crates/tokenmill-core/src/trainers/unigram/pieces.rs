//! The trainer's pieces and the per-word segmentation work of EM, without a general-purpose
//! lattice or model:
//! * [`PieceList`] stores every piece once, in one text arena with offsets (a million seed
//!   pieces cost their bytes plus 16 bytes each, not a `String` each);
//! * [`PieceIndex`] is built once per pruning round: a double-array trie over the round's
//!   pieces plus, per piece, whether it is still alive and its current score. The M-step only
//!   kills pieces and changes scores, so the sub-iterations of a round reuse the trie;
//! * [`find_edges`] lists one word's piece occurrences (edges between character positions)
//!   with the trie; forward-backward and Viterbi run over positions, not over pairs of
//!   nodes (Viterbi is the model's forward pass, `models::unigram::best_path`, over the edges),
//!   and forward-backward runs on probabilities (one multiply-add per edge, no `exp` / `ln` in
//!   the inner loops), falling back to log space when a word is so long that its probability
//!   could underflow.
use crate::error::Result;
use crate::models::unigram::{backtrack, best_path, Candidates, Cell, Decisions};
use crate::utils::darts::DoubleArray;

/// Pieces with scores (log-probabilities), in one text arena.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PieceList {
    text: String,
    ends: Vec<usize>,
    pub scores: Vec<f64>,
}

impl PieceList {
    pub fn with_capacity(pieces: usize, bytes: usize) -> Self {
        PieceList {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(pieces),
            scores: Vec::with_capacity(pieces),
        }
    }

    pub fn push(&mut self, piece: &str, score: f64) {
        self.text.push_str(piece);
        self.ends.push(self.text.len());
        self.scores.push(score);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> + '_ {
        (0..self.len()).map(move |i| (self.get(i), self.scores[i]))
    }

    /// The pieces at `indices`, in that order, with scores from `score(index)`.
    pub fn select(
        &self,
        indices: impl IntoIterator<Item = usize>,
        score: impl Fn(usize) -> f64,
    ) -> PieceList {
        let mut out = PieceList::default();
        for i in indices {
            out.push(self.get(i), score(i));
        }
        out.text.shrink_to_fit();
        out
    }

    pub fn to_vec(&self) -> Vec<(String, f64)> {
        self.iter().map(|(p, s)| (p.to_string(), s)).collect()
    }
}

impl FromIterator<(String, f64)> for PieceList {
    fn from_iter<I: IntoIterator<Item = (String, f64)>>(iter: I) -> Self {
        let mut out = PieceList::default();
        for (p, s) in iter {
            out.push(&p, s);
        }
        out
    }
}

/// The pieces of one pruning round with a trie over them; a piece's index in the round is its
/// trie value. Killed pieces stay in the trie and are skipped.
pub struct PieceIndex {
    pub pieces: PieceList,
    pub alive: Vec<bool>,
    trie: Option<DoubleArray>,
    /// exp(score) of every piece (0 when dead), for forward-backward in probability space.
    probs: Vec<f64>,
    /// The score of an unknown character (no single-character piece): lowest score - 10, as
    /// `tokenizers` and sentencepiece price it during training.
    unk_score: f64,
}

/// Index standing for the unknown character in edges and counts (one past the pieces).
pub fn unk_index(index: &PieceIndex) -> u32 {
    index.pieces.len() as u32
}

impl PieceIndex {
    /// Builds the trie; pieces holding a NUL byte (which the trie cannot store) never match.
    pub fn new(pieces: PieceList) -> Result<Self> {
        let mut keys: Vec<(&[u8], u32)> = pieces
            .iter()
            .enumerate()
            .map(|(i, (p, _))| (p.as_bytes(), i as u32))
            .filter(|(k, _)| !k.is_empty() && !k.contains(&0))
            .collect();
        keys.sort_unstable();
        keys.dedup_by(|a, b| a.0 == b.0);
        let trie = if keys.is_empty() { None } else { Some(DoubleArray::build(&keys)?) };
        drop(keys);
        let alive = vec![true; pieces.len()];
        let mut index = PieceIndex { pieces, alive, trie, probs: vec![], unk_score: 0.0 };
        index.refresh();
        Ok(index)
    }

    /// Recomputes the probabilities and the unknown score after scores or `alive` changed.
    pub fn refresh(&mut self) {
        let scores = &self.pieces.scores;
        self.probs =
            scores.iter().zip(&self.alive).map(|(&s, &a)| if a { s.exp() } else { 0.0 }).collect();
        let min = scores
            .iter()
            .zip(&self.alive)
            .filter(|p| *p.1)
            .map(|p| *p.0)
            .fold(f64::INFINITY, f64::min);
        self.unk_score =
            if min.is_finite() { min } else { 0.0 } - crate::models::unigram::UNK_PENALTY;
    }

    pub fn num_alive(&self) -> usize {
        self.alive.iter().filter(|&&a| a).count()
    }

    /// An edge's score (minus infinity for a piece killed since the edge was found).
    fn score(&self, edge: &Edge) -> f64 {
        if edge.piece == unk_index(self) {
            self.unk_score
        } else if self.alive[edge.piece as usize] {
            self.pieces.scores[edge.piece as usize]
        } else {
            f64::NEG_INFINITY
        }
    }

    fn prob(&self, edge: &Edge) -> f64 {
        if edge.piece == unk_index(self) {
            self.unk_score.exp()
        } else {
            self.probs[edge.piece as usize]
        }
    }
}

/// One piece occurrence: characters `from..to` of the word.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub piece: u32,
}

/// Appends to `edges` every live piece occurring in `word`, plus an unknown edge at each
/// position no single-character piece covers; returns the word's length in characters.
/// `starts` is scratch space.
pub fn find_edges(
    index: &PieceIndex,
    word: &str,
    starts: &mut Vec<usize>,
    edges: &mut Vec<Edge>,
) -> usize {
    starts.clear();
    starts.extend(word.char_indices().map(|(i, _)| i));
    starts.push(word.len());
    let len = starts.len() - 1;
    let bytes = word.as_bytes();
    for pos in 0..len {
        let begin = starts[pos];
        let mut has_single = false;
        let mut chars = 0;
        if let Some(trie) = &index.trie {
            trie.common_prefix_search(&bytes[begin..], |piece, bytes_len| {
                while starts[pos + chars] < begin + bytes_len {
                    chars += 1;
                }
                if !index.alive[piece as usize] {
                    return;
                }
                edges.push(Edge { from: pos as u32, to: (pos + chars) as u32, piece });
                has_single |= chars == 1;
            });
        }
        if !has_single {
            edges.push(Edge { from: pos as u32, to: pos as u32 + 1, piece: unk_index(index) });
        }
    }
    len
}

/// One word's lattice over the current pieces: its edges (grouped by start, in the order
/// [`find_edges`] found them), its length in characters, and the pieces' scores.
#[derive(Clone, Copy)]
pub struct WordEdges<'a> {
    pub index: &'a PieceIndex,
    pub edges: &'a [Edge],
    pub len: usize,
}

/// Per-thread scratch space for the per-word algorithms.
#[derive(Default)]
pub struct Scratch {
    pub edges: Vec<Edge>,
    pub starts: Vec<usize>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    best: Vec<Cell<f64>>,
}

impl Scratch {
    /// Finds the edges of `word` into [`Scratch::edges`] and runs `then` on its lattice.
    pub fn with_edges<R>(
        &mut self,
        index: &PieceIndex,
        word: &str,
        then: impl FnOnce(&mut Scratch, WordEdges<'_>) -> R,
    ) -> R {
        let mut edges = std::mem::take(&mut self.edges);
        edges.clear();
        let len = find_edges(index, word, &mut self.starts, &mut edges);
        let result = then(self, WordEdges { index, edges: &edges, len });
        self.edges = edges;
        result
    }

    /// Forward and backward sums for a word of `len` characters, all `empty`, the forward sum at
    /// the start `start`.
    fn reset_sums(&mut self, len: usize, empty: f64, start: f64) {
        for sums in [&mut self.alpha, &mut self.beta] {
            sums.clear();
            sums.resize(len + 1, empty);
        }
        self.alpha[0] = start;
    }

    /// Adds `count` × the posterior probability of every edge of a word (`len` characters) to
    /// `expected[piece]` (index [`unk_index`] for unknown edges); returns `count` × log P(word).
    pub fn add_expected(&mut self, word: WordEdges<'_>, count: f64, expected: &mut [f64]) -> f64 {
        let WordEdges { index, edges, len } = word;
        let n = len;
        self.reset_sums(n, 0.0, 1.0);
        // Edges are sorted by start: when an edge is reached, every edge into its start is done.
        for e in edges {
            self.alpha[e.to as usize] += self.alpha[e.from as usize] * index.prob(e);
        }
        let z = self.alpha[n];
        // Far below any probability that matters: long words go to log space instead.
        if !z.is_finite() || z <= 1e-250 {
            return self.add_expected_log(word, count, expected);
        }
        self.beta[n] = 1.0;
        for e in edges.iter().rev() {
            self.beta[e.from as usize] += index.prob(e) * self.beta[e.to as usize];
        }
        let scale = count / z;
        for e in edges {
            expected[e.piece as usize] +=
                scale * self.alpha[e.from as usize] * index.prob(e) * self.beta[e.to as usize];
        }
        count * z.ln()
    }

    /// [`add_expected`](Self::add_expected) in log space.
    fn add_expected_log(&mut self, word: WordEdges<'_>, count: f64, expected: &mut [f64]) -> f64 {
        let WordEdges { index, edges, len } = word;
        let n = len;
        let neg = f64::NEG_INFINITY;
        self.reset_sums(n, neg, 0.0);
        for e in edges {
            let term = self.alpha[e.from as usize] + index.score(e);
            self.alpha[e.to as usize] = log_add(self.alpha[e.to as usize], term);
        }
        self.beta[n] = 0.0;
        for e in edges.iter().rev() {
            let term = index.score(e) + self.beta[e.to as usize];
            self.beta[e.from as usize] = log_add(self.beta[e.from as usize], term);
        }
        let z = self.alpha[n];
        if z == neg {
            return 0.0;
        }
        for e in edges {
            let logp = self.alpha[e.from as usize] + index.score(e) + self.beta[e.to as usize] - z;
            if logp > neg {
                expected[e.piece as usize] += count * logp.exp();
            }
        }
        count * z
    }

    /// [`add_expected`](Self::add_expected) as `tokenizers` computes it (its lattice's
    /// `populate_marginal`), operation for operation, so that a word's expected counts are the
    /// same to the bit: log space, forward sums over the edges into a position by start, backward
    /// sums over the edges out of a position in trie order, [`tokenizers_log_add`], and each
    /// edge's share as `count × exp(α + score + β − log Z)`. A piece that a word certainly holds
    /// then gets exactly its count, which matters: the digamma approximation jumps by ~4e-11
    /// where its argument crosses an integer.
    pub fn add_expected_tokenizers(
        &mut self,
        word: WordEdges<'_>,
        count: f64,
        expected: &mut [f64],
    ) -> f64 {
        let WordEdges { index, edges, len } = word;
        let n = len;
        // NaN marks a position no edge reached yet (the first term initializes the sum).
        self.reset_sums(n, f64::NAN, 0.0);
        for e in edges {
            let term = index.score(e) + self.alpha[e.from as usize];
            let slot = &mut self.alpha[e.to as usize];
            *slot = if slot.is_nan() { term } else { tokenizers_log_add(*slot, term) };
        }
        self.beta[n] = 0.0;
        // Positions from the end; the edges out of one position in their (trie) order.
        let mut end = edges.len();
        while end > 0 {
            let from = edges[end - 1].from;
            let start = edges[..end].iter().rposition(|e| e.from != from).map_or(0, |i| i + 1);
            for e in &edges[start..end] {
                let term = index.score(e) + self.beta[e.to as usize];
                let slot = &mut self.beta[from as usize];
                *slot = if slot.is_nan() { term } else { tokenizers_log_add(*slot, term) };
            }
            end = start;
        }
        let z = self.alpha[n];
        for e in edges {
            let total = self.alpha[e.from as usize] + index.score(e) + self.beta[e.to as usize] - z;
            expected[e.piece as usize] += count * total.exp();
        }
        count * z
    }

    /// The best segmentation's pieces (left to right) into `out`; empty when none covers the
    /// word. Runs the model's forward pass ([`best_path`]), so ties keep the first edge found
    /// (earliest start, then shortest), as the model does. Edges of piece `skip` are left out
    /// (pruning's second-best segmentation of a piece excludes the piece itself; a skipped
    /// character leaves its position uncovered).
    pub fn viterbi(&mut self, word: WordEdges<'_>, skip: Option<u32>, out: &mut Vec<u32>) {
        let WordEdges { index, edges, len } = word;
        out.clear();
        let source = EdgeCandidates { index, edges, skip, next: 0 };
        let decisions = &mut Decisions::default();
        // The edges' source never fails.
        let searched = best_path::<f64, false, _>(source, len, 0.0, &mut self.best, decisions);
        if searched.is_err() || !backtrack(&self.best, len, |cell, _| out.push(cell.id)) {
            out.clear();
            return;
        }
        out.reverse();
    }
}

/// The trainer's candidates for [`best_path`]: a word's edges (grouped by start, in the order
/// [`find_edges`] found them), less those of dead pieces and of piece `skip`.
struct EdgeCandidates<'a> {
    index: &'a PieceIndex,
    edges: &'a [Edge],
    skip: Option<u32>,
    /// The first edge not offered yet.
    next: usize,
}

impl Candidates<f64> for EdgeCandidates<'_> {
    const REACHES_EVERY_START: bool = false;

    #[inline(always)]
    fn offer(&mut self, start: usize, mut offer: impl FnMut(u32, usize, f64)) -> Result<usize> {
        let unk = unk_index(self.index);
        while let Some(e) = self.edges.get(self.next).filter(|e| e.from as usize == start) {
            self.next += 1;
            let dead = e.piece != unk && !self.index.alive[e.piece as usize];
            if Some(e.piece) != self.skip && !dead {
                offer(e.piece, e.to as usize, self.index.score(e));
            }
        }
        Ok(start + 1)
    }
}

/// log(exp(a) + exp(b)).
#[inline]
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// `tokenizers`' log(exp(a) + exp(b)): the smaller term is dropped below exp(-50), and the sum
/// is `max + ln(exp(min - max) + 1)` (not `ln_1p`), for the same bits.
#[inline]
fn tokenizers_log_add(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a > b { (b, a) } else { (a, b) };
    if hi > lo + 50.0 {
        hi
    } else {
        hi + ((lo - hi).exp() + 1.0).ln()
    }
}
