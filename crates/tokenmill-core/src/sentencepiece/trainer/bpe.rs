//! `model_type=bpe` (bpe_model_trainer.cc): SentencePiece's BPE training on words with counts
//! (sentences split at whitespace), as a merge rule ([`SentencePieceRule`]) on the shared merge
//! loop (`trainers::merge_loop`): merges the most frequent valid pair until the budget of pieces
//! is learned, then appends the required characters.
//!
//! It differs from SentencePiece in one deliberate way: SentencePiece looks for the best pair
//! only among an "active" 5% of the candidates, refreshed every 100 merges (an approximation);
//! tokenmill always takes the true best (highest frequency, then fewer characters, then the
//! smaller string — SentencePiece's tie-breaking), with a lazily-updated max-heap.
//!
//! When no pair occurs any more and pieces are still wanted, SentencePiece goes on with the
//! pairs that occurred once and are gone (their count is zero), in its usual order: fewer
//! characters, then the smaller text ([`SentencePieceRule::learn_gone`]). On one long run of a
//! letter, for example, the pieces of powers of two come first, then "aaa", "▁aa" and the like.
//!
//! May import the trainer interface (`super`: the piece validity rule), `sentencepiece::proto`
//! and `trainers::merge_loop`.
use std::cell::RefCell;
use std::cmp::Reverse;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{is_valid_piece, UNK_CHAR};
use crate::sentencepiece::proto::TrainerSpec;
use crate::trainers::merge_loop::{
    unpack, Heap, Merge, MergeLoop, MergeRule, PairCount, PairTable, Pairs, Refresh, Step, Words,
};

/// SentencePiece's BPE training on words (sentences split at whitespace, see
/// `sentences::WordSplit`): merges the most frequent valid pair until `merges` pieces are
/// learned, then appends the required characters.
pub(super) fn train_bpe(
    spec: &TrainerSpec,
    words: Vec<(String, u64)>,
    required: &[(char, u64)],
    merges: usize,
) -> Vec<(String, f32)> {
    let mut rule = SentencePieceRule::new(spec, merges);
    // Word order does not matter: the best pair is found by a total order.
    let arena = rule.initial_words(&words);
    drop(words);
    let pairs = arena.count_pairs(|pair| rule.new_pair(pair));
    let candidates = pairs
        .iter()
        .filter(|(_, stats)| stats.is_counted())
        .map(|(&pair, stats)| rule.candidate(pair, stats.count as u64))
        .collect();
    let pairs = MergeLoop::new(arena, pairs, candidates).run(&mut rule);
    rule.learn_gone(pairs);
    let mut pieces = rule.pieces;
    for (c, _) in required {
        pieces.push((c.to_string(), -(pieces.len() as f32)));
    }
    pieces
}

/// What the pair table keeps of a pair: how often it occurs and the words it occurs in
/// (ascending; may hold words that lost it since), or [`NOT_COUNTED`] when it may not become a
/// piece (any more, once learned). A pair of existing symbols never becomes adjacent later
/// (merges only fuse neighbours into new symbols), so each list is filled in one pass over
/// ascending words: it stays sorted without duplicates.
#[derive(Debug, Default)]
struct SpPair {
    count: i64,
    words: Vec<u32>,
}

/// The count of a pair that is not counted: `is_valid_piece` said no, or its text was already
/// a piece (made of other parts), or it was learned.
const NOT_COUNTED: i64 = -1;

impl SpPair {
    fn is_counted(&self) -> bool {
        self.count != NOT_COUNTED
    }
}

impl PairCount for SpPair {
    fn add(&mut self, delta: i64, word: u32) {
        if !self.is_counted() {
            return;
        }
        self.count = (self.count + delta).max(0);
        if delta > 0 && self.words.last() != Some(&word) {
            self.words.push(word);
        }
    }
}

/// A candidate merge in the heap, best first: higher count, then fewer characters, then the
/// smaller text (SentencePiece's order). `key` holds the length in characters (top 16 bits)
/// and the text's first 14 bytes (zero-padded; no piece holds a NUL), so that one comparison
/// of keys is the order on length then text prefix. Candidates equal on count and key are
/// settled on their full text when popped ([`SentencePieceRule::settle`]): the smallest text
/// has the smallest prefix, so the choice is the true best whatever the prefix's length.
/// Keeping no string in the heap (32 bytes an entry) keeps pushes and pops cheap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Candidate {
    count: u64,
    pair: u64,
    key: u128,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| Reverse(self.key).cmp(&Reverse(other.key)))
            .then_with(|| self.pair.cmp(&other.pair))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// SentencePiece's rule: symbols are characters, then merged pieces, each with its text; a pair
/// counts only if its text is a valid piece ([`is_valid_piece`], decided once per pair), and a
/// pair whose text is already a piece (made of other parts) is never merged. Only pairs a
/// merge creates gain counts, and they are pushed after the merge; an entry whose count went
/// down is pushed back with the current count when popped.
struct SentencePieceRule<'a> {
    spec: &'a TrainerSpec,
    /// Text and length in characters of each symbol id.
    texts: Vec<String>,
    chars: Vec<u32>,
    unk_symbol: Option<u32>,
    /// A buffer for the characters of a pair's text (no allocation per new pair).
    joined: RefCell<Vec<char>>,
    /// The pairs the current merge created.
    created: Vec<u64>,
    /// How many pieces to learn.
    budget: usize,
    pieces: Vec<(String, f32)>,
    seen_texts: FxHashSet<String>,
}

impl<'a> SentencePieceRule<'a> {
    fn new(spec: &'a TrainerSpec, budget: usize) -> Self {
        SentencePieceRule {
            spec,
            texts: Vec::new(),
            chars: Vec::new(),
            unk_symbol: None,
            joined: RefCell::new(Vec::new()),
            created: Vec::new(),
            budget,
            pieces: Vec::with_capacity(budget),
            seen_texts: FxHashSet::default(),
        }
    }

    /// The words as character symbols (ids in order of first appearance).
    fn initial_words(&mut self, words: &[(String, u64)]) -> Words {
        let mut arena = Words::new(words.len(), None);
        let mut char_ids: FxHashMap<char, u32> = FxHashMap::default();
        for (w, n) in words {
            let symbols = w.chars().map(|c| {
                *char_ids.entry(c).or_insert_with(|| {
                    self.texts.push(c.to_string());
                    self.chars.push(1);
                    self.texts.len() as u32 - 1
                })
            });
            arena.push(symbols, *n);
        }
        self.unk_symbol = char_ids.get(&UNK_CHAR).copied();
        arena
    }

    /// Whether the text of `pair` may be a piece (`is_valid_piece`, whose length test is made
    /// first, before the text is built).
    fn is_valid(&self, pair: u64) -> bool {
        let (a, b) = unpack(pair);
        if Some(a) == self.unk_symbol || Some(b) == self.unk_symbol {
            return false;
        }
        let len = (self.chars[a as usize] + self.chars[b as usize]) as usize;
        if len > self.spec.max_sentencepiece_length().max(0) as usize {
            return false;
        }
        let mut joined = self.joined.borrow_mut();
        joined.clear();
        joined.extend(self.texts[a as usize].chars().chain(self.texts[b as usize].chars()));
        is_valid_piece(self.spec, &joined)
    }

    fn pair_text(&self, pair: u64) -> String {
        let (a, b) = unpack(pair);
        [self.texts[a as usize].as_str(), self.texts[b as usize].as_str()].concat()
    }

    /// SentencePiece's last step when no pair occurs and pieces are still wanted: every pair
    /// that occurred (at the start, or made by a merge) and is gone, not learned, becomes a piece
    /// (merging it changes nothing), by fewer characters, then the smaller text, a text learned
    /// once only, until the budget is spent. (SentencePiece finds these in its queue: a pair's
    /// entry whose count went down is pushed back with the count it has now, zero included.)
    fn learn_gone(&mut self, pairs: PairTable<SpPair>) {
        if self.done() {
            return;
        }
        let mut gone: Vec<(u32, String)> = pairs
            .into_iter()
            .filter(|(_, stats)| stats.count == 0)
            .map(|(pair, _)| {
                let (a, b) = unpack(pair);
                (self.chars[a as usize] + self.chars[b as usize], self.pair_text(pair))
            })
            .collect();
        gone.sort_unstable();
        for (_, text) in gone {
            if self.done() {
                break;
            }
            if self.seen_texts.insert(text.clone()) {
                self.pieces.push((text, -(self.pieces.len() as f32)));
            }
        }
    }

    /// The heap entry of `pair` with `count`.
    fn candidate(&self, pair: u64, count: u64) -> Candidate {
        let (a, b) = unpack(pair);
        let mut key = [0u8; 16];
        let chars = (self.chars[a as usize] + self.chars[b as usize]).min(u16::MAX as u32) as u16;
        key[..2].copy_from_slice(&chars.to_be_bytes());
        let bytes = self.texts[a as usize].bytes().chain(self.texts[b as usize].bytes());
        for (slot, byte) in key[2..].iter_mut().zip(bytes) {
            *slot = byte;
        }
        Candidate { count, pair, key: u128::from_be_bytes(key) }
    }
}

impl MergeRule for SentencePieceRule<'_> {
    type Pair = SpPair;
    type Candidate = Candidate;
    const SETTLES_TIES: bool = true;

    fn done(&self) -> bool {
        self.pieces.len() >= self.budget
    }

    fn new_pair(&self, pair: u64) -> SpPair {
        SpPair { count: if self.is_valid(pair) { 0 } else { NOT_COUNTED }, words: Vec::new() }
    }

    /// A stale entry is pushed back with the current count, or dropped when its pair is gone.
    fn refresh(&self, entry: Candidate, pairs: &PairTable<SpPair>) -> Refresh<Candidate> {
        let current = pairs.get(&entry.pair).map_or(0, |p| p.count.max(0) as u64);
        if current == entry.count && current > 0 {
            Refresh::Current(entry)
        } else if current > 0 {
            Refresh::Stale(Some(self.candidate(entry.pair, current)))
        } else {
            Refresh::Stale(None)
        }
    }

    fn same_rank(&self, a: &Candidate, b: &Candidate) -> bool {
        (a.count, a.key) == (b.count, b.key)
    }

    /// The smallest text, then (one text made in two ways) the largest pair of ids.
    fn settle(&self, tied: &[Candidate]) -> usize {
        (0..tied.len())
            .min_by(|&i, &j| {
                self.pair_text(tied[i].pair)
                    .cmp(&self.pair_text(tied[j].pair))
                    .then(tied[j].pair.cmp(&tied[i].pair))
            })
            .unwrap_or(0)
    }

    /// Learns the pair's text as a piece and merges it in every word that has it (its count
    /// is gone for good: no `left right` is left after the merge); a text that is already a
    /// piece (made of other parts) takes the pair out of training instead.
    fn choose(&mut self, best: Candidate, pairs: &mut PairTable<SpPair>) -> Step {
        let text = self.pair_text(best.pair);
        let Some(stats) = pairs.get_mut(&best.pair) else { return Step::Skip };
        if !self.seen_texts.insert(text.clone()) {
            *stats = SpPair { count: NOT_COUNTED, words: Vec::new() };
            return Step::Skip;
        }
        stats.count = NOT_COUNTED;
        let words = std::mem::take(&mut stats.words);
        self.pieces.push((text.clone(), -(self.pieces.len() as f32)));
        let (left, right) = unpack(best.pair);
        let new_id = self.texts.len() as u32;
        self.chars.push(self.chars[left as usize] + self.chars[right as usize]);
        self.texts.push(text);
        Step::Merge(Merge::new(left, right, new_id, words))
    }

    /// Notes the pairs this merge created, to push them when it is done. Only pairs with the
    /// new symbol gain occurrences, and they start at zero: a pair is noted when its count
    /// leaves zero (again, rarely: deduplicated when pushed).
    fn changed(&mut self, pair: u64, stats: &mut SpPair, delta: i64, _word: u32) -> bool {
        if delta > 0 && stats.count == delta {
            self.created.push(pair);
        }
        true
    }

    fn merged(&mut self, _: &Merge, pairs: &mut Pairs<Self>, heap: &mut Heap<Self>) {
        let mut created = std::mem::take(&mut self.created);
        created.sort_unstable();
        created.dedup();
        for &pair in &created {
            let count = pairs.get(&pair).map_or(0, |p| p.count);
            if count > 0 {
                heap.push(self.candidate(pair, count as u64));
            }
        }
        self.created = created;
        self.created.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bpe_pieces(spec: &TrainerSpec, words: &[(&str, u64)], merges: usize) -> Vec<String> {
        let sentences: Vec<(String, u64)> =
            words.iter().map(|(w, n)| (w.to_string(), *n)).collect();
        train_bpe(spec, sentences, &[], merges).into_iter().map(|(piece, _)| piece).collect()
    }

    #[test]
    fn ties_go_to_fewer_characters_then_the_smaller_text() {
        let spec = TrainerSpec::default();
        assert_eq!(bpe_pieces(&spec, &[("▁cd", 2), ("▁ab", 2)], 4), ["ab", "cd", "▁ab", "▁cd"]);
    }

    #[test]
    fn ties_beyond_the_heap_key_compare_whole_texts() {
        // The two last candidates agree on count, length and their first 16 bytes.
        let spec = TrainerSpec { max_sentencepiece_length: Some(32), ..Default::default() };
        let pieces = bpe_pieces(&spec, &[("abcdefghijklmnopr", 1), ("abcdefghijklmnopq", 1)], 17);
        assert_eq!(pieces[14], "abcdefghijklmnop");
        assert_eq!(&pieces[15..], ["abcdefghijklmnopq", "abcdefghijklmnopr"]);
    }

    #[test]
    fn merges_update_neighbours_only_and_stop_when_no_pair_is_left() {
        // "aaaa" → "aa aa" → "aaaa": overlapping pairs counted once per merge.
        let pieces = bpe_pieces(&TrainerSpec::default(), &[("aaaa", 3), ("aaa", 1)], 10);
        assert_eq!(pieces, ["aa", "aaaa", "aaa"]);
    }

    #[test]
    fn the_three_merge_rules_on_one_corpus() {
        // The Hugging Face course's corpus, through the one merge loop with each rule.
        use crate::trainers::{BpeTrainer, MergeScore, WordPieceAlgorithm, WordPieceTrainer};
        let corpus = [("hug", 10), ("pug", 5), ("pun", 12), ("bun", 4), ("hugs", 5)];
        let counts = corpus.iter().map(|&(w, n)| (w.to_string(), n)).collect();
        // Counts: ug 20, un 16, then hug 15; the same for tokenizers' and sentencepiece's rule.
        let bpe = BpeTrainer { vocab_size: 10, show_progress: false, ..Default::default() };
        let merges = bpe.train_from_counts(&counts, &[]).unwrap().merges;
        let texts = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        assert_eq!(merges, texts(&[("u", "g"), ("u", "n"), ("h", "ug")]));
        assert_eq!(bpe_pieces(&TrainerSpec::default(), &corpus, 3), ["ug", "un", "hug"]);
        // Likelihood: "##g ##s" scores 5 / (20 · 5); then every pair scores 1/36 and the lowest
        // pair of ids (b = 0, ##u) wins.
        let mut wordpiece =
            WordPieceTrainer { algorithm: WordPieceAlgorithm::Likelihood, ..Default::default() };
        wordpiece.bpe_trainer.vocab_size = 13;
        wordpiece.bpe_trainer.show_progress = false;
        wordpiece.train_from_counts(&counts, &[]).unwrap();
        let history = wordpiece.merge_history.get();
        let first: Vec<(&str, &str, MergeScore)> =
            history.iter().map(|(a, b, s)| (a.as_str(), b.as_str(), *s)).collect();
        assert_eq!(
            first,
            [
                ("##g", "##s", MergeScore::Likelihood(0.05)),
                ("b", "##u", MergeScore::Likelihood(1.0 / 36.0))
            ]
        );
    }
}
