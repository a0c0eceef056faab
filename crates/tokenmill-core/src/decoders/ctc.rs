//! `CTC` decoder (speech models): collapses repeated tokens, drops padding, maps the word
//! delimiter to a space.
use serde::{Deserialize, Serialize};

use super::wordpiece;

/// Serialized `{"type":"CTC","pad_token":"<pad>","word_delimiter_token":"|","cleanup":true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct CTC {
    pub pad_token: String,
    pub word_delimiter_token: String,
    pub cleanup: bool,
}

impl Default for CTC {
    fn default() -> Self {
        CTC { pad_token: "<pad>".into(), word_delimiter_token: "|".into(), cleanup: true }
    }
}

impl CTC {
    pub fn new(pad_token: String, word_delimiter_token: String, cleanup: bool) -> Self {
        CTC { pad_token, word_delimiter_token, cleanup }
    }

    pub fn decode_chain(&self, mut tokens: Vec<String>) -> Vec<String> {
        tokens.dedup();
        tokens
            .into_iter()
            .filter_map(|token| {
                let mut text = token.replace(&self.pad_token, "");
                if self.cleanup {
                    text = wordpiece::cleanup(&text).replace(&self.word_delimiter_token, " ");
                }
                (!text.is_empty()).then_some(text)
            })
            .collect()
    }
}
