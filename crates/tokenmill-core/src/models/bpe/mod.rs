//! BPE: byte-pair encoding (classic with suffix/prefix, and byte-level).
//!
//! - `model`: the [`BPE`] model, its options and [`BpeBuilder`] (words are cached by
//!   `utils::word_cache`);
//! - `word`: merging one word's symbols in rank order (O(n log n));
//! - `serialization`: the tokenizer.json "model" section;
//! - `files`: vocab.json + merges.txt (and encoder.json + vocab.bpe).
/// The word cache, shared with the other models (see `utils::word_cache`).
pub(crate) use crate::utils::word_cache as cache;
pub mod files;
mod model;
pub(crate) mod serialization;
mod word;

pub use model::{
    byte_fallback_token, BpeBuilder, BpeOptions, MergeMap, Merges, Vocab, BPE,
    DEFAULT_CACHE_CAPACITY,
};
