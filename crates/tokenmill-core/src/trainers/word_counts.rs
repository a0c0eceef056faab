//! Parallel, streaming word counting: the "feed" phase of training.
//!
//! Sequences are pulled from the caller's iterator in chunks of about [`CHUNK_BYTES`]; each chunk
//! is cut into words and counted on all cores (rayon, one map per worker, reduced), then added to
//! the running totals. Only one chunk of text is held at a time. [`count_words_within`] keeps the
//! totals within a memory budget, spilling to disk (see [`spill`](super::spill)). Counts are
//! `u64` and saturate.
use rayon::prelude::*;

use crate::utils::parallel;
use rustc_hash::FxHashMap;

use super::spill::{Budget, CountTable, SpillingCounter};
use crate::error::Result;

/// Word → number of occurrences.
pub type WordCounts = FxHashMap<String, u64>;

/// How much text one parallel round counts (big enough to keep cores busy, small enough to stream).
pub const CHUNK_BYTES: usize = 4 << 20;
/// Upper bound of sequences per chunk (many tiny sequences).
const CHUNK_SEQUENCES: usize = 1 << 16;

/// Adds one occurrence of `word` to `counts`, allocating only for unseen words.
#[inline]
pub fn add_word(counts: &mut WordCounts, word: &str, n: u64) {
    if let Some(c) = counts.get_mut(word) {
        *c = c.saturating_add(n);
    } else {
        counts.insert(word.to_owned(), n);
    }
}

/// Adds all of `from` into `into` (moving keys; the larger map stays the target).
pub fn merge_counts(mut into: WordCounts, mut from: WordCounts) -> WordCounts {
    if into.len() < from.len() {
        std::mem::swap(&mut into, &mut from);
    }
    for (w, n) in from {
        let c = into.entry(w).or_insert(0);
        *c = c.saturating_add(n);
    }
    into
}

/// Where a word splitter hands each word of a sequence.
pub type Emit<'a> = &'a mut dyn FnMut(&str);

/// `process`, which returns a sequence's words (`tokenizers`' `feed` API), as the callback that
/// [`count_words`] takes: each word handed to `emit`.
pub fn emit_words<F>(process: F) -> impl Fn(&str, Emit<'_>) -> Result<()> + Sync
where
    F: Fn(&str) -> Result<Vec<String>> + Sync,
{
    move |sequence, emit| {
        process(sequence)?.iter().for_each(|word| emit(word));
        Ok(())
    }
}

/// Counts the words of every sequence. `process(sequence, emit)` cuts a sequence into words and
/// calls `emit` for each. The first error (from the iterator or from `process`) stops counting.
/// `on_chunk` is told how many bytes each counted chunk had (for progress bars).
pub fn count_words<I, S, F>(
    sequences: I,
    process: F,
    on_chunk: impl FnMut(u64),
) -> Result<WordCounts>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let mut totals = WordCounts::default();
    count_chunks(sequences, process, on_chunk, |counts| {
        totals = merge_counts(std::mem::take(&mut totals), counts);
        Ok(())
    })?;
    Ok(totals)
}

/// [`count_words`] within `budget`: the totals spill sorted runs to disk when they would exceed
/// it, and are merged exactly at the end (see [`spill`](super::spill)).
pub fn count_words_within<I, S, F>(
    sequences: I,
    process: F,
    on_chunk: impl FnMut(u64),
    budget: &Budget,
) -> Result<CountTable>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let mut totals = SpillingCounter::new(budget);
    count_chunks(sequences, process, on_chunk, |counts| totals.add_counts(counts))?;
    totals.finish()
}

/// Counts the sequences chunk by chunk, handing each chunk's counts to `add`.
fn count_chunks<I, S, F>(
    mut sequences: I,
    process: F,
    mut on_chunk: impl FnMut(u64),
    mut add: impl FnMut(WordCounts) -> Result<()>,
) -> Result<()>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let mut chunk: Vec<S> = Vec::new();
    loop {
        chunk.clear();
        let mut bytes = 0usize;
        for item in sequences.by_ref() {
            let s = item?;
            bytes += s.as_ref().len();
            chunk.push(s);
            if bytes >= CHUNK_BYTES || chunk.len() >= CHUNK_SEQUENCES {
                break;
            }
        }
        if chunk.is_empty() {
            return Ok(());
        }
        add(count_chunk(std::mem::take(&mut chunk), &process)?)?;
        on_chunk(bytes as u64);
    }
}

fn count_chunk<S, F>(chunk: Vec<S>, process: &F) -> Result<WordCounts>
where
    S: AsRef<str> + Send,
    F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
{
    let count_one = |mut counts: WordCounts, s: S| -> Result<WordCounts> {
        process(s.as_ref(), &mut |w: &str| add_word(&mut counts, w, 1))?;
        Ok(counts)
    };
    parallel::either(
        chunk,
        |chunk| chunk.into_iter().try_fold(WordCounts::default(), count_one),
        |chunk| {
            chunk
                .into_par_iter()
                .with_min_len(16)
                .try_fold(WordCounts::default, count_one)
                .try_reduce(WordCounts::default, |a, b| Ok(merge_counts(a, b)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_across_chunks_and_errors_stop() {
        let text: Vec<Result<String>> =
            (0..200_000).map(|i| Ok(format!("a b{} c", i % 3))).collect();
        let counts = count_words(
            text.into_iter(),
            |s, emit| {
                s.split(' ').for_each(emit);
                Ok(())
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(counts["a"], 200_000);
        assert_eq!(counts["b0"] + counts["b1"] + counts["b2"], 200_000);
        let bad = vec![Ok("x".to_string()), Err(crate::Error::Other("boom".into()))];
        assert!(count_words(bad.into_iter(), |_, _| Ok(()), |_| {}).is_err());
    }
}
