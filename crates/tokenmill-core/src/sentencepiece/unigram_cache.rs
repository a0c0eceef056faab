//! The word cache of SentencePiece Unigram encoding: word → its best segmentation taken from
//! score 0, with the bound on the prefix score within which that segmentation is exact (see
//! `model::encode_unigram_words`). One table per processor, shared by all the threads that
//! encode with it, plus a small map per thread for the words the table cannot hold.
//!
//! Why not the models' shared word cache (`utils/word_cache.rs`): its inline entries hold at
//! most three tokens, and a small Unigram vocabulary (sentencepiece's 1,000-piece test model)
//! cuts a fifth of English words into four or more pieces, each then costing two hash-map
//! probes and two pointer chases, most of them misses to main memory. Here a word of up to 23
//! bytes and nine pieces is one 64-byte entry, aligned to a cache line, in an open-addressing
//! table probed linearly: one line per lookup, and the lines of the frequent words stay in the
//! core's caches by themselves (no separate front table to keep in sync).
//!
//! Why one table for all threads, filled without locks: with a table per thread, two threads
//! kept two copies of a text's ~200,000 distinct words (16 MB each, the whole of a 32 MB L3
//! together) and each tokenized the words the other had already done; two threads used ~10%
//! more CPU than one. Entries are only ever added, each written once by the thread that claims
//! its slot and published with a release store of its token count, so a lookup is plain loads
//! (an acquire load is a plain load on x86) with no lock, atomic read-modify-write or snapshot
//! to refresh. Two threads that miss the same word at once may both add it: the second copy
//! is identical (the segmentation of a word is deterministic) and lookups find the first.
//! The table has its final size from the start (its pages are taken from the system as words
//! land in them), which is what makes adding without locks simple: nothing is ever moved.
//!
//! The publication protocol is model-checked with loom: `RUSTFLAGS="--cfg loom" cargo test
//! -p tokenmill-core --lib loom_` runs the tests at the end of this file over every
//! interleaving of their threads (see `sync` below and docs/design/robustness.md).
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use sync::{AtomicU8, AtomicUsize, Field};

use rustc_hash::FxHashMap;

use crate::utils::prefetch::prefetch_line;
use crate::utils::word_cache::{short_key, ThreadTables};

/// Tokens stored inline per entry.
const INLINE_TOKENS: usize = 9;
/// Slots of a table (16 MB of address space; memory is committed page by page as words land).
#[cfg(not(loom))]
const SLOTS: usize = 1 << 18;
/// Words a table takes at most (three quarters of its slots; the frequent words of a text
/// come first, and a table that full still ends most probes within a few lines). Threads that
/// add words at once may overshoot it by one word each, far below the quarter kept free: a
/// table always has a free slot, which is what ends every probe.
#[cfg(not(loom))]
const MAX_WORDS: usize = SLOTS * 3 / 4;
/// The model checks' table: small enough for loom to try every interleaving, with one slot
/// free however their two writers race.
#[cfg(loom)]
const SLOTS: usize = 4;
#[cfg(loom)]
const MAX_WORDS: usize = 2;
/// Words in a thread's map of long words at most.
const MAX_LONG_WORDS: usize = 65_536;
/// A packed token: the id in the low 24 bits (vocabularies that use this cache have fewer ids),
/// the byte length in the top 8 (words are shorter than 256 bytes).
pub const ID_BITS: u32 = 24;
pub const ID_MASK: u32 = (1 << ID_BITS) - 1;

/// `Slot::count` of a slot no word has claimed.
const FREE: u8 = 0;
/// `Slot::count` of a slot whose word is being written.
const WRITING: u8 = u8::MAX;

/// One cached word: one cache line. All zeros is a free slot.
#[repr(C, align(64))]
struct Slot {
    /// [`short_key`] of the word.
    key: Field<[u64; 3]>,
    /// [`FREE`], [`WRITING`], or the number of tokens of a word that may be read.
    count: AtomicU8,
    limit_code: Field<u8>,
    has_unk: Field<bool>,
    tokens: Field<[u32; INLINE_TOKENS]>,
}

/// The slots' atomics and once-written fields: std's, or loom's when the crate is built with
/// `--cfg loom` for the model checks (loom's cells record each access, so that it can report
/// a read that races with the write of the same field).
mod sync {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicU8, AtomicUsize};
    #[cfg(not(loom))]
    pub use std::sync::atomic::{AtomicU8, AtomicUsize};

    /// A field of a slot, written once by the thread that claimed the slot.
    #[derive(Default)]
    pub struct Field<T>(
        #[cfg(not(loom))] std::cell::UnsafeCell<T>,
        #[cfg(loom)] loom::cell::UnsafeCell<T>,
    );

    impl<T> Field<T> {
        /// The field's value.
        ///
        /// # Safety
        /// No thread writes the field while the reference lives.
        #[inline(always)]
        pub unsafe fn read(&self) -> &T {
            #[cfg(not(loom))]
            return &*self.0.get();
            #[cfg(loom)]
            return self.0.with(|value| &*value);
        }

        /// Sets the field through `write`.
        ///
        /// # Safety
        /// No other thread reads or writes the field meanwhile.
        #[inline(always)]
        pub unsafe fn write(&self, write: impl FnOnce(&mut T)) {
            #[cfg(not(loom))]
            write(&mut *self.0.get());
            #[cfg(loom)]
            self.0.with_mut(|value| write(&mut *value));
        }
    }
}

// SAFETY: the non-atomic fields of a slot are written only by the one thread that moved its
// count from FREE to WRITING (a compare-exchange), and read only after an acquire load of a
// count other than FREE and WRITING, which the writer stores (release) after its last write and
// never changes again. So no field is ever read while it is written.
unsafe impl Sync for Slot {}

/// A cached word's segmentation as found in the cache.
#[derive(Clone, Copy)]
pub struct CachedWord<'a> {
    /// Packed tokens (`id | length << 24`), in order.
    pub tokens: &'a [u32],
    /// The code of the prefix-score limit (`model::limit_of_code`).
    pub limit_code: u8,
    /// Whether a token is the unknown piece (then ids need the unknown-piece rules).
    pub has_unk: bool,
}

/// The cache of one model, shared by every thread that encodes with it.
#[derive(Default)]
pub struct WordCache {
    /// [`SLOTS`] slots, allocated on first use.
    slots: OnceLock<Box<[Slot]>>,
    /// Words added (a thread's count may lag the others' additions; the limit is approximate
    /// by at most one word per thread, well within the quarter of the slots kept free).
    len: AtomicUsize,
}

impl std::fmt::Debug for WordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WordCache").field("words", &self.len.load(Ordering::Relaxed)).finish()
    }
}

/// Words a thread found too long for a [`WordCache`] entry (more than 23 bytes or nine tokens).
#[derive(Default)]
pub struct LongWords(FxHashMap<Box<[u8]>, LongWord>);

/// A long word's cached segmentation (the fields of a [`CachedWord`]).
struct LongWord {
    tokens: Box<[u32]>,
    limit_code: u8,
    has_unk: bool,
}

/// A thread's maps of long words, one per model (by cache id).
pub(crate) type LongWordMaps = ThreadTables<LongWords>;

/// A thread's view of a model's cache: the shared table and this thread's long words.
pub struct CacheView<'a> {
    slots: &'a [Slot],
    len: &'a AtomicUsize,
    long: &'a mut LongWords,
}

/// The first slot of a key: a multiplicative hash of its three words.
#[inline]
fn home(key: &[u64; 3], mask: usize) -> usize {
    let [a, b, c] = *key;
    let mixed = (a ^ b.rotate_left(21) ^ c.rotate_left(42)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 32) as usize & mask
}

/// `SLOTS` free slots, as zeroed memory: the system hands out zeroed pages lazily, so only the
/// pages that words land in are ever committed.
#[cfg(not(loom))]
fn free_slots() -> Box<[Slot]> {
    let layout = std::alloc::Layout::array::<Slot>(SLOTS).expect("a 16 MB layout");
    // SAFETY: the layout has a non-zero size; all zeros is a valid `Slot` (a free one: atomics
    // and integers of value 0, `false`); the pointer comes from the global allocator with this
    // very layout, which is what `Box` frees it with.
    unsafe {
        let memory = std::alloc::alloc_zeroed(layout).cast::<Slot>();
        if memory.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(memory, SLOTS))
    }
}

/// Loom's atomics and cells are not plain memory: its free slots are built one by one.
#[cfg(loom)]
fn free_slots() -> Box<[Slot]> {
    (0..SLOTS)
        .map(|_| Slot {
            key: Field::default(),
            count: AtomicU8::new(FREE),
            limit_code: Field::default(),
            has_unk: Field::default(),
            tokens: Field::default(),
        })
        .collect()
}

impl WordCache {
    /// This thread's view, with its map of long words.
    #[inline]
    pub fn view<'a>(&'a self, long: &'a mut LongWords) -> CacheView<'a> {
        CacheView { slots: self.slots.get_or_init(free_slots), len: &self.len, long }
    }
}

impl CacheView<'_> {
    /// The cached segmentation of `word`, if any (the encoder computes the key itself).
    #[cfg(test)]
    pub fn get(&self, word: &[u8]) -> Option<CachedWord<'_>> {
        self.get_keyed(word, short_key(word))
    }

    /// [`CacheView::get`] with the word's [`short_key`] computed by the caller.
    #[inline]
    pub fn get_keyed(&self, word: &[u8], key: Option<[u64; 3]>) -> Option<CachedWord<'_>> {
        let Some(key) = key else { return self.long_entry(word) };
        let mask = SLOTS - 1;
        let mut index = home(&key, mask);
        loop {
            let slot = &self.slots[index];
            match slot.count.load(Ordering::Acquire) {
                // Short words with more than `INLINE_TOKENS` tokens are in the long map.
                FREE => return self.long_entry(word),
                WRITING => {}
                count => {
                    // SAFETY: the count was published after the fields were written, and they
                    // never change again (see `Slot`).
                    let (slot_key, tokens, limit_code, has_unk) = unsafe {
                        (
                            slot.key.read(),
                            slot.tokens.read(),
                            *slot.limit_code.read(),
                            *slot.has_unk.read(),
                        )
                    };
                    if *slot_key == key {
                        return Some(CachedWord {
                            tokens: &tokens[..count as usize],
                            limit_code,
                            has_unk,
                        });
                    }
                }
            }
            index = (index + 1) & mask;
        }
    }

    /// Starts loading the line a word with this key is looked up in first. The encoder does
    /// it for the next several words before it looks any of them up, so that the lookups of
    /// words that are not in the core's caches (most distinct words are rare) wait for memory
    /// together rather than one after the other.
    #[inline]
    pub fn prefetch(&self, key: &[u64; 3]) {
        prefetch_line(&self.slots[home(key, SLOTS - 1)]);
    }

    #[inline]
    fn long_entry(&self, word: &[u8]) -> Option<CachedWord<'_>> {
        if self.long.0.is_empty() {
            return None;
        }
        self.long.0.get(word).map(|long| CachedWord {
            tokens: &long.tokens,
            limit_code: long.limit_code,
            has_unk: long.has_unk,
        })
    }

    /// Caches `tokens` (packed) for `word` unless the cache is full: in the shared table, or
    /// in this thread's long words if it does not fit an entry.
    pub fn insert(&mut self, word: &[u8], tokens: &[u32], limit_code: u8, has_unk: bool) {
        match short_key(word) {
            Some(key) if tokens.len() <= INLINE_TOKENS && !tokens.is_empty() => {
                self.insert_shared(key, tokens, limit_code, has_unk)
            }
            _ => {
                if self.long.0.len() < MAX_LONG_WORDS {
                    self.long.0.insert(
                        word.into(),
                        LongWord { tokens: tokens.into(), limit_code, has_unk },
                    );
                }
            }
        }
    }

    /// Writes the word into the first free slot from its home, unless a slot on the way holds
    /// it already (another thread added it) or the table is full.
    fn insert_shared(&self, key: [u64; 3], tokens: &[u32], limit_code: u8, has_unk: bool) {
        if self.len.load(Ordering::Relaxed) >= MAX_WORDS {
            return;
        }
        let mask = SLOTS - 1;
        let mut index = home(&key, mask);
        loop {
            let slot = &self.slots[index];
            match slot.count.compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => {
                    // SAFETY: this thread claimed the slot (FREE → WRITING): no other thread
                    // writes it, and none reads its fields before the count below (see `Slot`).
                    unsafe {
                        slot.key.write(|field| *field = key);
                        slot.limit_code.write(|field| *field = limit_code);
                        slot.has_unk.write(|field| *field = has_unk);
                        slot.tokens.write(|field| field[..tokens.len()].copy_from_slice(tokens));
                    }
                    slot.count.store(tokens.len() as u8, Ordering::Release);
                    self.len.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Err(WRITING) => {}
                // SAFETY: a published slot, read after the acquire load of its count.
                Err(_) if unsafe { *slot.key.read() } == key => return,
                Err(_) => {}
            }
            index = (index + 1) & mask;
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn cached(cache: &CacheView<'_>, word: &[u8]) -> Option<(Vec<u32>, u8, bool)> {
        cache.get(word).map(|c| (c.tokens.to_vec(), c.limit_code, c.has_unk))
    }

    fn tokens_of(i: usize) -> Vec<u32> {
        (0..=(i % 12) as u32).map(|k| k | (1 << ID_BITS)).collect()
    }

    #[test]
    fn words_round_trip_through_the_table_and_the_long_map() {
        let cache = WordCache::default();
        let mut long = LongWords::default();
        let mut view = cache.view(&mut long);
        let words: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("▁w{i}").into_bytes()).collect();
        for (i, word) in words.iter().enumerate() {
            view.insert(word, &tokens_of(i), (i % 200) as u8, i % 3 == 0);
        }
        let long_word = vec![b'x'; 40];
        view.insert(&long_word, &[5 | (40 << ID_BITS)], 7, false);
        for (i, word) in words.iter().enumerate() {
            assert_eq!(
                cached(&view, word),
                Some((tokens_of(i), (i % 200) as u8, i % 3 == 0)),
                "{i}"
            );
        }
        assert_eq!(cached(&view, &long_word), Some((vec![5 | (40 << ID_BITS)], 7, false)));
        assert_eq!(cached(&view, b"\xe2\x96\x81w20000"), None);
        assert_eq!(cached(&view, b""), None);
    }

    #[test]
    fn a_full_table_takes_no_more_words() {
        let cache = WordCache::default();
        let mut long = LongWords::default();
        let mut view = cache.view(&mut long);
        let n = MAX_WORDS + 10;
        for i in 0..n as u32 {
            view.insert(&i.to_le_bytes(), &[i & ID_MASK], 1, false);
        }
        assert_eq!(cache.len.load(Ordering::Relaxed), MAX_WORDS);
        let view = cache.view(&mut long);
        assert!(view.get(&0u32.to_le_bytes()).is_some());
        assert!(view.get(&(n as u32 - 1).to_le_bytes()).is_none());
    }

    #[test]
    fn threads_share_the_table_and_keep_their_own_long_words() {
        let cache = WordCache::default();
        let words: Vec<Vec<u8>> = (0..50_000u32).map(|i| format!("▁w{i}").into_bytes()).collect();
        let long_word = vec![b'y'; 30];
        // Both threads add every word (in opposite orders, so that they race on the same
        // slots) and read each one back at once.
        std::thread::scope(|scope| {
            for reverse in [false, true] {
                let (cache, words, long_word) = (&cache, &words, &long_word);
                scope.spawn(move || {
                    let mut long = LongWords::default();
                    let mut view = cache.view(&mut long);
                    let order: Vec<usize> = if reverse {
                        (0..words.len()).rev().collect()
                    } else {
                        (0..words.len()).collect()
                    };
                    for i in order {
                        view.insert(&words[i], &tokens_of(i), 3, false);
                        assert_eq!(cached(&view, &words[i]), Some((tokens_of(i), 3, false)));
                    }
                    view.insert(long_word, &[9 | (30 << ID_BITS)], 2, false);
                    assert!(cached(&view, long_word).is_some());
                });
            }
        });
        let mut long = LongWords::default();
        let view = cache.view(&mut long);
        for (i, word) in words.iter().enumerate() {
            let expected = if tokens_of(i).len() <= INLINE_TOKENS {
                Some((tokens_of(i), 3, false))
            } else {
                None
            };
            assert_eq!(cached(&view, word), expected, "{i}");
        }
        // A thread's long words are its own.
        assert_eq!(cached(&view, &long_word), None);
        // Words the two threads raced for may have been added twice, never more.
        let added = cache.len.load(Ordering::Relaxed);
        let short = (0..words.len()).filter(|&i| tokens_of(i).len() <= INLINE_TOKENS).count();
        assert!((short..=2 * short).contains(&added), "{added} words added for {short}");
    }
}

/// Model checks of the publication protocol with loom: every interleaving (up to a bound on
/// preemptions) of two writers and a reader, each checking that a word is either absent or
/// found whole, that loom sees no read of a field racing with its write, and that every probe
/// ends.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    fn check(model: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(model);
    }

    /// A cache whose table exists before the threads start (its `OnceLock` is std's).
    fn started_cache() -> Arc<WordCache> {
        let cache = Arc::new(WordCache::default());
        cache.view(&mut LongWords::default());
        cache
    }

    fn insert(cache: &WordCache, word: &[u8], tokens: &[u32]) {
        cache.view(&mut LongWords::default()).insert(word, tokens, 7, false);
    }

    /// The word's cached tokens, after checking that the entry is whole.
    fn lookup(cache: &WordCache, word: &[u8]) -> Option<Vec<u32>> {
        let mut long = LongWords::default();
        let view = cache.view(&mut long);
        let found = view.get(word)?;
        assert_eq!((found.limit_code, found.has_unk), (7, false));
        Some(found.tokens.to_vec())
    }

    /// A word whose key has the same first slot as `word`'s.
    fn colliding_with(word: &[u8]) -> Vec<u8> {
        let home_of = |word: &[u8]| home(&short_key(word).unwrap(), SLOTS - 1);
        (0..=u8::MAX)
            .map(|byte| vec![b'x', byte])
            .find(|other| home_of(other) == home_of(word))
            .unwrap()
    }

    #[test]
    fn loom_racing_inserts_of_one_word_and_a_reader() {
        check(|| {
            let cache = started_cache();
            let writers: Vec<_> = (0..2)
                .map(|_| {
                    let cache = cache.clone();
                    thread::spawn(move || insert(&cache, b"word", &[1, 2, 3]))
                })
                .collect();
            if let Some(tokens) = lookup(&cache, b"word") {
                assert_eq!(tokens, [1, 2, 3]);
            }
            writers.into_iter().for_each(|writer| writer.join().unwrap());
            assert_eq!(lookup(&cache, b"word"), Some(vec![1, 2, 3]));
            assert!((1..=2).contains(&cache.len.load(Ordering::Relaxed)));
        });
    }

    #[test]
    fn loom_colliding_words_and_a_reader_never_see_a_torn_entry() {
        check(|| {
            let cache = started_cache();
            let other = colliding_with(b"a");
            let words: [(Vec<u8>, Vec<u32>); 2] = [(b"a".to_vec(), vec![1, 2]), (other, vec![3])];
            let writers: Vec<_> = words
                .iter()
                .cloned()
                .map(|(word, tokens)| {
                    let cache = cache.clone();
                    thread::spawn(move || insert(&cache, &word, &tokens))
                })
                .collect();
            for (word, tokens) in &words {
                if let Some(found) = lookup(&cache, word) {
                    assert_eq!(&found, tokens);
                }
            }
            writers.into_iter().for_each(|writer| writer.join().unwrap());
            for (word, tokens) in &words {
                assert_eq!(lookup(&cache, word).as_ref(), Some(tokens));
            }
        });
    }

    #[test]
    fn loom_racing_writers_leave_a_free_slot_so_every_probe_ends() {
        check(|| {
            let cache = started_cache();
            insert(&cache, b"first", &[1]);
            let writers: Vec<_> = [b"second", b"third!"]
                .into_iter()
                .map(|word| {
                    let cache = cache.clone();
                    thread::spawn(move || insert(&cache, word, &[2]))
                })
                .collect();
            writers.into_iter().for_each(|writer| writer.join().unwrap());
            assert!(cache.len.load(Ordering::Relaxed) < SLOTS);
            // A word that is not there: the probe must reach a free slot.
            assert_eq!(lookup(&cache, b"absent"), None);
        });
    }
}
