//! Streaming decode for generation: ids arrive one at a time and text is handed out as soon as
//! it is complete, with the same results as `tokenizers`' `DecodeStream`.
//!
//! Why a window of ids and not one id at a time: a token's text can depend on its neighbours
//! (a UTF-8 character or a `<0xNN>` byte-fallback run spread over several tokens; decoders such
//! as Metaspace that drop the leading space of the first token). So the stream keeps the ids of
//! the text it last handed out (`prefix`) plus what came after, decodes that window, and hands
//! out what follows `prefix` once the decoding does not end in U+FFFD (an unfinished
//! character). The handed-out pieces concatenate to the decoding of the whole sequence.
use crate::error::{Error, Result};

/// The replacement character decoders produce for incomplete UTF-8 (or byte-fallback) sequences.
const INCOMPLETE: char = '\u{FFFD}';

#[derive(Debug, Clone, Default)]
pub struct DecodeStream {
    /// The window: the ids of `prefix`, then the ids that came after.
    ids: Vec<u32>,
    /// The decoding of `ids[..prefix_ids]`: text already handed out, kept as context.
    prefix: String,
    /// How many ids at the front of `ids` produced `prefix`.
    prefix_ids: usize,
}

impl DecodeStream {
    /// A stream, optionally with ids already generated (their text is not handed out).
    pub fn new(ids: Vec<u32>) -> Self {
        DecodeStream { ids, prefix: String::new(), prefix_ids: 0 }
    }

    /// The stream's state, `(ids, prefix, prefix_ids)`, to copy or pickle it (see
    /// [`DecodeStream::from_parts`]).
    pub fn to_parts(&self) -> (Vec<u32>, String, usize) {
        (self.ids.clone(), self.prefix.clone(), self.prefix_ids)
    }

    /// A stream in the state `to_parts` gave; an error if `prefix_ids` exceeds the ids.
    pub fn from_parts(ids: Vec<u32>, prefix: String, prefix_ids: usize) -> Result<Self> {
        if prefix_ids > ids.len() {
            return Err(Error::InvalidArgument(format!(
                "decode stream state: {prefix_ids} prefix ids but only {} ids",
                ids.len()
            )));
        }
        Ok(DecodeStream { ids, prefix, prefix_ids })
    }

    /// Adds ids and returns the text they complete, if any. `decode` decodes a list of ids
    /// (the tokenizer's decode with the stream's skip_special_tokens).
    pub fn step(
        &mut self,
        new_ids: &[u32],
        decode: impl Fn(&[u32]) -> Result<String>,
    ) -> Result<Option<String>> {
        // Ids given at construction become the context once they decode to whole characters.
        if self.prefix.is_empty() && !self.ids.is_empty() {
            let prefix = decode(&self.ids)?;
            if !prefix.ends_with(INCOMPLETE) {
                self.prefix = prefix;
                self.prefix_ids = self.ids.len();
            }
        }
        self.ids.extend_from_slice(new_ids);
        let text = decode(&self.ids)?;
        if text.len() <= self.prefix.len() || text.ends_with(INCOMPLETE) {
            return Ok(None);
        }
        let Some(new_text) = text.strip_prefix(self.prefix.as_str()) else {
            return Err(Error::Other(format!(
                "decode stream: the text of ids {:?} no longer starts with the text already \
                    produced {:?} (got {:?})",
                self.ids, self.prefix, text
            )));
        };
        let new_text = new_text.to_string();
        // The ids after the old prefix become the new context.
        self.ids.drain(..self.prefix_ids);
        self.prefix = decode(&self.ids)?;
        self.prefix_ids = self.ids.len();
        Ok(Some(new_text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decoder over byte tokens: ids are bytes; invalid UTF-8 at the end becomes U+FFFD.
    fn bytes(ids: &[u32]) -> Result<String> {
        Ok(String::from_utf8_lossy(&ids.iter().map(|&i| i as u8).collect::<Vec<_>>()).into_owned())
    }

    #[test]
    fn multibyte_characters_wait_until_complete() {
        let text = "aé€😀b";
        let mut stream = DecodeStream::default();
        let mut pieces = Vec::new();
        for b in text.bytes() {
            if let Some(piece) = stream.step(&[b as u32], bytes).unwrap() {
                pieces.push(piece);
            }
        }
        assert_eq!(pieces, vec!["a", "é", "€", "😀", "b"]);
    }

    #[test]
    fn initial_ids_are_context_only() {
        let mut stream = DecodeStream::new(vec![b'x' as u32]);
        assert_eq!(stream.step(&[b'y' as u32], bytes).unwrap(), Some("y".to_string()));
    }

    #[test]
    fn parts_round_trip_and_are_checked() {
        let mut stream = DecodeStream::new(vec![b'x' as u32]);
        stream.step(&[b'y' as u32], bytes).unwrap();
        let (ids, prefix, prefix_ids) = stream.to_parts();
        let mut copy = DecodeStream::from_parts(ids, prefix, prefix_ids).unwrap();
        let z = [b'z' as u32];
        assert_eq!(copy.step(&z, bytes).unwrap(), stream.step(&z, bytes).unwrap());
        assert!(DecodeStream::from_parts(vec![1], String::new(), 2).is_err());
    }

    #[test]
    fn a_decoder_that_rewrites_earlier_text_is_an_error() {
        let flip = |ids: &[u32]| -> Result<String> {
            Ok(if ids.len() > 1 { "zz".into() } else { "a".into() })
        };
        let mut stream = DecodeStream::default();
        assert_eq!(stream.step(&[1], flip).unwrap(), Some("a".to_string()));
        assert!(stream.step(&[2], flip).is_err());
    }
}
