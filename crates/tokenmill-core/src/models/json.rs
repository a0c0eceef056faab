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

/// Checks that `json` (a model object with its `"type"`) reads as a `M` and as a `ModelWrapper`
/// holding it, that both write `json` back, and that the object without its `"type"` (old
/// files) reads as the same model. Returns the model.
#[cfg(test)]
pub(crate) fn assert_round_trip<M>(json: &str) -> M
where
    M: serde::de::DeserializeOwned + Serialize + Clone + Into<super::ModelWrapper>,
{
    let model: M = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&model).unwrap(), json);
    let wrapped: super::ModelWrapper = serde_json::from_str(json).unwrap();
    assert_eq!(wrapped, model.clone().into());
    assert_eq!(serde_json::to_string(&wrapped).unwrap(), json);
    let kind = format!(r#""type":"{}","#, wrapped.kind());
    let untyped: super::ModelWrapper = serde_json::from_str(&json.replace(&kind, "")).unwrap();
    assert_eq!(untyped, model.clone().into());
    model
}
