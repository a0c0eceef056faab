//! SentencePiece compatibility: the `.model` protobuf, SentencePiece's normalizer, its BPE,
//! Unigram, char and word segmenters with SentencePiece's exact rules, and the processor that
//! ties them together (`tokenmill.sentencepiece` in Python).
pub mod bpe;
pub mod darts;
pub mod flatbuffer;
pub mod model;
pub mod normalizer;
pub mod processor;
pub mod proto;
pub mod rules;
pub mod trainer;
pub mod unigram_cache;
mod unigram_trainer;

pub use normalizer::{Normalized, SpNormalizer, SPACE_SYMBOL};
pub use processor::{EncodeOptions, EncodedPiece, EncodedText, Processor};
pub use proto::{ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec};
