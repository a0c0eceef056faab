//! `tokenmill.trainers`: the base `Trainer`, `BpeTrainer`, `WordPieceTrainer` and
//! `WordLevelTrainer` (tokenizers' constructors and attributes; `UnigramTrainer` is in
//! `unigram.rs`), plus test/explain hooks that train straight from word counts.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use tokenmill_core::trainers::{
    AddedToken, BpeTrainResult, BpeTrainer, MergeScore, TrainerWrapper, WordCounts,
    WordLevelTrainer, WordPieceAlgorithm, WordPieceTrainer,
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
                    $arg=$arg_default
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
fn extract_word_counts(counts: &Bound<'_, PyDict>) -> PyResult<WordCounts> {
    let mut words = WordCounts::default();
    for (k, v) in counts.iter() {
        let n: u64 = v.extract()?;
        *words.entry(k.extract::<String>()?).or_insert(0) += n;
    }
    Ok(words)
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
            vocab_size=30000, min_frequency=0, show_progress=true, special_tokens=None
        ))]
        fn new(
            vocab_size: usize,
            min_frequency: u64,
            show_progress: bool,
            special_tokens: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<(Self, PyTrainer)> {
            let trainer = WordLevelTrainer {
                vocab_size,
                min_frequency,
                show_progress,
                special_tokens: extract_special_tokens(special_tokens)?,
                ..Default::default()
            };
            Ok((PyWordLevelTrainer, new_trainer(TrainerWrapper::WordLevelTrainer(trainer))))
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    use crate::unigram::PyUnigramTrainer;
    crate::add_classes!(m, PyTrainer, PyBpeTrainer, PyWordPieceTrainer, PyWordLevelTrainer);
    m.add_class::<PyUnigramTrainer>()?;
    let train_from_word_counts = wrap_pyfunction!(_train_from_word_counts, m)?;
    m.add("_train_bpe_from_word_counts", &train_from_word_counts)?;
    m.add("_train_wordpiece_from_word_counts", train_from_word_counts)?;
    Ok(())
}
