//! Normalizers: rewrite text before it is split, keeping alignments (see `NormalizedString`).
//!
//! `NormalizerWrapper` is the enum over every component of this stage. It (de)serializes
//! exactly as `tokenizers`' tokenizer.json (`{"type": "NFC"}`, `{"type": "Sequence",
//! "normalizers": [...]}`, ...) and also reads what older versions wrote (objects without a
//! `type`, recognised by their fields; `"Bert"` for `"BertNormalizer"`).
//!
//! One file per component. May import `tokenizer` (the `Normalizer` trait, `NormalizedString`),
//! `error` and `utils` (regex, byte-level alphabet, `Custom`, the `darts` double array inside a
//! `Precompiled` charsmap); nothing from later stages.
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::{NormalizedString, Normalizer};
pub use crate::utils::custom::Custom;
use crate::utils::macros::component_enum;

pub(crate) mod bert;
pub(crate) mod byte_level;
pub(crate) mod precompiled;
pub(crate) mod prepend;
pub(crate) mod replace;
pub(crate) mod sequence;
pub(crate) mod strip;
pub(crate) mod unicode;

pub use bert::BertNormalizer;
pub use byte_level::ByteLevel;
pub use precompiled::Precompiled;
pub use prepend::Prepend;
pub use replace::{Replace, ReplacePattern};
pub use sequence::Sequence;
pub use strip::{Strip, StripAccents};
pub use unicode::{Lowercase, Nmt, NFC, NFD, NFKC, NFKD};

component_enum! {
    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(untagged)]
    pub enum NormalizerWrapper {
        BertNormalizer(BertNormalizer),
        Strip(Strip),
        StripAccents(StripAccents),
        NFC(NFC),
        NFD(NFD),
        NFKC(NFKC),
        NFKD(NFKD),
        Sequence(Sequence),
        Lowercase(Lowercase),
        Nmt(Nmt),
        Precompiled(Precompiled),
        Replace(Replace),
        Prepend(Prepend),
        ByteLevel(ByteLevel),
        /// A normalizer from outside the crate (a Python object); never serialized.
        Custom(Custom<dyn Normalizer + Send + Sync>),
    }
}

impl Normalizer for NormalizerWrapper {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        match self {
            NormalizerWrapper::BertNormalizer(n) => n.normalize(normalized),
            NormalizerWrapper::Strip(n) => n.normalize(normalized),
            NormalizerWrapper::StripAccents(n) => n.normalize(normalized),
            NormalizerWrapper::NFC(n) => n.normalize(normalized),
            NormalizerWrapper::NFD(n) => n.normalize(normalized),
            NormalizerWrapper::NFKC(n) => n.normalize(normalized),
            NormalizerWrapper::NFKD(n) => n.normalize(normalized),
            NormalizerWrapper::Sequence(n) => n.normalize(normalized),
            NormalizerWrapper::Lowercase(n) => n.normalize(normalized),
            NormalizerWrapper::Nmt(n) => n.normalize(normalized),
            NormalizerWrapper::Custom(n) => n.normalize(normalized),
            NormalizerWrapper::Precompiled(n) => n.normalize(normalized),
            NormalizerWrapper::Replace(n) => n.normalize(normalized),
            NormalizerWrapper::Prepend(n) => n.normalize(normalized),
            NormalizerWrapper::ByteLevel(n) => n.normalize(normalized),
        }
    }
}

impl NormalizerWrapper {
    /// Normalizes a plain string (what Python's `normalize_str` does).
    pub fn normalize_str(&self, text: &str) -> Result<String> {
        let mut n = NormalizedString::from(text);
        self.normalize(&mut n)?;
        Ok(n.get().to_string())
    }

    /// The `type` name this component has in tokenizer.json.
    pub fn type_name(&self) -> &'static str {
        match self {
            NormalizerWrapper::BertNormalizer(_) => "BertNormalizer",
            NormalizerWrapper::Strip(_) => "Strip",
            NormalizerWrapper::StripAccents(_) => "StripAccents",
            NormalizerWrapper::NFC(_) => "NFC",
            NormalizerWrapper::NFD(_) => "NFD",
            NormalizerWrapper::NFKC(_) => "NFKC",
            NormalizerWrapper::NFKD(_) => "NFKD",
            NormalizerWrapper::Sequence(_) => "Sequence",
            NormalizerWrapper::Lowercase(_) => "Lowercase",
            NormalizerWrapper::Nmt(_) => "Nmt",
            NormalizerWrapper::Custom(_) => "Custom",
            NormalizerWrapper::Precompiled(_) => "Precompiled",
            NormalizerWrapper::Replace(_) => "Replace",
            NormalizerWrapper::Prepend(_) => "Prepend",
            NormalizerWrapper::ByteLevel(_) => "ByteLevel",
        }
    }

    /// Reads one normalizer from its tokenizer.json value.
    pub fn from_json(value: serde_json::Value) -> Result<Self> {
        let serde_json::Value::Object(mut fields) = value else {
            return Err(Error::format(format!("a normalizer must be a JSON object, got {value}")));
        };
        let kind = match fields.get("type") {
            Some(serde_json::Value::String(t)) => t.clone(),
            Some(other) => {
                return Err(Error::format(format!(
                    "normalizer \"type\" must be a string, got {other}"
                )))
            }
            None => infer_legacy_type(&fields)
                .ok_or_else(|| {
                    Error::format(format!(
                        "normalizer without \"type\" whose fields match no normalizer: {}",
                        serde_json::Value::Object(fields.clone())
                    ))
                })?
                .to_string(),
        };
        let kind = if kind == "Bert" { "BertNormalizer".to_string() } else { kind };
        fields.insert("type".to_string(), serde_json::Value::String(kind.clone()));
        let value = serde_json::Value::Object(fields);
        fn parse<T: serde::de::DeserializeOwned>(
            kind: &str,
            value: serde_json::Value,
        ) -> Result<T> {
            serde_json::from_value(value)
                .map_err(|e| Error::format(format!("normalizer {kind}: {e}")))
        }
        Ok(match kind.as_str() {
            "BertNormalizer" => NormalizerWrapper::BertNormalizer(parse(&kind, value)?),
            "Strip" => NormalizerWrapper::Strip(parse(&kind, value)?),
            "StripAccents" => NormalizerWrapper::StripAccents(StripAccents),
            "NFC" => NormalizerWrapper::NFC(NFC),
            "NFD" => NormalizerWrapper::NFD(NFD),
            "NFKC" => NormalizerWrapper::NFKC(NFKC),
            "NFKD" => NormalizerWrapper::NFKD(NFKD),
            "Sequence" => NormalizerWrapper::Sequence(parse(&kind, value)?),
            "Lowercase" => NormalizerWrapper::Lowercase(Lowercase),
            "Nmt" => NormalizerWrapper::Nmt(Nmt),
            "Precompiled" => NormalizerWrapper::Precompiled(parse(&kind, value)?),
            "Replace" => NormalizerWrapper::Replace(parse(&kind, value)?),
            "Prepend" => NormalizerWrapper::Prepend(parse(&kind, value)?),
            "ByteLevel" => NormalizerWrapper::ByteLevel(ByteLevel),
            other => {
                return Err(Error::format(format!(
                    "unknown normalizer type {other:?} (known: BertNormalizer, Strip, \
                     StripAccents, NFC, \
                     NFD, NFKC, NFKD, \
                     Sequence, Lowercase, Nmt, Precompiled, Replace, Prepend, ByteLevel)"
                )))
            }
        })
    }
}

/// Old tokenizer.json files may omit `type`; like `tokenizers`, recognise the component by its
/// fields.
fn infer_legacy_type(fields: &serde_json::Map<String, serde_json::Value>) -> Option<&'static str> {
    let has = |k: &str| fields.contains_key(k);
    if has("clean_text") && has("handle_chinese_chars") && has("strip_accents") && has("lowercase")
    {
        Some("BertNormalizer")
    } else if has("strip_left") && has("strip_right") {
        Some("Strip")
    } else if has("normalizers") {
        Some("Sequence")
    } else if has("precompiled_charsmap") {
        Some("Precompiled")
    } else if has("pattern") && has("content") {
        Some("Replace")
    } else if has("prepend") {
        Some("Prepend")
    } else {
        None
    }
}

impl<'de> Deserialize<'de> for NormalizerWrapper {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        NormalizerWrapper::from_json(value).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
