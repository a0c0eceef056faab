//! The word dictionary of the segmenter: words with frequencies, in jieba's file format, and a
//! double-array trie (tokenmill-core's `utils::darts`) over them that finds every word starting
//! at a text position.
//!
//! Frequencies follow jieba's conventions so that a dictionary means the same in both:
//! - a word's log probability is `ln(freq) - ln(total)`, `total` the sum of the frequencies;
//! - a main dictionary (`from_reader`) adds every line's frequency to `total`, duplicates too;
//! - a user dictionary (`add_word`, `load_user_dictionary`) sets the word's frequency and adds
//!   it to `total` without taking the old frequency out (jieba's `add_word`);
//! - frequency 0 keeps the word out of the word graph (jieba's `del_word`).
use std::io::BufRead;
use std::path::Path;
use tokenmill_core::utils::darts::DoubleArray;

use rustc_hash::{FxHashMap, FxHashSet};

use super::codes::{CharCodes, CodedText};
use tokenmill_core::{Error, Result};

/// One parsed dictionary line: `word [freq] [tag]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryEntry {
    pub word: String,
    pub freq: Option<u64>,
    pub tag: Option<String>,
}

/// Parses a jieba dictionary line (already trimmed, not empty): fields separated by spaces or
/// tabs; the second field is the frequency when it is all digits, else a tag; at most three
/// fields. Words with spaces inside are not supported (jieba's main loader rejects them too).
pub(crate) fn parse_line(line: &str) -> std::result::Result<DictionaryEntry, String> {
    let mut fields = line.split([' ', '\t']).filter(|f| !f.is_empty());
    let word = fields.next().ok_or("empty line")?.to_string();
    let (mut freq, mut tag) = (None, None);
    if let Some(second) = fields.next() {
        if second.bytes().all(|b| b.is_ascii_digit()) {
            freq = Some(
                second.parse::<u64>().map_err(|_| format!("frequency {second:?} is too large"))?,
            );
            tag = fields.next().map(str::to_string);
        } else if second.starts_with(['-', '+']) || second.parse::<f64>().is_ok() {
            return Err(format!("frequency {second:?} is not a non-negative integer"));
        } else {
            tag = Some(second.to_string());
        }
    }
    if let Some(extra) = fields.next() {
        return Err(format!("expected 'word [freq] [tag]', found an extra field {extra:?}"));
    }
    if word.contains('\0') {
        return Err("a word cannot contain a NUL character".into());
    }
    Ok(DictionaryEntry { word, freq, tag })
}

/// `parse_line` for line `number` (1-based) of a file or text: a format error names the line.
pub fn parse_numbered_line(line: &str, number: usize) -> Result<DictionaryEntry> {
    parse_line(line).map_err(|message| Error::Format {
        path: None,
        line: Some(number),
        byte_offset: None,
        message,
    })
}

/// Reads a dictionary file line by line; errors name the file and the line.
pub(crate) fn read_entries(path: &Path) -> Result<Vec<(usize, DictionaryEntry)>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    parse_lines(std::io::BufReader::new(file)).map_err(|e| e.in_file(path))
}

/// Parses dictionary lines from any reader: `(line number, entry)` per non-empty line.
pub(crate) fn parse_lines(reader: impl BufRead) -> Result<Vec<(usize, DictionaryEntry)>> {
    let mut entries = Vec::new();
    for (index, raw) in reader.split(b'\n').enumerate() {
        let number = index + 1;
        let raw = raw.map_err(|e| Error::Other(format!("line {number}: {e}")))?;
        let line = std::str::from_utf8(&raw).map_err(|e| Error::Utf8 {
            path: None,
            line: Some(number),
            byte_offset: e.valid_up_to(),
        })?;
        let line = if number == 1 { line.trim_start_matches('\u{feff}') } else { line };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        entries.push((number, parse_numbered_line(line, number)?));
    }
    Ok(entries)
}

/// Words with frequencies and the trie over the words whose frequency is positive.
#[derive(Clone, Default)]
pub struct Dictionary {
    freqs: FxHashMap<String, u64>,
    total: u64,
    /// Trie value = index into `log_probs`, which holds one log probability per distinct
    /// frequency: a small table that stays in cache, where one entry per word (in key order)
    /// cost a cache miss per word found.
    /// Keys are the words in `codes` (see `codes`), not in UTF-8.
    trie: Option<DoubleArray>,
    codes: CharCodes,
    /// Per character rank (see `StartFilter`): what the trie walk from it may find.
    starts: Vec<StartFilter>,
    log_probs: Vec<f64>,
    log_total: f64,
    /// First characters of the words of two or more characters, and the longest word in bytes:
    /// for `live_prefixes` and `piece_freq`, which work without the trie.
    first_chars: FxHashSet<char>,
    max_word_bytes: usize,
}

/// What the words starting with one character look like, so that most positions of a text
/// are answered without the trie. Why: every trie transition tends to be a cache miss on a
/// large dictionary, and at half the positions of Chinese text no word of two or more
/// characters starts (the next character does not continue any); this table is small enough
/// to stay in cache (32 bytes per character of the words, only for the `FILTERED_RANKS` most
/// common characters).
#[derive(Clone, Copy)]
struct StartFilter {
    /// Bit `second_bit(rank)` is set for the second character of every word of two or more
    /// characters that starts with this one (a Bloom filter of one hash: a set bit only means
    /// "maybe", so the trie is walked).
    seconds: u128,
    /// Index into `log_probs` when the character alone is a word, else `NOT_A_WORD`.
    single: u32,
}

const NOT_A_WORD: u32 = u32::MAX;
const FILTERED_RANKS: usize = 1 << 15;

#[inline]
fn second_bit(rank: u32) -> u32 {
    rank.wrapping_mul(0x9E37_79B9) >> 25
}

impl std::fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dictionary")
            .field("words", &self.freqs.len())
            .field("total", &self.total)
            .finish()
    }
}

impl PartialEq for Dictionary {
    fn eq(&self, other: &Self) -> bool {
        self.freqs == other.freqs && self.total == other.total
    }
}

impl Dictionary {
    /// A main dictionary from `(word, freq)` pairs: later duplicates replace the frequency,
    /// every pair adds to the total (as jieba's `gen_pfdict`).
    #[cfg(test)]
    pub(crate) fn from_pairs(pairs: impl IntoIterator<Item = (String, u64)>) -> Result<Self> {
        let mut dict = Dictionary::default();
        for (word, freq) in pairs {
            dict.set_word(word, freq);
        }
        dict.rebuild()?;
        Ok(dict)
    }

    /// Restores a dictionary with a given total (a saved model).
    pub(crate) fn with_total(freqs: FxHashMap<String, u64>, total: u64) -> Result<Self> {
        let mut dict = Dictionary { total, ..Default::default() };
        for word in freqs.keys() {
            dict.note_shape(word);
        }
        dict.freqs = freqs;
        dict.rebuild()?;
        Ok(dict)
    }

    pub fn len(&self) -> usize {
        self.freqs.values().filter(|&&f| f > 0).count()
    }

    pub fn is_empty(&self) -> bool {
        self.trie.is_none()
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The frequency of a word (0 when absent).
    pub fn freq(&self, word: &str) -> u64 {
        self.freqs.get(word).copied().unwrap_or(0)
    }

    pub fn contains(&self, word: &str) -> bool {
        self.freq(word) > 0
    }

    /// `(word, freq)` for every word, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.freqs.iter().map(|(w, &f)| (w.as_str(), f))
    }

    /// ln(total), the cost jieba gives a character that is no word (its frequency counts as 1).
    #[inline]
    pub(crate) fn log_total(&self) -> f64 {
        self.log_total
    }

    /// Sets a word's frequency and adds it to the total (jieba's `add_word`); call `rebuild`
    /// after a batch of changes.
    pub(crate) fn set_word(&mut self, word: String, freq: u64) {
        self.total = self.total.saturating_add(freq);
        self.note_shape(&word);
        self.freqs.insert(word, freq);
    }

    fn note_shape(&mut self, word: &str) {
        self.max_word_bytes = self.max_word_bytes.max(word.len());
        let mut chars = word.chars();
        if let (Some(first), Some(_)) = (chars.next(), chars.next()) {
            self.first_chars.insert(first);
        }
    }

    /// The frequency jieba's `suggest_freq` uses for a piece of a cut: the word's frequency; for
    /// a character that is no word, 0 if some word starts with it (jieba keeps every word prefix
    /// in its table with frequency 0), else 1.
    pub(crate) fn piece_freq(&self, piece: &str) -> u64 {
        if let Some(&f) = self.freqs.get(piece) {
            return f;
        }
        let mut chars = piece.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if self.first_chars.contains(&c) => 0,
            _ => 1,
        }
    }

    /// As `prefixes`, but from the word table itself, with the current total: right after
    /// `set_word`, without a `rebuild`. Costs one hash lookup per char boundary up to the
    /// longest word, so it is meant for short texts (`Segmenter::suggest_freq`).
    pub(crate) fn live_prefixes(&self, text: &str, mut f: impl FnMut(usize, f64)) {
        let log_total = (self.total.max(1) as f64).ln();
        let limit = text.len().min(self.max_word_bytes);
        for (i, c) in text.char_indices() {
            let end = i + c.len_utf8();
            if end > limit {
                break;
            }
            if let Some(&freq) = self.freqs.get(&text[..end]) {
                if freq > 0 {
                    f(end, (freq as f64).ln() - log_total);
                }
            }
        }
    }

    /// ln(total) as it is now (`log_total` is as of the last `rebuild`).
    pub(crate) fn live_log_total(&self) -> f64 {
        (self.total.max(1) as f64).ln()
    }

    /// Rebuilds the trie and the log probabilities after changes.
    pub(crate) fn rebuild(&mut self) -> Result<()> {
        // jieba: log(freq) - log(total), with total as a float; a total of 0 or 1 gives 0.
        let log_total = (self.total.max(1) as f64).ln();
        let mut sorted: Vec<(&String, &u64)> =
            self.freqs.iter().filter(|(w, &f)| f > 0 && !w.is_empty()).collect();
        if sorted.len() >= (1 << 31) - 1 {
            return Err(Error::InvalidArgument("a dictionary holds at most 2^31 - 1 words".into()));
        }
        sorted.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut distinct: Vec<u64> = sorted.iter().map(|(_, &f)| f).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let codes = CharCodes::new(sorted.iter().map(|(word, _)| word.as_str()));
        let mut keys: Vec<(Vec<u8>, u32)> = sorted
            .iter()
            .map(|(word, freq)| {
                (codes.encode(word), distinct.binary_search(freq).unwrap_or_default() as u32)
            })
            .collect();
        keys.sort_unstable();
        let log_probs: Vec<f64> =
            distinct.iter().map(|&freq| (freq as f64).ln() - log_total).collect();
        // One entry per ranked character (up to FILTERED_RANKS), so that a character that
        // starts no word is answered by the table too.
        let ranked = sorted
            .iter()
            .flat_map(|(word, _)| word.chars())
            .filter_map(|c| codes.rank(c))
            .max()
            .map_or(0, |r| r as usize + 1);
        let mut starts =
            vec![StartFilter { seconds: 0, single: NOT_A_WORD }; ranked.min(FILTERED_RANKS)];
        for (word, freq) in &sorted {
            let mut chars = word.chars().map(|c| codes.rank(c).map_or(usize::MAX, |r| r as usize));
            let (Some(first), second) = (chars.next(), chars.next()) else { continue };
            if first >= FILTERED_RANKS {
                continue;
            }
            match second {
                None => {
                    starts[first].single = distinct.binary_search(freq).unwrap_or_default() as u32
                }
                Some(second) => starts[first].seconds |= 1 << second_bit(second as u32),
            }
        }
        self.trie = if keys.is_empty() {
            None
        } else {
            let keys: Vec<(&[u8], u32)> = keys.iter().map(|(k, v)| (k.as_slice(), *v)).collect();
            Some(DoubleArray::build(&keys)?)
        };
        self.codes = codes;
        self.starts = starts;
        self.log_probs = log_probs;
        self.log_total = log_total;
        Ok(())
    }

    /// Encodes a chunk of text for `words_at`.
    pub(crate) fn encode(&self, chunk: &str, coded: &mut CodedText) {
        coded.encode(&self.codes, chunk);
    }

    /// Calls `f(end, log probability)` for each word that starts at byte `at` of the chunk
    /// that `coded` encodes (`end`: its end in the chunk), shortest first.
    #[inline]
    pub(crate) fn words_at(&self, coded: &CodedText, at: usize, mut f: impl FnMut(usize, f64)) {
        if let Some(trie) = &self.trie {
            let start = coded.coded_at[at] as usize;
            let code = &coded.bytes[start..];
            let (first, first_len) = CharCodes::decode(code);
            let Some(first) = first else { return };
            if let Some(filter) = self.starts.get(first as usize) {
                let continued = match CharCodes::decode(&code[first_len..]).0 {
                    Some(second) => filter.seconds >> second_bit(second) & 1 == 1,
                    None => false,
                };
                if !continued {
                    if filter.single != NOT_A_WORD {
                        f(
                            coded.text_at[start + first_len] as usize,
                            self.log_probs[filter.single as usize],
                        );
                    }
                    return;
                }
            }
            trie.common_prefix_search(code, |index, len| {
                f(coded.text_at[start + len] as usize, self.log_probs[index as usize])
            });
        }
    }

    /// Calls `f(byte length, log probability)` for each word that starts `text`, shortest first.
    #[cfg(test)]
    pub(crate) fn prefixes(&self, text: &str, f: impl FnMut(usize, f64)) {
        let mut coded = CodedText::default();
        self.encode(text, &mut coded);
        self.words_at(&coded, 0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_jieba_lines() {
        assert_eq!(
            parse_line("云计算 5 n").unwrap(),
            DictionaryEntry { word: "云计算".into(), freq: Some(5), tag: Some("n".into()) }
        );
        assert_eq!(parse_line("创新办 3").unwrap().freq, Some(3));
        assert_eq!(parse_line("台中").unwrap().freq, None);
        assert_eq!(parse_line("凱特琳 nz").unwrap().tag.as_deref(), Some("nz"));
        assert!(parse_line("词 -3").is_err());
        assert!(parse_line("词 1.5").is_err());
        assert!(parse_line("词 3 n extra").is_err());
    }

    #[test]
    fn malformed_line_names_the_line() {
        let err = parse_lines("好 3\n\n坏 x y z\n".as_bytes()).unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
        let err = parse_lines(&b"ok 1\n\xff\xfe 2\n"[..]).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn prefixes_equal_a_scan_of_the_word_table() {
        // The start filter and the trie together find exactly the words `live_prefixes`
        // finds by looking every prefix up in the word table.
        let alphabet: Vec<char> = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年"
            .chars()
            .chain(['a', '😀', '\u{AC00}'])
            .collect();
        let mut state = 12345u64;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % n
        };
        let mut pairs = Vec::new();
        for i in 0..3000 {
            let len = 1 + next(4);
            let word: String = (0..len).map(|_| alphabet[next(alphabet.len() - 1)]).collect();
            pairs.push((word, [0, 1, 2, 7, 100][i % 5]));
        }
        let d = Dictionary::from_pairs(pairs).unwrap();
        for _ in 0..2000 {
            let text: String = (0..1 + next(7)).map(|_| alphabet[next(alphabet.len())]).collect();
            let (mut found, mut expected) = (vec![], vec![]);
            d.prefixes(&text, |len, lp| found.push((len, lp)));
            d.live_prefixes(&text, |len, lp| expected.push((len, lp)));
            assert_eq!(found, expected, "{text}");
        }
    }

    #[test]
    fn prefixes_shortest_first() {
        let d = Dictionary::from_pairs([
            ("中".to_string(), 2),
            ("中国".to_string(), 3),
            ("中国人".to_string(), 5),
            ("国".to_string(), 0),
        ])
        .unwrap();
        let mut found = vec![];
        d.prefixes("中国人民", |len, lp| found.push((len, lp)));
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), vec![3, 6, 9]);
        assert_eq!(found[1].1, 3f64.ln() - 10f64.ln());
        assert!(!d.contains("国"));
    }
}
