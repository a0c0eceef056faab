//! Association measures with NLTK's formulas and NLTK's arithmetic, so that scores agree bit
//! for bit with `nltk.metrics.association` (see `pyfloat` for why that matters: equal scores
//! are ordered by the n-gram, so an ulp of difference would reorder ties).
//!
//! Marginals follow NLTK's conventions. Bigrams: `n_ii` (a float: the window count divided by
//! `window_size − 1`), `(n_ix, n_xi)`, `n_xx`. Trigrams: `n_iii`, `(n_iix, n_ixi, n_xii)`,
//! `(n_ixx, n_xix, n_xxi)`, `n_xxx`. Quadgrams: `n_iiii`, `(n_iiix, n_iixi, n_ixii, n_xiii)`,
//! `(n_iixx, n_ixix, n_ixxi, n_xixi, n_xxii, n_xiix)`, `(n_ixxx, n_xixx, n_xxix, n_xxxi)`,
//! `n_all` — all Python ints.

use super::fisher::fisher_less;
use super::pyfloat::{self as pf, MathError, MathResult, SumMode};

/// NLTK's `_SMALL`, added to avoid division by zero and log of zero.
const SMALL: f64 = 1e-20;

/// The measures of `BigramAssocMeasures` / `TrigramAssocMeasures` / `QuadgramAssocMeasures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    RawFreq,
    StudentT,
    ChiSq,
    PhiSq,
    Pmi,
    LikelihoodRatio,
    PoissonStirling,
    Jaccard,
    Dice,
    MiLike,
    Fisher,
}

impl Measure {
    pub const ALL: [Measure; 11] = [
        Measure::RawFreq,
        Measure::StudentT,
        Measure::ChiSq,
        Measure::PhiSq,
        Measure::Pmi,
        Measure::LikelihoodRatio,
        Measure::PoissonStirling,
        Measure::Jaccard,
        Measure::Dice,
        Measure::MiLike,
        Measure::Fisher,
    ];

    /// NLTK's method name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::RawFreq => "raw_freq",
            Measure::StudentT => "student_t",
            Measure::ChiSq => "chi_sq",
            Measure::PhiSq => "phi_sq",
            Measure::Pmi => "pmi",
            Measure::LikelihoodRatio => "likelihood_ratio",
            Measure::PoissonStirling => "poisson_stirling",
            Measure::Jaccard => "jaccard",
            Measure::Dice => "dice",
            Measure::MiLike => "mi_like",
            Measure::Fisher => "fisher",
        }
    }

    pub fn from_name(name: &str) -> Option<Measure> {
        Measure::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether NLTK defines this measure for n-grams of `order` (phi_sq, dice and fisher are
    /// bigram-only).
    pub fn supports(self, order: usize) -> bool {
        match self {
            Measure::PhiSq | Measure::Dice | Measure::Fisher => order == 2,
            _ => (2..=4).contains(&order),
        }
    }
}

/// Bigram marginals (`n_ii` is a float in NLTK's finder).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BigramMarginals {
    pub n_ii: f64,
    pub n_ix: i128,
    pub n_xi: i128,
    pub n_xx: i128,
}

/// Trigram (order 3) or quadgram (order 4) marginals, all integers. Unused slots are zero:
/// trigrams use `pairs[..3]` = (n_iix, n_ixi, n_xii) and `unigrams[..3]`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IntMarginals {
    pub order: usize,
    pub ngram: i128,
    pub triples: [i128; 4],
    pub pairs: [i128; 6],
    pub unigrams: [i128; 4],
    pub total: i128,
}

#[derive(Debug, Clone, Copy, PartialEq)]
// A short-lived value made per scored n-gram; boxing the larger variant would add an allocation
// to every score for no memory saved.
#[allow(clippy::large_enum_variant)]
pub enum Marginals {
    Bigram(BigramMarginals),
    Ngram(IntMarginals),
}

/// The score of one n-gram, or the error Python would raise computing it.
pub fn score(measure: Measure, marginals: &Marginals, mode: SumMode) -> MathResult<f64> {
    match marginals {
        Marginals::Bigram(m) => score_bigram(measure, m, mode),
        Marginals::Ngram(m) => score_ngram(measure, m, mode),
    }
}

/// NLTK's bigram contingency table (n_ii, n_oi, n_io, n_oo), in float arithmetic.
fn bigram_contingency(m: &BigramMarginals) -> [f64; 4] {
    let n_oi = pf::to_f64(m.n_xi) - m.n_ii;
    let n_io = pf::to_f64(m.n_ix) - m.n_ii;
    let n_oo = pf::to_f64(m.n_xx) - m.n_ii - n_oi - n_io;
    [m.n_ii, n_oi, n_io, n_oo]
}

/// Expected cell values under independence (`BigramAssocMeasures._expected_values`).
fn bigram_expected(cont: &[f64; 4], mode: SumMode) -> MathResult<[f64; 4]> {
    let n_xx = pf::sum(cont.iter().copied(), mode);
    let mut expected = [0.0; 4];
    for (i, e) in expected.iter_mut().enumerate() {
        *e = pf::div((cont[i] + cont[i ^ 1]) * (cont[i] + cont[i ^ 2]), n_xx)?;
    }
    Ok(expected)
}

fn bigram_phi_sq(m: &BigramMarginals) -> MathResult<f64> {
    // NLTK unpacks the table as (n_ii, n_io, n_oi, n_oo); the names do not matter, the cells do.
    let [a, b, c, d] = bigram_contingency(m);
    let numerator = pf::pow(a * d - b * c, 2.0)?;
    pf::div(numerator, (a + b) * (a + c) * (b + d) * (c + d))
}

fn score_bigram(measure: Measure, m: &BigramMarginals, mode: SumMode) -> MathResult<f64> {
    let unigram_product = pf::int_product(&[m.n_ix, m.n_xi])?;
    match measure {
        Measure::RawFreq => pf::div(m.n_ii, pf::to_f64(m.n_xx)),
        Measure::StudentT => {
            let expected = pf::int_div(unigram_product, m.n_xx)?;
            pf::div(m.n_ii - expected, pf::pow(m.n_ii + SMALL, 0.5)?)
        }
        Measure::ChiSq => Ok(pf::to_f64(m.n_xx) * bigram_phi_sq(m)?),
        Measure::PhiSq => bigram_phi_sq(m),
        Measure::MiLike => pf::div(pf::pow(m.n_ii, 3.0)?, pf::to_f64(unigram_product)),
        Measure::Pmi => {
            Ok(pf::log2(m.n_ii * pf::to_f64(m.n_xx))? - pf::log2(pf::to_f64(unigram_product))?)
        }
        Measure::LikelihoodRatio => {
            let cont = bigram_contingency(m);
            let expected = bigram_expected(&cont, mode)?;
            log_likelihood_sum(&cont, &expected, mode)
        }
        Measure::PoissonStirling => {
            let expected = pf::int_div(unigram_product, m.n_xx)?;
            Ok(m.n_ii * (pf::log2(pf::div(m.n_ii, expected)?)? - 1.0))
        }
        Measure::Jaccard => {
            let cont = bigram_contingency(m);
            pf::div(cont[0], pf::sum(cont[..3].iter().copied(), mode))
        }
        Measure::Dice => pf::div(2.0 * m.n_ii, pf::to_f64(m.n_ix + m.n_xi)),
        Measure::Fisher => {
            // scipy converts the float cells with `np.asarray(table, dtype=np.int64)`, which
            // truncates toward zero, and rejects negative cells.
            let cells = bigram_contingency(m).map(|c| c.trunc());
            if cells.iter().any(|&c| c < 0.0 || c.is_nan()) {
                return Err(MathError::Domain);
            }
            let [a, b, c, d] = cells.map(|c| c as u64);
            Ok(fisher_less(a, b, c, d))
        }
    }
}

/// `2 * sum(obs * ln(obs / (exp + SMALL) + SMALL))` over the cells.
fn log_likelihood_sum(observed: &[f64], expected: &[f64], mode: SumMode) -> MathResult<f64> {
    // At most 16 cells (quadgrams): a stack array, as this runs once per candidate n-gram.
    let mut terms = [0.0f64; 16];
    for (term, (&obs, &exp)) in terms.iter_mut().zip(observed.iter().zip(expected)) {
        *term = obs * pf::ln(pf::div(obs, exp + SMALL)? + SMALL)?;
    }
    Ok(2.0 * pf::sum(terms[..observed.len()].iter().copied(), mode))
}

/// Which words (bit k: word k+1) each marginal of [`IntMarginals`] counts as present, in NLTK's
/// order: trigram pairs (n_iix, n_ixi, n_xii); quadgram triples (n_iiix, n_iixi, n_ixii, n_xiii)
/// and pairs (n_iixx, n_ixix, n_ixxi, n_xixi, n_xxii, n_xiix). Unigram k is word k+1 alone.
const TRIGRAM_PAIRS: [usize; 3] = [0b011, 0b101, 0b110];
const QUADGRAM_TRIPLES: [usize; 4] = [0b0111, 0b1011, 0b1101, 0b1110];
const QUADGRAM_PAIRS: [usize; 6] = [0b0011, 0b0101, 0b1001, 0b1010, 0b1100, 0b0110];

/// The marginal count of the n-grams that have the scored n-gram's words where `present` (a bit
/// mask) says, and any words elsewhere.
fn marginal(m: &IntMarginals, present: usize) -> i128 {
    let full = (1 << m.order) - 1;
    let find = |masks: &[usize], counts: &[i128]| {
        let slot = masks.iter().position(|&mask| mask == present);
        counts[slot.expect("every subset of the n-gram's words has its marginal")]
    };
    match present.count_ones() {
        0 => m.total,
        1 => m.unigrams[present.trailing_zeros() as usize],
        _ if present == full => m.ngram,
        2 if m.order == 3 => find(&TRIGRAM_PAIRS, &m.pairs),
        2 => find(&QUADGRAM_PAIRS, &m.pairs),
        _ => find(&QUADGRAM_TRIPLES, &m.triples),
    }
}

/// NLTK's trigram and quadgram contingency tables: cell `i` counts the n-grams in which word k+1
/// is absent ("o") where bit k of `i` is set and present ("i") elsewhere (trigrams: n_iii, n_oii,
/// n_ioi, n_ooi, n_iio, n_oio, n_ioo, n_ooo). Each cell is its marginal minus the cells with more
/// words present: NLTK's subtractions, in exact integers, so the same values.
fn contingency(m: &IntMarginals) -> Vec<i128> {
    let full = (1usize << m.order) - 1;
    let mut cells: Vec<i128> = Vec::with_capacity(full + 1);
    for absent in 0..=full {
        // The cells with more words present are those whose absent words are a proper subset
        // of `absent`: all have smaller indices, so they are already computed.
        let more_present: i128 =
            (0..absent).filter(|&other| other & absent == other).map(|other| cells[other]).sum();
        cells.push(marginal(m, full ^ absent) - more_present);
    }
    cells
}

/// Expected cell values under independence (`NgramAssocMeasures._expected_values`): for each
/// cell, the product over words of the cell's margin along that word, over `n_all^(n−1)`, all
/// in exact integers and one correctly rounded division.
fn ngram_expected(order: usize, cont: &[i128]) -> MathResult<Vec<f64>> {
    let n_all: i128 = cont.iter().sum();
    let denominator = pf::int_pow(n_all, order as u32 - 1)?;
    (0..cont.len())
        .map(|i| {
            let mut product = 1i128;
            for bit in (0..order).map(|k| 1usize << k) {
                let margin: i128 =
                    (0..cont.len()).filter(|&x| x & bit == i & bit).map(|x| cont[x]).sum();
                product = product.checked_mul(margin).ok_or(MathError::Overflow)?;
            }
            pf::int_div(product, denominator)
        })
        .collect()
}

fn score_ngram(measure: Measure, m: &IntMarginals, mode: SumMode) -> MathResult<f64> {
    let n = m.order;
    let unigrams = &m.unigrams[..n];
    let contingency = || contingency(m);
    let independent = || -> MathResult<f64> {
        pf::int_div(pf::int_product(unigrams)?, pf::int_pow(m.total, n as u32 - 1)?)
    };
    let ngram = pf::to_f64(m.ngram);
    match measure {
        Measure::RawFreq => pf::int_div(m.ngram, m.total),
        Measure::StudentT => pf::div(ngram - independent()?, pf::pow(ngram + SMALL, 0.5)?),
        Measure::ChiSq => {
            let cont = contingency();
            let expected = ngram_expected(n, &cont)?;
            let mut terms = Vec::with_capacity(cont.len());
            for (&obs, &exp) in cont.iter().zip(&expected) {
                terms.push(pf::div(pf::pow(pf::to_f64(obs) - exp, 2.0)?, exp + SMALL)?);
            }
            Ok(pf::sum(terms, mode))
        }
        Measure::MiLike => pf::int_div(pf::int_pow(m.ngram, 3)?, pf::int_product(unigrams)?),
        Measure::Pmi => {
            let joint = pf::int_product(&[m.ngram, pf::int_pow(m.total, n as u32 - 1)?])?;
            Ok(pf::log2(pf::to_f64(joint))? - pf::log2(pf::to_f64(pf::int_product(unigrams)?))?)
        }
        Measure::LikelihoodRatio => {
            let cont = contingency();
            let expected = ngram_expected(n, &cont)?;
            let observed: Vec<f64> = cont.iter().map(|&c| pf::to_f64(c)).collect();
            log_likelihood_sum(&observed, &expected, mode)
        }
        Measure::PoissonStirling => {
            let expected = independent()?;
            Ok(ngram * (pf::log2(pf::div(ngram, expected)?)? - 1.0))
        }
        Measure::Jaccard => {
            let cont = contingency();
            pf::int_div(cont[0], cont[..cont.len() - 1].iter().sum())
        }
        Measure::PhiSq | Measure::Dice | Measure::Fisher => Err(MathError::Domain),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trigram_contingency_matches_nltk_doctest() {
        // TrigramAssocMeasures._contingency(1, (1, 1, 1), (1, 73, 1), 2000)
        let m = IntMarginals {
            order: 3,
            ngram: 1,
            pairs: [1, 1, 1, 0, 0, 0],
            unigrams: [1, 73, 1, 0],
            total: 2000,
            ..Default::default()
        };
        assert_eq!(contingency(&m), vec![1, 0, 0, 0, 0, 72, 0, 1927]);
    }

    #[test]
    fn quadgram_contingency_matches_nltk_doctest() {
        // QuadgramAssocMeasures._marginals(1, 0, 2, 46, 552, 825, 2577, 34967, 1, 0, 2, 48,
        // 7250, 9031, 28585, 356653) = (1, (2, 553, 3, 1), (7804, 6, 3132, 1378, 49, 2),
        // (38970, 17660, 100, 38970), 440540); the contingency inverts it.
        let m = IntMarginals {
            order: 4,
            ngram: 1,
            triples: [2, 553, 3, 1],
            pairs: [7804, 6, 3132, 1378, 49, 2],
            unigrams: [38970, 17660, 100, 38970],
            total: 440540,
        };
        assert_eq!(
            contingency(&m),
            vec![1, 0, 2, 46, 552, 825, 2577, 34967, 1, 0, 2, 48, 7250, 9031, 28585, 356653]
        );
    }

    #[test]
    fn bigram_scores_are_plausible() {
        let m = Marginals::Bigram(BigramMarginals {
            n_ii: 20.0,
            n_ix: 42.0 as i128,
            n_xi: 20,
            n_xx: 14307668,
        });
        let pmi = score(Measure::Pmi, &m, SumMode::Plain).unwrap();
        assert!((pmi - (20.0f64 * 14307668.0 / (42.0 * 20.0)).log2()).abs() < 1e-12);
        let dice = score(Measure::Dice, &m, SumMode::Plain).unwrap();
        assert!((dice - 40.0 / 62.0).abs() < 1e-15);
    }
}
