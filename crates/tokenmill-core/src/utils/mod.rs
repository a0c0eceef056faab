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
#[cfg(test)]
pub(crate) mod test_data;
pub mod tokens_by_id;
pub mod truncation;
pub(crate) mod type_tag;
pub(crate) mod vocabulary;
pub(crate) mod word_cache;

/// Sizes below this are taken to be allocatable without asking (64 MB).
const PROBED_BYTES: usize = 1 << 26;

/// Whether `bytes` of memory can be had now. A large size is probed with a trial reservation,
/// released at once and never written (no page is touched): code that sizes tables from its
/// input asks first, and turns a refusal into an error naming the input where the allocation
/// itself would abort the process.
pub(crate) fn can_allocate(bytes: usize) -> bool {
    bytes < PROBED_BYTES || Vec::<u8>::new().try_reserve_exact(bytes).is_ok()
}
