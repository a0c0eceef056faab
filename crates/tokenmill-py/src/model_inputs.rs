//! Model inputs from the bindings: truncation / padding settings given as dicts (the shape of
//! ``Tokenizer.truncation`` / ``Tokenizer.padding``), and encodings stacked into NumPy arrays
//! without a Python object per token.
use std::borrow::Borrow;
use std::mem::MaybeUninit;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenmill_core::tokenizer::Encoding;
use tokenmill_core::utils::parallel;
use tokenmill_core::utils::padding::{PaddingDirection, PaddingParams, PaddingStrategy};
use tokenmill_core::utils::truncation::{TruncationDirection, TruncationParams, TruncationStrategy};

use crate::errors::{id_out_of_range_error, input_type_error, InvalidArgumentError, ToPyResult};

/// A length-like argument as usize: a negative value is an `InvalidArgumentError` naming it.
pub(crate) fn non_negative(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| InvalidArgumentError::new_err(format!("{name} must be a non-negative integer, got {value}")))
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
    let items = ob.try_iter().map_err(|_| input_type_error(format!("ids must be a sequence of int, got {}", type_name(ob))))?;
    let mut ids = Vec::new();
    for (position, item) in items.enumerate() {
        let item = item?;
        let value: i128 = item
            .extract()
            .map_err(|_| input_type_error(format!("ids must be ints, got {} at position {position}", type_name(&item))))?;
        let id = u32::try_from(value)
            .map_err(|_| id_out_of_range_error(format!("id {value} at position {position} is out of range (ids are 0 to {})", u32::MAX)))?;
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
    let max_length: i64 = get(dict, "max_length")?.ok_or_else(|| InvalidArgumentError::new_err("truncation needs a max_length"))?;
    Ok(TruncationParams {
        max_length: non_negative("max_length", max_length)?,
        stride: non_negative("stride", get(dict, "stride")?.unwrap_or(0))?,
        strategy: TruncationStrategy::from_name(&get::<String>(dict, "strategy")?.unwrap_or_else(|| "longest_first".into())).py()?,
        direction: TruncationDirection::from_name(&get::<String>(dict, "direction")?.unwrap_or_else(|| "right".into())).py()?,
    })
}

/// Padding settings from a dict with the keys of ``Tokenizer.padding`` (all optional).
pub(crate) fn padding_from_dict(dict: &Bound<'_, PyDict>) -> PyResult<PaddingParams> {
    let defaults = PaddingParams::default();
    let length = get::<i64>(dict, "length")?.map(|l| non_negative("length", l)).transpose()?;
    Ok(PaddingParams {
        strategy: length.map_or(PaddingStrategy::BatchLongest, PaddingStrategy::Fixed),
        direction: PaddingDirection::from_name(&get::<String>(dict, "direction")?.unwrap_or_else(|| "right".into())).py()?,
        pad_to_multiple_of: get::<i64>(dict, "pad_to_multiple_of")?.map(|m| non_negative("pad_to_multiple_of", m)).transpose()?,
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
            other => return Err(InvalidArgumentError::new_err(format!("unknown encoding field {other:?}"))),
        })
    }

    /// Values per token (2 for offsets: start and end).
    fn width(self) -> usize {
        if self == Field::OffsetMapping { 2 } else { 1 }
    }

    /// Writes this field of `encoding` into `out` (`width()` values per token). Every value of
    /// `out` is written: any past the encoding's values (there are none when `out` holds
    /// `width() * encoding.len()` values, as the callers make it) become 0.
    fn write(self, encoding: &Encoding, out: &mut [MaybeUninit<i64>]) {
        match self {
            Field::InputIds => fill(out, widen(&encoding.ids)),
            Field::TokenTypeIds => fill(out, widen(&encoding.type_ids)),
            Field::AttentionMask => fill(out, widen(&encoding.attention_mask)),
            Field::SpecialTokensMask => fill(out, widen(&encoding.special_tokens_mask)),
            Field::OffsetMapping => fill(out, encoding.offsets.iter().flat_map(|&(s, e)| [s as i64, e as i64])),
        }
    }
}

fn widen(values: &[u32]) -> impl Iterator<Item = i64> + '_ {
    values.iter().map(|&v| i64::from(v))
}

/// Writes `values` into `out`, then 0 into the rest of `out` (so all of it is initialized).
fn fill(out: &mut [MaybeUninit<i64>], values: impl Iterator<Item = i64>) {
    let mut out = out.iter_mut();
    out.by_ref().zip(values).for_each(|(o, v)| {
        o.write(v);
    });
    out.for_each(|o| {
        o.write(0);
    });
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

/// Stacks `fields` of `encodings` (names already checked with `check_fields`); None when the
/// encodings differ in length. Needs no GIL.
pub(crate) fn stack_values<E: Borrow<Encoding> + Sync>(encodings: &[E], fields: &[String]) -> Option<Stacked> {
    let length = encodings.first().map_or(0, |e| e.borrow().len());
    if encodings.iter().any(|e| e.borrow().len() != length) {
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
            parallel::for_each_with_chunk(encodings, &mut values.spare_capacity_mut()[..total], row_len, |e, row| field.write(e.borrow(), row));
            // SAFETY: the rows tile `0..total` and `Field::write` initializes every value of its row.
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
        let array = PyArray1::from_vec(py, values);
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
pub(crate) fn stack<'py>(py: Python<'py>, encodings: &[&Encoding], fields: &[String]) -> PyResult<Option<Bound<'py, PyDict>>> {
    check_fields(fields)?;
    match py.allow_threads(|| stack_values(encodings, fields)) {
        Some(stacked) => Ok(Some(stacked_into_arrays(py, stacked)?)),
        None => Ok(None),
    }
}
