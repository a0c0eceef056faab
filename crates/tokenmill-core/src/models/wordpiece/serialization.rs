//! The WordPiece "model" section of tokenizer.json, exactly as `tokenizers` writes it:
//! `{"type":"WordPiece","unk_token":…,"continuing_subword_prefix":…,"max_input_chars_per_word":…,
//! "vocab":{token:id, in id order}}`. Reading requires the four fields (the "type" is optional,
//! for old files) and ignores unknown ones, as `tokenizers` does.
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::model::{Vocab, WordPiece};
use crate::models::json::OrderedVocab;

impl Serialize for WordPiece {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut model = serializer.serialize_struct("WordPiece", 5)?;
        model.serialize_field("type", "WordPiece")?;
        model.serialize_field("unk_token", &self.unk_token)?;
        model.serialize_field("continuing_subword_prefix", self.continuing_subword_prefix())?;
        model.serialize_field("max_input_chars_per_word", &self.max_input_chars_per_word)?;
        model.serialize_field("vocab", &OrderedVocab(self.vocab_in_id_order()))?;
        model.end()
    }
}

impl<'de> Deserialize<'de> for WordPiece {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WordPieceVisitor)
    }
}

struct WordPieceVisitor;

impl<'de> Visitor<'de> for WordPieceVisitor {
    type Value = WordPiece;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a WordPiece model object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<WordPiece, M::Error> {
        let mut unk_token: Option<String> = None;
        let mut prefix: Option<String> = None;
        let mut max_chars: Option<usize> = None;
        let mut vocab: Option<Vocab> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => {
                    let kind: String = map.next_value()?;
                    if kind != "WordPiece" {
                        return Err(de::Error::custom(format!(
                            "model type {kind:?} is not \"WordPiece\""
                        )));
                    }
                }
                "unk_token" => unk_token = Some(map.next_value()?),
                "continuing_subword_prefix" => prefix = Some(map.next_value()?),
                "max_input_chars_per_word" => max_chars = Some(map.next_value()?),
                "vocab" => vocab = Some(map.next_value()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let unk_token = unk_token.ok_or_else(|| de::Error::missing_field("unk_token"))?;
        let prefix = prefix.ok_or_else(|| de::Error::missing_field("continuing_subword_prefix"))?;
        let max_chars =
            max_chars.ok_or_else(|| de::Error::missing_field("max_input_chars_per_word"))?;
        let vocab = vocab.ok_or_else(|| de::Error::missing_field("vocab"))?;
        Ok(WordPiece::assemble(vocab, unk_token, prefix, max_chars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ModelWrapper;

    #[test]
    fn writes_and_reads_the_tokenizers_layout() {
        let json = concat!(
            r###"{"type":"WordPiece","unk_token":"[UNK]","###,
            r###""continuing_subword_prefix":"##","max_input_chars_per_word":100,"###,
            r###""vocab":{"[UNK]":0,"a":1,"##b":2}}"###
        );
        let wp: WordPiece = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&wp).unwrap(), json);
        let wrapped: ModelWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(wrapped, ModelWrapper::WordPiece(wp.clone()));
        assert_eq!(serde_json::to_string(&wrapped).unwrap(), json);
        // Old files without "type" are recognised by their fields.
        let untyped: ModelWrapper =
            serde_json::from_str(&json.replace(r#""type":"WordPiece","#, "")).unwrap();
        assert_eq!(untyped, ModelWrapper::WordPiece(wp));
    }

    #[test]
    fn rejects_missing_fields_and_wrong_type() {
        for bad in [
            concat!(
                r###"{"type":"WordPiece","unk_token":"[UNK]","###,
                r###""continuing_subword_prefix":"##","vocab":{}}"###
            ),
            concat!(
                r###"{"type":"WordPiece","unk_token":"[UNK]","###,
                r###""continuing_subword_prefix":"##","max_input_chars_per_word":-1,"###,
                r###""vocab":{}}"###
            ),
            concat!(
                r###"{"type":"BPE","unk_token":"[UNK]","continuing_subword_prefix":"##","###,
                r###""max_input_chars_per_word":1,"vocab":{}}"###
            ),
        ] {
            assert!(serde_json::from_str::<WordPiece>(bad).is_err(), "{bad}");
        }
    }
}
