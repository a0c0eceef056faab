//! Decoders: turn tokens back into text.
//!
//! Each component mirrors its `tokenizers` namesake, including tokenizer.json (de)serialization.
//! `decode_chain` maps the token list to a list of text pieces (components can be chained by
//! `Sequence`); `decode` concatenates the pieces.
//!
//! One file per component. May import `tokenizer` (the `Decoder` trait), `error`, `utils` and
//! the components that serve an earlier stage too (`ByteLevel` and `Metaspace` from
//! `pre_tokenizers`, `Replace` from `normalizers`); never
//! `models`.
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::Decoder;
pub use crate::utils::custom::Custom;
use crate::utils::macros::component_enum;

pub(crate) mod bpe;
pub(crate) mod byte_fallback;
pub(crate) mod byte_level;
pub(crate) mod ctc;
pub(crate) mod fuse;
pub(crate) mod metaspace;
pub(crate) mod sequence;
pub(crate) mod strip;
pub(crate) mod wordpiece;

pub use crate::normalizers::{Replace, ReplacePattern};
pub use bpe::BPEDecoder;
pub use byte_fallback::ByteFallback;
pub use byte_level::ByteLevel;
pub use ctc::CTC;
pub use fuse::Fuse;
pub use metaspace::{Metaspace, PrependScheme};
pub use sequence::Sequence;
pub use strip::Strip;
pub use wordpiece::WordPiece;

component_enum! {
    /// Every decoder. Serialized untagged: each component writes its own `"type"`.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(untagged)]
    pub enum DecoderWrapper {
        BPE(BPEDecoder),
        ByteLevel(ByteLevel),
        WordPiece(WordPiece),
        Metaspace(Metaspace),
        CTC(CTC),
        Sequence(Sequence),
        Replace(Replace),
        Fuse(Fuse),
        Strip(Strip),
        ByteFallback(ByteFallback),
        /// A decoder from outside the crate (a Python object); never serialized.
        Custom(Custom<dyn Decoder + Send + Sync>),
    }
}

impl Decoder for DecoderWrapper {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        match self {
            Self::BPE(d) => Ok(d.decode_chain(tokens)),
            Self::ByteLevel(_) => Ok(byte_level::decode_chain(tokens)),
            Self::WordPiece(d) => Ok(d.decode_chain(tokens)),
            Self::Metaspace(d) => Ok(metaspace::decode_chain(d, tokens)),
            Self::CTC(d) => Ok(d.decode_chain(tokens)),
            Self::Sequence(d) => d.decode_chain(tokens),
            Self::Replace(d) => tokens.iter().map(|t| d.replace_in(t)).collect(),
            Self::Fuse(_) => Ok(vec![tokens.concat()]),
            Self::Strip(d) => Ok(d.decode_chain(tokens)),
            Self::ByteFallback(_) => Ok(byte_fallback::decode_chain(tokens)),
            Self::Custom(d) => d.decode_chain(tokens),
        }
    }
}

type Attempt = fn(serde_json::Value) -> serde_json::Result<DecoderWrapper>;

/// The components by their `"type"` name, in `tokenizers`' order of untagged attempts, and
/// whether they read JSON without their `"type"` (those whose tag `tokenizers` does not check).
const COMPONENTS: [(&str, bool, Attempt); 10] = [
    ("BPEDecoder", true, |v| serde_json::from_value(v).map(DecoderWrapper::BPE)),
    ("ByteLevel", false, |v| serde_json::from_value(v).map(DecoderWrapper::ByteLevel)),
    ("WordPiece", true, |v| serde_json::from_value(v).map(DecoderWrapper::WordPiece)),
    ("Metaspace", false, |v| serde_json::from_value(v).map(DecoderWrapper::Metaspace)),
    ("CTC", true, |v| serde_json::from_value(v).map(DecoderWrapper::CTC)),
    ("Sequence", false, |v| serde_json::from_value(v).map(DecoderWrapper::Sequence)),
    ("Replace", true, |v| serde_json::from_value(v).map(DecoderWrapper::Replace)),
    ("Fuse", false, |v| serde_json::from_value(v).map(DecoderWrapper::Fuse)),
    ("Strip", true, |v| serde_json::from_value(v).map(DecoderWrapper::Strip)),
    ("ByteFallback", false, |v| serde_json::from_value(v).map(DecoderWrapper::ByteFallback)),
];

impl<'de> Deserialize<'de> for DecoderWrapper {
    /// As `tokenizers`: a known `"type"` selects its component (whose errors are reported);
    /// without one (or with an unknown one) the components are tried in order.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = serde_json::Value::deserialize(deserializer)?;
        let declared = value.get("type").and_then(|t| t.as_str()).map(str::to_string);
        if let Some(name) = &declared {
            if let Some((_, _, attempt)) = COMPONENTS.iter().find(|(n, _, _)| n == name) {
                return attempt(value)
                    .map_err(|e| D::Error::custom(format!("invalid {name} decoder: {e}")));
            }
        }
        for (_, untagged, attempt) in COMPONENTS {
            if !untagged {
                continue;
            }
            if let Ok(d) = attempt(value.clone()) {
                return Ok(d);
            }
        }
        Err(D::Error::custom(match declared {
            Some(name) => format!("unknown decoder type {name:?}"),
            None => "decoder: data did not match any variant of DecoderWrapper".to_string(),
        }))
    }
}

impl DecoderWrapper {
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::format(format!("decoder JSON: {e}")))
    }
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error::Other(format!("decoder to JSON: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }
    fn decode(d: impl Into<DecoderWrapper>, t: &[&str]) -> String {
        d.into().decode(toks(t)).unwrap()
    }

    #[test]
    fn serde_matches_tokenizers() {
        let cases = [
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
            r#"{"type":"BPEDecoder","suffix":"</w>"}"#,
            r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}"#,
            r#"{"type":"ByteFallback"}"#,
            r#"{"type":"Fuse"}"#,
            r#"{"type":"Strip","content":" ","start":1,"stop":0}"#,
            r#"{"type":"Replace","pattern":{"String":"▁"},"content":" "}"#,
            r#"{"type":"Replace","pattern":{"Regex":"a+"},"content":"b"}"#,
            r###"{"type":"WordPiece","prefix":"##","cleanup":true}"###,
            r#"{"type":"CTC","pad_token":"<pad>","word_delimiter_token":"|","cleanup":true}"#,
            concat!(
                r#"{"type":"Sequence","decoders":[{"type":"Fuse"},{"type":"Strip","#,
                r#""content":" ","start":0,"stop":0}]}"#
            ),
        ];
        for json in cases {
            assert_eq!(DecoderWrapper::from_json(json).unwrap().to_json().unwrap(), json);
        }
    }

    #[test]
    fn deserialization_rules_like_tokenizers() {
        // Without a type the components are tried in order.
        assert!(matches!(
            DecoderWrapper::from_json(r#"{"suffix":"</w>"}"#).unwrap(),
            DecoderWrapper::BPE(_)
        ));
        // Fuse/ByteFallback ignore extra fields; required fields are required.
        assert!(DecoderWrapper::from_json(r#"{"type":"ByteFallback","x":1}"#).is_ok());
        for bad in [
            r#"{"type":"BPEDecoder"}"#,
            r###"{"type":"WordPiece","prefix":"##"}"###,
            r#"{"type":"Strip","content":"ab","start":1,"stop":0}"#,
            r#"{"type":"Replace","pattern":{"Regex":"("},"content":""}"#,
        ] {
            assert!(DecoderWrapper::from_json(bad).is_err(), "{bad}");
        }
        let legacy = DecoderWrapper::from_json(concat!(
            r#"{"type":"Metaspace","replacement":"_","add_prefix_space":true,"#,
            r#""prepend_scheme":"first","str_rep":"_"}"#
        ))
        .unwrap();
        assert_eq!(
            legacy,
            DecoderWrapper::Metaspace(Metaspace::new('_', PrependScheme::First, true))
        );
    }

    #[test]
    fn outputs_checked_against_tokenizers() {
        // Expected strings were produced by tokenizers 0.23 on the same inputs.
        let any = |p: &str| Replace::new(ReplacePattern::String(p.into()), "x").unwrap();
        assert_eq!(decode(any(""), &["ab", "c"]), "xaxbxxcx");
        assert_eq!(
            decode(Replace::new(ReplacePattern::Regex("a*".into()), "x").unwrap(), &["baab", "c"]),
            "xbxbxxcx"
        );
        assert_eq!(
            decode(
                Replace::new(ReplacePattern::Regex(r"\b".into()), "|").unwrap(),
                &["hello world"]
            ),
            "|hello| |world|"
        );
        assert_eq!(decode(BPEDecoder::default(), &[]), "");
        assert_eq!(decode(BPEDecoder::new(String::new()), &["ab", "c"]), " a b c");
        assert_eq!(
            decode(
                ByteFallback::new(),
                &["<0x+1>", "<0xE2>", "<0x82>", "a", "<0xE2>", "<0x82>", "<0xAC>"]
            ),
            "\u{FFFD}\u{FFFD}\u{FFFD}a€"
        );
        assert_eq!(
            decode(ByteLevel::default(), &["Ġhello", "âĤ", "x€", "¬"]),
            " hello\u{FFFD}x€\u{FFFD}"
        );
        assert_eq!(decode(CTC::default(), &["<pad>", "a", "a", "|", "<pad>", "b"]), "a b");
        assert_eq!(decode(Metaspace::default(), &["▁Hey", "▁friend▁", "!"]), "Hey friend !");
        assert_eq!(
            decode(Metaspace::new('▁', PrependScheme::Never, true), &["▁Hey", "▁friend"]),
            " Hey friend"
        );
        assert_eq!(
            decode(
                WordPiece::default(),
                &["##uelo", "Ara", "##új", "##o", "No", "##guera", "do", "n't", "!"]
            ),
            "##uelo Araújo Noguera don't!"
        );
    }

    #[test]
    fn strip_never_panics() {
        // tokenizers panics on these two; tokenmill gives an empty token.
        assert_eq!(decode(Strip::new(' ', 0, 5), &[" "]), "");
        assert_eq!(decode(Strip::new(' ', 1, 1), &[" "]), "");
        assert_eq!(
            Strip::new('_', 2, 1).decode_chain(toks(&["__a__", "_", "a"])),
            toks(&["a_", "", "a"])
        );
    }

    #[test]
    fn sequence_chains_pieces() {
        let seq = Sequence::new(vec![
            Replace::new(ReplacePattern::String("▁".into()), " ").unwrap().into(),
            ByteFallback::new().into(),
            Fuse::new().into(),
            Strip::new(' ', 1, 0).into(),
        ]);
        assert_eq!(decode(seq, &["▁Hello", "▁w", "<0xC3>", "<0xA9>", "rld"]), "Hello wérld");
    }
}
