//! `tokenmill.models.Unigram` and `tokenmill.trainers.UnigramTrainer` (registered into those
//! submodules by `models::register` / `trainers::register`).
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokenmill_core::models::unigram::{PieceType, Segmentation, Unigram};
use tokenmill_core::models::ModelWrapper;
use tokenmill_core::trainers::{TrainerWrapper, UnigramTrainer};

use crate::errors::ToPyResult;
use crate::models::{PyModel, PyToken};
use crate::properties::{component_properties, PyValue};
use crate::shared::{getter, setter};
use crate::tokenizer::PyAddedToken;
use crate::trainers::{
    extract_special_tokens, new_trainer, trainer_methods, MemorySize, PyTrainer,
};
use std::path::PathBuf;

/// Texts longer than this are segmented with the GIL released.
const RELEASE_GIL_BYTES: usize = 4096;

/// Runs `f` with the GIL released when `text` is long.
fn maybe_released<R: Send>(py: Python<'_>, text: &str, f: impl FnOnce() -> R + Send) -> R {
    if text.len() > RELEASE_GIL_BYTES {
        py.allow_threads(f)
    } else {
        f()
    }
}

/// The tokens of a segmentation (each piece's text; unknown pieces keep the input's text).
fn to_tokens(model: &Unigram, text: &str, segmentation: &Segmentation) -> Vec<PyToken> {
    segmentation
        .iter()
        .map(|&(id, start, end)| {
            let value = match model.vocab().get(id as usize) {
                Some(v) if Some(id as usize) != model.unk_id() => v.0.clone(),
                _ => text[start..end].to_string(),
            };
            PyToken::from_parts(id, value, (start, end))
        })
        .collect()
}

/// An implementation of the Unigram algorithm (SentencePiece's unigram language model), as
/// `tokenizers.models.Unigram`.
///
/// Args:
///     vocab (list of (str, float), optional): the pieces with their log-probability scores,
///         by id. Without it, a model with only ``<unk>`` (to be trained).
///     unk_id (int, optional): the id of the unknown piece.
///     byte_fallback (bool, optional): unknown characters become ``<0xXX>`` byte pieces when
///         they are all in the vocabulary.
///     alpha (float, optional): when set (and not 0), ``tokenize`` samples a segmentation with
///         P ∝ exp(alpha × score) instead of taking the best one (subword regularization).
///     nbest_size (int, optional): with ``alpha``, sample from the ``nbest_size`` best
///         segmentations; unset (or 0): from all of them.
///
/// The best segmentation is exactly `tokenizers`' (ties: the longest last piece wins).
/// Sampling uses a ChaCha8 generator: :meth:`set_seed` makes it reproducible.
#[pyclass(extends = PyModel, module = "tokenmill.models", name = "Unigram")]
pub struct PyUnigram;

component_properties! {
    #[pymethods] PyUnigram, ModelWrapper::Unigram(|m| m);
    fields {
        /// The sampling temperature used by ``tokenize`` (None: no sampling).
        alpha: Option<f64>;
        /// How many best segmentations ``tokenize`` samples from (None: all).
        nbest_size: Option<usize>;
    }
    methods {
        #[new]
        #[pyo3(signature = (
            vocab=None, unk_id=None, byte_fallback=None, alpha=None, nbest_size=None
        ))]
        fn new(
            vocab: Option<Vec<(String, f64)>>,
            unk_id: Option<usize>,
            byte_fallback: Option<bool>,
            alpha: Option<f64>,
            nbest_size: Option<usize>,
        ) -> PyResult<(Self, PyModel)> {
            let mut model = match (vocab, unk_id) {
                (Some(vocab), unk_id) => {
                    Unigram::from(vocab, unk_id, byte_fallback.unwrap_or(false)).py()?
                }
                (None, None) => Unigram::default(),
                (None, Some(_)) => {
                    return Err(PyValueError::new_err(
                        "`vocab` and `unk_id` must be both specified",
                    ))
                }
            };
            model.alpha = alpha;
            model.nbest_size = nbest_size;
            Ok((PyUnigram, PyModel::new(ModelWrapper::Unigram(model))))
        }

        /// A model with sentencepiece's scoring rules (``f32`` arithmetic, piece types) from
        /// ``(piece, score, type)`` triples by id, ``type`` as in sentencepiece's model proto
        /// (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte). Used to reproduce
        /// sentencepiece's segmentations exactly.
        #[staticmethod]
        #[pyo3(signature = (pieces, unk_id, byte_fallback=false))]
        fn _from_sentencepiece(
            py: Python<'_>,
            pieces: Vec<(String, f32, u8)>,
            unk_id: usize,
            byte_fallback: bool,
        ) -> PyResult<PyObject> {
            let pieces = pieces
                .into_iter()
                .enumerate()
                .map(|(i, (p, s, t))| {
                    let kind = PieceType::try_from(i32::from(t)).map_err(|_| {
                        PyValueError::new_err(format!(
                            "piece {i} ({p:?}): unknown piece type {t} (1..=6)"
                        ))
                    })?;
                    Ok((p, s, kind))
                })
                .collect::<PyResult<Vec<_>>>()?;
            let model = Unigram::from_sentencepiece(pieces, unk_id, byte_fallback).py()?;
            crate::models::to_python(py, ModelWrapper::Unigram(model))
        }

        /// Whether unknown characters fall back to byte pieces.
        #[getter]
        fn get_byte_fallback(self_: PyRef<'_, Self>) -> PyResult<bool> {
            getter!(self_, ModelWrapper::Unigram, |m| m.byte_fallback())
        }
        /// The id of the unknown piece (None when the model has none).
        #[getter]
        fn get_unk_id(self_: PyRef<'_, Self>) -> PyResult<Option<usize>> {
            getter!(self_, ModelWrapper::Unigram, |m| m.unk_id())
        }

        /// The vocabulary as a list of (piece, score), by id.
        fn get_pieces(self_: PyRef<'_, Self>) -> PyResult<Vec<(String, f64)>> {
            getter!(self_, ModelWrapper::Unigram, |m| m.vocab().to_vec())
        }

        /// The score (log-probability) of piece ``id``.
        fn get_score(self_: PyRef<'_, Self>, id: u32) -> PyResult<f64> {
            getter!(self_, ModelWrapper::Unigram, |m| m.score(id))?
                .ok_or_else(|| PyValueError::new_err(format!("id {id} is not in the vocabulary")))
        }

        /// Re-seeds the sampling generator: the same seed gives the same samples.
        fn set_seed(self_: PyRef<'_, Self>, seed: u64) -> PyResult<()> {
            // A change (not a read), so that the tokenizers holding this model re-seed too.
            setter!(self_, ModelWrapper::Unigram, |m| m.set_seed(seed))
        }

        /// The ``nbest_size`` best segmentations of ``sequence`` (best first) as
        // (Two lines as `#[doc]` attributes: as comments they would pass 100 columns here.)
        #[doc = " ``(tokens, score)`` pairs, as sentencepiece's ``nbest_encode`` (``nbest_size`` \
            is clamped"]
        #[doc = " to 1..1024; for 1, the best segmentation with score 0). Unknown characters \
            are not fused."]
        #[pyo3(signature = (sequence, nbest_size))]
        fn nbest(
            self_: PyRef<'_, Self>,
            py: Python<'_>,
            sequence: &str,
            nbest_size: usize,
        ) -> PyResult<Vec<(Vec<PyToken>, f64)>> {
            getter!(self_, ModelWrapper::Unigram, |m| {
                let nbest = maybe_released(py, sequence, || m.nbest(sequence, nbest_size)).py()?;
                Ok(nbest.iter().map(|(seg, score)| (to_tokens(m, sequence, seg), *score)).collect())
            })?
        }

        /// A sampled segmentation of ``sequence`` (sentencepiece's rule): ``nbest_size`` 1 or
        /// ``alpha`` 0 gives the best one; ``nbest_size`` > 1 samples among the n best with
        /// P ∝ exp(alpha × score); ``nbest_size`` < 1 samples from all segmentations (forward
        /// filtering, backward sampling). ``seed`` makes this call reproducible; without it the
        /// model's generator is used (see :meth:`set_seed`).
        #[pyo3(signature = (sequence, alpha=0.1, nbest_size=-1, seed=None))]
        fn sample(
            self_: PyRef<'_, Self>,
            py: Python<'_>,
            sequence: &str,
            alpha: f64,
            nbest_size: i64,
            seed: Option<u64>,
        ) -> PyResult<Vec<PyToken>> {
            getter!(self_, ModelWrapper::Unigram, |m| {
                let seed = match seed {
                    Some(s) => s,
                    None => m.next_seed(),
                };
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let seg = maybe_released(py, sequence, || {
                    m.sample_encode(sequence, nbest_size, alpha, &mut rng)
                })
                .py()?;
                Ok(to_tokens(m, sequence, &seg))
            })?
        }

        /// Entropy of the segmentation distribution of ``sequence`` at temperature ``alpha``.
        #[pyo3(signature = (sequence, alpha=1.0))]
        fn entropy(
            self_: PyRef<'_, Self>,
            py: Python<'_>,
            sequence: &str,
            alpha: f64,
        ) -> PyResult<f64> {
            getter!(self_, ModelWrapper::Unigram, |m| {
                maybe_released(py, sequence, || m.entropy(sequence, alpha)).py()
            })?
        }

        /// log P(sequence): the log of the summed probability of all its segmentations.
        #[pyo3(signature = (sequence))]
        fn log_likelihood(self_: PyRef<'_, Self>, py: Python<'_>, sequence: &str) -> PyResult<f64> {
            getter!(self_, ModelWrapper::Unigram, |m| {
                maybe_released(py, sequence, || m.log_likelihood(sequence)).py()
            })?
        }

        /// Does nothing (the model keeps no cache); kept for `tokenizers` compatibility.
        fn _clear_cache(_self_: PyRef<'_, Self>) {}

        /// Does nothing (the model keeps no cache); kept for `tokenizers` compatibility.
        fn _resize_cache(_self_: PyRef<'_, Self>, _capacity: usize) {}
    }
}

/// Trainer capable of training a Unigram model: `tokenizers.trainers.UnigramTrainer`, whose
/// vocabulary it learns (the same pieces, the same scores to ~1e-10; SentencePiece's algorithm
/// as `tokenizers` ports it: suffix-array seeds counted once per distinct word, EM with digamma
/// updates, pruning by likelihood loss, its finalization). `SentencePieceTrainer` keeps
/// sentencepiece's own variant. It trains only a Unigram model, and, as `tokenizers`, the
/// trained model has `byte_fallback` off.
///
/// Args:
///     vocab_size (int): the size of the final vocabulary, special tokens included.
///     show_progress (bool): whether to show progress bars (only on a terminal).
///     special_tokens (list of str or AddedToken): tokens that get the first ids, in order.
///     initial_alphabet (list of str): characters always in the vocabulary (first char of each).
///     shrinking_factor (float): the share of pieces kept at each pruning step.
///     unk_token (str, optional): the unknown token (a special token's id, or a new id 0).
///     max_piece_length (int): the longest piece, in characters.
///     n_sub_iterations (int): EM iterations between pruning steps.
///     seed_size (int): how many frequent substrings seed the vocabulary.
///
/// Deterministic: the same corpus and options give the same vocabulary on any number of threads.
/// `tokenizers` is not quite: its scores vary in the last bits from run to run (it adds expected
/// counts in hash order), and the characters the model lost get `lowest score + 0.0001 × k` in
/// hash order; here k follows code point order, and equal scores keep the characters first (by
/// code point), then the training order.
#[pyclass(extends = PyTrainer, module = "tokenmill.trainers", name = "UnigramTrainer")]
pub struct PyUnigramTrainer;

trainer_methods! {
    PyUnigramTrainer, UnigramTrainer(|t| t),
    options {
        vocab_size: u32;
        show_progress: bool;
        initial_alphabet: Vec<String>;
        shrinking_factor: f64;
        unk_token: Option<String>;
        max_piece_length: usize;
        n_sub_iterations: u32;
        seed_size: usize;
    }
    methods {
        #[new]
        #[pyo3(signature = (
            vocab_size=8000, show_progress=true, special_tokens=None, initial_alphabet=None,
            shrinking_factor=0.75, unk_token=None, max_piece_length=16, n_sub_iterations=2,
            seed_size=1_000_000, *, max_memory=None, spill_dir=None
        ))]
        #[allow(clippy::too_many_arguments)] // tokenizers' keyword arguments
        fn new(
            vocab_size: u32,
            show_progress: bool,
            special_tokens: Option<&Bound<'_, PyAny>>,
            initial_alphabet: Option<Vec<String>>,
            shrinking_factor: f64,
            unk_token: Option<String>,
            max_piece_length: usize,
            n_sub_iterations: u32,
            seed_size: usize,
            max_memory: Option<MemorySize>,
            spill_dir: Option<PathBuf>,
        ) -> PyResult<(Self, PyTrainer)> {
            let trainer = UnigramTrainer {
                vocab_size,
                show_progress,
                special_tokens: extract_special_tokens(special_tokens)?,
                initial_alphabet: PyValue::from_python(initial_alphabet.unwrap_or_default())?,
                shrinking_factor,
                unk_token,
                max_piece_length,
                n_sub_iterations,
                seed_size,
                max_memory: max_memory.map(|m| m.0),
                spill_dir,
                ..Default::default()
            };
            Ok((PyUnigramTrainer, new_trainer(TrainerWrapper::UnigramTrainer(trainer))))
        }
    }
}
