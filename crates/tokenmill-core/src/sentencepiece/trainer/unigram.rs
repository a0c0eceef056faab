//! `SentencePieceTrainer` with `model_type=unigram` (sentencepiece's default): the sentencepiece
//! options mapped onto tokenmill's Unigram trainer ([`crate::trainers::unigram::train_pieces`],
//! SentencePiece's algorithm: suffix-array seeds, EM with digamma expected counts, pruning by
//! likelihood loss).
//!
//! The words come from the shared SentencePiece pipeline (normalized, split into words as
//! `split_by_whitespace` says, characters outside the coverage already ▅, meta pieces replaced
//! by the boundary character), so the engine runs with full coverage. Words are cut at the
//! boundary character first: no piece may contain it, and this keeps it out of the required
//! characters, as SentencePiece does.
//!
//! SentencePiece seeds its pieces from the suffix array of the whole sentences and runs EM on
//! their words; here both run on the words with counts. No piece may cross a word (the
//! whitespace rules forbid ▁ inside a piece), so every candidate's frequency is the same, and
//! the suffix array is over the distinct words only (about a tenth of the text).
//!
//! May import the trainer interface (`super`), `sentencepiece::proto` and `trainers::unigram`.
use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::sentencepiece::proto::TrainerSpec;
use crate::trainers::unigram::{train_pieces, Flavor, PieceRules, UnigramConfig};

/// The learned pieces (meta pieces excluded) with their scores, best first.
pub(super) fn train_unigram(
    spec: &TrainerSpec,
    words: Vec<(String, u64)>,
    num_meta_pieces: usize,
    boundary: char,
) -> Result<Vec<(String, f32)>> {
    let config = UnigramConfig {
        flavor: Flavor::SentencePiece,
        vocab_size: spec.vocab_size().max(0) as usize,
        num_meta_pieces,
        n_sub_iterations: spec.num_sub_iterations().max(0) as usize,
        shrinking_factor: spec.shrinking_factor() as f64,
        max_piece_length: spec.max_sentencepiece_length().max(0) as usize,
        seed_size: spec.seed_sentencepiece_size().max(0) as usize,
        character_coverage: 1.0,
        initial_alphabet: Default::default(),
        rules: Some(PieceRules {
            split_by_whitespace: spec.split_by_whitespace(),
            treat_whitespace_as_suffix: spec.treat_whitespace_as_suffix(),
            allow_whitespace_only_pieces: spec.allow_whitespace_only_pieces(),
            split_by_unicode_script: spec.split_by_unicode_script(),
            split_by_number: spec.split_by_number(),
            split_digits: spec.split_digits(),
        }),
        show_progress: false,
    };
    let mut fragments: FxHashMap<&str, u64> = FxHashMap::default();
    for (word, count) in &words {
        for fragment in word.split(boundary).filter(|f| !f.is_empty()) {
            *fragments.entry(fragment).or_default() += count;
        }
    }
    let fragments: Vec<(String, u64)> =
        fragments.into_iter().map(|(s, n)| (s.to_string(), n)).collect();
    drop(words);
    let trained = train_pieces(&config, fragments)?;
    Ok(trained.pieces.into_iter().map(|(piece, score)| (piece, score as f32)).collect())
}
