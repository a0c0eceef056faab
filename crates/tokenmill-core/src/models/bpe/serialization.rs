//! The BPE "model" section of tokenizer.json, exactly as `tokenizers` reads and writes it:
//! `{"type":"BPE","dropout":null,...,"vocab":{token:id, in id order},"merges":[["a","b"],...]}`.
//! Merges are read both as pairs (current format) and as `"a b"` strings (older files).
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use super::model::{BpeBuilder, BpeOptions, Merges, Vocab, BPE};
use crate::models::json::{check_model_type, OrderedVocab};

impl Serialize for BPE {
    /// A struct named "BPE" (the bindings' `repr` prints it as `BPE(dropout=None, ...)`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut model = serializer.serialize_struct("BPE", 10)?;
        model.serialize_field("type", "BPE")?;
        model.serialize_field("dropout", &self.dropout)?;
        model.serialize_field("unk_token", &self.unk_token)?;
        model.serialize_field("continuing_subword_prefix", &self.continuing_subword_prefix)?;
        model.serialize_field("end_of_word_suffix", &self.end_of_word_suffix)?;
        model.serialize_field("fuse_unk", &self.fuse_unk)?;
        model.serialize_field("byte_fallback", &self.byte_fallback)?;
        model.serialize_field("ignore_merges", &self.ignore_merges)?;
        model.serialize_field("vocab", &OrderedVocab(self.vocab_in_id_order()))?;
        model.serialize_field("merges", &self.merges())?;
        model.end()
    }
}

/// tokenizer.json's BPE object as it is read: the options (missing or null ones take their
/// defaults), and "vocab" and "merges" (`Option`s, so that a missing one gets the message
/// below).
#[derive(Deserialize)]
struct BpeJson {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(flatten)]
    options: BpeOptions,
    vocab: Option<Vocab>,
    merges: Option<MergeList>,
}

impl<'de> Deserialize<'de> for BPE {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = BpeJson::deserialize(deserializer)?;
        check_model_type(json.kind.as_deref(), "BPE")?;
        let (Some(vocab), Some(MergeList(merges))) = (json.vocab, json.merges) else {
            return Err(de::Error::custom("BPE model needs both \"vocab\" and \"merges\""));
        };
        BpeBuilder::new()
            .vocab_and_merges(vocab, merges)
            .options(json.options)
            .build()
            .map_err(|e| de::Error::custom(format!("BPE model: {e}")))
    }
}

/// One element of "merges": a `["a", "b"]` pair, an `"a b"` string, or a `#version` line that
/// older files carry inside the list (skipped, as `tokenizers` does).
enum MergeEntry {
    Pair(String, String),
    Skip,
}

impl<'de> Deserialize<'de> for MergeEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = MergeEntry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a merge: [\"a\", \"b\"] or \"a b\"")
            }
            fn visit_str<E: de::Error>(self, line: &str) -> Result<MergeEntry, E> {
                if line.starts_with("#version") {
                    return Ok(MergeEntry::Skip);
                }
                split_merge_line(line)
                    .map(|(a, b)| MergeEntry::Pair(a.to_string(), b.to_string()))
                    .ok_or_else(|| {
                        E::custom(format!(
                            "merge {line:?} is not two tokens separated by one space"
                        ))
                    })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MergeEntry, A::Error> {
                let a: String =
                    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let b: String =
                    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(MergeEntry::Pair(a, b))
            }
        }
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// Splits a merges line `"a b"` into its two tokens; anything but exactly one space is invalid.
pub(crate) fn split_merge_line(line: &str) -> Option<(&str, &str)> {
    let (a, b) = line.split_once(' ')?;
    if b.contains(' ') {
        return None;
    }
    Some((a, b))
}

/// The "merges" list, its `#version` lines dropped.
#[derive(Deserialize)]
#[serde(from = "Vec<MergeEntry>")]
struct MergeList(Merges);

impl From<Vec<MergeEntry>> for MergeList {
    fn from(entries: Vec<MergeEntry>) -> Self {
        let pairs = entries.into_iter().filter_map(|entry| match entry {
            MergeEntry::Pair(a, b) => Some((a, b)),
            MergeEntry::Skip => None,
        });
        MergeList(pairs.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    fn small() -> BPE {
        let vocab: Vocab = [("<unk>", 0), ("a", 1), ("b", 2), ("ab", 3)]
            .iter()
            .map(|&(t, i)| (t.to_string(), i))
            .collect();
        let options = BpeOptions { unk_token: Some("<unk>".into()), ..Default::default() };
        BPE::builder()
            .vocab_and_merges(vocab, vec![("a".into(), "b".into())])
            .options(options)
            .build()
            .unwrap()
    }

    #[test]
    fn writes_the_tokenizers_layout() {
        let json = serde_json::to_string(&small()).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"type":"BPE","dropout":null,"unk_token":"<unk>","#,
                r#""continuing_subword_prefix":null,"end_of_word_suffix":null,"#,
                r#""fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"#,
                r#""vocab":{"<unk>":0,"a":1,"b":2,"ab":3},"merges":[["a","b"]]}"#
            )
        );
        let back: BPE = serde_json::from_str(&json).unwrap();
        assert_eq!(back, small());
    }

    #[test]
    fn reads_legacy_string_merges() {
        let legacy = concat!(
            r##"{"type":"BPE","dropout":null,"unk_token":"<unk>","vocab":{"<unk>":0,"##,
            r##""a":1,"b":2,"ab":3},"merges":["#version: 0.2","a b"]}"##
        );
        let bpe: BPE = serde_json::from_str(legacy).unwrap();
        assert_eq!(bpe, small());
        assert_eq!(
            bpe.tokenize("abx").unwrap().iter().map(|t| t.id).collect::<Vec<_>>(),
            vec![3, 0]
        );
    }

    #[test]
    fn rejects_bad_merges() {
        for bad in [
            r#"{"vocab":{"a":0},"merges":["a b c"]}"#,
            r#"{"vocab":{"a":0},"merges":[["a","zz"]]}"#,
            r#"{"vocab":{"a":0},"merges":[["a"]]}"#,
            r#"{"type":"WordPiece","vocab":{"a":0},"merges":[]}"#,
            r#"{"vocab":{"a":0}}"#,
        ] {
            assert!(serde_json::from_str::<BPE>(bad).is_err(), "{bad}");
        }
    }
}
