//! tokenmill-core: the pure-Rust engine of tokenmill.
//!
//! One module per pipeline stage, as text flows through a tokenizer:
//! `normalizers` → `pre_tokenizers` → `models` → `processors` → `decoders`.
//! `trainers` learn a model's vocabulary; `tokenizer` ties the stages together and
//! carries alignments (`NormalizedString`, `PreTokenizedString`, `Encoding`);
//! `tiktoken` is the lean byte-level BPE engine behind the tiktoken-compatible API.

pub mod decoders;
pub mod error;
pub mod models;
pub mod normalizers;
pub mod pre_tokenizers;
pub mod processors;
pub mod sentencepiece;
pub mod tiktoken;
pub mod tokenizer;
pub mod trainers;
pub mod utils;

pub use error::{Error, Result};

pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
