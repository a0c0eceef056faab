//! Models: turn one pre-tokenized piece into tokens. One folder per model family.
//!
//! May import `tokenizer` (the `Model` trait, `Token`), `utils` and `error`; WordPiece and
//! WordLevel reuse `bpe`'s vocabulary-file helpers (and WordPiece converts from a BPE). No model
//! imports a later stage or a trainer.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::Result;
use crate::tokenizer::plan::tokenize_mapped_bytes;
use crate::tokenizer::{Model, Offsets, Token, TokenSink};
use crate::utils::macros::component_enum;

pub mod bpe;
mod json;
pub mod unigram;
pub mod wordlevel;
pub mod wordpiece;

pub use bpe::BPE;
pub use unigram::Unigram;
pub use wordlevel::WordLevel;
pub use wordpiece::WordPiece;

component_enum! {
    /// Every model family, as the Tokenizer holds its model. Serialized exactly like the "model"
    /// section of `tokenizers`' tokenizer.json: the family's own object, with its `"type"`.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(untagged)]
    pub enum ModelWrapper {
        BPE(BPE),
        WordPiece(WordPiece),
        WordLevel(WordLevel),
        Unigram(Unigram),
    }
}

/// `$body` with `$model` bound to the model inside `$wrapper`, whatever its family.
macro_rules! with_model {
    ($wrapper:expr, $model:ident => $body:expr) => {
        match $wrapper {
            ModelWrapper::BPE($model) => $body,
            ModelWrapper::WordPiece($model) => $body,
            ModelWrapper::WordLevel($model) => $body,
            ModelWrapper::Unigram($model) => $body,
        }
    };
}

impl ModelWrapper {
    /// Calls `emit(id, (start, end))` per token of `sequence` (byte offsets) without building
    /// token strings: the fast path for ids-only encoding.
    pub fn tokenize_with(&self, sequence: &str, emit: impl TokenSink) -> Result<()> {
        with_model!(self, m => m.tokenize_with(sequence, emit))
    }

    /// Appends the ids of `sequence`'s tokens to `ids`.
    pub fn tokenize_ids_into(&self, sequence: &str, ids: &mut Vec<u32>) -> Result<()> {
        self.tokenize_with(sequence, |id, _| ids.push(id))
    }

    /// The model family's name as in tokenizer.json ("BPE").
    pub fn kind(&self) -> &'static str {
        match self {
            ModelWrapper::BPE(_) => "BPE",
            ModelWrapper::WordPiece(_) => "WordPiece",
            ModelWrapper::WordLevel(_) => "WordLevel",
            ModelWrapper::Unigram(_) => "Unigram",
        }
    }
}

impl Model for ModelWrapper {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        with_model!(self, m => m.tokenize(sequence))
    }
    fn tokenize_ids_offsets(&self, word: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        self.tokenize_with(word, emit)
    }
    /// BPE caches byte-level words by their raw bytes; the others map the bytes first.
    fn tokenize_byte_level(&self, raw: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        match self {
            ModelWrapper::BPE(b) => b.tokenize_byte_level(raw, emit),
            _ => tokenize_mapped_bytes(self, raw, emit),
        }
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        with_model!(self, m => m.token_to_id(token))
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        with_model!(self, m => m.id_to_token(id))
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        with_model!(self, m => m.get_vocab())
    }
    fn get_vocab_size(&self) -> usize {
        with_model!(self, m => m.get_vocab_size())
    }
    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        with_model!(self, m => m.save(folder, prefix))
    }
}

/// Reads the "type" to pick the family; a model without "type" (old files) is read as the
/// first family that accepts it, as `tokenizers` does (BPE first).
impl<'de> Deserialize<'de> for ModelWrapper {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let kind = value.get("type").map(|t| t.as_str().map(str::to_owned));
        match kind {
            Some(Some(kind)) if kind == "BPE" => {
                BPE::deserialize(value).map(ModelWrapper::BPE).map_err(D::Error::custom)
            }
            Some(Some(kind)) if kind == "WordPiece" => {
                WordPiece::deserialize(value).map(ModelWrapper::WordPiece).map_err(D::Error::custom)
            }
            Some(Some(kind)) if kind == "WordLevel" => {
                WordLevel::deserialize(value).map(ModelWrapper::WordLevel).map_err(D::Error::custom)
            }
            Some(Some(kind)) if kind == "Unigram" => {
                Unigram::deserialize(value).map(ModelWrapper::Unigram).map_err(D::Error::custom)
            }
            Some(Some(kind)) => Err(D::Error::custom(format!(
                "unknown model type {kind:?} (supported: \"BPE\", \"WordPiece\", \"WordLevel\", \
                    \"Unigram\")"
            ))),
            Some(None) => Err(D::Error::custom("model \"type\" must be a string")),
            // Untyped (old) files, in tokenizers' order: BPE needs "merges", so it is tried
            // first; then WordPiece, then WordLevel (whose fields are a subset of
            // WordPiece's), then Unigram.
            None => match BPE::deserialize(&value) {
                Ok(bpe) => Ok(ModelWrapper::BPE(bpe)),
                Err(bpe_error) => WordPiece::deserialize(&value)
                    .map(ModelWrapper::WordPiece)
                    .or_else(|_| WordLevel::deserialize(&value).map(ModelWrapper::WordLevel))
                    .or_else(|_| Unigram::deserialize(&value).map(ModelWrapper::Unigram))
                    .map_err(|_| D::Error::custom(bpe_error)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapper_round_trip() {
        let json = concat!(
            r#"{"type":"BPE","dropout":null,"unk_token":null,"#,
            r#""continuing_subword_prefix":null,"end_of_word_suffix":null,"#,
            r#""fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"#,
            r#""vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]}"#
        );
        let model: ModelWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&model).unwrap(), json);
        let untyped: ModelWrapper =
            serde_json::from_str(r#"{"vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]}"#).unwrap();
        assert_eq!(untyped, model);
        assert!(serde_json::from_str::<ModelWrapper>(r#"{"type":"Nope","vocab":{}}"#).is_err());
    }
}
