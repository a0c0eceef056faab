//! Dense byte codes for the characters of a dictionary's words, so that the trie walks one
//! transition per common character where UTF-8 takes three per Han character.
//!
//! Why: the word graph looks up every word starting at every character, and on dictionaries of
//! 50k–300k words the double array does not fit the CPU caches, so each transition tends to be
//! a cache miss (they were three quarters of the segmenter's own time). Characters are ranked
//! by how many words hold them; the 190 most common get one byte, the next 16,065 two, every
//! other one four. The code is prefix-free (the first byte tells the length) and never holds a
//! 0 byte (the trie's terminator); a character that is in no word gets a byte no key holds, so
//! a walk stops there.

use rustc_hash::FxHashMap;

/// First byte of the characters that are in no word (no key holds it).
const NO_WORD: u8 = 1;
/// One-byte codes: 2..=191.
const ONE_BYTE_FIRST: u8 = 2;
const ONE_BYTE_COUNT: u32 = 190;
/// Two-byte codes: a lead of 192..=254, then 1..=255.
const TWO_BYTE_LEAD: u8 = 192;
const TWO_BYTE_COUNT: u32 = 63 * 255;
/// Four-byte codes: 255, then three bytes of 1..=255 (16.5 M codes: all of Unicode).
const FOUR_BYTE_LEAD: u8 = 255;

/// The character → code table.
#[derive(Clone, Default)]
pub(crate) struct CharCodes {
    /// Rank + 1 of each BMP character (0: in no word); characters of higher rank than
    /// `u16::MAX - 1` and astral ones are in `other`.
    bmp: Vec<u16>,
    other: FxHashMap<char, u32>,
}

impl CharCodes {
    /// Ranks the characters of `words` by the number of words that hold them (ties: the lower
    /// code point first, so that the table is deterministic).
    pub(crate) fn new<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let mut counts: FxHashMap<char, u32> = FxHashMap::default();
        for word in words {
            for c in word.chars() {
                *counts.entry(c).or_default() += 1;
            }
        }
        let mut ranked: Vec<(char, u32)> = counts.into_iter().collect();
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut codes = CharCodes { bmp: vec![0; 0x10000], other: FxHashMap::default() };
        for (rank, &(c, _)) in ranked.iter().enumerate() {
            let rank = rank as u32;
            match u16::try_from(rank + 1) {
                Ok(slot) if (c as u32) < 0x10000 && slot < u16::MAX => codes.bmp[c as usize] = slot,
                _ => {
                    if (c as u32) < 0x10000 {
                        codes.bmp[c as usize] = u16::MAX;
                    }
                    codes.other.insert(c, rank);
                }
            }
        }
        codes
    }

    /// The rank of `c`, if some word holds it.
    #[inline]
    pub(crate) fn rank(&self, c: char) -> Option<u32> {
        match self.bmp.get(c as usize) {
            Some(0) => None,
            Some(&slot) if slot != u16::MAX => Some(slot as u32 - 1),
            Some(_) => self.other.get(&c).copied(),
            None if self.bmp.is_empty() => None,
            None => self.other.get(&c).copied(),
        }
    }

    /// Appends the code of `c` to `out`.
    #[inline]
    pub(crate) fn push(&self, c: char, out: &mut Vec<u8>) {
        match self.rank(c) {
            None => out.push(NO_WORD),
            Some(r) if r < ONE_BYTE_COUNT => out.push(ONE_BYTE_FIRST + r as u8),
            Some(r) if r < ONE_BYTE_COUNT + TWO_BYTE_COUNT => {
                let r = r - ONE_BYTE_COUNT;
                out.extend_from_slice(&[TWO_BYTE_LEAD + (r / 255) as u8, 1 + (r % 255) as u8]);
            }
            Some(r) => {
                let r = r - ONE_BYTE_COUNT - TWO_BYTE_COUNT;
                out.extend_from_slice(&[
                    FOUR_BYTE_LEAD,
                    1 + (r / (255 * 255)) as u8,
                    1 + (r / 255 % 255) as u8,
                    1 + (r % 255) as u8,
                ]);
            }
        }
    }

    /// The rank of the character whose code starts `code`, and the code's length; `None` for
    /// a character in no word, or when `code` is empty (`push`'s inverse).
    #[inline]
    pub(crate) fn decode(code: &[u8]) -> (Option<u32>, usize) {
        match *code {
            [] => (None, 0),
            [NO_WORD, ..] => (None, 1),
            [b, ..] if b < TWO_BYTE_LEAD => (Some((b - ONE_BYTE_FIRST) as u32), 1),
            [FOUR_BYTE_LEAD, a, b, c, ..] => {
                let r = (a as u32 - 1) * 255 * 255 + (b as u32 - 1) * 255 + (c as u32 - 1);
                (Some(ONE_BYTE_COUNT + TWO_BYTE_COUNT + r), 4)
            }
            [lead, b, ..] if lead != FOUR_BYTE_LEAD => {
                (Some(ONE_BYTE_COUNT + (lead - TWO_BYTE_LEAD) as u32 * 255 + (b as u32 - 1)), 2)
            }
            // A truncated code: not produced by `push`.
            _ => (None, code.len()),
        }
    }

    /// The code of a whole word.
    pub(crate) fn encode(&self, word: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(word.len());
        for c in word.chars() {
            self.push(c, &mut out);
        }
        out
    }
}

/// A chunk of text in codes, with the offsets that map between the two.
#[derive(Default)]
pub(crate) struct CodedText {
    pub bytes: Vec<u8>,
    /// `text_at[k]`: the chunk byte offset of the character whose code starts at `bytes[k]`
    /// (and, at `bytes.len()`, the end of the chunk); other entries are unused.
    pub text_at: Vec<u32>,
    /// `coded_at[i]`: where the code of the character at chunk byte `i` starts; other entries
    /// are unused.
    pub coded_at: Vec<u32>,
}

impl CodedText {
    /// Encodes `chunk`; offsets are relative to its start.
    pub(crate) fn encode(&mut self, codes: &CharCodes, chunk: &str) {
        self.bytes.clear();
        self.text_at.clear();
        self.coded_at.clear();
        self.coded_at.resize(chunk.len() + 1, 0);
        for (i, c) in chunk.char_indices() {
            let at = self.bytes.len();
            codes.push(c, &mut self.bytes);
            self.text_at.resize(self.bytes.len(), 0);
            self.text_at[at] = i as u32;
            self.coded_at[i] = at as u32;
        }
        self.text_at.push(chunk.len() as u32);
        self.coded_at[chunk.len()] = self.bytes.len() as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_prefix_free_and_distinct() {
        let words: Vec<String> = (0..20_000u32)
            .filter_map(|i| char::from_u32(0x4E00 + i))
            .map(|c| c.to_string())
            .chain(["😀x".to_string()])
            .collect();
        let codes = CharCodes::new(words.iter().map(String::as_str));
        let mut seen = std::collections::HashSet::new();
        for w in &words {
            let code = codes.encode(w);
            assert!(!code.contains(&0) && code[0] != NO_WORD, "{w}");
            assert!(seen.insert(code), "{w}");
        }
        assert_eq!(codes.encode("\u{AC00}"), vec![NO_WORD]);
        for w in &words {
            let c = w.chars().next().unwrap();
            let code = codes.encode(&c.to_string());
            assert_eq!(CharCodes::decode(&code), (codes.rank(c), code.len()), "{w}");
        }
        assert_eq!(CharCodes::decode(&[NO_WORD, 5]), (None, 1));
        assert_eq!(CharCodes::decode(&[]), (None, 0));
        let mut coded = CodedText::default();
        coded.encode(&codes, "一😀丁x");
        assert_eq!(coded.text_at[0], 0);
        assert_eq!(*coded.text_at.last().unwrap(), "一😀丁x".len() as u32);
    }
}
