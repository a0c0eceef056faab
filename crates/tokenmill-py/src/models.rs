//! `tokenmill.models`: the `Model` base class, `BPE`, `WordPiece`, `WordLevel`, and `Token`.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple, PyType};
use tokenmill_core::models::bpe::{self, BpeBuilder, BpeOptions, Merges, BPE};
use tokenmill_core::models::wordlevel::{self, WordLevel, WordLevelBuilder};
use tokenmill_core::models::wordpiece::{self, WordPiece, WordPieceBuilder};
use tokenmill_core::models::ModelWrapper;
use tokenmill_core::tokenizer::{Model, Token};
use tokenmill_core::trainers::TrainerWrapper;

use crate::errors::ToPyResult;
use crate::properties::component_properties;
use crate::shared::{getter, setter, Shared};

/// Sequences longer than this are tokenized with the GIL released.
const RELEASE_GIL_BYTES: usize = 4096;

/// A token produced by a model: its id, its text, and its (start, end) offsets in the piece.
#[pyclass(module = "tokenmill", name = "Token", frozen)]
#[derive(Clone)]
pub struct PyToken {
    pub(crate) token: Token,
}

impl PyToken {
    pub(crate) fn from_parts(id: u32, value: String, offsets: (usize, usize)) -> Self {
        PyToken { token: Token::new(id, value, offsets) }
    }
}

#[pymethods]
impl PyToken {
    #[new]
    #[pyo3(signature = (id, value, offsets))]
    fn new(id: u32, value: String, offsets: (usize, usize)) -> Self {
        PyToken { token: Token::new(id, value, offsets) }
    }
    #[getter]
    fn id(&self) -> u32 {
        self.token.id
    }
    #[getter]
    fn value(&self) -> &str {
        &self.token.value
    }
    #[getter]
    fn offsets(&self) -> (usize, usize) {
        self.token.offsets
    }
    /// `(id, value, offsets)`.
    fn as_tuple(&self) -> (u32, &str, (usize, usize)) {
        (self.token.id, &self.token.value, self.token.offsets)
    }
    fn __repr__(&self) -> String {
        format!(
            "Token(id={}, value={:?}, offsets={:?})",
            self.token.id, self.token.value, self.token.offsets
        )
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.downcast::<PyToken>().map(|o| o.get().token == self.token).unwrap_or(false)
    }
}

/// Base class of all models. A model turns one pre-tokenized piece of text into tokens.
///
/// The model is shared (see `shared.rs`): a model assigned to a Tokenizer is the same object
/// there, so ``tok.model.dropout = 0.1`` changes the tokenizer.
#[pyclass(subclass, module = "tokenmill.models", name = "Model")]
#[derive(Clone)]
pub struct PyModel {
    pub(crate) inner: Shared<ModelWrapper>,
}

impl PyModel {
    pub(crate) fn new(inner: impl Into<ModelWrapper>) -> Self {
        PyModel { inner: Shared::new(inner.into()) }
    }
}

/// The Python object of the right subclass (`BPE`, ...) for a core model (a new component).
pub(crate) fn to_python(py: Python<'_>, wrapper: ModelWrapper) -> PyResult<PyObject> {
    shared_to_python(py, Shared::new(wrapper))
}

/// The Python object of the right subclass that shares `model` (for `tokenizer.model`).
pub(crate) fn shared_to_python(py: Python<'_>, model: Shared<ModelWrapper>) -> PyResult<PyObject> {
    let base = PyClassInitializer::from(PyModel { inner: model.clone() });
    model.with(|m| {
        Ok(match m {
            ModelWrapper::BPE(_) => Py::new(py, base.add_subclass(PyBPE))?.into_any(),
            ModelWrapper::WordPiece(_) => Py::new(py, base.add_subclass(PyWordPiece))?.into_any(),
            ModelWrapper::WordLevel(_) => Py::new(py, base.add_subclass(PyWordLevel))?.into_any(),
            ModelWrapper::Unigram(_) => {
                Py::new(py, base.add_subclass(crate::unigram::PyUnigram))?.into_any()
            }
        })
    })
}

fn tokenize_released(py: Python<'_>, model: &ModelWrapper, sequence: &str) -> PyResult<Vec<Token>> {
    if sequence.len() > RELEASE_GIL_BYTES {
        py.allow_threads(|| model.tokenize(sequence)).py()
    } else {
        model.tokenize(sequence).py()
    }
}

#[pymethods]
impl PyModel {
    /// An empty BPE model (this no-argument form exists for unpickling).
    #[new]
    fn __new__() -> Self {
        PyModel::new(ModelWrapper::BPE(BPE::default()))
    }

    /// Tokenizes one piece of text (a word, after pre-tokenization) into a list of `Token`.
    #[pyo3(signature = (sequence))]
    fn tokenize(&self, py: Python<'_>, sequence: &str) -> PyResult<Vec<PyToken>> {
        let tokens = self.inner.with(|model| tokenize_released(py, model, sequence))?;
        Ok(tokens.into_iter().map(|token| PyToken { token }).collect())
    }

    /// The id of `token`, or None.
    #[pyo3(signature = (token))]
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.read().token_to_id(token)
    }

    /// The token of `id`, or None.
    #[pyo3(signature = (id))]
    fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.read().id_to_token(id)
    }

    /// The vocabulary as a dict token → id.
    fn get_vocab(&self) -> HashMap<String, u32> {
        self.inner.read().get_vocab()
    }

    /// The number of tokens in the vocabulary.
    fn get_vocab_size(&self) -> usize {
        self.inner.read().get_vocab_size()
    }

    /// Writes the model's files (BPE: `[prefix-]vocab.json` and `[prefix-]merges.txt`) into
    /// `folder`, atomically; returns their paths. `name` is the old name of `prefix`.
    #[pyo3(signature = (folder, prefix=None, name=None))]
    fn save(
        &self,
        py: Python<'_>,
        folder: PathBuf,
        prefix: Option<String>,
        name: Option<String>,
    ) -> PyResult<Vec<String>> {
        let prefix = prefix.or(name);
        let paths = self
            .inner
            .with(|model| py.allow_threads(|| model.save(&folder, prefix.as_deref())))
            .py()?;
        Ok(paths.into_iter().map(|p| p.to_string_lossy().into_owned()).collect())
    }

    /// A trainer for this kind of model, with default settings (BPE: a `BpeTrainer`).
    fn get_trainer(&self, py: Python<'_>) -> PyResult<PyObject> {
        let trainer = TrainerWrapper::for_model(&self.inner.read());
        crate::trainers::to_python(py, trainer)
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let json = serde_json::to_vec(&*self.inner.read())
            .map_err(|e| PyValueError::new_err(format!("cannot pickle model: {e}")))?;
        Ok(PyBytes::new(py, &json))
    }

    fn __setstate__(&mut self, state: &[u8]) -> PyResult<()> {
        let inner: ModelWrapper =
            serde_json::from_slice(state).map_err(tokenmill_core::Error::from).py()?;
        self.inner.set(inner);
        Ok(())
    }

    /// As ``tokenizers`` writes it: ``BPE(dropout=None, ..., vocab={"a":0, ...}, merges=[...])``,
    /// up to 99 entries of each list.
    fn __repr__(&self) -> PyResult<String> {
        crate::repr::repr(&*self.inner.read()).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// As :meth:`__repr__` with up to 5 entries of each list (then ``...``).
    fn __str__(&self) -> PyResult<String> {
        crate::repr::to_str(&*self.inner.read()).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// Byte-pair-encoding model (classic or byte-level), as `tokenizers.models.BPE`.
///
/// `vocab`/`merges` are a dict and a list of pairs, or the paths of `vocab.json` and
/// `merges.txt` (also `encoder.json` and `vocab.bpe`). `dropout_seed` (tokenmill only) makes
/// dropout reproducible.
#[pyclass(extends = PyModel, module = "tokenmill.models", name = "BPE")]
pub struct PyBPE;

fn extract_merges(merges: &Bound<'_, PyAny>) -> PyResult<Merges> {
    let list = merges.downcast::<PyList>().map_err(|_| {
        PyTypeError::new_err("merges must be a list of (str, str) pairs or a file path")
    })?;
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let pair = item.extract::<(String, String)>().or_else(|_| {
                let v: Vec<String> = item.extract()?;
                match <[String; 2]>::try_from(v) {
                    Ok([a, b]) => Ok((a, b)),
                    Err(_) => Err(PyValueError::new_err("not a pair")),
                }
            });
            pair.map_err(|_| PyTypeError::new_err(format!("merges[{i}] is not a pair of strings")))
        })
        .collect()
}

/// Builds a BPE from in-memory or on-disk vocab and merges.
fn build_bpe(
    py: Python<'_>,
    vocab: Option<&Bound<'_, PyAny>>,
    merges: Option<&Bound<'_, PyAny>>,
    options: BpeOptions,
) -> PyResult<BPE> {
    match (vocab, merges) {
        (None, None) => BpeBuilder::new().options(options).build().py(),
        (Some(v), Some(m)) => {
            if let (Ok(vp), Ok(mp)) = (v.extract::<PathBuf>(), m.extract::<PathBuf>()) {
                if !v.is_instance_of::<PyDict>() {
                    return py.allow_threads(|| bpe::files::from_files(&vp, &mp, options)).py();
                }
            }
            let vocab: HashMap<String, u32> = v.extract().map_err(|_| {
                PyTypeError::new_err(
                    "vocab and merges must both be in memory (dict \
                    and list of pairs) or both file paths",
                )
            })?;
            let merges = extract_merges(m)?;
            py.allow_threads(|| {
                BpeBuilder::new().vocab_and_merges(vocab, merges).options(options).build()
            })
            .py()
        }
        _ => Err(PyValueError::new_err("`vocab` and `merges` must be both specified")),
    }
}

/// What a `BPE` object's setters do after a change: its cached words are forgotten.
fn forget_words(model: &mut BPE) {
    model.clear_cache();
}

component_properties! {
    #[pymethods] PyBPE, ModelWrapper::BPE(|m| m), after_set(forget_words);
    fields {
        unk_token: Option<String>;
        continuing_subword_prefix: Option<String>;
        end_of_word_suffix: Option<String>;
        fuse_unk: bool;
        byte_fallback: bool;
        ignore_merges: bool;
    }
    accessors {
        dropout: Option<f32> => m.dropout,
            |dropout: Option<f32>| m.set_dropout(dropout);
        dropout_seed: Option<u64> => m.dropout_seed(),
            |seed: Option<u64>| m.set_dropout_seed(seed);
    }
    methods {
        #[new]
        #[pyo3(signature = (
            vocab=None, merges=None, cache_capacity=None, dropout=None, unk_token=None,
            continuing_subword_prefix=None, end_of_word_suffix=None, fuse_unk=None,
            byte_fallback=false, ignore_merges=false, dropout_seed=None
        ))]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            vocab: Option<&Bound<'_, PyAny>>,
            merges: Option<&Bound<'_, PyAny>>,
            cache_capacity: Option<usize>,
            dropout: Option<f32>,
            unk_token: Option<String>,
            continuing_subword_prefix: Option<String>,
            end_of_word_suffix: Option<String>,
            fuse_unk: Option<bool>,
            byte_fallback: bool,
            ignore_merges: bool,
            dropout_seed: Option<u64>,
        ) -> PyResult<(Self, PyModel)> {
            let options = BpeOptions {
                cache_capacity: cache_capacity.unwrap_or(bpe::DEFAULT_CACHE_CAPACITY),
                dropout,
                dropout_seed,
                unk_token,
                continuing_subword_prefix,
                end_of_word_suffix,
                fuse_unk: fuse_unk.unwrap_or(false),
                byte_fallback,
                ignore_merges,
            };
            let model = build_bpe(py, vocab, merges, options)?;
            Ok((PyBPE, PyModel::new(ModelWrapper::BPE(model))))
        }

        /// Reads `vocab.json` + `merges.txt` (or `encoder.json` + `vocab.bpe`) and returns
        /// `(vocab, merges)`: a dict and a list of pairs.
        #[staticmethod]
        #[pyo3(signature = (vocab, merges))]
        fn read_file(
            py: Python<'_>,
            vocab: PathBuf,
            merges: PathBuf,
        ) -> PyResult<(HashMap<String, u32>, Merges)> {
            py.allow_threads(|| bpe::files::read_file(&vocab, &merges)).py()
        }

        /// A BPE model from `vocab.json` + `merges.txt` (or `encoder.json` + `vocab.bpe`), with the
        /// constructor's keyword options.
        #[classmethod]
        #[pyo3(signature = (vocab, merges, **kwargs))]
        fn from_file<'py>(
            cls: &Bound<'py, PyType>,
            vocab: PathBuf,
            merges: PathBuf,
            kwargs: Option<&Bound<'py, PyDict>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let py = cls.py();
            let args = PyTuple::new(
                py,
                [vocab.into_pyobject(py)?.into_any(), merges.into_pyobject(py)?.into_any()],
            )?;
            cls.call(args, kwargs)
        }

        /// Forgets the cached words.
        fn _clear_cache(self_: PyRef<'_, Self>) -> PyResult<()> {
            getter!(self_, ModelWrapper::BPE, |m| m.clear_cache())
        }

        /// Changes how many words are cached (0 disables the cache).
        fn _resize_cache(self_: PyRef<'_, Self>, capacity: usize) -> PyResult<()> {
            setter!(self_, ModelWrapper::BPE, |m| {
                m.resize_cache(capacity);
                forget_words(m)
            })
        }
    }
}

/// A builder of a model whose vocabulary is a dict token → id or one file: WordPiece, WordLevel.
trait VocabBuilder: Sized + Send {
    type Model: Into<ModelWrapper> + Send;
    /// The vocabulary file, as errors name it ("vocab.txt").
    const FILE: &'static str;
    fn with_vocab(self, vocab: HashMap<String, u32>) -> Self;
    fn with_file(self, path: PathBuf) -> Self;
    fn build_model(self) -> tokenmill_core::Result<Self::Model>;
    /// Reads the vocabulary file.
    fn read_file(path: &Path) -> tokenmill_core::Result<HashMap<String, u32>>;
}

macro_rules! vocab_builders {
    ($($Builder:ident => $Model:ident, $files:ident, $file:literal;)*) => {$(
        impl VocabBuilder for $Builder {
            type Model = $Model;
            const FILE: &'static str = $file;
            fn with_vocab(self, vocab: HashMap<String, u32>) -> Self {
                self.vocab(vocab)
            }
            fn with_file(self, path: PathBuf) -> Self {
                self.file(path)
            }
            fn build_model(self) -> tokenmill_core::Result<$Model> {
                self.build()
            }
            fn read_file(path: &Path) -> tokenmill_core::Result<HashMap<String, u32>> {
                $files::files::read_file(path)
            }
        }
    )*};
}

vocab_builders! {
    WordPieceBuilder => WordPiece, wordpiece, "vocab.txt";
    WordLevelBuilder => WordLevel, wordlevel, "vocab.json";
}

/// The base class of a WordPiece or WordLevel model: `builder` given `vocab` (a dict token →
/// id, or the path of its file) and built without the GIL.
fn vocab_model<B: VocabBuilder>(
    py: Python<'_>,
    builder: B,
    vocab: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyModel> {
    let builder = match vocab {
        None => builder,
        Some(vocab) if vocab.is_instance_of::<PyDict>() => builder.with_vocab(vocab.extract()?),
        Some(vocab) => {
            let path = vocab.extract().map_err(|_| {
                let file = B::FILE;
                let message = format!("vocab must be a dict token → id or the path of a {file}");
                PyTypeError::new_err(message)
            })?;
            builder.with_file(path)
        }
    };
    let model = py.allow_threads(|| builder.build_model()).py()?;
    Ok(PyModel::new(model))
}

/// `read_file` of a model whose vocabulary is one file: the dict token → id it holds.
fn read_vocab_file<B: VocabBuilder>(
    py: Python<'_>,
    vocab: PathBuf,
) -> PyResult<HashMap<String, u32>> {
    py.allow_threads(|| B::read_file(&vocab)).py()
}

/// WordPiece model (BERT's subwords), as `tokenizers.models.WordPiece`: each word becomes the
/// longest vocabulary token it starts with, then the longest continuation token
/// (`continuing_subword_prefix` + text) the rest starts with, and so on. A word longer than
/// `max_input_chars_per_word` characters, or with a part no token matches, becomes `unk_token`.
/// Matching is linear in the word length.
///
/// `vocab` is a dict token → id or the path of a `vocab.txt` (one token per line).
#[pyclass(extends = PyModel, module = "tokenmill.models", name = "WordPiece")]
pub struct PyWordPiece;

component_properties! {
    #[pymethods] PyWordPiece, ModelWrapper::WordPiece(|m| m);
    fields {
        unk_token: String;
        max_input_chars_per_word: usize;
    }
    accessors {
        continuing_subword_prefix: String =>
            m.continuing_subword_prefix().to_string(),
            |prefix: String| m.set_continuing_subword_prefix(prefix);
    }
    methods {
        #[new]
        #[pyo3(signature = (
            vocab=None, unk_token=None, max_input_chars_per_word=None,
            continuing_subword_prefix=None
        ))]
        fn new(
            py: Python<'_>,
            vocab: Option<&Bound<'_, PyAny>>,
            unk_token: Option<String>,
            max_input_chars_per_word: Option<usize>,
            continuing_subword_prefix: Option<String>,
        ) -> PyResult<(Self, PyModel)> {
            // Each option given sets the builder's (`fold` over an Option applies it when Some).
            let builder =
                unk_token.into_iter().fold(WordPieceBuilder::new(), WordPieceBuilder::unk_token);
            let builder = max_input_chars_per_word
                .into_iter()
                .fold(builder, WordPieceBuilder::max_input_chars_per_word);
            let builder = continuing_subword_prefix
                .into_iter()
                .fold(builder, WordPieceBuilder::continuing_subword_prefix);
            Ok((PyWordPiece, vocab_model(py, builder, vocab)?))
        }

        /// A WordPiece model from `vocab.txt`, with the constructor's keyword options. The unk
        /// token must be in the file (`FormatError` otherwise).
        #[classmethod]
        #[pyo3(signature = (vocab, **kwargs))]
        fn from_file<'py>(
            cls: &Bound<'py, PyType>,
            vocab: PathBuf,
            kwargs: Option<&Bound<'py, PyDict>>,
        ) -> PyResult<Bound<'py, PyAny>> {
            let py = cls.py();
            let args = PyTuple::new(py, [vocab.into_pyobject(py)?.into_any()])?;
            cls.call(args, kwargs)
        }

        /// Reads `vocab.txt` and returns the dict token → id (the line number, from 0). A
        /// duplicated token or invalid UTF-8 raise `FormatError` naming the file and line.
        #[staticmethod]
        #[pyo3(signature = (vocab))]
        fn read_file(py: Python<'_>, vocab: PathBuf) -> PyResult<HashMap<String, u32>> {
            read_vocab_file::<WordPieceBuilder>(py, vocab)
        }
    }
}

/// WordLevel model, as `tokenizers.models.WordLevel`: each word is looked up whole in the
/// vocabulary; a word that is not in it becomes ``unk_token`` (default ``"<unk>"``), and when
/// the vocabulary lacks ``unk_token`` too, tokenizing it raises (``tokenizers``' message,
/// ``WordLevel error: Missing [UNK] token from the vocabulary``, then the word and the unk
/// token).
///
/// `vocab` is a dict token → id or the path of a `vocab.json`.
#[pyclass(extends = PyModel, module = "tokenmill.models", name = "WordLevel")]
pub struct PyWordLevel;

component_properties! {
    #[pymethods] PyWordLevel, ModelWrapper::WordLevel(|m| m);
    fields {
        unk_token: String;
    }
    methods {
        #[new]
        #[pyo3(signature = (vocab=None, unk_token=None))]
        fn new(
            py: Python<'_>,
            vocab: Option<&Bound<'_, PyAny>>,
            unk_token: Option<String>,
        ) -> PyResult<(Self, PyModel)> {
            let builder =
                unk_token.into_iter().fold(WordLevel::builder(), WordLevelBuilder::unk_token);
            Ok((PyWordLevel, vocab_model(py, builder, vocab)?))
        }

        /// A WordLevel model from `vocab.json` (the unk token need not be in it, as in
        /// `tokenizers`).
        #[classmethod]
        #[pyo3(signature = (vocab, unk_token=None))]
        fn from_file<'py>(
            cls: &Bound<'py, PyType>,
            vocab: PathBuf,
            unk_token: Option<String>,
        ) -> PyResult<Bound<'py, PyAny>> {
            cls.call1((vocab, unk_token))
        }

        /// Reads `vocab.json` and returns the dict token → id. Malformed JSON or an id that is
        /// not a non-negative integer raise `FormatError` naming the file and line.
        #[staticmethod]
        #[pyo3(signature = (vocab))]
        fn read_file(py: Python<'_>, vocab: PathBuf) -> PyResult<HashMap<String, u32>> {
            read_vocab_file::<WordLevelBuilder>(py, vocab)
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use crate::unigram::PyUnigram;
    crate::add_classes!(m, PyModel, PyBPE, PyWordPiece, PyWordLevel, PyUnigram, PyToken);
    Ok(())
}
