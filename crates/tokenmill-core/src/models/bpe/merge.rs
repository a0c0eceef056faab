//! The BPE merge kernel: the one place where byte-pair merges happen, for every BPE flavour.
//!
//! A word starts as a row of [`Symbol`]s (bytes `start..end` of the word, with an id). While
//! some adjacent pair may merge, the pair with the lowest priority merges into one symbol. What
//! "may merge", the priority and the merged id are the business of a [`PairRanker`]; the kernel
//! is generic over it (monomorphized: no virtual call per pair) and knows nothing of
//! vocabularies. The rankers in this crate:
//!
//! | ranker | symbols | may merge / priority | merged id |
//! |---|---|---|---|
//! | `tokenizers` (`model.rs`) | token ids | the rank (line) of the pair in merges.txt | merges |
//! | tiktoken (`tiktoken/bpe.rs`) | bytes | the rank of the concatenated bytes | that rank |
//! | sentencepiece (`sentencepiece/bpe.rs`) | chars | the piece's score, higher first | the piece |
//!
//! # Order of merges and ties
//! The pair with the lowest priority merges first; among equal priorities the leftmost pair
//! merges first. Every ranker above gives one priority to one merged result (a merges.txt rank
//! or a tiktoken rank names one pair of strings; equal sentencepiece scores are told apart by
//! position only, as bpe_model.cc's agenda does), so this rule fixes the result.
//!
//! # Algorithm
//! - **Long words** (and any word with dropout): the symbols live in a vector and are linked
//!   to their neighbours by index (a doubly linked list over a vector: merging rewrites two
//!   links, nothing moves). Each slot remembers the merge its pair with its right neighbour
//!   would make (or none). Every pair that may merge is queued in a min-heap (4-ary with
//!   dropout, else the radix heap `RadixQueue`) keyed by (priority, position), packed into
//!   one `u64` so one integer comparison orders the queue;
//!   the position of a pair is the index of its left symbol, which keeps text order because a
//!   merged symbol stays in its left symbol's slot. A merge re-ranks the two pairs it changes
//!   and queues them. Entries made stale by earlier merges are not removed: when one surfaces
//!   it is skipped unless its slot's pair still merges into the entry's id (lazy
//!   invalidation). At most n - 1 merges and O(n) entries: O(n log n) for n symbols. A 4-ary
//!   heap of 16-byte entries is shallower than `std`'s binary heap and misses the cache far
//!   less when a megabyte-long word queues a million entries.
//! - **Very long words** without dropout (a megabyte of digits or of one letter can be one
//!   piece): the heap path above touches the whole word in the order of the merges, a cache
//!   miss per merge once the word outgrows the core's caches, so the cost per byte would grow
//!   with the length. Such a word is merged in windows of `WINDOW_SYMBOLS` symbols instead,
//!   each starting where a merged symbol of the previous one starts, `WINDOW_OVERLAP` or
//!   more symbols before its end; the two are joined at the first merged symbol they share
//!   (same bytes, same id), which is exact (see `join_at_shared_symbol`). Should a window
//!   share no symbol with the previous one, the whole word is merged at once. (Not for a
//!   ranker that records what it ranks and reads it back: sentencepiece with unused pieces.)
//! - **Small words** without dropout (at most [`PairRanker::SMALL_WORD_SYMBOLS`] symbols, which
//!   is most words of real text): the same order by a linear scan for the lowest priority
//!   (leftmost among equals) over the slots, merging by shifting the tail left by one. O(n²),
//!   but for a handful of symbols it beats heap upkeep and allocates nothing. It ranks pairs in
//!   the heap's order (the initial pairs left to right, then after each merge the pair on its
//!   left before the pair on its right), so a ranker that records what it saw (sentencepiece's
//!   unused pieces) sees the same sequence on both paths.
//!
//! # Dropout
//! BPE-dropout skips merges at random; the two libraries we follow do it differently, and both
//! rules are kept exactly ([`Dropout`]):
//! - `tokenizers` ([`Dropout::Retry`]): a draw for every entry popped, stale or not, before it is
//!   checked; a skipped entry is queued again after the next popped entry is not skipped.
//! - sentencepiece ([`Dropout::Discard`]): a draw only for an entry that is still valid; a skipped
//!   pair is forgotten until a merge beside it re-ranks it.
use std::cmp::Ordering;

use dary_heap::QuaternaryHeap;

/// One symbol of a word: bytes `start..end` of the word, and the id its ranker gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Symbol {
    pub start: usize,
    pub end: usize,
    pub id: u32,
}

/// What a pair of adjacent symbols merges into: a symbol with id `id`, in the order of
/// `priority` (lowest first; see the module doc for ties).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merge {
    pub priority: u32,
    pub id: u32,
}

/// A library's merge rule: whether two adjacent symbols merge, when, and into what.
pub trait PairRanker {
    /// Words of at most this many symbols are merged by the linear scan (without dropout);
    /// a tuning knob, the result is the same either way.
    const SMALL_WORD_SYMBOLS: usize = 32;

    /// The merge of `left` and the symbol right after it, or `None` if they never merge.
    fn rank(&mut self, left: &Symbol, right: &Symbol) -> Option<Merge>;

    /// Whether long words may be merged in windows (see the module doc): true when `rank`
    /// depends on the two symbols alone and what it records (if anything) is never read.
    /// Asked once per long word.
    fn windows_allowed(&self) -> bool {
        true
    }
}

/// BPE-dropout: `skip()` draws whether the merge at hand is skipped (see the module doc).
pub enum Dropout<D: FnMut() -> bool> {
    /// `tokenizers`' rule: a draw per popped entry; skipped entries are queued again.
    Retry(D),
    /// sentencepiece's rule: a draw per valid entry; a skipped pair waits for a neighbour.
    Discard(D),
}

/// Words may hold at most this many symbols (positions are packed into 32 bits).
pub const MAX_SYMBOLS: usize = u32::MAX as usize;

/// No merge for this slot's pair (a priority is at most `u32::MAX`).
const NO_PAIR: u64 = u64::MAX;

/// No neighbour, in the links of the queued path.
const NONE: u32 = u32::MAX;

/// A symbol and the merge of its pair with the symbol to its right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    symbol: Symbol,
    /// The pair's priority, or `NO_PAIR` (also for a symbol merged into its left neighbour).
    pair: u64,
    /// The id the pair merges into (meaningful when `pair != NO_PAIR`).
    merged: u32,
}

/// A queued merge: `key` packs (priority, position) so that one comparison orders the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Queued {
    key: u64,
    merged: u32,
}

impl Queued {
    fn pos(&self) -> usize {
        (self.key & u64::from(u32::MAX)) as usize
    }
}

impl Ord for Queued {
    /// Reversed, so that the max-heap pops the smallest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The queue of pending merges: pops the entry with the smallest key (any one of equal keys).
trait MergeQueue {
    fn push(&mut self, entry: Queued);
    fn pop(&mut self) -> Option<Queued>;
}

impl MergeQueue for QuaternaryHeap<Queued> {
    #[inline]
    fn push(&mut self, entry: Queued) {
        QuaternaryHeap::push(self, entry);
    }

    #[inline]
    fn pop(&mut self) -> Option<Queued> {
        QuaternaryHeap::pop(self)
    }
}

/// Radix heap buckets: one for keys equal to the last minimum, one per highest differing bit.
const RADIX_BUCKETS: usize = 65;

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) with a side heap for the few keys that come
/// below the last minimum, so that it pops the smallest key exactly as a heap does.
///
/// A radix heap keeps the entries in buckets by the highest bit in which their key differs from
/// the last minimum taken out; only the lowest nonempty bucket is ever sorted out again, and an
/// entry only moves to lower buckets, each move a sequential append. A megabyte-long word
/// queues a million entries: a binary or 4-ary heap then misses the cache on nearly every level
/// of every pop (most of the time of a long piece), which makes the cost per byte grow with the
/// length; here it stays flat. A radix heap needs keys that never go below the last minimum; a
/// merge usually makes pairs of higher priority than its own (a longer token comes later in
/// training), and the others wait in `below`, a small heap, and are popped first when smaller.
struct RadixQueue {
    /// The last minimum found: every entry of `buckets` has a key at least this.
    last: u64,
    /// `buckets[0]`: keys equal to `last`; `buckets[i]`: keys whose highest bit differing from
    /// `last` is bit `i - 1`.
    buckets: [Vec<Queued>; RADIX_BUCKETS],
    /// Bit `i` set when `buckets[i]` is not empty.
    nonempty: u128,
    /// Entries whose key was below `last` when pushed.
    below: QuaternaryHeap<Queued>,
}

impl Default for RadixQueue {
    fn default() -> Self {
        RadixQueue {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            nonempty: 0,
            below: QuaternaryHeap::new(),
        }
    }
}

impl RadixQueue {
    #[inline(always)]
    fn bucket(&self, key: u64) -> usize {
        (u64::BITS - (key ^ self.last).leading_zeros()) as usize
    }

    /// Makes `buckets[0]` hold the smallest keys, if any entry is left.
    fn refill(&mut self) {
        let lowest = (self.nonempty & !1).trailing_zeros() as usize;
        if lowest >= RADIX_BUCKETS {
            return;
        }
        let mut moving = std::mem::take(&mut self.buckets[lowest]);
        self.nonempty &= !(1 << lowest);
        self.last = moving.iter().map(|e| e.key).min().unwrap_or(self.last);
        for &entry in &moving {
            let b = self.bucket(entry.key);
            self.buckets[b].push(entry);
            self.nonempty |= 1 << b;
        }
        moving.clear();
        if self.buckets[lowest].capacity() == 0 {
            self.buckets[lowest] = moving; // keeps the allocation
        }
    }
}

impl MergeQueue for RadixQueue {
    #[inline]
    fn push(&mut self, entry: Queued) {
        if entry.key < self.last {
            self.below.push(entry);
            return;
        }
        let b = self.bucket(entry.key);
        self.buckets[b].push(entry);
        self.nonempty |= 1 << b;
    }

    #[inline]
    fn pop(&mut self) -> Option<Queued> {
        if self.nonempty & 1 == 0 {
            self.refill();
        }
        let from_below = match (self.buckets[0].last(), self.below.peek()) {
            (Some(top), Some(below)) => below.key < top.key,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if from_below {
            return self.below.pop();
        }
        let entry = self.buckets[0].pop();
        if self.buckets[0].is_empty() {
            self.nonempty &= !1;
        }
        entry
    }
}

/// Words of at least this many symbols are merged in windows (when the ranker allows it).
const WINDOWED_WORD_SYMBOLS: usize = 4 * WINDOW_SYMBOLS;
/// The symbols of one window: its slots, links and queue stay in the core's own caches.
pub(crate) const WINDOW_SYMBOLS: usize = 16 * 1024;
/// How many symbols of the previous window a window re-reads, at least: where the two are
/// compared for a merged symbol they share.
pub(crate) const WINDOW_OVERLAP: usize = 1024;

/// Appends `window` (the merged symbols of a window, which starts where a symbol of `merged`
/// starts) to `merged` (the merged symbols of everything before the window's end) through the
/// first symbol the two share in their overlap: same bytes, same id. Returns false if they
/// share none. With `merged` empty (the first window) it appends the window.
///
/// Why this is exact: any stretch of a word's merged symbols is what merging that stretch
/// alone gives (no merge crossed its ends, and every other merge happens as before, in the
/// same order). So `merged` up to the shared symbol is the merge of the text up to that
/// symbol's end, and the window from the shared symbol on is the merge of the text from that
/// symbol's start. Merging the whole text cannot merge across either end of the shared symbol:
/// the first merge that did would be the first merge across it in one of the two shorter
/// texts, each of which merges exactly as the whole text does on its side until then. This is
/// Corollary III of the rust-gems `bpe` crate's README, and holds for any ranker whose merge of
/// a pair depends on the pair alone, with ties to the leftmost.
fn join_at_shared_symbol(merged: &mut Vec<Slot>, window: &[Slot]) -> bool {
    let Some(first) = window.first() else { return true };
    if merged.is_empty() {
        merged.extend_from_slice(window);
        return true;
    }
    let mut i = merged.partition_point(|s| s.symbol.start < first.symbol.start);
    let mut j = 0;
    while i < merged.len() && j < window.len() {
        let (a, b) = (merged[i].symbol, window[j].symbol);
        if a.start == b.start {
            if a == b {
                merged.truncate(i + 1);
                merged.extend_from_slice(&window[j + 1..]);
                return true;
            }
            i += 1;
            j += 1;
        } else if a.start < b.start {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// One word being merged (reusable: [`Word::clear`] keeps the allocation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    slots: Vec<Slot>,
    /// Where the next pushed symbol starts.
    end: usize,
}

impl Word {
    /// An empty word (no allocation).
    pub const fn new() -> Self {
        Word { slots: Vec::new(), end: 0 }
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Word { slots: Vec::with_capacity(capacity), end: 0 }
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.end = 0;
    }

    /// Appends a symbol of id `id` covering the `len` bytes after the previous symbol.
    #[inline]
    pub fn push(&mut self, id: u32, len: usize) {
        let start = self.end;
        self.end += len;
        let symbol = Symbol { start, end: self.end, id };
        self.slots.push(Slot { symbol, pair: NO_PAIR, merged: 0 });
    }

    /// Appends `count` symbols of id `id`, each one byte long.
    #[inline]
    pub fn push_bytes(&mut self, count: usize, id: u32) {
        let start = self.end;
        self.end += count;
        self.slots.extend((start..self.end).map(|k| Slot {
            symbol: Symbol { start: k, end: k + 1, id },
            pair: NO_PAIR,
            merged: 0,
        }));
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The symbols, left to right.
    pub fn symbols(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.slots.iter().map(|s| s.symbol)
    }

    /// Applies every merge `ranker` allows, in its order. A word of more than `MAX_SYMBOLS`
    /// symbols is left as it is (the adapters refuse such words first).
    pub fn merge<R: PairRanker>(&mut self, ranker: &mut R) {
        if self.slots.len() < 2 || self.slots.len() > MAX_SYMBOLS {
            return;
        }
        if self.slots.len() <= R::SMALL_WORD_SYMBOLS {
            self.merge_small(ranker);
        } else if self.slots.len() < WINDOWED_WORD_SYMBOLS || !ranker.windows_allowed() {
            self.merge_queued(ranker, None::<Dropout<fn() -> bool>>);
        } else {
            self.merge_in_windows(ranker, WINDOW_SYMBOLS, WINDOW_OVERLAP);
        }
    }

    /// [`Word::merge`] with BPE-dropout.
    pub fn merge_with_dropout<R: PairRanker, D: FnMut() -> bool>(
        &mut self,
        ranker: &mut R,
        dropout: Dropout<D>,
    ) {
        if self.slots.len() < 2 || self.slots.len() > MAX_SYMBOLS {
            return;
        }
        self.merge_queued(ranker, Some(dropout));
    }

    /// Sets slot `k`'s pair (with slot `k + 1`) from the ranker.
    #[inline(always)]
    fn rank_pair<R: PairRanker>(&mut self, ranker: &mut R, k: usize, right: usize) {
        let (pair, merged) = match ranker.rank(&self.slots[k].symbol, &self.slots[right].symbol) {
            Some(m) => (u64::from(m.priority), m.id),
            None => (NO_PAIR, 0),
        };
        self.slots[k].pair = pair;
        self.slots[k].merged = merged;
    }

    /// The small-word path: a linear scan for the lowest priority (leftmost among equals).
    fn merge_small<R: PairRanker>(&mut self, ranker: &mut R) {
        for k in 0..self.slots.len() - 1 {
            self.rank_pair(ranker, k, k + 1);
        }
        // The last slot's pair stays NO_PAIR, so the scan may include it.
        loop {
            let mut best = NO_PAIR;
            let mut at = 0;
            for (k, slot) in self.slots.iter().enumerate() {
                if slot.pair < best {
                    best = slot.pair;
                    at = k;
                }
            }
            if best == NO_PAIR {
                break;
            }
            let right = self.slots.remove(at + 1);
            let slot = &mut self.slots[at];
            slot.symbol =
                Symbol { start: slot.symbol.start, end: right.symbol.end, id: slot.merged };
            if at > 0 {
                self.rank_pair(ranker, at - 1, at);
            }
            if at + 1 < self.slots.len() {
                self.rank_pair(ranker, at, at + 1);
            } else {
                self.slots[at].pair = NO_PAIR;
            }
            if self.slots.len() == 1 {
                break;
            }
        }
    }

    /// The windowed path (very long words without dropout; see the module doc): windows of
    /// `size` symbols, each overlapping the previous one by `overlap` or more. Returns false if
    /// it fell back to merging the whole word at once (the result is the same).
    pub(crate) fn merge_in_windows<R: PairRanker>(
        &mut self,
        ranker: &mut R,
        size: usize,
        overlap: usize,
    ) -> bool {
        let initial = std::mem::take(&mut self.slots);
        let n = initial.len();
        // The merged symbols of `initial[..to]` for the `to` of the last window: what merging
        // that prefix alone gives.
        let mut merged: Vec<Slot> = Vec::with_capacity(n / 2);
        let mut window = Word::with_capacity(size + overlap);
        let mut from = 0;
        let joined_all = loop {
            let mut to = (from + size).min(n);
            if n - to < overlap {
                to = n; // no sliver of a last window
            }
            window.slots.clear();
            window.slots.extend_from_slice(&initial[from..to]);
            if to - from <= R::SMALL_WORD_SYMBOLS {
                window.merge_small(ranker);
            } else {
                window.merge_queued(ranker, None::<Dropout<fn() -> bool>>);
            }
            if !join_at_shared_symbol(&mut merged, &window.slots) {
                break false;
            }
            if to == n {
                break true;
            }
            // The next window starts where a merged symbol starts, `overlap` symbols or more
            // before this window's end, and must make progress.
            let before = initial[to - overlap].symbol.start;
            let last = merged.partition_point(|s| s.symbol.start <= before) - 1;
            let start = merged[last].symbol.start;
            let next = initial.partition_point(|s| s.symbol.start < start);
            if next <= from {
                break false;
            }
            from = next;
        };
        if joined_all {
            // Into the larger buffer, which the caller may keep for its next word: a new one
            // of a megabyte-long word's size costs a page fault per 4 KB on every call.
            let mut slots = initial;
            slots.clear();
            slots.extend_from_slice(&merged);
            self.slots = slots;
        } else {
            // No shared symbol, or one merged symbol spans a whole window (never seen on real
            // or generated text): merge the whole word at once.
            self.slots = initial;
            self.merge_queued(ranker, None::<Dropout<fn() -> bool>>);
        }
        joined_all
    }

    /// The heap path (long words, dropout); see the module doc.
    fn merge_queued<R: PairRanker, D: FnMut() -> bool>(
        &mut self,
        ranker: &mut R,
        dropout: Option<Dropout<D>>,
    ) {
        let n = self.slots.len();
        // links[k] = (previous, next) slot of slot k
        let mut links: Vec<(u32, u32)> =
            (0..n as u32).map(|k| (k.wrapping_sub(1), k + 1)).collect();
        links[n - 1].1 = NONE;
        // Without dropout the order of pops among equal keys cannot matter (see `RadixQueue`);
        // with dropout every pop draws, so the heap's order is kept exactly.
        if dropout.is_none() {
            self.run_queue(ranker, &mut links, RadixQueue::default(), None::<Dropout<D>>);
        } else {
            self.run_queue(ranker, &mut links, QuaternaryHeap::with_capacity(n), dropout);
        }
        // Survivors in list order, which is index order: compact them in place.
        let (mut k, mut out) = (0, 0);
        while k != NONE as usize {
            self.slots[out] = self.slots[k];
            out += 1;
            k = links[k].1 as usize;
        }
        self.slots.truncate(out);
    }

    /// Queues every pair, then pops and applies merges until the queue is empty.
    fn run_queue<R: PairRanker, D: FnMut() -> bool, Q: MergeQueue>(
        &mut self,
        ranker: &mut R,
        links: &mut [(u32, u32)],
        mut queue: Q,
        mut dropout: Option<Dropout<D>>,
    ) {
        let n = self.slots.len();
        for k in 0..n - 1 {
            self.rank_pair(ranker, k, k + 1);
            if let Some(entry) = self.queued(k) {
                queue.push(entry);
            }
        }
        let mut skipped: Vec<Queued> = Vec::new();
        while let Some(top) = queue.pop() {
            if let Some(Dropout::Retry(skip)) = dropout.as_mut() {
                if skip() {
                    skipped.push(top);
                    continue;
                }
                skipped.drain(..).for_each(|entry| queue.push(entry));
            }
            let pos = top.pos();
            let slot = self.slots[pos];
            if slot.pair == NO_PAIR || slot.merged != top.merged {
                continue; // stale: this pair changed since it was queued
            }
            if let Some(Dropout::Discard(skip)) = dropout.as_mut() {
                if skip() {
                    continue;
                }
            }
            self.apply(ranker, pos, links, &mut queue);
        }
    }

    /// The queue entry of slot `k`'s pair, if it merges.
    #[inline(always)]
    fn queued(&self, k: usize) -> Option<Queued> {
        let slot = &self.slots[k];
        (slot.pair != NO_PAIR)
            .then_some(Queued { key: slot.pair << 32 | k as u64, merged: slot.merged })
    }

    /// Merges slot `pos` with its right neighbour, then re-ranks and queues the pairs on its
    /// left and on its right (in that order).
    fn apply<R: PairRanker, Q: MergeQueue>(
        &mut self,
        ranker: &mut R,
        pos: usize,
        links: &mut [(u32, u32)],
        queue: &mut Q,
    ) {
        let right = links[pos].1 as usize;
        let end = self.slots[right].symbol.end;
        let slot = &mut self.slots[pos];
        slot.symbol = Symbol { start: slot.symbol.start, end, id: slot.merged };
        self.slots[right].pair = NO_PAIR;
        let (before, after) = (links[pos].0, links[right].1);
        links[pos].1 = after;
        if after != NONE {
            links[after as usize].0 = pos as u32;
        }
        if before != NONE {
            self.rank_pair(ranker, before as usize, pos);
            if let Some(entry) = self.queued(before as usize) {
                queue.push(entry);
            }
        }
        if after != NONE {
            self.rank_pair(ranker, pos, after as usize);
            if let Some(entry) = self.queued(pos) {
                queue.push(entry);
            }
        } else {
            self.slots[pos].pair = NO_PAIR;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::bpe::model::{MergeMap, MergeRanks};
    use rand::rngs::mock::StepRng;
    use rand::Rng;

    fn merges(list: &[((u32, u32), u32)]) -> MergeMap {
        list.iter()
            .enumerate()
            .map(|(rank, &(pair, new_id))| (pair, (rank as u32, new_id)))
            .collect()
    }

    fn word(ids: &[u32]) -> Word {
        let mut w = Word::with_capacity(ids.len());
        for &id in ids {
            w.push(id, 1);
        }
        w
    }

    fn ids(w: &Word) -> Vec<u32> {
        w.symbols().map(|s| s.id).collect()
    }

    fn ids_and_offsets(w: &Word) -> Vec<(u32, (usize, usize))> {
        w.symbols().map(|s| (s.id, (s.start, s.end))).collect()
    }

    #[test]
    fn merges_lowest_rank_first() {
        // h e l l o; merges: l+l -> ll (4), h+e -> he (5), he+ll -> hell (6), hell+o -> hello (7)
        let m = merges(&[((2, 2), 4), ((0, 1), 5), ((5, 4), 6), ((6, 3), 7)]);
        let mut w = word(&[0, 1, 2, 2, 3]);
        w.merge(&mut MergeRanks(&m));
        assert_eq!(ids(&w), vec![7]);
        assert_eq!(ids_and_offsets(&w), vec![(7, (0, 5))]);
    }

    #[test]
    fn equal_ranks_go_leftmost_first() {
        // a a a with a+a -> aa: leftmost pair merges, the last a stays.
        let m = merges(&[((0, 0), 1)]);
        let mut w = word(&[0, 0, 0]);
        w.merge(&mut MergeRanks(&m));
        assert_eq!(ids_and_offsets(&w), vec![(1, (0, 2)), (0, (2, 3))]);
    }

    #[test]
    fn full_dropout_keeps_symbols() {
        let m = merges(&[((0, 1), 2)]);
        for retry in [true, false] {
            let mut w = word(&[0, 1]);
            // StepRng(0, 0) yields 0.0 forever, which is < 1.0: every merge is dropped.
            let mut rng = StepRng::new(0, 0);
            let skip = || rng.gen::<f32>() < 1.0;
            let dropout = if retry { Dropout::Retry(skip) } else { Dropout::Discard(skip) };
            w.merge_with_dropout(&mut MergeRanks(&m), dropout);
            assert_eq!(ids(&w), vec![0, 1]);
        }
    }

    /// The heap (as used for long words and dropout) on any word, for comparison.
    fn merged_by_heap(ids: &[u32], m: &MergeMap) -> Vec<(u32, (usize, usize))> {
        let mut w = word(ids);
        w.merge_with_dropout(&mut MergeRanks(m), Dropout::Discard(|| false));
        ids_and_offsets(&w)
    }

    /// Random merges over 4 base symbols and the merged ids (ids 4.. in creation order, fewer
    /// than `max_id`), in creation order.
    fn random_merge_list(rng: &mut impl rand::Rng, max_id: u32) -> Vec<((u32, u32), u32)> {
        let mut list = Vec::new();
        for next in 4..rng.gen_range(5..max_id) {
            let pair = (rng.gen_range(0..next), rng.gen_range(0..next));
            if !list.iter().any(|&(p, _)| p == pair) {
                list.push((pair, next));
            }
        }
        list
    }

    #[test]
    fn small_words_merge_as_the_heap_does() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..400 {
            let list = random_merge_list(&mut rng, 16);
            let m = merges(&list);
            for _ in 0..20 {
                let small = MergeRanks::SMALL_WORD_SYMBOLS;
                let ids: Vec<u32> =
                    (0..rng.gen_range(2..=small)).map(|_| rng.gen_range(0..4)).collect();
                let mut w = word(&ids);
                w.merge(&mut MergeRanks(&m));
                assert_eq!(ids_and_offsets(&w), merged_by_heap(&ids, &m), "{ids:?} {list:?}");
            }
        }
    }

    #[test]
    fn long_words_merge_as_the_heap_does() {
        // The radix queue (long words without dropout) against the 4-ary heap (dropout that
        // never skips), on random merge tables where merges often make pairs of lower priority
        // than their own (the radix queue's side heap).
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let mut list = random_merge_list(&mut rng, 40);
            // Shuffled ranks: a merged pair's rank is as often below its parts' as above.
            for k in (1..list.len()).rev() {
                list.swap(k, rng.gen_range(0..=k));
            }
            let m = merges(&list);
            for len in [MergeRanks::SMALL_WORD_SYMBOLS + 1, 100, 1000] {
                let alphabet = rng.gen_range(1..=4);
                let ids: Vec<u32> = (0..len).map(|_| rng.gen_range(0..alphabet)).collect();
                let mut w = word(&ids);
                w.merge(&mut MergeRanks(&m));
                assert_eq!(ids_and_offsets(&w), merged_by_heap(&ids, &m), "{ids:?} {list:?}");
            }
        }
    }

    /// A merge list as `random_merge_list` makes it: ((left, right), merged id) in rank order.
    type MergeList = Vec<((u32, u32), u32)>;

    /// A random merge table with shuffled ranks, and a word of `len` symbols over at most four
    /// base symbols.
    fn shuffled_table_and_word(rng: &mut impl rand::Rng, len: usize) -> (MergeList, Vec<u32>) {
        let mut list = random_merge_list(rng, 40);
        for k in (1..list.len()).rev() {
            list.swap(k, rng.gen_range(0..=k));
        }
        let alphabet = rng.gen_range(1..=4);
        (list, (0..len).map(|_| rng.gen_range(0..alphabet)).collect())
    }

    #[test]
    fn windows_merge_as_the_heap_does() {
        // Small windows, so that a word of a few thousand symbols crosses many joins, on random
        // tables (shuffled ranks) and words of few distinct symbols (long runs, periodic
        // merges: the hardest case for finding a shared symbol).
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut windowed, mut words) = (0, 0);
        for _ in 0..300 {
            let (list, ids) = shuffled_table_and_word(&mut rng, 3000);
            let m = merges(&list);
            for (size, overlap) in [(64, 8), (100, 16), (333, 40)] {
                let mut w = word(&ids);
                windowed += usize::from(w.merge_in_windows(&mut MergeRanks(&m), size, overlap));
                words += 1;
                assert_eq!(ids_and_offsets(&w), merged_by_heap(&ids, &m), "{ids:?} {list:?}");
            }
        }
        // Most words are joined window by window (the rest fell back, with the same result).
        assert!(windowed * 2 > words, "{windowed} of {words} words merged in windows");
    }

    #[test]
    fn long_words_are_merged_in_windows() {
        // The real window sizes, on words long enough to take the windowed path.
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for _ in 0..4 {
            let (list, ids) = shuffled_table_and_word(&mut rng, WINDOWED_WORD_SYMBOLS + 777);
            let m = merges(&list);
            let mut w = word(&ids);
            w.merge(&mut MergeRanks(&m));
            assert_eq!(ids_and_offsets(&w), merged_by_heap(&ids, &m), "{list:?}");
        }
    }

    #[test]
    fn long_word_is_fast_enough() {
        // 200k symbols of one id, with a chain of doubling merges: must finish quickly.
        let m = merges(&[((0, 0), 1), ((1, 1), 2), ((2, 2), 3)]);
        let mut w = word(&vec![0; 200_000]);
        w.merge(&mut MergeRanks(&m));
        assert_eq!(w.len(), 200_000 / 8);
        assert!(w.symbols().all(|s| s.id == 3));
    }
}
