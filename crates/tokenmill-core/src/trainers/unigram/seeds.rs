//! Seed pieces: every character, plus the most frequent substrings of the corpus.
//!
//! As in sentencepiece, the candidate substrings are the internal nodes of the corpus's suffix
//! tree (right-maximal substrings), scored `frequency × length in characters`; the best
//! `seed_size` valid ones are kept. The suffix tree is walked as LCP intervals of a suffix array:
//! * the suffix array is built over the UTF-8 bytes (`suffix` crate, SA-IS) and restricted to
//!   the suffixes that start on a character: UTF-8 preserves code-point order, so this is the
//!   array of character suffixes;
//! * the LCP array is computed by Kasai's algorithm (the `suffix` crate's own LCP is quadratic)
//!   and converted to whole characters, capped just above `max_piece_length` (deeper nodes
//!   cannot be pieces, and the cap leaves every shallower interval unchanged).
//!
//! With sentencepiece's rules ([`Flavor::SentencePiece`]):
//! * each occurrence counts with the weight of its sentence (its number of occurrences), so word
//!   lists with counts give the same seeds as the running text;
//! * sentence ends are distinct terminators: a substring that ends sentences is a candidate even
//!   when it is always followed by a boundary (sentencepiece's single `\0` misses those), and so
//!   are the leaves (the rest of a sentence seen once — with counts, a frequent word);
//! * ties (equal count or score) go to the smaller character or string (sentencepiece's
//!   `Sorted`); `seed_size` substrings are kept besides the characters.
//!
//! With `tokenizers`' rules ([`Flavor::Tokenizers`], its esaxx suffix tree over the distinct
//! words joined by `\0`):
//! * every occurrence counts once, whatever its word's count (characters are still counted
//!   with the counts);
//! * the sentence ends are one boundary symbol: a substring is a node only when some occurrence
//!   continues with a character; no leaves;
//! * ties go to the larger character or string; `seed_size` counts the characters too (at least
//!   one substring is kept).
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::pieces::PieceList;
use super::Flavor;
use crate::utils::offsets::utf8_len;

/// Sentence boundary in the suffix-array text (never part of a piece).
const BOUNDARY: char = '\0';

/// A seed candidate, ordered so that the heap's top is the *worst* kept one.
struct Candidate<'t> {
    score: u64,
    piece: &'t str,
    /// Ties go to the larger string (`tokenizers`) rather than the smaller (sentencepiece).
    larger_first: bool,
}

impl Ord for Candidate<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Better = higher score, then the preferred string; the heap keeps the worst on top.
        let by_text = self.piece.cmp(other.piece);
        other.score.cmp(&self.score).then(if self.larger_first {
            by_text.reverse()
        } else {
            by_text
        })
    }
}
impl PartialOrd for Candidate<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Candidate<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate<'_> {}

/// The seed pieces with their log-probabilities: the characters (sorted by count, then code
/// point) followed by the best substrings. `is_valid` decides which substrings may be pieces (it
/// sees substrings of at most `max_piece_length` characters, without boundaries).
pub fn seed_pieces(
    sentences: &[(String, u64)],
    flavor: Flavor,
    seed_size: usize,
    max_piece_length: usize,
    is_valid: &(dyn Fn(&str) -> bool + Sync),
) -> PieceList {
    let tokenizers = flavor == Flavor::Tokenizers;
    let mut text = String::with_capacity(sentences.iter().map(|s| s.0.len() + 1).sum());
    let mut sentence_ends: Vec<usize> = Vec::with_capacity(sentences.len());
    let mut char_counts: FxHashMap<char, u64> = FxHashMap::default();
    for (s, count) in sentences {
        for c in s.chars() {
            if c != BOUNDARY {
                *char_counts.entry(c).or_insert(0) += count;
            }
            // `tokenizers` keeps a NUL in the joined text (where it is a boundary too).
            if c != BOUNDARY || tokenizers {
                text.push(c);
            }
        }
        text.push(BOUNDARY);
        sentence_ends.push(text.len());
    }
    let mut seeds: Vec<(String, u64)> =
        char_counts.into_iter().map(|(c, n)| (c.to_string(), n)).collect();
    sort_by_count(&mut seeds);
    let substring_count = match flavor {
        Flavor::SentencePiece => seed_size,
        Flavor::Tokenizers => {
            // Count descending, then character descending.
            seeds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
            seed_size.saturating_sub(seeds.len()).max(1)
        }
    };
    let substrings = frequent_substrings(
        &text,
        &sentence_ends,
        sentences,
        flavor,
        substring_count,
        max_piece_length,
        is_valid,
    );
    let sum: f64 =
        seeds.iter().map(|s| s.1 as f64).chain(substrings.iter().map(|s| s.1 as f64)).sum();
    let log_sum = sum.ln();
    let bytes = seeds.iter().map(|s| s.0.len()).sum::<usize>()
        + substrings.iter().map(|s| s.0.len()).sum::<usize>();
    let mut pieces = PieceList::with_capacity(seeds.len() + substrings.len(), bytes);
    for (piece, n) in
        seeds.iter().map(|(p, n)| (p.as_str(), *n)).chain(substrings.iter().map(|(p, n)| (*p, *n)))
    {
        pieces.push(piece, (n as f64).ln() - log_sum);
    }
    pieces
}

/// Sorts by count (descending) then string (ascending): sentencepiece's `Sorted`.
pub fn sort_by_count<N: PartialOrd>(items: &mut [(String, N)]) {
    items.sort_by(|a, b| {
        b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal).then_with(|| a.0.cmp(&b.0))
    });
}

#[allow(clippy::too_many_arguments)]
fn frequent_substrings<'t>(
    text: &'t str,
    sentence_ends: &[usize],
    sentences: &[(String, u64)],
    flavor: Flavor,
    seed_size: usize,
    max_piece_length: usize,
    is_valid: &(dyn Fn(&str) -> bool + Sync),
) -> Vec<(&'t str, u64)> {
    if text.is_empty() || seed_size == 0 {
        return vec![];
    }
    let tokenizers = flavor == Flavor::Tokenizers;
    let (_, table) = suffix::SuffixTable::new(text).into_parts();
    let mut sa: Vec<u32> = table.into_owned();
    sa.retain(|&p| text.is_char_boundary(p as usize));
    let cap = (max_piece_length + 1).min(u16::MAX as usize) as u16;
    let lcp = char_lcp(text, &sa, cap);
    // Weight of the suffix at byte `p`: the count of the sentence it lies in (1 for
    // `tokenizers`, which counts occurrences in its list of distinct words).
    let weight = |p: u32| -> u64 {
        if tokenizers {
            return 1;
        }
        let i = sentence_ends.partition_point(|&end| end <= p as usize);
        sentences.get(i).map_or(0, |s| s.1)
    };
    let mut best: BinaryHeap<Candidate> = BinaryHeap::with_capacity(seed_size.min(1 << 20) + 1);
    // An interval: its depth, first suffix, total weight, and the longest rest of a sentence
    // (capped) among its suffixes — with one shared boundary symbol (`tokenizers`), a
    // substring that only ever ends sentences is not a node.
    let mut consider = |depth: u16, lb: usize, freq: u64, longest_rest: u16| {
        if depth <= 1 || depth as usize > max_piece_length || (tokenizers && longest_rest <= depth)
        {
            return;
        }
        let start = sa[lb] as usize;
        let piece = prefix_chars(&text[start..], depth as usize);
        if piece.contains(BOUNDARY) || !is_valid(piece) {
            return;
        }
        let candidate =
            Candidate { score: freq.saturating_mul(depth as u64), piece, larger_first: tokenizers };
        if best.len() < seed_size {
            best.push(candidate);
        } else if best.peek().is_some_and(|worst| candidate < *worst) {
            best.pop();
            best.push(candidate);
        }
    };
    // Stack of open LCP intervals: (depth, left bound, weight so far, longest rest so far).
    let mut stack: Vec<(u16, usize, u64, u16)> = vec![(0, 0, 0, 0)];
    let n = sa.len();
    for i in 0..n {
        let next = if i + 1 < n { lcp[i + 1] } else { 0 };
        let mut carry = weight(sa[i]);
        // The leaf: the rest of the sentence, when no neighbour shares all of it — only for a
        // sentence seen at least twice (sentencepiece's internal nodes occur twice or more; a
        // once-seen word as a seed overfits).
        let rest = whole_chars(&text.as_bytes()[sa[i] as usize..], cap);
        if !tokenizers && rest > lcp[i].max(next) && carry >= 2 {
            consider(rest, i, carry, rest);
        }
        let mut longest = rest;
        let mut lb = i;
        while let Some(&(depth, _, _, _)) = stack.last() {
            if next >= depth {
                break;
            }
            let Some((depth, start, w, r)) = stack.pop() else {
                break;
            };
            let total = w + carry;
            longest = longest.max(r);
            consider(depth, start, total, longest);
            carry = total;
            lb = start;
        }
        match stack.last_mut() {
            Some(top) if next == top.0 => {
                top.2 += carry;
                top.3 = top.3.max(longest);
            }
            _ => stack.push((next, lb, carry, longest)),
        }
    }
    let mut out: Vec<(&str, u64)> =
        best.into_vec().into_iter().map(|c| (c.piece, c.score)).collect();
    // Score descending, then text ascending (sentencepiece's `Sorted`) or descending.
    out.sort_unstable_by(|a, b| {
        let by_text = if tokenizers { b.0.cmp(a.0) } else { a.0.cmp(b.0) };
        b.1.cmp(&a.1).then(by_text)
    });
    out
}

/// The first `n` characters of `s` (all of it when shorter).
fn prefix_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `lcp[i]` = whole characters shared by suffixes `sa[i-1]` and `sa[i]`, capped at `cap`.
/// Kasai's algorithm over byte lengths: every compared suffix starts on a character, so the
/// shared prefix shrinks by exactly one character (its byte length) from one text position to
/// the next.
fn char_lcp(text: &str, sa: &[u32], cap: u16) -> Vec<u16> {
    let bytes = text.as_bytes();
    let mut rank = vec![u32::MAX; bytes.len()];
    for (r, &p) in sa.iter().enumerate() {
        rank[p as usize] = r as u32;
    }
    let mut lcp = vec![0u16; sa.len()];
    let mut h = 0usize;
    let mut pos = 0usize;
    while pos < bytes.len() {
        let char_len = utf8_len(bytes[pos]);
        let r = rank[pos] as usize;
        if r > 0 {
            let prev = sa[r - 1] as usize;
            while pos + h < bytes.len()
                && prev + h < bytes.len()
                && bytes[pos + h] == bytes[prev + h]
            {
                h += 1;
            }
            lcp[r] = whole_chars(&bytes[pos..pos + h], cap);
        } else {
            h = 0;
        }
        h = h.saturating_sub(char_len);
        pos += char_len;
    }
    lcp
}

/// Complete characters in `prefix` (a prefix of valid UTF-8, possibly cut inside the last
/// character) before any sentence boundary, capped at `cap`. Stopping at the boundary makes each
/// sentence end unique (a generalized suffix tree): a substring that ends sentences is a node
/// even when nothing else follows it — whole words are candidates when the sentences are words.
fn whole_chars(prefix: &[u8], cap: u16) -> u16 {
    let mut n = 0u16;
    let mut i = 0;
    while n < cap {
        let len = match prefix.get(i) {
            Some(0) | None => break, // a sentence boundary ends every shared prefix
            Some(&b) => utf8_len(b),
        };
        if i + len > prefix.len() {
            break;
        }
        i += len;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed nodes by brute force: every substring of up to `max` chars that occurs in two
    /// different right contexts. With sentencepiece's rules a sentence end is a context of its
    /// own (distinct terminators), occurrences count with their sentence's weight, and the
    /// leaves (one occurrence, at a sentence end) of sentences seen twice count too; with
    /// `tokenizers`' all ends are one context and each sentence counts once.
    fn brute_force(
        sentences: &[(String, u64)],
        max: usize,
        flavor: Flavor,
    ) -> FxHashMap<String, u64> {
        let tokenizers = flavor == Flavor::Tokenizers;
        type Context = std::result::Result<char, (usize, String)>;
        let mut counts: FxHashMap<String, (u64, std::collections::BTreeSet<Context>)> =
            FxHashMap::default();
        for (s, w) in sentences {
            let chars: Vec<char> = s.chars().collect();
            for i in 0..chars.len() {
                for j in i + 2..=(i + max).min(chars.len()) {
                    let e = counts.entry(chars[i..j].iter().collect()).or_default();
                    e.0 += if tokenizers { 1 } else { *w };
                    let end = if tokenizers { (0, String::new()) } else { (i, s.clone()) };
                    e.1.insert(chars.get(j).copied().map(Ok).unwrap_or(Err(end)));
                }
            }
        }
        counts
            .into_iter()
            .filter(|(_, (n, ctx))| {
                let leaf = !tokenizers && ctx.iter().all(|c| c.is_err()) && *n >= 2;
                ctx.len() > 1 || leaf
            })
            .map(|(s, (n, _))| (s, n))
            .collect()
    }

    /// `frequent_substrings` over `words` (weighted 1, 2, ... in order) under `flavor`, with
    /// each seed's text owned, and what [`brute_force`] finds on the same sentences.
    fn seeds_and_brute_force(
        words: &[&str],
        flavor: Flavor,
    ) -> (Vec<(String, u64)>, FxHashMap<String, u64>) {
        let sentences: Vec<(String, u64)> =
            words.iter().enumerate().map(|(i, s)| (s.to_string(), i as u64 + 1)).collect();
        let text: String = sentences.iter().map(|s| format!("{}\0", s.0)).collect();
        let ends: Vec<usize> = text.match_indices('\0').map(|(i, _)| i + 1).collect();
        let got = frequent_substrings(&text, &ends, &sentences, flavor, 1000, 5, &|_| true);
        let got = got.into_iter().map(|(s, score)| (s.to_string(), score)).collect();
        (got, brute_force(&sentences, 5, flavor))
    }

    /// The seeds' scores divided by their length in characters: their counts.
    fn counts_of(seeds: Vec<(String, u64)>) -> FxHashMap<String, u64> {
        seeds
            .into_iter()
            .map(|(s, score)| {
                let n = s.chars().count() as u64;
                (s, score / n)
            })
            .collect()
    }

    #[test]
    fn tokenizers_substrings_match_brute_force() {
        let words = ["abracadabra", "ab", "cadab", "ébréé ébr", "ﬀéab", "abab", "qz", "wqz"];
        let (got, expected) = seeds_and_brute_force(&words, Flavor::Tokenizers);
        // Score descending, then text descending.
        assert!(got.windows(2).all(|w| w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 > w[1].0)));
        let got = counts_of(got);
        assert_eq!(got, expected);
        // "qz" only ever ends a sentence: with distinct ends it is a node, not with one.
        assert!(!got.contains_key("qz"));
    }

    #[test]
    fn substrings_match_brute_force() {
        let words = ["abracadabra", "ab", "cadab", "ébréé ébr", "ﬀéab", "abab"];
        let (got, expected) = seeds_and_brute_force(&words, Flavor::SentencePiece);
        assert_eq!(counts_of(got), expected);
    }
}
