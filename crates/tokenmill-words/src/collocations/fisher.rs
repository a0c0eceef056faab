//! Fisher's exact test, one-sided (`alternative="less"`), for a 2×2 table — what NLTK's
//! `BigramAssocMeasures.fisher` gets from `scipy.stats.fisher_exact`, computed here without scipy.
//!
//! The p-value is the hypergeometric lower tail P(X ≤ a). Written by hand (no crate offers an
//! accurate hypergeometric CDF for counts in the millions): each probability comes from Loader's
//! saddle-point expansion (`stirlerr` + deviance `bd0`), which keeps full relative precision
//! where differences of `lgamma` values of size 1e7 would lose seven digits; the tail is summed
//! outward from the end point by the ratio of neighbouring terms, on whichever side of the mode
//! is the short one (and subtracted from 1 when that is the upper side).

const LN_2PI: f64 = 1.837_877_066_409_345_5;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// `ln(n!) − ln(√(2πn)·(n/e)ⁿ)`, the error of Stirling's formula, for integer `n ≥ 1`.
fn stirling_error(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        // Small values: the direct formula is accurate (all terms are below 30).
        return ln_factorial_small(n) - (n + 0.5) * n.ln() + n - LN_SQRT_2PI;
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// `ln(n!)` for integer `0 ≤ n ≤ 15` (exact product, then one log).
fn ln_factorial_small(n: f64) -> f64 {
    let mut product = 1.0f64;
    let mut k = 2.0;
    while k <= n {
        product *= k;
        k += 1.0;
    }
    product.ln()
}

/// The deviance term `x·ln(x/np) + np − x`, by a series when `x ≈ np` (no cancellation).
fn deviance(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let v = (x - np) / (x + np);
        let mut sum = (x - np) * v;
        let mut term = 2.0 * x * v;
        let v2 = v * v;
        for j in 1..1000 {
            term *= v2;
            let next = sum + term / (2 * j + 1) as f64;
            if next == sum {
                return next;
            }
            sum = next;
        }
        sum
    } else {
        x * (x / np).ln() + np - x
    }
}

/// Binomial probability P(X = x) for X ~ Bin(n, p), q = 1 − p, with full relative precision.
fn binomial_pmf(x: f64, n: f64, p: f64, q: f64) -> f64 {
    if p == 0.0 {
        return if x == 0.0 { 1.0 } else { 0.0 };
    }
    if q == 0.0 {
        return if x == n { 1.0 } else { 0.0 };
    }
    if x == 0.0 {
        if n == 0.0 {
            return 1.0;
        }
        let lc = if p < 0.1 { -deviance(n, n * q) - n * p } else { n * q.ln() };
        return lc.exp();
    }
    if x == n {
        let lc = if q < 0.1 { -deviance(n, n * p) - n * q } else { n * p.ln() };
        return lc.exp();
    }
    if x < 0.0 || x > n {
        return 0.0;
    }
    let lc = stirling_error(n)
        - stirling_error(x)
        - stirling_error(n - x)
        - deviance(x, n * p)
        - deviance(n - x, n * q);
    let lf = LN_2PI + x.ln() + (-x / n).ln_1p();
    (lc - 0.5 * lf).exp()
}

/// P(X = x) for X the number of marked items among `draws` taken from `marked + unmarked`.
fn hypergeometric_pmf(x: f64, marked: f64, unmarked: f64, draws: f64) -> f64 {
    if x < 0.0 || x > marked || draws - x > unmarked || x > draws {
        return 0.0;
    }
    if draws == 0.0 {
        return if x == 0.0 { 1.0 } else { 0.0 };
    }
    let total = marked + unmarked;
    let p = draws / total;
    let q = (total - draws) / total;
    let p1 = binomial_pmf(x, marked, p, q);
    let p2 = binomial_pmf(draws - x, unmarked, p, q);
    let p3 = binomial_pmf(draws, total, p, q);
    p1 * p2 / p3
}

/// Σ_{k ≤ x} P(X = k) / P(X = x), by the ratio of neighbouring terms, stopping once the terms
/// no longer change the sum (they shrink geometrically away from the mode).
fn lower_tail_over_pmf(mut x: f64, marked: f64, unmarked: f64, draws: f64) -> f64 {
    let mut sum = 0.0f64;
    let mut term = 1.0f64;
    while x > 0.0 && term >= f64::EPSILON * sum {
        term *= x * (unmarked - draws + x) / (draws + 1.0 - x) / (marked + 1.0 - x);
        sum += term;
        x -= 1.0;
    }
    1.0 + sum
}

/// P(X ≤ x) for the hypergeometric distribution above.
fn hypergeometric_cdf(x: f64, marked: f64, unmarked: f64, draws: f64) -> f64 {
    let (mut x, mut marked, mut unmarked, mut lower) = (x, marked, unmarked, true);
    if x * (marked + unmarked) > draws * marked {
        // x is above the mean: sum the (shorter) upper tail instead, as a lower tail of the
        // complementary count, and subtract it from one.
        std::mem::swap(&mut marked, &mut unmarked);
        x = draws - x - 1.0;
        lower = false;
    }
    if x < 0.0 || x < draws - unmarked {
        return if lower { 0.0 } else { 1.0 };
    }
    if x >= marked || x >= draws {
        return if lower { 1.0 } else { 0.0 };
    }
    let tail = hypergeometric_pmf(x, marked, unmarked, draws)
        * lower_tail_over_pmf(x, marked, unmarked, draws);
    if lower {
        tail
    } else {
        0.5 - tail + 0.5
    }
}

/// The one-sided (`alternative="less"`) p-value of Fisher's exact test for the table
/// `[[a, b], [c, d]]`, as `scipy.stats.fisher_exact` returns it: 1.0 when a row or column is
/// empty, never above 1.0. Cells must be non-negative.
pub(super) fn fisher_less(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let row1 = a + b;
    let row2 = c + d;
    let col1 = a + c;
    let col2 = b + d;
    if row1 == 0 || row2 == 0 || col1 == 0 || col2 == 0 {
        return 1.0;
    }
    hypergeometric_cdf(a as f64, row1 as f64, row2 as f64, col1 as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exact tail by brute-force rational-free summation of binomial coefficients in f64
    /// (small tables only), to check the saddle-point evaluation.
    fn brute_force(a: u64, b: u64, c: u64, d: u64) -> f64 {
        fn ln_choose(n: u64, k: u64) -> f64 {
            (1..=k).map(|i| ((n - k + i) as f64).ln() - (i as f64).ln()).sum()
        }
        let (row1, row2, col1) = (a + b, c + d, a + c);
        let total = row1 + row2;
        let lo = col1.saturating_sub(row2);
        (lo..=a)
            .map(|k| {
                (ln_choose(row1, k) + ln_choose(row2, col1 - k) - ln_choose(total, col1)).exp()
            })
            .sum()
    }

    #[test]
    fn small_tables_match_brute_force() {
        for &(a, b, c, d) in &[
            (3, 1, 1, 3),
            (1, 9, 11, 3),
            (0, 5, 5, 0),
            (8, 2, 1, 5),
            (12, 40, 7, 300),
            (2, 30, 30, 2000),
        ] {
            let want = brute_force(a, b, c, d).min(1.0);
            let got = fisher_less(a, b, c, d);
            assert!(
                (got - want).abs() <= 1e-12 * want.max(1e-300),
                "{a} {b} {c} {d}: {got} vs {want}"
            );
        }
        assert_eq!(fisher_less(0, 0, 3, 4), 1.0);
    }
}
