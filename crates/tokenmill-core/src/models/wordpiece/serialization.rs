//! The WordPiece "model" section of tokenizer.json, exactly as `tokenizers` writes it:
//! `{"type":"WordPiece","unk_token":…,"continuing_subword_prefix":…,"max_input_chars_per_word":…,
//! "vocab":{token:id, in id order}}`. Reading requires the four fields (the "type" is optional,
//! for old files) and ignores unknown ones, as `tokenizers` does.
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::{Vocab, WordPiece};
use crate::models::json::{check_model_type, OrderedVocab};

/// tokenizer.json's WordPiece object, written from the model (`V`: its vocabulary in id order) and
/// read with `V` a `Vocab`. Named "WordPiece": the bindings' `repr` prints the struct's name.
#[derive(Serialize, Deserialize)]
#[serde(rename = "WordPiece")]
struct WordPieceJson<V> {
    #[serde(rename = "type")]
    kind: Option<String>,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: V,
}

impl Serialize for WordPiece {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json = WordPieceJson {
            kind: Some("WordPiece".into()),
            unk_token: self.unk_token.clone(),
            continuing_subword_prefix: self.continuing_subword_prefix().to_owned(),
            max_input_chars_per_word: self.max_input_chars_per_word,
            vocab: OrderedVocab(self.vocab_in_id_order()),
        };
        json.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for WordPiece {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = WordPieceJson::<Vocab>::deserialize(deserializer)?;
        check_model_type(json.kind.as_deref(), "WordPiece")?;
        let (unk, prefix, max_chars) =
            (json.unk_token, json.continuing_subword_prefix, json.max_input_chars_per_word);
        Ok(WordPiece::assemble(json.vocab, unk, prefix, max_chars))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::json::assert_round_trip;

    #[test]
    fn writes_and_reads_the_tokenizers_layout() {
        let json = concat!(
            r###"{"type":"WordPiece","unk_token":"[UNK]","###,
            r###""continuing_subword_prefix":"##","max_input_chars_per_word":100,"###,
            r###""vocab":{"[UNK]":0,"a":1,"##b":2}}"###
        );
        // Old files without "type" are recognised by their fields.
        assert_round_trip::<WordPiece>(json);
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
