//! BPE training's one merge loop, shared by every trainer that learns merges from word counts:
//! `tokenizers`' BpeTrainer ([`super::bpe`]), WordPiece's likelihood rule ([`super::wordpiece`])
//! and sentencepiece's BPE trainer (`sentencepiece::trainer::bpe`).
//!
//! What every rule does the same way lives here:
//! * [`Words`]: every word as a run of `u32` symbol ids in one flat arena, with its count,
//!   merged in place; merging a pair in a word records the neighbour pairs it removes and
//!   creates as count deltas ([`Changes`]), applied when the word is done. A short word is
//!   rewritten whole by each merge it takes part in; a long one ([`LONG_WORD`]) keeps links and
//!   the positions of each of its pairs ([`Linked`]), so that a merge visits only where its
//!   pair is (rewriting a word of n symbols per merge would cost O(n) per merge, quadratic for
//!   one huge word);
//! * the pair table ([`PairTable`]): pair → the rule's [`PairCount`] value, i.e. its count and
//!   whatever else the rule keeps per pair, so that a delta costs one hash lookup, in place;
//! * the lazy max-heap loop ([`MergeLoop::run`]): pop the best candidate, check it against the
//!   table (a stale one is pushed back or dropped, as the rule says), settle ties if the rule
//!   asks, merge, apply the deltas.
//!
//! A [`MergeRule`] supplies what differs: the candidates and their order, when a popped one is
//! current and how ties are settled, which pairs may count at all, what a merge makes (the new
//! id, the history) and which words it visits, and the bookkeeping after it (new candidates,
//! symbol counts). Everything is monomorphized: no virtual call per update.
//!
//! May import `rustc_hash` and std only; the trainers import it, it imports no trainer.
use std::collections::binary_heap::{BinaryHeap, PeekMut};

use rustc_hash::FxHashMap;

/// A pair of symbol ids as one `u64` whose order is the pair's lexicographic order.
pub(crate) fn pack(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

pub(crate) fn unpack(pair: u64) -> (u32, u32) {
    ((pair >> 32) as u32, pair as u32)
}

/// Pair → what the rule keeps about it.
pub(crate) type PairTable<P> = FxHashMap<u64, P>;

/// A pair table value: the pair's count (and what else the rule keeps), changed by deltas as
/// words are merged.
pub(crate) trait PairCount {
    /// `delta` more occurrences (fewer when negative), seen in `word`.
    fn add(&mut self, delta: i64, word: u32);
}

/// A bare count (`tokenizers`' rule keeps the words in its heap entries instead).
impl PairCount for i64 {
    fn add(&mut self, delta: i64, _word: u32) {
        *self += delta;
    }
}

/// A count and the words the pair was seen in: each word once per run of additions, in the
/// order seen (a word may since have lost the pair).
#[derive(Debug, Default)]
pub(crate) struct CountAndWords {
    pub count: i64,
    pub words: Vec<u32>,
}

impl PairCount for CountAndWords {
    fn add(&mut self, delta: i64, word: u32) {
        self.count += delta;
        if delta > 0 && self.words.last() != Some(&word) {
            self.words.push(word);
        }
    }
}

/// Words of more symbols than this are merged through [`Linked`]: a short word costs less to
/// rewrite whole than to index, a long one is visited only where the merged pair is. At this
/// length the whole rewrites cost at most `LONG_WORD` visits per symbol of the corpus.
const LONG_WORD: usize = 1024;

/// How many changes a long word's merge keeps before handing them on (see [`Words::merge`]).
const FLUSH_CHANGES: usize = 1 << 12;

/// What a merged-away position of a [`Linked`] word holds (never a symbol id).
const DEAD: u32 = u32::MAX;

/// No position (the ends of a [`Linked`] word; a span not linked yet).
const NONE: u32 = u32::MAX;

/// All words as runs of symbol ids in one arena, each with its count, merged in place.
#[derive(Debug, Default)]
pub(crate) struct Words {
    symbols: Vec<u32>,
    spans: Vec<Span>,
    /// The links of the long words merged so far (see [`Span::linked`]).
    linked: Vec<Linked>,
    /// Positions visited by merges (short words: every symbol; long ones: each listed place).
    #[cfg(test)]
    visited: usize,
    /// The length in characters of the symbol at each position, kept only under a length
    /// limit: a new pair counts only when its two symbols' lengths add up to less than
    /// `max_len` (`tokenizers`' `max_token_length`).
    lens: Vec<u32>,
    max_len: usize,
}

impl Words {
    /// No words yet; with `max_len`, new pairs longer than that (in characters) never count.
    pub fn new(capacity: usize, max_len: Option<usize>) -> Self {
        Words {
            spans: Vec::with_capacity(capacity),
            max_len: max_len.unwrap_or(usize::MAX),
            ..Default::default()
        }
    }

    /// Adds a word: its symbols (one character each) and its count.
    pub fn push(&mut self, symbols: impl IntoIterator<Item = u32>, count: u64) {
        let start = self.symbols.len();
        self.symbols.extend(symbols);
        if self.max_len != usize::MAX {
            self.lens.resize(self.symbols.len(), 1);
        }
        let len = (self.symbols.len() - start) as u32;
        self.spans.push(Span { start, len, linked: NONE, count });
    }

    /// How many words there are.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// The symbols of word `w` as pushed, or as merged for a word of at most [`LONG_WORD`]
    /// symbols (a long one is linked once merged: see [`Linked`]).
    pub fn word(&self, w: usize) -> &[u32] {
        let span = &self.spans[w];
        &self.symbols[span.start..span.start + span.len as usize]
    }

    pub fn count(&self, w: usize) -> u64 {
        self.spans[w].count
    }

    /// Counts every pair of neighbours (each occurrence adds the word's count, seen in that
    /// word) into a table whose new values come from `new_pair` (called in the order the pairs
    /// are first seen).
    pub fn count_pairs<P: PairCount>(&self, mut new_pair: impl FnMut(u64) -> P) -> PairTable<P> {
        let mut table: PairTable<P> = FxHashMap::default();
        for w in 0..self.len() {
            let n = self.count(w) as i64;
            for pair in self.word(w).windows(2) {
                let pair = pack(pair[0], pair[1]);
                table.entry(pair).or_insert_with(|| new_pair(pair)).add(n, w as u32);
            }
        }
        table
    }

    /// Makes `merge` in word `w`: every `left right`, left to right, becomes `new_id`; records the
    /// changes of the neighbour pairs (weighted by the word's count); the merged pair's own
    /// count is the rule's business. Returns how many pairs were merged. A long word hands
    /// its changes to `flush` as they pile up (applied in the same order, the buffer stays
    /// short: one merge in one huge word may make millions).
    // Always inlined into the loop: called once per visited word, an out-of-line call (and the
    // reloads after it) cost sentencepiece's rule several percent.
    #[inline(always)]
    pub fn merge(
        &mut self,
        w: u32,
        merge: &Merge,
        changes: &mut Changes,
        flush: impl FnMut(&mut Changes),
    ) -> u64 {
        if self.spans[w as usize].len as usize > LONG_WORD {
            return if self.lens.is_empty() {
                self.merge_linked::<false>(w, merge, changes, flush)
            } else {
                self.merge_linked::<true>(w, merge, changes, flush)
            };
        }
        if self.lens.is_empty() {
            self.merge_in::<false>(w, merge, changes)
        } else {
            self.merge_in::<true>(w, merge, changes)
        }
    }

    /// [`merge`](Self::merge), with the symbol lengths kept and checked when `LENS`.
    #[inline(always)]
    fn merge_in<const LENS: bool>(&mut self, w: u32, merge: &Merge, changes: &mut Changes) -> u64 {
        let (left, right, new_id) = (merge.left, merge.right, merge.new_id);
        let Span { start, len, count, .. } = self.spans[w as usize];
        let (n, count) = (len as usize, count as i64);
        let syms = &mut self.symbols[start..start + n];
        let lens: &mut [u32] = if LENS { &mut self.lens[start..start + n] } else { &mut [] };
        let max_len = self.max_len;
        let fits = |a: u32, b: u32| !LENS || (a as usize).saturating_add(b as usize) < max_len;
        let (mut read, mut write, mut merged) = (0usize, 0usize, 0u64);
        #[cfg(test)]
        {
            self.visited += n;
        }
        while read < n {
            if read + 1 < n && syms[read] == left && syms[read + 1] == right {
                let new_len = if LENS { lens[read] + lens[read + 1] } else { 0 };
                if write > 0 {
                    let prev = syms[write - 1];
                    let counts = fits(if LENS { lens[write - 1] } else { 0 }, new_len);
                    changes.replace(pack(prev, left), pack(prev, new_id), counts, count);
                }
                if read + 2 < n {
                    let next = syms[read + 2];
                    let counts = fits(if LENS { lens[read + 2] } else { 0 }, new_len);
                    changes.replace(pack(right, next), pack(new_id, next), counts, count);
                }
                syms[write] = new_id;
                if LENS {
                    lens[write] = new_len;
                }
                read += 2;
                merged += 1;
            } else {
                syms[write] = syms[read];
                if LENS {
                    lens[write] = lens[read];
                }
                read += 1;
            }
            write += 1;
        }
        self.spans[w as usize].len = write as u32;
        merged
    }

    /// [`merge_in`](Self::merge_in) for a long word: the same merges, in the same order
    /// (left to right, each `left right` taken as soon as seen), with the same changes
    /// recorded, visiting only the places where the pair was seen.
    #[inline(never)]
    fn merge_linked<const LENS: bool>(
        &mut self,
        w: u32,
        merge: &Merge,
        changes: &mut Changes,
        mut flush: impl FnMut(&mut Changes),
    ) -> u64 {
        let (left, right, new_id) = (merge.left, merge.right, merge.new_id);
        debug_assert!(new_id != DEAD);
        let Span { start, len, linked, count } = self.spans[w as usize];
        let (n, count) = (len as usize, count as i64);
        let syms = &mut self.symbols[start..start + n];
        if linked == NONE {
            self.spans[w as usize].linked = self.linked.len() as u32;
            self.linked.push(Linked::new(syms));
        }
        let link = &mut self.linked[self.spans[w as usize].linked as usize];
        let Some(mut places) = link.at.remove(&pack(left, right)) else { return 0 };
        // Places are listed in order, but for a pair whose symbol ids were made by more than
        // one merge (`tokenizers` gives a merge's text the id it already has).
        if !places.is_sorted() {
            places.sort_unstable();
            places.dedup();
        }
        #[cfg(test)]
        {
            self.visited += places.len();
        }
        let lens: &mut [u32] = if LENS { &mut self.lens[start..start + n] } else { &mut [] };
        let max_len = self.max_len;
        let fits = |a: u32, b: u32| !LENS || (a as usize).saturating_add(b as usize) < max_len;
        let mut merged = 0u64;
        for &at in &places {
            let at = at as usize;
            // The pair may have left this place since (it was listed when it came).
            if syms[at] != left {
                continue;
            }
            let next = link.next[at];
            if next == NONE || syms[next as usize] != right {
                continue;
            }
            let next = next as usize;
            let new_len = if LENS { lens[at] + lens[next] } else { 0 };
            let prev = link.prev[at];
            if prev != NONE {
                let prev = prev as usize;
                let before = syms[prev];
                let counts = fits(if LENS { lens[prev] } else { 0 }, new_len);
                changes.replace(pack(before, left), pack(before, new_id), counts, count);
                link.add(pack(before, new_id), prev as u32);
            }
            let after = link.next[next];
            if after != NONE {
                let after = after as usize;
                let following = syms[after];
                let counts = fits(if LENS { lens[after] } else { 0 }, new_len);
                changes.replace(pack(right, following), pack(new_id, following), counts, count);
                link.add(pack(new_id, following), at as u32);
                link.prev[after] = at as u32;
            }
            link.next[at] = after;
            syms[at] = new_id;
            syms[next] = DEAD;
            if LENS {
                lens[at] = new_len;
            }
            merged += 1;
            if changes.0.len() >= FLUSH_CHANGES {
                flush(changes);
            }
        }
        merged
    }

    /// The symbols of word `w` now (a linked word's live positions).
    #[cfg(test)]
    fn merged_word(&self, w: usize) -> Vec<u32> {
        self.word(w).iter().copied().filter(|&s| s != DEAD).collect()
    }
}

/// A long word's links and the places of its pairs. Merging `left right` at position `at`
/// puts the new symbol at `at` and [`DEAD`] at the right symbol's position, which is unlinked.
/// Every pair of neighbours is listed where it starts: the initial ones, and those each merge
/// makes; a place stays listed after its pair left it (checked when visited: its left symbol
/// and its right neighbour must still be the pair). A merge lists at most two places, so the
/// lists hold at most the word's length plus twice its merges.
#[derive(Debug)]
struct Linked {
    /// The next and previous live position of each live position ([`NONE`] at the ends).
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Pair → where it was seen, ascending but for pairs of ids made twice (see the merge).
    at: FxHashMap<u64, Vec<u32>>,
}

impl Linked {
    /// The links and pair places of a word not merged yet.
    fn new(syms: &[u32]) -> Self {
        let n = syms.len();
        let next = (1..=n as u32).map(|i| if i as usize == n { NONE } else { i }).collect();
        let prev = (0..n as u32).map(|i| i.checked_sub(1).unwrap_or(NONE)).collect();
        // Counted first: each list is allocated once, at its size.
        let mut sizes: FxHashMap<u64, u32> = FxHashMap::default();
        for pair in syms.windows(2) {
            *sizes.entry(pack(pair[0], pair[1])).or_default() += 1;
        }
        let mut at: FxHashMap<u64, Vec<u32>> = sizes
            .into_iter()
            .map(|(pair, size)| (pair, Vec::with_capacity(size as usize)))
            .collect();
        for (i, pair) in syms.windows(2).enumerate() {
            if let Some(places) = at.get_mut(&pack(pair[0], pair[1])) {
                places.push(i as u32);
            }
        }
        Linked { next, prev, at }
    }

    fn add(&mut self, pair: u64, place: u32) {
        self.at.entry(pair).or_default().push(place);
    }
}

/// Where a word lies in the arena, and its count (together: visiting a word costs one cache
/// line, not three).
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    /// Symbols in the arena (for a long word: positions, some [`DEAD`] once merged).
    len: u32,
    /// The word's [`Linked`] in `Words::linked`, once a long word was merged ([`NONE`] before).
    linked: u32,
    count: u64,
}

/// The pair count changes of merging one word, applied when the word is done (a short buffer,
/// reused).
#[derive(Debug, Default)]
pub(crate) struct Changes(Vec<(u64, i64)>);

impl Changes {
    fn push(&mut self, pair: u64, delta: i64) {
        self.0.push((pair, delta));
    }

    /// The neighbour pair `old` replaced by `new` in a word counted `count` times (`new` not
    /// counted unless `counts`: see the length limit of [`Words`]).
    #[inline(always)]
    fn replace(&mut self, old: u64, new: u64, counts: bool, count: i64) {
        self.push(old, -count);
        if counts {
            self.push(new, count);
        }
    }

    /// Applies the changes of `word` in order (one table lookup each; a pair seen for the first
    /// time gets `rule.new_pair`), tells the rule of each, and drops the pairs it says to drop.
    fn apply<R: MergeRule>(&mut self, word: u32, rule: &mut R, pairs: &mut PairTable<R::Pair>) {
        for (pair, delta) in self.0.drain(..) {
            let stats = pairs.entry(pair).or_insert_with(|| rule.new_pair(pair));
            stats.add(delta, word);
            if !rule.changed(pair, stats, delta, word) {
                pairs.remove(&pair);
            }
        }
    }
}

/// What a popped candidate turned out to be.
pub(crate) enum Refresh<C> {
    /// Up to date: it may be merged.
    Current(C),
    /// Out of date: drop it, or push back the given fresh one.
    Stale(Option<C>),
}

/// What the rule makes of the best candidate.
pub(crate) enum Step {
    Merge(Merge),
    /// Nothing merged this time (the rule dropped the candidate); go on.
    Skip,
    /// Training ends.
    Stop,
}

/// A merge to make: `left right` becomes `new_id` in `words` (the words the rule visits).
pub(crate) struct Merge {
    pub left: u32,
    pub right: u32,
    pub new_id: u32,
    pub words: Vec<u32>,
    /// How many pairs were merged, weighted by word counts (once made).
    pub occurrences: u64,
}

impl Merge {
    pub fn new(left: u32, right: u32, new_id: u32, words: Vec<u32>) -> Self {
        Merge { left, right, new_id, words, occurrences: 0 }
    }
}

/// A rule's pair table and heap.
pub(crate) type Pairs<R> = PairTable<<R as MergeRule>::Pair>;
pub(crate) type Heap<R> = BinaryHeap<<R as MergeRule>::Candidate>;

/// What differs between the merge rules (see the module docs).
pub(crate) trait MergeRule {
    /// What the pair table keeps per pair.
    type Pair: PairCount + Default;
    /// A heap entry; the greatest is merged first.
    type Candidate: Ord;
    /// Whether candidates of equal rank ([`same_rank`](Self::same_rank)) are gathered and
    /// settled by [`settle`](Self::settle).
    const SETTLES_TIES: bool = false;

    /// Whether training has made all it should.
    fn done(&self) -> bool;

    /// The table value of a pair seen for the first time (counted or not, as the rule says).
    fn new_pair(&self, _pair: u64) -> Self::Pair {
        Self::Pair::default()
    }

    /// Checks a popped candidate against the table.
    fn refresh(
        &self,
        candidate: Self::Candidate,
        pairs: &PairTable<Self::Pair>,
    ) -> Refresh<Self::Candidate>;

    /// Whether `a` and `b` tie in the heap's order and need [`settle`](Self::settle).
    fn same_rank(&self, _a: &Self::Candidate, _b: &Self::Candidate) -> bool {
        false
    }

    /// Which of `tied` (current candidates of one rank, the first popped first) wins.
    fn settle(&self, _tied: &[Self::Candidate]) -> usize {
        0
    }

    /// Decides on the best current candidate: what to merge (and which words to visit), or
    /// to skip it, or to stop.
    fn choose(&mut self, best: Self::Candidate, pairs: &mut PairTable<Self::Pair>) -> Step;

    /// Told of every applied delta (after [`PairCount::add`]); returns whether the pair stays
    /// in the table.
    fn changed(&mut self, _pair: u64, _stats: &mut Self::Pair, _delta: i64, _word: u32) -> bool {
        true
    }

    /// After a merge's deltas are applied: push the new candidates.
    fn merged(&mut self, merge: &Merge, pairs: &mut Pairs<Self>, heap: &mut Heap<Self>);
}

/// The state of one training run: words, pair table, heap.
pub(crate) struct MergeLoop<R: MergeRule> {
    words: Words,
    pairs: PairTable<R::Pair>,
    heap: BinaryHeap<R::Candidate>,
    changes: Changes,
    tied: Vec<R::Candidate>,
}

impl<R: MergeRule> MergeLoop<R> {
    /// Starts from the words, their counted pairs and the initial candidates (heapified in
    /// this order).
    pub fn new(words: Words, pairs: PairTable<R::Pair>, candidates: Vec<R::Candidate>) -> Self {
        MergeLoop {
            words,
            pairs,
            heap: candidates.into(),
            changes: Changes::default(),
            tied: Vec::new(),
        }
    }

    /// Merges until the rule is done or stops, or no candidate is left; returns the pair table.
    pub fn run(mut self, rule: &mut R) -> PairTable<R::Pair> {
        while !rule.done() {
            let Some(best) = self.pop_best(rule) else { break };
            match rule.choose(best, &mut self.pairs) {
                Step::Merge(merge) => self.merge(rule, merge),
                Step::Skip => continue,
                Step::Stop => break,
            }
        }
        self.pairs
    }

    /// The best current candidate (stale ones pushed back or dropped on the way).
    fn pop_best(&mut self, rule: &R) -> Option<R::Candidate> {
        loop {
            let top = self.heap.pop()?;
            match rule.refresh(top, &self.pairs) {
                Refresh::Current(top) if R::SETTLES_TIES => return Some(self.settle(rule, top)),
                Refresh::Current(top) => return Some(top),
                Refresh::Stale(fresh) => self.heap.extend(fresh),
            }
        }
    }

    /// Gathers the current candidates of `top`'s rank and returns the one the rule picks;
    /// the others go back to the heap.
    fn settle(&mut self, rule: &R, top: R::Candidate) -> R::Candidate {
        self.tied.clear();
        self.tied.push(top);
        loop {
            let Some(next) = self.heap.peek_mut() else { break };
            if !rule.same_rank(&next, &self.tied[0]) {
                break;
            }
            let next = PeekMut::pop(next);
            match rule.refresh(next, &self.pairs) {
                Refresh::Current(next) => self.tied.push(next),
                Refresh::Stale(fresh) => self.heap.extend(fresh),
            }
        }
        let chosen = self.tied.swap_remove(rule.settle(&self.tied));
        self.heap.extend(self.tied.drain(..));
        chosen
    }

    fn merge(&mut self, rule: &mut R, mut merge: Merge) {
        for &w in &merge.words {
            let pairs = &mut self.pairs;
            let flush = |changes: &mut Changes| changes.apply(w, rule, pairs);
            let merged = self.words.merge(w, &merge, &mut self.changes, flush);
            merge.occurrences += merged * self.words.count(w as usize);
            self.changes.apply(w, rule, &mut self.pairs);
        }
        rule.merged(&merge, &mut self.pairs, &mut self.heap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_a_word_reports_the_neighbour_pairs() {
        let mut words = Words::new(1, None);
        words.push([1, 2, 1, 2, 3], 1);
        let mut changes = Changes::default();
        let merged = words.merge(0, &Merge::new(1, 2, 9, vec![0]), &mut changes, |_| {});
        assert_eq!(merged, 2);
        assert_eq!(words.word(0), [9, 9, 3]);
        // The merged pair's own count is the rule's: it lost one occurrence per merge.
        let mut net: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        net.insert((1, 2), -(merged as i64));
        for &(p, delta) in &changes.0 {
            *net.entry(unpack(p)).or_default() += delta;
        }
        net.retain(|_, v| *v != 0);
        let expected: FxHashMap<(u32, u32), i64> =
            [((1, 2), -2), ((2, 1), -1), ((2, 3), -1), ((9, 9), 1), ((9, 3), 1)]
                .into_iter()
                .collect();
        assert_eq!(net, expected);
    }

    #[test]
    fn a_length_limit_keeps_long_new_pairs_uncounted() {
        let mut words = Words::new(1, Some(3));
        words.push([1, 2, 3], 5);
        let mut changes = Changes::default();
        words.merge(0, &Merge::new(1, 2, 9, vec![0]), &mut changes, |_| {});
        // "12" + "3" would have 3 characters: only the removal of (2, 3) is recorded.
        assert_eq!(changes.0, [(pack(2, 3), -5)]);
        let mut changes = Changes::default();
        let mut words = Words::new(1, Some(4));
        words.push([1, 2, 3], 5);
        words.merge(0, &Merge::new(1, 2, 9, vec![0]), &mut changes, |_| {});
        assert_eq!(changes.0, [(pack(2, 3), -5), (pack(9, 3), 5)]);
    }
    /// A word merged with `merges` (pair, new id) in turn, as a long word and as the same word
    /// cut into short ones that are merged whole: the same symbols, merge counts and changes
    /// (a short word's changes at its ends are those of the long word's neighbours, so the
    /// short words are compared on their own, symbol by symbol).
    fn merge_long_and_short(word: &[u32], merges: &[(u32, u32, u32)], max_len: Option<usize>) {
        assert!(word.len() > LONG_WORD);
        let mut long = Words::new(1, max_len);
        long.push(word.iter().copied(), 3);
        // The reference: the same word, merged whole each time (the short words' path).
        let mut reference = word.to_vec();
        let mut ref_lens = vec![1usize; word.len()];
        for &(left, right, new_id) in merges {
            let (mut changes, mut expected) = (Changes::default(), Changes::default());
            let mut flushed = Vec::new();
            let flush = |c: &mut Changes| flushed.append(&mut c.0);
            let merged =
                long.merge(0, &Merge::new(left, right, new_id, vec![0]), &mut changes, flush);
            flushed.append(&mut changes.0);
            let mut short = Words::new(1, max_len);
            short.symbols = reference.clone();
            short.spans.push(Span {
                start: 0,
                len: reference.len() as u32,
                linked: NONE,
                count: 3,
            });
            if max_len.is_some() {
                short.lens = ref_lens.iter().map(|&l| l as u32).collect();
            }
            let m = Merge::new(left, right, new_id, vec![0]);
            let expected_merged = if max_len.is_some() {
                short.merge_in::<true>(0, &m, &mut expected)
            } else {
                short.merge_in::<false>(0, &m, &mut expected)
            };
            reference = short.word(0).to_vec();
            if max_len.is_some() {
                ref_lens = short.lens[..reference.len()].iter().map(|&l| l as usize).collect();
            }
            assert_eq!(merged, expected_merged);
            assert_eq!(flushed, expected.0);
            assert_eq!(long.merged_word(0), reference);
        }
    }

    #[test]
    fn a_long_word_merges_as_a_short_one_does() {
        // Overlapping pairs ("a a a"), a pair made of a merged symbol twice, pairs gone.
        let mut word = vec![1; 3000];
        word.extend((0..2000).map(|i| [1, 2, 3, 2, 1][i % 5]));
        let merges = [(1, 1, 10), (10, 10, 11), (2, 1, 12), (1, 2, 13), (11, 11, 14), (13, 3, 15)];
        merge_long_and_short(&word, &merges, None);
        merge_long_and_short(&word, &merges, Some(5));
        // One id made by two merges (as `tokenizers` does): its places are listed unsorted.
        let word: Vec<u32> = (0..3000).map(|i| [1, 2, 3, 4][(i * 7 + i / 5) % 4]).collect();
        let merges = [(2, 3, 20), (1, 2, 21), (21, 3, 22), (1, 20, 22), (22, 4, 23), (22, 22, 24)];
        merge_long_and_short(&word, &merges, None);
    }

    #[test]
    fn a_long_word_is_visited_only_where_its_pairs_are() {
        // 200,000 symbols, 2,000 merges of a pair seen about once: rewriting the word per merge
        // would visit 4 × 10^8 positions; the links visit each listed place once.
        let n = 200_000u32;
        let word: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) % 5000).collect();
        let mut words = Words::new(1, None);
        words.push(word.iter().copied(), 1);
        let mut changes = Changes::default();
        for i in 0..2000 {
            let (left, right) = (word[i * 97], word[i * 97 + 1]);
            let merge = Merge::new(left, right, 5000 + i as u32, vec![0]);
            words.merge(0, &merge, &mut changes, |c| c.0.clear());
            changes.0.clear();
        }
        assert!(words.visited < 2 * n as usize, "{} positions visited", words.visited);
    }
}
