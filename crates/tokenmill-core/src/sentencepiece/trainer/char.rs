//! `model_type=char` (char_model_trainer.cc): the required characters, most frequent first,
//! scored by their log frequency.
//!
//! May import the trainer interface (`super`) and `sentencepiece::proto`.
use crate::sentencepiece::proto::TrainerSpec;

pub(super) fn train_char(
    spec: &TrainerSpec,
    required: &[(char, u64)],
    budget: usize,
) -> Vec<(String, f32)> {
    let sum: u64 = required.iter().map(|(_, n)| n).sum();
    let logsum = (sum as f32).ln();
    required
        .iter()
        .take(if spec.use_all_vocab() { usize::MAX } else { budget })
        .map(|(c, n)| (c.to_string(), (*n as f32).ln() - logsum))
        .collect()
}
