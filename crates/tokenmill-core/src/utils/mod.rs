//! Shared helpers: regex engine wrapper, byte-level alphabet, offset conversion, parallelism.
pub mod byte_level;
pub mod custom;
pub mod offsets;
pub mod padding;
pub mod regex;
pub mod parallel;
pub mod prefetch;
pub mod truncation;
pub mod tokens_by_id;
pub mod vocabulary;
pub(crate) mod shared_snapshot;
pub(crate) mod word_cache;
