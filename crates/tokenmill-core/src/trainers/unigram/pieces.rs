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
use crate::error::{Error, Result};
use crate::models::unigram::{backtrack, best_path, Candidates, Cell, Decisions};
use crate::utils::darts::DoubleArray;
use crate::utils::offsets::utf8_len;

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

/// Words longer than this (in characters) get no edge list: each pass finds their edges again
/// with the trie. An edge list holds up to `max_piece_length` + 1 edges of 12 bytes per
/// character (~200 bytes a character for a run of one letter); without it a long word costs
/// its forward and backward sums (16 bytes a character), or the Viterbi cells (24 bytes), for
/// two to four trie searches per character instead of one.
const LONG_WORD: usize = 1 << 16;

/// Appends to `edges` every live piece starting at character `pos` (byte `begin`) of `bytes`,
/// in trie order (shortest first), then an unknown edge when no single-character piece is
/// there.
fn edges_at(index: &PieceIndex, bytes: &[u8], pos: usize, begin: usize, edges: &mut Vec<Edge>) {
    let mut has_single = false;
    if let Some(trie) = &index.trie {
        let (mut chars, mut end) = (0, begin);
        trie.common_prefix_search(&bytes[begin..], |piece, bytes_len| {
            // Matches come shortest first and end on character boundaries.
            while end < begin + bytes_len {
                end += utf8_len(bytes[end]);
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

/// Appends to `edges` every live piece occurring in `word`, plus an unknown edge at each
/// position no single-character piece covers; returns the word's length in characters.
pub fn find_edges(index: &PieceIndex, word: &str, edges: &mut Vec<Edge>) -> usize {
    let bytes = word.as_bytes();
    let (mut pos, mut begin) = (0, 0);
    while begin < bytes.len() {
        edges_at(index, bytes, pos, begin, edges);
        begin += utf8_len(bytes[begin]);
        pos += 1;
    }
    pos
}

/// One word's lattice over the current pieces: its edges grouped by start, in the order
/// [`find_edges`] finds them — listed (`edges`), or found again by each pass for a long word —
/// and its length in characters.
#[derive(Clone, Copy)]
pub struct WordEdges<'a> {
    pub index: &'a PieceIndex,
    word: &'a str,
    /// `None` for a long word ([`LONG_WORD`]).
    edges: Option<&'a [Edge]>,
    pub len: usize,
}

impl WordEdges<'_> {
    /// Calls `f` on every edge, in order.
    #[inline]
    fn for_each(&self, group: &mut Vec<Edge>, mut f: impl FnMut(&Edge)) {
        match self.edges {
            Some(edges) => edges.iter().for_each(f),
            None => self.for_each_group(false, group, |g| g.iter().for_each(&mut f)),
        }
    }

    /// Calls `f` on every edge, in reverse order.
    #[inline]
    fn for_each_rev(&self, group: &mut Vec<Edge>, mut f: impl FnMut(&Edge)) {
        match self.edges {
            Some(edges) => edges.iter().rev().for_each(f),
            None => self.for_each_group(true, group, |g| g.iter().rev().for_each(&mut f)),
        }
    }

    /// Calls `f` on the edges of each start position (in order), positions in order or, with
    /// `reverse`, from the end. `group` is scratch space for a long word's edges.
    fn for_each_group(&self, reverse: bool, group: &mut Vec<Edge>, mut f: impl FnMut(&[Edge])) {
        if let Some(edges) = self.edges {
            let groups = edges.chunk_by(|a, b| a.from == b.from);
            if reverse {
                groups.rev().for_each(f);
            } else {
                groups.for_each(f);
            }
            return;
        }
        let bytes = self.word.as_bytes();
        let mut visit = |pos: usize, begin: usize| {
            group.clear();
            edges_at(self.index, bytes, pos, begin, group);
            f(group);
        };
        if reverse {
            let mut begin = bytes.len();
            for pos in (0..self.len).rev() {
                begin -= 1;
                while !self.word.is_char_boundary(begin) {
                    begin -= 1;
                }
                visit(pos, begin);
            }
        } else {
            let mut begin = 0;
            for pos in 0..self.len {
                visit(pos, begin);
                begin += utf8_len(bytes[begin]);
            }
        }
    }
}

/// Per-thread scratch space for the per-word algorithms.
#[derive(Default)]
pub struct Scratch {
    pub edges: Vec<Edge>,
    /// One start position's edges (a long word's, found again by each pass).
    group: Vec<Edge>,
    alpha: Vec<f64>,
    beta: Vec<f64>,
    best: Vec<Cell<f64>>,
}

/// Makes room for `len` items in `v` (emptied) without aborting: a size the system refuses is
/// an error naming the word's length.
fn reserve<T>(v: &mut Vec<T>, len: usize, word_chars: usize) -> Result<()> {
    v.clear();
    v.try_reserve(len).map_err(|_| {
        Error::InvalidArgument(format!(
            "Unigram training: a word of {word_chars} characters needs more memory than can be \
                allocated ({} bytes for one of its tables); split the text into shorter words \
                or sentences",
            len.saturating_mul(size_of::<T>())
        ))
    })
}

impl Scratch {
    /// Finds the edges of `word` (listed unless the word is long) and runs `then` on its
    /// lattice, with room made for the per-position tables of its length: an error when that
    /// memory cannot be had.
    pub fn with_edges<R>(
        &mut self,
        index: &PieceIndex,
        word: &str,
        then: impl FnOnce(&mut Scratch, WordEdges<'_>) -> R,
    ) -> Result<R> {
        let chars = if word.len() > LONG_WORD { word.chars().count() } else { 0 };
        let long = chars > LONG_WORD;
        let mut edges = std::mem::take(&mut self.edges);
        edges.clear();
        let len = if long { chars } else { find_edges(index, word, &mut edges) };
        if long || self.alpha.capacity() <= len {
            reserve(&mut self.alpha, len + 1, len)?;
            reserve(&mut self.beta, len + 1, len)?;
            reserve(&mut self.best, len + 1, len)?;
        }
        let lattice = WordEdges { index, word, edges: (!long).then_some(&edges[..]), len };
        let result = then(self, lattice);
        self.edges = edges;
        if long {
            // A long word's tables are not kept for the next (short) words.
            for table in [&mut self.alpha, &mut self.beta] {
                *table = Vec::new();
            }
            self.best = Vec::new();
        }
        Ok(result)
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
        let index = word.index;
        let n = word.len;
        self.reset_sums(n, 0.0, 1.0);
        let (alpha, beta, group) = (&mut self.alpha, &mut self.beta, &mut self.group);
        // Edges are sorted by start: when an edge is reached, every edge into its start is done.
        word.for_each(group, |e| alpha[e.to as usize] += alpha[e.from as usize] * index.prob(e));
        let z = alpha[n];
        // Far below any probability that matters: long words go to log space instead.
        if !z.is_finite() || z <= 1e-250 {
            return self.add_expected_log(word, count, expected);
        }
        beta[n] = 1.0;
        word.for_each_rev(group, |e| {
            beta[e.from as usize] += index.prob(e) * beta[e.to as usize];
        });
        let scale = count / z;
        word.for_each(group, |e| {
            expected[e.piece as usize] +=
                scale * alpha[e.from as usize] * index.prob(e) * beta[e.to as usize];
        });
        count * z.ln()
    }

    /// [`add_expected`](Self::add_expected) in log space.
    fn add_expected_log(&mut self, word: WordEdges<'_>, count: f64, expected: &mut [f64]) -> f64 {
        let index = word.index;
        let n = word.len;
        let neg = f64::NEG_INFINITY;
        self.reset_sums(n, neg, 0.0);
        let (alpha, beta, group) = (&mut self.alpha, &mut self.beta, &mut self.group);
        word.for_each(group, |e| {
            let term = alpha[e.from as usize] + index.score(e);
            alpha[e.to as usize] = log_add(alpha[e.to as usize], term);
        });
        beta[n] = 0.0;
        word.for_each_rev(group, |e| {
            let term = index.score(e) + beta[e.to as usize];
            beta[e.from as usize] = log_add(beta[e.from as usize], term);
        });
        let z = alpha[n];
        if z == neg {
            return 0.0;
        }
        word.for_each(group, |e| {
            let logp = alpha[e.from as usize] + index.score(e) + beta[e.to as usize] - z;
            if logp > neg {
                expected[e.piece as usize] += count * logp.exp();
            }
        });
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
        let index = word.index;
        let n = word.len;
        // NaN marks a position no edge reached yet (the first term initializes the sum).
        self.reset_sums(n, f64::NAN, 0.0);
        let (alpha, beta, group) = (&mut self.alpha, &mut self.beta, &mut self.group);
        word.for_each(group, |e| {
            let term = index.score(e) + alpha[e.from as usize];
            let slot = &mut alpha[e.to as usize];
            *slot = if slot.is_nan() { term } else { tokenizers_log_add(*slot, term) };
        });
        beta[n] = 0.0;
        // Positions from the end; the edges out of one position in their (trie) order.
        word.for_each_group(true, group, |edges| {
            for e in edges {
                let term = index.score(e) + beta[e.to as usize];
                let slot = &mut beta[e.from as usize];
                *slot = if slot.is_nan() { term } else { tokenizers_log_add(*slot, term) };
            }
        });
        let z = alpha[n];
        word.for_each(group, |e| {
            let total = alpha[e.from as usize] + index.score(e) + beta[e.to as usize] - z;
            expected[e.piece as usize] += count * total.exp();
        });
        count * z
    }

    /// The best segmentation's pieces (left to right) into `out`; empty when none covers the
    /// word. Runs the model's forward pass ([`best_path`]), so ties keep the first edge found
    /// (earliest start, then shortest), as the model does. Edges of piece `skip` are left out
    /// (pruning's second-best segmentation of a piece excludes the piece itself; a skipped
    /// character leaves its position uncovered).
    pub fn viterbi(&mut self, word: WordEdges<'_>, skip: Option<u32>, out: &mut Vec<u32>) {
        out.clear();
        let source = EdgeCandidates { word, skip, next: 0, group: &mut self.group };
        let decisions = &mut Decisions::default();
        // The edges' source never fails.
        let searched = best_path::<f64, false, _>(source, word.len, 0.0, &mut self.best, decisions);
        if searched.is_err() || !backtrack(&self.best, word.len, |cell, _| out.push(cell.id)) {
            out.clear();
            return;
        }
        out.reverse();
    }
}

/// The trainer's candidates for [`best_path`]: a word's edges (grouped by start, in the order
/// [`find_edges`] finds them), less those of dead pieces and of piece `skip`.
struct EdgeCandidates<'a> {
    word: WordEdges<'a>,
    skip: Option<u32>,
    /// The first edge not offered yet (listed edges), or the byte where the next start's
    /// characters begin (a long word's).
    next: usize,
    group: &'a mut Vec<Edge>,
}

impl Candidates<f64> for EdgeCandidates<'_> {
    const REACHES_EVERY_START: bool = false;

    #[inline(always)]
    fn offer(&mut self, start: usize, mut offer: impl FnMut(u32, usize, f64)) -> Result<usize> {
        let index = self.word.index;
        let unk = unk_index(index);
        let mut offer_edge = |e: &Edge| {
            let dead = e.piece != unk && !index.alive[e.piece as usize];
            if Some(e.piece) != self.skip && !dead {
                offer(e.piece, e.to as usize, index.score(e));
            }
        };
        match self.word.edges {
            Some(edges) => {
                while let Some(e) = edges.get(self.next).filter(|e| e.from as usize == start) {
                    self.next += 1;
                    offer_edge(e);
                }
            }
            None => {
                let bytes = self.word.word.as_bytes();
                self.group.clear();
                edges_at(index, bytes, start, self.next, self.group);
                self.next += utf8_len(bytes[self.next]);
                self.group.iter().for_each(offer_edge);
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
