//! Trainers: learn a model's vocabulary from a corpus.
//!
//! Training runs in two phases, like `tokenizers`:
//! 1. **feed** — every sequence of the corpus goes through the tokenizer's normalizer and
//!    pre-tokenizer (the `process` callback) and the resulting words are counted
//!    ([`word_counts`]: in parallel, streamed chunk by chunk, never holding the corpus whole;
//!    counts are `u64`).
//! 2. **train** — the model is learned from the word counts ([`bpe::BpeTrainer`]).
//!
//! [`TrainerWrapper`] is the enum the Tokenizer drives: `feed(iterator, process)` then `train`.
//!
//! # BPE: the exact rules (the same merges and vocabulary as `tokenizers`' BpeTrainer)
//! * ids go to the special tokens first (in the given order, duplicates once), then to the
//!   alphabet in code-point order, then to the continuing-subword / end-of-word forms of
//!   alphabet characters (`##a`, `a</w>`) in code-point order of their text, then to merged
//!   tokens in the order they are learned.
//! * the alphabet is every character of the corpus plus `initial_alphabet`; with
//!   `limit_alphabet = n` only the `n` most frequent characters are kept (initial-alphabet
//!   characters count as infinitely frequent; among equally frequent characters the lower code
//!   points are kept). Characters outside the alphabet are dropped from the words.
//! * at each step the pair with the highest count is merged; **ties go to the lowest pair of
//!   ids** (first id, then second id). Training stops at `vocab_size` tokens, or when the best
//!   count is below `min_frequency` (or zero).
//! * `tokenizers` gives the `##x` / `x</w>` tokens ids in hash order, so its tie-breaking there
//!   varies from run to run; tokenmill uses the code-point order above and is deterministic
//!   (the same set of tokens, the same merges wherever `tokenizers`' own result is unambiguous).
pub mod bpe;
pub mod corpus;
pub mod progress;
pub mod word_counts;

use serde::{Deserialize, Serialize};

pub use bpe::{BpeTrainResult, BpeTrainer, LearnedMerge};
pub use word_counts::WordCounts;

use crate::error::Result;

/// A special token declared to a trainer. Same fields (and JSON form) as `tokenizers`' AddedToken,
/// so the Tokenizer can register it as an added token after training.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SpecialToken {
    pub content: String,
    #[serde(default)]
    pub single_word: bool,
    #[serde(default)]
    pub lstrip: bool,
    #[serde(default)]
    pub rstrip: bool,
    #[serde(default)]
    pub normalized: bool,
    #[serde(default = "default_true")]
    pub special: bool,
}

fn default_true() -> bool {
    true
}

impl SpecialToken {
    /// A special token with `tokenizers`' defaults for special tokens (not normalized).
    pub fn new(content: impl Into<String>) -> Self {
        SpecialToken { content: content.into(), single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }
    }
}

/// Every trainer the Tokenizer can drive. Serialized like `tokenizers` (`{"type": "BpeTrainer", ...}`)
/// so trainers can be pickled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum TrainerWrapper {
    BpeTrainer(BpeTrainer),
}

impl TrainerWrapper {
    pub fn should_show_progress(&self) -> bool {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.show_progress,
        }
    }

    /// Counts the words of `sequences` (each cut into words by `process`), replacing earlier counts.
    pub fn feed<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send + Sync,
        F: Fn(&str) -> Result<Vec<String>> + Sync,
    {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.feed(sequences, process),
        }
    }

    /// Like [`feed`](Self::feed) with a callback that hands each word to `emit` without allocating;
    /// sequences may be errors (e.g. unreadable lines), which stop the feed.
    pub fn feed_with<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send + Sync,
        F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
    {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.feed_with(sequences, process),
        }
    }

    /// Trains a BPE model's data from the fed words (and records the merge history).
    pub fn train_bpe(&mut self) -> Result<BpeTrainResult> {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.train_and_record(),
        }
    }

    /// The special tokens the trained model needs registered in the Tokenizer.
    pub fn special_tokens(&self) -> &[SpecialToken] {
        match self {
            TrainerWrapper::BpeTrainer(t) => &t.special_tokens,
        }
    }
}

impl From<BpeTrainer> for TrainerWrapper {
    fn from(t: BpeTrainer) -> Self {
        TrainerWrapper::BpeTrainer(t)
    }
}
