//! `tokenmill.Tokenizer` and `tokenmill.AddedToken`, with the API of `tokenizers.Tokenizer`.
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use macro_rules_attribute::apply;
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyIterator, PyList, PyString, PyTuple};
use tokenmill_core::tokenizer::{
    AddedToken, EncodeInput, EncodeOptions, Ids, OffsetType, Output, StoredBatch, StoredEncoding,
    Tokenizer,
};
use tokenmill_core::trainers::progress::Progress;
use tokenmill_core::trainers::{Budget, TrainerWrapper};
use tokenmill_core::utils::padding::{PaddingDirection, PaddingParams, PaddingStrategy};
use tokenmill_core::utils::parallel::drop_all;
use tokenmill_core::utils::truncation::{
    TruncationDirection, TruncationParams, TruncationStrategy,
};

use crate::encoding::{PyEncoding, PyEncodingBatch};
use crate::errors::{input_type_error, InvalidArgumentError, ToPyResult};
use crate::foreign::{self, Adopted};
use crate::input_texts::{
    as_str, batch_inputs, hold_batch, hold_texts, str_text, type_name, HeldInput, HeldSequence,
    OwnedInput,
};
use crate::model_inputs::{
    check_fields, extract_ids, non_negative, padding_from_dict, stack, stack_values,
    stacked_into_arrays, truncation_from_dict,
};
use crate::off_loop::run_in_executor;
use crate::stage::stage_properties;
use crate::tokenizer_state::{Attached, Pipeline, State, TokenizerState};
use crate::{models, trainers};

/// A token added to a :class:`Tokenizer` on top of its model's vocabulary.
///
/// Args:
///     content (str): the text of the token.
///     single_word (bool, default False): only match when not inside a word.
///     lstrip (bool, default False): also take the whitespace on the left of a match.
///     rstrip (bool, default False): also take the whitespace on the right of a match.
///     normalized (bool, default True, False for special tokens): match against the
///         normalized text rather than the raw input.
///     special (bool, default False): a special token (skipped when decoding with
///         ``skip_special_tokens=True``).
#[pyclass(module = "tokenmill", name = "AddedToken")]
#[derive(Clone)]
pub struct PyAddedToken {
    /// The text of the token.
    #[pyo3(get, set)]
    content: String,
    /// Whether the token is special.
    #[pyo3(get, set)]
    special: bool,
    single_word: Option<bool>,
    lstrip: Option<bool>,
    rstrip: Option<bool>,
    normalized: Option<bool>,
}

impl PyAddedToken {
    /// The core token: options left unset take the defaults for a (non-)special token.
    fn to_core(&self) -> AddedToken {
        let mut token = AddedToken::from(self.content.clone(), self.special);
        if let Some(v) = self.single_word {
            token.single_word = v;
        }
        if let Some(v) = self.lstrip {
            token.lstrip = v;
        }
        if let Some(v) = self.rstrip {
            token.rstrip = v;
        }
        if let Some(v) = self.normalized {
            token.normalized = v;
        }
        token
    }
}

impl From<AddedToken> for PyAddedToken {
    fn from(t: AddedToken) -> Self {
        PyAddedToken {
            content: t.content,
            special: t.special,
            single_word: Some(t.single_word),
            lstrip: Some(t.lstrip),
            rstrip: Some(t.rstrip),
            normalized: Some(t.normalized),
        }
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

#[pymethods]
impl PyAddedToken {
    #[new]
    #[pyo3(signature = (
        content = None, single_word = None, lstrip = None, rstrip = None, normalized = None, special
        = None
    ))]
    fn new(
        content: Option<String>,
        single_word: Option<bool>,
        lstrip: Option<bool>,
        rstrip: Option<bool>,
        normalized: Option<bool>,
        special: Option<bool>,
    ) -> Self {
        PyAddedToken {
            content: content.unwrap_or_default(),
            special: special.unwrap_or(false),
            single_word,
            lstrip,
            rstrip,
            normalized,
        }
    }

    /// Whether the token only matches outside words.
    #[getter]
    fn single_word(&self) -> bool {
        self.to_core().single_word
    }
    /// Whether the token takes the whitespace on its left.
    #[getter]
    fn lstrip(&self) -> bool {
        self.to_core().lstrip
    }
    /// Whether the token takes the whitespace on its right.
    #[getter]
    fn rstrip(&self) -> bool {
        self.to_core().rstrip
    }
    /// Whether the token matches the normalized text.
    #[getter]
    fn normalized(&self) -> bool {
        self.to_core().normalized
    }

    fn __getstate__(&self) -> (String, bool, bool, bool, bool, bool) {
        let t = self.to_core();
        (t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
    }
    fn __setstate__(&mut self, state: (String, bool, bool, bool, bool, bool)) {
        let (content, single_word, lstrip, rstrip, normalized, special) = state;
        *self = PyAddedToken {
            content,
            special,
            single_word: Some(single_word),
            lstrip: Some(lstrip),
            rstrip: Some(rstrip),
            normalized: Some(normalized),
        };
    }
    fn __str__(&self) -> &str {
        &self.content
    }
    fn __repr__(&self) -> String {
        let t = self.to_core();
        format!(
            "AddedToken({:?}, rstrip={}, lstrip={}, single_word={}, normalized={}, special={})",
            t.content,
            py_bool(t.rstrip),
            py_bool(t.lstrip),
            py_bool(t.single_word),
            py_bool(t.normalized),
            py_bool(t.special)
        )
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.to_core() == other.to_core()
    }
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.content.hash(&mut h);
        h.finish()
    }
}

/// A Python str as a Rust String (see `input_texts::str_text` for the errors).
/// The copy is made fallibly: a str too long to copy is a `MemoryError` (not an abort).
pub(crate) fn extract_text(ob: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = str_text(as_str(ob)?)?;
    let mut owned = String::new();
    owned.try_reserve_exact(text.len()).map_err(|_| {
        PyMemoryError::new_err(format!(
            "a text of {} bytes cannot be copied: more than can be allocated",
            text.len()
        ))
    })?;
    owned.push_str(text);
    Ok(owned)
}

/// A list of str or AddedToken; `special` is what plain strings get. Adding special tokens marks
/// the caller's AddedToken objects special, as `tokenizers` does (so one whose `normalized` was
/// left unset reads `normalized=False` afterwards).
fn extract_added_tokens(tokens: &Bound<'_, PyList>, special: bool) -> PyResult<Vec<AddedToken>> {
    tokens
        .iter()
        .map(|t| {
            if t.downcast::<PyString>().is_ok() {
                return Ok(AddedToken::from(extract_text(&t)?, special));
            }
            let t = foreign::adopt::<PyAddedToken>(&t)?;
            if let Ok(token) = t.downcast::<PyAddedToken>() {
                if special {
                    token.borrow_mut().special = true;
                }
                Ok(token.borrow().to_core())
            } else {
                Err(input_type_error(format!(
                    "expected a list of str or AddedToken, got an item of type {}",
                    type_name(&t)
                )))
            }
        })
        .collect()
}

/// A tokenization pipeline: normalizer → pre-tokenizer → model → post-processor, and a decoder
/// for the way back. Same API as ``tokenizers.Tokenizer``.
///
/// Args:
///     model (:class:`tokenmill.models.Model`): the model that turns words into tokens.
///
/// Components are shared with the Python objects that hold them (``tok.model.dropout = 0.1``
/// changes this tokenizer), as in ``tokenizers``. The setters, ``Tokenizer(model)``,
/// ``add_tokens`` and the ``trainer`` arguments also take Hugging Face ``tokenizers`` objects,
/// converted through their JSON state (copies, not shared; see ``foreign.rs``). Instances take
/// attributes, as ``tokenizers`` ones do (transformers' CLIP tokenizer wraps ``decode`` so).
#[pyclass(module = "tokenmill", name = "Tokenizer", subclass, weakref, dict, frozen)]
pub struct PyTokenizer {
    /// What encode / decode / train run on: snapshots of the core pipeline over copies of the
    /// shared components, brought up to date when one of them changed, so that no lock is
    /// taken per token; any method may run while another thread changes the tokenizer (see
    /// `tokenizer_state.rs`). Read it through `pipeline` or `with_pipeline`, change it through
    /// `update`.
    state: TokenizerState,
}

impl PyTokenizer {
    pub(crate) fn from_core(tokenizer: Tokenizer) -> Self {
        PyTokenizer { state: TokenizerState::new(State::new(tokenizer)) }
    }

    /// Where the pipeline and its shared components are kept.
    pub(crate) fn state(&self) -> &TokenizerState {
        &self.state
    }

    /// The up-to-date pipeline (a snapshot: later changes do not show in it).
    pub(crate) fn pipeline(&self, py: Python<'_>) -> PyResult<Pipeline> {
        self.state.read(py)
    }

    /// Runs `f` on the up-to-date pipeline with the GIL released.
    pub(crate) fn with_pipeline<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Tokenizer) -> R + Send,
    ) -> PyResult<R> {
        let pipeline = self.pipeline(py)?;
        let tokenizer: &Tokenizer = &pipeline;
        Ok(py.allow_threads(|| f(tokenizer)))
    }

    /// Changes the pipeline (see `TokenizerState::update`).
    fn update<R>(
        &self,
        py: Python<'_>,
        change: impl FnOnce(&mut Tokenizer) -> tokenmill_core::Result<R>,
    ) -> PyResult<R> {
        self.state.update(py, |state| change(&mut state.tokenizer).py())
    }
}

#[apply(stage_properties!)]
#[pymethods]
impl PyTokenizer {
    #[new]
    fn new(model: Adopted<'_, models::PyModel>) -> Self {
        let (model, value) = Attached::attach(model.inner.clone());
        let mut state = State::new(Tokenizer::new(value));
        state.components.model = model;
        PyTokenizer { state: TokenizerState::new(state) }
    }

    /// Loads a tokenizer from a tokenizer.json string.
    #[staticmethod]
    fn from_str(json: &str) -> PyResult<Self> {
        Ok(Self::from_core(Tokenizer::from_json_str(json).py()?))
    }

    /// Loads a tokenizer from a tokenizer.json file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        Ok(Self::from_core(py.allow_threads(|| Tokenizer::from_file(&path)).py()?))
    }

    /// Loads the tokenizer of a Hugging Face model from disk: a model folder, a hub-cache
    /// folder (``models--org--name``) or a hub id (``"org/name"``) found in the local cache
    /// (``cache_dir``, else ``HF_HUB_CACHE`` / ``HF_HOME`` / ``~/.cache/huggingface/hub``).
    /// Reads tokenizer.json, or vocab.json + merges.txt (GPT-2 / RoBERTa) or vocab.txt (BERT)
    /// with tokenizer_config.json and special_tokens_map.json. No network access unless
    /// ``download=True`` (needs ``huggingface_hub``). See ``tokenmill.pretrained``.
    #[staticmethod]
    #[pyo3(signature = (
        identifier, revision = None, cache_dir = None, download = false, token = None
    ))]
    fn from_pretrained<'py>(
        py: Python<'py>,
        identifier: &Bound<'py, PyAny>,
        revision: Option<String>,
        cache_dir: Option<&Bound<'py, PyAny>>,
        download: bool,
        token: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        py.import("tokenmill.pretrained")?
            .call_method1("from_pretrained", (identifier, revision, cache_dir, download, token))
    }

    /// Writes tokenizer.json, tokenizer_config.json and special_tokens_map.json into
    /// ``save_directory`` so that ``transformers.AutoTokenizer.from_pretrained`` loads it with
    /// the same ids; returns the paths. ``special_tokens_map`` gives roles
    /// (``{"eos_token": "</s>"}``), others are told from the tokens' text.
    #[pyo3(signature = (save_directory, special_tokens_map = None, model_max_length = None))]
    fn save_pretrained<'py>(
        slf: &Bound<'py, Self>,
        save_directory: &Bound<'py, PyAny>,
        special_tokens_map: Option<&Bound<'py, PyAny>>,
        model_max_length: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let module = slf.py().import("tokenmill.pretrained")?;
        module.call_method1(
            "save_pretrained",
            (slf, save_directory, special_tokens_map, model_max_length),
        )
    }

    /// A new tokenizer with this one's pipeline and special tokens, its model retrained on
    /// ``text_iterator`` (str or batches of str) to ``vocab_size``, as transformers'
    /// ``train_new_from_iterator``. Keyword arguments go to the trainer.
    #[pyo3(signature = (
        text_iterator, vocab_size, length = None, new_special_tokens = None, special_tokens_map =
        None, **kwargs
    ))]
    fn train_new_from_iterator<'py>(
        slf: &Bound<'py, Self>,
        text_iterator: &Bound<'py, PyAny>,
        vocab_size: usize,
        length: Option<u64>,
        new_special_tokens: Option<&Bound<'py, PyAny>>,
        special_tokens_map: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let module = slf.py().import("tokenmill.pretrained")?;
        let args = (slf, text_iterator, vocab_size, length, new_special_tokens, special_tokens_map);
        module.getattr("train_new_from_iterator")?.call(args, kwargs)
    }

    /// Loads a tokenizer from the bytes of a tokenizer.json file.
    #[staticmethod]
    fn from_buffer(buffer: &Bound<'_, PyBytes>) -> PyResult<Self> {
        Ok(Self::from_core(Tokenizer::from_json_bytes(buffer.as_bytes()).py()?))
    }

    /// The tokenizer as a tokenizer.json string (indented when ``pretty``).
    #[pyo3(signature = (pretty = false))]
    fn to_str(&self, py: Python<'_>, pretty: bool) -> PyResult<String> {
        self.pipeline(py)?.to_json_string(pretty).py()
    }

    /// Saves the tokenizer as tokenizer.json at ``path``, atomically (a temporary file in the
    /// same directory, then renamed).
    #[pyo3(signature = (path, pretty = true))]
    fn save(&self, py: Python<'_>, path: PathBuf, pretty: bool) -> PyResult<()> {
        self.with_pipeline(py, |t| t.save(&path, pretty))?.py()
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.pipeline(py)?.to_json_string(false).py()?.as_bytes()))
    }

    fn __setstate__(&self, py: Python<'_>, state: &Bound<'_, PyBytes>) -> PyResult<()> {
        self.state.replace(py, State::new(Tokenizer::from_json_bytes(state.as_bytes()).py()?))
    }

    /// Pickling goes through tokenizer.json: ``Tokenizer.from_buffer(state)``.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let state = slf.borrow().__getstate__(slf.py())?;
        Ok((slf.get_type().getattr("from_buffer")?, (state,)))
    }

    /// The whole pipeline as ``tokenizers`` writes it: ``Tokenizer(version="1.0",
    /// truncation=None, ..., model=BPE(...))``, up to 99 entries of each list.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        crate::repr::repr(&*self.pipeline(py)?).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// As :meth:`__repr__` with up to 5 entries of each list or dict (then ``...``) and strings
    /// cut at 100 bytes, as ``tokenizers``' ``str``.
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        crate::repr::to_str(&*self.pipeline(py)?).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    // ---- components (shared: see `shared.rs`) ----

    /// The :class:`tokenmill.models.Model`.
    #[getter]
    fn get_model(&self, py: Python<'_>) -> PyResult<PyObject> {
        models::shared_to_python(py, self.state.current(py)?.components.model.handle.clone())
    }
    #[setter]
    fn set_model(&self, py: Python<'_>, model: Adopted<'_, models::PyModel>) -> PyResult<()> {
        let (attached, value) = Attached::attach(model.inner.clone());
        self.state.update(py, |state| {
            state.components.model = attached;
            state.tokenizer.with_model(value);
            Ok(())
        })
    }

    /// Enables truncation: encodings keep at most ``max_length`` tokens (special tokens
    /// included); what is cut off goes to ``Encoding.overflowing`` in windows of the same
    /// length, consecutive windows sharing ``stride`` tokens.
    ///
    /// Args:
    ///     max_length (int): the maximum number of tokens.
    ///     stride (int): tokens shared by consecutive overflowing windows.
    ///     strategy (str): ``"longest_first"``, ``"only_first"`` or ``"only_second"`` (which
    ///         sequence of a pair loses tokens).
    ///     direction (str): ``"right"`` (cut the end) or ``"left"`` (cut the start).
    ///
    /// Raises:
    ///     InvalidArgumentError: a negative length, an unknown strategy or direction, or a
    ///         stride that leaves windows no room once the special tokens are counted.
    #[pyo3(signature = (max_length, stride = 0, strategy = "longest_first", direction = "right"))]
    fn enable_truncation(
        &self,
        py: Python<'_>,
        max_length: i64,
        stride: i64,
        strategy: &str,
        direction: &str,
    ) -> PyResult<()> {
        let params = TruncationParams {
            max_length: non_negative("max_length", max_length)?,
            stride: non_negative("stride", stride)?,
            strategy: TruncationStrategy::from_name(strategy).py()?,
            direction: TruncationDirection::from_name(direction).py()?,
        };
        self.update(py, |t| t.with_truncation(Some(params)).map(|_| ()))
    }

    /// Disables truncation.
    fn no_truncation(&self, py: Python<'_>) -> PyResult<()> {
        self.update(py, |t| t.with_truncation(None).map(|_| ()))
    }

    /// The truncation parameters as a dict (``max_length``, ``stride``, ``strategy``,
    /// ``direction``), or None when truncation is off. Use :meth:`enable_truncation` to change.
    #[getter]
    fn truncation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let tokenizer = self.pipeline(py)?;
        let Some(t) = tokenizer.get_truncation() else { return Ok(None) };
        let dict = PyDict::new(py);
        dict.set_item("max_length", t.max_length)?;
        dict.set_item("stride", t.stride)?;
        dict.set_item("strategy", t.strategy.as_str())?;
        dict.set_item("direction", t.direction.as_str())?;
        Ok(Some(dict))
    }

    /// Enables padding: encodings are padded to ``length`` tokens, or (``length=None``) to the
    /// longest encoding of the batch, rounded up to a multiple of ``pad_to_multiple_of``.
    ///
    /// Args:
    ///     direction (str): ``"right"`` or ``"left"``.
    ///     pad_id (int), pad_type_id (int), pad_token (str): what the pad tokens hold.
    ///     length (int, optional): a fixed length.
    ///     pad_to_multiple_of (int, optional): round the length up to a multiple of this.
    ///     max_length (int, optional): deprecated name of ``length``.
    #[pyo3(signature = (
        direction = "right", pad_id = 0, pad_type_id = 0, pad_token = "[PAD]", length = None,
        pad_to_multiple_of = None, max_length = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn enable_padding(
        &self,
        py: Python<'_>,
        direction: &str,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
        length: Option<i64>,
        pad_to_multiple_of: Option<i64>,
        max_length: Option<i64>,
    ) -> PyResult<()> {
        let length = length.or(max_length).map(|l| non_negative("length", l)).transpose()?;
        let params = PaddingParams {
            strategy: length.map_or(PaddingStrategy::BatchLongest, PaddingStrategy::Fixed),
            direction: PaddingDirection::from_name(direction).py()?,
            pad_to_multiple_of: pad_to_multiple_of
                .map(|m| non_negative("pad_to_multiple_of", m))
                .transpose()?,
            pad_id,
            pad_type_id,
            pad_token: pad_token.to_string(),
        };
        self.update(py, |t| {
            t.with_padding(Some(params));
            Ok(())
        })
    }

    /// Disables padding.
    fn no_padding(&self, py: Python<'_>) -> PyResult<()> {
        self.update(py, |t| {
            t.with_padding(None);
            Ok(())
        })
    }

    /// The padding parameters as a dict (``length``, ``pad_to_multiple_of``, ``pad_id``,
    /// ``pad_token``, ``pad_type_id``, ``direction``), or None when padding is off. Use
    /// :meth:`enable_padding` to change.
    #[getter]
    fn padding<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let tokenizer = self.pipeline(py)?;
        let Some(p) = tokenizer.get_padding() else { return Ok(None) };
        let dict = PyDict::new(py);
        let length = match p.strategy {
            PaddingStrategy::BatchLongest => None,
            PaddingStrategy::Fixed(n) => Some(n),
        };
        dict.set_item("length", length)?;
        dict.set_item("pad_to_multiple_of", p.pad_to_multiple_of)?;
        dict.set_item("pad_id", p.pad_id)?;
        dict.set_item("pad_token", &p.pad_token)?;
        dict.set_item("pad_type_id", p.pad_type_id)?;
        dict.set_item("direction", p.direction.as_str())?;
        Ok(Some(dict))
    }

    /// Whether special tokens are encoded as ordinary text instead of being extracted.
    #[getter]
    fn get_encode_special_tokens(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.pipeline(py)?.get_encode_special_tokens())
    }
    #[setter]
    fn set_encode_special_tokens(&self, py: Python<'_>, value: bool) -> PyResult<()> {
        self.update(py, |t| {
            t.set_encode_special_tokens(value);
            Ok(())
        })
    }

    // ---- vocabulary ----

    /// The vocabulary as ``{token: id}``, with the added tokens unless told otherwise.
    #[pyo3(signature = (with_added_tokens = true))]
    fn get_vocab(&self, py: Python<'_>, with_added_tokens: bool) -> PyResult<HashMap<String, u32>> {
        Ok(self.pipeline(py)?.get_vocab(with_added_tokens))
    }

    /// The vocabulary size, with the added tokens unless told otherwise.
    #[pyo3(signature = (with_added_tokens = true))]
    fn get_vocab_size(&self, py: Python<'_>, with_added_tokens: bool) -> PyResult<usize> {
        Ok(self.pipeline(py)?.get_vocab_size(with_added_tokens))
    }

    /// The added tokens as ``{id: AddedToken}``, sorted by id.
    fn get_added_tokens_decoder(&self, py: Python<'_>) -> PyResult<BTreeMap<u32, PyAddedToken>> {
        Ok(self
            .pipeline(py)?
            .get_added_tokens_decoder()
            .iter()
            .map(|(id, t)| (*id, PyAddedToken::from(t.clone())))
            .collect())
    }

    /// The id of ``token``, or None.
    fn token_to_id(&self, py: Python<'_>, token: &str) -> PyResult<Option<u32>> {
        Ok(self.pipeline(py)?.token_to_id(token))
    }

    /// The token of ``id``, or None.
    fn id_to_token(&self, py: Python<'_>, id: u32) -> PyResult<Option<String>> {
        Ok(self.pipeline(py)?.id_to_token(id))
    }

    /// Adds tokens (str or :class:`AddedToken`) to the vocabulary; returns how many were new.
    fn add_tokens(&self, py: Python<'_>, tokens: &Bound<'_, PyList>) -> PyResult<usize> {
        let tokens = extract_added_tokens(tokens, false)?;
        self.update(py, |t| t.add_tokens(tokens))
    }

    /// Adds special tokens (str or :class:`AddedToken`, made special); returns how many were new.
    fn add_special_tokens(&self, py: Python<'_>, tokens: &Bound<'_, PyList>) -> PyResult<usize> {
        let tokens = extract_added_tokens(tokens, true)?;
        self.update(py, |t| t.add_special_tokens(tokens))
    }

    /// How many special tokens the post-processor adds to a single sequence or a pair.
    fn num_special_tokens_to_add(&self, py: Python<'_>, is_pair: bool) -> PyResult<usize> {
        Ok(self.pipeline(py)?.num_special_tokens_to_add(is_pair))
    }

    // ---- training ----

    /// Trains the model on text files (read line by line, streamed) with ``trainer`` (a
    /// :class:`tokenmill.trainers.BpeTrainer`; a default one when None). The trainer's
    /// special tokens are added to the tokenizer.
    #[pyo3(signature = (files, trainer = None))]
    fn train(
        &self,
        py: Python<'_>,
        files: Vec<PathBuf>,
        trainer: Option<Adopted<'_, trainers::PyTrainer>>,
    ) -> PyResult<()> {
        self.train_with(py, trainer, |tokenizer, trainer| {
            tokenizer.train_from_files(trainer, &files)
        })
    }

    /// Trains the model on an iterator of str, or of batches (any iterable) of str, pulled in
    /// chunks; the counting runs without the GIL. ``length`` (the number of items) only sizes
    /// the progress bar.
    #[pyo3(signature = (iterator, trainer = None, length = None))]
    fn train_from_iterator(
        &self,
        py: Python<'_>,
        iterator: &Bound<'_, PyAny>,
        trainer: Option<Adopted<'_, trainers::PyTrainer>>,
        length: Option<u64>,
    ) -> PyResult<()> {
        let show_progress = match &trainer {
            Some(t) => t.inner.read().should_show_progress(),
            None => true,
        };
        let progress =
            Progress::new(show_progress, length.unwrap_or(0), "Pre-processing sequences");
        let mut sequences = PySequences::new(iterator.try_iter()?.unbind(), progress);
        let result = self.train_with(py, trainer, |tokenizer, trainer| {
            tokenizer.train_from_sequences(trainer, sequences.by_ref())
        });
        sequences.progress.finish();
        // An exception raised by the Python iterator wins over the error it caused.
        if let Some(e) = sequences.failure.take() {
            return Err(e);
        }
        result
    }

    /// Trains the model on word counts (from :func:`tokenmill.trainers.count_words`, possibly
    /// merged from several machines with ``+``) with ``trainer`` (a default one for the model's
    /// kind when None): the same model as :meth:`train` on the corpus they were counted from.
    #[pyo3(signature = (counts, trainer = None))]
    fn train_from_counts(
        &self,
        py: Python<'_>,
        counts: PyRef<'_, trainers::PyWordCounts>,
        trainer: Option<Adopted<'_, trainers::PyTrainer>>,
    ) -> PyResult<()> {
        let table = counts.table.clone();
        self.train_with(py, trainer, move |tokenizer, trainer| {
            tokenizer.train_from_counts(trainer, table)
        })
    }

    /// The counting behind :func:`tokenmill.trainers.count_words`: the words of ``files`` (text
    /// files) or of ``iterator`` (of str or batches of str) as training counts them.
    #[pyo3(signature = (files, iterator, max_memory = None, spill_dir = None))]
    fn _count_words(
        &self,
        py: Python<'_>,
        files: Option<Vec<PathBuf>>,
        iterator: Option<&Bound<'_, PyAny>>,
        max_memory: Option<trainers::MemorySize>,
        spill_dir: Option<PathBuf>,
    ) -> PyResult<trainers::PyWordCounts> {
        let budget = Budget::new(max_memory.map(|m| m.0), spill_dir);
        let pipeline = self.pipeline(py)?;
        let tokenizer: &Tokenizer = &pipeline;
        let table = match (files, iterator) {
            (Some(files), _) => py.allow_threads(|| {
                crate::memory::for_training(|| {
                    tokenizer.count_words_in_files(&files, &budget, false)
                })
            }),
            (None, Some(iterator)) => {
                let progress = Progress::new(false, 0, "Counting words");
                let mut sequences = PySequences::new(iterator.try_iter()?.unbind(), progress);
                let result = py.allow_threads(|| {
                    crate::memory::for_training(|| {
                        tokenizer.count_words_in_sequences(sequences.by_ref(), &budget)
                    })
                });
                if let Some(e) = sequences.failure.take() {
                    return Err(e);
                }
                result
            }
            (None, None) => Ok(Default::default()),
        };
        Ok(trainers::PyWordCounts::new(table.py()?))
    }

    // ---- encode / decode ----

    /// Encodes a sequence (and optionally its pair).
    ///
    /// Args:
    ///     sequence: a str, or a list of str if ``is_pretokenized``.
    ///     pair: the second sequence, same kind, or None.
    ///     is_pretokenized (bool): the input is already split into words.
    ///     add_special_tokens (bool): let the post-processor add its special tokens.
    ///
    /// Returns:
    ///     :class:`Encoding`, offsets in characters of the input string.
    #[pyo3(signature = (sequence, pair = None, is_pretokenized = false, add_special_tokens = true))]
    fn encode(
        &self,
        py: Python<'_>,
        sequence: &Bound<'_, PyAny>,
        pair: Option<&Bound<'_, PyAny>>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let first = HeldSequence::hold(sequence, is_pretokenized)?;
        let second = pair.map(|p| HeldSequence::hold(p, is_pretokenized)).transpose()?;
        self.encode_held(py, &first, second.as_ref(), add_special_tokens)
    }

    /// Encodes a batch in parallel, without the GIL. Items are sequences or ``(sequence, pair)``
    /// tuples (lists of str when ``is_pretokenized``).
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_many(py, input, is_pretokenized, add_special_tokens, OffsetType::Char)
    }

    /// Like :meth:`encode_batch` (kept for ``tokenizers`` compatibility); offsets are in bytes
    /// of the UTF-8 input. (``tokenizers`` 0.23's fast variant tracks no offsets and returns
    /// ``(0, 0)`` for every token; tokenmill gives the byte offsets, which cost it nothing.)
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch_fast<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_many(py, input, is_pretokenized, add_special_tokens, OffsetType::Byte)
    }

    /// The lean path: encodes texts in parallel and returns ``(ids, boundaries)`` as NumPy
    /// arrays: ``ids`` (uint32) holds every text's ids one after the other, text ``i`` is
    /// ``ids[boundaries[i]:boundaries[i + 1]]`` (``boundaries``: int64, ``len(texts) + 1``).
    /// No Python object is created per token.
    #[pyo3(signature = (texts, add_special_tokens = true))]
    fn encode_batch_ids<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        add_special_tokens: bool,
    ) -> PyResult<crate::ArrayPair<'py, u32, i64>> {
        let held = hold_texts(texts)?;
        let texts = held.iter().map(str_text).collect::<PyResult<Vec<_>>>()?;
        let flatten = |per_text: Vec<Vec<u32>>| {
            let mut boundaries = Vec::with_capacity(per_text.len() + 1);
            boundaries.push(0i64);
            let mut ids = Vec::with_capacity(per_text.iter().map(Vec::len).sum());
            for v in per_text {
                ids.extend_from_slice(&v);
                boundaries.push(ids.len() as i64);
            }
            (ids, boundaries)
        };
        let call = Call { add_special_tokens, offset_type: OffsetType::Byte, limits: Limits::Own };
        let (ids, boundaries) = self.encode_as::<Ids, _, _>(py, texts, call, flatten)?;
        crate::arrays::array_pair(py, ids, boundaries)
    }

    /// Decodes ids to text. Ids not in the vocabulary are skipped (as ``tokenizers`` does).
    #[pyo3(signature = (ids, skip_special_tokens = true))]
    fn decode(
        &self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<String> {
        let ids = extract_ids(ids)?;
        self.with_pipeline(py, |t| t.decode(&ids, skip_special_tokens))?.py()
    }

    /// Decodes a batch of id lists in parallel.
    #[pyo3(signature = (sequences, skip_special_tokens = true))]
    fn decode_batch(
        &self,
        py: Python<'_>,
        sequences: &Bound<'_, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<Vec<String>> {
        let sequences = extract_id_lists(sequences)?;
        self.with_pipeline(py, |t| t.decode_batch(&sequences, skip_special_tokens))?.py()
    }

    // ---- the same as awaitables (asyncio) ----

    /// :meth:`encode` as an awaitable, for asyncio code: the input is read now, the encoding
    /// runs on a thread of the running loop's default executor (the GIL released while it
    /// encodes), and the returned ``asyncio.Future`` gives the :class:`Encoding`. Raises
    /// ``RuntimeError`` outside a running event loop.
    #[pyo3(signature = (sequence, pair = None, is_pretokenized = false, add_special_tokens = true))]
    fn async_encode<'py>(
        slf: &Bound<'py, Self>,
        sequence: &Bound<'py, PyAny>,
        pair: Option<&Bound<'py, PyAny>>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let first = HeldSequence::hold(sequence, is_pretokenized)?.unbind();
        let second = pair.map(|p| HeldSequence::hold(p, is_pretokenized)).transpose()?;
        let second = second.map(HeldSequence::unbind);
        let tokenizer = slf.clone().unbind();
        run_in_executor(slf.py(), move |py| {
            let (first, second) = (first.bind(py), second.as_ref().map(|s| s.bind(py)));
            let tokenizer = tokenizer.borrow(py);
            let encoding =
                tokenizer.encode_held(py, &first, second.as_ref(), add_special_tokens)?;
            Ok(Py::new(py, encoding)?.into_any())
        })
    }

    /// :meth:`encode_batch` as an awaitable (see :meth:`async_encode`): the returned
    /// ``asyncio.Future`` gives the list of :class:`Encoding`. Items are read as
    /// :meth:`encode_batch` reads them: a pre-tokenized item of two words is one sequence
    /// (``tokenizers``' async variant takes it for a pair and raises).
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn async_encode_batch<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::encode_many_async(slf, input, is_pretokenized, add_special_tokens, OffsetType::Char)
    }

    /// :meth:`encode_batch_fast` as an awaitable (see :meth:`async_encode`).
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn async_encode_batch_fast<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        Self::encode_many_async(slf, input, is_pretokenized, add_special_tokens, OffsetType::Byte)
    }

    /// :meth:`decode_batch` as an awaitable (see :meth:`async_encode`): the ids are read now,
    /// and the returned ``asyncio.Future`` gives the list of str.
    #[pyo3(signature = (sequences, skip_special_tokens = true))]
    fn async_decode_batch<'py>(
        slf: &Bound<'py, Self>,
        sequences: &Bound<'py, PyAny>,
        skip_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sequences = extract_id_lists(sequences)?;
        let tokenizer = slf.clone().unbind();
        run_in_executor(slf.py(), move |py| {
            let decode = |t: &Tokenizer| t.decode_batch(&sequences, skip_special_tokens);
            let texts = tokenizer.borrow(py).with_pipeline(py, decode)?.py()?;
            Ok(texts.into_pyobject(py)?.into_any().unbind())
        })
    }

    /// A call in the style of ``transformers``' tokenizers: ``tok(text, text_pair=None,
    /// add_special_tokens=True, padding=False, truncation=None, max_length=None, stride=0,
    /// is_split_into_words=False, pad_to_multiple_of=None, padding_side=None,
    /// return_tensors=None, return_token_type_ids=None, return_attention_mask=None,
    /// return_overflowing_tokens=False, return_special_tokens_mask=False,
    /// return_offsets_mapping=False, return_length=False)`` on a text, a pair or a batch;
    /// returns a :class:`tokenmill.BatchEncoding`. See ``tokenmill.batch_encoding``.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = slf.py().import("tokenmill.batch_encoding")?.getattr("tokenizer_call")?;
        let mut all = vec![slf.clone().into_any()];
        all.extend(args.iter());
        call.call(PyTuple::new(slf.py(), all)?, kwargs)
    }

    /// ``encode_batch`` with truncation and padding given for this call (dicts shaped like the
    /// ``truncation`` / ``padding`` properties, or None for none) instead of the tokenizer's.
    #[pyo3(signature = (
        input, is_pretokenized = false, add_special_tokens = true, truncation = None, padding = None
    ))]
    fn encode_batch_with<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
        truncation: Option<&Bound<'_, PyDict>>,
        padding: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let truncation = truncation.map(truncation_from_dict).transpose()?;
        let padding = padding.map(padding_from_dict).transpose()?;
        let held = hold_batch(input, is_pretokenized)?;
        let limits = Limits::Given(truncation, padding);
        let call = Call { add_special_tokens, offset_type: OffsetType::Char, limits };
        self.encode_held_batch(py, &held, call)
    }

    /// The NumPy path for model inputs: encodes a batch (texts, ``(text, pair)`` tuples, or
    /// lists of words with ``is_pretokenized``) with the tokenizer's truncation, pads it (the
    /// tokenizer's padding, or to the longest with the default pad settings when padding is
    /// off) and returns ``{"input_ids", "attention_mask", "token_type_ids"}`` as int64 arrays of
    /// shape ``(batch, length)``. No Python object is created per token; the GIL is released
    /// while encoding.
    #[pyo3(signature = (input, is_pretokenized = false, add_special_tokens = true))]
    fn encode_batch_arrays<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let held = hold_batch(input, is_pretokenized)?;
        let inputs = batch_inputs(&held)?;
        let fields = ["input_ids", "attention_mask", "token_type_ids"].map(String::from);
        // Token texts are never read here; the pads are written straight into the arrays.
        let stack_rows = |batch: StoredBatch| {
            let stacked = stack_values(&batch.rows, &fields, batch.padding.as_ref());
            drop_all(batch.rows);
            stacked
        };
        let limits = Limits::OwnPaddedToLongest;
        let call = Call { add_special_tokens, offset_type: OffsetType::Byte, limits };
        let stacked = self.encode_as::<StoredEncoding, _, _>(py, inputs, call, stack_rows)?;
        // Fixed padding shorter than an encoding leaves lengths unequal.
        stacked.map(|s| stacked_into_arrays(py, s)).transpose()?.ok_or_else(|| {
            InvalidArgumentError::new_err(
                "encodings of different lengths: a fixed padding length \
                is shorter than the longest encoding; enable truncation to that length",
            )
        })
    }

    /// The ``tok(..., return_tensors="np")`` path (see ``tokenmill.batch_encoding``): encodes a
    /// batch like :meth:`encode_batch_with`, takes every encoding as a row (followed by its
    /// overflowing windows when ``with_overflowing``), and stacks ``fields`` of the rows into
    /// int64 NumPy arrays, all without the GIL and in parallel (the arrays are filled row by row
    /// on the pool's threads and handed to NumPy without a copy).
    ///
    /// Returns:
    ///     ``(arrays, rows, row_sample)``: a dict of arrays by field name (None when the rows
    ///     differ in length), the rows as an :class:`EncodingBatch`, and the input index of every
    ///     row.
    #[pyo3(signature = (
        input, is_pretokenized, add_special_tokens, truncation, padding, fields, with_overflowing
    ))]
    #[allow(clippy::too_many_arguments)]
    fn _encode_to_arrays<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
        truncation: Option<&Bound<'py, PyDict>>,
        padding: Option<&Bound<'py, PyDict>>,
        fields: Vec<String>,
        with_overflowing: bool,
    ) -> PyResult<(Option<Bound<'py, PyDict>>, PyEncodingBatch, Vec<usize>)> {
        check_fields(&fields)?;
        let truncation = truncation.map(truncation_from_dict).transpose()?;
        let padding = padding.map(padding_from_dict).transpose()?;
        let held = hold_batch(input, is_pretokenized)?;
        let inputs = batch_inputs(&held)?;
        // The rows' token texts are only made if a row's Encoding is asked for, and their
        // padding only then too: the arrays get the pad values directly.
        let stack_rows = |batch: StoredBatch| {
            let (rows, row_sample) = if with_overflowing {
                rows_with_overflowing(batch.rows)
            } else {
                let samples = (0..batch.rows.len()).collect();
                (batch.rows, samples)
            };
            let stacked = stack_values(&rows, &fields, batch.padding.as_ref());
            (stacked, rows, row_sample, batch.texts, batch.padding)
        };
        let limits = Limits::Given(truncation, padding);
        let call = Call { add_special_tokens, offset_type: OffsetType::Char, limits };
        let (stacked, rows, row_sample, texts, padding) =
            self.encode_as::<StoredEncoding, _, _>(py, inputs, call, stack_rows)?;
        let arrays = stacked.map(|s| stacked_into_arrays(py, s)).transpose()?;
        Ok((arrays, PyEncodingBatch::new(rows, texts, padding), row_sample))
    }

    /// ``fields`` of ``encodings`` stacked into int64 NumPy arrays (``offset_mapping`` gets a
    /// last axis of 2), or None when the encodings differ in length.
    #[staticmethod]
    fn _stack_encodings<'py>(
        py: Python<'py>,
        encodings: Vec<PyRef<'py, PyEncoding>>,
        fields: Vec<String>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        // Token texts are not stacked: the held encodings do.
        let refs: Vec<&StoredEncoding> = encodings.iter().map(|e| e.held()).collect();
        stack(py, &refs, &fields)
    }

    /// Applies the post-processor to encodings (adds special tokens, joins a pair).
    #[pyo3(signature = (encoding, pair = None, add_special_tokens = true))]
    fn post_process(
        &self,
        py: Python<'_>,
        encoding: PyRef<PyEncoding>,
        pair: Option<PyRef<PyEncoding>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let out = self
            .pipeline(py)?
            .post_process(encoding.to_encoding(), pair.map(|p| p.to_encoding()), add_special_tokens)
            .py()?;
        Ok(out.into())
    }
}

/// Each encoding followed by copies of its overflowing windows (the encoding keeps its own), and
/// the input index of every row.
fn rows_with_overflowing(encodings: Vec<StoredEncoding>) -> (Vec<StoredEncoding>, Vec<usize>) {
    let mut rows = Vec::with_capacity(encodings.len());
    let mut samples = Vec::with_capacity(encodings.len());
    for (sample, encoding) in encodings.into_iter().enumerate() {
        let windows = encoding.overflowing();
        samples.extend(std::iter::repeat_n(sample, 1 + windows.len()));
        rows.push(encoding);
        rows.extend(windows);
    }
    (rows, samples)
}

impl PyTokenizer {
    /// Trains with a copy of `trainer` (if None, a default trainer for the model's kind) without
    /// the GIL, then stores the trained trainer back (its word counts and merge history) and shares
    /// the new model. The trainer's lock is not held while training, so reading its attributes from
    /// another thread meanwhile cannot deadlock with the training iterator's need for the GIL.
    /// Training works on a copy of the tokenizer: other threads go on encoding with the old model
    /// meanwhile, and get the new one once training succeeded.
    fn train_with(
        &self,
        py: Python<'_>,
        trainer: Option<Adopted<'_, trainers::PyTrainer>>,
        run: impl FnOnce(&mut Tokenizer, &mut TrainerWrapper) -> tokenmill_core::Result<()> + Send,
    ) -> PyResult<()> {
        self.state.update_copy(py, |state| {
            let tokenizer = &mut state.tokenizer;
            let mut working = match &trainer {
                Some(t) => t.inner.snapshot(),
                // The model's own kind of trainer, as `model.get_trainer()` in `tokenizers`.
                None => TrainerWrapper::for_model(tokenizer.get_model()),
            };
            let result =
                py.allow_threads(|| crate::memory::for_training(|| run(tokenizer, &mut working)));
            if let Some(t) = &trainer {
                t.inner.set(working);
            }
            result.py()?;
            state.publish_model();
            Ok(())
        })
    }

    fn encode_many<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'_, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> PyResult<Bound<'py, PyList>> {
        let held = hold_batch(input, is_pretokenized)?;
        let call = Call { add_special_tokens, offset_type, limits: Limits::Own };
        self.encode_held_batch(py, &held, call)
    }

    /// The batch is read (and checked) now, on the caller's thread; it is encoded by
    /// `run_in_executor`'s thread.
    fn encode_many_async<'py>(
        slf: &Bound<'py, Self>,
        input: &Bound<'py, PyAny>,
        is_pretokenized: bool,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> PyResult<Bound<'py, PyAny>> {
        let held = hold_batch(input, is_pretokenized)?;
        let owned: Vec<OwnedInput> = held.into_iter().map(HeldInput::unbind).collect();
        let tokenizer = slf.clone().unbind();
        run_in_executor(slf.py(), move |py| {
            let held: Vec<HeldInput<'_>> = owned.iter().map(|input| input.bind(py)).collect();
            let tokenizer = tokenizer.borrow(py);
            let call = Call { add_special_tokens, offset_type, limits: Limits::Own };
            let encodings = tokenizer.encode_held_batch(py, &held, call)?;
            Ok(encodings.into_any().unbind())
        })
    }

    /// The bindings' one encode entry: `inputs` encoded into the output `O` (see
    /// `tokenizer::output` in the core) as `call` says, then `finish`ed, without the GIL.
    fn encode_as<'s, O, E, R>(
        &self,
        py: Python<'_>,
        inputs: Vec<E>,
        call: Call,
        finish: impl FnOnce(O::Batch) -> R + Send,
    ) -> PyResult<R>
    where
        O: Output,
        E: Into<EncodeInput<'s>> + Send,
        R: Send,
    {
        let encode = |t: &Tokenizer| {
            let (truncation, padding) = call.limits.resolve(t);
            let options = EncodeOptions {
                add_special_tokens: call.add_special_tokens,
                offset_type: call.offset_type,
                truncation: truncation.as_ref(),
                padding: padding.as_ref(),
            };
            t.encode_batch_as::<O, E>(inputs, &options).map(finish)
        };
        self.with_pipeline(py, encode)?.py()
    }

    /// A batch encoded into Python `Encoding`s.
    fn encode_held_batch<'py>(
        &self,
        py: Python<'py>,
        held: &[HeldInput<'_>],
        call: Call,
    ) -> PyResult<Bound<'py, PyList>> {
        let inputs = batch_inputs(held)?;
        let batch = self.encode_as::<StoredEncoding, _, _>(py, inputs, call, |batch| batch)?;
        into_py_encodings(py, batch)
    }

    fn encode_held(
        &self,
        py: Python<'_>,
        first: &HeldSequence<'_>,
        second: Option<&HeldSequence<'_>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let input = match second {
            Some(p) => EncodeInput::Dual(first.sequence()?, p.sequence()?),
            None => EncodeInput::Single(first.sequence()?),
        };
        let encode = |t: &Tokenizer| t.encode(input, add_special_tokens, OffsetType::Char);
        Ok(self.with_pipeline(py, encode)?.py()?.into())
    }
}

/// How one encode call runs.
struct Call {
    add_special_tokens: bool,
    offset_type: OffsetType,
    limits: Limits,
}

/// The truncation and padding of one encode call.
enum Limits {
    /// The tokenizer's own.
    Own,
    /// The tokenizer's truncation; its padding, or else padding to the longest (arrays).
    OwnPaddedToLongest,
    /// Given for this call.
    Given(Option<TruncationParams>, Option<PaddingParams>),
}

impl Limits {
    fn resolve(self, t: &Tokenizer) -> (Option<TruncationParams>, Option<PaddingParams>) {
        match self {
            Limits::Own => (t.get_truncation().cloned(), t.get_padding().cloned()),
            Limits::OwnPaddedToLongest => {
                (t.get_truncation().cloned(), Some(t.get_padding().cloned().unwrap_or_default()))
            }
            Limits::Given(truncation, padding) => (truncation, padding),
        }
    }
}

/// Id lists from any iterable of id sequences (what `decode_batch` takes).
fn extract_id_lists(sequences: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u32>>> {
    sequences.try_iter()?.map(|ids| extract_ids(&ids?)).collect()
}

/// Python encodings of a batch (padded first, without the GIL), their deferred token texts
/// (if any) read from the batch's table.
/// (Made straight into the list: no intermediate vector of `PyEncoding`s to move.)
fn into_py_encodings(py: Python<'_>, mut batch: StoredBatch) -> PyResult<Bound<'_, PyList>> {
    if batch.padding.is_some() {
        py.allow_threads(|| batch.pad_rows());
    }
    let texts = batch.texts;
    PyList::new(py, batch.rows.into_iter().map(|e| PyEncoding::deferred(e, texts.clone())))
}

/// Sequences pulled from a Python iterator in chunks (the GIL is taken once per chunk). Each
/// item is a str or an iterable of str. A Python exception ends the iteration and is kept in
/// `failure` for the caller to raise.
struct PySequences {
    iterator: Py<PyIterator>,
    chunk: std::vec::IntoIter<String>,
    done: bool,
    failure: Option<PyErr>,
    progress: Progress,
}

/// Items pulled from the Python iterator per GIL acquisition.
const PULL_CHUNK: usize = 256;

impl PySequences {
    fn new(iterator: Py<PyIterator>, progress: Progress) -> Self {
        PySequences {
            iterator,
            chunk: Vec::new().into_iter(),
            done: false,
            failure: None,
            progress,
        }
    }

    fn pull(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let mut out = Vec::with_capacity(PULL_CHUNK);
        let mut iterator = self.iterator.bind(py).clone();
        let mut items = 0;
        while items < PULL_CHUNK {
            let Some(item) = iterator.next() else { break };
            let item = item?;
            items += 1;
            if item.downcast::<PyString>().is_ok() {
                out.push(extract_text(&item)?);
            } else {
                let inner = item.try_iter().map_err(|_| {
                    input_type_error(format!(
                        "training items must be str or iterables of str, got {}",
                        type_name(&item)
                    ))
                })?;
                for text in inner {
                    out.push(extract_text(&text?)?);
                }
            }
        }
        self.progress.inc(items as u64);
        Ok(out)
    }
}

impl Iterator for PySequences {
    type Item = tokenmill_core::Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(s) = self.chunk.next() {
                return Some(Ok(s));
            }
            if self.done {
                return None;
            }
            match Python::with_gil(|py| self.pull(py)) {
                Ok(chunk) if chunk.is_empty() => {
                    // Read to the end: this bar ends here, before the trainer's own bars.
                    self.progress.finish();
                    self.done = true;
                }
                Ok(chunk) => self.chunk = chunk.into_iter(),
                Err(e) => {
                    self.done = true;
                    let message = e.to_string();
                    self.failure = Some(e);
                    return Some(Err(tokenmill_core::Error::Other(format!(
                        "the training iterator raised: {message}"
                    ))));
                }
            }
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTokenizer>()?;
    m.add_class::<PyEncoding>()?;
    m.add_class::<PyEncodingBatch>()?;
    m.add_class::<PyAddedToken>()?;
    Ok(())
}
