//! `tokenmill._native.tiktoken`: the native core behind `tokenmill.tiktoken.Encoding`.
//!
//! Text arguments arrive as `str`; a `str` holding lone surrogates cannot be UTF-8 and raises
//! `UnicodeEncodeError`, which the Python layer catches to apply tiktoken's fix-up. Every call
//! that does real work releases the GIL.
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use numpy::PyArray1;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rustc_hash::FxHashMap;
use tokenmill_core::tiktoken::{self as core, CoreBpe, Rank, Ranks};

use crate::errors::ToPyResult;
use crate::id_lists::IdObjects;
use crate::{ListResult, PyStr};

/// Rank-based byte-level BPE: split pattern + mergeable ranks + special tokens.
#[pyclass(module = "tokenmill.tiktoken", name = "CoreBPE", frozen)]
pub struct PyCoreBpe {
    inner: Arc<CoreBpe>,
    /// The int objects of the ids it returns in lists.
    id_objects: Arc<IdObjects>,
}

fn ranks_from_dict(dict: &Bound<'_, PyDict>) -> PyResult<Ranks> {
    let mut ranks = Ranks::default();
    ranks.reserve(dict.len());
    for (token, rank) in dict.iter() {
        let token = token.downcast::<PyBytes>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("mergeable_ranks keys must be bytes")
        })?;
        ranks.insert(token.as_bytes().to_vec(), rank.extract::<Rank>()?);
    }
    Ok(ranks)
}

fn text_of<'a>(text: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    text.to_cow()
}

fn texts_of(texts: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    texts.try_iter()?.map(|t| Ok(t?.downcast::<PyString>()?.to_cow()?.into_owned())).collect()
}

impl PyCoreBpe {
    /// The ids of `text`, special tokens in `allowed_special` as their ids (without the GIL).
    fn encode_ids(
        &self,
        text: &PyStr<'_>,
        allowed_special: &HashSet<String>,
    ) -> PyResult<Vec<Rank>> {
        let py = text.py();
        let text = text_of(text)?;
        py.allow_threads(|| self.inner.encode(&text, |s| allowed_special.contains(s))).py()
    }
}

#[pymethods]
impl PyCoreBpe {
    /// `CoreBPE(mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int], pat_str: str)`
    #[new]
    fn new(
        py: Python<'_>,
        mergeable_ranks: &Bound<'_, PyDict>,
        special_tokens: HashMap<String, Rank>,
        pat_str: &str,
    ) -> PyResult<Self> {
        let ranks = ranks_from_dict(mergeable_ranks)?;
        let specials: FxHashMap<String, Rank> = special_tokens.into_iter().collect();
        let pattern = pat_str.to_string();
        let inner = py.allow_threads(|| CoreBpe::new(ranks, specials, &pattern)).py()?;
        Ok(PyCoreBpe { inner: Arc::new(inner), id_objects: Arc::default() })
    }

    /// Builds the core from a `.tiktoken` file, plus `extra_ranks` (e.g. p50k's space tokens).
    #[staticmethod]
    #[pyo3(signature = (path, special_tokens, pat_str, extra_ranks=None))]
    fn from_file(
        py: Python<'_>,
        path: PathBuf,
        special_tokens: HashMap<String, Rank>,
        pat_str: &str,
        extra_ranks: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let extra = extra_ranks.map(ranks_from_dict).transpose()?;
        let specials: FxHashMap<String, Rank> = special_tokens.into_iter().collect();
        let pattern = pat_str.to_string();
        let inner = py
            .allow_threads(|| {
                let mut ranks = core::load_tiktoken_bpe(&path)?;
                ranks.extend(extra.unwrap_or_default());
                CoreBpe::new(ranks, specials, &pattern)
            })
            .py()?;
        Ok(PyCoreBpe { inner: Arc::new(inner), id_objects: Arc::default() })
    }

    /// Token ids of `text`, special-token text encoded as ordinary text.
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &PyStr<'py>) -> ListResult<'py> {
        let text = text_of(text)?;
        let ids = py.allow_threads(|| self.inner.encode_ordinary(&text)).py()?;
        self.id_objects.list(py, &ids)
    }

    /// Token ids of `text`; special tokens in `allowed_special` become their ids.
    fn encode<'py>(&self, text: &PyStr<'py>, allowed_special: HashSet<String>) -> ListResult<'py> {
        let ids = self.encode_ids(text, &allowed_special)?;
        self.id_objects.list(text.py(), &ids)
    }

    /// `encode` with the ids in a NumPy uint32 array.
    fn encode_to_numpy<'py>(
        &self,
        text: &PyStr<'py>,
        allowed_special: HashSet<String>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        crate::arrays::array(text.py(), self.encode_ids(text, &allowed_special)?)
    }

    /// `encode` of every text, in parallel; with `allowed_special` None, `encode_ordinary`.
    #[pyo3(signature = (texts, allowed_special, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        allowed_special: Option<HashSet<String>>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts = texts_of(texts)?;
        let batches = py
            .allow_threads(|| match &allowed_special {
                None => self.inner.encode_ordinary_batch(&texts, num_threads),
                Some(allowed) => {
                    self.inner.encode_batch(&texts, |s| allowed.contains(s), num_threads)
                }
            })
            .py()?;
        self.id_objects.lists(py, &batches)
    }

    /// `(ids, offsets)`: every text's ids in one uint32 array; text i is
    /// `ids[offsets[i]:offsets[i+1]]`.
    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_ordinary_batch_to_numpy<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<crate::ArrayPair<'py, Rank, i64>> {
        let texts = texts_of(texts)?;
        let (ids, offsets) =
            py.allow_threads(|| self.inner.encode_ordinary_batch_flat(&texts, num_threads)).py()?;
        let offsets: Vec<i64> = offsets.into_iter().map(|o| o as i64).collect();
        crate::arrays::array_pair(py, ids, offsets)
    }

    /// Encodes bytes that may not be valid UTF-8, as tiktoken's `_encode_bytes`: the valid
    /// prefix as text, its last piece re-encoded together with the invalid rest.
    #[pyo3(name = "_encode_bytes")]
    fn encode_bytes<'py>(&self, py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py.allow_threads(|| self.inner.encode_bytes(bytes)).py()?;
        self.id_objects.list(py, &ids)
    }

    /// `(stable_ids, completions)`: the ids of `text` that more text cannot change, and the
    /// id sequences that may follow them (tiktoken's `encode_with_unstable`; sorted here).
    fn encode_with_unstable(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        allowed_special: HashSet<String>,
    ) -> PyResult<(Vec<Rank>, Vec<Vec<Rank>>)> {
        let text = text_of(text)?;
        py.allow_threads(|| self.inner.encode_with_unstable(&text, |s| allowed_special.contains(s)))
            .py()
    }

    /// Encodes bytes as one piece (no splitting, no special tokens).
    fn encode_single_piece(&self, py: Python<'_>, piece: &[u8]) -> PyResult<Vec<Rank>> {
        py.allow_threads(|| self.inner.encode_single_piece(piece)).py()
    }

    /// The id of bytes that are exactly one token (ordinary or special); KeyError otherwise.
    fn encode_single_token(&self, py: Python<'_>, token: &[u8]) -> PyResult<Rank> {
        self.inner
            .encode_single_token(token)
            .ok_or_else(|| PyKeyError::new_err(PyBytes::new(py, token).unbind()))
    }

    /// The concatenated bytes of `tokens`.
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.allow_threads(|| self.inner.decode_bytes(&tokens)).py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of one token.
    fn decode_single_token_bytes<'py>(
        &self,
        py: Python<'py>,
        token: Rank,
    ) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.inner.decode_single_token_bytes(token).py()?))
    }

    /// The bytes of each token.
    fn decode_tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        tokens: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyList>> {
        let parts = tokens
            .iter()
            .map(|&t| Ok(PyBytes::new(py, self.inner.decode_single_token_bytes(t).py()?)))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, parts)
    }

    /// The bytes of every ordinary token, sorted.
    fn token_byte_values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.token_byte_values().into_iter().map(|b| PyBytes::new(py, b)))
    }

    /// The mergeable ranks as a new dict (bytes → rank).
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let mut sorted: Vec<(Vec<u8>, Rank)> = self.inner.mergeable_ranks().into_iter().collect();
        sorted.sort_unstable_by_key(|&(_, r)| r);
        for (token, rank) in sorted {
            dict.set_item(PyBytes::new(py, &token), rank)?;
        }
        Ok(dict)
    }

    /// The special tokens as a new dict (str → id).
    fn special_tokens(&self) -> HashMap<String, Rank> {
        self.inner.special_tokens().iter().map(|(k, &v)| (k.clone(), v)).collect()
    }

    /// Number of mergeable ranks.
    fn n_ranks(&self) -> usize {
        self.inner.n_ranks()
    }

    /// The largest id (ordinary or special), or None if there is none.
    fn max_token_value(&self) -> Option<Rank> {
        self.inner.max_token_value()
    }

    /// The split pattern.
    #[getter]
    fn pat_str(&self) -> &str {
        self.inner.pattern()
    }

    /// Whether a hand-written scanner (not the general regex engine) splits the text.
    #[getter]
    fn uses_scanner(&self) -> bool {
        tokenmill_core::utils::regex::Regex::new(self.inner.pattern())
            .map(|r| r.uses_scanner())
            .unwrap_or(false)
    }
}

/// Reads a `.tiktoken` file into a dict (bytes → rank); FormatError names the bad line.
#[pyfunction]
fn load_tiktoken_bpe<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let ranks = py.allow_threads(|| core::load_tiktoken_bpe(&path)).py()?;
    let mut sorted: Vec<(Vec<u8>, Rank)> = ranks.into_iter().collect();
    sorted.sort_unstable_by_key(|&(_, r)| r);
    let dict = PyDict::new(py);
    for (token, rank) in sorted {
        dict.set_item(PyBytes::new(py, &token), rank)?;
    }
    Ok(dict)
}

/// Writes a dict (bytes → rank) as a `.tiktoken` file, atomically.
#[pyfunction]
fn dump_tiktoken_bpe(py: Python<'_>, ranks: &Bound<'_, PyDict>, path: PathBuf) -> PyResult<()> {
    let ranks = ranks_from_dict(ranks)?;
    py.allow_threads(|| core::dump_tiktoken_bpe(&ranks, &path)).py()
}

/// Split `text` with `pattern` (scanner when known, else fancy-regex); `backtracking=True`
/// forces the general engine. For differential tests.
#[pyfunction]
#[pyo3(signature = (pattern, text, backtracking=false))]
fn split_spans(
    py: Python<'_>,
    pattern: &str,
    text: &Bound<'_, PyString>,
    backtracking: bool,
) -> PyResult<Vec<(usize, usize)>> {
    use tokenmill_core::utils::regex::Regex;
    let text = text_of(text)?;
    let regex =
        if backtracking { Regex::new_backtracking(pattern) } else { Regex::new(pattern) }.py()?;
    py.allow_threads(|| regex.find_spans(&text)).py()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoreBpe>()?;
    m.add_function(wrap_pyfunction!(load_tiktoken_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(dump_tiktoken_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(split_spans, m)?)?;
    Ok(())
}
