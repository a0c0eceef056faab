//! The WordLevel "model" section of tokenizer.json, exactly as `tokenizers` writes it:
//! `{"type":"WordLevel","vocab":{token:id, in id order},"unk_token":…}`. Reading requires
//! "vocab" and "unk_token" (the "type" is optional, for old files, but must be "WordLevel"
//! when present) and ignores unknown fields, as `tokenizers` does.
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::{Vocab, WordLevel};
use crate::models::json::{check_model_type, OrderedVocab};

/// tokenizer.json's WordLevel object, written from the model (`V`: its vocabulary in id order) and
/// read with `V` a `Vocab`. Named "WordLevel": the bindings' `repr` prints the struct's name.
#[derive(Serialize, Deserialize)]
#[serde(rename = "WordLevel")]
struct WordLevelJson<V> {
    #[serde(rename = "type")]
    kind: Option<String>,
    vocab: V,
    unk_token: String,
}

impl Serialize for WordLevel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json = WordLevelJson {
            kind: Some("WordLevel".into()),
            vocab: OrderedVocab(self.vocab_in_id_order()),
            unk_token: self.unk_token.clone(),
        };
        json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for WordLevel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = WordLevelJson::<Vocab>::deserialize(deserializer)?;
        check_model_type(json.kind.as_deref(), "WordLevel")?;
        WordLevel::builder()
            .vocab(json.vocab)
            .unk_token(json.unk_token)
            .build()
            .map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::json::assert_round_trip;

    #[test]
    fn writes_and_reads_the_tokenizers_layout() {
        // Untyped, as in old files: WordPiece is tried first (it needs more fields).
        assert_round_trip::<WordLevel>(
            r#"{"type":"WordLevel","vocab":{"<unk>":0,"b":2},"unk_token":"<unk>"}"#,
        );
        assert_eq!(
            serde_json::to_string(&WordLevel::default()).unwrap(),
            r#"{"type":"WordLevel","vocab":{},"unk_token":"<unk>"}"#
        );
    }

    #[test]
    fn rejects_missing_fields_and_wrong_type() {
        for bad in [
            r#"{"type":"WordLevel","vocab":{}}"#,
            r#"{"type":"WordLevel","unk_token":"<unk>"}"#,
            r#"{"type":"WordPiece","vocab":{},"unk_token":"<unk>"}"#,
            r#"{"type":"WordLevel","vocab":{"a":-1},"unk_token":"<unk>"}"#,
        ] {
            assert!(serde_json::from_str::<WordLevel>(bad).is_err(), "{bad}");
        }
    }
}
