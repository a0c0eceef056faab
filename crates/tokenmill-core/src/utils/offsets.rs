//! Byte offsets (what Rust slices by) to character offsets (what Python strings index by), and
//! the length of a UTF-8 character from its lead byte.

/// The length a UTF-8 lead byte announces (1 for stray continuation bytes): SentencePiece's
/// `OneCharLen`, and how every Unigram segmenter steps through a text.
#[inline]
pub fn utf8_len(lead: u8) -> usize {
    const LENGTHS: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LENGTHS[(lead >> 4) as usize]
}

/// Converts byte offsets of one string into char offsets. Free for ASCII text.
pub struct ByteToCharOffsets {
    /// `None` when the text is ASCII (byte == char offsets); else char index at each byte.
    map: Option<Vec<u32>>,
}

impl ByteToCharOffsets {
    pub fn new(text: &str) -> Self {
        if text.is_ascii() {
            return ByteToCharOffsets { map: None };
        }
        let mut map = Vec::with_capacity(text.len() + 1);
        let mut chars = 0u32;
        for (i, c) in text.char_indices() {
            debug_assert_eq!(map.len(), i);
            for _ in 0..c.len_utf8() {
                map.push(chars);
            }
            chars += 1;
        }
        map.push(chars);
        ByteToCharOffsets { map: Some(map) }
    }

    /// Char index of a byte offset. A byte inside a character maps to that character.
    #[inline]
    pub fn convert(&self, byte: usize) -> usize {
        match &self.map {
            None => byte,
            Some(m) => m.get(byte).copied().unwrap_or_else(|| *m.last().unwrap()) as usize,
        }
    }

    /// Converts a `(start, end)` byte span; an end inside a character extends to cover it.
    #[inline]
    pub fn convert_span(&self, (start, end): (usize, usize)) -> (usize, usize) {
        match &self.map {
            None => (start, end),
            Some(m) => {
                let s = self.convert(start);
                let e = if end > 0 && end < m.len() && m[end] == m[end - 1] {
                    m[end] as usize + 1
                } else {
                    self.convert(end)
                };
                (s, e)
            }
        }
    }
}
