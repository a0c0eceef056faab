//! `tokenmill.decoders`: the `Decoder` base class and its components, with the constructors,
//! attributes and `decode` of `tokenizers.decoders`.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use tokenmill_core::decoders::{
    BPEDecoder, ByteFallback, ByteLevel, DecoderWrapper, Fuse, Metaspace, PrependScheme, Replace,
    Strip, WordPiece, CTC,
};
use tokenmill_core::tokenizer::{DecodeStream, Decoder};

use crate::errors::ToPyResult;
use crate::normalizers::extract_replace_pattern;
use crate::shared::{getter, setter};
use crate::stage::stage_classes;
use crate::tokenizer::PyTokenizer;

/// Token lists at least this long are decoded with the GIL released.
const RELEASE_GIL_TOKENS: usize = 1024;

stage_classes! {
    /// Base class of all decoders. A decoder turns a list of tokens back into text.
    ///
    /// Not built directly: use one of the subclasses.
    ///
    /// The component is shared (see `shared.rs`): a decoder assigned to a Tokenizer is the same
    /// object there, so changing its attributes changes the tokenizer's decoder.
    base PyDecoder(DecoderWrapper), "tokenmill.decoders", "Decoder", "decoder",
        restore AnyKind;
    /// Decoders applied in order, each on the pieces the previous one produced.
    ///
    /// Args:
    ///     decoders (List[Decoder]): the decoders (copied, as in tokenizers).
    sequence PySequence(decoders), items Copied;
    subclasses {
        BPE => PyBPEDecoder,
        ByteLevel => PyByteLevel,
        WordPiece => PyWordPiece,
        Metaspace => PyMetaspace,
        CTC => PyCTC,
        Sequence => PySequence,
        Replace => PyReplace,
        Fuse => PyFuse,
        Strip => PyStrip,
        ByteFallback => PyByteFallback,
    }
    plain { Custom }
    /// A decoder written in Python: ``decoder`` is any object with ``decode_chain(self,
    /// tokens) -> list[str]``; decoding joins its pieces. It runs with the GIL; a tokenizer
    /// holding it cannot be saved or pickled.
    custom(decoder) => crate::custom::custom_decoder;
    methods {
        /// Decodes a list of tokens into the final string.
        #[pyo3(signature = (tokens))]
        fn decode(&self, py: Python<'_>, tokens: Vec<String>) -> PyResult<String> {
            self.inner
                .with(|inner| {
                    if tokens.len() >= RELEASE_GIL_TOKENS {
                        py.allow_threads(|| inner.decode(tokens))
                    } else {
                        inner.decode(tokens)
                    }
                })
                .py()
        }
    }
}

/// Decodes byte-level BPE tokens (GPT-2's alphabet, ``Ġ`` for a space) back to text; byte
/// sequences that are not valid UTF-8 become U+FFFD. To be used with the ``ByteLevel``
/// pre-tokenizer. Takes no arguments (keyword arguments are accepted and ignored).
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "ByteLevel")]
pub struct PyByteLevel;

#[pymethods]
impl PyByteLevel {
    #[new]
    #[pyo3(signature = (**_kwargs))]
    fn new(_kwargs: Option<&Bound<'_, PyDict>>) -> (Self, PyDecoder) {
        (PyByteLevel, PyDecoder::new(ByteLevel::default()))
    }
}

/// Replaces every match of ``pattern`` in each token by ``content``.
///
/// Args:
///     pattern (str or tokenmill.Regex): a str is matched literally.
///     content (str): the replacement.
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "Replace")]
pub struct PyReplace;

#[pymethods]
impl PyReplace {
    #[new]
    #[pyo3(signature = (pattern, content))]
    fn new(pattern: &Bound<'_, PyAny>, content: String) -> PyResult<(Self, PyDecoder)> {
        let replace = Replace::new(extract_replace_pattern(pattern)?, content).py()?;
        Ok((PyReplace, PyDecoder::new(replace)))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, ["", ""])
    }
}

/// Decodes WordPiece tokens: tokens starting with ``prefix`` are glued to the previous one,
/// others are separated by a space; ``cleanup`` removes the spaces BERT's tokenization puts
/// before punctuation and in contractions (`` .`` → ``.``, `` n't`` → ``n't``, ...).
///
/// Args:
///     prefix (str, default ``"##"``): the continuing-subword prefix.
///     cleanup (bool, default True): undo the tokenization spaces.
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "WordPiece")]
pub struct PyWordPiece;

#[pymethods]
impl PyWordPiece {
    #[new]
    #[pyo3(signature = (prefix = String::from("##"), cleanup = true))]
    fn new(prefix: String, cleanup: bool) -> (Self, PyDecoder) {
        (PyWordPiece, PyDecoder::new(WordPiece::new(prefix, cleanup)))
    }

    /// The continuing-subword prefix.
    #[getter]
    fn get_prefix(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::WordPiece, |d| d.prefix.clone())
    }
    #[setter]
    fn set_prefix(self_: PyRef<'_, Self>, prefix: String) -> PyResult<()> {
        setter!(self_, DecoderWrapper::WordPiece, |d| d.prefix = prefix)
    }
    /// Whether tokenization spaces are cleaned up.
    #[getter]
    fn get_cleanup(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, DecoderWrapper::WordPiece, |d| d.cleanup)
    }
    #[setter]
    fn set_cleanup(self_: PyRef<'_, Self>, cleanup: bool) -> PyResult<()> {
        setter!(self_, DecoderWrapper::WordPiece, |d| d.cleanup = cleanup)
    }
}

/// Turns runs of byte tokens ``<0x00>``..``<0xFF>`` (BPE ``byte_fallback``) back into the
/// text they encode; a run that is not valid UTF-8 gives one U+FFFD per byte token.
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "ByteFallback")]
pub struct PyByteFallback;

#[pymethods]
impl PyByteFallback {
    #[new]
    #[pyo3(signature = ())]
    fn new() -> (Self, PyDecoder) {
        (PyByteFallback, PyDecoder::new(ByteFallback::new()))
    }
}

/// Joins all tokens into one (useful before ``Strip`` in a ``Sequence``).
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "Fuse")]
pub struct PyFuse;

#[pymethods]
impl PyFuse {
    #[new]
    #[pyo3(signature = ())]
    fn new() -> (Self, PyDecoder) {
        (PyFuse, PyDecoder::new(Fuse::new()))
    }
}

/// Removes up to ``left`` leading and ``right`` trailing ``content`` characters from each token.
///
/// Args:
///     content (str, default ``" "``): the character to strip (one character).
///     left (int, default 0): at most this many from the start.
///     right (int, default 0): at most this many from the end.
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "Strip")]
pub struct PyStrip;

#[pymethods]
impl PyStrip {
    #[new]
    #[pyo3(signature = (content = ' ', left = 0, right = 0))]
    fn new(content: char, left: usize, right: usize) -> (Self, PyDecoder) {
        (PyStrip, PyDecoder::new(Strip::new(content, left, right)))
    }

    /// The character stripped.
    #[getter]
    fn get_content(self_: PyRef<'_, Self>) -> PyResult<char> {
        getter!(self_, DecoderWrapper::Strip, |d| d.content)
    }
    #[setter]
    fn set_content(self_: PyRef<'_, Self>, content: char) -> PyResult<()> {
        setter!(self_, DecoderWrapper::Strip, |d| d.content = content)
    }
    /// How many characters at most are stripped from the start.
    #[getter]
    fn get_start(self_: PyRef<'_, Self>) -> PyResult<usize> {
        getter!(self_, DecoderWrapper::Strip, |d| d.start)
    }
    #[setter]
    fn set_start(self_: PyRef<'_, Self>, start: usize) -> PyResult<()> {
        setter!(self_, DecoderWrapper::Strip, |d| d.start = start)
    }
    /// How many characters at most are stripped from the end.
    #[getter]
    fn get_stop(self_: PyRef<'_, Self>) -> PyResult<usize> {
        getter!(self_, DecoderWrapper::Strip, |d| d.stop)
    }
    #[setter]
    fn set_stop(self_: PyRef<'_, Self>, stop: usize) -> PyResult<()> {
        setter!(self_, DecoderWrapper::Strip, |d| d.stop = stop)
    }
}

fn parse_prepend_scheme(s: &str) -> PyResult<PrependScheme> {
    s.parse::<PrependScheme>().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Decodes SentencePiece-style tokens: ``replacement`` (``▁``) becomes a space; in the first
/// token it is dropped instead unless ``prepend_scheme`` is ``"never"``.
///
/// Args:
///     replacement (str, default ``"▁"``): the space stand-in (one character).
///     prepend_scheme (str, default ``"always"``): ``"always"``, ``"first"`` or ``"never"``,
///         as given to the Metaspace pre-tokenizer.
///     split (bool, default True): the pre-tokenizer's setting (stored, unused here).
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "Metaspace")]
pub struct PyMetaspace;

#[pymethods]
impl PyMetaspace {
    #[new]
    #[pyo3(signature = (replacement = '▁', prepend_scheme = String::from("always"), split = true))]
    fn new(replacement: char, prepend_scheme: String, split: bool) -> PyResult<(Self, PyDecoder)> {
        let scheme = parse_prepend_scheme(&prepend_scheme)?;
        Ok((PyMetaspace, PyDecoder::new(Metaspace::new(replacement, scheme, split))))
    }

    /// The space stand-in.
    #[getter]
    fn get_replacement(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::Metaspace, |d| d.replacement().to_string())
    }
    #[setter]
    fn set_replacement(self_: PyRef<'_, Self>, replacement: char) -> PyResult<()> {
        setter!(self_, DecoderWrapper::Metaspace, |d| d.set_replacement(replacement))
    }
    /// ``"always"``, ``"first"`` or ``"never"``.
    #[getter]
    fn get_prepend_scheme(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::Metaspace, |d| d.prepend_scheme.as_str().to_string())
    }
    #[setter]
    fn set_prepend_scheme(self_: PyRef<'_, Self>, prepend_scheme: &str) -> PyResult<()> {
        let scheme = parse_prepend_scheme(prepend_scheme)?;
        setter!(self_, DecoderWrapper::Metaspace, |d| d.prepend_scheme = scheme)
    }
    /// The pre-tokenizer's ``split`` setting.
    #[getter]
    fn get_split(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, DecoderWrapper::Metaspace, |d| d.split)
    }
    #[setter]
    fn set_split(self_: PyRef<'_, Self>, split: bool) -> PyResult<()> {
        setter!(self_, DecoderWrapper::Metaspace, |d| d.split = split)
    }
}

/// Decodes classic BPE tokens: the end-of-word ``suffix`` becomes a space (nothing at the end).
///
/// Args:
///     suffix (str, default ``"</w>"``): the end-of-word suffix of the model.
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "BPEDecoder")]
pub struct PyBPEDecoder;

#[pymethods]
impl PyBPEDecoder {
    #[new]
    #[pyo3(signature = (suffix = String::from("</w>")))]
    fn new(suffix: String) -> (Self, PyDecoder) {
        (PyBPEDecoder, PyDecoder::new(BPEDecoder::new(suffix)))
    }

    /// The end-of-word suffix.
    #[getter]
    fn get_suffix(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::BPE, |d| d.suffix.clone())
    }
    #[setter]
    fn set_suffix(self_: PyRef<'_, Self>, suffix: String) -> PyResult<()> {
        setter!(self_, DecoderWrapper::BPE, |d| d.suffix = suffix)
    }
}

/// Decodes CTC (speech model) output: repeated tokens collapse to one, ``pad_token`` is
/// dropped, ``word_delimiter_token`` becomes a space (with ``cleanup``, which also undoes the
/// WordPiece-style tokenization spaces).
///
/// Args:
///     pad_token (str, default ``"<pad>"``), word_delimiter_token (str, default ``"|"``),
///     cleanup (bool, default True).
#[pyclass(extends = PyDecoder, module = "tokenmill.decoders", name = "CTC")]
pub struct PyCTC;

#[pymethods]
impl PyCTC {
    #[new]
    #[pyo3(signature = (
        pad_token = String::from("<pad>"), word_delimiter_token = String::from("|"), cleanup = true
    ))]
    fn new(pad_token: String, word_delimiter_token: String, cleanup: bool) -> (Self, PyDecoder) {
        (PyCTC, PyDecoder::new(CTC::new(pad_token, word_delimiter_token, cleanup)))
    }

    /// The padding token (dropped).
    #[getter]
    fn get_pad_token(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::CTC, |d| d.pad_token.clone())
    }
    #[setter]
    fn set_pad_token(self_: PyRef<'_, Self>, value: String) -> PyResult<()> {
        setter!(self_, DecoderWrapper::CTC, |d| d.pad_token = value)
    }
    /// The word delimiter token (becomes a space).
    #[getter]
    fn get_word_delimiter_token(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, DecoderWrapper::CTC, |d| d.word_delimiter_token.clone())
    }
    #[setter]
    fn set_word_delimiter_token(self_: PyRef<'_, Self>, value: String) -> PyResult<()> {
        setter!(self_, DecoderWrapper::CTC, |d| d.word_delimiter_token = value)
    }
    /// Whether tokenization spaces are cleaned up.
    #[getter]
    fn get_cleanup(self_: PyRef<'_, Self>) -> PyResult<bool> {
        getter!(self_, DecoderWrapper::CTC, |d| d.cleanup)
    }
    #[setter]
    fn set_cleanup(self_: PyRef<'_, Self>, value: bool) -> PyResult<()> {
        setter!(self_, DecoderWrapper::CTC, |d| d.cleanup = value)
    }
}

/// Incremental decoding for generation, as ``tokenizers.decoders.DecodeStream``: feed ids one
/// at a time (or a few) with :meth:`step`; it returns the text they complete as soon as it is
/// complete, or None while a character (a multi-byte UTF-8 character, a byte-fallback
/// ``<0xNN>`` run) is unfinished. The returned pieces concatenate to
/// ``tokenizer.decode(all_ids, skip_special_tokens)``.
///
/// Args:
///     ids (List[int], optional): ids generated before (the prompt); used as context only,
///         their text is not returned.
///     skip_special_tokens (bool, default False): leave special tokens out of the text.
#[pyclass(module = "tokenmill.decoders", name = "DecodeStream")]
#[derive(Clone)]
pub struct PyDecodeStream {
    stream: DecodeStream,
    skip_special_tokens: bool,
}

#[pymethods]
impl PyDecodeStream {
    #[new]
    #[pyo3(signature = (ids = None, skip_special_tokens = false))]
    fn new(ids: Option<Vec<u32>>, skip_special_tokens: bool) -> Self {
        PyDecodeStream { stream: DecodeStream::new(ids.unwrap_or_default()), skip_special_tokens }
    }

    /// Adds the next id (an int) or ids (a list of int) decoded by ``tokenizer`` and returns
    /// the text they complete, or None if more ids are needed.
    #[pyo3(signature = (tokenizer, id))]
    fn step(
        &mut self,
        py: Python<'_>,
        tokenizer: PyRef<'_, PyTokenizer>,
        id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<String>> {
        let ids: Vec<u32> = match id.extract::<u32>() {
            Ok(single) => vec![single],
            Err(_) => id.extract::<Vec<u32>>().map_err(|_| {
                PyTypeError::new_err("id must be an int or a list of int (token ids)")
            })?,
        };
        let pipeline = tokenizer.pipeline(py)?;
        let skip = self.skip_special_tokens;
        self.stream.step(&ids, |window| pipeline.decode(window, skip)).py()
    }

    fn __repr__(&self) -> String {
        format!(
            "DecodeStream(skip_special_tokens={})",
            if self.skip_special_tokens { "True" } else { "False" }
        )
    }

    /// A stream in the same state that goes on independently (as ``tokenizers``).
    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Pickled state: ``(ids, prefix, prefix_ids, skip_special_tokens)``.
    fn __getstate__(&self) -> (Vec<u32>, String, usize, bool) {
        let (ids, prefix, prefix_ids) = self.stream.to_parts();
        (ids, prefix, prefix_ids, self.skip_special_tokens)
    }

    fn __setstate__(&mut self, state: (Vec<u32>, String, usize, bool)) -> PyResult<()> {
        let (ids, prefix, prefix_ids, skip_special_tokens) = state;
        self.stream = DecodeStream::from_parts(ids, prefix, prefix_ids).py()?;
        self.skip_special_tokens = skip_special_tokens;
        Ok(())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDecoder>()?;
    m.add_class::<PyDecodeStream>()?;
    m.add_class::<PyByteLevel>()?;
    m.add_class::<PyReplace>()?;
    m.add_class::<PyWordPiece>()?;
    m.add_class::<PyByteFallback>()?;
    m.add_class::<PyFuse>()?;
    m.add_class::<PyStrip>()?;
    m.add_class::<PyMetaspace>()?;
    m.add_class::<PyBPEDecoder>()?;
    m.add_class::<PyCTC>()?;
    m.add_class::<PySequence>()?;
    Ok(())
}
