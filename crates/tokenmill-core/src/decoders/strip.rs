//! `Strip` decoder: removes up to `start` leading and `stop` trailing `content` characters
//! from each token.
use serde::{Deserialize, Serialize};

/// Serialized `{"type":"Strip","content":" ","start":1,"stop":0}` (`"type"` not checked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct Strip {
    pub content: char,
    pub start: usize,
    pub stop: usize,
}

impl Default for Strip {
    fn default() -> Self {
        Strip { content: ' ', start: 0, stop: 0 }
    }
}

impl Strip {
    pub fn new(content: char, start: usize, stop: usize) -> Self {
        Strip { content, start, stop }
    }

    /// Where `tokenizers` would panic (asking to strip more `content` characters than a token
    /// has, from both sides), the token simply becomes empty.
    pub fn decode_chain(&self, tokens: Vec<String>) -> Vec<String> {
        tokens
            .into_iter()
            .map(|token| {
                let chars: Vec<char> = token.chars().collect();
                let start_cut =
                    chars.iter().take(self.start).take_while(|c| **c == self.content).count();
                let stop_cut = chars.len()
                    - chars
                        .iter()
                        .rev()
                        .take(self.stop)
                        .take_while(|c| **c == self.content)
                        .count();
                if start_cut >= stop_cut {
                    String::new()
                } else {
                    chars[start_cut..stop_cut].iter().collect()
                }
            })
            .collect()
    }
}
