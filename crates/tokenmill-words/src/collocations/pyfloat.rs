//! Float arithmetic that reproduces CPython's results bit for bit.
//!
//! NLTK's association measures are plain Python expressions over ints and floats. To give the
//! same scores — and so the same order, ties included — we evaluate them with the same
//! operations CPython performs: exact integer products (Python ints never overflow; we use
//! `i128` and report overflow), correctly rounded int/int division (`long_true_divide`),
//! `float(int)` rounding to nearest even, `float ** float` through the C library's `pow`
//! with CPython's special cases, and `sum()` of floats as the running interpreter does it
//! (plain left-to-right before 3.12, Neumaier-compensated from 3.12 on).

use std::hint::black_box;

/// Why a Python expression would have raised instead of producing a float.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathError {
    /// `ZeroDivisionError: float division by zero` (or integer division by zero).
    ZeroDivision,
    /// `ValueError: math domain error` (log of a non-positive number, negative ** fraction).
    Domain,
    /// An integer intermediate exceeded 127 bits (Python would go on with big ints).
    Overflow,
}

pub(super) type MathResult<T> = std::result::Result<T, MathError>;

/// `float(i)`: Rust's int-to-float cast rounds to nearest, ties to even, as CPython does.
#[inline]
pub(super) fn to_f64(i: i128) -> f64 {
    i as f64
}

/// `a / b` for Python ints: the exact quotient correctly rounded to a double.
pub(super) fn int_div(a: i128, b: i128) -> MathResult<f64> {
    if b == 0 {
        return Err(MathError::ZeroDivision);
    }
    const EXACT: u128 = 1 << 53;
    let (ua, ub) = (a.unsigned_abs(), b.unsigned_abs());
    let negative = (a < 0) != (b < 0);
    let magnitude = if ua <= EXACT && ub <= EXACT {
        // Both operands are exact doubles, so IEEE division rounds the exact quotient once.
        ua as f64 / ub as f64
    } else {
        rounded_quotient(ua, ub)
    };
    Ok(if negative { -magnitude } else { magnitude })
}

/// Correctly rounded `a / b` for large operands: long division to at least 55 significant bits,
/// then one extra "sticky" bit that records whether anything remained, so the single rounding
/// of the final `u128 → f64` cast sees the exact quotient's position between two doubles.
fn rounded_quotient(a: u128, b: u128) -> f64 {
    let mut quotient = a / b;
    let mut remainder = a % b;
    let mut scale = 0i32; // value = quotient * 2^-scale (+ remainder)
    if 128 - quotient.leading_zeros() > 120 {
        // Too wide to shift further: fold the low bits into the sticky bit instead.
        let low = quotient & 0xff;
        quotient >>= 8;
        let sticky = (low != 0 || remainder != 0) as u128;
        return ((quotient << 1 | sticky) as f64) * 2f64.powi(7);
    }
    while 128 - quotient.leading_zeros() < 55 {
        // remainder < b, and b is far below 2^127 here, so doubling cannot overflow.
        match remainder.checked_mul(2) {
            Some(r2) => {
                remainder = r2;
                quotient = quotient << 1 | (remainder >= b) as u128;
                if remainder >= b {
                    remainder -= b;
                }
                scale += 1;
            }
            None => break,
        }
    }
    let with_sticky = quotient << 1 | (remainder != 0) as u128;
    (with_sticky as f64) * 2f64.powi(-(scale + 1))
}

/// Exact product of Python ints.
pub(super) fn int_product(factors: &[i128]) -> MathResult<i128> {
    factors.iter().try_fold(1i128, |acc, &f| acc.checked_mul(f)).ok_or(MathError::Overflow)
}

/// `base ** exp` for Python ints with a small non-negative exponent.
pub(super) fn int_pow(base: i128, exp: u32) -> MathResult<i128> {
    base.checked_pow(exp).ok_or(MathError::Overflow)
}

/// `x / y` for Python floats: raises on a zero divisor instead of returning inf/NaN.
#[inline]
pub(super) fn div(x: f64, y: f64) -> MathResult<f64> {
    if y == 0.0 {
        Err(MathError::ZeroDivision)
    } else {
        Ok(x / y)
    }
}

/// The logarithm `log` of `x` with Python's domain check: a "math domain error" for `x <= 0`
/// (and for -inf), where Rust gives NaN or -inf.
#[inline]
fn checked_log(x: f64, log: fn(f64) -> f64) -> MathResult<f64> {
    if x > 0.0 || x.is_nan() || x == f64::INFINITY {
        Ok(log(x))
    } else {
        Err(MathError::Domain)
    }
}

/// `math.log(x)` for a float.
#[inline]
pub(super) fn ln(x: f64) -> MathResult<f64> {
    checked_log(x, f64::ln)
}

/// `math.log2(x)` for a float (for an int, call it on `to_f64(i)`, as CPython does).
#[inline]
pub(super) fn log2(x: f64) -> MathResult<f64> {
    checked_log(x, f64::log2)
}

/// `x ** y` for Python floats: CPython's special cases, then the C library's `pow`.
pub(super) fn pow(x: f64, y: f64) -> MathResult<f64> {
    if y == 0.0 {
        return Ok(1.0);
    }
    if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
        // Not reachable from counts; the library pow handles these as CPython documents.
        return Ok(x.powf(y));
    }
    if x == 0.0 {
        if y < 0.0 {
            return Err(MathError::ZeroDivision);
        }
        let odd = y.fract() == 0.0 && (y % 2.0).abs() == 1.0;
        return Ok(if odd { x } else { 0.0 });
    }
    let (base, negate) = if x < 0.0 {
        if y.fract() != 0.0 {
            // CPython returns a complex number here; a score cannot be complex.
            return Err(MathError::Domain);
        }
        (-x, (y % 2.0).abs() == 1.0)
    } else {
        (x, false)
    };
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    // black_box hides the exponent from LLVM, which would otherwise rewrite pow(x, 2.0) as
    // x * x or pow(x, 0.5) as sqrt(x) — equal to within an ulp, but not always bit for bit
    // what the C library's pow (which CPython calls) returns.
    let result = base.powf(black_box(y));
    Ok(if negate { -result } else { result })
}

/// `sum(values)` of floats with Python's int start `0`, as the running interpreter does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SumMode {
    /// CPython < 3.12: plain left-to-right addition.
    #[default]
    Plain,
    /// CPython ≥ 3.12: Neumaier's compensated summation.
    Compensated,
}

pub(super) fn sum(values: impl IntoIterator<Item = f64>, mode: SumMode) -> f64 {
    let mut iter = values.into_iter();
    // `0 + first` is a float addition (int 0 converts to 0.0), which also turns -0.0 into 0.0.
    let mut total = match iter.next() {
        Some(first) => 0.0 + first,
        None => return 0.0,
    };
    match mode {
        SumMode::Plain => iter.fold(total, |acc, x| acc + x),
        SumMode::Compensated => {
            let mut compensation = 0.0f64;
            for x in iter {
                let t = total + x;
                if total.abs() >= x.abs() {
                    compensation += (total - t) + x;
                } else {
                    compensation += (x - t) + total;
                }
                total = t;
            }
            if compensation != 0.0 && compensation.is_finite() {
                total += compensation;
            }
            total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_div_is_correctly_rounded() {
        // 2^60 + 1 over 3: compare with exact rational rounding done by hand via u128 shifts.
        let a: i128 = (1 << 60) + 1;
        let q = int_div(a, 3).unwrap();
        let exact = (a as f64) / 3.0; // a rounds first here, so compute the exact one apart
        assert!((q - exact).abs() <= exact * 1e-15);
        assert_eq!(int_div(10, 4).unwrap(), 2.5);
        assert_eq!(int_div(-7, 2).unwrap(), -3.5);
        assert_eq!(int_div(1, 0), Err(MathError::ZeroDivision));
        // Ties round to even: (2^54 + 2) / 2 = 2^53 + 1 is odd, not representable; rounds to 2^53 +
        // 2? No: 2^53 + 1 lies halfway between 2^53 and 2^53 + 2 and rounds to even 2^53.
        assert_eq!(int_div((1 << 54) + 2, 2).unwrap(), 9007199254740992.0);
        // Just above the tie the sticky bit must round up.
        assert_eq!(int_div((1 << 55) + 5, 4).unwrap(), 9007199254740994.0);
    }

    #[test]
    fn compensated_sum_matches_cpython_semantics() {
        let v = [1e16, 1.0, -1e16];
        assert_eq!(sum(v, SumMode::Plain), 0.0);
        assert_eq!(sum(v, SumMode::Compensated), 1.0);
        assert_eq!(sum([-0.0], SumMode::Plain).to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn pow_special_cases() {
        assert_eq!(pow(-3.0, 2.0).unwrap(), 9.0);
        assert_eq!(pow(-2.0, 3.0).unwrap(), -8.0);
        assert_eq!(pow(0.0, -1.0), Err(MathError::ZeroDivision));
        assert_eq!(pow(-2.0, 0.5), Err(MathError::Domain));
    }
}
