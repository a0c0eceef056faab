//! The segmentation lattice of one string: every vocabulary piece found at every character
//! position is a node; paths from BOS to EOS are segmentations.
//!
//! The algorithms follow SentencePiece's `Lattice` (src/unigram_model.cc) step by step — the
//! same node order, the same comparisons, the same log-sum-exp — so that results agree with it
//! exactly, ties included:
//! * nodes are inserted by increasing start position, and at one position by increasing
//!   length (trie order); a position's *end* list is in insertion order, so it holds the
//!   longest piece first;
//! * Viterbi keeps, for each node, the first predecessor with the strictly highest score: on a
//!   tie the predecessor that starts earliest (the longest piece) wins;
//! * n-best is an A* search whose agenda is a binary max-heap ordered by `fx` that pushes and
//!   pops exactly like libstdc++'s `std::priority_queue`, so equal-score hypotheses come out in
//!   sentencepiece's order.
//!
//! Scores are generic ([`Real`]): `f32` reproduces sentencepiece's float arithmetic, `f64`
//! `tokenizers`' (the trainer and the entropy use `f64`).
use std::fmt::Debug;
use std::ops::{Add, Mul, Sub};

use rand::Rng;

/// The score arithmetic of a lattice (`f32` as in sentencepiece, `f64` as in `tokenizers`).
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Debug
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    /// The unit roundoff of a sum in this precision (half an ulp of 1).
    const UNIT_ROUNDOFF: f64;
    /// A bound on the absolute rounding error of a sum of subnormal numbers.
    const SUBNORMAL_SLACK: f64;
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// `exp` in this precision (sentencepiece's `std::exp(float)` for `f32`).
    fn exp(self) -> Self;
    /// `ln(1 + x)` in this precision.
    fn ln_1p(self) -> Self;
    fn is_finite(self) -> bool;
    /// The one of two per-piece tables that holds this precision (the model keeps its scores
    /// in both, so that each Viterbi reads a dense table of its own type).
    fn select<'a>(f32s: &'a [f32], f64s: &'a [f64]) -> &'a [Self];
}

/// `Real` for a float type, whose table `select` returns (`0` for the f32 one, `1` for f64).
macro_rules! impl_real {
    ($float:ident, $table:tt, $mantissa:expr, $slack:expr) => {
        impl Real for $float {
            const ZERO: $float = 0.0;
            const UNIT_ROUNDOFF: f64 = 1.0 / (1u64 << $mantissa) as f64;
            const SUBNORMAL_SLACK: f64 = $slack;
            fn from_f64(x: f64) -> $float {
                x as $float
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn exp(self) -> $float {
                $float::exp(self)
            }
            fn ln_1p(self) -> $float {
                $float::ln_1p(self)
            }
            fn is_finite(self) -> bool {
                $float::is_finite(self)
            }
            fn select<'a>(f32s: &'a [f32], f64s: &'a [f64]) -> &'a [$float] {
                (f32s, f64s).$table
            }
        }
    };
}
impl_real!(f32, 0, 24, 7.174648137343064e-43); // 2^-140
impl_real!(f64, 1, 53, 1e-320);

/// log(exp(x) + exp(y)), computed as sentencepiece does (differences beyond 50 are dropped);
/// with `init` it is `y` (the first term of a sum).
#[inline]
pub fn log_sum_exp<T: Real>(x: T, y: T, init: bool) -> T {
    if init {
        return y;
    }
    let (vmin, vmax) = if x < y { (x, y) } else { (y, x) };
    if vmax.to_f64() > (vmin + T::from_f64(50.0)).to_f64() {
        vmax
    } else {
        T::from_f64(vmax.to_f64() + ((vmin - vmax).to_f64().exp() + 1.0).ln())
    }
}

/// Vocabulary id of the BOS / EOS nodes (no piece).
pub const NO_PIECE: u32 = u32::MAX;
const BOS: u32 = 0;
const EOS: u32 = 1;

/// One piece occurrence: `len` characters from character `pos`.
#[derive(Debug, Clone, Copy)]
pub struct Node<T> {
    /// Vocabulary id ([`NO_PIECE`] for BOS/EOS).
    pub id: u32,
    pub pos: u32,
    pub len: u32,
    pub score: T,
    backtrace: T,
    prev: u32,
}

/// A segmentation: node indices (into [`Lattice::node`]) from left to right, and its score.
pub type Path<T> = (Vec<u32>, T);

/// The lattice of one string. Reusable: [`Lattice::reset`] keeps the allocations.
#[derive(Debug, Clone, Default)]
pub struct Lattice<T: Real> {
    /// Byte offset of every character start, plus the string's length.
    surface: Vec<usize>,
    nodes: Vec<Node<T>>,
    begin_offsets: Vec<u32>,
    begin_list: Vec<u32>,
    end_offsets: Vec<u32>,
    end_list: Vec<u32>,
}

impl<T: Real> Lattice<T> {
    pub fn new() -> Self {
        Lattice {
            surface: vec![],
            nodes: vec![],
            begin_offsets: vec![],
            begin_list: vec![],
            end_offsets: vec![],
            end_list: vec![],
        }
    }

    /// Starts the lattice of `sentence` (only BOS and EOS). Insert nodes, then
    /// [`finish`](Self::finish).
    pub fn reset(&mut self, sentence: &str) {
        self.surface.clear();
        self.surface.extend(sentence.char_indices().map(|(i, _)| i));
        self.surface.push(sentence.len());
        self.nodes.clear();
        let len = self.len() as u32;
        let edge = Node {
            id: NO_PIECE,
            pos: 0,
            len: 0,
            score: T::ZERO,
            backtrace: T::ZERO,
            prev: NO_PIECE,
        };
        self.nodes.push(edge);
        self.nodes.push(Node { pos: len, ..edge });
    }

    /// Length in characters.
    pub fn len(&self) -> usize {
        self.surface.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Byte offset of character position `pos`.
    pub fn byte_offset(&self, pos: usize) -> usize {
        self.surface[pos]
    }

    /// Byte offsets of every character start plus the end (length `len() + 1`).
    pub fn char_starts(&self) -> &[usize] {
        &self.surface
    }

    /// Adds a node; positions must not decrease from one insertion to the next.
    pub fn insert(&mut self, pos: usize, len: usize, score: T, id: u32) {
        self.nodes.push(Node {
            id,
            pos: pos as u32,
            len: len as u32,
            score,
            backtrace: T::ZERO,
            prev: NO_PIECE,
        });
    }

    /// Builds the begin/end lists (counting sort by position, stable in insertion order).
    pub fn finish(&mut self) {
        let len = self.len();
        let nodes = || self.nodes.iter().enumerate();
        let begins = || nodes().map(|(i, n)| begin_pos(i, n));
        fill_offsets(&mut self.begin_offsets, len, begins());
        fill_list(&mut self.begin_list, &self.begin_offsets, begins());
        let ends = || nodes().map(|(i, n)| end_pos(i, n));
        fill_offsets(&mut self.end_offsets, len, ends());
        fill_list(&mut self.end_list, &self.end_offsets, ends());
    }

    pub fn node(&self, index: u32) -> &Node<T> {
        &self.nodes[index as usize]
    }

    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Nodes starting at `pos` (EOS at the end position).
    pub fn begin_nodes(&self, pos: usize) -> &[u32] {
        &self.begin_list[self.begin_offsets[pos] as usize..self.begin_offsets[pos + 1] as usize]
    }

    /// Nodes ending at `pos` (BOS at 0).
    pub fn end_nodes(&self, pos: usize) -> &[u32] {
        &self.end_list[self.end_offsets[pos] as usize..self.end_offsets[pos + 1] as usize]
    }

    /// Byte range of a node in the sentence.
    pub fn byte_span(&self, index: u32) -> (usize, usize) {
        let n = self.node(index);
        (self.surface[n.pos as usize], self.surface[(n.pos + n.len) as usize])
    }

    /// The best path (empty when a position cannot be reached) and its score.
    ///
    /// Not [`super::viterbi`]'s forward pass: sentencepiece's lattice picks a predecessor per
    /// *node*, comparing `backtrace + node score` after rounding, where the forward pass keeps
    /// one best per *position* before the score is added. Rounding can make two predecessors
    /// tie here that differ there, so sharing the pass would change paths at near-ties.
    pub fn viterbi(&mut self) -> Path<T> {
        let len = self.len();
        for pos in 0..=len {
            let (b0, b1) = (self.begin_offsets[pos] as usize, self.begin_offsets[pos + 1] as usize);
            let (e0, e1) = (self.end_offsets[pos] as usize, self.end_offsets[pos + 1] as usize);
            for b in b0..b1 {
                let r = self.begin_list[b] as usize;
                let r_score = self.nodes[r].score;
                let mut best: Option<(u32, T)> = None;
                for e in e0..e1 {
                    let l = self.end_list[e];
                    let score = self.nodes[l as usize].backtrace + r_score;
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((l, score));
                    }
                }
                let Some((l, score)) = best else { return (vec![], T::ZERO) };
                self.nodes[r].prev = l;
                self.nodes[r].backtrace = score;
            }
        }
        let eos = &self.nodes[EOS as usize];
        let score = eos.backtrace;
        let mut path = vec![];
        let mut node = eos.prev;
        while node != BOS && node != NO_PIECE {
            path.push(node);
            node = self.nodes[node as usize].prev;
        }
        path.reverse();
        (path, score)
    }

    /// Forward log-sums with inverse temperature `inv_theta`: `alpha[node]` sums over all paths
    /// from BOS to the node, the node's own score excluded.
    pub fn forward(&self, inv_theta: T) -> Vec<T> {
        let mut alpha = vec![T::ZERO; self.nodes.len()];
        for pos in 0..=self.len() {
            let ends = self.end_nodes(pos);
            for &r in self.begin_nodes(pos) {
                for (k, &l) in ends.iter().enumerate() {
                    let term = inv_theta * self.nodes[l as usize].score + alpha[l as usize];
                    alpha[r as usize] = log_sum_exp(alpha[r as usize], term, k == 0);
                }
            }
        }
        alpha
    }

    /// Backward log-sums: `beta[node]` sums over all paths from the node (own score excluded) to
    /// EOS.
    pub fn backward(&self) -> Vec<T> {
        let mut beta = vec![T::ZERO; self.nodes.len()];
        for pos in (0..=self.len()).rev() {
            let begins = self.begin_nodes(pos);
            for &l in self.end_nodes(pos) {
                for (k, &r) in begins.iter().enumerate() {
                    let term = self.nodes[r as usize].score + beta[r as usize];
                    beta[l as usize] = log_sum_exp(beta[l as usize], term, k == 0);
                }
            }
        }
        beta
    }

    /// Adds `freq` × the marginal probability of every piece node to `expected[id]`; returns
    /// `freq` × log Z (the log-likelihood of the string, weighted).
    pub fn populate_marginal(&self, freq: f64, expected: &mut [f64]) -> f64 {
        let alpha = self.forward(T::from_f64(1.0));
        let beta = self.backward();
        let z = alpha[EOS as usize];
        for node in 2..self.nodes.len() {
            let n = &self.nodes[node];
            let logp = alpha[node] + n.score + beta[node] - z;
            expected[n.id as usize] += freq * logp.to_f64().exp();
        }
        freq * z.to_f64()
    }

    /// Entropy of the segmentation distribution at inverse temperature `inv_theta`
    /// (sentencepiece's `CalculateEntropy`): H = −h(EOS), where h(r) sums, over the nodes l
    /// ending where r begins, P(l | r) · (h(l) + log P(l | r)), with
    /// log P(l | r) = θ·score(l) + α(l) − α(r). The forward sums α are in the lattice's
    /// precision, the rest in f64, and each node's conditional probabilities are renormalized
    /// in log space: they sum to one in exact arithmetic (α(r) is their log-sum), and on long
    /// inputs the rounding of α would otherwise compound along the text (sentencepiece's float
    /// recursion grows without bound past ~100 kB). Renormalized, each h(r) is a convex
    /// combination and H stays finite and accurate however long the text.
    pub fn entropy(&self, inv_theta: T) -> f64 {
        let alpha = self.forward(inv_theta);
        let mut h = vec![0f64; self.nodes.len()];
        let mut terms: Vec<(u32, f64)> = vec![];
        for pos in 0..=self.len() {
            for &r in self.begin_nodes(pos) {
                terms.clear();
                terms.extend(self.end_nodes(pos).iter().map(|&l| {
                    let score = inv_theta * self.nodes[l as usize].score;
                    (l, (score + alpha[l as usize] - alpha[r as usize]).to_f64())
                }));
                let max = terms.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
                if !max.is_finite() {
                    continue;
                }
                let log_z = max + terms.iter().map(|t| (t.1 - max).exp()).sum::<f64>().ln();
                let mut sum = 0.0;
                for &(l, logp) in &terms {
                    let logp = logp - log_z;
                    let p = logp.exp();
                    if p > 0.0 {
                        sum += p * (h[l as usize] + logp);
                    }
                }
                h[r as usize] = sum;
            }
        }
        -h[EOS as usize]
    }

    /// One segmentation drawn from P(path) ∝ exp(inv_theta × score(path)) over the whole lattice
    /// (forward filtering, backward sampling).
    pub fn sample(&self, inv_theta: T, rng: &mut impl Rng) -> Vec<u32> {
        if self.is_empty() {
            return vec![];
        }
        let alpha = self.forward(inv_theta);
        let mut path = vec![];
        let mut weights = vec![];
        let mut z = alpha[EOS as usize];
        let mut node = EOS;
        loop {
            let ends = self.end_nodes(self.nodes[node as usize].pos as usize);
            weights.clear();
            weights.extend(ends.iter().map(|&l| {
                (alpha[l as usize] + inv_theta * self.nodes[l as usize].score - z).to_f64().exp()
            }));
            node = ends[pick_weighted(&weights, rng)];
            if node == BOS {
                break;
            }
            z = alpha[node as usize];
            path.push(node);
        }
        path.reverse();
        path
    }

    /// The `n` best segmentations, best first, with their scores (sentencepiece's `NBest`
    /// without sampling). Fewer when the lattice has fewer paths.
    pub fn nbest(&mut self, n: usize) -> Vec<Path<T>> {
        self.nbest_until(n, None).unwrap_or_default()
    }

    /// [`Lattice::nbest`], giving up (`None`) once `deadline` has passed: sentencepiece's
    /// n-best timeout (`SetNBestTimeout`), after which it falls back to the best path.
    pub fn nbest_until(
        &mut self,
        n: usize,
        deadline: Option<std::time::Instant>,
    ) -> Option<Vec<Path<T>>> {
        if n == 0 {
            return Some(vec![]);
        }
        if n == 1 {
            let best = self.viterbi();
            return Some(if best.0.is_empty() && !self.is_empty() { vec![] } else { vec![best] });
        }
        self.viterbi();
        self.best_first_paths(
            n,
            deadline,
            self.nodes[EOS as usize].backtrace,
            |search, top, hyp| {
                for &l in self.end_nodes(self.nodes[hyp.node as usize].pos as usize) {
                    let lnode = &self.nodes[l as usize];
                    let new = search.push_hyp(Hyp {
                        node: l,
                        next: top,
                        fx: lnode.backtrace + hyp.gx,
                        gx: lnode.score + hyp.gx,
                    });
                    search.agenda_push(new);
                }
            },
        )
    }

    /// The A* search both n-best forms run, from EOS back to BOS: `expand(search, top, hyp)`
    /// pushes the children of the popped hypothesis `hyp` (index `top`); the first `n`
    /// hypotheses to reach BOS are the results, best first. `None` when `deadline` passes first.
    fn best_first_paths(
        &self,
        n: usize,
        deadline: Option<std::time::Instant>,
        eos_fx: T,
        mut expand: impl FnMut(&mut NBestSearch<T>, u32, Hyp<T>),
    ) -> Option<Vec<Path<T>>> {
        let mut search = NBestSearch::default();
        let eos = search.push_hyp(Hyp { node: EOS, next: NO_PIECE, fx: eos_fx, gx: T::ZERO });
        search.agenda_push(eos);
        let mut results = vec![];
        let mut pops: u32 = 0;
        while let Some(top) = search.agenda_pop() {
            // The clock is read after every 1024 expansions: cheap next to the heap work between,
            // and a search that small is never cut short (by a preempted thread, say).
            pops = pops.wrapping_add(1);
            if pops.is_multiple_of(1024) && deadline.is_some_and(|d| std::time::Instant::now() >= d)
            {
                return None;
            }
            let hyp = search.hyps[top as usize];
            if hyp.node == BOS {
                results.push((search.path_from(top), hyp.fx));
                if results.len() == n {
                    break;
                }
                continue;
            }
            expand(&mut search, top, hyp);
            search.shrink_if_needed(n);
        }
        Some(results)
    }
    /// Up to `n` distinct segmentations drawn without replacement from P(path) ∝
    /// exp(`inv_theta` × score), each with its Gumbel-perturbed log-probability, in decreasing
    /// order: sentencepiece's `NBest(n, sample=true, inv_theta)`, an A* search over perturbed
    /// scores where each child's Gumbel is conditioned on its parent's maximum (stochastic beam
    /// search, Kool et al. 2019, in the numerically stable form of their appendix B.3).
    pub fn nbest_sampled(&self, n: usize, inv_theta: T, rng: &mut impl Rng) -> Vec<Path<T>> {
        if n == 0 {
            return vec![];
        }
        let alpha = self.forward(inv_theta);
        let (mut log_probs, mut perturbed) = (vec![], vec![]);
        self.best_first_paths(n, None, gumbel(rng), |search, top, hyp| {
            let ends = self.end_nodes(self.nodes[hyp.node as usize].pos as usize);
            let z = alpha[hyp.node as usize];
            log_probs.clear();
            perturbed.clear();
            let mut max_score = T::from_f64(-1e8);
            for &l in ends {
                let log_prob =
                    hyp.gx + alpha[l as usize] + inv_theta * self.nodes[l as usize].score - z;
                let noisy = log_prob + gumbel(rng);
                if noisy > max_score {
                    max_score = noisy;
                }
                log_probs.push(log_prob);
                perturbed.push(noisy);
            }
            for (i, &l) in ends.iter().enumerate() {
                let v =
                    hyp.fx - perturbed[i] + (T::ZERO - (perturbed[i] - max_score).exp()).ln_1p();
                let positive_part = if v > T::ZERO { v } else { T::ZERO };
                let abs = if v < T::ZERO { T::ZERO - v } else { v };
                let fx = hyp.fx - positive_part - (T::ZERO - abs).exp().ln_1p();
                let new = search.push_hyp(Hyp { node: l, next: top, fx, gx: log_probs[i] });
                search.agenda_push(new);
            }
        })
        .unwrap_or_default()
    }
}

/// A standard Gumbel sample, `-ln(-ln(u + 1e-7))` for u uniform in [0, 1), in the lattice's
/// precision (sentencepiece draws u as a float).
fn gumbel<T: Real>(rng: &mut impl Rng) -> T {
    let u: f32 = rng.gen();
    T::from_f64(-(-(u + 1e-7).ln()).ln() as f64)
}

fn begin_pos<T>(index: usize, n: &Node<T>) -> usize {
    // BOS starts nowhere: it only ends at 0.
    if index == BOS as usize {
        usize::MAX
    } else {
        n.pos as usize
    }
}

fn end_pos<T>(index: usize, n: &Node<T>) -> usize {
    match index as u32 {
        BOS => 0,
        EOS => usize::MAX,
        _ => (n.pos + n.len) as usize,
    }
}

/// CSR offsets for positions 0..=len from the position of every node (`usize::MAX`: none).
fn fill_offsets(offsets: &mut Vec<u32>, len: usize, positions: impl Iterator<Item = usize>) {
    offsets.clear();
    offsets.resize(len + 2, 0);
    for p in positions.filter(|&p| p != usize::MAX) {
        offsets[p + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
}

fn fill_list(list: &mut Vec<u32>, offsets: &[u32], positions: impl Iterator<Item = usize>) {
    list.clear();
    list.resize(*offsets.last().unwrap_or(&0) as usize, 0);
    let mut cursor: Vec<u32> = offsets[..offsets.len() - 1].to_vec();
    for (node, p) in positions.enumerate().filter(|&(_, p)| p != usize::MAX) {
        list[cursor[p] as usize] = node as u32;
        cursor[p] += 1;
    }
}

/// One of the `nbest` (segmentation, score) pairs, drawn with P ∝ exp(`alpha` × score): the terms
/// are normalized in double by the largest first, as sentencepiece's n-best sampling does, so
/// that the very negative scores of long texts do not all underflow to zero. `None` when empty;
/// a single pair is returned without a draw.
pub fn pick_scored<S>(mut nbest: Vec<(S, f64)>, alpha: f64, rng: &mut impl Rng) -> Option<S> {
    if nbest.len() <= 1 {
        return nbest.pop().map(|(segmentation, _)| segmentation);
    }
    let terms: Vec<f64> = nbest.iter().map(|(_, score)| alpha * score).collect();
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = terms.iter().map(|term| (term - max).exp()).collect();
    let pick = pick_weighted(&weights, rng);
    Some(nbest.swap_remove(pick).0)
}

/// Index drawn with probability proportional to `weights` (the first index when all are zero).
pub fn pick_weighted(weights: &[f64], rng: &mut impl Rng) -> usize {
    let total: f64 = weights.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return 0;
    }
    let mut x = rng.gen::<f64>() * total;
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
}

#[derive(Debug, Clone, Copy)]
struct Hyp<T> {
    node: u32,
    next: u32,
    fx: T,
    gx: T,
}

/// The n-best agenda. A hand-written heap because equal-priority hypotheses must come out in
/// the order libstdc++'s `std::priority_queue` (sift-up on push; on pop, sift the hole down to a
/// leaf along the larger child, then sift the last element up) gives them in sentencepiece.
struct NBestSearch<T> {
    hyps: Vec<Hyp<T>>,
    agenda: Vec<u32>,
}

impl<T: Real> Default for NBestSearch<T> {
    fn default() -> Self {
        NBestSearch { hyps: vec![], agenda: vec![] }
    }
}

const MAX_AGENDA: usize = 10_000;
const MIN_AGENDA: usize = 512;

impl<T: Real> NBestSearch<T> {
    fn push_hyp(&mut self, h: Hyp<T>) -> u32 {
        self.hyps.push(h);
        (self.hyps.len() - 1) as u32
    }

    /// The segmentation a complete hypothesis (one that reached BOS) spells, left to right.
    fn path_from(&self, bos_hyp: u32) -> Vec<u32> {
        let mut path = vec![];
        let mut next = self.hyps[bos_hyp as usize].next;
        while self.hyps[next as usize].next != NO_PIECE {
            path.push(self.hyps[next as usize].node);
            next = self.hyps[next as usize].next;
        }
        path
    }

    fn less(&self, a: u32, b: u32) -> bool {
        self.hyps[a as usize].fx < self.hyps[b as usize].fx
    }

    fn sift_up(&mut self, mut hole: usize, top: usize, value: u32) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !self.less(self.agenda[parent], value) {
                break;
            }
            self.agenda[hole] = self.agenda[parent];
            hole = parent;
        }
        self.agenda[hole] = value;
    }

    fn agenda_push(&mut self, h: u32) {
        self.agenda.push(h);
        let last = self.agenda.len() - 1;
        self.sift_up(last, 0, h);
    }

    fn agenda_pop(&mut self) -> Option<u32> {
        let len = self.agenda.len();
        if len == 0 {
            return None;
        }
        let top = self.agenda[0];
        let value = self.agenda[len - 1];
        let len = len - 1;
        self.agenda.truncate(len);
        if len == 0 {
            return Some(top);
        }
        let mut hole = 0;
        let mut child = hole;
        while child < (len - 1) / 2 {
            child = 2 * (child + 1);
            if self.less(self.agenda[child], self.agenda[child - 1]) {
                child -= 1;
            }
            self.agenda[hole] = self.agenda[child];
            hole = child;
        }
        if len.is_multiple_of(2) && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            self.agenda[hole] = self.agenda[child - 1];
            hole = child - 1;
        }
        self.sift_up(hole, 0, value);
        Some(top)
    }

    /// Keeps only the best `min(512, 10 n)` hypotheses once the agenda reaches 10,000 (as
    /// sentencepiece does), and drops the hypotheses no kept one refers to.
    fn shrink_if_needed(&mut self, n: usize) {
        if self.agenda.len() < MAX_AGENDA {
            return;
        }
        let keep = MIN_AGENDA.min(n.saturating_mul(10));
        let mut kept = Vec::with_capacity(keep);
        for _ in 0..keep {
            match self.agenda_pop() {
                Some(h) => kept.push(h),
                None => break,
            }
        }
        let mut new_index = vec![NO_PIECE; self.hyps.len()];
        let mut hyps = Vec::new();
        for &h in &kept {
            copy_chain(&self.hyps, h, &mut new_index, &mut hyps);
        }
        self.hyps = hyps;
        self.agenda.clear();
        for h in kept {
            let h = new_index[h as usize];
            self.agenda_push(h);
        }
    }
}

/// Copies hypothesis `h` and its `next` chain into `out` (sharing what was copied already).
fn copy_chain<T: Copy>(hyps: &[Hyp<T>], h: u32, new_index: &mut [u32], out: &mut Vec<Hyp<T>>) {
    let mut chain = vec![];
    let mut cur = h;
    while cur != NO_PIECE && new_index[cur as usize] == NO_PIECE {
        chain.push(cur);
        cur = hyps[cur as usize].next;
    }
    // Copy from the tail so every `next` is already mapped.
    for &old in chain.iter().rev() {
        let mut hyp = hyps[old as usize];
        if hyp.next != NO_PIECE {
            hyp.next = new_index[hyp.next as usize];
        }
        out.push(hyp);
        new_index[old as usize] = (out.len() - 1) as u32;
    }
}
