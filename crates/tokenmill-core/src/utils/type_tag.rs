//! The `"type"` tag of a component in tokenizer.json, checked where `tokenizers` checks it:
//! `strict_type_tag!` declares a tag field's type (`{"type": "Sequence", ...}`),
//! `impl_type_only_serde!` the (de)serialization of a component that is only its tag
//! (`{"type": "NFC"}`, other fields ignored on reading), `tagged_sequence!` the `Sequence` of a
//! stage whose tag is checked (decoders, post-processors).
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serializer};

/// `Ok` when the tag read, `found`, is `name`; else the error every tag check gives.
pub(crate) fn check_type<E: serde::de::Error>(found: &str, name: &str) -> Result<(), E> {
    if found == name {
        Ok(())
    } else {
        Err(E::custom(format!("expected type {name:?}, got {found:?}")))
    }
}

/// Writes `{"type": name}`.
pub(crate) fn serialize_type_only<S: Serializer>(
    serializer: S,
    name: &'static str,
) -> Result<S::Ok, S::Error> {
    let mut s = serializer.serialize_struct(name, 1)?;
    s.serialize_field("type", name)?;
    s.end()
}

/// Reads `{"type": name, ...}`, the other fields ignored.
pub(crate) fn deserialize_type_only<'de, D: Deserializer<'de>>(
    deserializer: D,
    name: &str,
) -> Result<(), D::Error> {
    #[derive(Deserialize)]
    struct TypeOnly {
        #[serde(rename = "type")]
        kind: String,
    }
    let found = TypeOnly::deserialize(deserializer)?;
    check_type(&found.kind, name)
}

/// `serde` for a unit struct whose JSON is only `{"type": "<its name>"}` (other fields are
/// ignored on reading, as `tokenizers` does).
macro_rules! impl_type_only_serde {
    ($ty:ident) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(
                &self,
                serializer: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                $crate::utils::type_tag::serialize_type_only(serializer, stringify!($ty))
            }
        }
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> std::result::Result<Self, D::Error> {
                $crate::utils::type_tag::deserialize_type_only(deserializer, stringify!($ty))
                    .map(|()| $ty)
            }
        }
    };
}
pub(crate) use impl_type_only_serde;

/// Declares `$tag`, the type of a `#[serde(rename = "type")]` field that reads only the string
/// `$name` (for components whose tag `tokenizers` checks, e.g. Sequence) and writes it.
macro_rules! strict_type_tag {
    ($tag:ident, $name:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $tag;
        impl serde::Serialize for $tag {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str($name)
            }
        }
        impl<'de> serde::Deserialize<'de> for $tag {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                let found = String::deserialize(d)?;
                $crate::utils::type_tag::check_type(&found, $name).map(|()| $tag)
            }
        }
    };
}
pub(crate) use strict_type_tag;

/// Declares `pub struct Sequence { pub $field: Vec<$item> }` (doc comments kept) with its
/// `new`: the chain of a stage, serialized as `{"type": "Sequence", "$field": [...]}` with the
/// tag checked, as `tokenizers` checks it for decoders and post-processors.
macro_rules! tagged_sequence {
    ($(#[$doc:meta])* $field:ident: Vec<$item:ty>) => {
        $crate::utils::type_tag::strict_type_tag!(SequenceType, "Sequence");

        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct Sequence {
            #[serde(rename = "type")]
            type_: SequenceType,
            pub $field: Vec<$item>,
        }

        impl Sequence {
            pub fn new($field: Vec<$item>) -> Self {
                Sequence { type_: SequenceType, $field }
            }
        }
    };
}
pub(crate) use tagged_sequence;
