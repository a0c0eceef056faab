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
        let mut queue: QueuedMergeHeap = self
            .symbols
            .windows(2)
            .enumerate()
            .filter_map(|(pos, pair)| {
                merges.get(&(pair[0].id, pair[1].id)).map(|&(rank, new_id)| QueuedMerge::new(rank, pos, new_id))
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
        let merged = Symbol { id: new_id, prev: left.prev, next: right.next, len: left.len + right.len };
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
        list.iter().enumerate().map(|(rank, &(pair, new_id))| (pair, (rank as u32, new_id))).collect()
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
