//! Shared helpers: regex engine wrapper, byte-level alphabet, offset conversion, parallelism.
//!
//! Also truncation and padding, vocabulary and id → token tables, user-defined components
//! (`custom`), the macros for repeated declarations (`macros`), the `"type"` tags of
//! tokenizer.json (`type_tag`), a CPU prefetch hint, the models' random generator (`shared_rng`),
//! word caches and atomic saves with the umask's permissions (`atomic`): what several stages or
//! model families share. May import `error`, `tokenizer` (truncation and padding act on
//! `Encoding`) and `pre_tokenizers::scanners` (the regex wrapper's fast path); never a model,
//! trainer or model-family folder.
pub mod atomic;
pub mod byte_level;
pub mod custom;
pub mod darts;
pub(crate) mod macros;
pub mod offsets;
pub mod padding;
pub mod parallel;
pub mod prefetch;
pub mod regex;
pub(crate) mod shared_rng;
pub(crate) mod shared_snapshot;
pub mod tokens_by_id;
pub mod truncation;
pub(crate) mod type_tag;
pub(crate) mod vocabulary;
pub(crate) mod word_cache;
