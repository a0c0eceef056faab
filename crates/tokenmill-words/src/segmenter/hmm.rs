//! Character-level BMES hidden Markov model for words the dictionary does not know (as jieba's
//! `finalseg`): each character is tagged B(egin), M(iddle), E(nd) of a word or S(ingle), and the
//! Viterbi path over the tags cuts a run of characters into words.
//!
//! Trained by counting, with add-`alpha` smoothing: from a segmented corpus (start tags of lines,
//! tag transitions across the whole line, emissions), or from a word list (each word weighted by
//! its frequency; transitions between words estimated as if words followed each other at random,
//! which a list without context is all one can say).
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

const B: usize = 0;
const M: usize = 1;
const E: usize = 2;
const S: usize = 3;

/// The tags each tag may follow (B after E or S; M after B or M; E after B or M; S after E or S).
const PREVIOUS: [[usize; 2]; 4] = [[E, S], [B, M], [B, M], [E, S]];

/// ln P of an impossible event: finite (jieba's MIN_FLOAT) so that models survive JSON.
const IMPOSSIBLE: f64 = -3.14e100;

/// Smoothing added to every count of an allowed event.
const ALPHA: f64 = 0.5;

/// BMES log probabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hmm {
    /// ln P(first tag), for B, M, E, S (M and E are impossible: IMPOSSIBLE (finite, so that it
    /// survives JSON)).
    pub start: [f64; 4],
    /// ln P(tag | previous tag); impossible transitions are IMPOSSIBLE (finite, so that it survives
    /// JSON).
    pub trans: [[f64; 4]; 4],
    /// ln P(char | tag) for characters seen in training.
    pub emit: FxHashMap<char, [f64; 4]>,
    /// ln P(an unseen char | tag).
    pub unseen: [f64; 4],
    /// Estimated from word lists only (no running text): such a model knows how words are
    /// built but not how often one-character words follow each other, so the segmenter lets it
    /// re-cut only runs holding a character that is no dictionary word (see `Segmenter`).
    pub from_word_list: bool,
}

/// Counts from which an `Hmm` is estimated.
#[derive(Debug, Clone, Default)]
pub(crate) struct HmmCounts {
    start: [f64; 4],
    trans: [[f64; 4]; 4],
    emit: FxHashMap<char, [f64; 4]>,
    /// Word-list mode: how often words end in E / S and start with B / S.
    word_ends: [f64; 4],
    word_starts: [f64; 4],
    from_word_list: bool,
}

fn tags_of(word: &str, mut f: impl FnMut(char, usize)) {
    let n = word.chars().count();
    for (i, c) in word.chars().enumerate() {
        let tag = if n == 1 {
            S
        } else if i == 0 {
            B
        } else if i + 1 == n {
            E
        } else {
            M
        };
        f(c, tag);
    }
}

impl HmmCounts {
    /// Counts one line of a segmented corpus (its words in order).
    pub(crate) fn add_sentence<'a>(&mut self, words: impl IntoIterator<Item = &'a str>) {
        let mut previous: Option<usize> = None;
        for word in words {
            tags_of(word, |c, tag| {
                match previous {
                    None => self.start[tag] += 1.0,
                    Some(p) => self.trans[p][tag] += 1.0,
                }
                self.emit.entry(c).or_default()[tag] += 1.0;
                previous = Some(tag);
            });
        }
    }

    /// Counts one word of a word list, `weight` times.
    pub(crate) fn add_word(&mut self, word: &str, weight: f64) {
        self.from_word_list = true;
        let mut previous: Option<usize> = None;
        tags_of(word, |c, tag| {
            match previous {
                None => self.word_starts[tag] += weight,
                Some(p) => self.trans[p][tag] += weight,
            }
            self.emit.entry(c).or_default()[tag] += weight;
            previous = Some(tag);
        });
        if let Some(last) = previous {
            self.word_ends[last] += weight;
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.emit.is_empty()
    }

    /// The smoothed model.
    pub(crate) fn finish(mut self) -> Hmm {
        // Corpus sentences counted start tags; a model from word lists alone saw no sentence.
        let from_word_list = self.start.iter().all(|&c| c == 0.0);
        if self.from_word_list {
            // Words follow each other independently: P(next starts with t) = share of words
            // starting with t, after whatever tag the previous word ended with.
            let starts: f64 = self.word_starts.iter().sum();
            for end in [E, S] {
                for begin in [B, S] {
                    let share = if starts > 0.0 { self.word_starts[begin] / starts } else { 0.5 };
                    self.trans[end][begin] += self.word_ends[end] * share;
                }
            }
            for t in 0..4 {
                self.start[t] += self.word_starts[t];
            }
        }
        let allowed_start = [B, S];
        let start_total: f64 = allowed_start.iter().map(|&t| self.start[t] + ALPHA).sum();
        let mut start = [IMPOSSIBLE; 4];
        for &t in &allowed_start {
            start[t] = ((self.start[t] + ALPHA) / start_total).ln();
        }
        let mut trans = [[IMPOSSIBLE; 4]; 4];
        for (next, prevs) in PREVIOUS.iter().enumerate() {
            for &p in prevs {
                trans[p][next] = 0.0; // marks allowed
            }
        }
        for (p, row) in trans.iter_mut().enumerate() {
            let allowed: Vec<usize> = (0..4).filter(|&n| row[n] == 0.0).collect();
            let total: f64 = allowed.iter().map(|&n| self.trans[p][n] + ALPHA).sum();
            for n in allowed {
                row[n] = ((self.trans[p][n] + ALPHA) / total).ln();
            }
        }
        let vocabulary = self.emit.len() as f64 + 1.0;
        let mut tag_totals = [0f64; 4];
        for counts in self.emit.values() {
            for t in 0..4 {
                tag_totals[t] += counts[t];
            }
        }
        let denominators: Vec<f64> =
            tag_totals.iter().map(|total| total + ALPHA * vocabulary).collect();
        let unseen = [0, 1, 2, 3].map(|t| (ALPHA / denominators[t]).ln());
        let emit = self
            .emit
            .into_iter()
            .map(|(c, counts)| {
                (c, [0, 1, 2, 3].map(|t| ((counts[t] + ALPHA) / denominators[t]).ln()))
            })
            .collect();
        Hmm { start, trans, emit, unseen, from_word_list }
    }
}

impl Hmm {
    /// Cuts `chars` into words: calls `f(start, end)` (char indices) for each word, in order.
    /// Viterbi over the BMES tags; the path must end in E or S. Ties: the first candidate wins,
    /// previous tags tried in the order of `PREVIOUS`, final tags in the order E, S.
    pub(crate) fn cut(&self, chars: &[char], mut f: impl FnMut(usize, usize)) {
        let n = chars.len();
        if n == 0 {
            return;
        }
        let emission = |c: char| self.emit.get(&c).copied().unwrap_or(self.unseen);
        let mut back: Vec<[u8; 4]> = vec![[0; 4]; n];
        let first = emission(chars[0]);
        let mut scores = [0, 1, 2, 3].map(|t| self.start[t] + first[t]);
        for (i, &c) in chars.iter().enumerate().skip(1) {
            let em = emission(c);
            let mut next = [f64::NEG_INFINITY; 4];
            for tag in 0..4 {
                let mut best = f64::NEG_INFINITY;
                let mut best_prev = PREVIOUS[tag][0];
                for &p in &PREVIOUS[tag] {
                    let s = scores[p] + self.trans[p][tag];
                    if s > best {
                        best = s;
                        best_prev = p;
                    }
                }
                next[tag] = best + em[tag];
                back[i][tag] = best_prev as u8;
            }
            scores = next;
        }
        let mut tag = if scores[S] > scores[E] { S } else { E };
        let mut tags = vec![0u8; n];
        for i in (0..n).rev() {
            tags[i] = tag as u8;
            tag = back[i][tag] as usize;
        }
        let mut start = 0;
        for (i, &t) in tags.iter().enumerate() {
            if t as usize == E || t as usize == S || i + 1 == n {
                f(start, i + 1);
                start = i + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_words_from_a_corpus() {
        let mut counts = HmmCounts::default();
        for _ in 0..20 {
            counts.add_sentence(["我们", "喜欢", "北京"]);
            counts.add_sentence(["他", "喜欢", "我们"]);
        }
        let hmm = counts.finish();
        let chars: Vec<char> = "我们喜欢北京".chars().collect();
        let mut words = vec![];
        hmm.cut(&chars, |s, e| words.push(chars[s..e].iter().collect::<String>()));
        assert_eq!(words, ["我们", "喜欢", "北京"]);
    }

    #[test]
    fn covers_every_char_even_unseen() {
        let mut counts = HmmCounts::default();
        counts.add_word("北京", 3.0);
        counts.add_word("我", 1.0);
        let hmm = counts.finish();
        let chars: Vec<char> = "xyz北京😀".chars().collect();
        let mut end = 0;
        hmm.cut(&chars, |s, e| {
            assert_eq!(s, end);
            assert!(e > s);
            end = e;
        });
        assert_eq!(end, chars.len());
    }
}
