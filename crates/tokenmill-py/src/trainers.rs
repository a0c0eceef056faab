//! `tokenmill.trainers`: the base `Trainer`, `BpeTrainer`, `WordPieceTrainer` and
//! `WordLevelTrainer` (tokenizers' constructors and attributes; `UnigramTrainer` is in
//! `unigram.rs`), plus test/explain hooks that train straight from word counts.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokenmill_core::models::ModelWrapper;
use tokenmill_core::tokenizer::Trainer;
use tokenmill_core::trainers::{
    parse_memory, AddedToken, BpeTrainResult, BpeTrainer, CountTable, MergeScore, TrainerWrapper,
    WordCounts, WordLevelTrainer, WordPieceAlgorithm, WordPieceTrainer,
};

use crate::errors::ToPyResult;
use crate::properties::PyValue;
use crate::shared::{getter, setter, Shared};
use crate::tokenizer::PyAddedToken;

/// Base class of all trainers. A trainer learns a model from a corpus, through
/// `Tokenizer.train(files, trainer)` or `Tokenizer.train_from_iterator(iterator, trainer)`.
#[pyclass(subclass, module = "tokenmill.trainers", name = "Trainer")]
///
/// The trainer is shared (see `shared.rs`), as in `tokenizers`.
#[derive(Clone)]
pub struct PyTrainer {
    pub(crate) inner: Shared<TrainerWrapper>,
}

#[pymethods]
impl PyTrainer {
    /// The pickled state: JSON in `tokenizers`' layout (`{"BpeTrainer": {...}}`).
    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let state = pickle_state(&self.inner.read())
            .map_err(|e| PyValueError::new_err(format!("cannot pickle trainer: {e}")))?;
        Ok(PyBytes::new(py, &state))
    }

    /// Restores a pickled state, in `tokenizers`' layout or tokenmill's older one
    /// (`{"type": "BpeTrainer", ...}`). The state must be of this object's kind of trainer.
    fn __setstate__(&mut self, state: &[u8]) -> PyResult<()> {
        let trainer = from_pickle_state(state)
            .map_err(|e| PyValueError::new_err(format!("cannot unpickle trainer: {e}")))?;
        if std::mem::discriminant(&trainer) != std::mem::discriminant(&*self.inner.read()) {
            return Err(PyValueError::new_err(format!(
                "cannot unpickle trainer: the state is a {}, not a {}",
                trainer_name(&trainer),
                trainer_name(&self.inner.read())
            )));
        }
        self.inner.set(trainer);
        Ok(())
    }

    /// The memory budget of counting and training in bytes (None: half of the RAM). Set it as
    /// bytes or as a size such as ``"2GB"`` or ``"512MiB"``.
    #[getter]
    fn get_max_memory(&self) -> Option<u64> {
        *self.inner.snapshot().memory_options().0
    }
    #[setter]
    fn set_max_memory(&self, value: Option<MemorySize>) -> PyResult<()> {
        self.inner.update(|t| *t.memory_options().0 = value.map(|m| m.0))
    }

    /// The folder where counting spills sorted runs of words (None: the system's temporary
    /// folder).
    #[getter]
    fn get_spill_dir(&self) -> Option<String> {
        let dir = self.inner.snapshot().memory_options().1.clone();
        dir.map(|d| d.to_string_lossy().into_owned())
    }
    #[setter]
    fn set_spill_dir(&self, value: Option<PathBuf>) -> PyResult<()> {
        self.inner.update(|t| *t.memory_options().1 = value)
    }

    /// Trains a model of this trainer's kind (with the model's default options) on word counts
    /// from :func:`tokenmill.trainers.count_words`; returns the model. See also
    /// ``Tokenizer.train_from_counts``.
    fn train_from_counts(
        &self,
        py: Python<'_>,
        counts: PyRef<'_, PyWordCounts>,
    ) -> PyResult<PyObject> {
        let mut trainer = self.inner.snapshot();
        let mut model = default_model(&trainer);
        trainer.set_words(counts.table.clone());
        py.allow_threads(|| crate::memory::for_training(|| Trainer::train(&trainer, &mut model)))
            .py()?;
        self.inner.set(trainer);
        crate::models::to_python(py, model)
    }

    /// `tokenizers`' repr: `BpeTrainer(BpeTrainer(min_frequency=0, vocab_size=30000, ...))`.
    fn __repr__(&self) -> PyResult<String> {
        crate::repr::repr(&TokenizersLayout(&self.inner.read()))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `tokenizers`' str: the repr with at most 5 elements per container.
    fn __str__(&self) -> PyResult<String> {
        crate::repr::to_str(&TokenizersLayout(&self.inner.read()))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// A trainer in `tokenizers`' serialized layout, which its pickles and reprs show:
/// externally tagged (`{"BpeTrainer": {...}}`), the BPE options (also inside a
/// WordPieceTrainer's `bpe_trainer`) with `"progress_format": "Indicatif"` after
/// `show_progress`. A WordPieceTrainer's tokenmill-only `algorithm` is written only when it is
/// not the default.
struct TokenizersLayout<'a>(&'a TrainerWrapper);

impl Serialize for TokenizersLayout<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            TrainerWrapper::BpeTrainer(t) => serializer.serialize_newtype_variant(
                "TrainerWrapper",
                0,
                "BpeTrainer",
                &BpeLayout(t),
            ),
            TrainerWrapper::WordPieceTrainer(t) => serializer.serialize_newtype_variant(
                "TrainerWrapper",
                1,
                "WordPieceTrainer",
                &WordPieceLayout(t),
            ),
            // Field for field `tokenizers`' layout.
            TrainerWrapper::WordLevelTrainer(t) => {
                serializer.serialize_newtype_variant("TrainerWrapper", 2, "WordLevelTrainer", t)
            }
            TrainerWrapper::UnigramTrainer(t) => {
                serializer.serialize_newtype_variant("TrainerWrapper", 3, "UnigramTrainer", t)
            }
        }
    }
}

struct BpeLayout<'a>(&'a BpeTrainer);

impl Serialize for BpeLayout<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// `tokenizers`' `ProgressFormat::Indicatif` (a unit variant: bare in reprs).
        struct Indicatif;
        impl Serialize for Indicatif {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_unit_variant("ProgressFormat", 0, "Indicatif")
            }
        }
        let t = self.0;
        let mut s = serializer.serialize_struct("BpeTrainer", 11)?;
        s.serialize_field("min_frequency", &t.min_frequency)?;
        s.serialize_field("vocab_size", &t.vocab_size)?;
        s.serialize_field("show_progress", &t.show_progress)?;
        s.serialize_field("progress_format", &Indicatif)?;
        s.serialize_field("special_tokens", &t.special_tokens)?;
        s.serialize_field("limit_alphabet", &t.limit_alphabet)?;
        s.serialize_field("initial_alphabet", &t.initial_alphabet)?;
        s.serialize_field("continuing_subword_prefix", &t.continuing_subword_prefix)?;
        s.serialize_field("end_of_word_suffix", &t.end_of_word_suffix)?;
        s.serialize_field("max_token_length", &t.max_token_length)?;
        s.serialize_field("words", &t.words)?;
        if t.max_memory.is_some() {
            s.serialize_field("max_memory", &t.max_memory)?;
        }
        if t.spill_dir.is_some() {
            s.serialize_field("spill_dir", &t.spill_dir)?;
        }
        s.end()
    }
}

struct WordPieceLayout<'a>(&'a WordPieceTrainer);

impl Serialize for WordPieceLayout<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let default_algorithm = t.algorithm == WordPieceAlgorithm::default();
        let mut s = serializer
            .serialize_struct("WordPieceTrainer", if default_algorithm { 1 } else { 2 })?;
        s.serialize_field("bpe_trainer", &BpeLayout(&t.bpe_trainer))?;
        if !default_algorithm {
            s.serialize_field("algorithm", &t.algorithm)?;
        }
        s.end()
    }
}

/// The Python class name of a trainer ("BpeTrainer").
fn trainer_name(trainer: &TrainerWrapper) -> &'static str {
    match trainer {
        TrainerWrapper::BpeTrainer(_) => "BpeTrainer",
        TrainerWrapper::WordPieceTrainer(_) => "WordPieceTrainer",
        TrainerWrapper::WordLevelTrainer(_) => "WordLevelTrainer",
        TrainerWrapper::UnigramTrainer(_) => "UnigramTrainer",
    }
}

fn pickle_state(trainer: &TrainerWrapper) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&TokenizersLayout(trainer))
}

/// Reads a pickled trainer in `tokenizers`' layout or in tokenmill's internally tagged one.
fn from_pickle_state(state: &[u8]) -> serde_json::Result<TrainerWrapper> {
    use serde_json::Value;
    let mut value: Value = serde_json::from_slice(state)?;
    if let Value::Object(outer) = &mut value {
        let name = outer
            .keys()
            .next()
            .filter(|_| outer.len() == 1 && !outer.contains_key("type"))
            .cloned();
        if let Some(name) = name {
            if let Some(Value::Object(mut fields)) = outer.remove(&name) {
                fields.insert("type".into(), Value::String(name));
                value = Value::Object(fields);
            }
        }
    }
    serde_json::from_value(value)
}

/// A model of the kind `trainer` trains, with default options.
fn default_model(trainer: &TrainerWrapper) -> ModelWrapper {
    use tokenmill_core::models::{bpe::BPE, unigram::Unigram, wordlevel::WordLevel, WordPiece};
    match trainer {
        TrainerWrapper::BpeTrainer(_) => BPE::default().into(),
        TrainerWrapper::WordPieceTrainer(_) => WordPiece::default().into(),
        TrainerWrapper::WordLevelTrainer(_) => WordLevel::default().into(),
        TrainerWrapper::UnigramTrainer(_) => Unigram::default().into(),
    }
}

/// A memory size from Python: an int (bytes) or a str such as ``"2GB"`` or ``"512MiB"``.
pub(crate) struct MemorySize(pub u64);

impl<'py> FromPyObject<'py> for MemorySize {
    fn extract_bound(value: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(text) = value.extract::<String>() {
            return Ok(MemorySize(parse_memory(&text).py()?));
        }
        match value.extract::<u64>() {
            Ok(0) | Err(_) => Err(crate::errors::InvalidArgumentError::new_err(format!(
                "max_memory must be a positive number of bytes or a size such as \"2GB\", got {}",
                value.repr().map(|r| r.to_string()).unwrap_or_default()
            ))),
            Ok(n) => Ok(MemorySize(n)),
        }
    }
}

/// Builds the Python object of the right subclass for a trainer.
pub(crate) fn to_python(py: Python<'_>, wrapper: TrainerWrapper) -> PyResult<PyObject> {
    let shared = Shared::new(wrapper);
    let base = PyClassInitializer::from(PyTrainer { inner: shared.clone() });
    shared.with(|w| {
        Ok(match w {
            TrainerWrapper::BpeTrainer(_) => {
                Py::new(py, base.add_subclass(PyBpeTrainer))?.into_any()
            }
            TrainerWrapper::WordPieceTrainer(_) => {
                Py::new(py, base.add_subclass(PyWordPieceTrainer))?.into_any()
            }
            TrainerWrapper::WordLevelTrainer(_) => {
                Py::new(py, base.add_subclass(PyWordLevelTrainer))?.into_any()
            }
            TrainerWrapper::UnigramTrainer(_) => {
                Py::new(py, base.add_subclass(crate::unigram::PyUnigramTrainer))?.into_any()
            }
        })
    })
}

/// The base-class value of a new trainer object.
pub(crate) fn new_trainer(trainer: impl Into<TrainerWrapper>) -> PyTrainer {
    PyTrainer { inner: Shared::new(trainer.into()) }
}

/// Special tokens given as `str` or as objects with a `.content` (e.g. `AddedToken`). As in
/// `tokenizers`, a given `AddedToken` is marked special (the caller's object changes too), so
/// its `normalized`, unless set explicitly, becomes False. None gives no tokens.
pub(crate) fn extract_special_tokens(
    tokens: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<AddedToken>> {
    let mut out = Vec::new();
    let Some(tokens) = tokens else { return Ok(out) };
    for item in tokens.try_iter()? {
        let item = item?;
        if let Ok(s) = item.extract::<String>() {
            out.push(AddedToken::from(s, true));
        } else if let Ok(content) = item.getattr("content").and_then(|c| c.extract::<String>()) {
            if let Ok(token) = item.downcast::<PyAddedToken>() {
                token.setattr("special", true)?;
            }
            let flag = |name: &str, default: bool| -> bool {
                item.getattr(name).and_then(|v| v.extract::<bool>()).unwrap_or(default)
            };
            out.push(AddedToken {
                content,
                single_word: flag("single_word", false),
                lstrip: flag("lstrip", false),
                rstrip: flag("rstrip", false),
                normalized: flag("normalized", false),
                special: true, // a trainer's tokens are special, as in tokenizers
            });
        } else {
            return Err(PyTypeError::new_err("special_tokens must be a list of str or AddedToken"));
        }
    }
    Ok(out)
}

/// A trainer's special tokens as `AddedToken` objects (what `tokenizers` returns).
pub(crate) fn special_tokens_to_python(tokens: &[AddedToken]) -> Vec<PyAddedToken> {
    tokens.iter().cloned().map(PyAddedToken::from).collect()
}

/// Declares a trainer class's `#[pymethods]` (through `component_properties!`): `methods` as
/// written, the `special_tokens` property, and a getter and a setter for each listed option of
/// the core trainer the object holds (`$options` of the `$Variant` value `$t` of its
/// `TrainerWrapper`).
macro_rules! trainer_methods {
    (
        $Class:ident, $Variant:ident(|$t:ident| $options:expr),
        options { $($fields:tt)* }
        methods { $($methods:tt)* }
    ) => {
        $crate::properties::component_properties! {
            #[pymethods] $Class, TrainerWrapper::$Variant(|$t| $options);
            fields { $($fields)* }
            methods {
                $($methods)*

                /// The special tokens, as `AddedToken` objects.
                #[getter]
                fn get_special_tokens(self_: PyRef<'_, Self>) -> PyResult<Vec<PyAddedToken>> {
                    use $crate::trainers::special_tokens_to_python;
                    getter!(self_, TrainerWrapper::$Variant, |$t| {
                        special_tokens_to_python(&$options.special_tokens)
                    })
                }
                #[setter]
                fn set_special_tokens(
                    self_: PyRef<'_, Self>,
                    value: &Bound<'_, PyAny>,
                ) -> PyResult<()> {
                    let tokens = $crate::trainers::extract_special_tokens(Some(value))?;
                    setter!(self_, TrainerWrapper::$Variant, |$t| $options.special_tokens = tokens)
                }
            }
        }
    };
}

pub(crate) use trainer_methods;

/// `trainer_methods!` with the options BpeTrainer and WordPieceTrainer share (a
/// WordPieceTrainer keeps them in its `bpe_trainer`), declared once, then `$extra`; and the
/// constructor, whose arguments are those options (with `continuing_subword_prefix` defaulting
/// to `$prefix`) then `$arg`: it builds the shared options as `$bpe` and the trainer as
/// `$build`.
macro_rules! bpe_trainer_methods {
    (
        $Class:ident, $Variant:ident(|$t:ident| $options:expr),
        new(prefix = ($($prefix:tt)*), $arg:ident: $arg_ty:ty = $arg_default:tt)
            |$bpe:ident| $build:expr,
        options { $($extra:tt)* }
        methods { $($methods:tt)* }
    ) => {
        trainer_methods! {
            $Class, $Variant(|$t| $options),
            options {
                vocab_size: usize;
                min_frequency: u64;
                show_progress: bool;
                limit_alphabet: Option<usize>;
                initial_alphabet: Vec<String>;
                continuing_subword_prefix: Option<String>;
                end_of_word_suffix: Option<String>;
                $($extra)*
            }
            methods {
                #[new]
                #[pyo3(signature = (
                    vocab_size=30000, min_frequency=0, show_progress=true, special_tokens=None,
                    limit_alphabet=None, initial_alphabet=None,
                    continuing_subword_prefix=$($prefix)*, end_of_word_suffix=None,
                    $arg=$arg_default, *, max_memory=None, spill_dir=None
                ))]
                #[allow(clippy::too_many_arguments)] // tokenizers' keyword arguments
                fn new(
                    vocab_size: usize,
                    min_frequency: u64,
                    show_progress: bool,
                    special_tokens: Option<&Bound<'_, PyAny>>,
                    limit_alphabet: Option<usize>,
                    initial_alphabet: Option<Vec<String>>,
                    continuing_subword_prefix: Option<String>,
                    end_of_word_suffix: Option<String>,
                    $arg: $arg_ty,
                    max_memory: Option<$crate::trainers::MemorySize>,
                    spill_dir: Option<std::path::PathBuf>,
                ) -> PyResult<(Self, PyTrainer)> {
                    let $bpe = BpeTrainer {
                        vocab_size,
                        min_frequency,
                        show_progress,
                        special_tokens: extract_special_tokens(special_tokens)?,
                        limit_alphabet,
                        initial_alphabet: PyValue::from_python(
                            initial_alphabet.unwrap_or_default(),
                        )?,
                        continuing_subword_prefix,
                        end_of_word_suffix,
                        max_memory: max_memory.map(|m| m.0),
                        spill_dir,
                        ..Default::default()
                    };
                    Ok(($Class, new_trainer($build)))
                }

                $($methods)*
            }
        }
    };
}

/// Trainer capable of training a BPE model.
///
/// Args:
///     vocab_size (int): the size of the final vocabulary, special tokens and alphabet included.
///     min_frequency (int): the minimum count a pair must have to be merged.
///     show_progress (bool): whether to show progress bars (only on a terminal).
///     special_tokens (list of str or AddedToken): tokens that get the first ids, in order.
///     limit_alphabet (int, optional): keep at most this many (the most frequent) characters.
///     initial_alphabet (list of str): characters always in the alphabet (first char of each).
///     continuing_subword_prefix (str, optional): prefix of symbols that do not start a word.
///     end_of_word_suffix (str, optional): suffix of symbols that end a word.
///     max_token_length (int, optional): limit on the length of merged tokens.
///
/// Merges: the pair with the highest count wins; ties go to the lowest pair of ids. Ids go to
/// the special tokens, then the alphabet in code-point order, then merges in order.
#[pyclass(extends = PyTrainer, module = "tokenmill.trainers", name = "BpeTrainer")]
pub struct PyBpeTrainer;

bpe_trainer_methods! {
    PyBpeTrainer, BpeTrainer(|t| t),
    new(prefix = (None), max_token_length: Option<usize> = None) |options| {
        TrainerWrapper::BpeTrainer(BpeTrainer { max_token_length, ..options })
    },
    options {
        max_token_length: Option<usize>;
    }
    methods {
        /// The merges learned by the last training run, in order, as `(left, right, count)`:
        /// `count` is how often the pair occurred when it was merged (explains how the model
        /// was trained). Empty before training.
        #[getter]
        fn get_merge_history(self_: PyRef<'_, Self>) -> PyResult<Vec<(String, String, u64)>> {
            getter!(self_, TrainerWrapper::BpeTrainer, |t| t.merge_history.get())
        }
    }
}

/// The trained data as a dict: `vocab` (token → id), `merges` (list of pairs, by rank),
/// `history` (every merge step as (left, right, count)), `special_tokens` (their text).
fn result_to_dict<'py>(py: Python<'py>, r: &BpeTrainResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let vocab = PyDict::new(py);
    for (i, t) in r.vocab.iter().enumerate() {
        vocab.set_item(t, i)?;
    }
    d.set_item("vocab", vocab)?;
    let merges = PyList::empty(py);
    for (a, b) in &r.merges {
        merges.append(PyTuple::new(py, [a, b])?)?;
    }
    d.set_item("merges", merges)?;
    d.set_item("history", r.history_texts())?;
    d.set_item("special_tokens", special_token_texts(&r.special_tokens))?;
    Ok(d)
}

/// Trains `trainer` (a BpeTrainer or a WordPieceTrainer) directly from word counts
/// `{word: count}` and returns the trained data. Used by tests and to explain training without
/// a pipeline; registered as `_train_bpe_from_word_counts` and
/// `_train_wordpiece_from_word_counts`. `form_order` (tests only) gives the ids of `##x` /
/// `x</w>` forms in that order instead of code-point order, to replay a `tokenizers` run.
///
/// A BpeTrainer gives the dict of `result_to_dict` and keeps the merge history; a
/// WordPieceTrainer gives `{"vocab": {token: id}, "special_tokens": [...]}`.
#[pyfunction]
#[pyo3(signature = (trainer, counts, form_order=None))]
fn _train_from_word_counts<'py>(
    py: Python<'py>,
    trainer: PyRef<'py, PyTrainer>,
    counts: &Bound<'py, PyDict>,
    form_order: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let words = extract_word_counts(counts)?;
    let form_order = form_order.unwrap_or_default();
    // A WordPieceTrainer records its merge history itself: it trains as shared.
    if let TrainerWrapper::WordPieceTrainer(wordpiece) = &*trainer.inner.read() {
        let result = py.allow_threads(|| wordpiece.train_from_counts(&words, &form_order)).py()?;
        let d = PyDict::new(py);
        d.set_item("vocab", result.vocab_map())?;
        d.set_item("special_tokens", special_token_texts(&result.special_tokens))?;
        return Ok(d);
    }
    let TrainerWrapper::BpeTrainer(bpe) = trainer.inner.snapshot() else {
        return Err(PyTypeError::new_err("trainer must be a BpeTrainer or a WordPieceTrainer"));
    };
    let result = py.allow_threads(|| bpe.train_from_counts(&words, &form_order)).py()?;
    let history = result.history_texts();
    trainer.inner.update(|t| {
        if let TrainerWrapper::BpeTrainer(t) = t {
            t.merge_history.set(history)
        }
    })?;
    result_to_dict(py, &result)
}

/// The text of each special token.
fn special_token_texts(tokens: &[AddedToken]) -> Vec<String> {
    tokens.iter().map(|t| t.content.clone()).collect()
}

/// `{word: count}` as word counts (repeated words add up).
fn extract_word_counts(counts: &Bound<'_, PyDict>) -> PyResult<CountTable> {
    let mut words = WordCounts::default();
    for (k, v) in counts.iter() {
        let n: u64 = v.extract()?;
        let c = words.entry(k.extract::<String>()?).or_insert(0);
        *c = c.saturating_add(n);
    }
    Ok(CountTable::from_map(words))
}

/// The words of a `WordCounts`, one at a time (no list of them all).
#[pyclass(module = "tokenmill.trainers", name = "WordCountsIterator", frozen)]
pub struct PyWordCountsIter {
    table: CountTable,
    next: AtomicUsize,
}

#[pymethods]
impl PyWordCountsIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self) -> Option<&str> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.table.len()).then(|| self.table.word(i))
    }
}

/// Words and how often they occur, counted by :func:`tokenmill.trainers.count_words` (exact,
/// within a memory budget), held compactly and sorted by the words' bytes.
///
/// ``len(counts)`` distinct words; ``counts[word]`` (0 when not seen); ``word in counts``;
/// iteration and ``items()`` in increasing byte order of the words; ``most_common(n)`` by
/// decreasing count, then increasing bytes; ``total()``; ``a + b`` (and ``+=``) adds counts
/// exactly; ``save(path)`` / ``WordCounts.load(path)``; pickling. ``WordCounts({"a": 3})``
/// builds counts from a mapping.
#[pyclass(module = "tokenmill.trainers", name = "WordCounts", frozen)]
pub struct PyWordCounts {
    pub(crate) table: CountTable,
}

impl PyWordCounts {
    pub(crate) fn new(table: CountTable) -> Self {
        PyWordCounts { table }
    }
}

#[pymethods]
impl PyWordCounts {
    #[new]
    #[pyo3(signature = (counts=None))]
    fn py_new(counts: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Ok(PyWordCounts::new(match counts {
            Some(counts) => extract_word_counts(counts)?,
            None => CountTable::default(),
        }))
    }

    fn __len__(&self) -> usize {
        self.table.len()
    }

    fn __getitem__(&self, word: &str) -> u64 {
        self.table.get(word).unwrap_or(0)
    }

    fn __contains__(&self, word: &str) -> bool {
        self.table.get(word).is_some()
    }

    fn __iter__(&self) -> PyWordCountsIter {
        PyWordCountsIter { table: self.table.clone(), next: AtomicUsize::new(0) }
    }

    /// ``(word, count)`` pairs in increasing byte order of the words.
    fn items(&self) -> Vec<(&str, u64)> {
        self.table.iter().collect()
    }

    /// The ``n`` most frequent words (all when None) as ``(word, count)``, by decreasing count,
    /// equal counts in increasing byte order of the words.
    #[pyo3(signature = (n=None))]
    fn most_common(&self, n: Option<usize>) -> Vec<(&str, u64)> {
        let mut order: Vec<usize> = (0..self.table.len()).collect();
        // The table is in byte order and the sort is stable: equal counts keep it.
        order.sort_by_key(|&i| std::cmp::Reverse(self.table.count(i)));
        order.truncate(n.unwrap_or(usize::MAX));
        order.into_iter().map(|i| (self.table.word(i), self.table.count(i))).collect()
    }

    /// The sum of all counts (saturating at 2**64 - 1).
    fn total(&self) -> u64 {
        self.table.total()
    }

    fn __add__(&self, py: Python<'_>, other: PyRef<'_, PyWordCounts>) -> Self {
        let (a, b) = (&self.table, &other.table);
        PyWordCounts::new(py.allow_threads(|| a.merge(b)))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.downcast::<PyWordCounts>().is_ok_and(|o| o.get().table == self.table)
    }

    fn __repr__(&self) -> String {
        format!("WordCounts({} words, total {})", self.table.len(), self.table.total())
    }

    /// Saves the counts to ``path`` atomically (the umask's permissions), in tokenmill's
    /// word-counts format (docs: "Memory budgets and word counts").
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.allow_threads(|| self.table.save(&path)).py()
    }

    /// Loads counts saved by :meth:`save`; a file of another kind, truncated or corrupt raises
    /// ``FormatError`` naming it.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        Ok(PyWordCounts::new(py.allow_threads(|| CountTable::load(&path)).py()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(PyObject, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let restore = slf.get_type().getattr("_from_bytes")?.unbind();
        Ok((restore, (PyBytes::new(py, &slf.get().table.to_bytes()),)))
    }

    #[staticmethod]
    fn _from_bytes(bytes: &[u8]) -> PyResult<Self> {
        let source = std::path::Path::new("<pickled WordCounts>");
        Ok(PyWordCounts::new(CountTable::from_bytes(bytes, source).py()?))
    }
}

/// Trainer capable of training a WordPiece model (`tokenizers.trainers.WordPieceTrainer`).
///
/// Args:
///     vocab_size (int): the size of the final vocabulary, special tokens and alphabet included.
///     min_frequency (int): the minimum count a pair must have to be merged.
///     show_progress (bool): whether to show progress bars (only on a terminal).
///     special_tokens (list of str or AddedToken): tokens that get the first ids, in order.
///     limit_alphabet (int, optional): keep at most this many (the most frequent) characters.
///     initial_alphabet (list of str): characters always in the alphabet (first char of each).
///     continuing_subword_prefix (str, optional): prefix of tokens that continue a word (``##``).
///     end_of_word_suffix (str, optional): suffix of tokens that end a word.
///     algorithm (str): ``"bpe"`` (default): merge the most frequent pair, the same vocabulary
///         as ``tokenizers``' WordPieceTrainer (ties go to the lowest pair of ids);
///         ``"likelihood"``: classic WordPiece, merge the pair with the highest
///         ``count(ab) / (count(a) * count(b))`` (compared exactly; ties go to the lowest pair
///         of ids; pairs seen fewer than ``min_frequency`` times are never merged).
///
/// After training, ``merge_history`` lists every merge as ``(left, right, count)`` (``"bpe"``)
/// or ``(left, right, score)`` (``"likelihood"``).
#[pyclass(extends = PyTrainer, module = "tokenmill.trainers", name = "WordPieceTrainer")]
pub struct PyWordPieceTrainer;

fn merge_history_to_python(
    py: Python<'_>,
    history: Vec<(String, String, MergeScore)>,
) -> PyResult<Vec<PyObject>> {
    history
        .into_iter()
        .map(|(a, b, score)| {
            Ok(match score {
                MergeScore::Count(n) => (a, b, n).into_pyobject(py)?.into_any().unbind(),
                MergeScore::Likelihood(s) => (a, b, s).into_pyobject(py)?.into_any().unbind(),
            })
        })
        .collect()
}

bpe_trainer_methods! {
    PyWordPieceTrainer, WordPieceTrainer(|t| t.bpe_trainer),
    new(prefix = (Some("##".to_string())), algorithm: &str = "bpe") |bpe_trainer| {
        let algorithm: WordPieceAlgorithm = algorithm.parse().py()?;
        TrainerWrapper::WordPieceTrainer(WordPieceTrainer {
            bpe_trainer,
            algorithm,
            ..Default::default()
        })
    },
    options {}
    methods {
        /// ``"bpe"`` or ``"likelihood"`` (see the class docs).
        #[getter]
        fn get_algorithm(self_: PyRef<'_, Self>) -> PyResult<&'static str> {
            getter!(self_, TrainerWrapper::WordPieceTrainer, |t| t.algorithm.name())
        }
        #[setter]
        fn set_algorithm(self_: PyRef<'_, Self>, value: &str) -> PyResult<()> {
            let algorithm: WordPieceAlgorithm = value.parse().py()?;
            setter!(self_, TrainerWrapper::WordPieceTrainer, |t| t.algorithm = algorithm)
        }
        /// The merges of the last training: ``(left, right, count)`` or ``(left, right,
        /// score)``.
        #[getter]
        fn get_merge_history(self_: PyRef<'_, Self>) -> PyResult<Vec<PyObject>> {
            let history = getter!(self_, TrainerWrapper::WordPieceTrainer, |t| {
                t.merge_history.get()
            })?;
            merge_history_to_python(self_.py(), history)
        }
    }
}

/// Trainer capable of training a WordLevel model (`tokenizers.trainers.WordLevelTrainer`).
///
/// Args:
///     vocab_size (int): the size of the final vocabulary, special tokens included.
///     min_frequency (int): the minimum count a word must have to be in the vocabulary.
///     show_progress (bool): whether to show progress bars (only on a terminal).
///     special_tokens (list of str or AddedToken): tokens that get the first ids, in order.
///
/// The vocabulary and ids are those of ``tokenizers``: the special tokens, then the words by
/// decreasing count, **words of equal count in increasing byte (code-point) order**, cut at
/// ``vocab_size``. As in ``tokenizers``, a special token that is also a corpus word keeps the
/// word's (later) id and leaves its own id unused.
///
/// Example::
///
///     >>> tokenizer = Tokenizer(WordLevel(unk_token="<unk>"))
///     >>> tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
///     >>> trainer = WordLevelTrainer(vocab_size=10000, special_tokens=["<unk>"])
///     >>> tokenizer.train(["corpus.txt"], trainer)
#[pyclass(extends = PyTrainer, module = "tokenmill.trainers", name = "WordLevelTrainer")]
pub struct PyWordLevelTrainer;

trainer_methods! {
    PyWordLevelTrainer, WordLevelTrainer(|t| t),
    options {
        vocab_size: usize;
        min_frequency: u64;
        show_progress: bool;
    }
    methods {
        #[new]
        #[pyo3(signature = (
            vocab_size=30000, min_frequency=0, show_progress=true, special_tokens=None, *,
            max_memory=None, spill_dir=None
        ))]
        fn new(
            vocab_size: usize,
            min_frequency: u64,
            show_progress: bool,
            special_tokens: Option<&Bound<'_, PyAny>>,
            max_memory: Option<MemorySize>,
            spill_dir: Option<PathBuf>,
        ) -> PyResult<(Self, PyTrainer)> {
            let trainer = WordLevelTrainer {
                vocab_size,
                min_frequency,
                show_progress,
                special_tokens: extract_special_tokens(special_tokens)?,
                max_memory: max_memory.map(|m| m.0),
                spill_dir,
                ..Default::default()
            };
            Ok((PyWordLevelTrainer, new_trainer(TrainerWrapper::WordLevelTrainer(trainer))))
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use crate::unigram::PyUnigramTrainer;
    crate::add_classes!(m, PyTrainer, PyBpeTrainer, PyWordPieceTrainer, PyWordLevelTrainer);
    m.add_class::<PyWordCounts>()?;
    m.add_class::<PyUnigramTrainer>()?;
    let train_from_word_counts = wrap_pyfunction!(_train_from_word_counts, m)?;
    m.add("_train_bpe_from_word_counts", &train_from_word_counts)?;
    m.add("_train_wordpiece_from_word_counts", train_from_word_counts)?;
    Ok(())
}
