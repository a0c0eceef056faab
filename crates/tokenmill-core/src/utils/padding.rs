//! Padding of encodings to a common length, as `tokenizers` does it.
//!
//! The parameters are read from and written to tokenizer.json's `padding` field with
//! `tokenizers`' schema: `{"strategy": "BatchLongest" | {"Fixed": n}, "direction": "Right",
//! "pad_to_multiple_of": null, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}`.
use educe::Educe;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::tokenizer::encoding::PaddingDirection;
use crate::tokenizer::{Encoding, StoredEncoding};

/// The length to pad to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PaddingStrategy {
    /// The length of the longest encoding of the batch (of the encoding itself in `encode`).
    #[default]
    BatchLongest,
    Fixed(usize),
}

impl PaddingDirection {
    /// The Python name (`"left"` / `"right"`).
    pub fn as_str(&self) -> &'static str {
        match self {
            PaddingDirection::Left => "left",
            PaddingDirection::Right => "right",
        }
    }

    /// Parses the Python name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "left" => Ok(PaddingDirection::Left),
            "right" => Ok(PaddingDirection::Right),
            other => Err(Error::InvalidArgument(format!(
                "unknown padding direction {other:?}: use \"left\" or \"right\""
            ))),
        }
    }
}

/// Padding settings of a tokenizer. Field order is the tokenizer.json key order. By default:
/// to the longest of the batch, on the right, with `[PAD]` (id 0, type id 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Educe)]
#[educe(Default)]
pub struct PaddingParams {
    pub strategy: PaddingStrategy,
    pub direction: PaddingDirection,
    /// Round the length up to a multiple of this (0 or `None`: no rounding).
    pub pad_to_multiple_of: Option<usize>,
    pub pad_id: u32,
    pub pad_type_id: u32,
    #[educe(Default = "[PAD]")]
    pub pad_token: String,
}

impl PaddingParams {
    /// The length encodings of `longest` tokens (the longest of the batch) are padded to; an
    /// error when rounding up to `pad_to_multiple_of` overflows.
    pub fn target_length(&self, longest: usize) -> Result<usize> {
        let length = match self.strategy {
            PaddingStrategy::Fixed(n) => n,
            PaddingStrategy::BatchLongest => longest,
        };
        match self.pad_to_multiple_of {
            Some(m) if m > 0 && length % m > 0 => {
                length.checked_add(m - length % m).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "padding: length {length} rounded up to a multiple of pad_to_multiple_of \
                        ({m}) is too large"
                    ))
                })
            }
            _ => Ok(length),
        }
    }
}

/// Bytes a token takes in an `Encoding` (id, type id, masks, text, word, offsets), not counting
/// its text's characters.
const TOKEN_BYTES: usize = 4 * size_of::<u32>()
    + size_of::<String>()
    + size_of::<Option<u32>>()
    + size_of::<(usize, usize)>();

/// Checks that `rows` encodings padded to `length` tokens of `pad_token` can be held, before
/// any of it is allocated: a length whose size overflows or that the system refuses is an
/// error naming it (where the allocation would abort the process). A large size is probed
/// with a trial reservation, released at once and never written (so no page is touched).
pub fn check_padded_size(rows: usize, length: usize, pad_token: &str) -> Result<()> {
    if rows.checked_mul(length).is_some_and(|tokens| tokens_fit(tokens, pad_token.len())) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "padding length {length} is too large: {rows} encoding(s) of {length} tokens need more \
                memory than can be allocated"
        )))
    }
}

/// Whether `tokens` tokens, each with `text_bytes` bytes of text, can be held in encodings:
/// a size that overflows or that the system refuses (probed as by [`check_padded_size`]) cannot.
pub fn tokens_fit(tokens: usize, text_bytes: usize) -> bool {
    tokens.checked_mul(TOKEN_BYTES + text_bytes).is_some_and(crate::utils::can_allocate)
}

/// Pads every encoding (and its overflowing windows) to the length `params` gives for the
/// batch; never shortens anything. An error (before any padding) when that length is too large
/// to allocate.
pub fn pad_encodings(encodings: &mut [Encoding], params: &PaddingParams) -> Result<()> {
    let Some(padding) = BatchPadding::new(encodings.iter().map(Encoding::len), params)? else {
        return Ok(());
    };
    crate::utils::parallel::for_each_mut(encodings, |e| padding.apply(e));
    Ok(())
}

/// The padding of one batch: the length its encodings are padded to, and how. Lets a batch be
/// padded later, or never (NumPy rows are filled with the pad values directly; see
/// the `StoredEncoding` output of `Tokenizer::encode_batch_as`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchPadding {
    pub target: usize,
    pub params: PaddingParams,
}

impl BatchPadding {
    /// The padding of a batch whose encodings (not counting their overflowing windows) have
    /// these lengths; None for an empty batch, an error when the padded batch is too large to
    /// allocate (see `check_padded_size`).
    pub fn new(
        lengths: impl Iterator<Item = usize>,
        params: &PaddingParams,
    ) -> Result<Option<BatchPadding>> {
        let (mut longest, mut rows) = (0, 0usize);
        for length in lengths {
            (longest, rows) = (longest.max(length), rows + 1);
        }
        if rows == 0 {
            return Ok(None);
        }
        let target = params.target_length(longest)?;
        check_padded_size(rows, target, &params.pad_token)?;
        Ok(Some(BatchPadding { target, params: params.clone() }))
    }

    /// Pads `encoding` and its overflowing windows (never cuts).
    pub fn apply(&self, encoding: &mut Encoding) {
        let p = &self.params;
        encoding.pad(self.target, p.pad_id, p.pad_type_id, &p.pad_token, p.direction)
    }

    /// Pads a stored encoding (see `apply`): a packed one that needs pads is unpacked, padded
    /// and packed again.
    pub fn apply_stored(&self, row: &mut StoredEncoding) {
        if row.lengths().iter().all(|&len| len >= self.target) {
            return;
        }
        row.edit(|encoding| self.apply(encoding));
    }

    /// How many pad tokens `apply` puts before and after an encoding of `len` tokens.
    pub fn pad_counts(&self, len: usize) -> (usize, usize) {
        let n = self.target.saturating_sub(len);
        match self.params.direction {
            PaddingDirection::Left => (n, 0),
            PaddingDirection::Right => (0, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(n: usize) -> Encoding {
        let mut e = Encoding::default();
        for i in 0..n {
            e.push(i as u32 + 1, format!("t{i}"), (i, i + 1), Some(i as u32), 0, false);
        }
        e
    }

    #[test]
    fn impossible_lengths_are_errors_before_any_allocation() {
        // Each once aborted the process on allocation or panicked with "capacity overflow".
        for (strategy, multiple) in [
            (PaddingStrategy::Fixed(usize::MAX), None),
            (PaddingStrategy::Fixed(1 << 50), None),
            (PaddingStrategy::Fixed(usize::MAX - 3), Some(8)),
            (PaddingStrategy::BatchLongest, Some(1 << 63)),
        ] {
            let params =
                PaddingParams { strategy, pad_to_multiple_of: multiple, ..Default::default() };
            let mut batch = vec![enc(2)];
            let error = pad_encodings(&mut batch, &params).unwrap_err().to_string();
            assert!(error.contains("too large"), "{error}");
            assert_eq!(batch[0].len(), 2);
        }
        assert!(check_padded_size(1 << 20, 1 << 40, "[PAD]").is_err());
        assert!(check_padded_size(32, 512, "[PAD]").is_ok());
    }

    #[test]
    fn batch_longest_and_multiple() {
        let mut batch = vec![enc(5), enc(3)];
        let params = PaddingParams { pad_to_multiple_of: Some(4), ..Default::default() };
        pad_encodings(&mut batch, &params).unwrap();
        assert_eq!(batch[0].len(), 8);
        assert_eq!(batch[1].ids, vec![1, 2, 3, 0, 0, 0, 0, 0]);
        let mut fixed = vec![enc(5)];
        pad_encodings(
            &mut fixed,
            &PaddingParams { strategy: PaddingStrategy::Fixed(3), ..Default::default() },
        )
        .unwrap();
        assert_eq!(fixed[0].len(), 5);
    }

    #[test]
    fn serde_matches_tokenizers() {
        let p = PaddingParams {
            strategy: PaddingStrategy::Fixed(7),
            pad_to_multiple_of: Some(4),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            concat!(
                r#"{"strategy":{"Fixed":7},"direction":"Right","pad_to_multiple_of":4,"#,
                r#""pad_id":0,"pad_type_id":0,"pad_token":"[PAD]"}"#
            )
        );
        let d: PaddingParams =
            serde_json::from_str(&serde_json::to_string(&PaddingParams::default()).unwrap())
                .unwrap();
        assert_eq!(d, PaddingParams::default());
    }
}
