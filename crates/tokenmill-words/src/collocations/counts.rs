//! Counting n-grams in windows, the way NLTK's collocation finders do, in memory proportional
//! to the number of distinct words and n-grams (not to the corpus: tokens stream through a
//! window of `window_size` ids).
//!
//! Words are interned to `u32` ids; an n-gram of up to four ids is packed into one `u128`
//! key. Tables are insertion-ordered maps (`IndexMap`), so iterating a table gives the n-grams in
//! the order NLTK's `FreqDist` (a dict) holds them — the order of first occurrence — and
//! filters keep that order, as NLTK's rebuilt `FreqDist` does.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use tokenmill_core::{Error, Result};

/// An interned word.
pub type WordId = u32;

/// Up to four word ids packed into 32-bit lanes, first word in the lowest lane.
pub type NgramKey = u128;

/// Packs word ids into a key.
#[inline]
pub fn pack(ids: &[WordId]) -> NgramKey {
    ids.iter().enumerate().fold(0u128, |key, (lane, &id)| key | (id as u128) << (32 * lane))
}

/// The `lane`-th word id of a key.
#[inline]
pub fn lane(key: NgramKey, lane: usize) -> WordId {
    (key >> (32 * lane)) as WordId
}

/// The distinct words seen, by id (id = order of first appearance). Words are stored as bytes:
/// UTF-8, or for Python strings holding lone surrogates, their "surrogatepass" encoding — both
/// sort bytewise in code-point order, which is how Python compares strings.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    /// Words of up to 15 bytes → id, the word packed into the key with its length (see
    /// `short_key`): a lookup hashes and compares two integers, with no pointer to follow and
    /// no `memcmp` — every token of the stream is looked up here, and nearly all are short.
    short_ids: FxHashMap<u128, WordId>,
    /// Longer words → id.
    long_ids: FxHashMap<Box<[u8]>, WordId>,
    /// A direct-mapped cache in front of `short_ids` (`FRONT_SLOTS` slots of key and id+1, 0 =
    /// empty): small enough to stay in cache, and frequent words (most tokens) hit it.
    front: Vec<(u128, u32)>,
    /// Id → word.
    words: Vec<Box<[u8]>>,
}

/// A word of at most 15 bytes as one integer: its bytes, then its length in the top byte.
#[inline]
fn short_key(word: &[u8]) -> Option<u128> {
    if word.len() > 15 {
        return None;
    }
    let mut buf = [0u8; 16];
    buf[..word.len()].copy_from_slice(word);
    buf[15] = word.len() as u8;
    Some(u128::from_le_bytes(buf))
}

const FRONT_BITS: u32 = 12;

impl Vocab {
    pub fn intern(&mut self, word: &[u8]) -> Result<WordId> {
        let short = short_key(word);
        let slot = short.map(|key| {
            if self.front.is_empty() {
                self.front = vec![(0, 0); 1 << FRONT_BITS];
            }
            let hash = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (hash >> (64 - FRONT_BITS)) as usize
        });
        if let (Some(key), Some(slot)) = (short, slot) {
            let (cached, id_plus_one) = self.front[slot];
            if cached == key && id_plus_one != 0 {
                return Ok(id_plus_one - 1);
            }
        }
        let known = match short {
            Some(key) => self.short_ids.get(&key),
            None => self.long_ids.get(word),
        };
        if let Some(&id) = known {
            if let (Some(key), Some(slot)) = (short, slot) {
                self.front[slot] = (key, id + 1);
            }
            return Ok(id);
        }
        let id = self.words.len();
        if id >= WordId::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "more than {} distinct words: the collocation vocabulary is full",
                WordId::MAX
            )));
        }
        match short {
            Some(key) => self.short_ids.insert(key, id as WordId),
            None => self.long_ids.insert(word.into(), id as WordId),
        };
        self.words.push(word.into());
        Ok(id as WordId)
    }

    pub fn get(&self, word: &[u8]) -> Option<WordId> {
        match short_key(word) {
            Some(key) => self.short_ids.get(&key).copied(),
            None => self.long_ids.get(word).copied(),
        }
    }

    pub fn word(&self, id: WordId) -> &[u8] {
        &self.words[id as usize]
    }

    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// `rank[id]`: position of the word in code-point (= bytewise) order, for sorting n-grams
    /// as Python sorts tuples of strings.
    pub(crate) fn sort_ranks(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = (0..self.len() as u32).collect();
        ids.sort_unstable_by(|&a, &b| self.word(a).cmp(self.word(b)));
        let mut rank = vec![0u32; ids.len()];
        for (r, &id) in ids.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        rank
    }
}

/// A frequency table of n-grams of a fixed arity (1 for words), in insertion order.
///
/// Entries live in a vector in insertion order; the key → position index that lookups need is
/// built on the first lookup only (counting, filtering by count and ranking never look a key
/// up, and building a hash index of a million bigrams costs as much as counting them).
/// Counting a stream goes through `bump` into a plain hash map that records each key's
/// first-seen position; `settle` then lays the entries out in first-seen order (no sort).
#[derive(Debug, Clone)]
pub struct Table {
    arity: usize,
    entries: Vec<(NgramKey, u64)>,
    /// key → position in `entries`; empty until a lookup needs it, reset when entries go.
    index: OnceLock<FxHashMap<NgramKey, u32>>,
    /// key → (count, first-seen position) while streaming.
    pending: FxHashMap<NgramKey, (u64, u32)>,
}

impl Table {
    pub fn new(arity: usize) -> Self {
        Table { arity, entries: Vec::new(), index: OnceLock::new(), pending: FxHashMap::default() }
    }

    /// One more occurrence of `key` while streaming (see `settle`).
    #[inline]
    pub(crate) fn bump(&mut self, key: NgramKey) {
        let next = self.pending.len() as u32;
        self.pending.entry(key).or_insert((0, next)).0 += 1;
    }

    /// Moves the streamed counts into the table, in first-seen order.
    pub(crate) fn settle(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let mut ordered = vec![(0u128, 0u64); self.pending.len()];
        for (key, (count, position)) in self.pending.drain() {
            ordered[position as usize] = (key, count);
        }
        self.pending = FxHashMap::default();
        self.extend_ordered(ordered);
    }

    /// Adds entries given in insertion order (keys distinct among themselves).
    fn extend_ordered(&mut self, ordered: Vec<(NgramKey, u64)>) {
        if self.entries.is_empty() {
            self.entries = ordered;
            self.index = OnceLock::new();
        } else {
            for (key, count) in ordered {
                self.add(key, count);
            }
        }
    }

    pub fn arity(&self) -> usize {
        self.arity
    }

    fn index(&self) -> &FxHashMap<NgramKey, u32> {
        self.index.get_or_init(|| {
            let mut index =
                FxHashMap::with_capacity_and_hasher(self.entries.len(), Default::default());
            for (position, &(key, _)) in self.entries.iter().enumerate() {
                index.insert(key, position as u32);
            }
            index
        })
    }

    #[inline]
    pub fn add(&mut self, key: NgramKey, count: u64) {
        self.index();
        let next = self.entries.len() as u32;
        // The index was just built, so `get_mut` finds it.
        let Some(index) = self.index.get_mut() else { return };
        match index.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => {
                self.entries[*e.get() as usize].1 += count
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(next);
                self.entries.push((key, count));
            }
        }
    }

    #[inline]
    pub fn get(&self, key: NgramKey) -> u64 {
        self.index().get(&key).map_or(0, |&p| self.entries[p as usize].1)
    }

    pub fn contains(&self, key: NgramKey) -> bool {
        self.index().contains_key(&key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The sum of all counts (`FreqDist.N()`).
    pub fn total(&self) -> u64 {
        self.entries.iter().map(|&(_, c)| c).sum()
    }

    /// `(key, count)` in insertion order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (NgramKey, u64)> + '_ {
        self.entries.iter().copied()
    }

    /// The word ids of a key of this table.
    pub fn ids(&self, key: NgramKey) -> impl Iterator<Item = WordId> {
        (0..self.arity).map(move |i| lane(key, i))
    }

    /// Keeps the entries for which `keep` holds, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(NgramKey, u64) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|&(k, c)| keep(k, c));
        if self.entries.len() != before {
            self.index = OnceLock::new();
        }
    }
}

/// Counts bigrams by sorting instead of hashing: each window pair is appended to a buffer; a
/// full buffer is radix-sorted and run-length counted, then merged into the distinct pairs
/// counted so far (kept sorted by key). Every step is a sequential pass, where a hash table of a
/// million bigrams costs a cache miss per pair. Memory: the buffer (fixed) plus one record per
/// distinct bigram. The sort is stable, so the first record of each run is the pair's first
/// occurrence, which gives NLTK's insertion order.
#[derive(Debug, Clone, Default)]
struct PairCounter {
    /// Pairs not yet counted, as `w1 << 32 | w2`.
    buffer: Vec<u64>,
    scratch: Vec<u64>,
    /// Distinct pairs so far, sorted by key.
    counted: Vec<PairCount>,
    /// Sequence number of `buffer[0]`.
    buffer_start: u64,
    /// The largest word id in `buffer`.
    max_id: u32,
    /// Buffer size; 0 means `PAIR_BUFFER` (tests use small buffers to exercise merging).
    limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PairCount {
    key: u64,
    count: u64,
    first: u64,
}

/// Pairs buffered before they are sorted and merged (8 bytes each).
const PAIR_BUFFER: usize = 1 << 20;

/// Bits needed to write `x` (at least 1).
fn bit_width(x: u64) -> u32 {
    (64 - x.leading_zeros()).max(1)
}

impl PairCounter {
    #[inline]
    fn push(&mut self, w1: WordId, w2: WordId) {
        let limit = if self.limit == 0 { PAIR_BUFFER } else { self.limit };
        if self.buffer.capacity() == 0 {
            self.buffer.reserve_exact(limit);
        }
        self.buffer.push((w1 as u64) << 32 | w2 as u64);
        self.max_id = self.max_id.max(w1).max(w2);
        if self.buffer.len() >= limit {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let runs = self.sorted_runs();
        self.buffer_start += self.buffer.len() as u64;
        self.buffer.clear();
        self.max_id = 0;
        self.counted = merge_counts(std::mem::take(&mut self.counted), runs);
    }

    /// The buffer's distinct pairs with their counts and first occurrences, sorted by key.
    fn sorted_runs(&mut self) -> Vec<PairCount> {
        let id_bits = bit_width(self.max_id as u64);
        let index_bits = bit_width(self.buffer.len() as u64 - 1);
        let mut runs: Vec<PairCount> = Vec::with_capacity(self.buffer.len());
        let mut add = |key: u64, first: u64| match runs.last_mut() {
            Some(run) if run.key == key => run.count += 1,
            _ => runs.push(PairCount { key, count: 1, first }),
        };
        if 2 * id_bits + index_bits <= 64 {
            // One u64 per record: w1, w2 and the position in the buffer, sorted on the ids.
            let id_mask = (1u64 << id_bits) - 1;
            for (i, record) in self.buffer.iter_mut().enumerate() {
                let (w1, w2) = (*record >> 32, *record & 0xffff_ffff);
                *record = (w1 << id_bits | w2) << index_bits | i as u64;
            }
            radix_sort(&mut self.buffer, &mut self.scratch, |&r| r >> index_bits);
            for &record in &self.buffer {
                let ids = record >> index_bits;
                add(
                    (ids >> id_bits) << 32 | (ids & id_mask),
                    self.buffer_start + (record & ((1u64 << index_bits) - 1)),
                );
            }
        } else {
            // Ids too large to pack with a position: sort (key, position) records.
            let mut records: Vec<(u64, u64)> = self
                .buffer
                .iter()
                .enumerate()
                .map(|(i, &k)| (k, self.buffer_start + i as u64))
                .collect();
            radix_sort(&mut records, &mut Vec::new(), |&(key, _)| key);
            for (key, first) in records {
                add(key, first);
            }
        }
        runs
    }

    /// `(key, count)` of every distinct pair in first-occurrence order, keys packed as `pack`
    /// does (first word in the low lane).
    fn finish(mut self) -> Vec<(NgramKey, u64)> {
        self.flush();
        let entry = |p: &PairCount| (pack(&[(p.key >> 32) as WordId, p.key as WordId]), p.count);
        let index_bits = bit_width(self.counted.len() as u64);
        if bit_width(self.buffer_start) + index_bits <= 64 {
            // One u64 per record: the first occurrence, then the index into `counted`.
            let mut order: Vec<u64> = self
                .counted
                .iter()
                .enumerate()
                .map(|(i, p)| p.first << index_bits | i as u64)
                .collect();
            radix_sort(&mut order, &mut self.scratch, |&r| r >> index_bits);
            let mask = (1u64 << index_bits) - 1;
            return order.iter().map(|&r| entry(&self.counted[(r & mask) as usize])).collect();
        }
        let mut by_first: Vec<(u64, u64)> =
            self.counted.iter().enumerate().map(|(i, p)| (p.first, i as u64)).collect();
        radix_sort(&mut by_first, &mut Vec::new(), |&(first, _)| first);
        by_first.iter().map(|&(_, i)| entry(&self.counted[i as usize])).collect()
    }
}

/// Merges two key-sorted count lists; a key in both sums its counts and keeps the earlier
/// first occurrence (`old` was counted before `new`).
fn merge_counts(old: Vec<PairCount>, new: Vec<PairCount>) -> Vec<PairCount> {
    if old.is_empty() {
        return new;
    }
    let mut out = Vec::with_capacity(old.len() + new.len());
    let (mut a, mut b) = (old.into_iter().peekable(), new.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.key == y.key => {
                let (x, y) = (a.next(), b.next());
                x.zip(y).map(|(x, y)| PairCount {
                    key: x.key,
                    count: x.count + y.count,
                    first: x.first,
                })
            }
            (Some(x), Some(y)) if x.key < y.key => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        out.extend(next);
    }
    out
}

/// Stable LSD radix sort by a `u64` key, one byte per pass, skipping the bytes all keys share
/// (ids are small, so most high bytes are). Hand-written rather than a crate: it is a few lines,
/// and the records here need stability (first occurrence first) and the pass skipping.
fn radix_sort<T: Copy>(data: &mut Vec<T>, scratch: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    let Some(&first) = data.first() else { return };
    let bytes = (bit_width(data.iter().fold(0, |acc, item| acc | key(item))) as usize).div_ceil(8);
    let mut histograms = vec![[0usize; 256]; bytes];
    for item in data.iter() {
        let k = key(item);
        for (byte, histogram) in histograms.iter_mut().enumerate() {
            histogram[(k >> (8 * byte)) as usize & 0xff] += 1;
        }
    }
    scratch.clear();
    scratch.resize(data.len(), first);
    for (byte, histogram) in histograms.iter().enumerate() {
        if histogram.contains(&data.len()) {
            continue; // every key has the same byte here
        }
        let mut offsets = [0usize; 256];
        let mut sum = 0;
        for (offset, &n) in offsets.iter_mut().zip(histogram) {
            *offset = sum;
            sum += n;
        }
        for item in data.iter() {
            let digit = (key(item) >> (8 * byte)) as usize & 0xff;
            scratch[offsets[digit]] = *item;
            offsets[digit] += 1;
        }
        std::mem::swap(data, scratch);
    }
}

/// Names of the tables a finder of each order keeps besides words and n-grams, in NLTK's
/// attribute names. Trigram: `bigram_fd` (w1 w2), `wildcard_fd` (w1 _ w3). Quadgram: `ii`,
/// `iii`, `ixi`, `ixxi`, `iixi`, `ixii` (i = a word, x = any word).
pub fn auxiliary_tables(order: usize) -> &'static [(&'static str, usize)] {
    match order {
        3 => &[("bigram_fd", 2), ("wildcard_fd", 2)],
        4 => &[("ii", 2), ("iii", 3), ("ixi", 2), ("ixxi", 2), ("iixi", 3), ("ixii", 3)],
        _ => &[],
    }
}

// Indices into `Counts::aux` (see `auxiliary_tables`).
const BIGRAM: usize = 0;
const WILDCARD: usize = 1;
const II: usize = 0;
const III: usize = 1;
const IXI: usize = 2;
const IXXI: usize = 3;
const IIXI: usize = 4;
const IXII: usize = 5;

/// All counts of one collocation finder: words, the candidate n-grams, and the auxiliary
/// tables the association measures need.
#[derive(Debug, Clone)]
pub struct Counts {
    /// Word counts by id while streaming; moved into `words` by `WindowCounter::finish`.
    streaming_words: Vec<u64>,
    pub order: usize,
    pub window_size: usize,
    pub vocab: Vocab,
    pub words: Table,
    /// The candidates; filters remove entries from this table only (as in NLTK).
    pub ngrams: Table,
    /// Bigram windows while streaming (order 2); moved into `ngrams` by `WindowCounter::finish`.
    pairs: PairCounter,
    pub aux: Vec<Table>,
}

impl Counts {
    /// Empty counts for bigrams (order 2), trigrams (3) or quadgrams (4) in windows of
    /// `window_size ≥ order` words.
    pub fn new(order: usize, window_size: usize) -> Result<Self> {
        if !(2..=4).contains(&order) {
            return Err(Error::InvalidArgument(format!(
                "n-gram order must be 2, 3 or 4, not {order}"
            )));
        }
        if window_size < order {
            return Err(Error::InvalidArgument(format!("Specify window_size at least {order}")));
        }
        Ok(Counts {
            streaming_words: Vec::new(),
            order,
            window_size,
            vocab: Vocab::default(),
            words: Table::new(1),
            ngrams: Table::new(order),
            pairs: PairCounter::default(),
            aux: auxiliary_tables(order).iter().map(|&(_, arity)| Table::new(arity)).collect(),
        })
    }

    /// The total `N` the measures use: the sum of the word table (`word_fd.N()`).
    pub fn n_total(&self) -> u64 {
        self.words.total()
    }

    /// A table by its NLTK attribute name (`word_fd`, `ngram_fd`, or an auxiliary name).
    pub fn table(&self, name: &str) -> Option<&Table> {
        match name {
            "word_fd" => Some(&self.words),
            "ngram_fd" => Some(&self.ngrams),
            _ => auxiliary_tables(self.order)
                .iter()
                .position(|&(n, _)| n == name)
                .map(|i| &self.aux[i]),
        }
    }

    /// One more count of `w1` as a window's first word. Counted densely by id: `word_fd`'s
    /// insertion order is the order in which words first start a window, which is their id order
    /// (every word occurrence starts a window, and ids are assigned in stream order).
    #[inline]
    fn count_word(&mut self, w1: WordId) {
        let i = w1 as usize;
        if i >= self.streaming_words.len() {
            self.streaming_words.resize(i + 1, 0);
        }
        self.streaming_words[i] += 1;
    }

    /// Moves the dense word counts into the `words` table, in id order.
    fn settle_words(&mut self) {
        let ordered = self.streaming_words.iter().enumerate().filter(|&(_, &count)| count > 0);
        let ordered = ordered.map(|(id, &count)| (pack(&[id as WordId]), count)).collect();
        self.words.extend_ordered(ordered);
        self.streaming_words = Vec::new();
    }

    /// Counts the windows starting at each word of `window` whose first slot is a word, as NLTK
    /// does for `ngrams(words, window_size, pad_right=True)`: `window[0]` is the first word,
    /// the rest its look-ahead (`None` = padding or past the end).
    fn count_window(&mut self, window: &[Option<WordId>]) {
        let Some(w1) = window[0] else { return };
        match self.order {
            2 => self.count_bigram_window(w1, &window[1..]),
            3 => self.count_trigram_window(w1, &window[1..]),
            _ => self.count_quadgram_window(w1, &window[1..]),
        }
    }

    fn count_bigram_window(&mut self, w1: WordId, rest: &[Option<WordId>]) {
        self.count_word(w1);
        for &w2 in rest.iter().flatten() {
            self.pairs.push(w1, w2);
        }
    }

    /// Every pair of later slots (p < q): NLTK counts w1 once per pair, so `word_fd` holds
    /// C(window_size − 1, 2) per occurrence.
    fn count_trigram_window(&mut self, w1: WordId, rest: &[Option<WordId>]) {
        for p in 0..rest.len() {
            for q in p + 1..rest.len() {
                self.count_word(w1);
                let Some(w2) = rest[p] else { continue };
                self.aux[BIGRAM].bump(pack(&[w1, w2]));
                let Some(w3) = rest[q] else { continue };
                self.aux[WILDCARD].bump(pack(&[w1, w3]));
                self.ngrams.bump(pack(&[w1, w2, w3]));
            }
        }
    }

    fn count_quadgram_window(&mut self, w1: WordId, rest: &[Option<WordId>]) {
        for p in 0..rest.len() {
            for q in p + 1..rest.len() {
                for r in q + 1..rest.len() {
                    self.count_word(w1);
                    let Some(w2) = rest[p] else { continue };
                    self.aux[II].bump(pack(&[w1, w2]));
                    let Some(w3) = rest[q] else { continue };
                    self.aux[III].bump(pack(&[w1, w2, w3]));
                    self.aux[IXI].bump(pack(&[w1, w3]));
                    let Some(w4) = rest[r] else { continue };
                    self.ngrams.bump(pack(&[w1, w2, w3, w4]));
                    self.aux[IXXI].bump(pack(&[w1, w4]));
                    self.aux[IXII].bump(pack(&[w1, w3, w4]));
                    self.aux[IIXI].bump(pack(&[w1, w2, w4]));
                }
            }
        }
    }

    /// A bigram finder's counts from a trigram finder's words and `bigram_fd` (NLTK's
    /// `bigram_finder()`: window size 2, no filters carried over).
    pub fn bigram_counts(&self) -> Result<Counts> {
        if self.order != 3 {
            return Err(Error::InvalidArgument("bigram_finder() needs trigram counts".into()));
        }
        let mut bigrams = Counts::new(2, 2)?;
        bigrams.vocab = self.vocab.clone();
        bigrams.words = self.words.clone();
        bigrams.ngrams = self.aux[BIGRAM].clone();
        Ok(bigrams)
    }
}

/// Feeds a stream of tokens through the window. Push words (or `None` for padding) and call
/// `finish` at the end; memory is the counts plus a window of ids.
#[derive(Debug)]
pub struct WindowCounter {
    counts: Counts,
    window: std::collections::VecDeque<Option<WordId>>,
    scratch: Vec<Option<WordId>>,
}

impl WindowCounter {
    pub fn new(order: usize, window_size: usize) -> Result<Self> {
        let counts = Counts::new(order, window_size)?;
        Ok(WindowCounter {
            counts,
            window: std::collections::VecDeque::with_capacity(window_size),
            scratch: Vec::with_capacity(window_size),
        })
    }

    pub fn window_size(&self) -> usize {
        self.counts.window_size
    }

    /// A word (bytes of a string), interned.
    pub fn push_word(&mut self, word: &[u8]) -> Result<()> {
        let id = self.counts.vocab.intern(word)?;
        self.push(Some(id));
        Ok(())
    }

    /// An already interned id, or `None` for a padding slot (never counted, never a w1).
    pub fn push(&mut self, token: Option<WordId>) {
        if self.counts.order == 2 && self.counts.window_size == 2 {
            // Adjacent pairs, the common case: the window is the previous slot and this one.
            if let Some(Some(w1)) = self.window.pop_front() {
                self.counts.count_word(w1);
                if let Some(w2) = token {
                    self.counts.pairs.push(w1, w2);
                }
            }
            self.window.push_back(token);
            return;
        }
        self.window.push_back(token);
        if self.window.len() == self.counts.window_size {
            self.emit_front();
        }
    }

    /// Counts the window starting at the front slot, then drops that slot.
    fn emit_front(&mut self) {
        self.scratch.clear();
        self.scratch.extend(self.window.iter().copied());
        self.scratch.resize(self.counts.window_size, None);
        let window = std::mem::take(&mut self.scratch);
        self.counts.count_window(&window);
        self.scratch = window;
        self.window.pop_front();
    }

    /// Counts the last, right-padded windows and returns the counts.
    pub fn finish(mut self) -> Counts {
        while !self.window.is_empty() {
            self.emit_front();
        }
        self.counts.settle_words();
        let pairs = std::mem::take(&mut self.counts.pairs).finish();
        self.counts.ngrams.extend_ordered(pairs);
        self.counts.ngrams.settle();
        self.counts.aux.iter_mut().for_each(Table::settle);
        self.counts
    }

    pub fn vocab(&self) -> &Vocab {
        &self.counts.vocab
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(order: usize, ws: usize, words: &[Option<&str>]) -> Counts {
        let mut c = WindowCounter::new(order, ws).unwrap();
        for w in words {
            match w {
                Some(w) => c.push_word(w.as_bytes()).unwrap(),
                None => c.push(None),
            }
        }
        c.finish()
    }

    fn get(c: &Counts, table: &str, words: &[&str]) -> u64 {
        let ids: Vec<u32> = words.iter().map(|w| c.vocab.get(w.as_bytes()).unwrap()).collect();
        c.table(table).unwrap().get(pack(&ids))
    }

    #[test]
    fn bigram_windows() {
        let words: Vec<Option<&str>> = "a b a b c".split(' ').map(Some).collect();
        let c = count(2, 3, &words);
        assert_eq!(c.n_total(), 5);
        assert_eq!(get(&c, "ngram_fd", &["a", "b"]), 2); // positions (0,1) and (2,3)
        assert_eq!(get(&c, "ngram_fd", &["a", "a"]), 1);
        assert_eq!(get(&c, "ngram_fd", &["b", "c"]), 1);
        assert_eq!(get(&c, "ngram_fd", &["a", "c"]), 1);
    }

    #[test]
    fn trigram_word_counts_are_per_pair() {
        let words: Vec<Option<&str>> = "a b c d".split(' ').map(Some).collect();
        let c = count(3, 4, &words);
        // Each occurrence counts C(3, 2) = 3 pairs, padded ones included.
        assert_eq!(c.n_total(), 12);
        assert_eq!(get(&c, "ngram_fd", &["a", "b", "d"]), 1);
        assert_eq!(get(&c, "wildcard_fd", &["a", "c"]), 1);
    }

    #[test]
    fn padding_separates_documents() {
        let c = count(2, 2, &[Some("a"), Some("b"), None, Some("c")]);
        assert_eq!(c.n_total(), 3);
        assert_eq!(c.ngrams.len(), 1);
    }

    #[test]
    fn pair_counter_matches_a_hash_map_in_first_occurrence_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for limit in [1, 7, 1000] {
            let mut counter = PairCounter { limit, ..Default::default() };
            let mut expected: Vec<(NgramKey, u64)> = Vec::new();
            let mut position: FxHashMap<NgramKey, usize> = FxHashMap::default();
            for _ in 0..5000 {
                // Ids spread over several bytes, so that several radix passes run.
                let (w1, w2) = (rng.gen_range(0..40u32) * 70_001, rng.gen_range(0..40u32) * 257);
                // Some huge ids too: those buffers take the unpacked path.
                let w1 = if limit == 7 && w1 % 3 == 0 { w1 | 0x8000_0000 } else { w1 };
                counter.push(w1, w2);
                let key = pack(&[w1, w2]);
                match position.get(&key) {
                    Some(&p) => expected[p].1 += 1,
                    None => {
                        position.insert(key, expected.len());
                        expected.push((key, 1));
                    }
                }
            }
            assert_eq!(counter.finish(), expected, "buffer of {limit}");
        }
    }

    #[test]
    fn table_lookups_follow_filters() {
        let mut t = Table::new(1);
        t.extend_ordered(vec![(5, 2), (7, 1), (9, 3)]);
        assert_eq!(t.get(7), 1);
        t.retain(|_, c| c > 1);
        assert_eq!((t.get(7), t.get(9), t.len()), (0, 3, 2));
        t.add(9, 1);
        t.add(4, 1);
        assert_eq!(t.iter().collect::<Vec<_>>(), [(5, 2), (9, 4), (4, 1)]);
    }

    #[test]
    fn rejects_bad_orders() {
        assert!(Counts::new(5, 5).is_err());
        assert!(Counts::new(3, 2).is_err());
    }
}
