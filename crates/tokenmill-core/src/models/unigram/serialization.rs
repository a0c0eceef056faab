//! The tokenizer.json "model" section of a Unigram model, exactly as `tokenizers` writes it:
//! `{"type":"Unigram","unk_id":…,"vocab":[[piece, score], …],"byte_fallback":…}`.
use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::Unigram;
use crate::models::json::check_model_type;

impl Serialize for Unigram {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut model = serializer.serialize_struct("Unigram", 4)?;
        model.serialize_field("type", "Unigram")?;
        model.serialize_field("unk_id", &self.unk_id())?;
        model.serialize_field("vocab", self.vocab())?;
        model.serialize_field("byte_fallback", &self.byte_fallback())?;
        model.end()
    }
}

#[derive(Deserialize)]
struct UnigramData {
    #[serde(rename = "type")]
    kind: Option<String>,
    vocab: Option<Vec<(String, f64)>>,
    #[serde(default)]
    unk_id: Option<usize>,
    #[serde(default)]
    byte_fallback: bool,
}

impl<'de> Deserialize<'de> for Unigram {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let data = UnigramData::deserialize(deserializer)?;
        check_model_type(data.kind.as_deref(), "Unigram")?;
        let vocab =
            data.vocab.ok_or_else(|| D::Error::custom("Unigram model: missing \"vocab\""))?;
        Unigram::from(vocab, data.unk_id, data.byte_fallback)
            .map_err(|e| D::Error::custom(format!("Unigram model: {e}")))
    }
}
