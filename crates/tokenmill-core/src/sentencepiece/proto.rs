//! The `.model` file: SentencePiece's `ModelProto` (proto2), declared by hand with `prost`'s
//! derive so that no `protoc` is needed at build time. Field numbers, types and defaults follow
//! sentencepiece_model.proto; fields are declared in field-number order so that serialization
//! writes them in the same order as the C++ library. Unknown fields and extensions are not kept.
use prost::Message;

use crate::error::{Error, Result};

#[derive(Clone, PartialEq, Message)]
pub struct TrainerSpec {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, optional, tag = "2")]
    pub model_prefix: Option<String>,
    #[prost(enumeration = "ModelType", optional, tag = "3", default = "Unigram")]
    pub model_type: Option<i32>,
    #[prost(int32, optional, tag = "4", default = "8000")]
    pub vocab_size: Option<i32>,
    #[prost(string, repeated, tag = "5")]
    pub accept_language: Vec<String>,
    #[prost(int32, optional, tag = "6", default = "0")]
    pub self_test_sample_size: Option<i32>,
    #[prost(string, optional, tag = "7")]
    pub input_format: Option<String>,
    #[prost(float, optional, tag = "10", default = "0.9995")]
    pub character_coverage: Option<f32>,
    #[prost(uint64, optional, tag = "11", default = "0")]
    pub input_sentence_size: Option<u64>,
    #[prost(int32, optional, tag = "12")]
    pub mining_sentence_size: Option<i32>,
    #[prost(int32, optional, tag = "13")]
    pub training_sentence_size: Option<i32>,
    #[prost(int32, optional, tag = "14", default = "1000000")]
    pub seed_sentencepiece_size: Option<i32>,
    #[prost(float, optional, tag = "15", default = "0.75")]
    pub shrinking_factor: Option<f32>,
    #[prost(int32, optional, tag = "16", default = "16")]
    pub num_threads: Option<i32>,
    #[prost(int32, optional, tag = "17", default = "2")]
    pub num_sub_iterations: Option<i32>,
    #[prost(int32, optional, tag = "18", default = "4192")]
    pub max_sentence_length: Option<i32>,
    #[prost(bool, optional, tag = "19", default = "true")]
    pub shuffle_input_sentence: Option<bool>,
    #[prost(int32, optional, tag = "20", default = "16")]
    pub max_sentencepiece_length: Option<i32>,
    #[prost(bool, optional, tag = "21", default = "true")]
    pub split_by_unicode_script: Option<bool>,
    #[prost(bool, optional, tag = "22", default = "true")]
    pub split_by_whitespace: Option<bool>,
    #[prost(bool, optional, tag = "23", default = "true")]
    pub split_by_number: Option<bool>,
    #[prost(bool, optional, tag = "24", default = "false")]
    pub treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "25", default = "false")]
    pub split_digits: Option<bool>,
    #[prost(bool, optional, tag = "26", default = "false")]
    pub allow_whitespace_only_pieces: Option<bool>,
    #[prost(string, repeated, tag = "30")]
    pub control_symbols: Vec<String>,
    #[prost(string, repeated, tag = "31")]
    pub user_defined_symbols: Vec<String>,
    #[prost(bool, optional, tag = "32", default = "true")]
    pub vocabulary_output_piece_score: Option<bool>,
    #[prost(bool, optional, tag = "33", default = "true")]
    pub hard_vocab_limit: Option<bool>,
    #[prost(bool, optional, tag = "34", default = "false")]
    pub use_all_vocab: Option<bool>,
    #[prost(bool, optional, tag = "35", default = "false")]
    pub byte_fallback: Option<bool>,
    #[prost(string, optional, tag = "36")]
    pub required_chars: Option<String>,
    #[prost(int32, optional, tag = "40", default = "0")]
    pub unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41", default = "1")]
    pub bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42", default = "2")]
    pub eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43", default = "-1")]
    pub pad_id: Option<i32>,
    #[prost(string, optional, tag = "44", default = " \u{2047} ")]
    pub unk_surface: Option<String>,
    #[prost(string, optional, tag = "45", default = "<unk>")]
    pub unk_piece: Option<String>,
    #[prost(string, optional, tag = "46", default = "<s>")]
    pub bos_piece: Option<String>,
    #[prost(string, optional, tag = "47", default = "</s>")]
    pub eos_piece: Option<String>,
    #[prost(string, optional, tag = "48", default = "<pad>")]
    pub pad_piece: Option<String>,
    #[prost(bool, optional, tag = "49", default = "false")]
    pub train_extremely_large_corpus: Option<bool>,
    #[prost(bool, optional, tag = "50", default = "false")]
    pub enable_differential_privacy: Option<bool>,
    #[prost(float, optional, tag = "51", default = "0.0")]
    pub differential_privacy_noise_level: Option<f32>,
    #[prost(uint64, optional, tag = "52", default = "0")]
    pub differential_privacy_clipping_threshold: Option<u64>,
    #[prost(string, optional, tag = "53", default = "")]
    pub pretokenization_delimiter: Option<String>,
    #[prost(string, optional, tag = "54", default = "")]
    pub seed_sentencepieces_file: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ModelType {
    Unigram = 1,
    Bpe = 2,
    Word = 3,
    Char = 4,
}

#[derive(Clone, PartialEq, Message)]
pub struct NormalizerSpec {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3", default = "true")]
    pub add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4", default = "true")]
    pub remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5", default = "true")]
    pub escape_whitespaces: Option<bool>,
    #[prost(string, optional, tag = "6")]
    pub normalization_rule_tsv: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SelfTestSample {
    #[prost(string, optional, tag = "1")]
    pub input: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub expected: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SelfTestData {
    #[prost(message, repeated, tag = "1")]
    pub samples: Vec<SelfTestSample>,
}

/// The type of a piece (`ModelProto.SentencePiece.Type`): the Unigram model's own enum, which
/// carries the proto's numbering.
pub use crate::models::unigram::PieceType;

#[derive(Clone, PartialEq, Message)]
pub struct SentencePiece {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    #[prost(enumeration = "PieceType", optional, tag = "3", default = "Normal")]
    pub r#type: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<SentencePiece>,
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpec>,
    #[prost(message, optional, tag = "4")]
    pub self_test_data: Option<SelfTestData>,
    #[prost(message, optional, tag = "5")]
    pub denormalizer_spec: Option<NormalizerSpec>,
}

impl ModelProto {
    /// Parses a serialized `.model` (protobuf wire format).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        ModelProto::decode(bytes).map_err(|e| {
            Error::format(format!("not a SentencePiece model (protobuf ModelProto): {e}"))
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode_to_vec()
    }

    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        ModelProto::from_bytes(&bytes).map_err(|e| e.in_file(path))
    }

    pub fn trainer_spec(&self) -> TrainerSpec {
        self.trainer_spec.clone().unwrap_or_default()
    }

    pub fn normalizer_spec(&self) -> NormalizerSpec {
        self.normalizer_spec.clone().unwrap_or_default()
    }
}

impl SentencePiece {
    pub fn new(piece: impl Into<String>, score: f32, kind: PieceType) -> Self {
        SentencePiece { piece: Some(piece.into()), score: Some(score), r#type: Some(kind as i32) }
    }
}

/// sentencepiece.proto's `SentencePieceText.SentencePiece` (an encoded piece).
#[derive(Clone, PartialEq, Message)]
pub struct SentencePieceTextPiece {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(uint32, optional, tag = "2")]
    pub id: Option<u32>,
    #[prost(string, optional, tag = "3")]
    pub surface: Option<String>,
    #[prost(uint32, optional, tag = "4")]
    pub begin: Option<u32>,
    #[prost(uint32, optional, tag = "5")]
    pub end: Option<u32>,
}

/// sentencepiece.proto's `SentencePieceText` (the `serialized_proto` output type).
#[derive(Clone, PartialEq, Message)]
pub struct SentencePieceText {
    #[prost(string, optional, tag = "1")]
    pub text: Option<String>,
    #[prost(message, repeated, tag = "2")]
    pub pieces: Vec<SentencePieceTextPiece>,
    #[prost(float, optional, tag = "3")]
    pub score: Option<f32>,
}
