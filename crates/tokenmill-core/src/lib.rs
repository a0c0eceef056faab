//! tokenmill-core: the pure-Rust engine of tokenmill.
//!
//! One module per pipeline stage, as text flows through a tokenizer:
//! `normalizers` → `pre_tokenizers` → `models` → `processors` → `decoders`.
//! `trainers` learn a model's vocabulary; `tokenizer` ties the stages together and
//! carries alignments (`NormalizedString`, `PreTokenizedString`, `Encoding`);
//! `tiktoken` is the lean byte-level BPE engine behind the tiktoken-compatible API;
//! `sentencepiece` reads and writes `.model` files and holds sentencepiece's normalizer, encoders
//! and trainer; `utils` what several of them share; `error` the one error type.
//!
//! Imports flow down the pipeline: `error` and `utils` import no stage (bar `utils`' regex fast
//! path from `pre_tokenizers::scanners` and the `Encoding` that truncation and padding act on);
//! a stage imports `tokenizer`'s traits and earlier stages, never a later one;
//! `tokenizer`, `trainers`, `sentencepiece` and `tiktoken` assemble the stages. No Python types
//! anywhere: the bindings (tokenmill-py) convert. Word-level tools (word tokenizer, sentence
//! splitter, Chinese/Japanese segmenter, collocations) live in the `tokenmill-words` crate.
//!
//! The API is what is reachable from here through `pub` modules: the stage modules, and inside
//! them the modules that the bindings, the word-level crate, the examples and the benches use;
//! every other module is `pub(crate)`, so its items are internals whatever their own visibility.

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
