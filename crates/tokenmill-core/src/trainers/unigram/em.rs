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
use rayon::prelude::*;

use super::seeds::sort_by_count;
use crate::error::Result;
use crate::models::unigram::{Lattice, Unigram};

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
    result + x.ln() + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4
}

/// The pieces as a model for lattices: a trailing empty piece (never matched) is the unk id, and
/// its expected counts are ignored.
pub fn training_model(pieces: &[(String, f64)]) -> Result<Unigram> {
    let min = pieces.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mut vocab = pieces.to_vec();
    vocab.push((String::new(), if min.is_finite() { min } else { 0.0 }));
    let unk = vocab.len() - 1;
    Unigram::from(vocab, Some(unk), false)
}

fn chunk_len(n: usize) -> usize {
    n.div_ceil(CHUNKS).max(1)
}

/// Expected count of every piece and the corpus log-likelihood (Σ count × log Z).
pub fn e_step(model: &Unigram, num_pieces: usize, words: &[(String, u64)]) -> Result<(Vec<f64>, f64)> {
    let parts: Vec<Result<(Vec<f64>, f64)>> = words
        .par_chunks(chunk_len(words.len()))
        .map(|chunk| {
            let mut expected = vec![0.0; num_pieces + 1];
            let mut lattice = Lattice::<f64>::new();
            let mut log_likelihood = 0.0;
            for (word, count) in chunk {
                model.populate(word, &mut lattice)?;
                log_likelihood += lattice.populate_marginal(*count as f64, &mut expected);
            }
            Ok((expected, log_likelihood))
        })
        .collect();
    let mut total = vec![0.0; num_pieces + 1];
    let mut log_likelihood = 0.0;
    for part in parts {
        let (expected, ll) = part?;
        total.iter_mut().zip(expected).for_each(|(t, e)| *t += e);
        log_likelihood += ll;
    }
    total.truncate(num_pieces);
    Ok((total, log_likelihood))
}

/// The M-step (see the module docs).
pub fn m_step(pieces: &[(String, f64)], expected: &[f64]) -> Vec<(String, f64)> {
    const THRESHOLD: f64 = 0.5;
    let kept: Vec<(String, f64)> = pieces.iter().zip(expected).filter(|(_, &e)| e >= THRESHOLD).map(|((p, _), &e)| (p.clone(), e)).collect();
    let sum: f64 = kept.iter().map(|k| k.1).sum();
    let log_sum = digamma(sum);
    kept.into_iter().map(|(p, e)| (p, digamma(e) - log_sum)).collect()
}

/// The pruning step (see the module docs). `desired` is 1.1 × the target vocabulary size.
pub fn prune(model: &Unigram, pieces: &[(String, f64)], words: &[(String, u64)], shrinking_factor: f64, desired: usize) -> Result<Vec<(String, f64)>> {
    // Whether each piece must stay, and what its second-best segmentation is.
    let splits: Vec<Result<(bool, Vec<u32>)>> = pieces
        .par_iter()
        .map(|(piece, _)| {
            let mut lattice = Lattice::<f64>::new();
            model.populate(piece, &mut lattice)?;
            let nbest = lattice.nbest(2);
            Ok(match nbest.as_slice() {
                [_] | [] => (true, vec![]),
                [best, ..] if best.0.len() >= 2 => (false, vec![]),
                [_, second, ..] => (true, second.0.iter().map(|&n| lattice.node(n).id).collect()),
            })
        })
        .collect();
    let splits: Vec<(bool, Vec<u32>)> = splits.into_iter().collect::<Result<_>>()?;

    // Viterbi frequency of every piece over the corpus.
    let parts: Vec<Result<Vec<f64>>> = words
        .par_chunks(chunk_len(words.len()))
        .map(|chunk| {
            let mut freq = vec![0.0; pieces.len() + 1];
            for (word, count) in chunk {
                for (id, _, _) in model.best_segmentation(word)? {
                    freq[id as usize] += *count as f64;
                }
            }
            Ok(freq)
        })
        .collect();
    let mut freq = vec![0.0; pieces.len() + 1];
    for part in parts {
        freq.iter_mut().zip(part?).for_each(|(t, f)| *t += f);
    }
    let vsum: f64 = words.iter().map(|w| w.1 as f64).sum();
    let sum: f64 = freq[..pieces.len()].iter().sum();
    let log_sum = sum.ln();

    let mut kept = vec![];
    let mut candidates: Vec<(usize, f64)> = vec![];
    for (i, piece) in pieces.iter().enumerate() {
        let (always_keep, alternatives) = &splits[i];
        if freq[i] == 0.0 || !always_keep {
            continue;
        }
        if alternatives.is_empty() {
            kept.push(piece.clone());
            continue;
        }
        // The piece's share of the corpus: its occurrences over the number of words.
        let f = freq[i] / vsum;
        let logprob_piece = freq[i].ln() - log_sum;
        let log_sum_alt = (sum + freq[i] * (alternatives.len() as f64 - 1.0)).ln();
        let logprob_alt: f64 = alternatives.iter().map(|&n| (freq[n as usize] + freq[i]).ln() - log_sum_alt).sum();
        candidates.push((i, f * (logprob_piece - logprob_alt)));
    }
    let pruned_size = desired.max((shrinking_factor * pieces.len() as f64) as usize);
    // Highest loss first; ties by position (sentencepiece's Sorted on (index, loss)).
    candidates.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal).then(a.0.cmp(&b.0)));
    for (i, _) in candidates {
        if kept.len() >= pruned_size {
            break;
        }
        kept.push(pieces[i].clone());
    }
    Ok(kept)
}

/// The final vocabulary: every required character (with its score, or just above the lowest
/// score when the model lost it), then the best pieces until `size`, sorted by score then piece.
pub fn finalize(pieces: &[(String, f64)], required_chars: &[(char, u64)], size: usize) -> Vec<(String, f64)> {
    let min_score = pieces.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let min_score = if min_score.is_finite() { min_score } else { 0.0 };
    let scores: rustc_hash::FxHashMap<&str, f64> = pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let mut chosen: rustc_hash::FxHashMap<String, f64> = rustc_hash::FxHashMap::default();
    let mut penalty = 0.0;
    let mut required: Vec<(String, u64)> = required_chars.iter().map(|&(c, n)| (c.to_string(), n)).collect();
    sort_by_count(&mut required);
    for (c, _) in required {
        let score = match scores.get(c.as_str()) {
            Some(&s) => s,
            None => {
                let s = min_score + penalty;
                penalty += 0.0001;
                s
            }
        };
        chosen.insert(c, score);
    }
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
