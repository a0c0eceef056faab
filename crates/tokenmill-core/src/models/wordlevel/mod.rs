//! WordLevel: each word is one token, looked up whole in the vocabulary.
//!
//! - `model`: the [`WordLevel`] model and [`WordLevelBuilder`];
//! - `files`: `vocab.json`;
//! - `serialization`: the tokenizer.json "model" section.
//!
//! Its trainer is `trainers::wordlevel::WordLevelTrainer`.
//!
//! May import `tokenizer`'s model contracts, `models::bpe` (vocabulary-file helpers), `utils`
//! and `error`.
pub mod files;
mod model;
mod serialization;

pub use model::{Vocab, WordLevel, WordLevelBuilder, DEFAULT_UNK_TOKEN};
