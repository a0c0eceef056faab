//! `WordPiece` decoder: joins tokens with spaces except those carrying the continuation
//! prefix (`##`), optionally undoing BERT's spaces around punctuation and contractions.
use serde::{Deserialize, Serialize};

/// Serialized `{"type":"WordPiece","prefix":"##","cleanup":true}` (`"type"` not checked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct WordPiece {
    pub prefix: String,
    pub cleanup: bool,
}

impl Default for WordPiece {
    fn default() -> Self {
        WordPiece { prefix: "##".into(), cleanup: true }
    }
}

/// BERT's tokenization artifacts removed, in `tokenizers`' order.
pub fn cleanup(text: &str) -> String {
    const RULES: [(&str, &str); 11] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    // Every rule starts with a space: most tokens have none and need no pass at all.
    if !text.contains(' ') {
        return text.to_string();
    }
    RULES.iter().fold(text.to_string(), |s, (from, to)| s.replace(from, to))
}

impl WordPiece {
    pub fn new(prefix: String, cleanup: bool) -> Self {
        WordPiece { prefix, cleanup }
    }

    pub fn decode_chain(&self, tokens: Vec<String>) -> Vec<String> {
        tokens
            .into_iter()
            .enumerate()
            .map(|(i, token)| {
                let token = if i == 0 {
                    token
                } else if let Some(rest) = token.strip_prefix(self.prefix.as_str()) {
                    rest.to_string()
                } else {
                    format!(" {token}")
                };
                if self.cleanup {
                    cleanup(&token)
                } else {
                    token
                }
            })
            .collect()
    }
}
