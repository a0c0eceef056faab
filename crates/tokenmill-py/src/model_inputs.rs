//! Model inputs from the bindings: truncation / padding settings given as dicts (the shape of
//! ``Tokenizer.truncation`` / ``Tokenizer.padding``), and encodings stacked into NumPy arrays
//! without a Python object per token.
use std::borrow::Borrow;
use std::mem::MaybeUninit;

use numpy::PyArrayMethods;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenmill_core::tokenizer::{StoredEncoding, Values};
use tokenmill_core::utils::padding::{
    BatchPadding, PaddingDirection, PaddingParams, PaddingStrategy,
};
use tokenmill_core::utils::parallel;
use tokenmill_core::utils::truncation::{
    TruncationDirection, TruncationParams, TruncationStrategy,
};

use crate::errors::{id_out_of_range_error, input_type_error, InvalidArgumentError, ToPyResult};

/// A length-like argument as usize: a negative value is an `InvalidArgumentError` naming it.
pub(crate) fn non_negative(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| {
        InvalidArgumentError::new_err(format!("{name} must be a non-negative integer, got {value}"))
    })
}

fn get<'py, T: FromPyObject<'py>>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match dict.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(v.extract()?)),
        _ => Ok(None),
    }
}

/// A sequence of token ids as u32. An id outside ``0..2**32`` raises `IdOutOfRangeError`
/// naming it and its position; an item that is not an int raises `InputTypeError`.
pub(crate) fn extract_ids(ob: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Ok(ids) = ob.extract::<Vec<u32>>() {
        return Ok(ids);
    }
    // The slow path only finds and names what is wrong.
    let items = ob.try_iter().map_err(|_| {
        input_type_error(format!("ids must be a sequence of int, got {}", type_name(ob)))
    })?;
    let mut ids = Vec::new();
    for (position, item) in items.enumerate() {
        let item = item?;
        let value: i128 = item.extract().map_err(|_| {
            input_type_error(format!(
                "ids must be ints, got {} at position {position}",
                type_name(&item)
            ))
        })?;
        let id = u32::try_from(value).map_err(|_| {
            id_out_of_range_error(format!(
                "id {value} at position {position} is out of range (ids are 0 to {})",
                u32::MAX
            ))
        })?;
        ids.push(id);
    }
    Ok(ids)
}

fn type_name(ob: &Bound<'_, PyAny>) -> String {
    ob.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// Truncation settings from a dict with the keys of ``Tokenizer.truncation`` (``max_length``
/// required; ``stride``, ``strategy``, ``direction`` optional).
pub(crate) fn truncation_from_dict(dict: &Bound<'_, PyDict>) -> PyResult<TruncationParams> {
    let max_length: i64 = get(dict, "max_length")?
        .ok_or_else(|| InvalidArgumentError::new_err("truncation needs a max_length"))?;
    Ok(TruncationParams {
        max_length: non_negative("max_length", max_length)?,
        stride: non_negative("stride", get(dict, "stride")?.unwrap_or(0))?,
        strategy: TruncationStrategy::from_name(
            &get::<String>(dict, "strategy")?.unwrap_or_else(|| "longest_first".into()),
        )
        .py()?,
        direction: TruncationDirection::from_name(
            &get::<String>(dict, "direction")?.unwrap_or_else(|| "right".into()),
        )
        .py()?,
    })
}

/// Padding settings from a dict with the keys of ``Tokenizer.padding`` (all optional).
pub(crate) fn padding_from_dict(dict: &Bound<'_, PyDict>) -> PyResult<PaddingParams> {
    let defaults = PaddingParams::default();
    let length = get::<i64>(dict, "length")?.map(|l| non_negative("length", l)).transpose()?;
    Ok(PaddingParams {
        strategy: length.map_or(PaddingStrategy::BatchLongest, PaddingStrategy::Fixed),
        direction: PaddingDirection::from_name(
            &get::<String>(dict, "direction")?.unwrap_or_else(|| "right".into()),
        )
        .py()?,
        pad_to_multiple_of: get::<i64>(dict, "pad_to_multiple_of")?
            .map(|m| non_negative("pad_to_multiple_of", m))
            .transpose()?,
        pad_id: get(dict, "pad_id")?.unwrap_or(defaults.pad_id),
        pad_type_id: get(dict, "pad_type_id")?.unwrap_or(defaults.pad_type_id),
        pad_token: get(dict, "pad_token")?.unwrap_or(defaults.pad_token),
    })
}

/// A per-token field of an encoding that can be stacked into an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    InputIds,
    TokenTypeIds,
    AttentionMask,
    SpecialTokensMask,
    OffsetMapping,
}

impl Field {
    fn from_name(name: &str) -> PyResult<Field> {
        Ok(match name {
            "input_ids" => Field::InputIds,
            "token_type_ids" => Field::TokenTypeIds,
            "attention_mask" => Field::AttentionMask,
            "special_tokens_mask" => Field::SpecialTokensMask,
            "offset_mapping" => Field::OffsetMapping,
            other => {
                return Err(InvalidArgumentError::new_err(format!(
                    "unknown encoding field {other:?}"
                )))
            }
        })
    }

    /// Values per token (2 for offsets: start and end).
    fn width(self) -> usize {
        if self == Field::OffsetMapping {
            2
        } else {
            1
        }
    }

    /// What a pad token holds in this field (as `Encoding::pad` makes it).
    fn pad_value(self, params: &PaddingParams) -> i64 {
        match self {
            Field::InputIds => params.pad_id.into(),
            Field::TokenTypeIds => params.pad_type_id.into(),
            Field::AttentionMask | Field::OffsetMapping => 0,
            Field::SpecialTokensMask => 1,
        }
    }

    /// Writes this field of `row` into `out` (`width()` values per token), padded as `padding`
    /// would pad the row: the pad tokens' values are written directly, the row is not padded.
    /// Every value of `out` is written: any past the row's values and pads (there are none
    /// when `out` holds `width()` values per token of the padded row, as the callers make it)
    /// get the pad value (0 without padding).
    fn write(
        self,
        row: &StoredEncoding,
        padding: Option<&BatchPadding>,
        out: &mut [MaybeUninit<i64>],
    ) {
        let (left, pad_value) = match padding {
            Some(p) => (p.pad_counts(row.len()).0 * self.width(), self.pad_value(&p.params)),
            None => (0, 0),
        };
        let (head, out) = out.split_at_mut(left.min(out.len()));
        fill(head, std::iter::empty(), pad_value);
        match self {
            Field::InputIds => fill(out, widen(row.ids()), pad_value),
            Field::TokenTypeIds => fill(out, widen(row.type_ids()), pad_value),
            Field::AttentionMask => fill_values(out, row.attention_mask(), i64::from, pad_value),
            Field::SpecialTokensMask => {
                fill_values(out, row.special_tokens_mask(), i64::from, pad_value)
            }
            Field::OffsetMapping => fill_values(out, row.offset_values(), |v| v as i64, pad_value),
        }
    }
}

fn widen<T: Copy + Into<i64>>(values: &[T]) -> impl Iterator<Item = i64> + '_ {
    values.iter().map(|&v| v.into())
}

/// Writes `values` into `out`, then `rest` into the rest of `out` (so all of it is initialized).
fn fill(out: &mut [MaybeUninit<i64>], values: impl Iterator<Item = i64>, rest: i64) {
    let mut out = out.iter_mut();
    out.by_ref().zip(values).for_each(|(o, v)| {
        o.write(v);
    });
    out.for_each(|o| {
        o.write(rest);
    });
}

/// `fill` with the values of a held encoding's field, `convert`ed: the way the encoding is held
/// is looked at once for the row, so each side's loop is a plain loop over its values.
fn fill_values<T, L, R>(
    out: &mut [MaybeUninit<i64>],
    values: Values<L, R>,
    convert: fn(T) -> i64,
    rest: i64,
) where
    L: Iterator<Item = T>,
    R: Iterator<Item = T>,
{
    match values {
        Values::Left(values) => fill(out, values.map(convert), rest),
        Values::Right(values) => fill(out, values.map(convert), rest),
    }
}

/// `fields` of `encodings` stacked, without the GIL: per field its name and the values of every
/// row one after the other (rows filled in parallel), or None when the encodings differ in
/// length. See `stacked_into_arrays` for the arrays.
pub(crate) struct Stacked {
    rows: usize,
    length: usize,
    fields: Vec<(String, Field, Vec<i64>)>,
}

/// Checks the field names (so that a bad name fails before any work).
pub(crate) fn check_fields(fields: &[String]) -> PyResult<()> {
    fields.iter().try_for_each(|f| Field::from_name(f).map(drop))
}

/// Stacks `fields` of `encodings` (names already checked with `check_fields`), each padded as
/// `padding` pads it (if given); None when the (padded) encodings differ in length. Needs no GIL.
pub(crate) fn stack_values<E: Borrow<StoredEncoding> + Sync>(
    encodings: &[E],
    fields: &[String],
    padding: Option<&BatchPadding>,
) -> Option<Stacked> {
    let padded_len = |e: &E| {
        let len = e.borrow().len();
        padding.map_or(len, |p| len.max(p.target))
    };
    let length = encodings.first().map_or(0, padded_len);
    if encodings.iter().any(|e| padded_len(e) != length) {
        return None;
    }
    let fields = fields
        .iter()
        .filter_map(|name| Field::from_name(name).ok().map(|f| (name.clone(), f)))
        .map(|(name, field)| {
            let row_len = length * field.width();
            let total = encodings.len() * row_len;
            // Not zeroed first: zeroing is a serial pass over the whole array on the calling
            // thread (hundreds of MB for a large padded batch) before the parallel fill, and it
            // makes the calling thread fault in every page. Every value is written below.
            let mut values: Vec<i64> = Vec::with_capacity(total);
            parallel::for_each_with_chunk(
                encodings,
                &mut values.spare_capacity_mut()[..total],
                row_len,
                |e, row| field.write(e.borrow(), padding, row),
            );
            // SAFETY: the rows tile `0..total` and `Field::write` initializes every value of its
            // row.
            unsafe { values.set_len(total) };
            (name, field, values)
        })
        .collect();
    Some(Stacked { rows: encodings.len(), length, fields })
}

/// The stacked values as int64 NumPy arrays of shape ``(rows, length)`` (plus a last axis of 2
/// for ``offset_mapping``), in a dict by field name. The vectors become the arrays' buffers.
pub(crate) fn stacked_into_arrays(py: Python<'_>, stacked: Stacked) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for (name, field, values) in stacked.fields {
        let array = crate::arrays::array(py, values)?;
        let array = if field.width() == 2 {
            array.reshape([stacked.rows, stacked.length, 2])?.into_any()
        } else {
            array.reshape([stacked.rows, stacked.length])?.into_any()
        };
        out.set_item(name, array)?;
    }
    Ok(out)
}

/// `fields` of `encodings` as int64 arrays of shape ``(len(encodings), length)`` (plus a last
/// axis of 2 for ``offset_mapping``), or None when the encodings differ in length.
pub(crate) fn stack<'py>(
    py: Python<'py>,
    encodings: &[&StoredEncoding],
    fields: &[String],
) -> PyResult<Option<Bound<'py, PyDict>>> {
    check_fields(fields)?;
    match py.allow_threads(|| stack_values(encodings, fields, None)) {
        Some(stacked) => Ok(Some(stacked_into_arrays(py, stacked)?)),
        None => Ok(None),
    }
}
