//! Components written in Python (`Normalizer.custom(obj)`, `PreTokenizer.custom(obj)`,
//! `Decoder.custom(obj)`), as in `tokenizers`: the core runs them like any component through
//! `tokenmill_core::utils::custom::Custom`, taking the GIL for each call. They cannot be
//! serialized (saving or pickling a tokenizer that holds one raises).
//!
//! Also `tokenmill.PreTokenizedString`, what a custom pre-tokenizer's `pre_tokenize` receives.
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use tokenmill_core::decoders::DecoderWrapper;
use tokenmill_core::normalizers::NormalizerWrapper;
use tokenmill_core::pre_tokenizers::PreTokenizerWrapper;
use tokenmill_core::tokenizer::{
    Decoder, NormalizedString, Normalizer, OffsetReferential, OffsetType, Offsets,
    PreTokenizedString, PreTokenizer, Token,
};
use tokenmill_core::utils::custom::Custom;
use tokenmill_core::utils::parallel::callback;
use tokenmill_core::Error;

use crate::encoding::PyEncoding;
use crate::errors::ToPyResult;
use crate::models::PyToken;
use crate::normalizers::PyNormalizedString;

/// A piece as `get_splits` returns it: text, offsets, tokens if the piece has them.
type Split = (String, Offsets, Option<Vec<PyToken>>);

/// A Python error raised inside a core callback, as a core error (its message kept).
fn callback_error(what: &str, e: PyErr) -> Error {
    Error::Other(format!("{what} raised {e}"))
}

/// Calls `method` on a Python object with a `NormalizedString` that holds `target` for the
/// duration of the call (the object may edit it in place); `target` gets the result back, and the
/// object, if the callee kept it, is marked returned (unusable, as `tokenizers`'
/// `NormalizedStringRefMut`).
fn call_with_normalized(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    method: &str,
    target: &mut NormalizedString,
) -> PyResult<()> {
    let arg = Py::new(py, PyNormalizedString::wrap(std::mem::take(target)))?;
    let result = obj.call_method1(method, (arg.clone_ref(py),));
    let mut lent = arg.borrow_mut(py);
    *target = std::mem::take(&mut lent.inner);
    lent.returned = true;
    result.map(|_| ())
}

/// An object with `normalize(self, normalized: NormalizedString)`.
struct PyCustomNormalizer(Py<PyAny>);

impl Normalizer for PyCustomNormalizer {
    fn normalize(&self, normalized: &mut NormalizedString) -> tokenmill_core::Result<()> {
        callback("the custom normalizer", || {
            Python::with_gil(|py| {
                call_with_normalized(py, self.0.bind(py), "normalize", normalized)
            })
            .map_err(|e| callback_error("the custom normalizer", e))
        })
    }
}

/// An object with `pre_tokenize(self, pretok: PreTokenizedString)`.
struct PyCustomPreTokenizer(Py<PyAny>);

impl PreTokenizer for PyCustomPreTokenizer {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> tokenmill_core::Result<()> {
        callback("the custom pre-tokenizer", || self.call(pretokenized))
    }
}

impl PyCustomPreTokenizer {
    fn call(&self, pretokenized: &mut PreTokenizedString) -> tokenmill_core::Result<()> {
        Python::with_gil(|py| {
            let taken = std::mem::replace(pretokenized, PreTokenizedString::from(""));
            let arg = Py::new(py, PyPreTokenizedString { inner: taken })?;
            let result = self.0.bind(py).call_method1("pre_tokenize", (arg.clone_ref(py),));
            *pretokenized =
                std::mem::replace(&mut arg.borrow_mut(py).inner, PreTokenizedString::from(""));
            result.map(|_| ())
        })
        .map_err(|e| callback_error("the custom pre-tokenizer", e))
    }
}

/// An object with `decode_chain(self, tokens) -> list[str]`; decoding joins its pieces (as
/// `tokenizers` 0.23 does: the object's own `decode` is not called by the pipeline).
struct PyCustomDecoder(Py<PyAny>);

impl Decoder for PyCustomDecoder {
    fn decode_chain(&self, tokens: Vec<String>) -> tokenmill_core::Result<Vec<String>> {
        callback("the custom decoder", || {
            Python::with_gil(|py| {
                self.0.bind(py).call_method1("decode_chain", (tokens,))?.extract::<Vec<String>>()
            })
            .map_err(|e| callback_error("the custom decoder", e))
        })
    }
}

pub(crate) fn custom_normalizer(obj: Py<PyAny>) -> NormalizerWrapper {
    NormalizerWrapper::Custom(Custom::new(Arc::new(PyCustomNormalizer(obj)), "Normalizer"))
}

pub(crate) fn custom_pre_tokenizer(obj: Py<PyAny>) -> PreTokenizerWrapper {
    PreTokenizerWrapper::Custom(Custom::new(Arc::new(PyCustomPreTokenizer(obj)), "PreTokenizer"))
}

pub(crate) fn custom_decoder(obj: Py<PyAny>) -> DecoderWrapper {
    DecoderWrapper::Custom(Custom::new(Arc::new(PyCustomDecoder(obj)), "Decoder"))
}

/// Runs a core operation whose callbacks call Python; the first Python error they raise is
/// returned as is (not as the core error it was turned into).
fn with_python_errors<R>(
    run: impl FnOnce(&mut dyn FnMut(PyErr) -> Error) -> tokenmill_core::Result<R>,
) -> PyResult<R> {
    let mut raised: Option<PyErr> = None;
    let result = run(&mut |e: PyErr| {
        let core = Error::Other(e.to_string());
        raised.get_or_insert(e);
        core
    });
    match (result, raised) {
        (Err(_), Some(e)) => Err(e),
        (result, _) => result.py(),
    }
}

/// The value named `name` among `choices`; `what` names the argument in the error.
fn parse_choice<T: Copy>(what: &str, name: &str, choices: &[(&str, T)]) -> PyResult<T> {
    match choices.iter().find(|(choice, _)| *choice == name) {
        Some(&(_, value)) => Ok(value),
        None => {
            let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
            Err(PyValueError::new_err(format!(
                "wrong value for {what} {name:?}: expected {}",
                names.join(" or ")
            )))
        }
    }
}

fn parse_referential(name: &str) -> PyResult<OffsetReferential> {
    let choices =
        [("original", OffsetReferential::Original), ("normalized", OffsetReferential::Normalized)];
    parse_choice("offset_referential", name, &choices)
}

fn parse_offset_type(name: &str) -> PyResult<OffsetType> {
    parse_choice("offset_type", name, &[("byte", OffsetType::Byte), ("char", OffsetType::Char)])
}

/// A string being pre-tokenized: the original text cut into pieces (each a
/// :class:`NormalizedString` that keeps its alignment with the original), later each tokenized.
/// A custom pre-tokenizer's ``pre_tokenize(pretok)`` receives one and calls its ``split``.
///
/// Args:
///     sequence (str): the text.
#[pyclass(module = "tokenmill", name = "PreTokenizedString")]
pub struct PyPreTokenizedString {
    pub(crate) inner: PreTokenizedString,
}

#[pymethods]
impl PyPreTokenizedString {
    #[new]
    #[pyo3(text_signature = "(self, sequence)")]
    fn new(sequence: &str) -> Self {
        PyPreTokenizedString { inner: PreTokenizedString::from(sequence) }
    }

    /// Splits every piece not yet tokenized: ``func(index, normalized)`` gets the index of the
    /// piece and a :class:`NormalizedString`, and returns the list of its new pieces (e.g.
    /// ``normalized.split(" ", "removed")`` or slices of it).
    #[pyo3(text_signature = "(self, func)")]
    fn split(&mut self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<()> {
        if !func.is_callable() {
            return Err(PyTypeError::new_err(
                "split expects a callable func(index, normalized) -> list of NormalizedString",
            ));
        }
        let inner = &mut self.inner;
        with_python_errors(|error| {
            inner.split(|i, normalized| {
                let pieces = (|| -> PyResult<Vec<NormalizedString>> {
                    let arg = Py::new(py, PyNormalizedString::wrap(normalized))?;
                    let returned = func.call1((i, arg))?;
                    let list = returned.downcast::<PyList>().map_err(|_| {
                        PyTypeError::new_err(
                            "the split function must return a list of NormalizedString",
                        )
                    })?;
                    list.iter()
                        .map(|piece| {
                            Ok(piece.extract::<PyRef<'_, PyNormalizedString>>()?.inner.clone())
                        })
                        .collect()
                })();
                pieces.map_err(&mut *error)
            })
        })
    }

    /// Normalizes every piece not yet tokenized: ``func(normalized)`` edits the
    /// :class:`NormalizedString` in place.
    #[pyo3(text_signature = "(self, func)")]
    fn normalize(&mut self, py: Python<'_>, func: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        with_python_errors(|error| {
            inner.normalize(|normalized| {
                call_with_normalized(py, func, "__call__", normalized).map_err(&mut *error)
            })
        })
    }

    /// Tokenizes every piece not yet tokenized: ``func(text)`` returns its list of ``Token``.
    #[pyo3(text_signature = "(self, func)")]
    fn tokenize(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        with_python_errors(|error| {
            inner.tokenize(|normalized| {
                let tokens = (|| -> PyResult<Vec<Token>> {
                    let returned = func.call1((normalized.get(),))?;
                    returned
                        .try_iter()?
                        .map(|t| Ok(t?.extract::<PyRef<'_, PyToken>>()?.token.clone()))
                        .collect()
                })();
                tokens.map_err(&mut *error)
            })
        })
    }

    /// The :class:`Encoding` of the tokenized pieces (every piece must be tokenized).
    #[pyo3(signature = (type_id = 0, word_idx = None))]
    fn to_encoding(&self, type_id: u32, word_idx: Option<u32>) -> PyResult<PyEncoding> {
        if self.inner.splits().iter().any(|s| s.tokens.is_none()) {
            return Err(PyValueError::new_err(
                "to_encoding needs every piece tokenized first (call tokenize)",
            ));
        }
        Ok(self.inner.clone().into_encoding(word_idx, type_id, OffsetType::Char).py()?.into())
    }

    /// The pieces as ``(text, (start, end), tokens or None)``; offsets refer to the
    /// ``"original"`` or ``"normalized"`` text and count ``"char"`` or ``"byte"``.
    #[pyo3(signature = (offset_referential = "original", offset_type = "char"))]
    fn get_splits(&self, offset_referential: &str, offset_type: &str) -> PyResult<Vec<Split>> {
        let referential = parse_referential(offset_referential)?;
        let offset_type = parse_offset_type(offset_type)?;
        Ok(self
            .inner
            .get_splits(referential, offset_type)
            .into_iter()
            .map(|(text, offsets, tokens)| {
                let tokens = tokens
                    .as_ref()
                    .map(|ts| ts.iter().map(|token| PyToken { token: token.clone() }).collect());
                (text.to_string(), offsets, tokens)
            })
            .collect())
    }

    fn __repr__(&self) -> String {
        let pieces: Vec<&str> = self.inner.splits().iter().map(|s| s.normalized.get()).collect();
        format!("PreTokenizedString(original={:?}, splits={:?})", self.inner.original(), pieces)
    }
}

pub fn register_top_level(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPreTokenizedString>()?;
    Ok(())
}
