//! Chinese and Japanese word segmentation: a dictionary with frequencies, the maximum-probability
//! path through the graph of dictionary words, and a character-level HMM for words the
//! dictionary does not know (the method of jieba, whose dictionary format it reads).
//!
//! For each whitespace-free chunk of text:
//! 1. `atoms` cuts it into atoms: one per Han/kana character; rule-based ones for numbers
//!    (ASCII and fullwidth, with decimal points, separators and percent), Latin words,
//!    runs of dashes or ellipses, and single symbols.
//! 2. The word graph: from each atom, an edge for every dictionary word that starts there and
//!    ends at an atom boundary (found with a double-array trie, so the work per atom is bounded
//!    by the longest word). A Han/kana atom from which no word starts gets a one-atom edge;
//!    other atoms always do. Rule edges: a number with a following character that the
//!    dictionary's words show as a number suffix (１９９８年, ２０５．１万); with `numbers`, a
//!    run of Chinese numerals (二○○一, and 二○○一年 when the dictionary has words like
//!    一九八三年); in Japanese, a run of one character type: katakana always, kanji or
//!    hiragana where no dictionary word starts.
//! 3. The best path by dynamic programming from right to left, as jieba's `calc`: a dictionary
//!    word scores `ln(freq) - ln(total)`, any other edge `-ln(total)` (frequency 1); a path
//!    scores the sum. **Ties**: among edges of equal score the one that ends furthest right wins
//!    (jieba's `max` over `(score, end)` tuples), so on the same dictionary the result equals
//!    jieba's `cut(HMM=False)` on runs of Han characters.
//! 4. With `hmm`, runs of consecutive one-character words on the path (Han/kana) are re-cut by
//!    the BMES HMM, unless the run itself is a dictionary word (jieba's `__cut_DAG`); an HMM
//!    learned from word lists alone only re-cuts runs with a character that is no word.
//!
//! Offsets are byte offsets into the text (the bindings turn them into character offsets).
//! Work and memory are linear in the text length (times the longest word for the trie walks).
//!
//! May import `tokenizer` (`WordToken`, `is_space`) from this crate and `Error`/`Result` from
//! tokenmill-core; nothing from the subword pipeline. The bindings see what `lib.rs` re-exports.
mod atoms;
mod codes;
pub(crate) mod dictionary;
mod hmm;

use std::collections::BTreeMap;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use self::atoms::{Atom, AtomKind};
use self::codes::CodedText;
pub use self::dictionary::{Dictionary, DictionaryEntry};
pub use self::hmm::Hmm;
pub(crate) use self::hmm::HmmCounts;
use super::tokenizer::{is_space, WordToken};
use tokenmill_core::{Error, Result};

/// Which language's unknown-word model and defaults to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SegmenterLanguage {
    #[serde(rename = "zh")]
    Chinese,
    #[serde(rename = "ja")]
    Japanese,
}

impl SegmenterLanguage {
    pub fn from_code(code: &str) -> Result<Self> {
        match code.to_ascii_lowercase().as_str() {
            "zh" | "zh-hans" | "zh-hant" | "zh-cn" | "zh-tw" | "chinese" => {
                Ok(SegmenterLanguage::Chinese)
            }
            "ja" | "jp" | "japanese" => Ok(SegmenterLanguage::Japanese),
            other => Err(Error::InvalidArgument(format!(
                "segmenter language must be 'zh' or 'ja', not {other:?}"
            ))),
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            SegmenterLanguage::Chinese => "zh",
            SegmenterLanguage::Japanese => "ja",
        }
    }
}

/// Switches of the segmenter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmenterOptions {
    /// Re-cut runs of one-character words with the HMM (when the segmenter has one).
    pub hmm: bool,
    /// Rule edges for numbers: number + suffix (as the dictionary shows) and Chinese numerals.
    pub numbers: bool,
}

impl Default for SegmenterOptions {
    fn default() -> Self {
        SegmenterOptions { hmm: true, numbers: true }
    }
}

/// Number patterns learned from the dictionary's words (so that they follow its conventions).
#[derive(Debug, Clone, Default, PartialEq)]
struct NumberRules {
    /// Characters that follow digits in at least two words (年 in １９２０年, 万 in ２０５．１万).
    digit_suffixes: FxHashSet<char>,
    /// Characters that follow runs of two or more Chinese numerals in at least three words
    /// (年 in 一九八三年, 日 in 二十五日).
    numeral_suffixes: FxHashSet<char>,
    /// The dictionary has at least three words made only of two or more Chinese numerals.
    numeral_words: bool,
}

fn is_chinese_numeral(c: char) -> bool {
    matches!(
        c,
        '〇' | '○'
            | '零'
            | '一'
            | '二'
            | '三'
            | '四'
            | '五'
            | '六'
            | '七'
            | '八'
            | '九'
            | '十'
            | '百'
            | '千'
            | '万'
            | '亿'
    )
}

fn is_digit_like(c: char) -> bool {
    c.is_ascii_digit() || ('０'..='９').contains(&c) || matches!(c, '.' | '．' | '·' | ',')
}

/// An atom that is one Chinese numeral (一, 二, 〇, 万, ...).
fn is_numeral_atom(atom: Atom) -> bool {
    atom.kind == AtomKind::Han
        && atom.end - atom.start == atom.first.len_utf8()
        && is_chinese_numeral(atom.first)
}

/// An atom that is one Han character of `suffixes`.
fn is_suffix(atom: Atom, suffixes: &FxHashSet<char>) -> bool {
    atom.kind == AtomKind::Han
        && atom.end - atom.start == atom.first.len_utf8()
        && suffixes.contains(&atom.first)
}

impl NumberRules {
    fn learn(dict: &Dictionary) -> Self {
        let mut digit_counts: FxHashMap<char, usize> = FxHashMap::default();
        let mut numeral_counts: FxHashMap<char, usize> = FxHashMap::default();
        let mut numeral_words = 0;
        for (word, freq) in dict.iter() {
            if freq == 0 {
                continue;
            }
            let chars: Vec<char> = word.chars().collect();
            if chars.len() < 2 {
                continue;
            }
            if chars.iter().all(|&c| is_chinese_numeral(c)) {
                numeral_words += 1;
                continue;
            }
            let (last, head) = (chars[chars.len() - 1], &chars[..chars.len() - 1]);
            if !atoms::is_han(last) || is_chinese_numeral(last) {
                continue;
            }
            if head[0].is_ascii_digit() || ('０'..='９').contains(&head[0]) {
                if head.iter().all(|&c| is_digit_like(c)) {
                    *digit_counts.entry(last).or_default() += 1;
                }
            } else if head.len() >= 2 && head.iter().all(|&c| is_chinese_numeral(c)) {
                *numeral_counts.entry(last).or_default() += 1;
            }
        }
        NumberRules {
            digit_suffixes: digit_counts
                .into_iter()
                .filter(|&(_, n)| n >= 2)
                .map(|(c, _)| c)
                .collect(),
            numeral_suffixes: numeral_counts
                .into_iter()
                .filter(|&(_, n)| n >= 3)
                .map(|(c, _)| c)
                .collect(),
            numeral_words: numeral_words >= 3,
        }
    }
}

/// Dictionary + HMM word segmenter for Chinese and Japanese (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Segmenter {
    language: SegmenterLanguage,
    options: SegmenterOptions,
    dict: Dictionary,
    hmm: Option<Hmm>,
    numbers: NumberRules,
}

/// Where the word graph's dictionary edges come from: the trie (`Dictionary::words_at`), or the
/// word table during `add_words` (`Dictionary::live_prefixes`, no rebuild needed).
trait WordFinder {
    /// Called once per chunk before `words_at`.
    fn prepare(&self, chunk: &str, coded: &mut CodedText);
    /// Calls `f(end, log probability)` for each word starting at byte `at` of the chunk (`end`:
    /// its end in the chunk), shortest first.
    fn words_at(&self, chunk: &str, coded: &CodedText, at: usize, f: impl FnMut(usize, f64));
    fn log_total(&self) -> f64;
}

impl WordFinder for Dictionary {
    fn prepare(&self, chunk: &str, coded: &mut CodedText) {
        self.encode(chunk, coded)
    }
    #[inline]
    fn words_at(&self, _chunk: &str, coded: &CodedText, at: usize, f: impl FnMut(usize, f64)) {
        Dictionary::words_at(self, coded, at, f)
    }
    fn log_total(&self) -> f64 {
        Dictionary::log_total(self)
    }
}

struct LiveWords<'a>(&'a Dictionary);

impl WordFinder for LiveWords<'_> {
    fn prepare(&self, _chunk: &str, _coded: &mut CodedText) {}
    fn words_at(&self, chunk: &str, _coded: &CodedText, at: usize, mut f: impl FnMut(usize, f64)) {
        self.0.live_prefixes(&chunk[at..], |len, log_prob| f(at + len, log_prob))
    }
    fn log_total(&self) -> f64 {
        self.0.live_log_total()
    }
}

/// Reusable buffers of one `cut` call.
#[derive(Default)]
struct Scratch {
    atoms: Vec<Atom>,
    route: Vec<(f64, usize)>,
    /// Per atom i, bit k: a dictionary word spans atoms i..=i+k (k < 64), found while the
    /// route is computed, so that `cut_singles` needs no word lookups of its own.
    word_ends: Vec<u64>,
    chars: Vec<char>,
    coded: CodedText,
}

/// A chunk after `best_route`: the text its atoms' offsets point into, the atoms and their
/// dictionary word ends (see [`Scratch::word_ends`]).
#[derive(Clone, Copy)]
struct Routed<'a> {
    text: &'a str,
    atoms: &'a [Atom],
    word_ends: &'a [u64],
}

/// Chunks up to this many bytes leave their buffers for the next `cut` on the thread.
const SCRATCH_KEPT_BYTES: usize = 1 << 16;

/// Words longer than this many atoms are looked up in the dictionary instead of `word_ends`.
const WORD_END_BITS: usize = 64;

impl Segmenter {
    /// A segmenter with the given dictionary and HMM.
    pub(crate) fn new(
        language: SegmenterLanguage,
        options: SegmenterOptions,
        dict: Dictionary,
        hmm: Option<Hmm>,
    ) -> Self {
        let numbers = NumberRules::learn(&dict);
        Segmenter { language, options, dict, hmm, numbers }
    }

    /// A segmenter without words: Chinese comes out one character per word (and the rule-based
    /// atoms), Japanese as runs of one character type.
    pub fn empty(language: SegmenterLanguage, options: SegmenterOptions) -> Self {
        Segmenter::new(language, options, Dictionary::default(), None)
    }

    pub fn language(&self) -> SegmenterLanguage {
        self.language
    }

    pub fn options(&self) -> SegmenterOptions {
        self.options
    }

    pub fn set_options(&mut self, options: SegmenterOptions) {
        self.options = options;
    }

    pub fn dictionary(&self) -> &Dictionary {
        &self.dict
    }

    pub fn hmm(&self) -> Option<&Hmm> {
        self.hmm.as_ref()
    }

    /// Words with byte offsets.
    pub fn cut(&self, text: &str) -> Vec<WordToken> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.cut_into(text, self.options.hmm, &mut out);
        out
    }

    /// Appends the words of `text` to `out`; `hmm` overrides the option for this call.
    pub(crate) fn cut_into(&self, text: &str, hmm: bool, out: &mut Vec<WordToken>) {
        self.cut_with(&self.dict, text, hmm, out)
    }

    fn cut_with(&self, words: &impl WordFinder, text: &str, hmm: bool, out: &mut Vec<WordToken>) {
        thread_local! {
            /// The buffers of the last `cut` on this thread: a call per line (the usual way)
            /// would otherwise spend a good part of its time growing seven fresh vectors.
            static SCRATCH: std::cell::RefCell<Scratch> =
                std::cell::RefCell::new(Scratch::default());
        }
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => {
                self.cut_chunks(words, text, hmm, &mut scratch, out);
                // Not kept after a huge chunk (megabytes without a space): memory per thread.
                if scratch.coded.coded_at.capacity() > SCRATCH_KEPT_BYTES {
                    *scratch = Scratch::default();
                }
            }
            // Only if a cut ever ran inside another on one thread (nothing does so today).
            Err(_) => self.cut_chunks(words, text, hmm, &mut Scratch::default(), out),
        })
    }

    /// Cuts each whitespace-free chunk of `text`.
    fn cut_chunks(
        &self,
        words: &impl WordFinder,
        text: &str,
        hmm: bool,
        scratch: &mut Scratch,
        out: &mut Vec<WordToken>,
    ) {
        let mut chunk_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            if is_space(c) {
                if let Some(s) = chunk_start.take() {
                    self.cut_chunk(words, text, s, i, hmm, scratch, out);
                }
            } else if chunk_start.is_none() {
                chunk_start = Some(i);
            }
        }
        if let Some(s) = chunk_start {
            self.cut_chunk(words, text, s, text.len(), hmm, scratch, out);
        }
    }

    /// The words as strings (for tests).
    #[cfg(test)]
    pub(crate) fn cut_strings<'a>(&self, text: &'a str) -> Vec<&'a str> {
        self.cut(text).iter().map(|t| &text[t.start..t.end]).collect()
    }

    // The arguments are borrows from different owners (the word finder, the caller's text and
    // output, reusable scratch): a struct would only regroup them for this one call.
    #[allow(clippy::too_many_arguments)]
    fn cut_chunk(
        &self,
        words: &impl WordFinder,
        text: &str,
        start: usize,
        end: usize,
        hmm: bool,
        scratch: &mut Scratch,
        out: &mut Vec<WordToken>,
    ) {
        scratch.atoms.clear();
        atoms::scan(&text[start..end], start, &mut scratch.atoms);
        self.best_route(words, &text[start..end], start, scratch);
        let chunk = Routed { text, atoms: &scratch.atoms, word_ends: &scratch.word_ends };
        let atoms = chunk.atoms;
        let use_hmm = hmm && self.hmm.is_some();
        let mut singles_from: Option<usize> = None;
        let mut i = 0;
        while i < atoms.len() {
            let next = scratch.route[i].1;
            if use_hmm && next == i + 1 && atoms[i].kind.is_cjk() {
                singles_from.get_or_insert(i);
            } else {
                if let Some(s) = singles_from.take() {
                    self.cut_singles(&chunk, s, i, &mut scratch.chars, out);
                }
                out.push(WordToken {
                    start: atoms[i].start,
                    end: atoms[next - 1].end,
                    replacement: None,
                });
            }
            i = next;
        }
        if let Some(s) = singles_from {
            self.cut_singles(&chunk, s, atoms.len(), &mut scratch.chars, out);
        }
    }

    /// Fills `scratch.route`: for each atom, the best score from there to the chunk end and the
    /// atom after the first word of that best path. `chunk_start`: the chunk's offset in the text
    /// (the atoms' offsets are text offsets).
    fn best_route(
        &self,
        words: &impl WordFinder,
        chunk: &str,
        chunk_start: usize,
        scratch: &mut Scratch,
    ) {
        words.prepare(chunk, &mut scratch.coded);
        let coded = &scratch.coded;
        let atoms = &scratch.atoms;
        let n = atoms.len();
        let route = &mut scratch.route;
        route.clear();
        route.resize(n + 1, (0.0, n));
        let word_ends = &mut scratch.word_ends;
        word_ends.clear();
        word_ends.resize(n, 0);
        let unknown = -words.log_total();
        let japanese = self.language == SegmenterLanguage::Japanese;
        // End of the run of atoms of the same character type / of Chinese numerals from i on,
        // carried from atom i + 1 so that each is found in constant time.
        let mut type_run_end = n;
        let mut numeral_run_end = n;
        let mut next_is_numeral = false;
        for i in (0..n).rev() {
            let atom = atoms[i];
            if i + 1 == n || atoms[i + 1].kind != atom.kind {
                type_run_end = i + 1;
            }
            let numeral = is_numeral_atom(atom);
            if numeral && !next_is_numeral {
                numeral_run_end = i + 1;
            }
            next_is_numeral = numeral;
            let mut best = (f64::NEG_INFINITY, i + 1);
            let mut consider = |end: usize, score: f64| {
                if score > best.0 || (score == best.0 && end > best.1) {
                    best = (score, end);
                }
            };
            let mut any_word = false;
            let mut ends = 0u64;
            let mut j = i;
            words.words_at(chunk, coded, atom.start - chunk_start, |end, log_prob| {
                let end_byte = chunk_start + end;
                while j < n && atoms[j].end < end_byte {
                    j += 1;
                }
                if j < n && atoms[j].end == end_byte {
                    any_word = true;
                    if j - i < WORD_END_BITS {
                        ends |= 1 << (j - i);
                    }
                    consider(j + 1, log_prob + route[j + 1].0);
                }
            });
            word_ends[i] = ends;
            if !any_word || !atom.kind.is_cjk() {
                consider(i + 1, unknown + route[i + 1].0);
            }
            // Katakana runs are mostly one (loan)word; kanji and hiragana runs are often several
            // words, so they are a candidate only where the dictionary has nothing.
            let run_candidate =
                atom.kind == AtomKind::Katakana || (!any_word && atom.kind.is_cjk());
            if japanese && run_candidate && type_run_end > i + 1 {
                consider(type_run_end, unknown + route[type_run_end].0);
            }
            if self.options.numbers {
                if atom.kind == AtomKind::Number
                    && i + 1 < n
                    && is_suffix(atoms[i + 1], &self.numbers.digit_suffixes)
                {
                    consider(i + 2, unknown + route[i + 2].0);
                }
                if numeral {
                    let run_end = numeral_run_end;
                    if run_end >= i + 2 && self.numbers.numeral_words {
                        consider(run_end, unknown + route[run_end].0);
                    }
                    if run_end >= i + 2
                        && run_end < n
                        && is_suffix(atoms[run_end], &self.numbers.numeral_suffixes)
                    {
                        consider(run_end + 1, unknown + route[run_end + 1].0);
                    }
                }
            }
            route[i] = best;
        }
    }

    /// Whether a dictionary word covers exactly atoms `from..to` (from the route's word ends).
    fn is_word(&self, chunk: &Routed<'_>, from: usize, to: usize) -> bool {
        match to - from {
            0 => false,
            len if len <= WORD_END_BITS => chunk.word_ends[from] >> (len - 1) & 1 == 1,
            _ => self.dict.contains(&chunk.text[chunk.atoms[from].start..chunk.atoms[to - 1].end]),
        }
    }

    /// Emits the one-atom words `atoms[from..to]` of the best path: one alone, or as a whole
    /// dictionary word one by one (jieba's rule), or else as the HMM cuts them. An HMM trained
    /// from word lists only re-cuts runs holding a character that is not itself a dictionary
    /// word: it cannot tell how often one-character words follow each other, and on SIGHAN
    /// 2005 (trained from the word list) re-cutting every run costs 8 points of F1.
    fn cut_singles(
        &self,
        chunk: &Routed<'_>,
        from: usize,
        to: usize,
        chars: &mut Vec<char>,
        out: &mut Vec<WordToken>,
    ) {
        let Routed { atoms, word_ends, .. } = *chunk;
        let one_by_one = |out: &mut Vec<WordToken>| {
            out.extend(atoms[from..to].iter().map(|a| WordToken {
                start: a.start,
                end: a.end,
                replacement: None,
            }));
        };
        let hmm = match &self.hmm {
            Some(h) if to - from > 1 && !self.is_word(chunk, from, to) => h,
            _ => return one_by_one(out),
        };
        if hmm.from_word_list && (from..to).all(|k| word_ends[k] & 1 == 1) {
            return one_by_one(out);
        }
        chars.clear();
        chars.extend(atoms[from..to].iter().map(|a| a.first));
        hmm.cut(chars, |s, e| {
            out.push(WordToken {
                start: atoms[from + s].start,
                end: atoms[from + e - 1].end,
                replacement: None,
            })
        });
    }

    /// jieba's `suggest_freq(word)`: the frequency that lets `word` win over the way it is cut
    /// now (without HMM) — `max(int(P(current pieces) * total) + 1, freq(word) or 1)`, each
    /// piece's probability `piece_freq / total` as jieba computes it.
    pub fn suggest_freq(&self, word: &str) -> u64 {
        let total = self.dict.total() as f64;
        let mut p = 1.0f64;
        let mut pieces = Vec::new();
        self.cut_with(&LiveWords(&self.dict), word, false, &mut pieces);
        for t in &pieces {
            p *= self.dict.piece_freq(&word[t.start..t.end]) as f64 / total;
        }
        let suggested = (p * total) as u64 + 1;
        suggested.max(self.dict.freq(word).max(1))
    }

    /// Adds or updates words (jieba's `add_word`): an entry without a frequency gets
    /// `suggest_freq`. Rebuilds the trie once at the end.
    pub fn add_words(
        &mut self,
        entries: impl IntoIterator<Item = (String, Option<u64>)>,
    ) -> Result<usize> {
        let mut count = 0;
        for (word, freq) in entries {
            if word.is_empty() || word.contains('\0') {
                return Err(Error::InvalidArgument(format!("not a word: {word:?}")));
            }
            let freq = match freq {
                Some(f) => f,
                None => self.suggest_freq(&word),
            };
            self.dict.set_word(word, freq);
            count += 1;
        }
        self.dict.rebuild()?;
        self.numbers = NumberRules::learn(&self.dict);
        Ok(count)
    }

    /// Loads a user dictionary in jieba's format (`word [freq] [tag]` per line) on top of the
    /// current words, as jieba's `load_userdict`. Returns the number of entries read.
    pub fn load_user_dictionary(&mut self, path: &Path) -> Result<usize> {
        let entries = dictionary::read_entries(path)?;
        self.add_words(entries.into_iter().map(|(_, e)| (e.word, e.freq)))
    }

    /// The model as JSON (words, frequencies, HMM, options).
    pub fn to_json(&self) -> String {
        let mut words: Vec<(String, u64)> =
            self.dict.iter().map(|(w, f)| (w.to_string(), f)).collect();
        words.sort_unstable();
        let saved = SavedSegmenter {
            kind: SAVED_TYPE.to_string(),
            version: 1,
            language: self.language,
            hmm: self.options.hmm,
            numbers: self.options.numbers,
            total: self.dict.total(),
            words,
            model: self.hmm.as_ref().map(SavedHmm::from),
        };
        serde_json::to_string(&saved).unwrap_or_default()
    }

    pub fn from_json(json: &str) -> Result<Self> {
        let saved: SavedSegmenter = serde_json::from_str(json)?;
        if saved.kind != SAVED_TYPE {
            return Err(Error::format(format!("not a saved segmenter: type {:?}", saved.kind)));
        }
        let dict = Dictionary::with_total(saved.words.into_iter().collect(), saved.total)?;
        let options = SegmenterOptions { hmm: saved.hmm, numbers: saved.numbers };
        let hmm = saved.model.map(SavedHmm::into_hmm).transpose()?;
        Ok(Segmenter::new(saved.language, options, dict, hmm))
    }
}

const SAVED_TYPE: &str = "WordSegmenter";

#[derive(Serialize, Deserialize)]
struct SavedSegmenter {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    language: SegmenterLanguage,
    hmm: bool,
    numbers: bool,
    total: u64,
    words: Vec<(String, u64)>,
    model: Option<SavedHmm>,
}

/// The HMM with its emissions sorted, so that a saved file is the same every time. Numbers are
/// written as strings of Rust's shortest round-trip form: serde_json's default float parser is
/// not always correctly rounded, and a loaded model must cut exactly as the saved one.
#[derive(Serialize, Deserialize)]
struct SavedHmm {
    start: String,
    trans: [String; 4],
    unseen: String,
    emit: BTreeMap<char, String>,
    #[serde(default)]
    from_word_list: bool,
}

fn probs_to_string(p: &[f64; 4]) -> String {
    p.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
}

fn probs_from_string(s: &str) -> Result<[f64; 4]> {
    let values: Vec<f64> = s
        .split(' ')
        .map(|x| x.parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::format(format!("HMM probabilities {s:?}: {e}")))?;
    values
        .try_into()
        .map_err(|_| Error::format(format!("HMM probabilities {s:?}: expected 4 numbers")))
}

impl From<&Hmm> for SavedHmm {
    fn from(h: &Hmm) -> Self {
        SavedHmm {
            start: probs_to_string(&h.start),
            trans: [0, 1, 2, 3].map(|t| probs_to_string(&h.trans[t])),
            unseen: probs_to_string(&h.unseen),
            emit: h.emit.iter().map(|(&c, p)| (c, probs_to_string(p))).collect(),
            from_word_list: h.from_word_list,
        }
    }
}

impl SavedHmm {
    fn into_hmm(self) -> Result<Hmm> {
        let mut trans = [[0.0; 4]; 4];
        for (row, s) in trans.iter_mut().zip(&self.trans) {
            *row = probs_from_string(s)?;
        }
        let emit = self
            .emit
            .iter()
            .map(|(&c, p)| Ok((c, probs_from_string(p)?)))
            .collect::<Result<_>>()?;
        Ok(Hmm {
            start: probs_from_string(&self.start)?,
            trans,
            unseen: probs_from_string(&self.unseen)?,
            emit,
            from_word_list: self.from_word_list,
        })
    }
}

/// Learns a segmenter from a segmented corpus (words separated by whitespace, one sentence per
/// line) and/or word lists (`word [freq] [tag]`; a word without a frequency counts once).
///
/// Word counts: each corpus occurrence adds 1; a word-list line sets the word's frequency (a
/// later line for the same word replaces it) and adds it to the total, as jieba reads its main
/// dictionary. HMM statistics: corpus lines as sentences, word-list words weighted by frequency.
#[derive(Debug, Default, Clone)]
pub struct SegmenterTrainer {
    freqs: FxHashMap<String, u64>,
    total: u64,
    corpus_hmm: HmmCounts,
    listed: Vec<String>,
}

impl SegmenterTrainer {
    pub fn new() -> Self {
        Self::default()
    }

    /// One line of a segmented corpus.
    pub fn feed_segmented_line(&mut self, line: &str) {
        let words: Vec<&str> = line.split(is_space).filter(|w| !w.is_empty()).collect();
        if words.is_empty() {
            return;
        }
        for w in &words {
            *self.freqs.entry((*w).to_string()).or_default() += 1;
            self.total += 1;
        }
        self.corpus_hmm.add_sentence(words.iter().copied());
    }

    /// One word-list entry; `None` counts as frequency 1.
    pub fn feed_word(&mut self, word: &str, freq: Option<u64>) {
        let freq = freq.unwrap_or(1);
        self.total = self.total.saturating_add(freq);
        if self.freqs.insert(word.to_string(), freq).is_none() {
            self.listed.push(word.to_string());
        }
    }

    /// Every line of a word-list file in jieba's format; errors name the file and line.
    pub fn feed_word_list_file(&mut self, path: &Path) -> Result<()> {
        for (_, entry) in dictionary::read_entries(path)? {
            self.feed_word(&entry.word, entry.freq);
        }
        Ok(())
    }

    /// Every line of a segmented corpus file.
    pub fn feed_segmented_file(&mut self, path: &Path) -> Result<()> {
        use std::io::BufRead;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        for (index, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(|e| Error::io(path, e))?;
            let line = std::str::from_utf8(&line).map_err(|e| Error::Utf8 {
                path: Some(path.to_path_buf()),
                line: Some(index + 1),
                byte_offset: e.valid_up_to(),
            })?;
            self.feed_segmented_line(line.trim_start_matches('\u{feff}'));
        }
        Ok(())
    }

    /// The trained segmenter.
    pub fn finish(
        self,
        language: SegmenterLanguage,
        options: SegmenterOptions,
    ) -> Result<Segmenter> {
        let mut hmm_counts = self.corpus_hmm;
        for word in &self.listed {
            let freq = self.freqs.get(word).copied().unwrap_or(0);
            if freq > 0 {
                hmm_counts.add_word(word, freq as f64);
            }
        }
        let hmm = if hmm_counts.is_empty() { None } else { Some(hmm_counts.finish()) };
        let dict = Dictionary::with_total(self.freqs, self.total)?;
        Ok(Segmenter::new(language, options, dict, hmm))
    }
}

#[cfg(test)]
mod tests;
