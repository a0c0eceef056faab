//! Hand-written splitters for the well-known byte-level BPE split patterns.
//!
//! Why hand-written: these patterns need look-ahead and possessive quantifiers, so a general
//! engine has to backtrack (`fancy-regex`), which dominates tiktoken-style encoding time. Each
//! pattern below is a small decision procedure on character classes; written out, it runs an
//! order of magnitude faster, allocates nothing, and yields exactly the same spans (checked
//! against `fancy-regex` by the differential tests below and in `tests/test_tiktoken_scanners.py`).
//!
//! All supported patterns match every character, so their matches tile the text: the scanner
//! only has to find where the match that starts at a given position ends.
//!
//! Imports nothing from the rest of the crate (`classes` is its own char-class table); the
//! regex wrapper in `utils::regex` picks a scanner when a pattern is one of the known ones.
pub(crate) mod classes;

use classes::{class_at, LETTER, LOWERISH, NUMBER, OTHER, PREFIX, SPACE, UPPERISH};

/// GPT-2's split pattern as released (also Whisper's and `tokenizers`' ByteLevel default).
pub const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// tiktoken's faster, equivalent form of the GPT-2 pattern (r50k_base, p50k_base).
pub const R50K_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// cl100k_base.
pub const CL100K_PATTERN: &str = concat!(
    r"'(?i:[sdmt]",
    r"|ll",
    r"|ve",
    r"|re)",
    r"|[^\r\n\p{L}\p{N}]?+\p{L}++",
    r"|\p{N}{1,3}+",
    r"| ?[^\s\p{L}\p{N}]++[\r\n]*+",
    r"|\s++$",
    r"|\s*[\r\n]",
    r"|\s+(?!\S)",
    r"|\s",
);
/// o200k_base (and o200k_harmony).
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);
/// Llama-3's split pattern with `$digits` for the digit run: Llama-3 and Qwen2 differ only
/// there.
macro_rules! llama3_like_pattern {
    ($digits:literal) => {
        concat!(
            r"(?i:'s",
            r"|'t",
            r"|'re",
            r"|'ve",
            r"|'m",
            r"|'ll",
            r"|'d)",
            r"|[^\r\n\p{L}\p{N}]?\p{L}+",
            $digits,
            r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
            r"|\s*[\r\n]+",
            r"|\s+(?!\S)",
            r"|\s+",
        )
    };
}
/// Llama-3's split pattern (as in its tokenizer.json).
pub const LLAMA3_PATTERN: &str = llama3_like_pattern!(r"|\p{N}{1,3}");
/// Qwen2's split pattern (Llama-3's with single digits).
pub const QWEN2_PATTERN: &str = llama3_like_pattern!(r"|\p{N}");

/// Which pattern a scanner implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScannerKind {
    /// GPT-2 / r50k / p50k (both spellings of the pattern split identically).
    Gpt2,
    /// cl100k_base.
    Cl100k,
    /// o200k_base.
    O200k,
    /// Llama-3: cl100k without `\s++$`.
    Llama3,
    /// Qwen2: Llama-3 with one digit per number piece.
    Qwen2,
}

/// A splitter equivalent to one of the known patterns.
#[derive(Clone)]
pub struct Scanner {
    kind: ScannerKind,
    table: &'static [u8],
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner").field("kind", &self.kind).finish()
    }
}

impl Scanner {
    /// The scanner for `pattern` if it is one of the known patterns (compared exactly: any other
    /// spelling goes to the general regex engine, which is always correct).
    pub fn for_pattern(pattern: &str) -> Option<Scanner> {
        let kind = match pattern {
            GPT2_PATTERN | R50K_PATTERN => ScannerKind::Gpt2,
            CL100K_PATTERN => ScannerKind::Cl100k,
            O200K_PATTERN => ScannerKind::O200k,
            LLAMA3_PATTERN => ScannerKind::Llama3,
            QWEN2_PATTERN => ScannerKind::Qwen2,
            _ => return None,
        };
        Some(Scanner::new(kind))
    }

    pub fn new(kind: ScannerKind) -> Scanner {
        Scanner { kind, table: classes::table() }
    }

    #[cfg(test)]
    pub fn kind(&self) -> ScannerKind {
        self.kind
    }

    /// Calls `f(start, end)` for every match, left to right (byte offsets; they tile `text`).
    #[inline]
    pub fn for_each_span(&self, text: &str, f: impl FnMut(usize, usize)) {
        let c = Cursor { t: self.table, b: text.as_bytes() };
        match self.kind {
            ScannerKind::Gpt2 => tile(&c, f, |c, i| c.gpt2(i)),
            ScannerKind::Cl100k => tile(&c, f, |c, i| c.cl100k_like(i, true, 3)),
            ScannerKind::Llama3 => tile(&c, f, |c, i| c.cl100k_like(i, false, 3)),
            ScannerKind::Qwen2 => tile(&c, f, |c, i| c.cl100k_like(i, false, 1)),
            ScannerKind::O200k => tile(&c, f, |c, i| c.o200k(i)),
        }
    }

    /// All matches as byte spans.
    #[cfg(test)]
    pub fn find_spans(&self, text: &str) -> Vec<(usize, usize)> {
        let mut spans = Vec::new();
        self.for_each_span(text, |s, e| spans.push((s, e)));
        spans
    }
}

#[inline(always)]
fn tile(c: &Cursor, mut f: impl FnMut(usize, usize), next_end: impl Fn(&Cursor, usize) -> usize) {
    let mut i = 0;
    while i < c.b.len() {
        let end = next_end(c, i);
        f(i, end);
        i = end;
    }
}

/// The text and the class table; every method takes a char boundary `i < len` unless noted.
struct Cursor<'a> {
    t: &'a [u8],
    b: &'a [u8],
}

impl Cursor<'_> {
    #[inline(always)]
    fn class(&self, i: usize) -> (u8, usize) {
        class_at(self.t, self.b, i)
    }

    /// Flags of the character at `i`, or 0 at the end of the text.
    #[inline(always)]
    fn flags_or_end(&self, i: usize) -> u8 {
        if i < self.b.len() {
            self.class(i).0
        } else {
            0
        }
    }

    /// End of the run of characters having any of `flags`, starting at `i` (may be empty).
    #[inline(always)]
    fn run(&self, mut i: usize, flags: u8) -> usize {
        while i < self.b.len() {
            let (c, n) = self.class(i);
            if c & flags == 0 {
                break;
            }
            i += n;
        }
        i
    }

    /// End of at most `max` characters having `flags`, starting at `i`.
    #[inline(always)]
    fn run_at_most(&self, mut i: usize, flags: u8, max: usize) -> usize {
        for _ in 0..max {
            if i >= self.b.len() {
                break;
            }
            let (c, n) = self.class(i);
            if c & flags == 0 {
                break;
            }
            i += n;
        }
        i
    }

    /// End of the run of bytes from `set`, starting at `i` (the sets are ASCII).
    #[inline(always)]
    fn run_bytes(&self, mut i: usize, set: &[u8]) -> usize {
        while i < self.b.len() && set.contains(&self.b[i]) {
            i += 1;
        }
        i
    }

    /// Length of the English contraction `'s 't 're 've 'm 'll 'd` starting at `i`, or 0.
    /// With `ignore_case`, letters match as under Unicode simple case folding, where `s` also
    /// matches `ſ` (U+017F LONG S), as in `(?i:...)` of fancy-regex.
    #[inline]
    fn contraction(&self, i: usize, ignore_case: bool) -> usize {
        let b = self.b;
        if b.get(i) != Some(&b'\'') {
            return 0;
        }
        let fold = |x: u8| if ignore_case { x.to_ascii_lowercase() } else { x };
        let Some(&c1) = b.get(i + 1) else { return 0 };
        match fold(c1) {
            b's' | b'd' | b'm' | b't' => return 2,
            _ => {}
        }
        if ignore_case && c1 == 0xC5 && b.get(i + 2) == Some(&0xBF) {
            return 3; // ſ
        }
        let Some(&c2) = b.get(i + 2) else { return 0 };
        match (fold(c1), fold(c2)) {
            (b'l', b'l') | (b'v', b'e') | (b'r', b'e') => 3,
            _ => 0,
        }
    }

    /// End of a whitespace match starting at `i` (a whitespace character) once every
    /// alternative that could take the whitespace into a word has failed.
    ///
    /// `whole_at_end`: `\s++$` comes first (r50k, cl100k). `newlines`: `\s*[\r\n]` comes next
    /// (cl100k, o200k, Llama-3). Then `\s+(?!\S)`: the run minus its last character, which is
    /// left to prefix the next word; and a lone whitespace character stands alone.
    #[inline]
    fn whitespace(&self, i: usize, whole_at_end: bool, newlines: bool) -> usize {
        let mut j = i;
        let mut last_start = i;
        let mut after_newline = 0;
        while j < self.b.len() {
            let (c, n) = self.class(j);
            if c & SPACE == 0 {
                break;
            }
            if self.b[j] == b'\n' || self.b[j] == b'\r' {
                after_newline = j + 1;
            }
            last_start = j;
            j += n;
        }
        let at_end = j == self.b.len();
        if whole_at_end && at_end {
            j
        } else if newlines && after_newline > 0 {
            after_newline
        } else if at_end {
            j
        } else if last_start > i {
            last_start
        } else {
            j
        }
    }

    /// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
    #[inline(always)]
    fn gpt2(&self, i: usize) -> usize {
        let (c, _) = self.class(i);
        if self.b[i] == b'\'' {
            let k = self.contraction(i, false);
            if k > 0 {
                return i + k;
            }
        }
        if self.b[i] == b' ' {
            let next = self.flags_or_end(i + 1);
            for flags in [LETTER, NUMBER, OTHER] {
                if next & flags != 0 {
                    return self.run(i + 1, flags);
                }
            }
        }
        for flags in [LETTER, NUMBER, OTHER] {
            if c & flags != 0 {
                return self.run(i, flags);
            }
        }
        self.whitespace(i, true, false)
    }

    /// cl100k: `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
    /// ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`; Llama-3 and Qwen2 drop `\s++$`
    /// (`whole_at_end = false`), Qwen2 takes one digit at a time (`max_digits = 1`).
    #[inline(always)]
    fn cl100k_like(&self, i: usize, whole_at_end: bool, max_digits: usize) -> usize {
        let (c, n) = self.class(i);
        if c & LETTER != 0 {
            return self.run(i, LETTER);
        }
        if self.b[i] == b'\'' {
            let k = self.contraction(i, true);
            if k > 0 {
                return i + k;
            }
        }
        if c & PREFIX != 0 && self.flags_or_end(i + n) & LETTER != 0 {
            return self.run(i + n, LETTER);
        }
        if c & NUMBER != 0 {
            return self.run_at_most(i, NUMBER, max_digits);
        }
        if let Some(end) = self.punctuation(i, c, b"\r\n") {
            return end;
        }
        self.whitespace(i, whole_at_end, true)
    }

    /// o200k: see `O200K_PATTERN`.
    #[inline(always)]
    fn o200k(&self, i: usize) -> usize {
        let (c, n) = self.class(i);
        // Either word alternative needs a letter or mark here or right after a prefix character.
        const WORDISH: u8 = UPPERISH | LOWERISH;
        if c & WORDISH != 0 || (c & PREFIX != 0 && self.flags_or_end(i + n) & WORDISH != 0) {
            if let Some(e) = self.with_prefix(i, c, n, |s| self.o200k_word_lower(s)) {
                return e;
            }
            if let Some(e) = self.with_prefix(i, c, n, |s| self.o200k_word_upper(s)) {
                return e;
            }
        }
        if c & NUMBER != 0 {
            return self.run_at_most(i, NUMBER, 3);
        }
        if let Some(end) = self.punctuation(i, c, b"\r\n/") {
            return end;
        }
        self.whitespace(i, false, true)
    }

    /// ` ?[^\s\p{L}\p{N}]++` then any run of the bytes `tail` (cl100k: `[\r\n]*+`, o200k:
    /// `[\r\n/]*`) at `i`, whose class is `c`: the end, or None when no punctuation starts here.
    #[inline(always)]
    fn punctuation(&self, i: usize, c: u8, tail: &[u8]) -> Option<usize> {
        let start = if self.b[i] == b' ' && self.flags_or_end(i + 1) & OTHER != 0 {
            i + 1
        } else if c & OTHER != 0 {
            i
        } else {
            return None;
        };
        Some(self.run_bytes(self.run(start, OTHER), tail))
    }

    /// `[^\r\n\p{L}\p{N}]?` followed by `word`: the optional prefix is tried taken first, then
    /// (backtracking) not taken, which only matters when the prefix character is itself part of
    /// a word (a combining mark).
    #[inline(always)]
    fn with_prefix(
        &self,
        i: usize,
        c: u8,
        n: usize,
        word: impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        if c & PREFIX != 0 {
            if i + n < self.b.len() {
                if let Some(e) = word(i + n) {
                    return Some(e);
                }
            }
            if c & (UPPERISH | LOWERISH) == 0 {
                return None;
            }
        }
        word(i)
    }

    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?` at `s`, with the
    /// backtracking spelled out: the upper-ish run is taken greedily; if no lower-ish character
    /// follows it, the run gives back characters until one that is also lower-ish (Lm, Lo, M)
    /// can serve as the one-character lower-ish part.
    #[inline(always)]
    fn o200k_word_lower(&self, s: usize) -> Option<usize> {
        let mut j = s;
        let mut after_last_both = None;
        while j < self.b.len() {
            let (c, n) = self.class(j);
            if c & UPPERISH == 0 {
                break;
            }
            if c & LOWERISH != 0 {
                after_last_both = Some(j + n);
            }
            j += n;
        }
        let end = if self.flags_or_end(j) & LOWERISH != 0 {
            self.run(j, LOWERISH)
        } else {
            after_last_both?
        };
        Some(end + self.contraction(end, true))
    }

    /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?` at `s`.
    #[inline(always)]
    fn o200k_word_upper(&self, s: usize) -> Option<usize> {
        let j = self.run(s, UPPERISH);
        if j == s {
            return None;
        }
        let end = self.run(j, LOWERISH);
        Some(end + self.contraction(end, true))
    }
}

#[cfg(test)]
mod tests;
