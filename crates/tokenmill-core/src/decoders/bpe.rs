//! `BPEDecoder`: the end-of-word suffix (e.g. `</w>`) becomes a space (nothing on the last token).
use serde::{Deserialize, Serialize};

/// Serialized `{"type":"BPEDecoder","suffix":"</w>"}` (`"type"` not checked when reading).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct BPEDecoder {
    pub suffix: String,
}

impl Default for BPEDecoder {
    fn default() -> Self {
        BPEDecoder { suffix: "</w>".into() }
    }
}

impl BPEDecoder {
    pub fn new(suffix: String) -> Self {
        BPEDecoder { suffix }
    }

    /// Every occurrence of the suffix is replaced (as `str::replace` does, so an empty suffix
    /// puts a space around every character, like `tokenizers`).
    pub fn decode_chain(&self, tokens: Vec<String>) -> Vec<String> {
        let last = tokens.len().saturating_sub(1);
        tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| t.replace(&self.suffix, if i == last { "" } else { " " }))
            .collect()
    }
}
