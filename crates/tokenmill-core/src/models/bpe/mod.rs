//! BPE: byte-pair encoding (classic with suffix/prefix, and byte-level), and the merge kernel
//! every BPE flavour of tokenmill runs on.
//!
//! - `merge`: the one BPE merge kernel: a word's symbols merged pair by pair in the order a
//!   [`PairRanker`](merge::PairRanker) gives (small-word scan, 4-ary heap with lazy
//!   invalidation, both dropout rules). `tiktoken::bpe` and `sentencepiece::bpe` are rankers
//!   over it, as is this folder's `tokenizers` model;
//! - `model`: the [`BPE`] model (`tokenizers`' rules): its options, [`BpeBuilder`], the
//!   merges-map ranker, dropout, `ignore_merges`; words are cached by `utils::word_cache`;
//! - `serialization`: the tokenizer.json "model" section;
//! - `files`: vocab.json + merges.txt (and encoder.json + vocab.bpe).
//!
//! May import: `crate::error`, `crate::utils`, `crate::tokenizer` (the `Model` trait). `merge`
//! imports nothing of the crate: it knows symbols and rankers, not vocabularies.
/// The word cache, shared with the other models (see `utils::word_cache`).
pub(crate) use crate::utils::word_cache as cache;
pub mod files;
pub(crate) mod merge;
mod model;
pub(crate) mod serialization;

pub use model::{
    byte_fallback_token, BpeBuilder, BpeOptions, MergeMap, Merges, Vocab, BPE,
    DEFAULT_CACHE_CAPACITY,
};
