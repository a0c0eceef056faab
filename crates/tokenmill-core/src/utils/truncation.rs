//! Truncation of one input or a pair to a maximum number of tokens, as `tokenizers` does it.
//!
//! The tokens cut off are kept as overflowing windows on the `Encoding` (see
//! `Encoding::truncate`), consecutive windows sharing `stride` tokens. The parameters are read
//! from and written to tokenizer.json's `truncation` field with `tokenizers`' schema:
//! `{"direction": "Right", "max_length": 512, "strategy": "LongestFirst", "stride": 0}`.
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::tokenizer::encoding::TruncationDirection;
use crate::tokenizer::Encoding;

/// Which sequence of a pair loses tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TruncationStrategy {
    /// Shorten the longer sequence first, then both evenly.
    #[default]
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

impl TruncationStrategy {
    /// The Python name (`"longest_first"`, ...).
    pub fn as_str(&self) -> &'static str {
        match self {
            TruncationStrategy::LongestFirst => "longest_first",
            TruncationStrategy::OnlyFirst => "only_first",
            TruncationStrategy::OnlySecond => "only_second",
        }
    }

    /// Parses the Python name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "longest_first" => Ok(TruncationStrategy::LongestFirst),
            "only_first" => Ok(TruncationStrategy::OnlyFirst),
            "only_second" => Ok(TruncationStrategy::OnlySecond),
            other => Err(Error::InvalidArgument(format!(
                "unknown truncation strategy {other:?}: use one of \"longest_first\", \
                    \"only_first\" or \"only_second\""
            ))),
        }
    }
}

impl TruncationDirection {
    /// The Python name (`"left"` / `"right"`).
    pub fn as_str(&self) -> &'static str {
        match self {
            TruncationDirection::Left => "left",
            TruncationDirection::Right => "right",
        }
    }

    /// Parses the Python name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "left" => Ok(TruncationDirection::Left),
            "right" => Ok(TruncationDirection::Right),
            other => Err(Error::InvalidArgument(format!(
                "unknown truncation direction {other:?}: use \"left\" or \"right\""
            ))),
        }
    }
}

/// Truncation settings of a tokenizer. Field order is the tokenizer.json key order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TruncationParams {
    #[serde(default)]
    pub direction: TruncationDirection,
    /// Maximum number of tokens, special tokens included.
    pub max_length: usize,
    pub strategy: TruncationStrategy,
    /// Tokens shared by consecutive overflowing windows.
    pub stride: usize,
}

impl Default for TruncationParams {
    fn default() -> Self {
        TruncationParams {
            direction: TruncationDirection::Right,
            max_length: 512,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
        }
    }
}

/// Truncates `encoding` (and `pair`) so that together they hold at most `params.max_length`
/// tokens (the caller has already taken off the special tokens to be added). Errors where
/// `tokenizers` refuses: `only_second` without a second sequence, a target sequence too short
/// to give up enough tokens, a stride not below a window's length.
pub fn truncate_encodings(
    mut encoding: Encoding,
    mut pair: Option<Encoding>,
    params: &TruncationParams,
) -> Result<(Encoding, Option<Encoding>)> {
    let (max_length, stride, direction) = (params.max_length, params.stride, params.direction);
    if max_length == 0 {
        encoding.truncate(0, stride, direction)?;
        if let Some(p) = pair.as_mut() {
            p.truncate(0, stride, direction)?;
        }
        return Ok((encoding, pair));
    }
    let total = encoding.len() + pair.as_ref().map_or(0, Encoding::len);
    if total <= max_length {
        return Ok((encoding, pair));
    }
    let to_remove = total - max_length;
    match (params.strategy, pair.as_mut()) {
        (TruncationStrategy::LongestFirst, None) => {
            encoding.truncate(max_length, stride, direction)?
        }
        (TruncationStrategy::LongestFirst, Some(p)) => {
            let (first_len, second_len) =
                longest_first_lengths(encoding.len(), p.len(), max_length);
            encoding.truncate(first_len, stride, direction)?;
            p.truncate(second_len, stride, direction)?;
        }
        (TruncationStrategy::OnlyFirst, _) => {
            truncate_target(&mut encoding, to_remove, stride, direction)?
        }
        (TruncationStrategy::OnlySecond, Some(p)) => {
            truncate_target(p, to_remove, stride, direction)?
        }
        (TruncationStrategy::OnlySecond, None) => return Err(Error::InvalidArgument(
            "truncation strategy \"only_second\" needs a pair of sequences, but only one was given"
                .into(),
        )),
    }
    Ok((encoding, pair))
}

/// Lengths the two sequences keep under `longest_first` (as `tokenizers` computes them): the
/// shorter one stays whole if the longer one can make room, else both get half (the second
/// the odd token).
fn longest_first_lengths(first: usize, second: usize, max_length: usize) -> (usize, usize) {
    let short = first.min(second);
    let mut keep_short = short;
    // The longer one keeps what the shorter leaves (never less than the shorter's length).
    let mut keep_long = if short > max_length { short } else { (max_length - short).max(short) };
    if keep_short + keep_long > max_length {
        keep_short = max_length / 2;
        keep_long = keep_short + max_length % 2;
    }
    if first > second {
        (keep_long, keep_short)
    } else {
        (keep_short, keep_long)
    }
}

/// Takes `to_remove` tokens off `target`, which must keep at least one.
fn truncate_target(
    target: &mut Encoding,
    to_remove: usize,
    stride: usize,
    direction: TruncationDirection,
) -> Result<()> {
    if target.len() <= to_remove {
        return Err(Error::InvalidArgument(format!(
            "truncation: the sequence to truncate has {} tokens, too few to remove the \
                {to_remove} needed to respect max_length",
            target.len()
        )));
    }
    target.truncate(target.len() - to_remove, stride, direction)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(n: usize) -> Encoding {
        let mut e = Encoding::default();
        for i in 0..n {
            e.push(i as u32, format!("t{i}"), (i, i + 1), Some(i as u32), 0, false);
        }
        e
    }

    fn params(max_length: usize, strategy: TruncationStrategy) -> TruncationParams {
        TruncationParams { max_length, strategy, ..Default::default() }
    }

    #[test]
    fn longest_first_splits_like_tokenizers() {
        // (2, 4) into 5: the short one stays, the long one gets 3.
        assert_eq!(longest_first_lengths(2, 4, 5), (2, 3));
        assert_eq!(longest_first_lengths(4, 2, 5), (3, 2));
        // (8, 8) into 7: 3 and 4.
        assert_eq!(longest_first_lengths(8, 8, 7), (3, 4));
        // short longer than max_length: both halved.
        assert_eq!(longest_first_lengths(9, 12, 5), (2, 3));
        let (a, b) =
            truncate_encodings(enc(2), Some(enc(8)), &params(7, TruncationStrategy::LongestFirst))
                .unwrap();
        assert_eq!((a.len(), b.unwrap().len()), (2, 5));
    }

    #[test]
    fn only_strategies_and_errors() {
        let (a, b) =
            truncate_encodings(enc(4), Some(enc(4)), &params(6, TruncationStrategy::OnlySecond))
                .unwrap();
        assert_eq!((a.len(), b.as_ref().unwrap().len()), (4, 2));
        assert_eq!(b.unwrap().overflowing.len(), 1);
        assert!(
            truncate_encodings(enc(4), None, &params(2, TruncationStrategy::OnlySecond)).is_err()
        );
        assert!(truncate_encodings(
            enc(2),
            Some(enc(8)),
            &params(3, TruncationStrategy::OnlyFirst)
        )
        .is_err());
        let (a, _) =
            truncate_encodings(enc(4), None, &params(0, TruncationStrategy::OnlyFirst)).unwrap();
        assert_eq!((a.len(), a.overflowing.len()), (0, 1));
    }

    #[test]
    fn serde_matches_tokenizers() {
        let p = TruncationParams { max_length: 5, stride: 2, ..Default::default() };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"direction":"Right","max_length":5,"strategy":"LongestFirst","stride":2}"#
        );
        let back: TruncationParams =
            serde_json::from_str(r#"{"max_length":5,"strategy":"OnlySecond","stride":0}"#).unwrap();
        assert_eq!(back.strategy, TruncationStrategy::OnlySecond);
    }
}
