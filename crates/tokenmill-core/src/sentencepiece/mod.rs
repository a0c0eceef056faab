//! SentencePiece compatibility (`tokenmill.sentencepiece` in Python), laid out as sentencepiece
//! is: an adapter with sentencepiece's formats, rules and API over the shared engines, never a
//! second engine.
//!
//! - `.model` I/O and flags: `proto` (the `ModelProto` protobuf: pieces, trainer and normalizer
//!   specs; generated at build time from the crate's `proto/*.proto`), `flatbuffer` (the
//!   flatbuffer model format);
//! - the normalizer: `normalizer` (sentencepiece's normalization, offsets included); its charsmap
//!   builder apart in `rules`, the built-in charsmaps in `charsmaps/`;
//! - `model` (model_interface.cc): the vocabulary with sentencepiece's lookup rules, the
//!   user-defined-symbol matcher, word splitting, the id writer, and the char and word models;
//! - per-model adapters over the shared engines: `unigram` (over `models::unigram`, with its
//!   word cache in `unigram_cache`) and `bpe` (over `models::bpe`'s merge kernel);
//! - `processor`: `SentencePieceProcessor` (encode, decode, n-best, sampling, entropy);
//! - training: `trainer/`, laid out as sentencepiece's trainers: the shared trainer interface
//!   (sentence loading and normalization, character coverage, meta pieces, the `.model` it
//!   writes, options, input files) and one file per model type (bpe, char, word, unigram), over
//!   the engines in `trainers`.
//!
//! May import the engines (`models`, `trainers`, `utils`, `normalizers`); nothing outside this
//! folder but the Python bindings imports it.
pub(crate) mod bpe;
pub mod flatbuffer;
pub(crate) mod model;
pub(crate) mod normalizer;
pub mod processor;
pub(crate) mod proto;
pub mod rules;
pub mod trainer;
pub(crate) mod unigram;
pub(crate) mod unigram_cache;

pub use normalizer::{Normalized, SpNormalizer, SPACE_SYMBOL};
pub use processor::{EncodeOptions, EncodedPiece, EncodedText, Processor};
pub use proto::{ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec};
