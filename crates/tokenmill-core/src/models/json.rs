//! What the model families' tokenizer.json objects share: the `"type"` check and the
//! vocabulary written in id order.
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// Checks the `"type"` of a model object, when it has one (old files may not): it must be
/// `expected`.
pub(crate) fn check_model_type<E: serde::de::Error>(
    found: Option<&str>,
    expected: &str,
) -> Result<(), E> {
    match found {
        Some(kind) if kind != expected => {
            Err(E::custom(format!("model type {kind:?} is not {expected:?}")))
        }
        _ => Ok(()),
    }
}

/// Serializes `(token, id)` entries (already in id order) as a JSON object.
pub(crate) struct OrderedVocab<'a>(pub Vec<(&'a str, u32)>);

impl Serialize for OrderedVocab<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (token, id) in &self.0 {
            map.serialize_entry(token, id)?;
        }
        map.end()
    }
}
