//! `tokenmill._native.normalizers`: the normalizer classes, with `tokenizers`' names,
//! constructor signatures and properties. Each concrete class extends `Normalizer`, which holds
//! the core `NormalizerWrapper` (what the Tokenizer binding takes and gives back).
//!
//! Also the top-level `tokenmill.Regex` (a compiled pattern for `Replace` and `Split`) and
//! `tokenmill.NormalizedString` (a string with its alignments, for exploring normalizers).
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice, PyTuple};

use tokenmill_core::normalizers::{
    BertNormalizer, ByteLevel, Lowercase, Nmt, NormalizerWrapper, Precompiled, Prepend, Replace,
    ReplacePattern, Strip, StripAccents, NFC, NFD, NFKC, NFKD,
};
use tokenmill_core::tokenizer::{NormalizedString, Normalizer, SplitDelimiterBehavior};
use tokenmill_core::utils::offsets::ByteToCharOffsets;
use tokenmill_core::utils::regex::Regex;

use crate::errors::ToPyResult;
use crate::shared::{getter, resolve_index, setter};
use crate::stage::stage_classes;

stage_classes! {
    /// Base class of all normalizers. Not meant to be built directly: build one of its
    /// subclasses (``NFC()``, ``BertNormalizer()``, ...).
    ///
    /// The component is shared (see `shared.rs`): a normalizer assigned to a Tokenizer or put in
    /// a Sequence is the same object there, so changing its attributes changes them everywhere.
    base PyNormalizer(NormalizerWrapper), "tokenmill.normalizers", "Normalizer", "normalizer",
        restore SameKind;
    /// Runs several normalizers one after the other. Nested sequences are flattened (as in
    /// ``tokenizers``). Supports ``len``, indexing and item assignment.
    ///
    /// Args:
    ///     normalizers (list of Normalizer): the normalizers, in order.
    sequence PySequence(normalizers, "(self, normalizers)"), items Shared,
        set_item PyTypeError("normalizer should not be a sequence");
    subclasses {
        BertNormalizer => PyBertNormalizer,
        Strip => PyStrip,
        StripAccents => PyStripAccents,
        NFC => PyNFC,
        NFD => PyNFD,
        NFKC => PyNFKC,
        NFKD => PyNFKD,
        // A Sequence nested in a Sequence stays one item (as in tokenizers).
        Sequence => PySequence,
        Lowercase => PyLowercase,
        Nmt => PyNmt,
        Precompiled => PyPrecompiled,
        Replace => PyReplace,
        Prepend => PyPrepend,
        ByteLevel => PyByteLevel,
    }
    plain { Custom }
    /// A normalizer written in Python: ``normalizer`` is any object with a
    /// ``normalize(self, normalized: NormalizedString)`` method that edits it in place. It
    /// runs with the GIL; a tokenizer holding it cannot be saved or pickled.
    custom(normalizer) => crate::custom::custom_normalizer;
    methods {
        /// Normalizes a ``tokenmill.NormalizedString`` in place, keeping its alignments.
        #[pyo3(text_signature = "(self, normalized)")]
        fn normalize(
            &self,
            py: Python<'_>,
            mut normalized: PyRefMut<'_, PyNormalizedString>,
        ) -> PyResult<()> {
            let target = normalized.get_mut()?;
            self.inner.with(|inner| py.allow_threads(move || inner.normalize(target))).py()
        }

        /// Normalizes a string and returns the result (no alignments; see ``normalize``).
        #[pyo3(text_signature = "(self, sequence)")]
        fn normalize_str(&self, py: Python<'_>, sequence: &str) -> PyResult<String> {
            self.inner.with(|inner| py.allow_threads(move || inner.normalize_str(sequence))).py()
        }

        fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
            other
                .extract::<PyRef<'_, PyNormalizer>>()
                .is_ok_and(|o| o.inner.snapshot() == self.inner.snapshot())
        }
    }
}

/// Declares a normalizer class without parameters.
macro_rules! unit_class {
    ($(#[$doc:meta])* $rust:ident, $name:literal, $core:expr) => {
        $(#[$doc])*
        #[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = $name)]
        pub struct $rust;

        #[pymethods]
        impl $rust {
            #[new]
            #[pyo3(text_signature = "(self)")]
            fn new() -> (Self, PyNormalizer) {
                ($rust, PyNormalizer::new($core))
            }
        }
    };
}

unit_class!(
    /// NFD Unicode normalizer: canonical decomposition (``é`` → ``e`` + combining acute).
    PyNFD, "NFD", NFD
);
unit_class!(
    /// NFKD Unicode normalizer: compatibility decomposition (``ﬁ`` → ``fi``, ``é`` → ``e`` +
    /// accent).
    PyNFKD, "NFKD", NFKD
);
unit_class!(
    /// NFC Unicode normalizer: canonical decomposition then composition (``e`` + accent → ``é``).
    PyNFC, "NFC", NFC
);
unit_class!(
    /// NFKC Unicode normalizer: compatibility decomposition then canonical composition
    /// (``ﬁ`` → ``fi``, ``½`` → ``1⁄2``).
    PyNFKC, "NFKC", NFKC
);
unit_class!(
    /// Lowercases with the full Unicode mapping (``İ`` becomes ``i`` + combining dot).
    PyLowercase, "Lowercase", Lowercase
);
unit_class!(
    /// Removes combining marks (accents); usually after ``NFD``.
    PyStripAccents, "StripAccents", StripAccents
);
unit_class!(
    /// SentencePiece's NMT cleanup: removes control chars, turns space-like chars into spaces.
    PyNmt, "Nmt", Nmt
);

/// Replaces each byte of the text by its GPT-2 byte-level char (``" "`` → ``"Ġ"``).
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "ByteLevel")]
pub struct PyByteLevel;

#[pymethods]
impl PyByteLevel {
    #[new]
    #[pyo3(text_signature = "(self)")]
    fn new() -> (Self, PyNormalizer) {
        (PyByteLevel, PyNormalizer::new(ByteLevel))
    }

    /// The 256 chars of the byte-level alphabet.
    #[staticmethod]
    fn alphabet() -> Vec<String> {
        ByteLevel::alphabet().into_iter().map(String::from).collect()
    }
}

/// The text cleanup of the original BERT.
///
/// Args:
///     clean_text (bool, default True): remove control chars and turn all whitespace into spaces.
///     handle_chinese_chars (bool, default True): put spaces around CJK ideographs.
///     strip_accents (bool or None, default None): remove accents; None means "when lowercasing".
///     lowercase (bool, default True): lowercase the text.
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "BertNormalizer")]
pub struct PyBertNormalizer;

#[pymethods]
impl PyBertNormalizer {
    #[new]
    #[pyo3(
        signature = (
            clean_text = true, handle_chinese_chars = true, strip_accents = None, lowercase = true
        ),
        text_signature = "(self, clean_text=True, handle_chinese_chars=True, strip_accents=None, \
            lowercase=True)"
    )]
    fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: Option<bool>,
        lowercase: bool,
    ) -> (Self, PyNormalizer) {
        (
            PyBertNormalizer,
            PyNormalizer::new(BertNormalizer::new(
                clean_text,
                handle_chinese_chars,
                strip_accents,
                lowercase,
            )),
        )
    }

    #[getter]
    fn get_clean_text(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, NormalizerWrapper::BertNormalizer, |n| n.clean_text)
    }
    #[setter]
    fn set_clean_text(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::BertNormalizer, |n| n.clean_text = value)
    }
    #[getter]
    fn get_handle_chinese_chars(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, NormalizerWrapper::BertNormalizer, |n| n.handle_chinese_chars)
    }
    #[setter]
    fn set_handle_chinese_chars(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::BertNormalizer, |n| n.handle_chinese_chars = value)
    }
    #[getter]
    fn get_strip_accents(self_: PyRef<'_, Self>) -> PyResult<Option<bool>> {
        getter!(self_, NormalizerWrapper::BertNormalizer, |n| n.strip_accents)
    }
    #[setter]
    fn set_strip_accents(self_: PyRef<'_, Self>, value: Option<bool>) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::BertNormalizer, |n| n.strip_accents = value)
    }
    #[getter]
    fn get_lowercase(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, NormalizerWrapper::BertNormalizer, |n| n.lowercase)
    }
    #[setter]
    fn set_lowercase(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::BertNormalizer, |n| n.lowercase = value)
    }
}

/// Removes whitespace on the left and/or right of the text.
///
/// Args:
///     left (bool, default True): strip leading whitespace.
///     right (bool, default True): strip trailing whitespace.
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "Strip")]
pub struct PyStrip;

#[pymethods]
impl PyStrip {
    #[new]
    #[pyo3(signature = (
        left = true, right = true
    ), text_signature = "(self, left=True, right=True)")]
    fn new(left: bool, right: bool) -> (Self, PyNormalizer) {
        (PyStrip, PyNormalizer::new(Strip::new(left, right)))
    }

    #[getter]
    fn get_left(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, NormalizerWrapper::Strip, |n| n.strip_left)
    }
    #[setter]
    fn set_left(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::Strip, |n| n.strip_left = value)
    }
    #[getter]
    fn get_right(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, NormalizerWrapper::Strip, |n| n.strip_right)
    }
    #[setter]
    fn set_right(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::Strip, |n| n.strip_right = value)
    }
}

/// Adds a string in front of any non-empty text.
///
/// Args:
///     prepend (str, default "▁"): what to add.
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "Prepend")]
pub struct PyPrepend;

#[pymethods]
impl PyPrepend {
    #[new]
    #[pyo3(signature = (prepend = "▁".to_string()), text_signature = "(self, prepend)")]
    fn new(prepend: String) -> (Self, PyNormalizer) {
        (PyPrepend, PyNormalizer::new(Prepend::new(prepend)))
    }

    #[getter]
    fn get_prepend(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, NormalizerWrapper::Prepend, |n| n.prepend.clone())
    }
    #[setter]
    fn set_prepend(self_: PyRef<'_, Self>, value: String) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::Prepend, |n| n.prepend = value)
    }
}

/// Replaces every match of a pattern by a content.
///
/// Args:
///     pattern (str or tokenmill.Regex): a str is matched literally; a ``tokenmill.Regex`` as a
///         regular expression.
///     content (str): the replacement.
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "Replace")]
pub struct PyReplace;

/// A `str` (literal) or a `tokenmill.Regex` from Python.
pub(crate) fn extract_replace_pattern(pattern: &Bound<'_, PyAny>) -> PyResult<ReplacePattern> {
    if let Ok(s) = pattern.extract::<String>() {
        return Ok(ReplacePattern::String(s));
    }
    if let Ok(regex) = pattern.downcast::<PyRegex>() {
        return Ok(ReplacePattern::Regex(regex.borrow().inner.as_str().to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "pattern must be a str or a tokenmill.Regex, got {}",
        pattern.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

#[pymethods]
impl PyReplace {
    #[new]
    #[pyo3(text_signature = "(self, pattern, content)")]
    fn new(pattern: &Bound<'_, PyAny>, content: String) -> PyResult<(Self, PyNormalizer)> {
        let replace = Replace::new(extract_replace_pattern(pattern)?, content).py()?;
        Ok((PyReplace, PyNormalizer::new(replace)))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, ["", ""])
    }

    /// The pattern: a str for a literal, a ``tokenmill.Regex`` for a regex.
    #[getter]
    fn get_pattern(self_: PyRef<'_, Self>) -> PyResult<PyObject> {
        let py = self_.py();
        match getter!(self_, NormalizerWrapper::Replace, |n| n.pattern().clone())? {
            ReplacePattern::String(s) => Ok(s.into_pyobject(py)?.into_any().unbind()),
            ReplacePattern::Regex(r) => Ok(Py::new(py, PyRegex::new(&r)?)?.into_any()),
        }
    }
    #[setter]
    fn set_pattern(self_: PyRef<'_, Self>, pattern: &Bound<'_, PyAny>) -> PyResult<()> {
        let pattern = extract_replace_pattern(pattern)?;
        let content = getter!(self_, NormalizerWrapper::Replace, |n| n.content.clone())?;
        let replace = Replace::new(pattern, content).py()?;
        setter!(self_, NormalizerWrapper::Replace, |n| *n = replace)
    }
    #[getter]
    fn get_content(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, NormalizerWrapper::Replace, |n| n.content.clone())
    }
    #[setter]
    fn set_content(self_: PyRef<'_, Self>, value: String) -> PyResult<()> {
        setter!(self_, NormalizerWrapper::Replace, |n| n.content = value)
    }
}

/// SentencePiece's compiled normalization rules (the ``precompiled_charsmap`` of a
/// SentencePiece model, as in T5 / ALBERT / XLM-R tokenizer.json files).
///
/// Args:
///     precompiled_charsmap (bytes): the compiled rules.
#[pyclass(extends = PyNormalizer, module = "tokenmill.normalizers", name = "Precompiled")]
pub struct PyPrecompiled;

#[pymethods]
impl PyPrecompiled {
    #[new]
    #[pyo3(text_signature = "(self, precompiled_charsmap)")]
    fn new(precompiled_charsmap: Vec<u8>) -> PyResult<(Self, PyNormalizer)> {
        let precompiled = Precompiled::from_charsmap(&precompiled_charsmap).py()?;
        Ok((PyPrecompiled, PyNormalizer::new(precompiled)))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, [PyBytes::new(py, b"")])
    }
}

/// A compiled regular expression, to give ``Replace`` and ``Split`` a regex pattern instead of
/// a literal string. Raises ``tokenmill.FormatError`` if the pattern does not compile.
///
/// Args:
///     pattern (str): the regular expression.
#[pyclass(module = "tokenmill", name = "Regex", frozen)]
pub(crate) struct PyRegex {
    pub(crate) inner: Regex,
}

impl PyRegex {
    pub(crate) fn new(pattern: &str) -> PyResult<Self> {
        Ok(PyRegex { inner: Regex::new(pattern).py()? })
    }
}

#[pymethods]
impl PyRegex {
    #[new]
    #[pyo3(text_signature = "(self, pattern)")]
    fn py_new(pattern: &str) -> PyResult<Self> {
        PyRegex::new(pattern)
    }

    /// The regular expression, as given.
    #[getter]
    fn pattern(&self) -> &str {
        self.inner.as_str()
    }

    fn __getnewargs__(&self) -> (String,) {
        (self.inner.as_str().to_string(),)
    }

    fn __repr__(&self) -> String {
        format!("Regex({:?})", self.inner.as_str())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.downcast::<PyRegex>().is_ok_and(|o| o.get().inner.as_str() == self.inner.as_str())
    }
}

/// A pattern given from Python to ``NormalizedString.split`` / ``replace``: a str or a Regex.
enum PyPattern {
    Literal(String),
    Regex(Py<PyRegex>),
}

impl PyPattern {
    fn extract(pattern: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = pattern.extract::<String>() {
            return Ok(PyPattern::Literal(s));
        }
        if let Ok(regex) = pattern.downcast::<PyRegex>() {
            return Ok(PyPattern::Regex(regex.clone().unbind()));
        }
        Err(PyTypeError::new_err("pattern must be a str or a tokenmill.Regex"))
    }
}

/// A string being normalized, which keeps, for every normalized character, the span of the
/// original string it comes from. Normalizers' ``normalize`` edits it in place.
///
/// Args:
///     sequence (str): the original string.
///
/// The one a custom normalizer's ``normalize`` receives is the pipeline's string, lent for the
/// call: using it after the call returns raises ``RuntimeError`` (as ``tokenizers``, whose
/// ``NormalizedStringRefMut`` does the same), instead of silently editing a detached copy.
#[pyclass(module = "tokenmill", name = "NormalizedString")]
#[derive(Clone)]
pub struct PyNormalizedString {
    pub(crate) inner: NormalizedString,
    /// Lent to a custom normalizer's `normalize` and taken back: no longer usable.
    pub(crate) returned: bool,
}

impl PyNormalizedString {
    pub(crate) fn wrap(inner: NormalizedString) -> Self {
        PyNormalizedString { inner, returned: false }
    }

    fn get(&self) -> PyResult<&NormalizedString> {
        self.check()?;
        Ok(&self.inner)
    }

    fn get_mut(&mut self) -> PyResult<&mut NormalizedString> {
        self.check()?;
        Ok(&mut self.inner)
    }

    fn check(&self) -> PyResult<()> {
        if self.returned {
            return Err(PyRuntimeError::new_err(
                "Cannot use a NormalizedStringRefMut outside `normalize`: this NormalizedString \
                 was lent to a custom normalizer's normalize() and went back to the pipeline",
            ));
        }
        Ok(())
    }
}

/// A Python range over the chars of the normalized string: an int, a `(start, end)` tuple, or a
/// slice.
fn char_range(range: &Bound<'_, PyAny>, len: usize) -> PyResult<std::ops::Range<usize>> {
    if let Ok(i) = range.extract::<isize>() {
        let at = resolve_index(i, len)?;
        return Ok(at..at + 1);
    }
    if let Ok((start, end)) = range.extract::<(usize, usize)>() {
        return Ok(start..end);
    }
    if let Ok(slice) = range.downcast::<PySlice>() {
        let indices = slice.indices(len as isize)?;
        if indices.step != 1 {
            return Err(PyValueError::new_err("NormalizedString slices must have step 1"));
        }
        return Ok(indices.start as usize..(indices.stop.max(indices.start)) as usize);
    }
    Err(PyTypeError::new_err("expected an int, a (start, end) tuple or a slice"))
}

fn parse_behavior(behavior: &str) -> PyResult<SplitDelimiterBehavior> {
    Ok(match behavior {
        "removed" => SplitDelimiterBehavior::Removed,
        "isolated" => SplitDelimiterBehavior::Isolated,
        "merged_with_previous" => SplitDelimiterBehavior::MergedWithPrevious,
        "merged_with_next" => SplitDelimiterBehavior::MergedWithNext,
        "contiguous" => SplitDelimiterBehavior::Contiguous,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown split behavior {other:?}: expected removed, isolated, \
                    merged_with_previous, merged_with_next or contiguous"
            )))
        }
    })
}

/// Runs `edit` with a per-char Python callback; the first Python error stops calling it and is
/// returned.
fn with_callback<'py, R>(
    func: &Bound<'py, PyAny>,
    edit: impl FnOnce(&mut dyn FnMut(char) -> PyResult<Bound<'py, PyAny>>) -> R,
) -> PyResult<R> {
    if !func.is_callable() {
        return Err(PyTypeError::new_err("expected a callable taking one character"));
    }
    let mut call = |c: char| func.call1((c.to_string(),));
    Ok(edit(&mut call))
}

#[pymethods]
impl PyNormalizedString {
    #[new]
    #[pyo3(text_signature = "(self, sequence)")]
    fn new(sequence: &str) -> Self {
        PyNormalizedString::wrap(NormalizedString::from(sequence))
    }

    /// The normalized string.
    #[getter]
    fn normalized(&self) -> PyResult<&str> {
        Ok(self.get()?.get())
    }

    /// The original string.
    #[getter]
    fn original(&self) -> PyResult<&str> {
        Ok(self.get()?.get_original())
    }

    /// For each character of the normalized string, the ``(start, end)`` character span of the
    /// original string it comes from.
    #[getter]
    fn alignments(&self) -> PyResult<Vec<(usize, usize)>> {
        let inner = self.get()?;
        let to_chars = ByteToCharOffsets::new(inner.get_original());
        let aligns = inner.alignments();
        Ok(inner.get().char_indices().map(|(i, _)| to_chars.convert_span(aligns[i])).collect())
    }

    /// Unicode NFD, in place.
    fn nfd(&mut self) -> PyResult<()> {
        self.get_mut()?.nfd();
        Ok(())
    }
    /// Unicode NFKD, in place.
    fn nfkd(&mut self) -> PyResult<()> {
        self.get_mut()?.nfkd();
        Ok(())
    }
    /// Unicode NFC, in place.
    fn nfc(&mut self) -> PyResult<()> {
        self.get_mut()?.nfc();
        Ok(())
    }
    /// Unicode NFKC, in place.
    fn nfkc(&mut self) -> PyResult<()> {
        self.get_mut()?.nfkc();
        Ok(())
    }
    /// Lowercases, in place.
    fn lowercase(&mut self) -> PyResult<()> {
        self.get_mut()?.lowercase();
        Ok(())
    }
    /// Uppercases, in place.
    fn uppercase(&mut self) -> PyResult<()> {
        self.get_mut()?.uppercase();
        Ok(())
    }
    /// Adds ``s`` in front (nothing happens to an empty string).
    fn prepend(&mut self, s: &str) -> PyResult<()> {
        self.get_mut()?.prepend(s);
        Ok(())
    }
    /// Adds ``s`` at the end.
    fn append(&mut self, s: &str) -> PyResult<()> {
        self.get_mut()?.append(s);
        Ok(())
    }
    /// Removes leading whitespace.
    fn lstrip(&mut self) -> PyResult<()> {
        self.get_mut()?.lstrip();
        Ok(())
    }
    /// Removes trailing whitespace.
    fn rstrip(&mut self) -> PyResult<()> {
        self.get_mut()?.rstrip();
        Ok(())
    }
    /// Removes leading and trailing whitespace.
    fn strip(&mut self) -> PyResult<()> {
        self.get_mut()?.strip();
        Ok(())
    }
    /// Removes the whole normalized string.
    fn clear(&mut self) -> PyResult<()> {
        self.get_mut()?.clear();
        Ok(())
    }

    /// A piece of this string by a character range of the normalized string (an int, a
    /// ``(start, end)`` tuple or a slice), or None if the range is out of bounds.
    #[pyo3(text_signature = "(self, range)")]
    fn slice(&self, range: &Bound<'_, PyAny>) -> PyResult<Option<PyNormalizedString>> {
        let inner = self.get()?;
        let text = inner.get();
        let chars = char_range(range, text.chars().count())?;
        let byte_at = |k: usize| {
            text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).nth(k)
        };
        Ok(match (byte_at(chars.start), byte_at(chars.end)) {
            (Some(s), Some(e)) => inner.slice(s..e).map(PyNormalizedString::wrap),
            _ => None,
        })
    }

    fn __getitem__(&self, range: &Bound<'_, PyAny>) -> PyResult<Option<PyNormalizedString>> {
        self.slice(range)
    }

    /// Keeps only the characters for which ``func(char)`` is true.
    #[pyo3(text_signature = "(self, func)")]
    fn filter(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut error = None;
        let inner = self.get_mut()?;
        with_callback(func, |call| {
            inner.filter(|c| match call(c).and_then(|r| r.is_truthy()) {
                Ok(keep) => keep,
                Err(e) => {
                    error.get_or_insert(e);
                    true
                }
            });
        })?;
        error.map_or(Ok(()), Err)
    }

    /// Calls ``func(char)`` for each normalized character.
    #[pyo3(text_signature = "(self, func)")]
    fn for_each(&self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = self.get()?.get();
        with_callback(func, |call| text.chars().try_for_each(|c| call(c).map(|_| ())))?
    }

    /// Replaces each character by ``func(char)`` (a str of one character).
    #[pyo3(text_signature = "(self, func)")]
    fn map(&mut self, func: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut error = None;
        let inner = self.get_mut()?;
        with_callback(func, |call| {
            inner.map(|c| {
                let mapped = call(c).and_then(|r| r.extract::<String>()).and_then(|s| {
                    let mut chars = s.chars();
                    match (chars.next(), chars.next()) {
                        (Some(m), None) => Ok(m),
                        _ => Err(PyValueError::new_err(format!(
                            "map: the function must return one character, got {s:?}"
                        ))),
                    }
                });
                mapped.unwrap_or_else(|e| {
                    error.get_or_insert(e);
                    c
                })
            });
        })?;
        error.map_or(Ok(()), Err)
    }

    /// Splits on ``pattern`` (a str or a ``tokenmill.Regex``); ``behavior`` is one of
    /// "removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous".
    #[pyo3(text_signature = "(self, pattern, behavior)")]
    fn split(
        &self,
        py: Python<'_>,
        pattern: &Bound<'_, PyAny>,
        behavior: &str,
    ) -> PyResult<Vec<PyNormalizedString>> {
        let behavior = parse_behavior(behavior)?;
        let inner = self.get()?;
        let pieces = match PyPattern::extract(pattern)? {
            PyPattern::Literal(s) => inner.split(s.as_str(), behavior),
            PyPattern::Regex(r) => inner.split(&r.bind(py).get().inner, behavior),
        }
        .py()?;
        Ok(pieces.into_iter().map(PyNormalizedString::wrap).collect())
    }

    /// Replaces every match of ``pattern`` (a str or a ``tokenmill.Regex``) by ``content``.
    #[pyo3(text_signature = "(self, pattern, content)")]
    fn replace(
        &mut self,
        py: Python<'_>,
        pattern: &Bound<'_, PyAny>,
        content: &str,
    ) -> PyResult<()> {
        let inner = self.get_mut()?;
        match PyPattern::extract(pattern)? {
            PyPattern::Literal(s) => inner.replace(s.as_str(), content).map(|_| ()),
            PyPattern::Regex(r) => inner.replace(&r.bind(py).get().inner, content).map(|_| ()),
        }
        .py()
    }

    fn __repr__(&self) -> PyResult<String> {
        let inner = self.get()?;
        let (original, normalized) = (inner.get_original(), inner.get());
        Ok(format!("NormalizedString(original={original:?}, normalized={normalized:?})"))
    }

    fn __str__(&self) -> PyResult<&str> {
        Ok(self.get()?.get())
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.get()?.get().chars().count())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNormalizer>()?;
    m.add_class::<PyBertNormalizer>()?;
    m.add_class::<PyNFD>()?;
    m.add_class::<PyNFKD>()?;
    m.add_class::<PyNFC>()?;
    m.add_class::<PyNFKC>()?;
    m.add_class::<PySequence>()?;
    m.add_class::<PyLowercase>()?;
    m.add_class::<PyPrepend>()?;
    m.add_class::<PyStrip>()?;
    m.add_class::<PyStripAccents>()?;
    m.add_class::<PyNmt>()?;
    m.add_class::<PyPrecompiled>()?;
    m.add_class::<PyReplace>()?;
    m.add_class::<PyByteLevel>()?;
    Ok(())
}

/// The classes that live at the top level of `tokenmill`: `Regex` and `NormalizedString`.
pub fn register_top_level(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRegex>()?;
    m.add_class::<PyNormalizedString>()?;
    Ok(())
}
