//! One word being merged: a doubly linked list of symbols over a vector, merged in rank order.
//!
//! Cost: O(n log n) for a word of n symbols. Every adjacent pair that has a merge goes into a
//! min-heap keyed by (rank, position); a merge creates at most two new pairs, and entries made
//! stale by earlier merges are skipped when they surface (lazy invalidation), so there are at most
//! n - 1 merges and O(n) heap entries in total.
//!
//! Tie-breaking (identical to `tokenizers`): the lowest rank wins; among equal ranks the leftmost
//! position wins. A queued entry is applied only if the symbol at its position is still alive, has
//! a right neighbour, and that pair still merges into the entry's new id.
use std::cmp::Ordering;

use dary_heap::QuaternaryHeap;
use rand::Rng;

use super::model::MergeMap;

/// "No neighbour" marker for `Symbol::prev` / `Symbol::next`.
const NONE: usize = usize::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Symbol {
    id: u32,
    prev: usize,
    next: usize,
    /// Length in bytes of the text this symbol covers; 0 marks a symbol merged into its left.
    len: usize,
}

/// Words may hold at most this many symbols (positions are packed into 32 bits).
pub const MAX_SYMBOLS: usize = u32::MAX as usize;

/// Words of at most this many symbols are merged by `merge_small` (without dropout).
const SMALL_WORD_SYMBOLS: usize = 32;

/// No merge for this pair (in `merge_small`'s rank array).
const NO_RANK: u32 = u32::MAX;

/// A queued merge. `key` packs (rank, position) so one integer comparison orders the queue:
/// lowest rank first, then leftmost position. The queue is a 4-ary heap of these 16-byte
/// entries: merging a 1 MB word pops about a million of them, and a shallower heap with compact
/// entries spends far less time in cache misses than `std`'s binary heap of wide tuples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct QueuedMerge {
    key: u64,
    new_id: u32,
}

impl QueuedMerge {
    fn new(rank: u32, pos: usize, new_id: u32) -> Self {
        QueuedMerge { key: (u64::from(rank) << 32) | pos as u64, new_id }
    }
    fn pos(&self) -> usize {
        (self.key & u64::from(u32::MAX)) as usize
    }
}

impl Ord for QueuedMerge {
    /// Reversed, so that the max-heap pops the smallest key first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for QueuedMerge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

type QueuedMergeHeap = QuaternaryHeap<QueuedMerge>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    symbols: Vec<Symbol>,
}

impl Word {
    pub fn with_capacity(capacity: usize) -> Self {
        Word { symbols: Vec::with_capacity(capacity) }
    }

    /// Appends a symbol covering `byte_len` bytes of the word.
    pub fn add(&mut self, id: u32, byte_len: usize) {
        let index = self.symbols.len();
        let prev = if index == 0 { NONE } else { index - 1 };
        if let Some(last) = self.symbols.last_mut() {
            last.next = index;
        }
        self.symbols.push(Symbol { id, prev, next: NONE, len: byte_len });
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Applies every possible merge, lowest rank first. With `dropout`, each merge about to be
    /// applied is skipped with that probability (skipped merges come back once another merge
    /// happens, as in BPE-dropout and `tokenizers`). The word must hold at most `MAX_SYMBOLS`.
    pub fn merge_all<R: Rng>(&mut self, merges: &MergeMap, dropout: Option<(f32, &mut R)>) {
        if self.symbols.len() < 2 || self.symbols.len() > MAX_SYMBOLS {
            return;
        }
        if dropout.is_none() && self.symbols.len() <= SMALL_WORD_SYMBOLS {
            self.merge_small(merges);
            return;
        }
        let mut queue: QueuedMergeHeap = self
            .symbols
            .windows(2)
            .enumerate()
            .filter_map(|(pos, pair)| {
                merges
                    .get(&(pair[0].id, pair[1].id))
                    .map(|&(rank, new_id)| QueuedMerge::new(rank, pos, new_id))
            })
            .collect();
        let mut skipped: Vec<QueuedMerge> = Vec::new();
        let mut dropout = dropout;

        while let Some(top) = queue.pop() {
            if let Some((p, rng)) = dropout.as_mut() {
                if rng.gen::<f32>() < *p {
                    skipped.push(top);
                    continue;
                }
            }
            queue.extend(skipped.drain(..));
            self.apply(top.pos(), top.new_id, merges, &mut queue);
        }
        self.symbols.retain(|s| s.len != 0);
    }

    /// `merge_all` without dropout for a short word, on small arrays instead of a heap: the
    /// lowest-ranked adjacent pair (leftmost among equals) is found by a linear scan and merged,
    /// until no pair has a merge. That is the order the heap gives (a rank names one pair, so
    /// equal ranks are the same pair at different places, taken left to right), so the result is
    /// the same; for the few symbols of a typical word the scan beats heap upkeep, and nothing is
    /// allocated. This is the path of every word the cache has not seen yet.
    fn merge_small(&mut self, merges: &MergeMap) {
        let count = self.symbols.len();
        debug_assert!((2..=SMALL_WORD_SYMBOLS).contains(&count));
        let mut ids = [0u32; SMALL_WORD_SYMBOLS];
        let mut lens = [0usize; SMALL_WORD_SYMBOLS];
        for (k, s) in self.symbols.iter().enumerate() {
            ids[k] = s.id;
            lens[k] = s.len;
        }
        let pair =
            |left: u32, right: u32| merges.get(&(left, right)).copied().unwrap_or((NO_RANK, 0));
        // ranks[k]: (rank, merged id) of the pair of symbols k and k + 1
        let mut ranks = [(NO_RANK, 0u32); SMALL_WORD_SYMBOLS];
        for k in 0..count - 1 {
            ranks[k] = pair(ids[k], ids[k + 1]);
        }
        let mut count = count;
        loop {
            let mut best = NO_RANK;
            let mut at = 0;
            for (k, &(rank, _)) in ranks[..count - 1].iter().enumerate() {
                if rank < best {
                    best = rank;
                    at = k;
                }
            }
            if best == NO_RANK {
                break;
            }
            ids[at] = ranks[at].1;
            lens[at] += lens[at + 1];
            ids.copy_within(at + 2..count, at + 1);
            lens.copy_within(at + 2..count, at + 1);
            if at + 2 < count {
                ranks.copy_within(at + 2..count - 1, at + 1);
            }
            count -= 1;
            if at + 1 < count {
                ranks[at] = pair(ids[at], ids[at + 1]);
            }
            if at > 0 {
                ranks[at - 1] = pair(ids[at - 1], ids[at]);
            }
            if count == 1 {
                break;
            }
        }
        self.symbols.clear();
        for k in 0..count {
            self.add(ids[k], lens[k]);
        }
    }

    /// Merges the symbol at `pos` with its right neighbour if the queued entry is still valid,
    /// then queues the pairs the new symbol forms with its neighbours.
    fn apply(&mut self, pos: usize, new_id: u32, merges: &MergeMap, queue: &mut QueuedMergeHeap) {
        let left = self.symbols[pos];
        if left.len == 0 || left.next == NONE {
            return;
        }
        let right = self.symbols[left.next];
        match merges.get(&(left.id, right.id)) {
            Some(&(_, id)) if id == new_id => {}
            _ => return, // stale entry: this pair changed since it was queued
        }
        let merged =
            Symbol { id: new_id, prev: left.prev, next: right.next, len: left.len + right.len };
        self.symbols[pos] = merged;
        self.symbols[left.next].len = 0;
        if merged.next != NONE {
            self.symbols[merged.next].prev = pos;
        }
        if merged.prev != NONE {
            let before = self.symbols[merged.prev];
            if let Some(&(rank, id)) = merges.get(&(before.id, new_id)) {
                queue.push(QueuedMerge::new(rank, merged.prev, id));
            }
        }
        if merged.next != NONE {
            let after = self.symbols[merged.next];
            if let Some(&(rank, id)) = merges.get(&(new_id, after.id)) {
                queue.push(QueuedMerge::new(rank, pos, id));
            }
        }
    }

    /// The ids of the symbols, left to right.
    #[cfg(test)]
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.symbols.iter().map(|s| s.id)
    }

    /// `(id, (start, end))` per symbol; offsets are byte offsets accumulated from the lengths.
    pub fn ids_and_offsets(&self) -> impl Iterator<Item = (u32, (usize, usize))> + '_ {
        let mut start = 0;
        self.symbols.iter().map(move |s| {
            let end = start + s.len;
            let item = (s.id, (start, end));
            start = end;
            item
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::mock::StepRng;

    fn merges(list: &[((u32, u32), u32)]) -> MergeMap {
        list.iter()
            .enumerate()
            .map(|(rank, &(pair, new_id))| (pair, (rank as u32, new_id)))
            .collect()
    }

    fn word(ids: &[u32]) -> Word {
        let mut w = Word::with_capacity(ids.len());
        for &id in ids {
            w.add(id, 1);
        }
        w
    }

    #[test]
    fn merges_lowest_rank_first() {
        // h e l l o; merges: l+l -> ll (4), h+e -> he (5), he+ll -> hell (6), hell+o -> hello (7)
        let m = merges(&[((2, 2), 4), ((0, 1), 5), ((5, 4), 6), ((6, 3), 7)]);
        let mut w = word(&[0, 1, 2, 2, 3]);
        w.merge_all::<StepRng>(&m, None);
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![7]);
        assert_eq!(w.ids_and_offsets().collect::<Vec<_>>(), vec![(7, (0, 5))]);
    }

    #[test]
    fn equal_ranks_go_leftmost_first() {
        // a a a with a+a -> aa: leftmost pair merges, the last a stays.
        let m = merges(&[((0, 0), 1)]);
        let mut w = word(&[0, 0, 0]);
        w.merge_all::<StepRng>(&m, None);
        assert_eq!(w.ids_and_offsets().collect::<Vec<_>>(), vec![(1, (0, 2)), (0, (2, 3))]);
    }

    #[test]
    fn full_dropout_keeps_symbols() {
        let m = merges(&[((0, 1), 2)]);
        let mut w = word(&[0, 1]);
        // StepRng(0, 0) yields 0.0 forever, which is < 1.0: every merge is dropped.
        let mut rng = StepRng::new(0, 0);
        w.merge_all(&m, Some((1.0, &mut rng)));
        assert_eq!(w.ids().collect::<Vec<_>>(), vec![0, 1]);
    }

    /// The heap (as used for long words and dropout) on any word, for comparison.
    fn merged_by_heap(ids: &[u32], m: &MergeMap) -> Vec<(u32, (usize, usize))> {
        let mut w = word(ids);
        let mut queue: QueuedMergeHeap = w
            .symbols
            .windows(2)
            .enumerate()
            .filter_map(|(pos, pair)| {
                m.get(&(pair[0].id, pair[1].id))
                    .map(|&(rank, new_id)| QueuedMerge::new(rank, pos, new_id))
            })
            .collect();
        while let Some(top) = queue.pop() {
            w.apply(top.pos(), top.new_id, m, &mut queue);
        }
        w.symbols.retain(|s| s.len != 0);
        w.ids_and_offsets().collect()
    }

    #[test]
    fn small_words_merge_as_the_heap_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..400 {
            // 4 base symbols, random merges over base and merged ids (ids 4.. in creation order)
            let mut list = Vec::new();
            for next in 4..rng.gen_range(5..16u32) {
                let pair = (rng.gen_range(0..next), rng.gen_range(0..next));
                if !list.iter().any(|&(p, _)| p == pair) {
                    list.push((pair, next));
                }
            }
            let m = merges(&list);
            for _ in 0..20 {
                let ids: Vec<u32> = (0..rng.gen_range(2..=SMALL_WORD_SYMBOLS))
                    .map(|_| rng.gen_range(0..4))
                    .collect();
                let mut w = word(&ids);
                w.merge_all::<StepRng>(&m, None);
                assert_eq!(
                    w.ids_and_offsets().collect::<Vec<_>>(),
                    merged_by_heap(&ids, &m),
                    "{ids:?} {list:?}"
                );
            }
        }
    }

    #[test]
    fn long_word_is_fast_enough() {
        // 200k symbols of one id, with a chain of doubling merges: must finish quickly.
        let m = merges(&[((0, 0), 1), ((1, 1), 2), ((2, 2), 3)]);
        let mut w = word(&vec![0; 200_000]);
        w.merge_all::<StepRng>(&m, None);
        assert_eq!(w.len(), 200_000 / 8);
        assert!(w.ids().all(|id| id == 3));
    }
}
