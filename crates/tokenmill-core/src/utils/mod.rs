//! Shared helpers: regex engine wrapper, byte-level alphabet, offset conversion, parallelism.
pub mod byte_level;
pub mod custom;
pub mod darts;
pub mod offsets;
pub mod padding;
pub mod parallel;
pub mod prefetch;
pub mod regex;
pub(crate) mod shared_snapshot;
pub mod tokens_by_id;
pub mod truncation;
pub mod vocabulary;
pub(crate) mod word_cache;
