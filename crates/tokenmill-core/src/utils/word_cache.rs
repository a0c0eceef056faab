//! The word cache of the models (BPE, WordPiece, tiktoken, SentencePiece BPE): word → its
//! tokens as `(id, byte length)`.
//!
//! The hot path never takes a lock, touches an atomic or writes a cache line another thread
//! reads. Each thread keeps one table per model (keyed by the model's cache id, which changes
//! when the model's options change), the table of the model used last in a fast slot so that a
//! batch on one model never hashes the model id. A table is a small direct-mapped front table
//! of the short words seen last (`hot`, per thread) in front of the model's words, which are
//! held once for all threads: an immutable snapshot every thread reads, plus each thread's own
//! words the snapshot lacks yet (see `utils/shared_snapshot.rs`; a miss there looks for a newer
//! snapshot, and, when batches run on several threads, at the words the other threads stored
//! since). So two threads keep one copy of the large table in the L3 cache rather than two
//! (20 MB of English has ~230,000 distinct SentencePiece words), and a word one thread tokenized is
//! soon found by the others.
//!
//! Layout, chosen because lookups are most of the time of a warm encode: words of at most
//! `SHORT_WORD_BYTES` bytes whose tokens fit `SHORT_TOKENS` (nearly every word of prose: 99.8%
//! of the distinct words of 20 MB of English) live inline in a 40-byte entry (no pointer to
//! follow, fixed-size key compared as three machine words, no `memcmp` call); longer words go to
//! a second map with boxed keys. Memory: about 40–90 bytes per cached short word depending on
//! the snapshot's size (so the default 262,144 words cost at most ~24 MB per model, for all
//! threads; during a rebuild the old and the new snapshot both exist), each thread's own words
//! (fewer than half the snapshot's) and its 320 KB front table come on top. When a model's
//! words reach `capacity` no more are taken (as `tokenizers` does): the frequent words of a
//! corpus come first.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use super::shared_snapshot::{Local, Registry, SnapshotMap};

/// Cache ids come from this counter, so they are never 0 and never have bit 63 set (a model may
/// use that bit to keep a second table, as BPE does for words given as raw bytes).
static NEXT_CACHE_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh cache id: a model takes a new one whenever its answers may change (new vocabulary,
/// new options), which leaves the old tables unused in every thread.
pub(crate) fn new_cache_id() -> u64 {
    NEXT_CACHE_ID.fetch_add(1, Ordering::Relaxed)
}

/// Words up to this many bytes are stored inline.
const SHORT_WORD_BYTES: usize = 23;
/// Words with up to this many tokens are stored inline.
const SHORT_TOKENS: usize = 3;
/// Words of this many bytes or more are not cached (as `tokenizers`).
pub(crate) const MAX_CACHED_WORD_BYTES: usize = 256;
/// Slots of the direct-mapped front table (a power of two): 8,192 × 40 bytes (320 KB) stay in a
/// core's L2 cache, and the few thousand most frequent words make most of any text. A lookup
/// that misses here goes to the large table, usually a cache miss: on 20 MB of English (BERT's
/// pre-tokenization, 60k distinct words) 8,192 slots catch 91% of the words, 4,096 only 87%.
const HOT_SLOTS: usize = 8192;
/// A thread keeps tables for at most this many models; beyond it the tables are dropped
/// (keeps memory bounded when many models are created and dropped).
const MAX_CACHED_MODELS_PER_THREAD: usize = 64;

/// A short word: its bytes, zero-padded, and its length in the last byte.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(align(8))]
struct ShortWord([u8; SHORT_WORD_BYTES + 1]);

impl std::hash::Hash for ShortWord {
    /// As three machine words (the derived hash would feed the bytes and a length prefix).
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words().iter().for_each(|&w| state.write_u64(w));
    }
}

impl ShortWord {
    /// Marks an empty hot slot (no real word has this length byte).
    const EMPTY: ShortWord = ShortWord([u8::MAX; SHORT_WORD_BYTES + 1]);

    #[inline]
    fn words(&self) -> [u64; 3] {
        let mut out = [0u64; 3];
        for (w, chunk) in out.iter_mut().zip(self.0.chunks_exact(8)) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(chunk);
            *w = u64::from_le_bytes(bytes);
        }
        out
    }

    /// The hot slot of this word (a multiplicative hash of its three machine words).
    #[inline]
    fn hot_slot(&self) -> usize {
        let [a, b, c] = self.words();
        let mixed = (a ^ b.rotate_left(21) ^ c.rotate_left(42)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - HOT_SLOTS.trailing_zeros())) as usize
    }

    /// The key of `word` (see [`short_key`]), or None when it is too long.
    #[inline(always)]
    fn new(word: &[u8]) -> Option<Self> {
        let [a, b, c] = short_key(word)?;
        let mut key = [0u8; SHORT_WORD_BYTES + 1];
        key[..8].copy_from_slice(&a.to_le_bytes());
        key[8..16].copy_from_slice(&b.to_le_bytes());
        key[16..].copy_from_slice(&c.to_le_bytes());
        Some(ShortWord(key))
    }
}

/// A word of at most `SHORT_WORD_BYTES` bytes as three little-endian machine words: its bytes
/// zero-padded, its length in the last byte (None when it is longer). Built from a few
/// whole-word loads rather than a byte copy: the copy is a `memcpy` call of unknown length, and
/// reading the key back right after a byte-wise write stalls on store forwarding; this is on
/// every word's lookup (here and in the SentencePiece Unigram cache).
#[inline]
pub(crate) fn short_key(word: &[u8]) -> Option<[u64; 3]> {
    let len = word.len();
    if len > SHORT_WORD_BYTES {
        return None;
    }
    let [a, b, c] = match len {
        0..=8 => [load_up_to_8(word), 0, 0],
        9..=16 => [load_8(word), load_up_to_8(&word[8..]), 0],
        _ => [load_8(word), load_8(&word[8..]), load_up_to_8(&word[16..])],
    };
    Some([a, b, c | ((len as u64) << 56)])
}

/// The first 8 bytes of `bytes` (at least 8 long) as a little-endian word.
#[inline]
fn load_8(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// `bytes` (at most 8) as a little-endian word, zero-padded: two overlapping loads of 4 (or 2,
/// or 1) bytes, so that no byte past the end is read and no loop runs.
#[inline]
fn load_up_to_8(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let load_4 = |at: usize| {
        u64::from(u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]))
    };
    let load_2 = |at: usize| u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
    match len {
        0 => 0,
        1 => u64::from(bytes[0]),
        2..=3 => load_2(0) | (load_2(len - 2) << (8 * (len - 2))),
        4..=7 => load_4(0) | (load_4(len - 4) << (8 * (len - 4))),
        _ => load_8(bytes),
    }
}

/// The tokens of a short word: ids and byte lengths, `count` of them.
#[derive(Clone, Copy)]
struct ShortTokens {
    ids: [u32; SHORT_TOKENS],
    lens: [u8; SHORT_TOKENS],
    count: u8,
}

impl ShortTokens {
    /// `None` when there are too many tokens or one is too long to be stored inline.
    fn new(tokens: impl Iterator<Item = (u32, u32)>) -> Option<Self> {
        let mut short = ShortTokens { ids: [0; SHORT_TOKENS], lens: [0; SHORT_TOKENS], count: 0 };
        for (k, (id, len)) in tokens.enumerate() {
            if k >= SHORT_TOKENS || len > u32::from(u8::MAX) {
                return None;
            }
            short.ids[k] = id;
            short.lens[k] = len as u8;
            short.count += 1;
        }
        Some(short)
    }
}

/// One model's cached words in one thread: the words shared by all threads (a snapshot
/// every thread reads, see [`super::shared_snapshot`]) and this thread's own words the snapshot
/// lacks, and the short words seen last copied in `hot`, a direct-mapped table small enough to stay
/// in the core's cache.
struct Table {
    hot: Box<[(ShortWord, ShortTokens)]>,
    /// Set on the first miss (a table that never missed has stored nothing).
    words: Option<Local<Words>>,
}

impl Default for Table {
    fn default() -> Self {
        let empty = (
            ShortWord::EMPTY,
            ShortTokens { ids: [0; SHORT_TOKENS], lens: [0; SHORT_TOKENS], count: 0 },
        );
        Table { hot: vec![empty; HOT_SLOTS].into_boxed_slice(), words: None }
    }
}

impl ShortTokens {
    #[inline(always)]
    fn replay(&self, emit: &mut impl FnMut(u32, usize)) {
        for k in 0..self.count as usize {
            emit(self.ids[k], self.lens[k] as usize);
        }
    }
}

/// Cached words: short ones inline, the others with boxed keys.
/// A long word's tokens as (id, byte length).
type LongTokens = Box<[(u32, u32)]>;

#[derive(Default, Clone)]
struct Words {
    short: FxHashMap<ShortWord, ShortTokens>,
    long: FxHashMap<Box<[u8]>, LongTokens>,
}

impl Words {
    #[inline]
    fn long_tokens(&self, word: &[u8]) -> Option<&[(u32, u32)]> {
        if self.long.is_empty() {
            return None;
        }
        self.long.get(word).map(|tokens| &**tokens)
    }

    /// The tokens of `word`, copied.
    fn tokens(&self, word: &[u8]) -> Option<Vec<(u32, u32)>> {
        let short = ShortWord::new(word).and_then(|key| self.short.get(&key));
        let short = short
            .map(|t| (0..t.count as usize).map(|k| (t.ids[k], u32::from(t.lens[k]))).collect());
        short.or_else(|| self.long_tokens(word).map(<[_]>::to_vec))
    }

    fn insert(&mut self, word: &[u8], tokens: impl Iterator<Item = (u32, u32)> + Clone) {
        match ShortWord::new(word).and_then(|key| Some((key, ShortTokens::new(tokens.clone())?))) {
            Some((key, short)) => {
                self.short.insert(key, short);
            }
            None => {
                self.long.insert(word.into(), tokens.collect());
            }
        }
    }
}

impl SnapshotMap for Words {
    fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    fn merged(&self, pending: &Self, capacity: usize) -> Self {
        let wanted = (self.short.len() + pending.short.len()).min(capacity);
        // A copy keeps every entry in its bucket, but growing the copy would then move them all
        // again: when the map must grow, its entries are inserted into one with room for half
        // again as many words. A map sized just for its words probes further (one-thread
        // Mistral looked 5-10% slower in noisy probes with its snapshot at 80% load); one with
        // room for twice them made GPT-2's 95,000 words take twice the memory, and one-thread
        // GPT-2 ~9% slower.
        let mut next = if self.short.capacity() >= wanted {
            self.clone()
        } else {
            let mut short =
                FxHashMap::with_capacity_and_hasher(wanted + wanted / 2, Default::default());
            short.extend(self.short.iter().map(|(key, tokens)| (*key, *tokens)));
            Words { short, long: self.long.clone() }
        };
        for (key, tokens) in &pending.short {
            if next.len() >= capacity {
                return next;
            }
            next.short.insert(*key, *tokens);
        }
        for (word, tokens) in &pending.long {
            if next.len() >= capacity {
                break;
            }
            next.long.entry(word.clone()).or_insert_with(|| tokens.clone());
        }
        next
    }

    fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }
}

/// The words of every model, shared by the threads.
static SHARED_WORDS: Registry<Words> = Registry::new();

impl Table {
    /// Calls `emit(id, byte length)` per cached token of `word`; false when it is not cached.
    #[inline(always)]
    fn replay(&mut self, word: &[u8], emit: &mut impl FnMut(u32, usize)) -> bool {
        let key = ShortWord::new(word);
        if let Some(key) = key {
            let slot = key.hot_slot();
            if self.hot[slot].0 == key {
                self.hot[slot].1.replay(emit);
                return true;
            }
        }
        let Some(words) = &self.words else { return false };
        let (snapshot, private) = (words.snapshot(), words.private());
        if let Some(key) = key {
            if let Some(&tokens) = snapshot.short.get(&key).or_else(|| private.short.get(&key)) {
                self.hot[key.hot_slot()] = (key, tokens);
                tokens.replay(emit);
                return true;
            }
        }
        match snapshot.long_tokens(word).or_else(|| private.long_tokens(word)) {
            Some(tokens) => {
                tokens.iter().for_each(|&(id, len)| emit(id, len as usize));
                true
            }
            None => false,
        }
    }

    fn words(&mut self, cache_id: u64) -> &mut Local<Words> {
        self.words.get_or_insert_with(|| SHARED_WORDS.local(cache_id))
    }

    /// After `replay` missed: looks again if this thread's view is new or another thread
    /// published a newer snapshot, then,
    /// if `share()`, in the words the other threads stored since (copied into this thread's
    /// own words when found there).
    #[cold]
    #[inline(never)]
    fn replay_missed(
        &mut self,
        cache_id: u64,
        share: impl Fn() -> bool,
        word: &[u8],
        emit: &mut impl FnMut(u32, usize),
    ) -> bool {
        let first_use = self.words.is_none();
        let newer = self.words(cache_id).refresh();
        ((first_use || newer) && self.replay(word, emit))
            || (share() && self.replay_pending(cache_id, word, emit))
    }

    /// `replay` from the words the other threads stored since the last snapshot.
    fn replay_pending(
        &mut self,
        cache_id: u64,
        word: &[u8],
        emit: &mut impl FnMut(u32, usize),
    ) -> bool {
        let found = self.words(cache_id).find_pending(
            |pending| pending.tokens(word),
            |own, tokens| own.insert(word, tokens.iter().copied()),
        );
        found.map(|tokens| tokens.iter().for_each(|&(id, len)| emit(id, len as usize))).is_some()
    }

    /// Stores `word` for this thread and the others unless this thread sees `capacity` words.
    fn store(
        &mut self,
        cache_id: u64,
        capacity: usize,
        word: &[u8],
        tokens: impl Iterator<Item = (u32, u32)> + Clone,
    ) {
        if !self.words(cache_id).store(capacity, |words| words.insert(word, tokens.clone())) {
            return;
        }
        if let Some((key, short)) =
            ShortWord::new(word).and_then(|key| Some((key, ShortTokens::new(tokens)?)))
        {
            self.hot[key.hot_slot()] = (key, short);
        }
    }
}

/// A thread's tables: the last used one in `current`, the others by cache id (also the
/// SentencePiece Unigram cache's, with its own table type).
#[derive(Default)]
pub(crate) struct ThreadTables<T> {
    current_id: u64,
    current: T,
    others: FxHashMap<u64, T>,
}

impl<T: Default> ThreadTables<T> {
    /// Makes `cache_id`'s table the current one (creating it if needed).
    pub(crate) fn select(&mut self, cache_id: u64) -> &mut T {
        if self.current_id != cache_id {
            let table = self.others.remove(&cache_id).unwrap_or_default();
            let previous = std::mem::replace(&mut self.current, table);
            if self.current_id != 0 {
                if self.others.len() >= MAX_CACHED_MODELS_PER_THREAD {
                    self.others.clear();
                }
                self.others.insert(self.current_id, previous);
            }
            self.current_id = cache_id;
        }
        &mut self.current
    }
}

thread_local! {
    static TABLES: RefCell<ThreadTables<Table>> = RefCell::new(ThreadTables::default());
}

/// Replays the cached tokens of `word` for the model with `cache_id` (never 0): calls
/// `emit(id, byte length)` per token and returns true, or returns false if it is not cached.
#[inline]
pub(crate) fn replay(cache_id: u64, word: &[u8], emit: impl FnMut(u32, usize)) -> bool {
    replay_sharing(sharing, cache_id, word, emit)
}

/// Whether a miss looks in the words other threads stored since the last snapshot: only when
/// batches run on more than one thread (with one, there is no other thread to share with).
fn sharing() -> bool {
    crate::utils::parallel::may_run_in_parallel()
}

/// `replay`, with the pending words of the other threads consulted on a miss if `share()` says
/// so (asked only then: the common case, a hit, does not pay for it).
#[inline]
fn replay_sharing(
    share: impl Fn() -> bool,
    cache_id: u64,
    word: &[u8],
    mut emit: impl FnMut(u32, usize),
) -> bool {
    if word.len() >= MAX_CACHED_WORD_BYTES {
        return false; // never stored: no need to hash a long word (tiktoken's pieces may be MBs)
    }
    TABLES.with(|cell| match cell.try_borrow_mut() {
        Ok(mut tables) => {
            let table = tables.select(cache_id);
            table.replay(word, &mut emit) || table.replay_missed(cache_id, share, word, &mut emit)
        }
        // Only reachable if `emit` re-enters the cache; then simply do not use it.
        Err(_) => false,
    })
}

/// Caches `tokens` (`(id, byte length)` each) for `word`, for every thread, unless this thread
/// sees `capacity` words already or the word is too long.
pub(crate) fn store(cache_id: u64, capacity: usize, word: &[u8], tokens: &[(u32, u32)]) {
    store_with(cache_id, capacity, word, tokens.iter().copied())
}

/// `store` with the tokens given by an iterator (walked at most three times).
pub(crate) fn store_with(
    cache_id: u64,
    capacity: usize,
    word: &[u8],
    tokens: impl Iterator<Item = (u32, u32)> + Clone,
) {
    if word.len() >= MAX_CACHED_WORD_BYTES {
        return;
    }
    TABLES.with(|cell| {
        if let Ok(mut tables) = cell.try_borrow_mut() {
            tables.select(cache_id).store(cache_id, capacity, word, tokens);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replayed(cache_id: u64, word: &str) -> Option<Vec<(u32, usize)>> {
        let mut out = Vec::new();
        replay(cache_id, word.as_bytes(), |id, len| out.push((id, len))).then_some(out)
    }

    #[test]
    fn short_and_long_words_round_trip_per_model() {
        let long_word = "x".repeat(40);
        let many_tokens = [(1, 1), (2, 1), (3, 1), (4, 1)];
        store(101, 10, b"ab", &[(7, 2)]);
        store(101, 10, b"abcd", &many_tokens);
        store(101, 10, long_word.as_bytes(), &[(9, 40)]);
        store(102, 10, b"ab", &[(8, 1), (9, 1)]);
        assert_eq!(replayed(101, "ab"), Some(vec![(7, 2)]));
        assert_eq!(
            replayed(101, "abcd"),
            Some(many_tokens.iter().map(|&(i, l)| (i, l as usize)).collect())
        );
        assert_eq!(replayed(101, &long_word), Some(vec![(9, 40)]));
        assert_eq!(replayed(102, "ab"), Some(vec![(8, 1), (9, 1)]));
        assert_eq!(replayed(101, "a"), None);
        // "ab" and "ab\0" differ (the length is part of the key).
        assert_eq!(replayed(101, "ab\0"), None);
    }

    #[test]
    fn keys_are_the_zero_padded_bytes_and_length() {
        let text: Vec<u8> = (1..=30u8).collect();
        for len in 0..=SHORT_WORD_BYTES {
            let mut expected = [0u8; SHORT_WORD_BYTES + 1];
            expected[..len].copy_from_slice(&text[..len]);
            expected[SHORT_WORD_BYTES] = len as u8;
            assert!(ShortWord::new(&text[..len]) == Some(ShortWord(expected)), "length {len}");
        }
        assert!(ShortWord::new(&text[..SHORT_WORD_BYTES + 1]).is_none());
    }

    #[test]
    fn words_stored_by_one_thread_are_found_by_another() {
        let long_word = "y".repeat(30);
        let (id, capacity) = (new_cache_id(), 100);
        std::thread::spawn(move || {
            store(id, capacity, b"shared", &[(5, 3), (6, 3)]);
            store(id, capacity, long_word.as_bytes(), &[(7, 30)]);
        })
        .join()
        .unwrap();
        let found = |share: bool, word: &[u8]| {
            let mut out = Vec::new();
            replay_sharing(|| share, id, word, |id, len| out.push((id, len))).then_some(out)
        };
        // Not in a snapshot yet: only found when sharing with the other threads.
        assert_eq!(found(false, b"shared"), None);
        assert_eq!(found(true, b"shared"), Some(vec![(5, 3), (6, 3)]));
        assert_eq!(found(true, "y".repeat(30).as_bytes()), Some(vec![(7, 30)]));
        assert_eq!(found(true, b"other"), None);
        // Now in this thread's own words too: found without sharing.
        assert_eq!(found(false, b"shared"), Some(vec![(5, 3), (6, 3)]));
    }

    #[test]
    fn published_words_are_found_by_every_thread_and_the_one_thread_path_keeps_its_words() {
        let id = new_cache_id();
        let words: Vec<String> = (0..10_000).map(|i| format!("w{i}")).collect();
        let stored = words.clone();
        std::thread::spawn(move || {
            for (i, word) in stored.iter().enumerate() {
                store(id, 1 << 20, word.as_bytes(), &[(i as u32, word.len() as u32)]);
            }
            // The storing thread itself sees every word, published or not.
            assert!(stored.iter().all(|word| replay_sharing(
                || false,
                id,
                word.as_bytes(),
                |_, _| {}
            )));
        })
        .join()
        .unwrap();
        // Published snapshots hold at least the first 8,192 words (two generations), read
        // without sharing; the rest are pending.
        for (i, word) in words.iter().enumerate().take(8192) {
            let mut out = Vec::new();
            assert!(
                replay_sharing(|| false, id, word.as_bytes(), |id, len| out.push((id, len))),
                "{word}"
            );
            assert_eq!(out, vec![(i as u32, word.len())]);
        }
        assert!(!replay_sharing(|| false, id, words[9999].as_bytes(), |_, _| {}));
    }

    #[test]
    fn full_tables_take_no_more_words() {
        store(201, 2, b"a", &[(1, 1)]);
        store(201, 2, b"b", &[(2, 1)]);
        store(201, 2, b"c", &[(3, 1)]);
        assert!(replayed(201, "b").is_some());
        assert_eq!(replayed(201, "c"), None);
    }
}
