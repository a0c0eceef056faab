//! tiktoken's encodings of incomplete input: bytes that are not valid UTF-8 (`_encode_bytes`)
//! and text whose last tokens could still change if more text followed
//! (`encode_with_unstable`). Both follow tiktoken 0.14's rules, quirks included, so that their
//! results are the same ids.
use std::collections::BTreeSet;

use super::bpe::{encode_piece, encode_piece_by_merges, Rank};
use super::core::CoreBpe;
use crate::error::Result;

/// `encode_with_unstable`'s result: the stable ids, then every id sequence that could follow
/// them (sorted; tiktoken returns them in hash order).
pub type Unstable = (Vec<Rank>, Vec<Vec<Rank>>);

impl CoreBpe {
    /// Whether `id` is an ordinary token made only of spaces, newlines and tabs.
    fn is_blank_token(&self, id: Rank) -> bool {
        match self.decoder.get(id) {
            Some(bytes) => {
                self.encoder.get(bytes) == Some(id) && bytes.iter().all(|b| b" \n\t".contains(b))
            }
            None => false,
        }
    }

    /// Splits that more text could remove make tokens before the last piece unstable too:
    /// when the last piece starts with a blank token, the blank tokens before it join it.
    fn widen_last_piece(&self, ids: &[Rank], mut last_piece_len: usize) -> usize {
        if last_piece_len > 0 && self.is_blank_token(ids[ids.len() - last_piece_len]) {
            while last_piece_len < ids.len()
                && self.is_blank_token(ids[ids.len() - last_piece_len - 1])
            {
                last_piece_len += 1;
            }
        }
        last_piece_len
    }

    /// The bytes of `ids` (known to be valid ids).
    fn bytes_of(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        self.decode_bytes(ids)
    }

    /// Encodes bytes that may not be UTF-8 (tiktoken's `_encode_bytes`): the valid UTF-8 prefix
    /// is encoded as ordinary text, then the tokens of its last piece are decoded again, joined
    /// with the invalid rest and encoded as one piece.
    pub fn encode_bytes(&self, bytes: &[u8]) -> Result<Vec<Rank>> {
        let valid_up_to = match std::str::from_utf8(bytes) {
            Ok(text) => return self.encode_ordinary(text),
            Err(e) => e.valid_up_to(),
        };
        let prefix = std::str::from_utf8(&bytes[..valid_up_to]).expect("valid up to here");
        let (mut ids, last_piece_len) = self.encode_with_last_piece(prefix, |_| false)?;
        let last_piece_len = self.widen_last_piece(&ids, last_piece_len);
        let mut rest = Vec::new();
        if !ids.is_empty() && last_piece_len > 0 {
            rest = self.bytes_of(&ids[ids.len() - last_piece_len..])?;
            ids.truncate(ids.len() - last_piece_len);
        }
        rest.extend_from_slice(&bytes[valid_up_to..]);
        if !rest.is_empty() {
            encode_piece(&self.encoder, &rest, &mut ids)?;
        }
        Ok(ids)
    }

    /// Ordinary token ids sorted by their bytes (built once).
    fn sorted_tokens(&self) -> &[Rank] {
        self.sorted_tokens.get_or_init(|| {
            let mut tokens: Vec<(Rank, &[u8])> = self.ordinary_tokens().collect();
            tokens.sort_unstable_by(|a, b| a.1.cmp(b.1));
            tokens.into_iter().map(|(id, _)| id).collect()
        })
    }

    /// The ordinary tokens whose bytes start with `prefix`, in byte order.
    fn tokens_starting_with<'a>(
        &'a self,
        prefix: &'a [u8],
    ) -> impl Iterator<Item = (Rank, &'a [u8])> + 'a {
        let sorted = self.sorted_tokens();
        let token = |id: Rank| self.decoder.get(id).unwrap_or_default();
        let first = sorted.partition_point(|&id| token(id) < prefix);
        sorted[first..]
            .iter()
            .map(move |&id| (id, token(id)))
            .take_while(move |(_, t)| t.starts_with(prefix))
    }

    /// tiktoken's `encode_with_unstable`: the ids of `text` up to its last piece (and the blank
    /// tokens before it), and the id sequences that could encode the rest once more text is
    /// appended: every token starting with the unstable bytes; for every split of them,
    /// the prefix joined with each token starting with the suffix, re-encoded and cut once it
    /// covers the unstable bytes; and, when they end in whitespace, that last character
    /// encoded apart.
    pub fn encode_with_unstable(
        &self,
        text: &str,
        allowed: impl Fn(&str) -> bool,
    ) -> Result<Unstable> {
        let (mut ids, last_piece_len) = self.encode_with_last_piece(text, allowed)?;
        if last_piece_len == 0 {
            return Ok((ids, Vec::new()));
        }
        let last_piece_len = self.widen_last_piece(&ids, last_piece_len);
        let unstable = self.bytes_of(&ids[ids.len() - last_piece_len..])?;
        ids.truncate(ids.len() - last_piece_len);
        let mut completions: BTreeSet<Vec<Rank>> = BTreeSet::new();
        if unstable.is_empty() {
            return Ok((ids, Vec::new()));
        }
        completions.extend(self.tokens_starting_with(&unstable).map(|(id, _)| vec![id]));
        for split in 1..unstable.len() {
            let (prefix, suffix) = unstable.split_at(split);
            for (_, token) in self.tokens_starting_with(suffix) {
                let candidate = [prefix, token].concat();
                // Regex splits can prevent merges, so valid text goes through the pattern.
                let encoded = match std::str::from_utf8(&candidate) {
                    Ok(text) => self.encode_ordinary(text)?,
                    Err(_) => {
                        let mut out = Vec::new();
                        encode_piece_by_merges(&self.encoder, &candidate, &mut out)?;
                        out
                    }
                };
                completions.insert(self.covering_prefix(&encoded, unstable.len()));
            }
        }
        if unstable.len() > 1 {
            if let Some(char_start) = last_char_start_if_whitespace(&unstable) {
                if char_start > 0 {
                    let mut split = Vec::new();
                    encode_piece_by_merges(&self.encoder, &unstable[..char_start], &mut split)?;
                    encode_piece_by_merges(&self.encoder, &unstable[char_start..], &mut split)?;
                    completions.insert(split);
                }
            }
        }
        Ok((ids, completions.into_iter().collect()))
    }

    /// The shortest prefix of `ids` whose bytes reach `len` bytes (all of `ids` if none does).
    fn covering_prefix(&self, ids: &[Rank], len: usize) -> Vec<Rank> {
        let mut covered = 0;
        let mut out = Vec::new();
        for &id in ids {
            out.push(id);
            covered += self.decoder.get(id).map_or(0, <[u8]>::len);
            if covered >= len {
                break;
            }
        }
        out
    }
}

/// Where the last character of `bytes` starts, if it is valid UTF-8 and whitespace.
fn last_char_start_if_whitespace(bytes: &[u8]) -> Option<usize> {
    let start =
        (bytes.len().saturating_sub(4)..bytes.len()).rev().find(|&i| bytes[i] & 0xC0 != 0x80)?;
    let mut chars = std::str::from_utf8(&bytes[start..]).ok()?.chars();
    let c = chars.next()?;
    (chars.next().is_none() && c.is_whitespace()).then_some(start)
}

#[cfg(test)]
mod tests {
    use crate::tiktoken::core::tests::tiny;

    #[test]
    fn bytes_round_trip_even_when_not_utf8() {
        let core = tiny();
        for bytes in [&b"hello world"[..], b"hello \xe2\x82", b"\xff", b"", b"he\xc3"] {
            let ids = core.encode_bytes(bytes).unwrap();
            assert_eq!(core.decode_bytes(&ids).unwrap(), bytes);
        }
    }

    #[test]
    fn unstable_completions_extend_the_text() {
        let core = tiny();
        let (stable, completions) = core.encode_with_unstable("hello wo", |_| false).unwrap();
        assert_eq!(stable, vec![259]);
        assert!(completions.contains(&vec![262]) && completions.contains(&vec![263]));
        for c in &completions {
            let bytes = core.decode_bytes(&[stable.clone(), c.clone()].concat()).unwrap();
            assert!(bytes.starts_with(b"hello wo"), "{:?}", String::from_utf8_lossy(&bytes));
        }
    }
}
