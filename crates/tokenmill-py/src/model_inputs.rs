//! Model inputs from the bindings: truncation / padding settings given as dicts (the shape of
//! ``Tokenizer.truncation`` / ``Tokenizer.padding``), and encodings stacked into NumPy arrays
//! without a Python object per token.
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenmill_core::tokenizer::Encoding;
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

/// The per-token fields an encoding can be stacked by.
fn field_values<'e>(encoding: &'e Encoding, field: &str) -> PyResult<Box<dyn Iterator<Item = i64> + 'e>> {
    let as_i64 = |v: &'e [u32]| Box::new(v.iter().map(|&x| x as i64)) as Box<dyn Iterator<Item = i64>>;
    Ok(match field {
        "input_ids" => as_i64(&encoding.ids),
        "token_type_ids" => as_i64(&encoding.type_ids),
        "attention_mask" => as_i64(&encoding.attention_mask),
        "special_tokens_mask" => as_i64(&encoding.special_tokens_mask),
        "offset_mapping" => Box::new(encoding.offsets.iter().flat_map(|&(s, e)| [s as i64, e as i64])),
        other => return Err(InvalidArgumentError::new_err(format!("unknown encoding field {other:?}"))),
    })
}

/// `fields` of `encodings` as int64 arrays of shape ``(len(encodings), length)`` (plus a last
/// axis of 2 for ``offset_mapping``), or None when the encodings differ in length.
pub(crate) fn stack<'py>(py: Python<'py>, encodings: &[&Encoding], fields: &[String]) -> PyResult<Option<Bound<'py, PyDict>>> {
    let length = encodings.first().map_or(0, |e| e.len());
    if encodings.iter().any(|e| e.len() != length) {
        return Ok(None);
    }
    let out = PyDict::new(py);
    for field in fields {
        let width = if field == "offset_mapping" { 2 } else { 1 };
        let mut flat = Vec::with_capacity(encodings.len() * length * width);
        for e in encodings {
            flat.extend(field_values(e, field)?);
        }
        let array = PyArray1::from_vec(py, flat);
        let array = if width == 2 { array.reshape([encodings.len(), length, 2])?.into_any() } else { array.reshape([encodings.len(), length])?.into_any() };
        out.set_item(field, array)?;
    }
    Ok(Some(out))
}
