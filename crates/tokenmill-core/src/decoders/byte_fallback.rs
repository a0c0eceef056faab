//! `ByteFallback` decoder: runs of `<0xNN>` tokens back to the bytes they stand for.
use serde::{Deserialize, Serialize};

use crate::utils::type_tag::strict_type_tag;

strict_type_tag!(ByteFallbackType, "ByteFallback");

/// Serialized `{"type":"ByteFallback"}` (`"type"` checked, other fields ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ByteFallback {
    #[serde(rename = "type")]
    type_: ByteFallbackType,
}

impl ByteFallback {
    pub fn new() -> Self {
        ByteFallback::default()
    }
}

/// The byte a `<0xNN>` token stands for. Parsed like `tokenizers` (6 bytes, `u8::from_str_radix`
/// on the two in the middle, which also accepts `+N`).
fn byte_of(token: &str) -> Option<u8> {
    if token.len() == 6 && token.starts_with("<0x") && token.ends_with('>') {
        u8::from_str_radix(token.get(3..5)?, 16).ok()
    } else {
        None
    }
}

/// Each run of byte tokens becomes one piece if its bytes are valid UTF-8, otherwise one
/// U+FFFD per byte token (the `tokenizers` rule); other tokens pass through.
pub fn decode_chain(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut run: Vec<u8> = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut Vec<String>| {
        if run.is_empty() {
            return;
        }
        match String::from_utf8(std::mem::take(run)) {
            Ok(s) => out.push(s),
            Err(e) => out.extend(std::iter::repeat_n("\u{FFFD}".to_string(), e.as_bytes().len())),
        }
    };
    for token in tokens {
        match byte_of(&token) {
            Some(b) => run.push(b),
            None => {
                flush(&mut run, &mut out);
                out.push(token);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}
