//! Models: turn one pre-tokenized piece into tokens. One folder per model family.
pub mod bpe;
