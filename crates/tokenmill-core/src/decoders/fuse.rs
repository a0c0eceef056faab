//! `Fuse` decoder: all tokens into one piece.
use serde::{Deserialize, Serialize};

use crate::utils::type_tag::strict_type_tag;

strict_type_tag!(FuseType, "Fuse");

/// Serialized `{"type":"Fuse"}` (`"type"` checked, other fields ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fuse {
    #[serde(rename = "type")]
    type_: FuseType,
}

impl Fuse {
    pub fn new() -> Self {
        Fuse::default()
    }
}
