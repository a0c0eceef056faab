//! The EM loop of SentencePiece's Unigram trainer (unigram_model_trainer.cc):
//! * E-step: expected piece counts = Σ over words of count × marginal probability of each piece
//!   occurrence in the word's lattice (forward-backward, `f64`);
//! * M-step: drop pieces expected less than 0.5 times; score = digamma(count) - digamma(total)
//!   (the Bayesian / variational update);
//! * pruning: for each piece, the loss in corpus likelihood if it were removed and its
//!   occurrences re-segmented with the second-best segmentation of the piece itself; keep the
//!   pieces that cannot be split plus the ones with the highest loss, down to
//!   `max(shrinking_factor × size, 1.1 × vocab_size)`.
//!
//! Parallel over words (rayon) with a fixed split into [`CHUNKS`] parts summed in order, so the
//! floating-point sums — and the vocabulary — do not depend on the number of threads.
use crate::error::Result;
use crate::utils::parallel;

use super::pieces::{PieceIndex, PieceList, Scratch};
use super::seeds::sort_by_count;
use super::{Flavor, UnigramConfig};

/// Fixed number of parts the words are split into for the parallel steps.
const CHUNKS: usize = 8;

/// sentencepiece's digamma approximation (recurrence up to 7, then the asymptotic series).
pub fn digamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 7.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    // Evaluated in sentencepiece's (and `tokenizers`') order, for the same bits.
    result
        + (x.ln() + (1.0 / 24.0) * xx2 - 7.0 / 960.0 * xx4 + (31.0 / 8064.0) * xx4 * xx2
            - (127.0 / 30720.0) * xx4 * xx4)
}

/// Runs `work` over the words in [`CHUNKS`] fixed parts and adds the parts' vectors (of length
/// `len`) and log-likelihoods in part order. Only as many parts as there are threads are in
/// flight at once, so a million-piece vector is held a few times, not [`CHUNKS`] times. The
/// first error of a part (a word too long for the memory) is the result.
fn sum_over_words(
    words: &[(String, u64)],
    len: usize,
    work: impl Fn(&[(String, u64)], &mut [f64]) -> Result<f64> + Sync,
) -> Result<(Vec<f64>, f64)> {
    let chunks: Vec<&[(String, u64)]> = words.chunks(words.len().div_ceil(CHUNKS).max(1)).collect();
    let in_flight = parallel::num_threads().clamp(1, CHUNKS);
    let mut total = vec![0.0; len];
    let mut log_likelihood = 0.0;
    for group in chunks.chunks(in_flight) {
        let parts: Vec<Result<(Vec<f64>, f64)>> = parallel::map_ref_collect(group, |chunk| {
            let mut part = vec![0.0; len];
            let ll = work(chunk, &mut part)?;
            Ok((part, ll))
        });
        for part in parts {
            let (part, ll) = part?;
            total.iter_mut().zip(part).for_each(|(t, p)| *t += p);
            log_likelihood += ll;
        }
    }
    Ok((total, log_likelihood))
}

/// Expected count of every piece of the round (0 for dead ones) and the corpus log-likelihood
/// (Σ count × log P(word)). With `tokenizers`' rules, each word's counts are computed as it does
/// (see [`Scratch::add_expected_tokenizers`]).
pub fn e_step(
    index: &PieceIndex,
    words: &[(String, u64)],
    flavor: Flavor,
) -> Result<(Vec<f64>, f64)> {
    let (mut expected, ll) = sum_over_words(words, index.pieces.len() + 1, |chunk, expected| {
        let mut scratch = Scratch::default();
        let mut ll = 0.0;
        for (word, count) in chunk {
            let count = *count as f64;
            ll += scratch.with_edges(index, word, |s, lattice| match flavor {
                Flavor::SentencePiece => s.add_expected(lattice, count, expected),
                Flavor::Tokenizers => s.add_expected_tokenizers(lattice, count, expected),
            })?;
        }
        Ok(ll)
    })?;
    expected.truncate(index.pieces.len());
    Ok((expected, ll))
}

/// The M-step (see the module docs): pieces expected less than 0.5 times die, the others get
/// digamma(count) - digamma(total).
pub fn m_step(index: &mut PieceIndex, expected: &[f64]) {
    const THRESHOLD: f64 = 0.5;
    for (alive, &e) in index.alive.iter_mut().zip(expected) {
        *alive &= e >= THRESHOLD;
    }
    let sum: f64 = expected.iter().zip(&index.alive).filter(|p| *p.1).map(|p| *p.0).sum();
    let log_sum = digamma(sum);
    for ((score, &e), &alive) in index.pieces.scores.iter_mut().zip(expected).zip(&index.alive) {
        if alive {
            *score = digamma(e) - log_sum;
        }
    }
    index.refresh();
}

/// What pruning needs to know about a piece: `None` when its own best segmentation is not
/// itself (it goes); `Some(alternative)` otherwise, with its second-best segmentation (empty
/// when it has none: it stays).
fn alternative(
    index: &PieceIndex,
    i: usize,
    scratch: &mut Scratch,
    path: &mut Vec<u32>,
) -> Result<Option<Vec<u32>>> {
    scratch.with_edges(index, index.pieces.get(i), |s, lattice| {
        s.viterbi(lattice, None, path);
        if path.len() >= 2 {
            return None;
        }
        s.viterbi(lattice, Some(i as u32), path);
        Some(path.clone())
    })
}

/// The pruning step (see the module docs): the surviving pieces of the round, the ones that
/// are kept whatever their loss first, then by decreasing loss. `desired` is 1.1 × the target
/// vocabulary size. `config.flavor` decides the rules where `tokenizers` differs:
/// * kept whatever their loss: pieces without alternative — sentencepiece only when some Viterbi
///   path uses them, `tokenizers` always (characters) — and, for `tokenizers` only, pieces
///   that are not their own best segmentation but that some Viterbi path uses;
/// * the loss: `tokenizers` counts the unknown piece's frequency in the total and
///   renormalizes with the number of pieces (`alternatives.len()` in its code, where
///   sentencepiece uses the length of the piece's alternative);
/// * the size: `tokenizers` counts its `<UNK>` piece, and keeps every candidate when the kept
///   pieces already exceed the size.
pub fn prune(
    index: &PieceIndex,
    words: &[(String, u64)],
    config: &UnigramConfig,
    desired: usize,
) -> Result<PieceList> {
    let tokenizers = config.flavor == Flavor::Tokenizers;
    let n = index.pieces.len();
    let live: Vec<usize> = (0..n).filter(|&i| index.alive[i]).collect();
    let chunks: Vec<&[usize]> = live.chunks(live.len().div_ceil(CHUNKS * 4).max(1)).collect();
    let alternatives: Vec<Option<Vec<u32>>> =
        parallel::map_ref_collect::<_, _, Vec<Result<Vec<_>>>>(&chunks, |chunk| {
            let mut scratch = Scratch::default();
            let mut path = vec![];
            chunk.iter().map(|&i| alternative(index, i, &mut scratch, &mut path)).collect()
        })
        .into_iter()
        .collect::<Result<Vec<Vec<_>>>>()?
        .into_iter()
        .flatten()
        .collect();

    // Viterbi frequency of every piece (and of the unknown piece, at `n`) over the corpus.
    let (freq, _) = sum_over_words(words, n + 1, |chunk, freq| {
        let mut scratch = Scratch::default();
        let mut path = vec![];
        for (word, count) in chunk {
            scratch.with_edges(index, word, |s, lattice| s.viterbi(lattice, None, &mut path))?;
            for &id in &path {
                freq[id as usize] += *count as f64;
            }
        }
        Ok(0.0)
    })?;
    let vsum: f64 = words.iter().map(|w| w.1 as f64).sum();
    // Sums of whole counts: exact, whatever the order.
    let sum: f64 = if tokenizers { freq.iter().sum() } else { freq[..n].iter().sum() };
    let log_sum = sum.ln();
    // `tokenizers`' pieces: the live ones and its `<UNK>`.
    let num_pieces = live.len() + 1;

    let mut kept: Vec<usize> = vec![];
    let mut candidates: Vec<(usize, f64)> = vec![];
    for (&i, alternative) in live.iter().zip(&alternatives) {
        let used = freq[i] != 0.0;
        let alternative = match alternative {
            // Not its own best segmentation.
            None => {
                if tokenizers && used {
                    kept.push(i);
                }
                continue;
            }
            Some(alternative) => alternative,
        };
        if alternative.is_empty() {
            if used || tokenizers {
                kept.push(i);
            }
            continue;
        }
        if !used {
            continue;
        }
        // The piece's share of the corpus: its occurrences over the number of words.
        let f = freq[i] / vsum;
        let logprob_piece = freq[i].ln() - log_sum;
        let others = if tokenizers { num_pieces } else { alternative.len() };
        let log_sum_alt = (sum + freq[i] * (others as f64 - 1.0)).ln();
        let logprob_alt: f64 =
            alternative.iter().map(|&a| (freq[a as usize] + freq[i]).ln() - log_sum_alt).sum();
        candidates.push((i, f * (logprob_piece - logprob_alt)));
    }
    // Highest loss first; ties by position (sentencepiece's Sorted on (index, loss), the stable
    // sort of `tokenizers`).
    candidates.sort_by(|a, b| {
        b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then(a.0.cmp(&b.0))
    });
    let room = if tokenizers {
        let pruned_size = desired.max((config.shrinking_factor * num_pieces as f64) as usize);
        // Its `<UNK>` comes first; it stops when the list reaches the size exactly.
        match pruned_size.checked_sub(kept.len() + 1) {
            Some(room) => room,
            None => candidates.len(),
        }
    } else {
        let pruned_size = desired.max((config.shrinking_factor * live.len() as f64) as usize);
        pruned_size.saturating_sub(kept.len())
    };
    kept.extend(candidates.into_iter().take(room).map(|c| c.0));
    Ok(index.pieces.select(kept, |i| index.pieces.scores[i]))
}

/// Every required character (in the given order) with its score or, when the model lost it,
/// the lowest score plus 0.0001 per character already given one (sentencepiece's and
/// `tokenizers`' rule).
fn required_char_scores(
    pieces: &PieceList,
    chars: impl IntoIterator<Item = String>,
) -> Vec<(String, f64)> {
    let min_score = pieces.scores.iter().copied().fold(f64::INFINITY, f64::min);
    let min_score = if min_score.is_finite() { min_score } else { 0.0 };
    let scores: rustc_hash::FxHashMap<&str, f64> = pieces.iter().collect();
    let mut penalty = 0.0;
    let mut score_of = |c: &str| match scores.get(c) {
        Some(&s) => s,
        None => {
            let s = min_score + penalty;
            penalty += 0.0001;
            s
        }
    };
    chars
        .into_iter()
        .map(|c| {
            let score = score_of(&c);
            (c, score)
        })
        .collect()
}

/// `tokenizers`' final vocabulary: every required character ([`required_char_scores`]), then the
/// pieces in training order until `size` pieces are there (when the characters alone reach
/// `size`, all pieces: `tokenizers` checks the size only after adding one), sorted by score,
/// descending and stable. `tokenizers` visits the characters in hash order; here they go by code
/// point.
pub fn finalize_tokenizers(
    pieces: &PieceList,
    required_chars: &[(char, u64)],
    size: usize,
) -> Vec<(String, f64)> {
    let mut chars: Vec<char> = required_chars.iter().map(|r| r.0).collect();
    chars.sort_unstable();
    let mut out = required_char_scores(pieces, chars.iter().map(|c| c.to_string()));
    let mut taken: rustc_hash::FxHashSet<String> = out.iter().map(|p| p.0.clone()).collect();
    // The training `<UNK>` piece never makes it into the vocabulary, nor its text.
    taken.insert("<UNK>".into());
    for (piece, score) in pieces.iter() {
        if taken.contains(piece) {
            continue;
        }
        out.push((piece.to_string(), if score.is_nan() { 0.0 } else { score }));
        if out.len() == size {
            break;
        }
    }
    out.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    out
}

/// The final vocabulary: every required character ([`required_char_scores`], by count), then
/// the best pieces until `size`, sorted by score then piece.
pub fn finalize(
    pieces: &PieceList,
    required_chars: &[(char, u64)],
    size: usize,
) -> Vec<(String, f64)> {
    let mut required: Vec<(String, u64)> =
        required_chars.iter().map(|&(c, n)| (c.to_string(), n)).collect();
    sort_by_count(&mut required);
    let mut chosen: rustc_hash::FxHashMap<String, f64> =
        required_char_scores(pieces, required.into_iter().map(|r| r.0)).into_iter().collect();
    let mut by_score = pieces.to_vec();
    sort_by_count(&mut by_score);
    for (p, s) in by_score {
        if chosen.len() >= size {
            break;
        }
        chosen.entry(p).or_insert(s);
    }
    let mut out: Vec<(String, f64)> = chosen.into_iter().collect();
    sort_by_count(&mut out);
    out
}
