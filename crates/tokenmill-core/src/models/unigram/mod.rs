//! Unigram: the probabilistic subword model of SentencePiece (Kudo 2018) — the one Unigram
//! engine of the crate, used by `tokenizers`-style pipelines, by `sentencepiece::unigram` (which
//! adds sentencepiece's normalizer and flags) and by the Unigram trainer.
//!
//! - `model`: the [`Unigram`] model (vocabulary, piece types, the trie, n-best, sampling;
//!   `tokenizers`' and sentencepiece's scoring rules) and [`PieceType`], the one piece-type enum;
//! - `viterbi`: the one Viterbi, generic over the score arithmetic (`f32` as sentencepiece,
//!   `f64` as `tokenizers`), with the near-tie tracking that lets a word's path be cached; its
//!   forward pass ([`best_path`] over a [`Candidates`] source) also runs the trainer's edges;
//! - `lattice`: the segmentation lattice and its algorithms (n-best A*, forward / backward,
//!   marginals, forward-filtering backward-sampling, entropy);
//! - `serialization`: the tokenizer.json "model" section.
//!
//! Imports only `crate::utils` (the double-array trie), `crate::tokenizer` (the `Model` trait) and
//! `crate::error`; never an adapter (`sentencepiece`, `tiktoken`).
pub(crate) mod lattice;
mod model;
mod serialization;
mod viterbi;

pub use lattice::{Lattice, Real};
pub use model::{PieceType, ScoredSampling, Segmentation, Unigram, UNK_PENALTY};
pub(crate) use viterbi::{backtrack, best_path, Candidates};
pub use viterbi::{exact_prefix_limit, Cell, Decisions, SENTENCEPIECE_SCORE_RESET};

#[cfg(test)]
mod tests;
