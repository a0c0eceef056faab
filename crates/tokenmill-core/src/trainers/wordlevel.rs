//! WordLevel training: the vocabulary is the corpus's most frequent words.
//!
//! The same vocabulary and ids as `tokenizers`' WordLevelTrainer:
//! * ids go to the special tokens first, in the given order, then to the words by decreasing
//!   count; **words of equal count are in increasing byte order** of their UTF-8 text (Rust's
//!   `str` order, which is also code-point order);
//! * words seen fewer than `min_frequency` times are left out;
//! * the list (special tokens included) is cut at `vocab_size` entries.
//!
//! Like `tokenizers`, nothing is deduplicated: a special token that is also a corpus word
//! (or a special token given twice) takes one place in the list per occurrence, and the vocabulary
//! keeps its last id, so the earlier id is a hole (no token has it) and the vocabulary is one
//! smaller. tokenmill reproduces this so that the ids match.
use std::cmp::Reverse;

use serde::{Deserialize, Serialize};

use super::spill::CountTable;
use super::AddedToken;
use crate::models::wordlevel::Vocab;

/// Options of WordLevel training (the same names, defaults and serialized layout as
/// `tokenizers.trainers.WordLevelTrainer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WordLevelTrainer {
    /// Words seen fewer times than this are not in the vocabulary.
    pub min_frequency: u64,
    /// Target vocabulary size, special tokens included.
    pub vocab_size: usize,
    pub show_progress: bool,
    /// Tokens that get the first ids, in this order.
    pub special_tokens: Vec<AddedToken>,
    /// The word counts gathered by `feed` (`TrainerWrapper::feed_with`: the shared counting).
    pub words: CountTable,
    /// Memory budget of counting, in bytes (None: [`super::spill::default_max_memory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<u64>,
    /// Folder where counting spills sorted runs (None: the system's temporary folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_dir: Option<std::path::PathBuf>,
}

impl Default for WordLevelTrainer {
    fn default() -> Self {
        WordLevelTrainer {
            min_frequency: 0,
            vocab_size: 30_000,
            show_progress: true,
            special_tokens: vec![],
            words: CountTable::default(),
            max_memory: None,
            spill_dir: None,
        }
    }
}

impl WordLevelTrainer {
    /// The vocabulary learned from the fed word counts.
    pub fn train(&self) -> Vocab {
        self.train_from_counts(&self.words)
    }

    /// The vocabulary learned from `counts` (see the module docs for the order).
    pub fn train_from_counts(&self, counts: &CountTable) -> Vocab {
        let mut words: Vec<(&str, u64)> =
            counts.iter().filter(|&(_, n)| n >= self.min_frequency).collect();
        // Counts are unique per word, so an unstable sort is deterministic.
        words.sort_unstable_by_key(|&(word, n)| (Reverse(n), word));
        let specials = self.special_tokens.iter().map(|t| t.content.as_str());
        // Collecting into a map keeps the last id of a repeated token (see the module docs).
        specials
            .chain(words.into_iter().map(|(word, _)| word))
            .take(self.vocab_size)
            .enumerate()
            .map(|(id, token)| (token.to_owned(), id as u32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(list: &[(&str, u64)]) -> CountTable {
        list.iter().map(|&(w, n)| (w.to_string(), n)).collect()
    }

    fn vocab(list: &[(&str, u32)]) -> Vocab {
        list.iter().map(|&(w, n)| (w.to_string(), n)).collect()
    }

    #[test]
    fn most_frequent_first_ties_in_byte_order() {
        let words = counts(&[
            ("the", 25),
            ("roses", 22),
            ("are", 24),
            ("red", 12),
            ("blue", 16),
            ("é", 16),
            ("z", 16),
        ]);
        let trainer = WordLevelTrainer { vocab_size: 6, ..Default::default() };
        let expected =
            vocab(&[("the", 0), ("are", 1), ("roses", 2), ("blue", 3), ("z", 4), ("é", 5)]);
        assert_eq!(trainer.train_from_counts(&words), expected);
        let trainer = WordLevelTrainer { min_frequency: 22, ..Default::default() };
        assert_eq!(
            trainer.train_from_counts(&words),
            vocab(&[("the", 0), ("are", 1), ("roses", 2)])
        );
    }

    #[test]
    fn special_tokens_first_and_repeats_keep_their_last_id() {
        let words = counts(&[("a", 3), ("<s>", 2), ("b", 1)]);
        let special = |t: &str| AddedToken::from(t, true);
        let trainer = WordLevelTrainer {
            special_tokens: vec![special("<s>"), special("<pad>")],
            ..Default::default()
        };
        // "<s>" is listed at 0 (special) and at 3 (a word): it keeps 3, and 0 is a hole.
        assert_eq!(
            trainer.train_from_counts(&words),
            vocab(&[("<pad>", 1), ("a", 2), ("<s>", 3), ("b", 4)])
        );
        let trainer = WordLevelTrainer { vocab_size: 2, ..trainer };
        assert_eq!(trainer.train_from_counts(&words), vocab(&[("<s>", 0), ("<pad>", 1)]));
    }
}
