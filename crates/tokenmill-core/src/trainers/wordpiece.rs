//! The WordPiece trainer, with two algorithms.
//!
//! * [`WordPieceAlgorithm::Bpe`] (the default) is what `tokenizers`' WordPieceTrainer does: BPE
//!   training with the `##` continuing-subword prefix (merges by pair count), keeping only the
//!   vocabulary. It runs tokenmill's [`BpeTrainer`], so it gives the same vocabulary as
//!   `tokenizers` under the rules in the [module docs](super).
//! * [`WordPieceAlgorithm::Likelihood`] is the classic WordPiece rule (Schuster & Nakajima; the
//!   Hugging Face course): at each step merge the pair with the highest
//!   `score(a, b) = count(a b) / (count(a) · count(b))`, where `count(a b)` is how often the pair
//!   occurs and `count(x)` how often symbol `x` occurs in the current segmentation of the corpus
//!   (both weighted by word counts). Scores are compared exactly (as fractions); **ties go to the
//!   lowest pair of ids** (first id, then second id). Pairs seen fewer than `min_frequency`
//!   times are never merged. It starts from the same vocabulary as the BPE algorithm (special
//!   tokens, alphabet with `limit_alphabet` / `initial_alphabet`, `##x` forms) and stops at
//!   `vocab_size` or when no pair is left.
//!
//! Both record the merges of the last run (`merge_history`): the pair and its count (BPE) or
//! its score (likelihood).
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::bpe::BpeTrainer;
use super::progress::Progress;
use super::word_counts::WordCounts;
use super::AddedToken;
use crate::error::Result;

/// Which merge rule a [`WordPieceTrainer`] uses (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WordPieceAlgorithm {
    /// Merge the most frequent pair (`tokenizers`' WordPieceTrainer).
    #[default]
    Bpe,
    /// Merge the pair with the highest `count(ab) / (count(a) · count(b))`.
    Likelihood,
}

impl std::str::FromStr for WordPieceAlgorithm {
    type Err = crate::error::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "bpe" => Ok(WordPieceAlgorithm::Bpe),
            "likelihood" => Ok(WordPieceAlgorithm::Likelihood),
            other => Err(crate::error::Error::InvalidArgument(format!(
                "unknown WordPiece training \
                algorithm {other:?} (expected \"bpe\" or \"likelihood\")"
            ))),
        }
    }
}

impl WordPieceAlgorithm {
    pub fn name(&self) -> &'static str {
        match self {
            WordPieceAlgorithm::Bpe => "bpe",
            WordPieceAlgorithm::Likelihood => "likelihood",
        }
    }
}

/// What made a merge win: its pair count (BPE) or its likelihood score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MergeScore {
    Count(u64),
    Likelihood(f64),
}

/// The merges of the last run as (left, right, score).
pub type ScoreHistory = super::History<(String, String, MergeScore)>;

/// Trains a WordPiece vocabulary. The options live in `bpe_trainer` (as in `tokenizers`, whose
/// WordPieceTrainer wraps a BpeTrainer); the default prefix is `##`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WordPieceTrainer {
    pub bpe_trainer: BpeTrainer,
    #[serde(default)]
    pub algorithm: WordPieceAlgorithm,
    #[serde(skip)]
    pub merge_history: ScoreHistory,
}

impl Default for WordPieceTrainer {
    fn default() -> Self {
        WordPieceTrainer {
            bpe_trainer: BpeTrainer {
                continuing_subword_prefix: Some("##".into()),
                ..Default::default()
            },
            algorithm: WordPieceAlgorithm::Bpe,
            merge_history: ScoreHistory::default(),
        }
    }
}

/// What WordPiece training learned.
#[derive(Debug, Clone, PartialEq)]
pub struct WordPieceTrainResult {
    /// Tokens by id.
    pub vocab: Vec<String>,
    pub special_tokens: Vec<AddedToken>,
    pub continuing_subword_prefix: Option<String>,
}

impl WordPieceTrainResult {
    pub fn vocab_map(&self) -> HashMap<String, u32> {
        self.vocab.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect()
    }
}

impl WordPieceTrainer {
    pub fn special_tokens(&self) -> &[AddedToken] {
        &self.bpe_trainer.special_tokens
    }

    /// Learns the vocabulary from the fed word counts and records the merge history.
    pub fn train_and_record(&self) -> Result<WordPieceTrainResult> {
        self.train_from_counts(&self.bpe_trainer.words)
    }

    /// Learns the vocabulary from `counts` and records the merge history.
    pub fn train_from_counts(&self, counts: &WordCounts) -> Result<WordPieceTrainResult> {
        self.train_with_form_order(counts, &[])
    }

    /// Like [`train_from_counts`](Self::train_from_counts), with the `##x` forms given ids in
    /// the order of `form_order` first (see [`BpeTrainer::train_with_form_order`]; lets tests
    /// replay the hash order of a `tokenizers` run).
    pub fn train_with_form_order(
        &self,
        counts: &WordCounts,
        form_order: &[String],
    ) -> Result<WordPieceTrainResult> {
        let (vocab, history) = match self.algorithm {
            WordPieceAlgorithm::Bpe => {
                let result = self.bpe_trainer.train_with_form_order(counts, form_order)?;
                let history = result
                    .history_texts()
                    .into_iter()
                    .map(|(a, b, n)| (a, b, MergeScore::Count(n)))
                    .collect();
                (result.vocab, history)
            }
            WordPieceAlgorithm::Likelihood => {
                likelihood_training(&self.bpe_trainer, counts, form_order)
            }
        };
        self.merge_history.set(history);
        Ok(WordPieceTrainResult {
            vocab,
            special_tokens: self.bpe_trainer.special_tokens.clone(),
            continuing_subword_prefix: self.bpe_trainer.continuing_subword_prefix.clone(),
        })
    }
}

type History = Vec<(String, String, MergeScore)>;

/// The likelihood algorithm (see the module docs).
fn likelihood_training(
    options: &BpeTrainer,
    counts: &WordCounts,
    form_order: &[String],
) -> (Vec<String>, History) {
    let (tokens, words) = options.initial_words(counts, form_order);
    let mut state = LikelihoodState::new(tokens, words, options.min_frequency);
    let mut history = Vec::new();
    let todo = options.vocab_size.saturating_sub(state.tokens.len()) as u64;
    let progress = Progress::new(options.show_progress, todo, "Compute merges");
    while state.tokens.len() < options.vocab_size {
        let Some((pair, score)) = state.best_pair() else { break };
        let (left, right) = unpack(pair);
        let text =
            options.merged_token(&state.tokens[left as usize], &state.tokens[right as usize]);
        history.push((
            state.tokens[left as usize].clone(),
            state.tokens[right as usize].clone(),
            MergeScore::Likelihood(score),
        ));
        state.merge(pair, text);
        progress.set_position(history.len() as u64);
    }
    progress.finish();
    (state.tokens, history)
}

/// Words as symbol ids, pair and symbol counts, and a heap of candidate scores. A heap entry is
/// valid while the pair count and both symbol counts are those it was scored with; every
/// change pushes a fresh entry, stale ones are dropped when popped.
struct LikelihoodState {
    tokens: Vec<String>,
    ids: FxHashMap<String, u32>,
    words: Vec<Vec<u32>>,
    word_counts: Vec<u64>,
    symbol_counts: Vec<u64>,
    pair_counts: FxHashMap<u64, u64>,
    /// Words where each pair has occurred (may hold stale entries).
    pair_words: FxHashMap<u64, Vec<u32>>,
    /// The pairs each symbol takes part in (left or right) with a positive count.
    symbol_pairs: Vec<FxHashSet<u64>>,
    heap: BinaryHeap<Candidate>,
    min_frequency: u64,
}

impl LikelihoodState {
    fn new(tokens: Vec<String>, words: Vec<(Vec<u32>, u64)>, min_frequency: u64) -> Self {
        let ids = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let mut state = LikelihoodState {
            symbol_counts: vec![0; tokens.len()],
            symbol_pairs: vec![FxHashSet::default(); tokens.len()],
            tokens,
            ids,
            words: Vec::with_capacity(words.len()),
            word_counts: Vec::with_capacity(words.len()),
            pair_counts: FxHashMap::default(),
            pair_words: FxHashMap::default(),
            heap: BinaryHeap::new(),
            min_frequency,
        };
        for (w, (symbols, n)) in words.into_iter().enumerate() {
            for &s in &symbols {
                state.symbol_counts[s as usize] += n;
            }
            for pair in symbols.windows(2) {
                let p = pack(pair[0], pair[1]);
                *state.pair_counts.entry(p).or_insert(0) += n;
                let list = state.pair_words.entry(p).or_default();
                if list.last() != Some(&(w as u32)) {
                    list.push(w as u32);
                }
            }
            state.words.push(symbols);
            state.word_counts.push(n);
        }
        let pairs: Vec<u64> = state.pair_counts.keys().copied().collect();
        for &p in &pairs {
            let (a, b) = unpack(p);
            state.symbol_pairs[a as usize].insert(p);
            state.symbol_pairs[b as usize].insert(p);
        }
        state.push_all(pairs.into_iter());
        state
    }

    fn candidate(&self, pair: u64) -> Option<Candidate> {
        let count = self.pair_counts.get(&pair).copied().unwrap_or(0);
        if count == 0 || count < self.min_frequency {
            return None;
        }
        let (a, b) = unpack(pair);
        let denominator =
            self.symbol_counts[a as usize] as u128 * self.symbol_counts[b as usize] as u128;
        Some(Candidate { count, denominator, pair })
    }

    fn push_all(&mut self, pairs: impl Iterator<Item = u64>) {
        for p in pairs {
            if let Some(c) = self.candidate(p) {
                self.heap.push(c);
            }
        }
    }

    /// The best valid pair and its score, or None when no pair is left.
    fn best_pair(&mut self) -> Option<(u64, f64)> {
        while let Some(top) = self.heap.pop() {
            if self.candidate(top.pair).as_ref() == Some(&top) {
                return Some((top.pair, top.count as f64 / top.denominator as f64));
            }
        }
        None
    }

    /// Merges `pair` everywhere into the token `text` and updates counts and candidates.
    fn merge(&mut self, pair: u64, text: String) {
        let (left, right) = unpack(pair);
        let new_id = match self.ids.get(&text) {
            Some(&id) => id,
            None => {
                let id = self.tokens.len() as u32;
                self.ids.insert(text.clone(), id);
                self.tokens.push(text);
                self.symbol_counts.push(0);
                self.symbol_pairs.push(FxHashSet::default());
                id
            }
        };
        let mut words = self.pair_words.remove(&pair).unwrap_or_default();
        words.sort_unstable();
        words.dedup();
        let mut deltas: Vec<(u64, i64, u32)> = Vec::new();
        for &w in &words {
            let n = self.word_counts[w as usize];
            let merged = merge_word(&mut self.words[w as usize], left, right, new_id, |p, sign| {
                deltas.push((p, sign * n as i64, w))
            });
            let merged = merged as u64 * n;
            self.symbol_counts[left as usize] -= merged;
            self.symbol_counts[right as usize] -= merged;
            self.symbol_counts[new_id as usize] += merged;
        }
        let mut touched: BTreeSet<u64> = BTreeSet::new();
        for (p, delta, w) in deltas {
            let count = self.pair_counts.entry(p).or_insert(0);
            *count = (*count as i64 + delta).max(0) as u64;
            let (a, b) = unpack(p);
            if *count == 0 {
                self.pair_counts.remove(&p);
                self.symbol_pairs[a as usize].remove(&p);
                self.symbol_pairs[b as usize].remove(&p);
            } else {
                self.symbol_pairs[a as usize].insert(p);
                self.symbol_pairs[b as usize].insert(p);
            }
            if delta > 0 {
                let list = self.pair_words.entry(p).or_default();
                if list.last() != Some(&w) {
                    list.push(w);
                }
            }
            touched.insert(p);
        }
        // The counts of `left`, `right` and the new token changed: so did the scores of every
        // pair they take part in.
        for s in [left, right, new_id] {
            touched.extend(self.symbol_pairs[s as usize].iter().copied());
        }
        self.push_all(touched.into_iter());
        self.compact_heap();
    }

    /// Rebuilds the heap from the live pairs when stale entries dominate it.
    fn compact_heap(&mut self) {
        if self.heap.len() > 4 * self.pair_counts.len() + (1 << 16) {
            let pairs: Vec<u64> = self.pair_counts.keys().copied().collect();
            self.heap.clear();
            self.push_all(pairs.into_iter());
        }
    }
}

/// Replaces every non-overlapping `left right` (left to right) in `word` by `new_id`; reports
/// pair count changes to `delta(pair, ±1)` and returns how many pairs were merged.
fn merge_word(
    word: &mut Vec<u32>,
    left: u32,
    right: u32,
    new_id: u32,
    mut delta: impl FnMut(u64, i64),
) -> usize {
    let n = word.len();
    let (mut read, mut write, mut merged) = (0, 0, 0);
    while read < n {
        if read + 1 < n && word[read] == left && word[read + 1] == right {
            delta(pack(left, right), -1);
            if write > 0 {
                let prev = word[write - 1];
                delta(pack(prev, left), -1);
                delta(pack(prev, new_id), 1);
            }
            if read + 2 < n {
                let next = word[read + 2];
                delta(pack(right, next), -1);
                delta(pack(new_id, next), 1);
            }
            word[write] = new_id;
            read += 2;
            merged += 1;
        } else {
            word[write] = word[read];
            read += 1;
        }
        write += 1;
    }
    word.truncate(write);
    merged
}

/// A scored pair: `count / denominator`, highest first, ties to the lowest pair.
#[derive(Debug, PartialEq, Eq)]
struct Candidate {
    count: u64,
    denominator: u128,
    pair: u64,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_fractions(self.count, self.denominator, other.count, other.denominator)
            .then_with(|| other.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Compares a/b with c/d exactly (cross products in u128; f64 only if they would overflow).
fn compare_fractions(a: u64, b: u128, c: u64, d: u128) -> Ordering {
    match ((a as u128).checked_mul(d), (c as u128).checked_mul(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => (a as f64 / b as f64).total_cmp(&(c as f64 / d as f64)),
    }
}

fn pack(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

fn unpack(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> WordCounts {
        words.iter().map(|(w, n)| (w.to_string(), *n)).collect()
    }

    fn trainer(algorithm: WordPieceAlgorithm, vocab_size: usize) -> WordPieceTrainer {
        let mut t = WordPieceTrainer { algorithm, ..Default::default() };
        t.bpe_trainer.vocab_size = vocab_size;
        t.bpe_trainer.show_progress = false;
        t
    }

    #[test]
    fn likelihood_prefers_rare_symbols_that_always_go_together() {
        // "x" and "##q" only occur together; "a" "##b" is more frequent but less exclusive.
        let t = trainer(WordPieceAlgorithm::Likelihood, 100);
        let r =
            t.train_from_counts(&counts(&[("xq", 1), ("ab", 5), ("ac", 5), ("cb", 5)])).unwrap();
        let history = t.merge_history.get();
        assert_eq!((history[0].0.as_str(), history[0].1.as_str()), ("x", "##q"));
        assert_eq!(history[0].2, MergeScore::Likelihood(1.0));
        assert!(r.vocab.contains(&"xq".to_string()));
    }

    #[test]
    fn likelihood_scores_follow_the_definition() {
        // a=3 (two words), ##b=2, ##c=1: score(a,##b)=2/(3·2)=1/3, score(a,##c)=1/3: a tie, the
        // lowest pair of ids (##b < ##c) wins.
        let t = trainer(WordPieceAlgorithm::Likelihood, 100);
        t.train_from_counts(&counts(&[("ab", 2), ("ac", 1)])).unwrap();
        let h = t.merge_history.get();
        assert_eq!((h[0].0.as_str(), h[0].1.as_str()), ("a", "##b"));
        assert_eq!(h[0].2, MergeScore::Likelihood(1.0 / 3.0));
        // After it: a=1, ##c=1, score(a,##c)=1.
        assert_eq!(
            (h[1].0.as_str(), h[1].1.as_str(), h[1].2),
            ("a", "##c", MergeScore::Likelihood(1.0))
        );
    }

    #[test]
    fn bpe_algorithm_is_the_bpe_trainer_with_prefix() {
        let t = trainer(WordPieceAlgorithm::Bpe, 100);
        let words = counts(&[("abab", 2), ("cd", 4), ("ab", 1)]);
        let r = t.train_from_counts(&words).unwrap();
        let bpe = t.bpe_trainer.train_from_counts(&words).unwrap();
        assert_eq!(r.vocab, bpe.vocab);
        assert!(r.vocab.contains(&"##b".to_string()));
        let counts: Vec<MergeScore> =
            bpe.history.iter().map(|m| MergeScore::Count(m.count)).collect();
        assert_eq!(t.merge_history.get().into_iter().map(|h| h.2).collect::<Vec<_>>(), counts);
    }

    #[test]
    fn merge_word_counts_pairs() {
        let mut w = vec![1, 2, 1, 2, 3];
        let mut d = Vec::new();
        assert_eq!(merge_word(&mut w, 1, 2, 9, |p, s| d.push((unpack(p), s))), 2);
        assert_eq!(w, vec![9, 9, 3]);
        let mut net: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        for (p, s) in d {
            *net.entry(p).or_default() += s;
        }
        net.retain(|_, v| *v != 0);
        let expected: FxHashMap<(u32, u32), i64> =
            [((1, 2), -2), ((2, 1), -1), ((2, 3), -1), ((9, 9), 1), ((9, 3), 1)]
                .into_iter()
                .collect();
        assert_eq!(net, expected);
    }
}
