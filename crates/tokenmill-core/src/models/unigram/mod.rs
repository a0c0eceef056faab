//! Unigram: the probabilistic subword model of SentencePiece (Kudo 2018).
//!
//! - `model`: the [`Unigram`] model (best path, n-best, sampling; `tokenizers`' and
//!   sentencepiece's scoring rules);
//! - `lattice`: the segmentation lattice and its algorithms (Viterbi, n-best A*, forward /
//!   backward, marginals, forward-filtering backward-sampling, entropy);
//! - `serialization`: the tokenizer.json "model" section.
pub mod lattice;
mod model;
mod serialization;

pub use lattice::{Lattice, Real};
pub use model::{PieceKind, Segmentation, Unigram, UNK_PENALTY};

#[cfg(test)]
mod tests;
