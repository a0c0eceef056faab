//! The WordLevel "model" section of tokenizer.json, exactly as `tokenizers` writes it:
//! `{"type":"WordLevel","vocab":{token:id, in id order},"unk_token":…}`. Reading requires
//! "vocab" and "unk_token" (the "type" is optional, for old files, but must be "WordLevel"
//! when present) and ignores unknown fields, as `tokenizers` does.
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::model::{Vocab, WordLevel};
use crate::models::json::OrderedVocab;

impl Serialize for WordLevel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut model = serializer.serialize_struct("WordLevel", 3)?;
        model.serialize_field("type", "WordLevel")?;
        model.serialize_field("vocab", &OrderedVocab(self.vocab_in_id_order()))?;
        model.serialize_field("unk_token", &self.unk_token)?;
        model.end()
    }
}

impl<'de> Deserialize<'de> for WordLevel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WordLevelVisitor)
    }
}

struct WordLevelVisitor;

impl<'de> Visitor<'de> for WordLevelVisitor {
    type Value = WordLevel;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a WordLevel model object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<WordLevel, M::Error> {
        let mut unk_token: Option<String> = None;
        let mut vocab: Option<Vocab> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => {
                    let kind: String = map.next_value()?;
                    if kind != "WordLevel" {
                        return Err(de::Error::custom(format!(
                            "model type {kind:?} is not \"WordLevel\""
                        )));
                    }
                }
                "unk_token" => unk_token = Some(map.next_value()?),
                "vocab" => vocab = Some(map.next_value()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let unk_token = unk_token.ok_or_else(|| de::Error::missing_field("unk_token"))?;
        let vocab = vocab.ok_or_else(|| de::Error::missing_field("vocab"))?;
        WordLevel::builder().vocab(vocab).unk_token(unk_token).build().map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ModelWrapper;

    #[test]
    fn writes_and_reads_the_tokenizers_layout() {
        let json = r#"{"type":"WordLevel","vocab":{"<unk>":0,"b":2},"unk_token":"<unk>"}"#;
        let wl: WordLevel = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&wl).unwrap(), json);
        let wrapped: ModelWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(wrapped, ModelWrapper::WordLevel(wl.clone()));
        assert_eq!(serde_json::to_string(&wrapped).unwrap(), json);
        // Old files without "type": WordPiece is tried first (it needs more fields).
        let untyped: ModelWrapper =
            serde_json::from_str(&json.replace(r#""type":"WordLevel","#, "")).unwrap();
        assert_eq!(untyped, ModelWrapper::WordLevel(wl));
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
