//! `tokenmill._native.collocations`: n-gram counts, filters and association measures for
//! `tokenmill.collocations` (the NLTK-compatible finders live in Python on top of this).
//!
//! Words cross the boundary as Python `str` (their UTF-8 bytes) or as any other hashable object
//! (NLTK's finders take e.g. `(word, tag)` tuples): [`ObjectWords`] gives each distinct object,
//! by Python equality, a key of bytes that no `str` has, and keeps the object to hand it back.
//! Reading words needs the GIL; counting does not, so tokens are copied out in chunks and each
//! chunk is counted with the GIL released.
use std::os::raw::c_char;
use std::sync::Mutex;

use pyo3::exceptions::{
    PyKeyError, PyOverflowError, PyTypeError, PyValueError, PyZeroDivisionError,
};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use tokenmill_words::collocations::{
    self as core, lane, pack, BigramMarginals, Counts, IntMarginals, Marginals, MathError, Measure,
    NgramKey, SumMode, WindowCounter,
};

use crate::errors::ToPyResult;
use crate::input_texts::str_utf8;
use crate::snapshot_cell::SnapshotCell;

/// Tokens copied out of Python: the bytes of each word, `None` slots as padding.
#[derive(Default)]
struct TokenChunk {
    bytes: Vec<u8>,
    /// `(start, end)` into `bytes`, or `None` for a padding slot.
    spans: Vec<Option<(usize, usize)>>,
}

const CHUNK_TOKENS: usize = 1 << 16;

impl TokenChunk {
    fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }

    fn push_pad(&mut self) {
        self.spans.push(None);
    }

    /// Appends a word (a `str` or another hashable object) or a padding slot (`None`, as
    /// NLTK's padding symbol).
    fn push_object(&mut self, item: &Bound<'_, PyAny>, objects: &mut ObjectWords) -> PyResult<()> {
        if item.is_none() {
            self.push_pad();
            return Ok(());
        }
        let start = self.bytes.len();
        objects.append_key(item, &mut self.bytes)?;
        self.spans.push(Some((start, self.bytes.len())));
        Ok(())
    }

    /// Counts the chunk (no Python objects involved, so the caller releases the GIL).
    fn count_into(&self, counter: &mut WindowCounter) -> tokenmill_core::Result<()> {
        for span in &self.spans {
            match span {
                Some((s, e)) => counter.push_word(&self.bytes[*s..*e])?,
                None => counter.push(None),
            }
        }
        Ok(())
    }
}

/// The words that are not `str`: each distinct object (by Python hash and equality, as a
/// `FreqDist` key) gets the key `0xFF` + its index, bytes that no `str` encodes to (0xFF is
/// never in UTF-8), so the native counter counts them like any word.
#[derive(Default)]
struct ObjectWords {
    /// object → its index in `objects`.
    index: Option<Py<PyDict>>,
    objects: Vec<Py<PyAny>>,
}

const OBJECT_KEY_TAG: u8 = 0xFF;

/// `(id, object)` of every object word, and the dict object → id.
type ResolvedObjects = (Vec<(u32, Py<PyAny>)>, Py<PyDict>);

fn object_key(index: usize) -> [u8; 5] {
    let [a, b, c, d] = (index as u32).to_le_bytes();
    [OBJECT_KEY_TAG, a, b, c, d]
}

impl ObjectWords {
    /// Appends the key bytes of `item` to `out`: the UTF-8 of a `str` (lone surrogates
    /// encoded as "surrogatepass", which sorts in code-point order), else the object's key.
    fn append_key(&mut self, item: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> PyResult<()> {
        if let Ok(text) = item.downcast::<PyString>() {
            match str_utf8(text) {
                Ok(utf8) => out.extend_from_slice(utf8.as_bytes()),
                Err(_) => {
                    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
                    out.extend_from_slice(encoded.downcast::<PyBytes>()?.as_bytes());
                }
            }
            return Ok(());
        }
        let py = item.py();
        let index = self.index.get_or_insert_with(|| PyDict::new(py).unbind()).bind(py);
        // An unhashable word raises TypeError here, as `FreqDist` would.
        let position = match index.get_item(item)? {
            Some(known) => known.extract::<usize>()?,
            None => {
                let position = self.objects.len();
                if position >= u32::MAX as usize {
                    return Err(PyValueError::new_err("too many distinct collocation words"));
                }
                index.set_item(item, position)?;
                self.objects.push(item.clone().unbind());
                position
            }
        };
        out.extend_from_slice(&object_key(position));
        Ok(())
    }

    /// The word id of each object, once the vocabulary is complete.
    fn resolve(self, py: Python<'_>, vocab: &core::Vocab) -> PyResult<Option<ResolvedObjects>> {
        if self.index.is_none() {
            return Ok(None);
        }
        let ids = PyDict::new(py);
        let mut by_id = Vec::with_capacity(self.objects.len());
        for (position, object) in self.objects.into_iter().enumerate() {
            if let Some(id) = vocab.get(&object_key(position)) {
                ids.set_item(object.bind(py), id)?;
                by_id.push((id, object));
            }
        }
        Ok(Some((by_id, ids.unbind())))
    }
}

/// Streams the words of `iterable` into `counter`, `pad_after` padding slots after it.
fn count_iterable(
    py: Python<'_>,
    counter: &mut WindowCounter,
    chunk: &mut TokenChunk,
    objects: &mut ObjectWords,
    iterable: &Bound<'_, PyAny>,
    pad_after: usize,
) -> PyResult<()> {
    for item in iterable.try_iter()? {
        chunk.push_object(&item?, objects)?;
        if chunk.spans.len() >= CHUNK_TOKENS {
            flush(py, counter, chunk)?;
        }
    }
    for _ in 0..pad_after {
        chunk.push_pad();
    }
    Ok(())
}

fn flush(py: Python<'_>, counter: &mut WindowCounter, chunk: &mut TokenChunk) -> PyResult<()> {
    py.allow_threads(|| chunk.count_into(counter)).py()?;
    chunk.clear();
    Ok(())
}

/// The Python exception NLTK's pure-Python measure would raise for this n-gram.
fn math_error(error: MathError, ngram: &str) -> PyErr {
    match error {
        MathError::ZeroDivision => {
            PyZeroDivisionError::new_err(format!("float division by zero (scoring {ngram})"))
        }
        MathError::Domain => PyValueError::new_err(format!("math domain error (scoring {ngram})")),
        MathError::Overflow => PyOverflowError::new_err(format!(
            "integer intermediate beyond 127 bits (scoring {ngram})"
        )),
    }
}

fn sum_mode(compensated: bool) -> SumMode {
    if compensated {
        SumMode::Compensated
    } else {
        SumMode::Plain
    }
}

fn measure_for(name: &str, order: usize) -> PyResult<Measure> {
    match Measure::from_name(name) {
        Some(m) if m.supports(order) => Ok(m),
        Some(_) => Err(PyValueError::new_err(format!(
            "{name} is not defined for n-grams of order {order}"
        ))),
        None => Err(PyValueError::new_err(format!("unknown association measure {name:?}"))),
    }
}

/// The counts of one collocation finder (see `tokenmill_words::collocations::Counts`).
///
/// `rank` releases the GIL while a filter (`apply_freq_filter`, ...) may run in another thread:
/// the counts are a [`SnapshotCell`] (a call works on the counts before or after a filter).
#[pyclass(module = "tokenmill.collocations", name = "NgramCounts", frozen)]
pub struct PyNgramCounts {
    counts: SnapshotCell<Counts>,
    /// The word object of each id whose word is not a `str` (filters never change the words'
    /// ids, so this is fixed when the counts are made).
    objects: Vec<Option<Py<PyAny>>>,
    /// Python `str` of each other word id, made on first use and shared by all returned tuples.
    strings: Mutex<Vec<Option<Py<PyString>>>>,
    /// Word object → id for the words that are not `str` (None when all words are `str`).
    object_ids: Option<Py<PyDict>>,
}

/// A table of `counts` by name.
fn table<'c>(counts: &'c Counts, name: &str) -> PyResult<&'c core::Table> {
    counts
        .table(name)
        .ok_or_else(|| PyKeyError::new_err(format!("no table {name:?} for order {}", counts.order)))
}

impl PyNgramCounts {
    fn wrap(counts: Counts) -> Self {
        PyNgramCounts {
            counts: SnapshotCell::new(counts),
            objects: Vec::new(),
            strings: Mutex::new(Vec::new()),
            object_ids: None,
        }
    }

    /// The counts of `documents` (each an iterable of words, followed by `padding` empty
    /// slots).
    fn counted<'py>(
        py: Python<'py>,
        order: usize,
        window_size: usize,
        documents: impl IntoIterator<Item = PyResult<Bound<'py, PyAny>>>,
        padding: usize,
    ) -> PyResult<Self> {
        let mut counter = WindowCounter::new(order, window_size).py()?;
        let mut chunk = TokenChunk::default();
        let mut objects = ObjectWords::default();
        for document in documents {
            count_iterable(py, &mut counter, &mut chunk, &mut objects, &document?, padding)?;
        }
        flush(py, &mut counter, &mut chunk)?;
        Self::with_objects(py, py.allow_threads(|| counter.finish()), objects)
    }

    /// Counts whose non-`str` words are `objects`.
    fn with_objects(py: Python<'_>, counts: Counts, objects: ObjectWords) -> PyResult<Self> {
        let resolved = objects.resolve(py, &counts.vocab)?;
        let mut wrapped = Self::wrap(counts);
        if let Some((by_id, ids)) = resolved {
            let words = wrapped.counts.get(py).vocab.len();
            wrapped.objects.resize_with(words, || None);
            for (id, object) in by_id {
                wrapped.objects[id as usize] = Some(object);
            }
            wrapped.object_ids = Some(ids);
        }
        Ok(wrapped)
    }

    /// Counts derived from these (same vocabulary), keeping the word objects.
    fn derived(&self, py: Python<'_>, counts: SnapshotCell<Counts>) -> Self {
        PyNgramCounts {
            counts,
            objects: self.objects.iter().map(|o| o.as_ref().map(|o| o.clone_ref(py))).collect(),
            strings: Mutex::new(Vec::new()),
            object_ids: self.object_ids.as_ref().map(|d| d.clone_ref(py)),
        }
    }

    fn word<'py>(&self, py: Python<'py>, counts: &Counts, id: u32) -> PyResult<Bound<'py, PyAny>> {
        if let Some(Some(object)) = self.objects.get(id as usize) {
            return Ok(object.bind(py).clone());
        }
        let id = id as usize;
        // Never waited for with the GIL held: another thread can only hold it with the GIL,
        // e.g. while a finalizer the decoding triggered runs; the str is then made anew.
        let mut fresh = Vec::new();
        let mut strings = self.strings.try_lock();
        let strings: &mut Vec<Option<Py<PyString>>> = match strings.as_deref_mut() {
            Ok(strings) => strings,
            Err(_) => &mut fresh,
        };
        if strings.len() <= id {
            strings.resize_with(counts.vocab.len().max(id + 1), || None);
        }
        if let Some(s) = &strings[id] {
            return Ok(s.bind(py).clone().into_any());
        }
        let bytes = counts.vocab.word(id as u32);
        // SAFETY: a valid buffer and length; the error handler name is a C string literal.
        let s = unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyUnicode_DecodeUTF8(
                    bytes.as_ptr() as *const c_char,
                    bytes.len() as ffi::Py_ssize_t,
                    c"surrogatepass".as_ptr(),
                ),
            )?
        };
        let s = s.downcast_into::<PyString>()?;
        strings[id] = Some(s.clone().unbind());
        Ok(s.into_any())
    }

    /// A key as Python sees it: `str` for words, a tuple of `str` for n-grams.
    fn key_object<'py>(
        &self,
        py: Python<'py>,
        counts: &Counts,
        key: NgramKey,
        arity: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        if arity == 1 {
            return self.word(py, counts, lane(key, 0));
        }
        let words = (0..arity)
            .map(|i| self.word(py, counts, lane(key, i)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PyTuple::new(py, words)?.into_any())
    }

    /// The key of a Python key, or `None` if it cannot be in the table (unknown word, wrong
    /// length, unhashable) — a missing key, as for a `FreqDist`.
    fn key_of(&self, counts: &Counts, key: &Bound<'_, PyAny>, arity: usize) -> Option<NgramKey> {
        let id_of = |w: &Bound<'_, PyAny>| -> Option<u32> {
            if let Ok(s) = w.downcast::<PyString>() {
                return counts.vocab.get(s.to_cow().ok()?.as_bytes());
            }
            let ids = self.object_ids.as_ref()?.bind(w.py());
            ids.get_item(w).ok()??.extract().ok()
        };
        if arity == 1 {
            return id_of(key).map(|id| pack(&[id]));
        }
        let tuple = key.downcast::<PyTuple>().ok()?;
        if tuple.len() != arity {
            return None;
        }
        let ids = tuple.iter().map(|w| id_of(&w)).collect::<Option<Vec<_>>>()?;
        Some(pack(&ids))
    }

    fn ngram_text(&self, py: Python<'_>, counts: &Counts, key: NgramKey) -> String {
        self.key_object(py, counts, key, counts.order)
            .and_then(|k| Ok(k.repr()?.to_string()))
            .unwrap_or_else(|_| "?".into())
    }

    fn marginals_object<'py>(py: Python<'py>, m: &Marginals) -> PyResult<Bound<'py, PyTuple>> {
        Ok(match m {
            Marginals::Bigram(b) => (b.n_ii, (b.n_ix, b.n_xi), b.n_xx).into_pyobject(py)?,
            Marginals::Ngram(n) if n.order == 3 => {
                let p = &n.pairs;
                let u = &n.unigrams;
                (n.ngram, (p[0], p[1], p[2]), (u[0], u[1], u[2]), n.total).into_pyobject(py)?
            }
            Marginals::Ngram(n) => {
                let (t, p, u) = (&n.triples, &n.pairs, &n.unigrams);
                (
                    n.ngram,
                    (t[0], t[1], t[2], t[3]),
                    (p[0], p[1], p[2], p[3], p[4], p[5]),
                    (u[0], u[1], u[2], u[3]),
                    n.total,
                )
                    .into_pyobject(py)?
            }
        })
    }
}

#[pymethods]
impl PyNgramCounts {
    /// Counts the n-grams of `order` (2, 3, 4) in windows of `window_size` over `words`
    /// (an iterable of `str`; `None` items are padding, as in NLTK).
    #[staticmethod]
    fn from_words(order: usize, window_size: usize, words: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::counted(words.py(), order, window_size, [Ok(words.clone())], 0)
    }

    /// Counts each document (an iterable of words) followed by `window_size - 1` padding
    /// slots, so that no window spans two documents (NLTK's `from_documents`).
    #[staticmethod]
    fn from_documents(
        order: usize,
        window_size: usize,
        documents: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = documents.py();
        Self::counted(py, order, window_size, documents.try_iter()?, window_size - 1)
    }

    /// Counts given as tables, for NLTK's constructors (`BigramCollocationFinder(word_fd,
    /// bigram_fd)`): `tables` maps a table name (`word_fd`, `ngram_fd`, `bigram_fd`, ...) to
    /// an iterable of `(key, count)`, keys `str` for words and tuples of `str` otherwise.
    #[staticmethod]
    fn from_tables(
        py: Python<'_>,
        order: usize,
        window_size: usize,
        tables: Vec<(String, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let mut counts = Counts::new(order, window_size).py()?;
        let mut objects = ObjectWords::default();
        let mut key_bytes = Vec::new();
        let names: Vec<&str> = ["word_fd", "ngram_fd"]
            .into_iter()
            .chain(core::auxiliary_tables(order).iter().map(|(n, _)| *n))
            .collect();
        for (name, items) in &tables {
            let Some(slot) = names.iter().position(|n| n == name) else {
                return Err(PyKeyError::new_err(format!("no table {name:?} for order {order}")));
            };
            for item in items.try_iter()? {
                let (key, count): (Bound<'_, PyAny>, u64) = item?.extract()?;
                let words: Vec<Bound<'_, PyAny>> = if slot == 0 {
                    vec![key.clone()]
                } else if key.is_instance_of::<PyString>() {
                    return Err(PyTypeError::new_err(format!(
                        "{name} keys must be tuples of words, got {}",
                        key.repr()?
                    )));
                } else {
                    key.try_iter()?.collect::<PyResult<_>>()?
                };
                let mut ids = Vec::with_capacity(words.len());
                for word in &words {
                    key_bytes.clear();
                    objects.append_key(word, &mut key_bytes)?;
                    ids.push(counts.vocab.intern(&key_bytes).py()?);
                }
                let table = match slot {
                    0 => &mut counts.words,
                    1 => &mut counts.ngrams,
                    i => &mut counts.aux[i - 2],
                };
                if ids.len() != table.arity() {
                    return Err(PyValueError::new_err(format!(
                        "{name} keys must have {} words, got {}",
                        table.arity(),
                        key.repr()?
                    )));
                }
                table.add(pack(&ids), count);
            }
        }
        Self::with_objects(py, counts, objects)
    }

    #[getter]
    fn order(&self, py: Python<'_>) -> usize {
        let counts = self.counts.get(py);
        counts.order
    }

    #[getter]
    fn window_size(&self, py: Python<'_>) -> usize {
        let counts = self.counts.get(py);
        counts.window_size
    }

    /// `word_fd.N()`: the total the measures use.
    #[getter]
    fn n(&self, py: Python<'_>) -> u64 {
        let counts = self.counts.get(py);
        counts.n_total()
    }

    /// A copy of these counts (sharing them until one of the two is filtered).
    fn copy(&self, py: Python<'_>) -> Self {
        self.derived(py, SnapshotCell::shared(self.counts.get(py)))
    }

    /// The counts of `bigram_finder()` (trigram counts only).
    fn bigram_counts(&self, py: Python<'_>) -> PyResult<Self> {
        let counts = self.counts.get(py);
        Ok(self.derived(py, SnapshotCell::new(counts.bigram_counts().py()?)))
    }

    /// Whether some words are not `str` (their order is then Python's, see `words`).
    #[getter]
    fn has_objects(&self) -> bool {
        self.object_ids.is_some()
    }

    /// Every word, by id.
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let counts = self.counts.get(py);
        let list = PyList::empty(py);
        for id in 0..counts.vocab.len() as u32 {
            list.append(self.word(py, &counts, id)?)?;
        }
        Ok(list)
    }

    fn table_len(&self, py: Python<'_>, name: &str) -> PyResult<usize> {
        let counts = self.counts.get(py);
        Ok(table(&counts, name)?.len())
    }

    fn table_total(&self, py: Python<'_>, name: &str) -> PyResult<u64> {
        let counts = self.counts.get(py);
        Ok(table(&counts, name)?.total())
    }

    /// The count of `key` (0 when absent).
    fn table_get(&self, py: Python<'_>, name: &str, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        let counts = self.counts.get(py);
        let table = table(&counts, name)?;
        Ok(self.key_of(&counts, key, table.arity()).map_or(0, |k| table.get(k)))
    }

    fn table_contains(&self, py: Python<'_>, name: &str, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let counts = self.counts.get(py);
        let table = table(&counts, name)?;
        Ok(self.key_of(&counts, key, table.arity()).is_some_and(|k| table.contains(k)))
    }

    /// `(key, count)` pairs in insertion order; with `most_common`, sorted by decreasing count
    /// (stable, as `Counter.most_common`) and cut to `limit`.
    #[pyo3(signature = (name, most_common=false, limit=None))]
    fn table_items<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        most_common: bool,
        limit: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let counts = self.counts.get(py);
        let table = table(&counts, name)?;
        let arity = table.arity();
        let mut entries: Vec<(NgramKey, u64)> = table.iter().collect();
        if most_common {
            entries.sort_by_key(|entry| std::cmp::Reverse(entry.1));
        }
        if let Some(n) = limit {
            entries.truncate(n);
        }
        let list = PyList::empty(py);
        for (key, count) in entries {
            list.append((self.key_object(py, &counts, key, arity)?, count))?;
        }
        Ok(list)
    }

    /// Keys in insertion order.
    fn table_keys<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyList>> {
        let counts = self.counts.get(py);
        let table = table(&counts, name)?;
        let arity = table.arity();
        let keys: Vec<NgramKey> = table.iter().map(|(k, _)| k).collect();
        let list = PyList::empty(py);
        for key in keys {
            list.append(self.key_object(py, &counts, key, arity)?)?;
        }
        Ok(list)
    }

    fn table_values(&self, py: Python<'_>, name: &str) -> PyResult<Vec<u64>> {
        let counts = self.counts.get(py);
        Ok(table(&counts, name)?.iter().map(|(_, c)| c).collect())
    }

    /// Removes candidates whose count is below `min_freq`.
    fn apply_freq_filter(&self, py: Python<'_>, min_freq: f64) -> PyResult<()> {
        self.counts.update(py, |counts| {
            // Kept unless below min_freq (a NaN min_freq keeps all, as NLTK does).
            counts.ngrams.retain(|_, count| (count as f64) >= min_freq || min_freq.is_nan());
            Ok(())
        })
    }

    /// The distinct words of the remaining candidates, as `(ids, words)` in id order.
    fn candidate_words<'py>(&self, py: Python<'py>) -> PyResult<(Vec<u32>, Bound<'py, PyList>)> {
        let counts = self.counts.get(py);
        let mut present = vec![false; counts.vocab.len()];
        for (key, _) in counts.ngrams.iter() {
            for id in counts.ngrams.ids(key) {
                present[id as usize] = true;
            }
        }
        let ids: Vec<u32> = (0..present.len() as u32).filter(|&i| present[i as usize]).collect();
        let list = PyList::empty(py);
        for &id in &ids {
            list.append(self.word(py, &counts, id)?)?;
        }
        Ok((ids, list))
    }

    /// Removes candidates containing any of the word ids `ids`.
    fn drop_words(&self, py: Python<'_>, ids: Vec<u32>) -> PyResult<()> {
        self.counts.update(py, |counts| {
            let mut banned = vec![false; counts.vocab.len()];
            for id in ids {
                if let Some(b) = banned.get_mut(id as usize) {
                    *b = true;
                }
            }
            let order = counts.order;
            counts.ngrams.retain(|key, _| !(0..order).any(|i| banned[lane(key, i) as usize]));
            Ok(())
        })
    }

    /// Removes the candidates at the positions where `drop` is true (`drop` has one flag per
    /// candidate, in table order, as `table_keys("ngram_fd")` lists them).
    fn drop_mask(&self, py: Python<'_>, drop: Vec<bool>) -> PyResult<()> {
        self.counts.update(py, |counts| {
            if drop.len() != counts.ngrams.len() {
                return Err(PyValueError::new_err(format!(
                    "drop_mask needs {} flags, got {}",
                    counts.ngrams.len(),
                    drop.len()
                )));
            }
            let mut position = 0usize;
            counts.ngrams.retain(|_, _| {
                let keep = !drop[position];
                position += 1;
                keep
            });
            Ok(())
        })
    }

    /// `[(ngram, score)]` by decreasing score, ties by the words (NLTK's `score_ngrams`), scored
    /// by the named measure; with `limit`, only the best `limit` (NLTK's `nbest`). The words
    /// compare by `word_ranks` (each word id's position in Python's order of the words) when
    /// given, else as strings (code-point order). With `sort=False`, every candidate's score in
    /// table order, unsorted.
    #[pyo3(signature = (measure, compensated_sum, limit=None, word_ranks=None, sort=true))]
    fn rank<'py>(
        &self,
        py: Python<'py>,
        measure: &str,
        compensated_sum: bool,
        limit: Option<usize>,
        word_ranks: Option<Vec<u32>>,
        sort: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let counts = self.counts.get(py);
        let measure = measure_for(measure, counts.order)?;
        let mode = sum_mode(compensated_sum);
        if let Some(ranks) = &word_ranks {
            if ranks.len() != counts.vocab.len() {
                return Err(PyValueError::new_err(format!(
                    "word_ranks needs one rank per word ({}), got {}",
                    counts.vocab.len(),
                    ranks.len()
                )));
            }
        }
        let ranked = py.allow_threads(|| match (sort, &word_ranks) {
            (false, _) => core::score_all(&counts, measure, mode),
            (true, Some(ranks)) => core::rank_by(&counts, measure, mode, limit, ranks),
            (true, None) => core::rank(&counts, measure, mode, limit),
        });
        let ranked = match ranked {
            Ok(r) => r,
            Err(e) => {
                let text = self.ngram_text(py, &counts, e.key);
                return Err(math_error(e.error, &text));
            }
        };
        let arity = counts.order;
        let list = PyList::empty(py);
        for (key, score) in ranked {
            list.append((self.key_object(py, &counts, key, arity)?, score))?;
        }
        Ok(list)
    }

    /// `[(ngram, marginals)]` for every candidate in table order: the arguments NLTK's
    /// `score_ngram` passes to a measure (for measures written in Python).
    fn marginals_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let counts = self.counts.get(py);
        let word = core::word_counts_by_id(&counts);
        let total = counts.n_total() as i128;
        let entries: Vec<(NgramKey, u64)> = counts.ngrams.iter().filter(|(_, c)| *c > 0).collect();
        let arity = counts.order;
        let list = PyList::empty(py);
        for (key, count) in entries {
            let m = core::marginals(&counts, |id| word[id as usize], total, key, count);
            list.append((
                self.key_object(py, &counts, key, arity)?,
                Self::marginals_object(py, &m)?,
            ))?;
        }
        Ok(list)
    }

    /// The marginals of one n-gram (a tuple of words), or None when it is not a candidate.
    fn marginals_of<'py>(
        &self,
        py: Python<'py>,
        ngram: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let counts = self.counts.get(py);
        let Some(key) = self.key_of(&counts, ngram, counts.order) else { return Ok(None) };
        let count = counts.ngrams.get(key);
        if count == 0 {
            return Ok(None);
        }
        let words = &counts.words;
        let word_count = |id: u32| words.get(pack(&[id])) as i128;
        let m = core::marginals(&counts, word_count, counts.n_total() as i128, key, count);
        Ok(Some(Self::marginals_object(py, &m)?))
    }
}

/// One measure on one set of marginals, in NLTK's argument layout: for bigrams
/// `(n_ii, (n_ix, n_xi), n_xx)`, for trigrams `(n_iii, (3 pairs), (3 words), n_xxx)`, for
/// quadgrams `(n_iiii, (4 triples), (6 pairs), (4 words), n_all)`.
#[pyfunction]
fn score_marginals(
    measure: &str,
    order: usize,
    marginals: &Bound<'_, PyTuple>,
    compensated_sum: bool,
) -> PyResult<f64> {
    let measure = measure_for(measure, order)?;
    let arity_error = || {
        PyTypeError::new_err(format!(
            "{} takes the marginals of an n-gram of order {order}",
            measure.name()
        ))
    };
    let m = match order {
        2 => {
            let (n_ii, (n_ix, n_xi), n_xx): (Bound<'_, PyAny>, (i128, i128), i128) =
                marginals.extract().map_err(|_| arity_error())?;
            // The kernel computes with a float n_ii, as NLTK's finders pass it. An int n_ii
            // (a contingency table, a published count) keeps exact integer arithmetic in NLTK's
            // formulas, as do Fractions or Decimals: the Python layer applies those.
            if !n_ii.is_instance_of::<PyFloat>() {
                return Err(arity_error());
            }
            let n_ii: f64 = n_ii.extract().map_err(|_| arity_error())?;
            Marginals::Bigram(BigramMarginals { n_ii, n_ix, n_xi, n_xx })
        }
        3 => {
            let (ngram, p, u, total): (i128, [i128; 3], [i128; 3], i128) =
                marginals.extract().map_err(|_| arity_error())?;
            Marginals::Ngram(IntMarginals {
                order: 3,
                ngram,
                triples: [0; 4],
                pairs: [p[0], p[1], p[2], 0, 0, 0],
                unigrams: [u[0], u[1], u[2], 0],
                total,
            })
        }
        4 => {
            let (ngram, triples, pairs, unigrams, total): (
                i128,
                [i128; 4],
                [i128; 6],
                [i128; 4],
                i128,
            ) = marginals.extract().map_err(|_| arity_error())?;
            Marginals::Ngram(IntMarginals { order: 4, ngram, triples, pairs, unigrams, total })
        }
        _ => return Err(arity_error()),
    };
    core::score(measure, &m, sum_mode(compensated_sum))
        .map_err(|e| math_error(e, "the given marginals"))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNgramCounts>()?;
    m.add_function(wrap_pyfunction!(score_marginals, m)?)?;
    Ok(())
}
