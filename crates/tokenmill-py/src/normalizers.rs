//! `tokenmill._native.normalizers`: the normalizer classes, with `tokenizers`' names,
//! constructor signatures and properties. Each concrete class extends `Normalizer`, which holds
//! the core `NormalizerWrapper` (what the Tokenizer binding takes and gives back).
//!
//! Also the top-level `tokenmill.Regex` (a compiled pattern for `Replace` and `Split`) and
//! `tokenmill.NormalizedString` (a string with its alignments, for exploring normalizers).
use macro_rules_attribute::apply;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PySlice};

use tokenmill_core::normalizers::{
    BertNormalizer, ByteLevel, Lowercase, Nmt, NormalizerWrapper, Precompiled, Prepend, Replace,
    ReplacePattern, Strip, StripAccents, NFC, NFD, NFKC, NFKD,
};
use tokenmill_core::tokenizer::{NormalizedString, Normalizer, SplitDelimiterBehavior};
use tokenmill_core::utils::offsets::ByteToCharOffsets;
use tokenmill_core::utils::regex::Regex;

use crate::errors::ToPyResult;
use crate::properties::{component_classes, split_behavior};
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
    // (A Sequence nested in a Sequence stays one item, as in tokenizers.)
    subclasses {
        BertNormalizer, Strip, StripAccents, NFC, NFD, NFKC, NFKD, Sequence, Lowercase, Nmt,
        Precompiled, Replace, Prepend, ByteLevel
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

component_classes! {
    #[pymethods] PyNormalizer("tokenmill.normalizers"), NormalizerWrapper,
        unit #[pyo3(text_signature = "(self)")];

    /// NFD Unicode normalizer: canonical decomposition (``é`` → ``e`` + combining acute).
    PyNFD("NFD") = NFD;

    /// NFKD Unicode normalizer: compatibility decomposition (``ﬁ`` → ``fi``, ``é`` → ``e`` +
    /// accent).
    PyNFKD("NFKD") = NFKD;

    /// NFC Unicode normalizer: canonical decomposition then composition (``e`` + accent → ``é``).
    PyNFC("NFC") = NFC;

    /// NFKC Unicode normalizer: compatibility decomposition then canonical composition
    /// (``ﬁ`` → ``fi``, ``½`` → ``1⁄2``).
    PyNFKC("NFKC") = NFKC;

    /// Lowercases with the full Unicode mapping (``İ`` becomes ``i`` + combining dot).
    PyLowercase("Lowercase") = Lowercase;

    /// Removes combining marks (accents); usually after ``NFD``.
    PyStripAccents("StripAccents") = StripAccents;

    /// SentencePiece's NMT cleanup: removes control chars, turns space-like chars into spaces.
    PyNmt("Nmt") = Nmt;

    /// Replaces each byte of the text by its GPT-2 byte-level char (``" "`` → ``"Ġ"``).
    PyByteLevel("ByteLevel"), ByteLevel(|n| n) {
        #[pyo3(text_signature = "(self)")]
        new() => ByteLevel;
        methods {
            /// The 256 chars of the byte-level alphabet.
            #[staticmethod]
            fn alphabet() -> Vec<String> {
                crate::pre_tokenizers::byte_level_alphabet()
            }
        }
    }

    /// The text cleanup of the original BERT.
    ///
    /// Args:
    // (Two lines as `#[doc]` attributes: as comments they would pass 100 columns here.)
    #[doc = "     clean_text (bool, default True): remove control chars and turn all whitespace \
        into spaces."]
    ///     handle_chinese_chars (bool, default True): put spaces around CJK ideographs.
    #[doc = "     strip_accents (bool or None, default None): remove accents; None means \
        \"when lowercasing\"."]
    ///     lowercase (bool, default True): lowercase the text.
    PyBertNormalizer("BertNormalizer"), BertNormalizer(|n| n) {
        #[pyo3(text_signature = "(self, clean_text=True, handle_chinese_chars=True, \
                strip_accents=None, lowercase=True)")]
        new(
            clean_text: bool = true,
            handle_chinese_chars: bool = true,
            strip_accents: Option<bool> = None,
            lowercase: bool = true,
        ) => BertNormalizer::new(clean_text, handle_chinese_chars, strip_accents, lowercase);
        fields {
            clean_text: bool;
            handle_chinese_chars: bool;
            strip_accents: Option<bool>;
            lowercase: bool;
        }
    }

    /// Removes whitespace on the left and/or right of the text.
    ///
    /// Args:
    ///     left (bool, default True): strip leading whitespace.
    ///     right (bool, default True): strip trailing whitespace.
    PyStrip("Strip"), Strip(|n| n) {
        #[pyo3(text_signature = "(self, left=True, right=True)")]
        new(left: bool = true, right: bool = true) => Strip::new(left, right);
        fields {
            strip_left as left: bool;
            strip_right as right: bool;
        }
    }

    /// Adds a string in front of any non-empty text.
    ///
    /// Args:
    ///     prepend (str, default "▁"): what to add.
    PyPrepend("Prepend"), Prepend(|n| n) {
        #[pyo3(text_signature = "(self, prepend)")]
        new(prepend: String = { "▁".to_string() }) => Prepend::new(prepend);
        fields {
            prepend: String;
        }
    }

    /// Replaces every match of a pattern by a content.
    ///
    /// Args:
    ///     pattern (str or tokenmill.Regex): a str is matched literally; a ``tokenmill.Regex`` as a
    ///         regular expression.
    ///     content (str): the replacement.
    PyReplace("Replace"), Replace(|n| n) {
        #[pyo3(text_signature = "(self, pattern, content)")]
        new(pattern: &Bound<'_, PyAny>, content: String)
            => Replace::new(extract_replace_pattern(pattern)?, content).py()?;
        newargs(py) => ["", ""];
        fields {
            content: String;
        }
        methods {
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
        }
    }

    /// SentencePiece's compiled normalization rules (the ``precompiled_charsmap`` of a
    /// SentencePiece model, as in T5 / ALBERT / XLM-R tokenizer.json files).
    ///
    /// Args:
    ///     precompiled_charsmap (bytes): the compiled rules.
    PyPrecompiled("Precompiled"), Precompiled(|n| n) {
        #[pyo3(text_signature = "(self, precompiled_charsmap)")]
        new(precompiled_charsmap: Vec<u8>)
            => Precompiled::from_charsmap(&precompiled_charsmap).py()?;
        newargs(py) => [PyBytes::new(py, b"")];
    }
}

/// A pattern from Python: a `str` (matched literally, as `literal(s)`) or a `tokenmill.Regex`
/// (as `regex(its pattern)`).
pub(crate) fn extract_pattern<P>(
    pattern: &Bound<'_, PyAny>,
    literal: impl FnOnce(String) -> P,
    regex: impl FnOnce(String) -> P,
) -> PyResult<P> {
    if let Ok(s) = pattern.extract::<String>() {
        return Ok(literal(s));
    }
    if let Ok(compiled) = pattern.downcast::<PyRegex>() {
        return Ok(regex(compiled.get().inner.as_str().to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "pattern must be a str or a tokenmill.Regex, got {}",
        pattern.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

/// A `Replace` pattern from Python (see [`extract_pattern`]).
pub(crate) fn extract_replace_pattern(pattern: &Bound<'_, PyAny>) -> PyResult<ReplacePattern> {
    extract_pattern(pattern, ReplacePattern::String, ReplacePattern::Regex)
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
    split_behavior(behavior).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown split behavior {behavior:?}: expected removed, isolated, \
                merged_with_previous, merged_with_next or contiguous"
        ))
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

/// Applied to `NormalizedString`'s `#[pymethods]` block (`#[apply(in_place_methods!)]`: PyO3
/// takes one block per class), adds the methods listed here, which run the core method of the
/// same name in place.
macro_rules! in_place_methods {
    ($pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }) => {
        in_place_methods! {
            @list $pound $pymethods impl $Class { $($methods)* }
            /// Unicode NFD, in place.
            nfd();
            /// Unicode NFKD, in place.
            nfkd();
            /// Unicode NFC, in place.
            nfc();
            /// Unicode NFKC, in place.
            nfkc();
            /// Lowercases, in place.
            lowercase();
            /// Uppercases, in place.
            uppercase();
            /// Adds ``s`` in front (nothing happens to an empty string).
            prepend(s: &str);
            /// Adds ``s`` at the end.
            append(s: &str);
            /// Removes leading whitespace.
            lstrip();
            /// Removes trailing whitespace.
            rstrip();
            /// Removes leading and trailing whitespace.
            strip();
            /// Removes the whole normalized string.
            clear();
        }
    };
    (
        @list $pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }
        $($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*);)*
    ) => {
        $pound $pymethods
        impl $Class {
            $($methods)*

            $(
                $(#[$doc])*
                fn $name(&mut self, $($arg: $ty),*) -> PyResult<()> {
                    self.get_mut()?.$name($($arg),*);
                    Ok(())
                }
            )*
        }
    };
}

#[apply(in_place_methods!)]
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

/// The classes that live at the top level of `tokenmill`: `Regex` and `NormalizedString`.
pub fn register_top_level(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRegex>()?;
    m.add_class::<PyNormalizedString>()?;
    Ok(())
}
