//! N-gram collocations: which word pairs, triples and quadruples belong together.
//!
//! Mirrors NLTK's `nltk.collocations` finders and `nltk.metrics.association` measures:
//! [`WindowCounter`] counts n-grams in windows over a stream of words exactly as
//! `{Bigram,Trigram,Quadgram}CollocationFinder.from_words` does (wildcard tables included),
//! [`Counts`] holds the tables and applies filters in place, and [`rank`] scores every candidate
//! with a [`Measure`] and sorts them as NLTK's `score_ngrams` does: by decreasing score, ties by
//! the n-gram's words in code-point order. Scores are computed with CPython's arithmetic
//! (see `pyfloat`), so they equal NLTK's bit for bit, and so does the order.
//!
//! Self-contained: imports nothing from the rest of this crate, and only `Error`/`Result` from
//! tokenmill-core. The API is what this file re-exports; its submodules are private.

mod counts;
mod fisher;
mod measures;
mod pyfloat;

use std::cmp::Ordering;

pub use counts::{
    auxiliary_tables, lane, pack, Counts, NgramKey, Table, Vocab, WindowCounter, WordId,
};
pub use measures::{score, BigramMarginals, IntMarginals, Marginals, Measure};
pub use pyfloat::{MathError, SumMode};

/// A failed score: which n-gram, and what Python would have raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreError {
    pub key: NgramKey,
    pub error: MathError,
}

/// Dense word counts by id (`word_fd[w]`), built once per scoring pass.
pub fn word_counts_by_id(counts: &Counts) -> Vec<i128> {
    let mut by_id = vec![0i128; counts.vocab.len()];
    for (key, count) in counts.words.iter() {
        by_id[lane(key, 0) as usize] = count as i128;
    }
    by_id
}

/// The marginals NLTK's `score_ngram` passes to a measure for the n-gram `key` with count
/// `count`, given `word_count(id)` = `word_fd[w]` and `total` = N.
pub fn marginals(
    counts: &Counts,
    word_count: impl Fn(WordId) -> i128,
    total: i128,
    key: NgramKey,
    count: u64,
) -> Marginals {
    let w = |i: usize| lane(key, i);
    let wc = |i: usize| word_count(w(i));
    let aux = |table: usize, ids: &[WordId]| counts.aux[table].get(pack(ids)) as i128;
    match counts.order {
        2 => Marginals::Bigram(BigramMarginals {
            n_ii: count as f64 / (counts.window_size as f64 - 1.0),
            n_ix: wc(0),
            n_xi: wc(1),
            n_xx: total,
        }),
        3 => {
            let (w1, w2, w3) = (w(0), w(1), w(2));
            Marginals::Ngram(IntMarginals {
                order: 3,
                ngram: count as i128,
                triples: [0; 4],
                pairs: [aux(0, &[w1, w2]), aux(1, &[w1, w3]), aux(0, &[w2, w3]), 0, 0, 0],
                unigrams: [wc(0), wc(1), wc(2), 0],
                total,
            })
        }
        _ => {
            // aux tables: ii, iii, ixi, ixxi, iixi, ixii (see counts::auxiliary_tables).
            let (w1, w2, w3, w4) = (w(0), w(1), w(2), w(3));
            Marginals::Ngram(IntMarginals {
                order: 4,
                ngram: count as i128,
                triples: [
                    aux(1, &[w1, w2, w3]),
                    aux(4, &[w1, w2, w4]),
                    aux(5, &[w1, w3, w4]),
                    aux(1, &[w2, w3, w4]),
                ],
                pairs: [
                    aux(0, &[w1, w2]),
                    aux(2, &[w1, w3]),
                    aux(3, &[w1, w4]),
                    aux(2, &[w2, w4]),
                    aux(0, &[w3, w4]),
                    aux(0, &[w2, w3]),
                ],
                unigrams: [wc(0), wc(1), wc(2), wc(3)],
                total,
            })
        }
    }
}

/// Scores every candidate n-gram (in table order), skipping zero counts as NLTK does. Stops at
/// the first n-gram whose score Python could not compute, as NLTK would raise there.
pub fn score_all(
    counts: &Counts,
    measure: Measure,
    mode: SumMode,
) -> Result<Vec<(NgramKey, f64)>, ScoreError> {
    let word = word_counts_by_id(counts);
    let total = counts.n_total() as i128;
    let mut scored = Vec::with_capacity(counts.ngrams.len());
    for (key, count) in counts.ngrams.iter() {
        if count == 0 {
            continue;
        }
        let m = marginals(counts, |id| word[id as usize], total, key, count);
        let s = score(measure, &m, mode).map_err(|error| ScoreError { key, error })?;
        scored.push((key, s));
    }
    Ok(scored)
}

/// NLTK's order: decreasing score, then the n-gram's words in code-point order
/// (`sorted(..., key=lambda t: (-t[1], t[0]))`). Scores that compare equal (0.0 and -0.0
/// included) fall to the words; NaN, which NLTK cannot produce, sorts last.
fn compare(a: &(NgramKey, f64), b: &(NgramKey, f64), rank: &[u32], arity: usize) -> Ordering {
    let by_score = match b.1.partial_cmp(&a.1) {
        Some(o) => o,
        None => a.1.is_nan().cmp(&b.1.is_nan()),
    };
    by_score.then_with(|| {
        (0..arity)
            .map(|i| rank[lane(a.0, i) as usize].cmp(&rank[lane(b.0, i) as usize]))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    })
}

/// Scores and sorts the candidates; with `limit`, only the best `limit` (NLTK's `nbest`),
/// found by selection before sorting.
pub fn rank(
    counts: &Counts,
    measure: Measure,
    mode: SumMode,
    limit: Option<usize>,
) -> Result<Vec<(NgramKey, f64)>, ScoreError> {
    rank_by(counts, measure, mode, limit, &counts.vocab.sort_ranks())
}

/// `rank` with the words ordered by `ranks` (`ranks[id]` = the word's position), for words
/// that are not strings.
pub fn rank_by(
    counts: &Counts,
    measure: Measure,
    mode: SumMode,
    limit: Option<usize>,
    ranks: &[u32],
) -> Result<Vec<(NgramKey, f64)>, ScoreError> {
    let mut scored = score_all(counts, measure, mode)?;
    let arity = counts.order;
    let cmp = |a: &(NgramKey, f64), b: &(NgramKey, f64)| compare(a, b, ranks, arity);
    if let Some(n) = limit {
        if n < scored.len() {
            if n == 0 {
                scored.clear();
            } else {
                scored.select_nth_unstable_by(n - 1, cmp);
                scored.truncate(n);
            }
        }
    }
    scored.sort_unstable_by(cmp);
    Ok(scored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_score_then_words() {
        let mut c = WindowCounter::new(2, 2).unwrap();
        for w in "b a b a c d c d".split(' ') {
            c.push_word(w.as_bytes()).unwrap();
        }
        let counts = c.finish();
        let ranked = rank(&counts, Measure::RawFreq, SumMode::Plain, None).unwrap();
        let words = |k: NgramKey| {
            (0..2)
                .map(|i| String::from_utf8_lossy(counts.vocab.word(lane(k, i))).into_owned())
                .collect::<Vec<_>>()
        };
        // (b,a) and (c,d) twice; ties sorted by words.
        assert_eq!(words(ranked[0].0), ["b", "a"]);
        assert_eq!(words(ranked[1].0), ["c", "d"]);
        let top = rank(&counts, Measure::RawFreq, SumMode::Plain, Some(1)).unwrap();
        assert_eq!(top, ranked[..1].to_vec());
    }
}
