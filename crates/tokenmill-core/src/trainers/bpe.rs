//! The BPE trainer: learns merges from word counts, exactly as `tokenizers`' BpeTrainer does
//! (see the rules in the [module docs](super)). The words, the pair table and the lazy max-heap
//! loop are the shared [`merge_loop`](super::merge_loop); this file is the trainer's setup
//! (alphabet, initial symbols), its output, and its rule ([`CountRule`]):
//!
//! * pair counts are bare `i64`s in the table; the heap orders candidate merges by
//!   (count, lowest pair) and is updated lazily: a popped entry whose count is stale is pushed
//!   back with the current count;
//! * each heap entry carries the words where its pair was seen, so a merge only visits those.
//!
//! The heap bookkeeping reproduces `tokenizers`' exactly, including its quirks (an entry only
//! merges the words it carries, and the merged pair's count is not reset), so that the learned
//! merges are the same even when a merged token can be formed in more than one way.
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::merge_loop::{
    unpack, CountAndWords, Heap, Merge, MergeLoop, MergeRule, PairTable, Pairs, Refresh, Step,
    Words,
};
use super::progress::Progress;
use super::spill::{Budget, CountTable};
use super::word_counts::{count_words_within, emit_words};
use super::{AddedToken, History};
use crate::error::Result;

/// Options of BPE training (the same names and defaults as `tokenizers.trainers.BpeTrainer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BpeTrainer {
    /// Pairs seen fewer times than this are never merged (training stops at the first one).
    pub min_frequency: u64,
    /// Target vocabulary size, special tokens and alphabet included.
    pub vocab_size: usize,
    pub show_progress: bool,
    /// Tokens that get the first ids, in this order.
    pub special_tokens: Vec<AddedToken>,
    /// Keep at most this many characters in the alphabet (the most frequent ones).
    pub limit_alphabet: Option<usize>,
    /// Characters always in the alphabet, seen in the corpus or not.
    pub initial_alphabet: BTreeSet<char>,
    /// Prefix of every symbol that does not start a word (e.g. `##`).
    pub continuing_subword_prefix: Option<String>,
    /// Suffix of every symbol that ends a word (e.g. `</w>`).
    pub end_of_word_suffix: Option<String>,
    /// Limit on the length (in characters) of merged tokens, with `tokenizers`' rule: a new pair
    /// is only counted when its length is below this limit.
    pub max_token_length: Option<usize>,
    /// The word counts gathered by `feed`.
    pub words: CountTable,
    /// Memory budget of counting and training, in bytes (None:
    /// [`super::spill::default_max_memory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<u64>,
    /// Folder where counting spills sorted runs (None: the system's temporary folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_dir: Option<std::path::PathBuf>,
    /// The merges of the last `train_and_record` run, with their counts.
    #[serde(skip)]
    pub merge_history: MergeHistory,
}

impl Default for BpeTrainer {
    fn default() -> Self {
        BpeTrainer {
            min_frequency: 0,
            vocab_size: 30000,
            show_progress: true,
            special_tokens: vec![],
            limit_alphabet: None,
            initial_alphabet: BTreeSet::new(),
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            max_token_length: None,
            words: CountTable::default(),
            max_memory: None,
            spill_dir: None,
            merge_history: MergeHistory::default(),
        }
    }
}

/// The merges of the last training run as (left, right, count).
pub type MergeHistory = History<(String, String, u64)>;

/// One step of training: the pair merged, the token it made, and the pair's count then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LearnedMerge {
    pub left: u32,
    pub right: u32,
    pub new_id: u32,
    pub count: u64,
}

/// What training learned: everything a BPE model and its Tokenizer need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BpeTrainResult {
    /// Tokens by id.
    pub vocab: Vec<String>,
    /// The model's merges, by rank. A pair merged twice (it happens when a token can be formed in
    /// two ways) keeps its last rank, as in `tokenizers`' model.
    pub merges: Vec<(String, String)>,
    /// Every merge step in order, with the count that made it win (the "explain" history).
    pub history: Vec<LearnedMerge>,
    pub special_tokens: Vec<AddedToken>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
}

impl BpeTrainResult {
    /// Every merge step as (left text, right text, count).
    pub fn history_texts(&self) -> Vec<(String, String, u64)> {
        self.history
            .iter()
            .map(|m| {
                (self.vocab[m.left as usize].clone(), self.vocab[m.right as usize].clone(), m.count)
            })
            .collect()
    }

    /// Token → id.
    pub fn vocab_map(&self) -> HashMap<String, u32> {
        self.vocab.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect()
    }
}

/// The least memory BPE training (and WordPiece's, on the same words) takes per byte of its
/// distinct words: the address space it grows by on one long word (110–125 bytes a byte; 54
/// resident: its symbols, pairs and their positions; vectors grow by doubling and copying).
const MEMORY_PER_WORD_BYTE: usize = 128;

/// The resident memory BPE training (and WordPiece's) takes per byte of its distinct words (the
/// words' symbols, the pair table, the positions of pairs and the heap), what the memory budget
/// is checked against.
const RESIDENT_PER_WORD_BYTE: usize = 54;

/// Checks that BPE or WordPiece (`trainer`) training on `counts` fits in memory, and in the
/// budget, before anything is built.
pub(crate) fn check_memory(trainer: &str, counts: &CountTable, budget: &Budget) -> Result<()> {
    let limits = super::MemoryLimits {
        per_text_byte: MEMORY_PER_WORD_BYTE,
        per_word_byte: MEMORY_PER_WORD_BYTE,
        resident_per_text_byte: RESIDENT_PER_WORD_BYTE,
        budget: budget.max_memory,
    };
    super::check_words_memory(trainer, counts.words(), counts.heap_bytes(), &limits)
}

impl BpeTrainer {
    pub fn new(min_frequency: u64, vocab_size: usize) -> Self {
        BpeTrainer { min_frequency, vocab_size, ..Default::default() }
    }

    /// Counts the words of `sequences`, each cut into words by `process` (`tokenizers`' API).
    /// Replaces the counts of any earlier feed, as `tokenizers` does.
    pub fn feed<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send,
        F: Fn(&str) -> Result<Vec<String>> + Sync,
    {
        self.feed_with(sequences.map(Ok), emit_words(process))
    }

    /// Like [`feed`](Self::feed), but `process` hands words to `emit` (no allocation per word)
    /// and sequences may be errors, which stop the feed.
    pub fn feed_with<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send,
        F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
    {
        self.words = count_words_within(sequences, process, |_| {}, &self.budget())?;
        Ok(())
    }

    /// The memory budget of counting and training.
    pub fn budget(&self) -> Budget {
        Budget::new(self.max_memory, self.spill_dir.clone())
    }

    /// Learns the vocabulary and merges from the fed word counts.
    pub fn train(&self) -> Result<BpeTrainResult> {
        self.train_from_counts(&self.words, &[])
    }

    /// Like [`train`](Self::train), and keeps the merge history (for "explain" APIs).
    pub fn train_and_record(&self) -> Result<BpeTrainResult> {
        let result = self.train()?;
        self.merge_history.set(result.history_texts());
        Ok(result)
    }

    /// Learns the vocabulary and merges from `counts`. The prefixed / suffixed character forms
    /// listed in `form_order` (usually none) get their ids in that order, before the others: this
    /// lets tests replay the (hash) order a `tokenizers` run happened to use and compare exactly.
    pub fn train_from_counts(
        &self,
        counts: &CountTable,
        form_order: &[String],
    ) -> Result<BpeTrainResult> {
        check_memory("BPE", counts, &self.budget())?;
        let (vocab, words) = self.initial_words(counts, form_order, self.max_token_length);
        let mut order = Vec::new();
        let mut seen = words.count_pairs(|pair| {
            order.push(pair);
            CountAndWords::default()
        });
        let (pair_counts, entries) = CountRule::start(&mut seen, &order);
        drop((seen, order));
        let mut rule = CountRule::new(self, vocab);
        MergeLoop::new(words, pair_counts, entries).run(&mut rule);
        rule.progress.finish();
        Ok(self.result(rule.vocab, rule.history))
    }

    /// The starting point of training, shared with the WordPiece likelihood rule: the
    /// vocabulary before any merge (special tokens, alphabet, prefixed / suffixed forms) and
    /// every word as its initial symbols, with `max_len` as the words' length limit.
    pub(crate) fn initial_words(
        &self,
        counts: &CountTable,
        form_order: &[String],
        max_len: Option<usize>,
    ) -> (Vocab, Words) {
        let mut vocab = Vocab::default();
        for token in &self.special_tokens {
            vocab.get_or_add(&token.content);
        }
        for c in self.alphabet(counts) {
            vocab.get_or_add(c.encode_utf8(&mut [0; 4]));
        }
        let chars = CharSymbols::new(self, counts, form_order, &mut vocab);
        let mut words = Words::new(counts.len(), max_len);
        for (word, n) in counts.iter() {
            let symbols = positions(word).filter_map(|(c, kind)| Some(chars.ids.get(&c)?[kind]));
            words.push(symbols, n);
        }
        (vocab, words)
    }

    /// The text of merging tokens `a` and `b` (the right one loses the continuing-subword prefix).
    pub(crate) fn merged_token(&self, a: &str, b: &str) -> String {
        let b = match &self.continuing_subword_prefix {
            Some(prefix) => b.strip_prefix(prefix.as_str()).unwrap_or(b),
            None => b,
        };
        format!("{a}{b}")
    }

    /// The alphabet in code-point order (see the module docs for `limit_alphabet`).
    fn alphabet(&self, counts: &CountTable) -> Vec<char> {
        let mut freq: FxHashMap<char, u64> = FxHashMap::default();
        for (word, n) in counts.iter() {
            for c in word.chars() {
                let f = freq.entry(c).or_insert(0);
                *f = f.saturating_add(n);
            }
        }
        for &c in &self.initial_alphabet {
            freq.insert(c, u64::MAX);
        }
        let mut kept: Vec<(char, u64)> = freq.into_iter().collect();
        if let Some(limit) = self.limit_alphabet {
            if kept.len() > limit {
                // Most frequent first; among equals, lower code points first (deterministic,
                // where `tokenizers` drops in hash order).
                kept.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                kept.truncate(limit);
            }
        }
        let mut alphabet: Vec<char> = kept.into_iter().map(|(c, _)| c).collect();
        alphabet.sort_unstable();
        alphabet
    }

    /// The text of the token made by merging `left` and `right` (the right one loses its
    /// continuing-subword prefix).
    fn merged_text(&self, vocab: &Vocab, left: u32, right: u32) -> String {
        self.merged_token(&vocab.tokens[left as usize], &vocab.tokens[right as usize])
    }

    fn result(&self, vocab: Vocab, history: Vec<LearnedMerge>) -> BpeTrainResult {
        // A pair merged more than once keeps its last rank (as `tokenizers`' merges map does).
        let mut last_step: FxHashMap<(u32, u32), usize> = FxHashMap::default();
        for (i, m) in history.iter().enumerate() {
            last_step.insert((m.left, m.right), i);
        }
        let merges = history
            .iter()
            .enumerate()
            .filter(|(i, m)| last_step[&(m.left, m.right)] == *i)
            .map(|(_, m)| {
                (vocab.tokens[m.left as usize].clone(), vocab.tokens[m.right as usize].clone())
            })
            .collect();
        BpeTrainResult {
            vocab: vocab.tokens,
            merges,
            history,
            special_tokens: self.special_tokens.clone(),
            continuing_subword_prefix: self.continuing_subword_prefix.clone(),
            end_of_word_suffix: self.end_of_word_suffix.clone(),
        }
    }
}

/// Token ↔ id as training grows it.
#[derive(Default)]
pub(crate) struct Vocab {
    ids: FxHashMap<String, u32>,
    pub tokens: Vec<String>,
}

impl Vocab {
    pub fn get_or_add(&mut self, token: &str) -> u32 {
        if let Some(&id) = self.ids.get(token) {
            return id;
        }
        let id = self.tokens.len() as u32;
        self.tokens.push(token.to_owned());
        self.ids.insert(token.to_owned(), id);
        id
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }
}

/// The initial symbol id of every alphabet character, by position in its word:
/// `[inside, first, last, first and last]` (prefix on non-first, suffix on last characters).
struct CharSymbols {
    ids: FxHashMap<char, [u32; 4]>,
}

impl CharSymbols {
    /// Adds the prefixed / suffixed forms that occur to `vocab`, in code-point order of their text.
    fn new(
        trainer: &BpeTrainer,
        counts: &CountTable,
        form_order: &[String],
        vocab: &mut Vocab,
    ) -> Self {
        // A character takes part in words when its own text is a token (alphabet or special).
        let mut forms: FxHashSet<(char, usize)> = FxHashSet::default();
        for word in counts.words() {
            for (c, kind) in positions(word) {
                if vocab.ids.contains_key(c.encode_utf8(&mut [0; 4]) as &str) {
                    forms.insert((c, kind));
                }
            }
        }
        let text = |c: char, kind: usize| {
            let mut s = String::new();
            if kind & FIRST == 0 {
                s.push_str(trainer.continuing_subword_prefix.as_deref().unwrap_or(""));
            }
            s.push(c);
            if kind & LAST != 0 {
                s.push_str(trainer.end_of_word_suffix.as_deref().unwrap_or(""));
            }
            s
        };
        let new_texts: BTreeSet<String> = forms.iter().map(|&(c, kind)| text(c, kind)).collect();
        for t in form_order.iter().filter(|t| new_texts.contains(*t)).chain(&new_texts) {
            vocab.get_or_add(t);
        }
        let mut ids: FxHashMap<char, [u32; 4]> = FxHashMap::default();
        for (c, kind) in forms {
            ids.entry(c).or_insert([u32::MAX; 4])[kind] = vocab.ids[&text(c, kind)];
        }
        CharSymbols { ids }
    }
}

const FIRST: usize = 1;
const LAST: usize = 2;

/// Each character of `word` with its position kind (`FIRST` / `LAST` bits), by position in the
/// original word (characters dropped from the alphabet still count as first / last).
fn positions(word: &str) -> impl Iterator<Item = (char, usize)> + '_ {
    let n = word.chars().count();
    word.chars()
        .enumerate()
        .map(move |(i, c)| (c, if i == 0 { FIRST } else { 0 } | if i + 1 == n { LAST } else { 0 }))
}

/// `tokenizers`' rule: the highest count first, ties to the lowest pair of ids; each heap entry
/// carries the words where its pair appeared and a merge visits only those; the merged pair's
/// count is not reset; training stops at a count below `min_frequency` (or zero).
struct CountRule<'a> {
    trainer: &'a BpeTrainer,
    vocab: Vocab,
    history: Vec<LearnedMerge>,
    /// The pairs that gained occurrences in this merge, with the words where they did.
    appeared: Vec<(u64, u32)>,
    progress: Progress,
}

impl<'a> CountRule<'a> {
    fn new(trainer: &'a BpeTrainer, vocab: Vocab) -> Self {
        let todo = trainer.vocab_size.saturating_sub(vocab.len()) as u64;
        CountRule {
            trainer,
            vocab,
            history: Vec::new(),
            appeared: Vec::new(),
            progress: Progress::new(trainer.show_progress, todo, "Compute merges"),
        }
    }

    /// The table of bare counts and one heap entry per counted pair, with the words it occurs
    /// in, in the order the pairs were first seen (the order `tokenizers` heapifies them in).
    fn start(seen: &mut PairTable<CountAndWords>, order: &[u64]) -> (PairTable<i64>, Vec<Entry>) {
        let mut counts: PairTable<i64> = PairTable::default();
        counts.reserve(order.len());
        let mut entries = Vec::with_capacity(order.len());
        for &pair in order {
            let Some(stats) = seen.get_mut(&pair) else { continue };
            counts.insert(pair, stats.count);
            if stats.count > 0 {
                let pos = std::mem::take(&mut stats.words);
                entries.push(Entry { count: stats.count as u64, pair, pos });
            }
        }
        (counts, entries)
    }
}

impl MergeRule for CountRule<'_> {
    type Pair = i64;
    type Candidate = Entry;

    fn done(&self) -> bool {
        self.vocab.len() >= self.trainer.vocab_size
    }

    /// A stale entry goes back with the current count (`as u64` like `tokenizers`: a never
    /// expected negative count compares as huge).
    fn refresh(&self, mut top: Entry, pairs: &PairTable<i64>) -> Refresh<Entry> {
        let current = pairs.get(&top.pair).copied().unwrap_or(0) as u64;
        if top.count == current {
            return Refresh::Current(top);
        }
        top.count = current;
        Refresh::Stale(Some(top))
    }

    fn choose(&mut self, top: Entry, _pairs: &mut PairTable<i64>) -> Step {
        if top.count < 1 || self.trainer.min_frequency > top.count {
            return Step::Stop;
        }
        let (left, right) = unpack(top.pair);
        let text = self.trainer.merged_text(&self.vocab, left, right);
        let new_id = self.vocab.get_or_add(&text);
        self.history.push(LearnedMerge { left, right, new_id, count: top.count });
        Step::Merge(Merge::new(left, right, new_id, top.pos))
    }

    fn changed(&mut self, pair: u64, _count: &mut i64, delta: i64, word: u32) -> bool {
        if delta > 0 {
            self.appeared.push((pair, word));
        }
        true
    }

    /// Pushes one heap entry per pair that appeared, with the words where it did.
    fn merged(&mut self, _: &Merge, pairs: &mut Pairs<Self>, heap: &mut Heap<Self>) {
        self.appeared.sort_unstable();
        self.appeared.dedup();
        let mut rest = &self.appeared[..];
        while let Some(&(pair, _)) = rest.first() {
            let same = rest.iter().take_while(|(p, _)| *p == pair).count();
            let count = pairs.get(&pair).copied().unwrap_or(0);
            if count > 0 {
                heap.push(Entry {
                    count: count as u64,
                    pair,
                    pos: rest[..same].iter().map(|&(_, w)| w).collect(),
                });
            }
            rest = &rest[same..];
        }
        self.appeared.clear();
        self.progress.set_position(self.history.len() as u64);
    }
}

/// A candidate merge in the heap: highest count first, then the lowest pair of ids.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    count: u64,
    pair: u64,
    pos: Vec<u32>,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count.cmp(&other.count).then_with(|| other.pair.cmp(&self.pair))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> CountTable {
        words.iter().map(|(w, n)| (w.to_string(), *n)).collect()
    }

    #[test]
    fn merges_highest_count_then_lowest_pair() {
        let trainer = BpeTrainer { vocab_size: 100, show_progress: false, ..Default::default() };
        let r =
            trainer.train_from_counts(&counts(&[("abab", 2), ("cd", 4), ("ab", 1)]), &[]).unwrap();
        // alphabet a b c d; "ab" seen 5 times, "cd" 4, "ba" 2
        assert_eq!(&r.vocab[..4], &["a", "b", "c", "d"]);
        assert_eq!(r.merges[0], ("a".to_string(), "b".to_string()));
        assert_eq!(r.history[0].count, 5);
        assert_eq!(r.merges[1], ("c".to_string(), "d".to_string()));
        assert_eq!(r.merges[2], ("ab".to_string(), "ab".to_string()));
    }

    #[test]
    fn specials_first_and_prefix_forms_sorted() {
        let trainer = BpeTrainer {
            vocab_size: 100,
            show_progress: false,
            special_tokens: vec![AddedToken::from("<s>", true), AddedToken::from("<s>", true)],
            continuing_subword_prefix: Some("##".into()),
            ..Default::default()
        };
        let r = trainer.train_from_counts(&counts(&[("ba", 3), ("ab", 1)]), &[]).unwrap();
        assert_eq!(&r.vocab[..5], &["<s>", "a", "b", "##a", "##b"]);
        assert_eq!(r.merges[0], ("b".to_string(), "##a".to_string()));
        assert!(r.vocab.contains(&"ba".to_string()));
    }

    #[test]
    fn min_frequency_stops_and_vocab_size_caps() {
        let trainer = BpeTrainer {
            vocab_size: 100,
            min_frequency: 3,
            show_progress: false,
            ..Default::default()
        };
        let r = trainer.train_from_counts(&counts(&[("xy", 3), ("yz", 2)]), &[]).unwrap();
        assert_eq!(r.merges.len(), 1);
        let trainer = BpeTrainer { vocab_size: 4, show_progress: false, ..Default::default() };
        let r = trainer.train_from_counts(&counts(&[("xy", 3), ("yz", 2)]), &[]).unwrap();
        assert_eq!(r.vocab.len(), 4);
    }
}
