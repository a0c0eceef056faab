//! `model_type=word` (word_model_trainer.cc): the most frequent words, scored by their log
//! frequency.
//!
//! May import the trainer interface (`super`) and `sentencepiece::proto`.
use rustc_hash::FxHashMap;

use super::{sorted_by_count, UNK_CHAR};
use crate::sentencepiece::proto::TrainerSpec;

/// The most frequent words (already split, [`WordSplit`]; masking may have made some equal).
pub(super) fn train_word(
    spec: &TrainerSpec,
    words: Vec<(String, u64)>,
    budget: usize,
) -> Vec<(String, f32)> {
    let mut freq: FxHashMap<String, u64> = FxHashMap::default();
    for (w, n) in words {
        *freq.entry(w).or_default() += n;
    }
    let sum: u64 = freq.values().sum();
    let logsum = (sum as f32).ln();
    sorted_by_count(freq)
        .into_iter()
        .filter(|(w, _)| !w.contains(UNK_CHAR))
        .take(if spec.use_all_vocab() { usize::MAX } else { budget })
        .map(|(w, n)| (w, (n as f32).ln() - logsum))
        .collect()
}
