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
use std::collections::HashMap;

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::bpe::{BpeTrainer, Vocab};
use super::merge_loop::{
    unpack, CountAndWords, Heap, Merge, MergeLoop, MergeRule, PairTable, Pairs, Refresh, Step,
    Words,
};
use super::progress::Progress;
use super::spill::CountTable;
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
        self.train_from_counts(&self.bpe_trainer.words, &[])
    }

    /// Learns the vocabulary from `counts` and records the merge history; the `##x` forms listed
    /// in `form_order` (usually none) get their ids first, in that order (see
    /// [`BpeTrainer::train_from_counts`]; lets tests replay the hash order of a `tokenizers` run).
    pub fn train_from_counts(
        &self,
        counts: &CountTable,
        form_order: &[String],
    ) -> Result<WordPieceTrainResult> {
        super::bpe::check_memory("WordPiece", counts, &self.bpe_trainer.budget())?;
        let (vocab, history) = match self.algorithm {
            WordPieceAlgorithm::Bpe => {
                let result = self.bpe_trainer.train_from_counts(counts, form_order)?;
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

/// The likelihood algorithm (see the module docs), on the shared merge loop.
fn likelihood_training(
    options: &BpeTrainer,
    counts: &CountTable,
    form_order: &[String],
) -> (Vec<String>, History) {
    let (vocab, words) = options.initial_words(counts, form_order, None);
    let pairs = words.count_pairs(|_| CountAndWords::default());
    let mut rule = LikelihoodRule::new(options, vocab, &words, &pairs);
    let candidates = pairs.keys().filter_map(|&p| rule.candidate(&pairs, p)).collect();
    MergeLoop::new(words, pairs, candidates).run(&mut rule);
    rule.progress.finish();
    (rule.vocab.tokens, rule.history)
}

/// The likelihood rule: symbol counts beside the pair counts, and a heap of scored candidates.
/// A heap entry is valid while the pair count and both symbol counts are those it was scored
/// with; every change pushes a fresh entry, stale ones are dropped when popped. A pair whose
/// count falls to zero leaves the table.
struct LikelihoodRule<'a> {
    options: &'a BpeTrainer,
    vocab: Vocab,
    symbol_counts: Vec<u64>,
    /// The pairs each symbol takes part in (left or right) with a positive count.
    symbol_pairs: Vec<FxHashSet<u64>>,
    /// The pairs whose counts changed in this merge.
    touched: Vec<u64>,
    history: History,
    progress: Progress,
}

impl<'a> LikelihoodRule<'a> {
    fn new(
        options: &'a BpeTrainer,
        vocab: Vocab,
        words: &Words,
        pairs: &PairTable<CountAndWords>,
    ) -> Self {
        let mut symbol_counts = vec![0; vocab.len()];
        for w in 0..words.len() {
            for &s in words.word(w) {
                symbol_counts[s as usize] += words.count(w);
            }
        }
        let mut symbol_pairs = vec![FxHashSet::default(); vocab.len()];
        for &p in pairs.keys() {
            let (a, b) = unpack(p);
            symbol_pairs[a as usize].insert(p);
            symbol_pairs[b as usize].insert(p);
        }
        let todo = options.vocab_size.saturating_sub(vocab.len()) as u64;
        LikelihoodRule {
            options,
            vocab,
            symbol_counts,
            symbol_pairs,
            touched: Vec::new(),
            history: Vec::new(),
            progress: Progress::new(options.show_progress, todo, "Compute merges"),
        }
    }

    /// The heap entry of `pair` as its counts are now, if it may be merged.
    fn candidate(&self, pairs: &PairTable<CountAndWords>, pair: u64) -> Option<Candidate> {
        let count = pairs.get(&pair).map_or(0, |p| p.count.max(0) as u64);
        if count == 0 || count < self.options.min_frequency {
            return None;
        }
        let (a, b) = unpack(pair);
        let denominator =
            self.symbol_counts[a as usize] as u128 * self.symbol_counts[b as usize] as u128;
        Some(Candidate { count, denominator, pair })
    }

    /// The id of token `text`, added (with no occurrences yet) if new.
    fn token_id(&mut self, text: &str) -> u32 {
        let id = self.vocab.get_or_add(text);
        if id as usize == self.symbol_counts.len() {
            self.symbol_counts.push(0);
            self.symbol_pairs.push(FxHashSet::default());
        }
        id
    }

    /// `pair` no longer occurs.
    fn forget(&mut self, pair: u64) {
        let (a, b) = unpack(pair);
        self.symbol_pairs[a as usize].remove(&pair);
        self.symbol_pairs[b as usize].remove(&pair);
    }
}

impl MergeRule for LikelihoodRule<'_> {
    type Pair = CountAndWords;
    type Candidate = Candidate;

    fn done(&self) -> bool {
        self.vocab.len() >= self.options.vocab_size
    }

    fn refresh(&self, top: Candidate, pairs: &PairTable<CountAndWords>) -> Refresh<Candidate> {
        if self.candidate(pairs, top.pair).as_ref() == Some(&top) {
            Refresh::Current(top)
        } else {
            Refresh::Stale(None)
        }
    }

    /// Merges `best` everywhere: its pair leaves the table at once (every word it occurs in
    /// is visited, so no occurrence is left).
    fn choose(&mut self, best: Candidate, pairs: &mut PairTable<CountAndWords>) -> Step {
        let (left, right) = unpack(best.pair);
        let (a, b) = (&self.vocab.tokens[left as usize], &self.vocab.tokens[right as usize]);
        let score = best.count as f64 / best.denominator as f64;
        self.history.push((a.clone(), b.clone(), MergeScore::Likelihood(score)));
        let text = self.options.merged_token(a, b);
        let new_id = self.token_id(&text);
        let mut words = pairs.remove(&best.pair).map(|p| p.words).unwrap_or_default();
        self.forget(best.pair);
        words.sort_unstable();
        words.dedup();
        Step::Merge(Merge::new(left, right, new_id, words))
    }

    fn changed(&mut self, pair: u64, stats: &mut CountAndWords, _: i64, _: u32) -> bool {
        self.touched.push(pair);
        if stats.count <= 0 {
            self.forget(pair);
            return false;
        }
        let (a, b) = unpack(pair);
        self.symbol_pairs[a as usize].insert(pair);
        self.symbol_pairs[b as usize].insert(pair);
        true
    }

    /// The counts of `left`, `right` and the new token changed: so did the scores of every
    /// pair they take part in, besides the pairs whose counts changed.
    fn merged(&mut self, merge: &Merge, pairs: &mut Pairs<Self>, heap: &mut Heap<Self>) {
        let occurrences = merge.occurrences;
        self.symbol_counts[merge.left as usize] -= occurrences;
        self.symbol_counts[merge.right as usize] -= occurrences;
        self.symbol_counts[merge.new_id as usize] += occurrences;
        let mut touched = std::mem::take(&mut self.touched);
        for s in [merge.left, merge.right, merge.new_id] {
            touched.extend(self.symbol_pairs[s as usize].iter().copied());
        }
        touched.sort_unstable();
        touched.dedup();
        heap.extend(touched.drain(..).filter_map(|p| self.candidate(pairs, p)));
        self.touched = touched;
        // Rebuilds the heap from the live pairs when stale entries dominate it.
        if heap.len() > 4 * pairs.len() + (1 << 16) {
            heap.clear();
            heap.extend(pairs.keys().filter_map(|&p| self.candidate(pairs, p)));
        }
        self.progress.set_position(self.history.len() as u64);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> CountTable {
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
        let r = t
            .train_from_counts(&counts(&[("xq", 1), ("ab", 5), ("ac", 5), ("cb", 5)]), &[])
            .unwrap();
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
        t.train_from_counts(&counts(&[("ab", 2), ("ac", 1)]), &[]).unwrap();
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
        let r = t.train_from_counts(&words, &[]).unwrap();
        let bpe = t.bpe_trainer.train_from_counts(&words, &[]).unwrap();
        assert_eq!(r.vocab, bpe.vocab);
        assert!(r.vocab.contains(&"##b".to_string()));
        let counts: Vec<MergeScore> =
            bpe.history.iter().map(|m| MergeScore::Count(m.count)).collect();
        assert_eq!(t.merge_history.get().into_iter().map(|h| h.2).collect::<Vec<_>>(), counts);
    }
}
