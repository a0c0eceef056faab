//! `tokenmill._native.pre_tokenizers`: the pre-tokenizer classes, with `tokenizers`' names,
//! constructor signatures and properties. Each concrete class extends `PreTokenizer`, which
//! holds the core `PreTokenizerWrapper` (what the Tokenizer binding takes and gives back).
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use tokenmill_core::pre_tokenizers::{
    BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, FixedLength, Metaspace,
    PreTokenizerWrapper, PrependScheme, Punctuation, Split, SplitPattern, UnicodeScripts,
    Whitespace, WhitespaceSplit,
};
use tokenmill_core::tokenizer::{
    OffsetReferential, OffsetType, Offsets, PreTokenizedString, PreTokenizer,
    SplitDelimiterBehavior,
};
use tokenmill_core::Error;

use crate::errors::ToPyResult;
use crate::normalizers::PyRegex;
use crate::shared::{getter, setter};
use crate::stage::stage_classes;

stage_classes! {
    /// Base class of all pre-tokenizers. Not meant to be built directly: build one of its
    /// subclasses (``ByteLevel()``, ``Whitespace()``, ...).
    ///
    /// The component is shared (see `shared.rs`): a pre-tokenizer assigned to a Tokenizer or put
    /// in a Sequence is the same object there, so changing its attributes changes them everywhere.
    base PyPreTokenizer(PreTokenizerWrapper), "tokenmill.pre_tokenizers", "PreTokenizer",
        "pre-tokenizer", restore SameKind;
    /// Applies several pre-tokenizers in order, each to the pieces the previous one made.
    /// Nested sequences are flattened. ``seq[i]`` gives the i-th one (shared: changing it changes
    /// the Sequence); ``seq[i] = pre_tokenizer`` replaces it.
    sequence PySequence(pretokenizers), items Shared,
        set_item PyTypeError("pre_tokenizer should not be a sequence");
    subclasses {
        BertPreTokenizer => PyBertPreTokenizer,
        ByteLevel => PyByteLevel,
        Delimiter => PyCharDelimiterSplit,
        Metaspace => PyMetaspace,
        Whitespace => PyWhitespace,
        Sequence => PySequence,
        Split => PySplit,
        Punctuation => PyPunctuation,
        WhitespaceSplit => PyWhitespaceSplit,
        Digits => PyDigits,
        UnicodeScripts => PyUnicodeScripts,
        FixedLength => PyFixedLength,
    }
    plain { Custom }
    /// A pre-tokenizer written in Python: ``pre_tokenizer`` is any object with a
    /// ``pre_tokenize(self, pretok: PreTokenizedString)`` method that splits it in place
    /// (``pretok.split(func)``). It runs with the GIL; a tokenizer holding it cannot be saved
    /// or pickled.
    custom(pre_tokenizer) => crate::custom::custom_pre_tokenizer;
    methods {
        /// Pre-tokenizes a ``tokenmill.PreTokenizedString`` in place.
        #[pyo3(text_signature = "(self, pretok)")]
        fn pre_tokenize(
            &self,
            mut pretok: PyRefMut<'_, crate::custom::PyPreTokenizedString>,
        ) -> PyResult<()> {
            let target = &mut pretok.inner;
            self.inner.with(|inner| inner.pre_tokenize(target)).py()
        }

        /// Pre-tokenizes a string: a list of ``(piece, (start, end))`` with offsets as character
        /// indexes into ``sequence``.
        #[pyo3(text_signature = "(self, sequence)")]
        fn pre_tokenize_str(
            &self,
            py: Python<'_>,
            sequence: String,
        ) -> PyResult<Vec<(String, Offsets)>> {
            self.inner
                .with(|inner| py.allow_threads(move || pre_tokenize_str(inner, &sequence)))
                .py()
        }
    }
}

/// What `pre_tokenize_str` returns, computed without the GIL.
fn pre_tokenize_str(
    pre_tokenizer: &PreTokenizerWrapper,
    text: &str,
) -> tokenmill_core::Result<Vec<(String, Offsets)>> {
    let mut pretokenized = PreTokenizedString::from(text);
    pre_tokenizer.pre_tokenize(&mut pretokenized)?;
    Ok(pretokenized
        .get_splits(OffsetReferential::Original, OffsetType::Char)
        .into_iter()
        .map(|(piece, offsets, _)| (piece.to_string(), offsets))
        .collect())
}

/// Parses `"removed"`, `"isolated"`, `"merged_with_previous"`, `"merged_with_next"`,
/// `"contiguous"`.
fn parse_behavior(name: &str) -> PyResult<SplitDelimiterBehavior> {
    Ok(match name {
        "removed" => SplitDelimiterBehavior::Removed,
        "isolated" => SplitDelimiterBehavior::Isolated,
        "merged_with_previous" => SplitDelimiterBehavior::MergedWithPrevious,
        "merged_with_next" => SplitDelimiterBehavior::MergedWithNext,
        "contiguous" => SplitDelimiterBehavior::Contiguous,
        other => {
            return Err(Error::InvalidArgument(format!(
                "wrong value for behavior: {other:?}, expected one of: removed, isolated, \
                merged_with_previous, merged_with_next, contiguous"
            )))
            .py()
        }
    })
}

/// The name `tokenizers`' `behavior` getters return (its enum name, lower-cased: "mergedwithnext").
fn behavior_name(b: SplitDelimiterBehavior) -> String {
    format!("{b:?}").to_lowercase()
}

/// ByteLevel pre-tokenizer: optionally adds a space in front, splits with the GPT-2 regex, and
/// maps every byte to a visible char (``ByteLevel.alphabet()``; a space becomes ``Ġ``).
///
/// Args:
///     add_prefix_space (bool, default True): add a space in front if there is none, so that
///         ``hello`` is treated like ``say hello``.
///     trim_offsets (bool, default True): used by the ByteLevel post-processor.
///     use_regex (bool, default True): split with the GPT-2 regex.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "ByteLevel")]
pub struct PyByteLevel;

#[pymethods]
impl PyByteLevel {
    #[new]
    #[pyo3(signature = (add_prefix_space = true, trim_offsets = true, use_regex = true, **_kwargs))]
    fn new(
        add_prefix_space: bool,
        trim_offsets: bool,
        use_regex: bool,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> (Self, PyPreTokenizer) {
        (
            PyByteLevel,
            PyPreTokenizer::new(ByteLevel::new(add_prefix_space, trim_offsets, use_regex)),
        )
    }

    /// The 256 characters bytes are mapped to (as one-character strings, in byte order).
    #[staticmethod]
    fn alphabet() -> Vec<String> {
        ByteLevel::alphabet().into_iter().map(String::from).collect()
    }

    #[getter]
    fn get_add_prefix_space(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.add_prefix_space)
    }
    #[setter]
    fn set_add_prefix_space(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.add_prefix_space = value)
    }
    #[getter]
    fn get_trim_offsets(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.trim_offsets)
    }
    #[setter]
    fn set_trim_offsets(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.trim_offsets = value)
    }
    #[getter]
    fn get_use_regex(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.use_regex)
    }
    #[setter]
    fn set_use_regex(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::ByteLevel, |p| p.use_regex = value)
    }
}

/// Splits on ``\w+|[^\w\s]+``: runs of word characters and runs of other non-space
/// characters; whitespace is dropped.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "Whitespace")]
pub struct PyWhitespace;

#[pymethods]
impl PyWhitespace {
    #[new]
    fn new() -> (Self, PyPreTokenizer) {
        (PyWhitespace, PyPreTokenizer::new(Whitespace))
    }
}

/// Splits on whitespace and drops it, like ``str.split()``.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "WhitespaceSplit")]
pub struct PyWhitespaceSplit;

#[pymethods]
impl PyWhitespaceSplit {
    #[new]
    fn new() -> (Self, PyPreTokenizer) {
        (PyWhitespaceSplit, PyPreTokenizer::new(WhitespaceSplit))
    }
}

/// BERT's pre-tokenizer: splits on whitespace (dropped) and isolates each punctuation char.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "BertPreTokenizer")]
pub struct PyBertPreTokenizer;

#[pymethods]
impl PyBertPreTokenizer {
    #[new]
    fn new() -> (Self, PyPreTokenizer) {
        (PyBertPreTokenizer, PyPreTokenizer::new(BertPreTokenizer))
    }
}

/// Splits on every match of ``pattern``.
///
/// Args:
///     pattern (str or tokenmill.Regex): a plain string is matched literally; wrap a regular
///         expression in ``tokenmill.Regex`` (Oniguruma-compatible syntax: possessive
///         quantifiers, look-around, ``\p{...}``, ``(?i:...)``).
///     behavior (str): what to do with the matches: "removed", "isolated",
///         "merged_with_previous", "merged_with_next" or "contiguous".
///     invert (bool, default False): split on what lies between the matches instead.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "Split")]
pub struct PySplit;

/// A `Split` pattern from Python: a `str` (literal) or a `tokenmill.Regex`.
fn extract_split_pattern(pattern: &Bound<'_, PyAny>) -> PyResult<SplitPattern> {
    if let Ok(s) = pattern.extract::<String>() {
        return Ok(SplitPattern::String(s));
    }
    if let Ok(regex) = pattern.downcast::<PyRegex>() {
        return Ok(SplitPattern::Regex(regex.get().inner.as_str().to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "pattern must be a str or a tokenmill.Regex, got {}",
        pattern.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

#[pymethods]
impl PySplit {
    #[new]
    #[pyo3(signature = (pattern, behavior, invert = false))]
    fn new(
        pattern: &Bound<'_, PyAny>,
        behavior: &str,
        invert: bool,
    ) -> PyResult<(Self, PyPreTokenizer)> {
        let split =
            Split::new(extract_split_pattern(pattern)?, parse_behavior(behavior)?, invert).py()?;
        Ok((PySplit, PyPreTokenizer::new(split)))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, [" ", "removed"])
    }

    /// The pattern: a str for a literal, a ``tokenmill.Regex`` for a regex.
    #[getter]
    fn get_pattern(self_: PyRef<'_, Self>) -> PyResult<PyObject> {
        let py = self_.py();
        let pattern = getter!(self_, PreTokenizerWrapper::Split, |p| p.pattern.clone())?;
        match pattern {
            SplitPattern::String(s) => Ok(s.into_pyobject(py)?.into_any().unbind()),
            // A pattern only our Oniguruma rewriting accepts (`\p{^L}`, `\h`) cannot be a
            // `Regex` object; it is then returned as its string.
            SplitPattern::Regex(r) => match PyRegex::new(&r) {
                Ok(regex) => Ok(Py::new(py, regex)?.into_any()),
                Err(_) => Ok(r.into_pyobject(py)?.into_any().unbind()),
            },
        }
    }
    #[getter]
    fn get_behavior(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PreTokenizerWrapper::Split, |p| behavior_name(p.behavior))
    }
    #[setter]
    fn set_behavior(self_: PyRef<'_, Self>, behavior: &str) -> PyResult<()> {
        let behavior = parse_behavior(behavior)?;
        setter!(self_, PreTokenizerWrapper::Split, |p| p.behavior = behavior)
    }
    #[getter]
    fn get_invert(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::Split, |p| p.invert)
    }
    #[setter]
    fn set_invert(self_: PyRef<'_, Self>, invert: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::Split, |p| p.invert = invert)
    }
}

/// Splits on each punctuation character.
///
/// Args:
///     behavior (str, default "isolated"): "removed", "isolated", "merged_with_previous",
///         "merged_with_next" or "contiguous".
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "Punctuation")]
pub struct PyPunctuation;

#[pymethods]
impl PyPunctuation {
    #[new]
    #[pyo3(signature = (behavior = "isolated"))]
    fn new(behavior: &str) -> PyResult<(Self, PyPreTokenizer)> {
        Ok((PyPunctuation, PyPreTokenizer::new(Punctuation::new(parse_behavior(behavior)?))))
    }
    #[getter]
    fn get_behavior(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PreTokenizerWrapper::Punctuation, |p| behavior_name(p.behavior))
    }
    #[setter]
    fn set_behavior(self_: PyRef<'_, Self>, behavior: &str) -> PyResult<()> {
        let behavior = parse_behavior(behavior)?;
        setter!(self_, PreTokenizerWrapper::Punctuation, |p| p.behavior = behavior)
    }
}

/// Splits numbers out: runs of digits ("Call 123 please" → "Call ", "123", " please"), or
/// each digit alone if ``individual_digits`` is True.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "Digits")]
pub struct PyDigits;

#[pymethods]
impl PyDigits {
    #[new]
    #[pyo3(signature = (individual_digits = false))]
    fn new(individual_digits: bool) -> (Self, PyPreTokenizer) {
        (PyDigits, PyPreTokenizer::new(Digits::new(individual_digits)))
    }
    #[getter]
    fn get_individual_digits(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::Digits, |p| p.individual_digits)
    }
    #[setter]
    fn set_individual_digits(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::Digits, |p| p.individual_digits = value)
    }
}

/// SentencePiece-style pre-tokenizer: spaces become ``replacement`` and the text is split
/// before each of them.
///
/// Args:
///     replacement (str, default "▁"): one character.
///     prepend_scheme (str, default "always"): put a ``replacement`` in front of the text
///         "always", "never", or only for the "first" piece of the input.
///     split (bool, default True): split before each ``replacement``.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "Metaspace")]
pub struct PyMetaspace;

fn parse_prepend_scheme(s: &str) -> PyResult<PrependScheme> {
    s.parse::<PrependScheme>().py()
}

#[pymethods]
impl PyMetaspace {
    #[new]
    #[pyo3(signature = (replacement = '▁', prepend_scheme = "always", split = true))]
    fn new(
        replacement: char,
        prepend_scheme: &str,
        split: bool,
    ) -> PyResult<(Self, PyPreTokenizer)> {
        Ok((
            PyMetaspace,
            PyPreTokenizer::new(Metaspace::new(
                replacement,
                parse_prepend_scheme(prepend_scheme)?,
                split,
            )),
        ))
    }
    #[getter]
    fn get_replacement(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PreTokenizerWrapper::Metaspace, |p| p.replacement().to_string())
    }
    #[setter]
    fn set_replacement(self_: PyRef<'_, Self>, replacement: char) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::Metaspace, |p| p.set_replacement(replacement))
    }
    #[getter]
    fn get_prepend_scheme(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PreTokenizerWrapper::Metaspace, |p| p.prepend_scheme.as_str().to_string())
    }
    #[setter]
    fn set_prepend_scheme(self_: PyRef<'_, Self>, prepend_scheme: &str) -> PyResult<()> {
        let scheme = parse_prepend_scheme(prepend_scheme)?;
        setter!(self_, PreTokenizerWrapper::Metaspace, |p| p.prepend_scheme = scheme)
    }
    #[getter]
    fn get_split(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, PreTokenizerWrapper::Metaspace, |p| p.split)
    }
    #[setter]
    fn set_split(self_: PyRef<'_, Self>, split: bool) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::Metaspace, |p| p.split = split)
    }
}

/// Splits on one character, which is dropped (like ``str.split(delimiter)`` without empty parts).
#[pyclass(
    extends = PyPreTokenizer,
    module = "tokenmill.pre_tokenizers",
    name = "CharDelimiterSplit"
)]
pub struct PyCharDelimiterSplit;

#[pymethods]
impl PyCharDelimiterSplit {
    #[new]
    fn new(delimiter: char) -> (Self, PyPreTokenizer) {
        (PyCharDelimiterSplit, PyPreTokenizer::new(CharDelimiterSplit::new(delimiter)))
    }
    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, [" "])
    }
    #[getter]
    fn get_delimiter(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PreTokenizerWrapper::Delimiter, |p| p.delimiter.to_string())
    }
    #[setter]
    fn set_delimiter(self_: PyRef<'_, Self>, delimiter: char) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::Delimiter, |p| p.delimiter = delimiter)
    }
}

/// Splits where the Unicode script changes (Hiragana, Katakana and ``ー`` count as Han), as
/// SentencePiece does; spaces stay with the piece before them.
///
/// Scripts are those of ``tokenizers``, which froze Unicode 9.0's: chars assigned since have
/// no script (they never cause a split, like spaces), and the few chars Unicode has moved to
/// another script since keep their 9.0 one (U+0589 ARMENIAN FULL STOP is Common).
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "UnicodeScripts")]
pub struct PyUnicodeScripts;

#[pymethods]
impl PyUnicodeScripts {
    #[new]
    fn new() -> (Self, PyPreTokenizer) {
        (PyUnicodeScripts, PyPreTokenizer::new(UnicodeScripts))
    }
}

/// Cuts the text into chunks of ``length`` characters.
#[pyclass(extends = PyPreTokenizer, module = "tokenmill.pre_tokenizers", name = "FixedLength")]
pub struct PyFixedLength;

#[pymethods]
impl PyFixedLength {
    #[new]
    #[pyo3(signature = (length = 5))]
    fn new(length: usize) -> (Self, PyPreTokenizer) {
        (PyFixedLength, PyPreTokenizer::new(FixedLength::new(length)))
    }
    #[getter]
    fn get_length(self_: PyRef<'_, Self>) -> PyResult<usize> {
        getter!(self_, PreTokenizerWrapper::FixedLength, |p| p.length)
    }
    #[setter]
    fn set_length(self_: PyRef<'_, Self>, length: usize) -> PyResult<()> {
        setter!(self_, PreTokenizerWrapper::FixedLength, |p| p.length = length)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPreTokenizer>()?;
    m.add_class::<PyByteLevel>()?;
    m.add_class::<PyWhitespace>()?;
    m.add_class::<PyWhitespaceSplit>()?;
    m.add_class::<PyBertPreTokenizer>()?;
    m.add_class::<PySplit>()?;
    m.add_class::<PyPunctuation>()?;
    m.add_class::<PyDigits>()?;
    m.add_class::<PyMetaspace>()?;
    m.add_class::<PyCharDelimiterSplit>()?;
    m.add_class::<PyUnicodeScripts>()?;
    m.add_class::<PyFixedLength>()?;
    m.add_class::<PySequence>()?;
    Ok(())
}
