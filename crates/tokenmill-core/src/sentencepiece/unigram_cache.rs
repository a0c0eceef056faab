//! The word cache of SentencePiece Unigram encoding: word → its best segmentation taken from
//! score 0, with the bound on the prefix score within which that segmentation is exact (see
//! `model::encode_unigram_words`). One per thread and model, in the processor's thread-local
//! scratch space, so the encode loop reaches it without a thread-local access per word.
//!
//! Why not the models' shared word cache (`utils/word_cache.rs`): its inline entries hold at
//! most three tokens, and a small Unigram vocabulary (sentencepiece's 1,000-piece test model)
//! cuts a fifth of English words into four or more pieces, each then costing two hash-map
//! probes and two pointer chases, most of them misses to main memory. Here a word of up to 23
//! bytes and nine pieces is one 64-byte entry, aligned to a cache line, in an open-addressing
//! table probed linearly: one line per lookup, and the lines of the frequent words stay in the
//! core's caches by themselves (no separate front table to keep in sync). Longer words go to a
//! hash map with boxed keys.
use rustc_hash::FxHashMap;

use crate::utils::word_cache::{short_key, ThreadTables};

/// Tokens stored inline per entry.
const INLINE_TOKENS: usize = 9;
/// Slots of a new table (256 KB); it doubles at half full.
const INITIAL_SLOTS: usize = 4096;
/// Slots of the largest table (16 MB); filled to three quarters (196,608 words), then it takes
/// no more words (the frequent words of a text come first).
const MAX_SLOTS: usize = 1 << 18;
/// Words in the map of long words at most.
const MAX_LONG_WORDS: usize = 65_536;
/// A packed token: the id in the low 24 bits (vocabularies that use this cache have fewer ids),
/// the byte length in the top 8 (words are shorter than 256 bytes).
pub const ID_BITS: u32 = 24;
pub const ID_MASK: u32 = (1 << ID_BITS) - 1;

/// One cached word: one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Entry {
    /// [`short_key`] of the word (zero in an empty slot, whose `count` is 0).
    key: [u64; 3],
    count: u8,
    limit_code: u8,
    has_unk: bool,
    tokens: [u32; INLINE_TOKENS],
}

const EMPTY: Entry = Entry { key: [0; 3], count: 0, limit_code: 0, has_unk: false, tokens: [0; INLINE_TOKENS] };

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

/// The cache of one model in one thread.
#[derive(Default)]
pub struct WordCache {
    /// A power of two of entries once the first word is stored.
    slots: Vec<Entry>,
    len: usize,
    long: FxHashMap<Box<[u8]>, (Box<[u32]>, u8, bool)>,
}

/// A thread's caches, one per model (by cache id).
pub(crate) type WordCaches = ThreadTables<WordCache>;

/// A hint to load `value`'s cache line (no effect on the program's results).
#[inline(always)]
fn prefetch_line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing and cannot fault; the address is a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The first slot of a key: a multiplicative hash of its three words.
#[inline]
fn home(key: &[u64; 3], mask: usize) -> usize {
    let [a, b, c] = *key;
    let mixed = (a ^ b.rotate_left(21) ^ c.rotate_left(42)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 32) as usize & mask
}

impl WordCache {
    /// The cached segmentation of `word`, if any.
    #[inline]
    pub fn get(&self, word: &[u8]) -> Option<CachedWord<'_>> {
        self.get_keyed(word, short_key(word))
    }

    /// [`WordCache::get`] with the word's [`short_key`] computed by the caller.
    #[inline]
    pub fn get_keyed(&self, word: &[u8], key: Option<[u64; 3]>) -> Option<CachedWord<'_>> {
        let Some(key) = key else { return self.long_entry(word) };
        if self.slots.is_empty() {
            return self.long_entry(word);
        }
        let mask = self.slots.len() - 1;
        let mut slot = home(&key, mask);
        loop {
            let entry = &self.slots[slot];
            if entry.count == 0 {
                // Short words with more than `INLINE_TOKENS` tokens are in the long map.
                return self.long_entry(word);
            }
            if entry.key == key {
                return Some(CachedWord { tokens: &entry.tokens[..entry.count as usize], limit_code: entry.limit_code, has_unk: entry.has_unk });
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Starts loading the line a word with this key is looked up in first. The encoder does
    /// it for the next several words before it looks any of them up, so that the lookups of
    /// words that are not in the core's caches (most distinct words are rare) wait for memory
    /// together rather than one after the other.
    #[inline]
    pub fn prefetch(&self, key: &[u64; 3]) {
        if let Some(entry) = self.slots.get(home(key, self.slots.len().wrapping_sub(1))) {
            prefetch_line(entry);
        }
    }

    #[inline]
    fn long_entry(&self, word: &[u8]) -> Option<CachedWord<'_>> {
        if self.long.is_empty() {
            return None;
        }
        self.long.get(word).map(|(tokens, limit_code, has_unk)| CachedWord { tokens, limit_code: *limit_code, has_unk: *has_unk })
    }

    /// Caches `tokens` (packed) for `word` unless the cache is full.
    pub fn insert(&mut self, word: &[u8], tokens: &[u32], limit_code: u8, has_unk: bool) {
        let key = match short_key(word) {
            Some(key) if tokens.len() <= INLINE_TOKENS && !tokens.is_empty() => key,
            _ => {
                if self.long.len() < MAX_LONG_WORDS {
                    self.long.insert(word.into(), (tokens.into(), limit_code, has_unk));
                }
                return;
            }
        };
        if (self.len + 1) * 2 > self.slots.len() {
            if self.slots.len() < MAX_SLOTS {
                self.grow();
            } else if (self.len + 1) * 4 > self.slots.len() * 3 {
                return;
            }
        }
        let mut entry = EMPTY;
        entry.key = key;
        entry.count = tokens.len() as u8;
        entry.limit_code = limit_code;
        entry.has_unk = has_unk;
        entry.tokens[..tokens.len()].copy_from_slice(tokens);
        self.place(entry);
        self.len += 1;
    }

    /// Puts `entry` in the first free slot from its home (the key is not in the table).
    fn place(&mut self, entry: Entry) {
        let mask = self.slots.len() - 1;
        let mut slot = home(&entry.key, mask);
        while self.slots[slot].count != 0 {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = entry;
    }

    fn grow(&mut self) {
        let slots = (self.slots.len() * 2).max(INITIAL_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; slots]);
        for entry in old.into_iter().filter(|e| e.count != 0) {
            self.place(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(cache: &WordCache, word: &[u8]) -> Option<(Vec<u32>, u8, bool)> {
        cache.get(word).map(|c| (c.tokens.to_vec(), c.limit_code, c.has_unk))
    }

    #[test]
    fn words_round_trip_through_growth_and_the_long_map() {
        let mut cache = WordCache::default();
        let words: Vec<Vec<u8>> = (0..20_000u32).map(|i| format!("▁w{i}").into_bytes()).collect();
        for (i, word) in words.iter().enumerate() {
            let tokens: Vec<u32> = (0..=(i % 12) as u32).map(|k| k | (1 << ID_BITS)).collect();
            cache.insert(word, &tokens, (i % 200) as u8, i % 3 == 0);
        }
        let long_word = vec![b'x'; 40];
        cache.insert(&long_word, &[5 | (40 << ID_BITS)], 7, false);
        for (i, word) in words.iter().enumerate() {
            let tokens: Vec<u32> = (0..=(i % 12) as u32).map(|k| k | (1 << ID_BITS)).collect();
            assert_eq!(cached(&cache, word), Some((tokens, (i % 200) as u8, i % 3 == 0)), "{i}");
        }
        assert_eq!(cached(&cache, &long_word), Some((vec![5 | (40 << ID_BITS)], 7, false)));
        assert_eq!(cached(&cache, b"\xe2\x96\x81w20000"), None);
        assert_eq!(cached(&cache, b""), None);
    }

    #[test]
    fn a_full_table_takes_no_more_words() {
        let mut cache = WordCache::default();
        let n = MAX_SLOTS * 3 / 4 + 10;
        for i in 0..n as u32 {
            cache.insert(&i.to_le_bytes(), &[i & ID_MASK], 1, false);
        }
        assert_eq!(cache.len, MAX_SLOTS * 3 / 4);
        assert!(cache.get(&0u32.to_le_bytes()).is_some());
        assert!(cache.get(&(n as u32 - 1).to_le_bytes()).is_none());
    }
}
