//! `tokenmill._native.sentencepiece`: the native core behind `tokenmill.sentencepiece`.
//!
//! One frozen class, `Processor`, wrapping the core `sentencepiece::Processor`; the Python
//! module builds `sentencepiece`'s API (keyword defaults, out_type dispatch, result objects) on
//! top of it. Every call that does real work releases the GIL; lists are encoded in parallel.
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use prost::Message;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use rayon::prelude::*;
use tokenmill_core::normalizers::Precompiled;
use tokenmill_core::sentencepiece::{
    flatbuffer, rules, trainer, EncodeOptions, EncodedText, ModelProto, Normalized, NormalizerSpec,
    PieceType, Processor, SpNormalizer, TrainerSpec,
};
use tokenmill_core::utils::parallel;

use crate::errors::{InvalidArgumentError, ToPyResult};
use crate::id_lists::IdObjects;
use crate::input_texts::{for_each_text, held_text, release_front, str_text, HeldTexts};

#[pyclass(module = "tokenmill.sentencepiece", name = "Processor", frozen)]
pub struct PyProcessor {
    inner: Arc<Processor>,
    /// One shared int object per id for the returned id lists: a reference count per id
    /// rather than an allocation, most of the time the GIL is held in a batch encode.
    id_objects: IdObjects,
}

impl PyProcessor {
    fn new(inner: Processor) -> Self {
        PyProcessor { inner: Arc::new(inner), id_objects: IdObjects::default() }
    }
}

/// The ids of a run of consecutive texts: all in one buffer, `ends[i]` where text i's end.
struct FlatIds {
    ids: Vec<u32>,
    ends: Vec<usize>,
}

/// A piece as Python sees it: (piece, id, surface, begin, end).
type PyPiece = (String, u32, String, usize, usize);
/// An encoded text: (text, pieces, score).
type PyEncoded = (String, Vec<PyPiece>, Option<f32>);

/// The tuple form; with `char_offsets`, byte offsets become character offsets (SentencePiece's
/// `ConvertToUnicodeSpans`).
fn to_tuples(encoded: EncodedText, char_offsets: bool) -> PyEncoded {
    let text = encoded.text;
    let convert: Box<dyn Fn(usize) -> usize> = if char_offsets {
        let chars_before = char_index_of_bytes(&text);
        Box::new(move |b: usize| chars_before[b.min(chars_before.len() - 1)])
    } else {
        Box::new(|b| b)
    };
    let pieces = encoded
        .pieces
        .into_iter()
        .map(|p| (p.piece, p.id, p.surface.unwrap_or_default(), convert(p.begin), convert(p.end)))
        .collect();
    (text, pieces, encoded.score)
}

/// For each byte offset of `text` (and its end), the index of the character it is in.
fn char_index_of_bytes(text: &str) -> Vec<usize> {
    let mut chars_before = vec![0usize; text.len() + 1];
    let mut count = 0;
    for (i, c) in text.char_indices() {
        chars_before[i..i + c.len_utf8()].fill(count);
        count += 1;
    }
    chars_before[text.len()] = count;
    chars_before
}

/// What an encode call returns for each text.
enum Kind {
    Ids,
    Pieces,
    Full { char_offsets: bool },
    Serialized,
}

impl Kind {
    fn parse(kind: &str, char_offsets: bool) -> PyResult<Kind> {
        Ok(match kind {
            "ids" => Kind::Ids,
            "pieces" => Kind::Pieces,
            "full" => Kind::Full { char_offsets },
            "serialized" => Kind::Serialized,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown result kind {other:?}"
                )))
            }
        })
    }
}

/// One result, still free of Python objects (built without the GIL).
enum Out {
    Ids(Vec<u32>),
    Pieces(Vec<String>),
    Full(PyEncoded),
    Serialized(Vec<u8>),
}

impl<'py> IntoPyObject<'py> for Out {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;
    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Out::Ids(ids) => ids.into_pyobject(py)?.into_any(),
            Out::Pieces(pieces) => pieces.into_pyobject(py)?.into_any(),
            Out::Full(full) => full.into_pyobject(py)?.into_any(),
            Out::Serialized(bytes) => PyBytes::new(py, &bytes).into_any(),
        })
    }
}

/// The four flags every encode call takes, as one dict (`sentencepiece.py`'s `_encode_flags`).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Flags {
    add_bos: bool,
    add_eos: bool,
    reverse: bool,
    emit_unk_piece: bool,
}

impl Flags {
    /// The options of an encode call with these flags, without sampling (the calls that sample
    /// set `enable_sampling`, `nbest_size` and `alpha` on top).
    fn options(self) -> EncodeOptions {
        let Flags { add_bos, add_eos, reverse, emit_unk_piece } = self;
        let (enable_sampling, nbest_size, alpha) = (false, -1, 0.0);
        EncodeOptions {
            add_bos,
            add_eos,
            reverse,
            emit_unk_piece,
            enable_sampling,
            nbest_size,
            alpha,
        }
    }
}

/// Runs `f` over `items`, on the calling thread when `num_threads` is 1, else in parallel: on
/// tokenmill's pool when `num_threads` is 0 or less (sentencepiece's "all cores"), on at most
/// `num_threads` threads otherwise (see `parallel::pool_for`).
fn batch<T: Sync, R: Send>(
    items: &[T],
    num_threads: i32,
    seed: Option<u64>,
    f: impl Fn(&T, Option<u64>) -> tokenmill_core::Result<R> + Sync,
) -> tokenmill_core::Result<Vec<R>> {
    let requested = usize::try_from(num_threads).unwrap_or(0);
    match parallel::pool_for(requested, items.len()) {
        None => items.iter().enumerate().map(|(i, t)| f(t, item_seed(seed, i))).collect(),
        Some(pool) => pool.install(|| {
            items.par_iter().enumerate().map(|(i, t)| f(t, item_seed(seed, i))).collect()
        }),
    }
}

/// Each item of a batch gets its own seed so that a seeded batch is reproducible in any thread
/// order.
fn item_seed(seed: Option<u64>, index: usize) -> Option<u64> {
    seed.map(|s| s.wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

/// Consecutive texts of a batch, the first being text `first` of the batch (for its seed).
struct Chunk {
    first: usize,
    /// Each text's UTF-8, borrowed from a str that `encode_ids` holds until the chunk's ids
    /// have been turned into lists (see there).
    texts: Vec<&'static str>,
}

/// The ids of a chunk's texts.
fn encode_chunk(
    processor: &Processor,
    chunk: &Chunk,
    o: &EncodeOptions,
    seed: Option<u64>,
) -> tokenmill_core::Result<FlatIds> {
    let mut flat = FlatIds {
        ids: Vec::with_capacity(chunk.texts.iter().map(|t| t.len() / 3 + 2).sum()),
        ends: Vec::with_capacity(chunk.texts.len()),
    };
    for (i, text) in chunk.texts.iter().enumerate() {
        processor.encode_ids_into(text, o, item_seed(seed, chunk.first + i), &mut flat.ids)?;
        flat.ends.push(flat.ids.len());
    }
    Ok(flat)
}

/// Bytes of text per chunk of an ids batch (a chunk ends at the first text that reaches it):
/// enough to make the per-chunk work (a hand-over between threads, a GIL acquisition)
/// negligible, little enough (~0.5 ms of encoding) that the threads finish together.
const CHUNK_BYTES: usize = 32 * 1024;

impl PyProcessor {
    /// The ids of every text of `items` as `list[list[int]]` (one shared int object per id, see
    /// `id_lists`), through `parallel::produce_in_order`. This thread reads the texts out of
    /// their str objects and cuts them into chunks while the pool's threads already encode the
    /// first chunks; then it encodes chunks too, and turns each finished chunk into lists in
    /// order, releasing the chunk's strs. Reading the texts, building the lists and releasing
    /// the strs need the GIL, so only this thread can do them: overlapping them with the
    /// encoding, rather than doing them before and after it, is what lets two threads approach
    /// twice the speed of one. The GIL is held only for those parts. `num_threads` 1: all on
    /// this thread.
    fn encode_ids<'py>(
        &self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
        o: &EncodeOptions,
        seed: Option<u64>,
        num_threads: i32,
    ) -> PyResult<Bound<'py, PyList>> {
        let inner = &*self.inner;
        let helpers = if num_threads == 1 { 0 } else { parallel::num_threads().saturating_sub(1) };
        let count = items.len().unwrap_or(0);
        // One list per text: with the collector running, their allocations would trigger
        // collections that walk the lists (and their ids) built so far again and again.
        let _pause = crate::gc_pause::GcPause::new(py, count * 8)?;
        let items = items.clone().unbind();
        // The strs of the texts whose ids are not lists yet, in order. Any left after an
        // error are released when this is dropped, with the GIL.
        let held: Mutex<VecDeque<Py<PyString>>> = Mutex::new(VecDeque::with_capacity(count));
        let lock_held = || held.lock().unwrap_or_else(PoisonError::into_inner);
        let mut lists: Vec<Py<PyAny>> = Vec::with_capacity(count);
        py.allow_threads(|| {
            let feed = |push: &mut dyn FnMut(Chunk)| {
                Python::with_gil(|py| {
                    let (mut chunk, mut bytes, mut held) =
                        (Chunk { first: 0, texts: Vec::new() }, 0, lock_held());
                    for_each_text(items.bind(py), |s, text| {
                        held.push_back(s.unbind());
                        // SAFETY: `held` keeps the str alive until the chunk's ids are lists,
                        // and nothing reads the chunk's texts after that.
                        chunk.texts.push(unsafe { held_text(text) });
                        bytes += text.len() + 1;
                        if bytes >= CHUNK_BYTES {
                            let first = chunk.first + chunk.texts.len();
                            push(std::mem::replace(&mut chunk, Chunk { first, texts: Vec::new() }));
                            bytes = 0;
                        }
                        Ok(())
                    })?;
                    if !chunk.texts.is_empty() {
                        push(chunk);
                    }
                    PyResult::Ok(())
                })
            };
            let encode = |chunk: &Chunk| encode_chunk(inner, chunk, o, seed);
            parallel::produce_in_order(helpers, feed, encode, |run| {
                Python::with_gil(|py| {
                    let flats =
                        run.into_iter().map(|chunk| chunk.py()).collect::<PyResult<Vec<_>>>()?;
                    for flat in &flats {
                        self.id_objects.push_flat_lists(py, &flat.ids, &flat.ends, &mut lists)?;
                    }
                    // Each chunk was encoded before its ids were handed over: its texts are
                    // no longer read.
                    release_front(&mut lock_held(), flats.iter().map(|flat| flat.ends.len()).sum());
                    Ok(())
                })
            })
        })?;
        PyList::new(py, lists)
    }

    /// One encoded text in the requested form.
    fn encode_one(
        &self,
        text: &str,
        kind: &Kind,
        o: &EncodeOptions,
        seed: Option<u64>,
    ) -> tokenmill_core::Result<Out> {
        let p = &self.inner;
        Ok(match kind {
            Kind::Ids => Out::Ids(p.encode_ids(text, o, seed)?),
            Kind::Pieces => Out::Pieces(p.encode_pieces(text, o, seed)?),
            Kind::Full { char_offsets } => {
                Out::Full(to_tuples(p.encode_full(text, o, seed)?, *char_offsets))
            }
            Kind::Serialized => {
                Out::Serialized(p.encode_full(text, o, seed)?.to_proto().encode_to_vec())
            }
        })
    }

    /// The result forms of one n-best / sampled segmentation.
    fn shape(
        &self,
        encoded: EncodedText,
        kind: &Kind,
        o: &EncodeOptions,
    ) -> tokenmill_core::Result<Out> {
        Ok(match kind {
            Kind::Ids => {
                let mut ids: Vec<u32> = encoded.pieces.iter().map(|p| p.id).collect();
                self.inner.rewrite_ids(&mut ids, o)?;
                Out::Ids(ids)
            }
            Kind::Pieces => {
                let mut pieces: Vec<String> = encoded.pieces.into_iter().map(|p| p.piece).collect();
                self.inner.rewrite_pieces(&mut pieces, o)?;
                Out::Pieces(pieces)
            }
            Kind::Full { char_offsets } => Out::Full(to_tuples(encoded, *char_offsets)),
            Kind::Serialized => Out::Serialized(encoded.to_proto().encode_to_vec()),
        })
    }

    fn decode_one(&self, input: &DecodeInput, kind: &Kind) -> tokenmill_core::Result<Out> {
        let p = &self.inner;
        let pieces: Vec<&str> = match input {
            DecodeInput::Ids(ids) => checked_ids(ids, p.piece_size())?
                .into_iter()
                .map(|id| p.id_to_piece(id))
                .collect::<tokenmill_core::Result<_>>()?,
            DecodeInput::Pieces(pieces) => pieces.iter().map(String::as_str).collect(),
        };
        let decoded = p.decode_pieces(&pieces);
        Ok(match kind {
            Kind::Full { char_offsets } => Out::Full(to_tuples(decoded, *char_offsets)),
            Kind::Serialized => Out::Serialized(decoded.to_proto().encode_to_vec()),
            _ => Out::Pieces(vec![decoded.text]),
        })
    }
}

#[derive(FromPyObject)]
enum DecodeInput {
    Ids(Vec<i64>),
    Pieces(Vec<String>),
}

#[pymethods]
impl PyProcessor {
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.allow_threads(|| Processor::from_file(&path)).py()?;
        Ok(PyProcessor::new(inner))
    }

    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let data = data.to_vec();
        let inner = py.allow_threads(|| Processor::from_bytes(&data)).py()?;
        Ok(PyProcessor::new(inner))
    }

    /// Encodes each text (`str` or UTF-8 `bytes`); `kind` is "ids", "pieces", "full" (tuples)
    /// or "serialized" (`SentencePieceText` protobuf bytes).
    #[pyo3(signature = (
        texts, kind, flags, enable_sampling=false, nbest_size=-1, alpha=0.1, seed=None,
        num_threads=-1, char_offsets=true
    ))]
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        kind: &str,
        flags: Flags,
        enable_sampling: bool,
        nbest_size: i32,
        alpha: f32,
        seed: Option<u64>,
        num_threads: i32,
        char_offsets: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let o = EncodeOptions { enable_sampling, nbest_size, alpha, ..flags.options() };
        let kind = Kind::parse(kind, char_offsets)?;
        if let Kind::Ids = kind {
            return self.encode_ids(py, texts, &o, seed, num_threads);
        }
        let held = HeldTexts::hold(texts)?;
        let texts = held.texts();
        let outs = py
            .allow_threads(|| {
                batch(texts, num_threads, seed, |t, s| self.encode_one(t, &kind, &o, s))
            })
            .py()?;
        PyList::new(py, outs)
    }

    /// One long text (`str` or UTF-8 `bytes`) encoded in chunks on several threads
    /// (`ParallelEncode`; see `Processor::encode_full_chunked`); `kind` "ids", "pieces" or
    /// "serialized". `num_threads` 1: on this thread.
    #[pyo3(signature = (text, kind, chunk_len, num_threads, flags))]
    fn parallel_encode(
        &self,
        text: &Bound<'_, PyAny>,
        kind: &str,
        chunk_len: usize,
        num_threads: i32,
        flags: Flags,
    ) -> PyResult<Out> {
        let py = text.py();
        let o = flags.options();
        let kind = Kind::parse(kind, false)?;
        let text = text_of(text)?;
        let text: &str = &text;
        py.allow_threads(|| -> tokenmill_core::Result<Out> {
            if let Kind::Ids = kind {
                let mut ids = self.inner.encode_ids_chunked(text, chunk_len, num_threads != 1)?;
                self.inner.rewrite_ids(&mut ids, &o)?;
                return Ok(Out::Ids(ids));
            }
            let encoded = self.inner.encode_full_chunked(text, chunk_len, num_threads != 1)?;
            self.shape(encoded, &kind, &o)
        })
        .py()
    }

    /// Decodes each id or piece sequence; `kind` "text", "full" or "serialized".
    #[pyo3(signature = (inputs, kind="text", num_threads=-1, char_offsets=true))]
    fn decode(
        &self,
        py: Python<'_>,
        inputs: Vec<DecodeInput>,
        kind: &str,
        num_threads: i32,
        char_offsets: bool,
    ) -> PyResult<Vec<Out>> {
        let kind = if kind == "text" { Kind::Pieces } else { Kind::parse(kind, char_offsets)? };
        let outs = py
            .allow_threads(|| {
                batch(&inputs, num_threads, None, |input, _| self.decode_one(input, &kind))
            })
            .py()?;
        Ok(outs)
    }

    /// The n best segmentations of one text, in the form `kind`.
    #[pyo3(signature = (text, nbest_size, kind, flags))]
    fn nbest(
        &self,
        py: Python<'_>,
        text: String,
        nbest_size: i32,
        kind: &str,
        flags: Flags,
    ) -> PyResult<Vec<Out>> {
        let o = EncodeOptions { nbest_size, ..flags.options() };
        let kind = Kind::parse(kind, true)?;
        py.allow_threads(|| {
            let results = self.inner.nbest_encode(&text, nbest_size, &o)?;
            results
                .into_iter()
                .map(|r| self.shape(r, &kind, &o))
                .collect::<tokenmill_core::Result<Vec<_>>>()
        })
        .py()
    }

    /// `num_samples` sampled segmentations with their scores: [(result, score)].
    #[pyo3(signature = (text, num_samples, alpha, wor, include_best, kind, flags, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn sample_and_score(
        &self,
        py: Python<'_>,
        text: String,
        num_samples: i32,
        alpha: f32,
        wor: bool,
        include_best: bool,
        kind: &str,
        flags: Flags,
        seed: Option<u64>,
    ) -> PyResult<Vec<(Out, f32)>> {
        let o = EncodeOptions { enable_sampling: true, alpha, ..flags.options() };
        let kind = Kind::parse(kind, true)?;
        py.allow_threads(|| {
            let results = self.inner.sample_encode_and_score(
                &text,
                num_samples,
                alpha,
                wor,
                include_best,
                &o,
                seed,
            )?;
            results
                .into_iter()
                .map(|r| {
                    let score = r.score.unwrap_or(0.0);
                    Ok((self.shape(r, &kind, &o)?, score))
                })
                .collect::<tokenmill_core::Result<Vec<_>>>()
        })
        .py()
    }

    #[pyo3(signature = (texts, alpha, num_threads=-1))]
    fn calculate_entropy(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        alpha: f32,
        num_threads: i32,
    ) -> PyResult<Vec<f32>> {
        py.allow_threads(|| {
            batch(&texts, num_threads, None, |t, _| self.inner.calculate_entropy(t, alpha))
        })
        .py()
    }

    /// (normalized text, offsets), see `normalize_text`.
    fn normalize<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
        normalize_text(py, self.inner.normalizer(), text)
    }

    fn piece_size(&self) -> usize {
        self.inner.piece_size()
    }

    fn piece_to_id(&self, piece: &str) -> u32 {
        self.inner.piece_to_id(piece)
    }

    fn id_to_piece(&self, id: i64) -> PyResult<String> {
        let id = checked_ids(&[id], self.inner.piece_size()).py()?[0];
        self.inner.id_to_piece(id).map(str::to_string).py()
    }

    fn get_score(&self, id: i64) -> PyResult<f32> {
        let id = checked_ids(&[id], self.inner.piece_size()).py()?[0];
        self.inner.score(id).py()
    }

    /// The piece type (1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE).
    fn piece_type(&self, id: i64) -> PyResult<i32> {
        let id = checked_ids(&[id], self.inner.piece_size()).py()?[0];
        Ok(self.inner.vocab.kind(id).unwrap_or(PieceType::Normal) as i32)
    }

    /// unk, bos, eos, pad ids (-1 when absent).
    fn special_ids(&self) -> (i32, i32, i32, i32) {
        (
            self.inner.special_id(0),
            self.inner.special_id(1),
            self.inner.special_id(2),
            self.inner.special_id(3),
        )
    }

    fn model_type(&self) -> i32 {
        self.inner.model_type() as i32
    }

    fn serialized_model_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.proto().to_bytes())
    }
}

/// The text of a `str` (a lone surrogate is an `InvalidArgumentError`, never a raw
/// `UnicodeEncodeError`) or of UTF-8 `bytes` (malformed bytes become U+FFFD).
fn text_of<'a>(text: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, str>> {
    if let Ok(bytes) = text.downcast::<PyBytes>() {
        return Ok(std::borrow::Cow::Owned(String::from_utf8_lossy(bytes.as_bytes()).into_owned()));
    }
    Ok(std::borrow::Cow::Borrowed(str_text(crate::input_texts::as_str(text)?)?))
}

/// Ids from Python must lie in `0..size`.
fn checked_ids(ids: &[i64], size: usize) -> tokenmill_core::Result<Vec<u32>> {
    ids.iter()
        .map(|&id| {
            if id < 0 || id as u64 >= size as u64 {
                Err(match u32::try_from(id) {
                    Ok(id) => tokenmill_core::Error::UnknownId(id),
                    Err(_) => tokenmill_core::Error::InvalidArgument(format!(
                        "piece id {id} is out of range"
                    )),
                })
            } else {
                Ok(id as u32)
            }
        })
        .collect()
}

/// Parses a serialized model and re-serializes it (a check that tokenmill reads it fully).
#[pyfunction]
fn roundtrip_model_proto<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let proto = ModelProto::from_bytes(data).py()?;
    Ok(PyBytes::new(py, &proto.to_bytes()))
}

/// Trains a model from `(flag, value)` options and either the `input` files of the options or
/// `sentences`; returns the serialized `.model` and the text of its `.vocab` file.
///
/// `pretokenizer` (a callable str -> list of str) gets each normalized sentence; its chunk ends
/// are boundaries no piece crosses. An exception it raises stops training and is re-raised as
/// the `RuntimeError` "Pretokenizer failed: ..." (sentencepiece's), chained to it.
/// `normalizer_spec`: a serialized `NormalizerSpec` to train with (the `normalizer=` option).
#[pyfunction]
#[pyo3(signature = (
    options, sentences=None, pretokenizer=None, allow_inconsistent_pretokenization=false,
    normalizer_spec=None
))]
fn train<'py>(
    py: Python<'py>,
    options: Vec<(String, String)>,
    sentences: Option<Vec<String>>,
    pretokenizer: Option<PyObject>,
    allow_inconsistent_pretokenization: bool,
    normalizer_spec: Option<Vec<u8>>,
) -> PyResult<(Bound<'py, PyBytes>, String)> {
    // The first exception of the pretokenizer; later calls return at once.
    let failure: Mutex<Option<PyErr>> = Mutex::new(None);
    let call_pretokenizer = |text: &str| -> tokenmill_core::Result<Vec<String>> {
        let stop = || tokenmill_core::Error::Other("Pretokenizer failed".into());
        if failure.lock().unwrap_or_else(PoisonError::into_inner).is_some() {
            return Err(stop());
        }
        Python::with_gil(|py| {
            let result = pretokenizer
                .as_ref()
                .map(|f| f.call1(py, (text,)).and_then(|chunks| chunks.extract::<Vec<String>>(py)));
            match result {
                Some(Ok(chunks)) => Ok(chunks),
                Some(Err(e)) => {
                    failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                    Err(stop())
                }
                None => Ok(vec![text.to_string()]),
            }
        })
    };
    let hook = trainer::Pretokenizer {
        split: &call_pretokenizer,
        allow_inconsistent: allow_inconsistent_pretokenization,
    };
    let hook = pretokenizer.is_some().then_some(&hook);
    let trained = py.allow_threads(|| {
        crate::memory::for_training(|| -> tokenmill_core::Result<(Vec<u8>, String)> {
            let mut spec = TrainerSpec::default();
            let mut normalizer = match &normalizer_spec {
                Some(bytes) => NormalizerSpec::decode(bytes.as_slice())
                    .map_err(|e| tokenmill_core::Error::format(format!("normalizer spec: {e}")))?,
                None => NormalizerSpec::default(),
            };
            for (name, value) in &options {
                let normalizer_option = matches!(
                    name.as_str(),
                    "normalization_rule_name"
                        | "normalization_rule_tsv"
                        | "add_dummy_prefix"
                        | "remove_extra_whitespaces"
                        | "escape_whitespaces"
                );
                if normalizer_spec.is_some() && normalizer_option {
                    return Err(tokenmill_core::Error::InvalidArgument(format!(
                        "{name} cannot be \
                        given together with normalizer=: the normalizer's spec already sets it"
                    )));
                }
                trainer::set_option(&mut spec, &mut normalizer, name, value)?;
            }
            let model = match sentences {
                Some(s) => {
                    if !spec.input.is_empty() {
                        return Err(tokenmill_core::Error::InvalidArgument(
                            "SentenceIterator and \
                            trainer_spec.input() must be exclusive."
                                .into(),
                        ));
                    }
                    trainer::train_with(spec, normalizer, s.into_iter().map(Ok), hook)?
                }
                None if spec.input.is_empty() => {
                    return Err(tokenmill_core::Error::InvalidArgument(
                        "no input: give input=<files> or sentence_iterator".into(),
                    ))
                }
                // The files stream through training (the spec is cloned: training consumes it).
                None => trainer::train_with(
                    spec.clone(),
                    normalizer,
                    trainer::read_inputs(&spec),
                    hook,
                )?,
            };
            Ok((model.to_bytes(), trainer::vocab_file_text(&model)))
        })
    });
    if let Some(cause) = failure.into_inner().unwrap_or_else(PoisonError::into_inner) {
        let error =
            pyo3::exceptions::PyRuntimeError::new_err(format!("Pretokenizer failed: {cause}"));
        error.set_cause(py, Some(cause));
        return Err(error);
    }
    let (model, vocab) = trained.py()?;
    Ok((PyBytes::new(py, &model), vocab))
}

/// Builds a serialized `.model` from pieces `(piece, score, type)` and `(flag, value)` options
/// (the trainer's flags), checking that tokenmill can load it. `charsmap`, when given, is the
/// precompiled charsmap to use instead of the named rule's.
#[pyfunction]
#[pyo3(signature = (pieces, options, charsmap=None))]
fn build_model<'py>(
    py: Python<'py>,
    pieces: Vec<(String, f32, i32)>,
    options: Vec<(String, String)>,
    charsmap: Option<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .allow_threads(|| -> tokenmill_core::Result<Vec<u8>> {
            let mut spec = TrainerSpec::default();
            let mut normalizer = NormalizerSpec::default();
            for (name, value) in &options {
                trainer::set_option(&mut spec, &mut normalizer, name, value)?;
            }
            trainer::prepare_normalizer_spec(&mut normalizer)?;
            if let Some(charsmap) = charsmap.filter(|c| !c.is_empty()) {
                normalizer.name = Some("user_defined".into());
                normalizer.precompiled_charsmap = Some(charsmap);
            }
            let proto = ModelProto {
                pieces: pieces
                    .into_iter()
                    .map(|(piece, score, kind)| tokenmill_core::sentencepiece::SentencePiece {
                        piece: Some(piece),
                        score: Some(score),
                        r#type: (kind != 1).then_some(kind),
                    })
                    .collect(),
                trainer_spec: Some(spec),
                normalizer_spec: Some(normalizer),
                self_test_data: None,
                denormalizer_spec: None,
            };
            let bytes = proto.to_bytes();
            Processor::from_bytes(&bytes)?;
            Ok(bytes)
        })
        .py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// The normalizer settings of a serialized model: (charsmap, add_dummy_prefix,
/// remove_extra_whitespaces, treat_whitespace_as_suffix).
#[pyfunction]
fn normalizer_settings<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<(Bound<'py, PyBytes>, bool, bool, bool)> {
    let proto = ModelProto::from_bytes(data).py()?;
    let spec = proto.normalizer_spec();
    let charsmap = spec.precompiled_charsmap.clone().unwrap_or_default();
    Ok((
        PyBytes::new(py, &charsmap),
        spec.add_dummy_prefix(),
        spec.remove_extra_whitespaces(),
        proto.trainer_spec().treat_whitespace_as_suffix(),
    ))
}

/// Parses the `"--flag=value ..."` string form of the training options.
#[pyfunction]
fn parse_flags(args: &str) -> PyResult<Vec<(String, String)>> {
    trainer::parse_flags(args).py()
}

/// sentencepiece's `SetNBestTimeout` (milliseconds; 0 or less: no timeout).
#[pyfunction]
fn set_nbest_timeout(milliseconds: i64) {
    tokenmill_core::sentencepiece::processor::set_nbest_timeout(milliseconds);
}

/// The native side of `SentencePieceNormalizer`: a `NormalizerSpec` (and the model it came
/// from, if any) and the normalizer built from it.
#[pyclass(module = "tokenmill.sentencepiece", name = "Normalizer", frozen)]
pub struct PyNormalizer {
    spec: NormalizerSpec,
    treat_whitespace_as_suffix: bool,
    model: Option<ModelProto>,
    normalizer: SpNormalizer,
}

impl PyNormalizer {
    fn build(
        spec: NormalizerSpec,
        treat_whitespace_as_suffix: bool,
        model: Option<ModelProto>,
    ) -> PyResult<Self> {
        let normalizer = SpNormalizer::new(&spec, treat_whitespace_as_suffix, None).py()?;
        Ok(PyNormalizer { spec, treat_whitespace_as_suffix, model, normalizer })
    }

    /// A spec from rules `(source, target)` (a TSV file or a map), named "user_defined".
    fn from_rules(rules: Vec<(String, String)>) -> PyResult<Self> {
        let mut seen = std::collections::HashSet::new();
        for (source, target) in &rules {
            if source.is_empty() {
                return Err(InvalidArgumentError::new_err(
                    "normalization rule: the source is empty",
                ));
            }
            if source == target {
                return Err(InvalidArgumentError::new_err(format!(
                    "normalization rule: {source:?} maps to itself"
                )));
            }
            if !seen.insert(source.as_str()) {
                return Err(InvalidArgumentError::new_err(format!(
                    "normalization rule: {source:?} is given twice"
                )));
            }
        }
        let spec = NormalizerSpec {
            name: Some("user_defined".into()),
            precompiled_charsmap: Some(rules::compile_charsmap(&rules).py()?),
            ..Default::default()
        };
        Self::build(spec, false, None)
    }
}

#[pymethods]
impl PyNormalizer {
    /// From a serialized model (its normalizer spec and whitespace option).
    #[staticmethod]
    fn from_model(data: &[u8]) -> PyResult<Self> {
        let proto = ModelProto::from_bytes(data).py()?;
        let spec = proto.normalizer_spec();
        Self::build(spec, proto.trainer_spec().treat_whitespace_as_suffix(), Some(proto))
    }

    /// From a serialized `NormalizerSpec`.
    #[staticmethod]
    fn from_spec(data: &[u8]) -> PyResult<Self> {
        let spec = NormalizerSpec::decode(data).map_err(|e| {
            InvalidArgumentError::new_err(format!("cannot parse the normalizer spec: {e}"))
        })?;
        Self::build(spec, false, None)
    }

    /// A built-in rule set (nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf, identity).
    #[staticmethod]
    fn from_rule_name(name: &str) -> PyResult<Self> {
        let mut spec = NormalizerSpec { name: Some(name.into()), ..Default::default() };
        trainer::prepare_normalizer_spec(&mut spec).py()?;
        Self::build(spec, false, None)
    }

    /// Rules from a TSV file (sentencepiece's format: hexadecimal code points).
    #[staticmethod]
    fn from_rule_tsv(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let text = py
            .allow_threads(|| std::fs::read_to_string(&path))
            .map_err(|e| tokenmill_core::Error::io(path.clone(), e))
            .py()?;
        Self::from_rules(rules::rules_from_tsv(&text).py()?)
    }

    /// Rules `(source, target)`.
    #[staticmethod]
    fn from_map(rules: Vec<(String, String)>) -> PyResult<Self> {
        Self::from_rules(rules)
    }

    /// A copy with a whitespace flag changed (add_dummy_prefix, escape_whitespaces,
    /// remove_extra_whitespaces).
    fn with_flag(&self, name: &str, value: bool) -> PyResult<Self> {
        let mut spec = self.spec.clone();
        match name {
            "add_dummy_prefix" => spec.add_dummy_prefix = Some(value),
            "escape_whitespaces" => spec.escape_whitespaces = Some(value),
            "remove_extra_whitespaces" => spec.remove_extra_whitespaces = Some(value),
            other => {
                return Err(InvalidArgumentError::new_err(format!(
                    "unknown normalizer flag {other:?}"
                )))
            }
        }
        let model = self.model.clone().map(|mut m| {
            m.normalizer_spec = Some(spec.clone());
            m
        });
        Self::build(spec, self.treat_whitespace_as_suffix, model)
    }

    /// (normalized text, offsets), see `normalize_text`.
    fn normalize<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
        normalize_text(py, &self.normalizer, text)
    }

    fn serialized_normalizer_spec<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.spec.encode_to_vec())
    }

    /// The model it was loaded from (with any changed flag), or a model holding only the spec.
    fn serialized_model_proto<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let model = self.model.clone().unwrap_or_else(|| ModelProto {
            normalizer_spec: Some(self.spec.clone()),
            ..Default::default()
        });
        PyBytes::new(py, &model.to_bytes())
    }

    /// The rules of the charsmap, sorted by source.
    fn decompile(&self) -> PyResult<Vec<(String, String)>> {
        match self.spec.precompiled_charsmap.as_deref() {
            Some(charsmap) if !charsmap.is_empty() => {
                Ok(Precompiled::from_charsmap(charsmap).py()?.rules())
            }
            _ => Ok(Vec::new()),
        }
    }
}

/// (normalized text, offsets) of a `str` (or UTF-8 `bytes`, giving `bytes`): for a `str`, the
/// character offset in the input of each normalized character, then the input's length; for
/// `bytes`, the byte offset of each normalized byte, then the end (sentencepiece's
/// `_NormalizeWithOffsets`). A lone surrogate is an `InvalidArgumentError`.
fn normalize_text<'py>(
    py: Python<'py>,
    normalizer: &SpNormalizer,
    text: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyAny>, Vec<usize>)> {
    if let Ok(bytes) = text.downcast::<PyBytes>() {
        let input = bytes.as_bytes();
        let n = py.allow_threads(|| normalizer.normalize_bytes(input));
        return Ok((PyBytes::new(py, n.text.as_bytes()).into_any(), n.norm_to_orig));
    }
    let input = str_text(crate::input_texts::as_str(text)?)?;
    let (normalized, offsets) = py.allow_threads(|| {
        let n = normalizer.normalize(input);
        let offsets = char_offsets(input, &n);
        (n.text, offsets)
    });
    Ok((PyString::new(py, &normalized).into_any(), offsets))
}

/// For each normalized character, the character offset in `input` it comes from, and then
/// the character offset of the end (sentencepiece's offsets for `str`).
fn char_offsets(input: &str, normalized: &Normalized) -> Vec<usize> {
    let char_at = char_index_of_bytes(input);
    let map = &normalized.norm_to_orig;
    let mut out: Vec<usize> =
        normalized.text.char_indices().map(|(i, _)| char_at[map[i].min(input.len())]).collect();
    // An empty result has no alignment at all (not even its end): sentencepiece gives [0].
    out.push(char_at[map.last().copied().unwrap_or(0).min(input.len())]);
    out
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProcessor>()?;
    m.add_class::<PyNormalizer>()?;
    m.add_function(wrap_pyfunction!(set_nbest_timeout, m)?)?;
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(parse_flags, m)?)?;
    m.add_function(wrap_pyfunction!(build_model, m)?)?;
    m.add_function(wrap_pyfunction!(normalizer_settings, m)?)?;
    m.add_function(wrap_pyfunction!(convert_to_flatbuffer, m)?)?;
    m.add_function(wrap_pyfunction!(roundtrip_model_proto, m)?)?;
    Ok(())
}

/// `sentencepiece.convert_to_flatbuffer` on a serialized `ModelProto`: the `.spm.fb` bytes.
#[pyfunction]
#[pyo3(signature = (
    data,
    skip_char_bigrams=false,
    treat_null_byte_as_unused=false,
    allow_unsupported_model_type=false,
))]
fn convert_to_flatbuffer<'py>(
    py: Python<'py>,
    data: &[u8],
    skip_char_bigrams: bool,
    treat_null_byte_as_unused: bool,
    allow_unsupported_model_type: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = flatbuffer::ConvertOptions {
        skip_char_bigrams,
        treat_null_byte_as_unused,
        allow_unsupported_model_type,
    };
    let bytes = py
        .allow_threads(|| {
            // sentencepiece's message (and a ValueError there), not our parser's.
            let proto = ModelProto::from_bytes(data).map_err(|_| {
                tokenmill_core::Error::InvalidArgument(
                    "Failed to parse ModelProto from serialized bytes.".into(),
                )
            })?;
            flatbuffer::convert_to_flatbuffer(&proto, &options)
        })
        .py()?;
    Ok(PyBytes::new(py, &bytes))
}
