//! Rule-based word tokenizer: Unicode word boundaries (UAX #29) as the base for any language,
//! then per-language rules (abbreviations, elision and clitics, hyphenation, ordinals) applied to
//! the boundary segments, plus whole-chunk patterns (URLs, e-mail addresses, hashtags).
//!
//! One linear pass: the text is cut at whitespace into chunks; each chunk is cut into UAX #29
//! segments; rules only look a bounded number of segments ahead or consume what they look at, so
//! the work is linear in the input. Every non-whitespace character lands in exactly one token.
use unicode_segmentation::UnicodeSegmentation;

use super::rules::{CompiledRules, LanguageRules};
use tokenmill_core::Result;

/// One word token: byte offsets into the text, and the PTB spelling when it differs from the
/// text (`` and '' for straight double quotes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordToken {
    pub start: usize,
    pub end: usize,
    pub replacement: Option<&'static str>,
}

impl WordToken {
    /// The token's text: its replacement, or the slice of `text` it covers.
    pub fn as_str<'a>(&self, text: &'a str) -> &'a str {
        self.replacement.unwrap_or(&text[self.start..self.end])
    }
}

/// Options beyond the language rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WordTokenizerOptions {
    /// Penn Treebank conventions as NLTK's tokenizers: `` and '' for double quotes,
    /// "cannot" → "can" "not", "gonna" → "gon" "na", ...; implies `split_clitics`.
    pub penn_treebank: bool,
    /// Do not split clitics and elisions ("can't", "l'hôtel" stay whole).
    pub keep_clitics: bool,
}

#[derive(Debug, Clone)]
pub struct WordTokenizer {
    rules: LanguageRules,
    compiled: CompiledRules,
    options: WordTokenizerOptions,
}

/// Whitespace as Python's `str.isspace` sees it (Unicode White_Space plus the ASCII separators
/// U+001C..U+001F), so that "every non-whitespace character is covered" means the same on both
/// sides.
#[inline]
pub(crate) fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

impl WordTokenizer {
    pub fn new(rules: LanguageRules, options: WordTokenizerOptions) -> Result<Self> {
        rules.validate()?;
        let compiled = CompiledRules::new(&rules);
        Ok(WordTokenizer { rules, compiled, options })
    }

    pub fn for_language(language: &str, options: WordTokenizerOptions) -> Self {
        let rules = LanguageRules::for_language(language);
        let compiled = CompiledRules::new(&rules);
        WordTokenizer { rules, compiled, options }
    }

    pub fn rules(&self) -> &LanguageRules {
        &self.rules
    }

    pub fn options(&self) -> WordTokenizerOptions {
        self.options
    }

    /// Tokens with byte offsets.
    pub fn tokenize(&self, text: &str) -> Vec<WordToken> {
        let mut out = Vec::with_capacity(text.len() / 5 + 1);
        self.tokenize_into(text, &mut out);
        out
    }

    pub(crate) fn tokenize_into(&self, text: &str, out: &mut Vec<WordToken>) {
        self.tokenize_range_into(text, 0, text.len(), out);
    }

    /// The tokens of `text[start..end]` appended to `out`, where `start` and `end` are block
    /// boundaries (0, `text.len()`, or positions [`block_end`] returned): tokenizing a text
    /// block by block gives exactly the tokens of [`tokenize`](Self::tokenize), because a
    /// whitespace-free chunk never straddles a block boundary and the rules that look beyond
    /// their chunk (a final period, an opening quote) read them from the whole `text`.
    pub fn tokenize_range_into(
        &self,
        text: &str,
        start: usize,
        end: usize,
        out: &mut Vec<WordToken>,
    ) {
        let bytes = &text.as_bytes()[..end];
        let mut pass = Pass { text, segments: Vec::new(), out };
        let mut i = start;
        while i < bytes.len() {
            // Spaces are skipped up to `end` only: a block of a long run of spaces must not
            // scan the rest of the text (every block would, which is quadratic).
            i = skip_space(&text[..end], i);
            if i >= bytes.len() {
                break;
            }
            let start = i;
            let mut ascii = true;
            while i < bytes.len() {
                let b = bytes[i];
                if b < 0x80 {
                    if is_space(b as char) {
                        break;
                    }
                    i += 1;
                } else {
                    let c = next_char(text, i);
                    if is_space(c) {
                        break;
                    }
                    ascii = false;
                    i += c.len_utf8();
                }
            }
            self.tokenize_chunk(&mut pass, start, i, ascii);
        }
    }

    /// A whitespace-free chunk `text[start..end]`.
    fn tokenize_chunk(&self, pass: &mut Pass<'_, '_>, start: usize, end: usize, ascii: bool) {
        let chunk = &pass.text[start..end];
        if let Some((core_start, core_end)) = special_core(chunk) {
            if core_start > 0 {
                self.tokenize_segments(pass, start, start + core_start, ascii);
            }
            pass.out.push(WordToken {
                start: start + core_start,
                end: start + core_end,
                replacement: None,
            });
            if core_end < chunk.len() {
                self.tokenize_segments(pass, start + core_end, end, ascii);
            }
            return;
        }
        self.tokenize_segments(pass, start, end, ascii);
    }

    fn tokenize_segments(&self, pass: &mut Pass<'_, '_>, start: usize, end: usize, ascii: bool) {
        let Pass { text, segments: segs, out } = pass;
        let text: &str = text;
        segs.clear();
        if ascii {
            ascii_word_bounds(text.as_bytes(), start, end, segs);
        } else {
            // Runs of Han / Kana come out one UAX #29 segment per ideograph here; a dictionary
            // segmenter for Chinese and Japanese is meant to re-cut exactly these segments.
            segs.extend(
                text[start..end]
                    .split_word_bound_indices()
                    .map(|(i, s)| (start + i, start + i + s.len())),
            );
        }
        let mut k = 0;
        while k < segs.len() {
            k = self.emit_from(Segments { text, spans: segs, end }, k, out);
        }
    }

    /// Emits the token(s) starting at segment `k`; returns the next unconsumed segment index.
    fn emit_from(&self, chunk: Segments<'_>, k: usize, out: &mut Vec<WordToken>) -> usize {
        let Segments { text, spans: segs, end: chunk_end } = chunk;
        let seg = |j: usize| &text[segs[j].0..segs[j].1];
        let (s, e) = segs[k];
        let first = seg(k);
        let c0 = first.chars().next().unwrap_or(' ');
        if is_wordlike(c0) {
            if let Some(next) = self.match_number_pattern(text, segs, k) {
                out.push(WordToken { start: s, end: segs[next - 1].1, replacement: None });
                return next;
            }
            return self.emit_word_group(chunk, k, out);
        }
        if let Some(next) = emoticon_end(text, segs, k, chunk_end) {
            out.push(WordToken { start: s, end: segs[next - 1].1, replacement: None });
            return next;
        }
        // Punctuation and symbols: merge runs that form one mark ("...", "--", "''", "?!").
        if let Some(run_char) = self.run_mergeable(c0, first) {
            let continues_run = |next: &str| {
                next.len() == run_char.len_utf8() && next.starts_with(run_char)
                    || matches!(run_char, '!' | '?' | '.')
                        && matches!(next, "!" | "?")
                        && self.compiled.merge_punct_runs
                        && !self.options.penn_treebank
            };
            let mut j = k + 1;
            while j < segs.len() && continues_run(seg(j)) {
                j += 1;
            }
            if self.options.penn_treebank && run_char == '-' && j - k > 2 {
                // NLTK cuts a dash run into "--" pairs.
                let mut m = k;
                while m < j {
                    let pair_end = (m + 2).min(j);
                    out.push(WordToken {
                        start: segs[m].0,
                        end: segs[pair_end - 1].1,
                        replacement: None,
                    });
                    m = pair_end;
                }
                return j;
            }
            let end = segs[j - 1].1;
            let replacement =
                if self.options.penn_treebank { ptb_quote(text, s, &text[s..end]) } else { None };
            out.push(WordToken { start: s, end, replacement });
            return j;
        }
        let replacement = if self.options.penn_treebank { ptb_quote(text, s, first) } else { None };
        out.push(WordToken { start: s, end: e, replacement });
        k + 1
    }

    /// Times (10:30, 10:30:15) and dates (22/11/2026, 2026-11-22) that UAX #29 cuts apart.
    fn match_number_pattern(&self, text: &str, segs: &[(usize, usize)], k: usize) -> Option<usize> {
        let seg = |j: usize| segs.get(j).map(|&(a, b)| &text[a..b]);
        let digits = |s: Option<&str>, min: usize, max: usize| {
            s.is_some_and(|s| {
                s.len() >= min && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit())
            })
        };
        if digits(seg(k), 1, 2) && seg(k + 1) == Some(":") && digits(seg(k + 2), 2, 2) {
            if seg(k + 3) == Some(":") && digits(seg(k + 4), 2, 2) {
                return Some(k + 5);
            }
            return Some(k + 3);
        }
        for sep in ["/", "-"] {
            if digits(seg(k), 1, 4)
                && seg(k + 1) == Some(sep)
                && digits(seg(k + 2), 1, 2)
                && seg(k + 3) == Some(sep)
                && digits(seg(k + 4), 1, 4)
            {
                return Some(k + 5);
            }
        }
        None
    }

    /// A word segment, possibly followed by "-word" parts and a period.
    fn emit_word_group(&self, chunk: Segments<'_>, k: usize, out: &mut Vec<WordToken>) -> usize {
        let Segments { text, spans: segs, end: chunk_end } = chunk;
        let seg = |j: usize| &text[segs[j].0..segs[j].1];
        // Hyphen chain: word (-word)*
        let mut j = k + 1;
        while j + 1 < segs.len()
            && is_hyphen(seg(j))
            && is_wordlike(seg(j + 1).chars().next().unwrap_or(' '))
        {
            j += 2;
        }
        let (s, mut e) = (segs[k].0, segs[j - 1].1);
        if j > k + 1 {
            let compound = &text[s..e];
            let lower = compound.to_lowercase();
            let numeric = compound.bytes().all(|b| b.is_ascii_digit() || b == b'-');
            let number_range = numeric && j == k + 3 && self.compiled.split_number_ranges;
            let listed = self.compiled.hyphenated_words.contains(&lower);
            let prefixed =
                self.compiled.hyphen_prefixes.contains(lower.split('-').next().unwrap_or(""));
            let coded = self.compiled.keep_coded_compounds && is_coded_compound(compound);
            let keep = self.compiled.keep_hyphenated
                || self.options.penn_treebank
                || numeric
                || listed
                || prefixed
                || coded;
            if keep && !number_range {
                if let Some(split) = self.hyphen_suffix_split(compound).filter(|_| !listed) {
                    out.push(WordToken { start: s, end: s + split, replacement: None });
                    out.push(WordToken { start: s + split, end: e, replacement: None });
                } else {
                    out.push(WordToken { start: s, end: e, replacement: None });
                }
                return j;
            }
            // Split compound: each word goes through the single-word rules, hyphens alone.
            for (m, &(start, end)) in segs.iter().enumerate().take(j).skip(k) {
                if m % 2 == k % 2 {
                    self.emit_single_word(text, start, end, out);
                } else {
                    out.push(WordToken { start, end, replacement: None });
                }
            }
            return j;
        }
        // Truncated compound "Staats-" (German "Staats- und Regierungschefs").
        if self.compiled.keep_hyphenated
            && j < segs.len()
            && is_hyphen(seg(j))
            && j + 1 == segs.len()
            && j > 0
            && seg(k).chars().all(char::is_alphabetic)
        {
            out.push(WordToken { start: s, end: segs[j].1, replacement: None });
            return j + 1;
        }
        // Word + "." → abbreviation, initial, dotted acronym or ordinal.
        if self.compiled.attach_abbreviation_period
            && j < segs.len()
            && seg(j) == "."
            && !(j + 1 < segs.len() && seg(j + 1) == ".")
        {
            let word = seg(k);
            if self.period_belongs_to(text, word, segs[j].1, chunk_end, j + 1 == segs.len()) {
                e = segs[j].1;
                out.push(WordToken { start: s, end: e, replacement: None });
                return j + 1;
            }
        }
        self.emit_single_word(text, s, e, out);
        j
    }

    fn period_belongs_to(
        &self,
        text: &str,
        word: &str,
        after_period: usize,
        chunk_end: usize,
        period_ends_chunk: bool,
    ) -> bool {
        if self.options.penn_treebank
            && period_ends_chunk
            && skip_space(text, chunk_end) == text.len()
        {
            return false; // NLTK's Treebank rule: the text's final period always stands alone
        }
        let mut chars = word.chars();
        let first = chars.next().unwrap_or(' ');
        let single = chars.next().is_none();
        if single && first.is_alphabetic() && first.is_uppercase() {
            return true; // an initial: "J. R. R. Tolkien"
        }
        if word.contains('.') && word.chars().all(|c| c == '.' || c.is_alphabetic()) {
            return true; // U.K., e.g., w.r.o.n.g.
        }
        if self.compiled.is_abbreviation(word) {
            return true;
        }
        if self.compiled.ordinal_period
            && period_ends_chunk
            && word.len() <= 3
            && word.bytes().all(|b| b.is_ascii_digit())
        {
            debug_assert_eq!(after_period, chunk_end);
            let next = skip_space(text, chunk_end);
            if next < text.len() {
                let c = next_char(text, next);
                let value: u32 = word.parse().unwrap_or(u32::MAX);
                return c.is_lowercase() || c.is_ascii_digit() || (c.is_uppercase() && value <= 31);
            }
        }
        false
    }

    /// Splits a hyphenated enclitic off a compound ("a-t-il" → "a" "-t-il"); byte split point.
    fn hyphen_suffix_split(&self, compound: &str) -> Option<usize> {
        if self.options.keep_clitics {
            return None;
        }
        self.compiled
            .hyphen_suffixes
            .iter()
            .find_map(|suffix| ends_with_ignore_case(compound, suffix).filter(|&p| p > 0))
    }

    /// One UAX #29 word segment: clitic / elision splits and PTB contractions.
    fn emit_single_word(&self, text: &str, s: usize, e: usize, out: &mut Vec<WordToken>) {
        let word = &text[s..e];
        let split_clitics = !self.options.keep_clitics || self.options.penn_treebank;
        if self.options.penn_treebank && word.contains('\u{2019}') {
            // NLTK's tokenizers take U+2019 for a closing quote and cut it out of the word.
            let mut start = s;
            for (i, _) in word.match_indices('\u{2019}') {
                if s + i > start {
                    self.emit_single_word(text, start, s + i, out);
                }
                out.push(WordToken { start: s + i, end: s + i + 3, replacement: None });
                start = s + i + 3;
            }
            if start < e {
                self.emit_single_word(text, start, e, out);
            }
            return;
        }
        if split_clitics && word.bytes().any(|b| b == b'\'' || b == 0xE2) && has_apostrophe(word) {
            self.emit_apostrophe_word(text, s, e, out);
            return;
        }
        if !self.compiled.agglutination.is_empty() && split_clitics {
            let lower: Vec<char> = word.chars().flat_map(char::to_lowercase).collect();
            if lower.len() == word.chars().count() {
                let parts = self.compiled.agglutination_parts(&lower);
                if parts.len() > 1 {
                    let mut chars =
                        word.char_indices().map(|(i, _)| s + i).chain(std::iter::once(e));
                    let mut start = chars.next().unwrap_or(e);
                    for (n, len) in parts.iter().enumerate() {
                        let end =
                            if n + 1 == parts.len() { e } else { chars.nth(len - 1).unwrap_or(e) };
                        out.push(WordToken { start, end, replacement: None });
                        start = end;
                    }
                    return;
                }
            }
        }
        if self.options.penn_treebank && self.rules.language == "en" {
            if let Some(parts) = ptb_contraction(word) {
                let mut pos = s;
                for len in parts {
                    out.push(WordToken { start: pos, end: pos + len, replacement: None });
                    pos += len;
                }
                if pos < e {
                    out.push(WordToken { start: pos, end: e, replacement: None });
                }
                return;
            }
        }
        out.push(WordToken { start: s, end: e, replacement: None });
    }

    fn emit_apostrophe_word(&self, text: &str, mut s: usize, e: usize, out: &mut Vec<WordToken>) {
        let word = &text[s..e];
        if self
            .compiled
            .apostrophe_words
            .contains(&super::rules::normalize_apostrophes(&word.to_lowercase()))
        {
            out.push(WordToken { start: s, end: e, replacement: None });
            return;
        }
        // Elisions, left to right: "qu'l'..." → "qu'" "l'" ...
        while let Some((apos, apos_len)) = find_apostrophe(&text[s..e]) {
            let prefix = &text[s..s + apos];
            if apos == 0 || !self.compiled.elisions.contains(&prefix.to_lowercase()) {
                break;
            }
            out.push(WordToken { start: s, end: s + apos + apos_len, replacement: None });
            s += apos + apos_len;
        }
        if s >= e {
            return;
        }
        let rest = &text[s..e];
        for suffix in &self.compiled.clitic_suffixes {
            if let Some(p) = ends_with_ignore_case(rest, suffix) {
                if p > 0 {
                    out.push(WordToken { start: s, end: s + p, replacement: None });
                    out.push(WordToken { start: s + p, end: e, replacement: None });
                    return;
                }
            }
        }
        out.push(WordToken { start: s, end: e, replacement: None });
    }
}

/// The end of a block of `text` that starts at `start` and holds at least `min_len` bytes: the
/// first ASCII space or newline from there on, or the end of the text. Tokenizing blocks cut
/// there one after the other (see [`WordTokenizer::tokenize_range_into`]) keeps the token list
/// of a long text out of one huge vector.
pub fn block_end(text: &str, start: usize, min_len: usize) -> usize {
    let from = start.saturating_add(min_len);
    if from >= text.len() {
        return text.len();
    }
    // ASCII bytes never occur inside a multi-byte UTF-8 sequence, so `from + p` is a char boundary.
    memchr::memchr2(b' ', b'\n', &text.as_bytes()[from..]).map_or(text.len(), |p| from + p)
}

/// Converts increasing byte offsets of one text into char offsets in a single forward pass.
pub struct CharOffsets<'a> {
    bytes: &'a [u8],
    ascii: bool,
    byte_pos: usize,
    char_pos: usize,
}

impl<'a> CharOffsets<'a> {
    pub fn new(text: &'a str) -> Self {
        CharOffsets { bytes: text.as_bytes(), ascii: text.is_ascii(), byte_pos: 0, char_pos: 0 }
    }

    /// Char offset of `byte`; offsets must not decrease between calls (else it restarts at 0).
    pub fn at(&mut self, byte: usize) -> usize {
        if self.ascii {
            return byte;
        }
        if byte < self.byte_pos {
            self.byte_pos = 0;
            self.char_pos = 0;
        }
        let end = byte.min(self.bytes.len());
        self.char_pos +=
            self.bytes[self.byte_pos..end].iter().filter(|&&b| (b as i8) >= -0x40).count();
        self.byte_pos = end;
        self.char_pos
    }

    pub fn span(&mut self, start: usize, end: usize) -> (usize, usize) {
        let s = self.at(start);
        (s, self.at(end))
    }
}

#[inline]
fn next_char(text: &str, i: usize) -> char {
    text[i..].chars().next().unwrap_or(' ')
}

fn skip_space(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if !is_space(b as char) {
                break;
            }
            i += 1;
        } else {
            let c = next_char(text, i);
            if !is_space(c) {
                break;
            }
            i += c.len_utf8();
        }
    }
    i
}

/// Letters, digits, marks and connector punctuation start word segments.
#[inline]
fn is_wordlike(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[inline]
fn is_hyphen(s: &str) -> bool {
    matches!(s, "-" | "\u{2010}" | "\u{2011}")
}

/// A hyphenated word with a digit in it ("28-letni", "F-16", "4,5-metrowej") or whose first
/// part is an acronym, two capitals or more ("PiS-owi", "PPE-DE").
fn is_coded_compound(compound: &str) -> bool {
    let first = compound.split(['-', '\u{2010}', '\u{2011}']).next().unwrap_or("");
    compound.bytes().any(|b| b.is_ascii_digit())
        || first.chars().filter(|c| c.is_uppercase()).count() >= 2
}

fn has_apostrophe(word: &str) -> bool {
    find_apostrophe(word).is_some()
}

/// Byte position and length of the first apostrophe (' or ’).
fn find_apostrophe(word: &str) -> Option<(usize, usize)> {
    word.char_indices().find(|&(_, c)| c == '\'' || c == '\u{2019}').map(|(i, c)| (i, c.len_utf8()))
}

/// If `word` ends with `suffix` (lowercase, ASCII apostrophe) ignoring case and apostrophe
/// style, the byte position where the suffix starts.
fn ends_with_ignore_case(word: &str, suffix: &str) -> Option<usize> {
    let mut w = word.char_indices().rev();
    let mut pos = word.len();
    for sc in suffix.chars().rev() {
        let (i, c) = w.next()?;
        let c = if c == '\u{2019}' { '\'' } else { c };
        let matches = c == sc || (c.is_uppercase() && c.to_lowercase().eq(std::iter::once(sc)));
        if !matches {
            return None;
        }
        pos = i;
    }
    Some(pos)
}

/// Emoticons kept whole (":-)", "^^"), when they end the chunk; longest first.
const EMOTICONS: &[&str] = &[
    ":-)", ":-(", ";-)", ":-D", ":-P", ":-/", ":'(", "^_^", ":)", ":(", ";)", ":D", ":P", ":p",
    ":/", "(:", "):", "^^", "<3", "=)", ":]", ":[", ":O", ":o",
];

/// One tokenize call's working state: the text, the UAX #29 segments of the chunk at hand (one
/// list reused from chunk to chunk) and the tokens produced so far.
struct Pass<'t, 'o> {
    text: &'t str,
    segments: Vec<(usize, usize)>,
    out: &'o mut Vec<WordToken>,
}

/// Index after the segments forming an emoticon at segment `k`, if one ends the chunk there.
/// The word-bound segments of one chunk of `text`: byte spans, in order, all before `end`.
#[derive(Clone, Copy)]
struct Segments<'a> {
    text: &'a str,
    spans: &'a [(usize, usize)],
    end: usize,
}

fn emoticon_end(text: &str, segs: &[(usize, usize)], k: usize, chunk_end: usize) -> Option<usize> {
    let s = segs[k].0;
    let rest = &text[s..chunk_end];
    if rest.len() > 3 || rest.len() < 2 {
        return None;
    }
    EMOTICONS.contains(&rest).then_some(segs.len())
}

impl WordTokenizer {
    /// Characters whose repeats form one token; `None` for marks that stand alone.
    fn run_mergeable(&self, c: char, seg: &str) -> Option<char> {
        if seg.len() != c.len_utf8() {
            return None;
        }
        match c {
            '.' if self.compiled.merge_ellipsis => Some(c),
            '-' | '\'' | '`' | '*' | '=' | '_' | '~' => Some(c),
            '!' | '?' if self.compiled.merge_punct_runs && !self.options.penn_treebank => Some(c),
            _ => None,
        }
    }
}

/// PTB spelling of straight double quotes: `` when opening, '' when closing (NLTK's rule:
/// opening at the start of the text or after whitespace or an opening bracket).
fn ptb_quote(text: &str, start: usize, tok: &str) -> Option<&'static str> {
    if tok != "\"" {
        return None;
    }
    let prev = text[..start].chars().next_back();
    match prev {
        None => Some("``"),
        Some(c) if is_space(c) || matches!(c, '(' | '[' | '{' | '<') => Some("``"),
        _ => Some("''"),
    }
}

/// NLTK's Treebank contractions ("cannot" → "can" "not"): byte lengths of the leading parts.
fn ptb_contraction(word: &str) -> Option<&'static [usize]> {
    if word.len() > 8 || !word.is_ascii() {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    Some(match lower.as_str() {
        "cannot" => &[3],
        "gimme" => &[3],
        "gonna" => &[3],
        "gotta" => &[3],
        "lemme" => &[3],
        "wanna" => &[3],
        "whaddya" => &[3, 2],
        "whatcha" => &[3, 1],
        _ => return None,
    })
}

/// URLs, e-mail addresses, hashtags and @mentions, with surrounding punctuation stripped:
/// the byte range of the core within `chunk`, or `None`.
fn special_core(chunk: &str) -> Option<(usize, usize)> {
    let b = chunk.as_bytes();
    if memchr::memchr3(b'@', b'#', b':', b).is_none()
        && !(b.len() > 4 && b[..4].eq_ignore_ascii_case(b"www."))
    {
        // "www." can also follow an opening bracket: checked below only when cheap.
        if !(b.len() > 5 && b[1..].len() > 4 && b[1..5].eq_ignore_ascii_case(b"www.")) {
            return None;
        }
    }
    const OPEN: &[char] = &[
        '(', '[', '{', '<', '"', '\'', '\u{201c}', '\u{2018}', '\u{ab}', '\u{201e}', '\u{201a}',
        '\u{bf}', '\u{a1}',
    ];
    const CLOSE: &[char] = &[
        '.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '"', '\'', '\u{201d}', '\u{2019}',
        '\u{bb}', '\u{2026}',
    ];
    let trimmed_start = chunk.trim_start_matches(OPEN);
    let start = chunk.len() - trimmed_start.len();
    let core = trimmed_start.trim_end_matches(CLOSE);
    let end = start + core.len();
    if core.is_empty() {
        return None;
    }
    let is_special = is_url(core) || is_email(core) || is_tag(core);
    is_special.then_some((start, end))
}

fn is_url(core: &str) -> bool {
    let lower_prefix = |p: &str| {
        core.len() > p.len() && core.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
    };
    if lower_prefix("www.") {
        return core[4..].contains('.') || core.len() > 6;
    }
    match core.find("://") {
        Some(i) => {
            i > 0 && core[..i].bytes().all(|b| b.is_ascii_alphabetic()) && core.len() > i + 3
        }
        None => false,
    }
}

fn is_email(core: &str) -> bool {
    let Some(at) = core.find('@') else { return false };
    let (local, domain) = (&core[..at], &core[at + 1..]);
    !local.is_empty()
        && local.chars().all(|c| c.is_alphanumeric() || "._%+-".contains(c))
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.chars().all(|c| c.is_alphanumeric() || c == '.' || c == '-')
}

fn is_tag(core: &str) -> bool {
    let rest = match core.strip_prefix('#').or_else(|| core.strip_prefix('@')) {
        Some(r) => r,
        None => return false,
    };
    !rest.is_empty()
        && rest.chars().all(|c| c.is_alphanumeric() || c == '_')
        && rest.chars().any(char::is_alphabetic)
}

/// UAX #29 word boundaries for an all-ASCII, whitespace-free chunk `bytes[start..end]`.
///
/// Hand-written because ASCII text is the common case and the full Unicode state machine of
/// `unicode-segmentation` costs several times more per byte there; restricted to ASCII the rules
/// are few: letters, digits and "_" join (WB5, WB8–WB10, WB13a/b); ":" "." "'" join two letters
/// (WB6/7); "," ";" "." "'" join two digits (WB11/12); every other character stands alone.
/// A unit test checks it against `unicode-segmentation` on random ASCII strings.
pub(crate) fn ascii_word_bounds(
    bytes: &[u8],
    start: usize,
    end: usize,
    out: &mut Vec<(usize, usize)>,
) {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Class {
        Letter,
        Digit,
        Under,
        Other,
    }
    let class = |b: u8| {
        if b.is_ascii_alphabetic() {
            Class::Letter
        } else if b.is_ascii_digit() {
            Class::Digit
        } else if b == b'_' {
            Class::Under
        } else {
            Class::Other
        }
    };
    let mut i = start;
    while i < end {
        let c = class(bytes[i]);
        if c == Class::Other {
            out.push((i, i + 1));
            i += 1;
            continue;
        }
        let seg_start = i;
        let mut prev = c;
        i += 1;
        while i < end {
            let cur = class(bytes[i]);
            if cur != Class::Other {
                prev = cur;
                i += 1;
                continue;
            }
            // A middle punctuation mark joins only between two letters or two digits.
            if i + 1 < end {
                let next = class(bytes[i + 1]);
                let mid = bytes[i];
                let letters = prev == Class::Letter
                    && next == Class::Letter
                    && matches!(mid, b':' | b'.' | b'\'');
                let digits = prev == Class::Digit
                    && next == Class::Digit
                    && matches!(mid, b',' | b';' | b'.' | b'\'');
                if letters || digits {
                    prev = next;
                    i += 2;
                    continue;
                }
            }
            break;
        }
        out.push((seg_start, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(lang: &str, text: &str) -> Vec<String> {
        let t = WordTokenizer::for_language(lang, WordTokenizerOptions::default());
        t.tokenize(text).iter().map(|w| w.as_str(text).to_string()).collect()
    }

    fn ptb(text: &str) -> Vec<String> {
        let t = WordTokenizer::for_language(
            "en",
            WordTokenizerOptions { penn_treebank: true, keep_clitics: false },
        );
        t.tokenize(text).iter().map(|w| w.as_str(text).to_string()).collect()
    }

    #[test]
    fn ascii_bounds_match_unicode_segmentation() {
        use rand::{Rng, SeedableRng};
        let alphabet = b"ab9_.,;:'-!\"$%()/@#";
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20000 {
            let len = rng.gen_range(1..12);
            let s: String =
                (0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char).collect();
            let mut ours = Vec::new();
            ascii_word_bounds(s.as_bytes(), 0, s.len(), &mut ours);
            let theirs: Vec<(usize, usize)> =
                s.split_word_bound_indices().map(|(i, w)| (i, i + w.len())).collect();
            assert_eq!(ours, theirs, "{s:?}");
        }
    }

    #[test]
    fn english_rules() {
        assert_eq!(
            toks("en", "Dr. Watson's parents' car can't go to the U.K. e.g. now."),
            [
                "Dr.", "Watson", "'s", "parents", "'", "car", "ca", "n't", "go", "to", "the",
                "U.K.", "e.g.", "now", "."
            ]
        );
        assert_eq!(
            toks("en", "It costs $1.4 or 10% at 10:30 on 11/22/2026..."),
            ["It", "costs", "$", "1.4", "or", "10", "%", "at", "10:30", "on", "11/22/2026", "..."]
        );
        assert_eq!(
            toks("en", "w.r.o.n.g. well-known e-mail"),
            ["w.r.o.n.g.", "well", "-", "known", "e-mail"]
        );
        assert_eq!(
            toks("en", "Mail me@x.org, see https://x.org/a?b=1. #tag @joe"),
            ["Mail", "me@x.org", ",", "see", "https://x.org/a?b=1", ".", "#tag", "@joe"]
        );
    }

    #[test]
    fn ptb_mode() {
        assert_eq!(
            ptb("\"I cannot,\" she said"),
            ["``", "I", "can", "not", ",", "''", "she", "said"]
        );
    }

    #[test]
    fn french_and_german() {
        assert_eq!(
            toks("fr", "l'hôtel d'Artagnan jusqu'à aujourd'hui a-t-il « oui »"),
            [
                "l'",
                "hôtel",
                "d'",
                "Artagnan",
                "jusqu'",
                "à",
                "aujourd'hui",
                "a",
                "-t-il",
                "«",
                "oui",
                "»"
            ]
        );
        assert_eq!(
            toks("de", "Am 3. Oktober z.B. „Staats- und US-Präsident“"),
            ["Am", "3.", "Oktober", "z.B.", "„", "Staats", "-", "und", "US", "-", "Präsident", "“"]
        );
        assert_eq!(
            toks("pl", "Chciałbym, żebyś przyszła. Byliśmy w ul. Długiej..."),
            [
                "Chciał",
                "by",
                "m",
                ",",
                "żeby",
                "ś",
                "przyszła",
                ".",
                "Byli",
                "śmy",
                "w",
                "ul",
                ".",
                "Długiej",
                ".",
                ".",
                "."
            ]
        );
        assert_eq!(
            toks("pl", "Poczułem, że weszłam z kanałem i pomysłem"),
            ["Poczuł", "em", ",", "że", "weszła", "m", "z", "kanałem", "i", "pomysłem"]
        );
        assert_eq!(
            toks("pl", "28-letni PiS-owi biało-czarny 1990-1993 642-65-85"),
            ["28-letni", "PiS-owi", "biało", "-", "czarny", "1990", "-", "1993", "642-65-85"]
        );
    }

    #[test]
    fn emoji_sequences_stay_whole() {
        let family = "👨\u{200d}👩\u{200d}👧";
        let text = format!("hi {family}👍🏽🇵🇱!");
        assert_eq!(toks("en", &text), ["hi", family, "👍🏽", "🇵🇱", "!"]);
    }

    #[test]
    fn covers_every_non_space_char_once() {
        let t = WordTokenizer::for_language("en", WordTokenizerOptions::default());
        for text in [
            "a\u{0}b\u{7}c",
            "x'''y--z...",
            "\u{301}abc",
            "\u{200d}\u{200d}",
            "..'..'",
            "-a-b-",
            "ab\u{1c}cd",
        ] {
            let tokens = t.tokenize(text);
            let mut pos = 0;
            for tok in &tokens {
                assert!(text[pos..tok.start].chars().all(is_space), "{text:?}");
                assert!(tok.end > tok.start);
                pos = tok.end;
            }
            assert!(text[pos..].chars().all(is_space));
        }
    }
}
