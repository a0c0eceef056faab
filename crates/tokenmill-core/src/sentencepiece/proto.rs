//! The `.model` file: SentencePiece's `ModelProto` (proto2) and its encoded-text messages,
//! generated at build time from `proto/*.proto` (see build.rs: protox + prost-build, no
//! `protoc`). Field numbers, types and defaults follow sentencepiece's .proto files, so
//! serialization writes the same bytes as the C++ library. Unknown fields and extensions are
//! not kept. The nested message types are re-exported here under flat names.
use prost::Message;

use crate::error::{Error, Result};

/// The code prost-build generated from the `sentencepiece` package.
mod generated {
    include!(concat!(env!("OUT_DIR"), "/sentencepiece.rs"));
}

pub use generated::model_proto::SentencePiece;
pub use generated::sentence_piece_text::SentencePiece as SentencePieceTextPiece;
pub use generated::trainer_spec::ModelType;
pub use generated::{ModelProto, NormalizerSpec, SentencePieceText, TrainerSpec};

/// The type of a piece (`ModelProto.SentencePiece.Type`): the Unigram model's own enum, which
/// carries the proto's numbering.
pub use crate::models::unigram::PieceType;

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
