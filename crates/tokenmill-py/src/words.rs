//! `tokenmill._native.words`: word tokenizer, sentence splitter and character n-grams.
//!
//! Offsets given to Python are character offsets. A `str` with lone surrogates (not valid
//! UTF-8) is tokenized with each surrogate read as U+FFFD — one character for one, so offsets
//! stay right — and token strings are then cut from the original `str`, so no text is lost.
//! Every call that does real work releases the GIL; batch forms run in parallel (rayon).
use std::borrow::Cow;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyString, PyTuple};
use tokenmill_core::utils::atomic::write_atomic;
use tokenmill_core::utils::parallel;
use tokenmill_core::Error;
use tokenmill_words::{
    self as core, CharOffsets, LanguageRules, PunktTrainer, WordToken, WordTokenizerOptions,
};

use crate::errors::ToPyResult;
use crate::snapshot_cell::SnapshotCell;
use crate::{ListResult, PyStr};

mod segmenter;

/// A Python `str` as UTF-8; `lossy` when lone surrogates had to be replaced by U+FFFD.
struct Text<'a> {
    text: Cow<'a, str>,
    lossy: bool,
}

/// The UTF-8 of `s`, borrowed from the str object (see `input_texts::str_text`); a str with
/// lone surrogates is read with each one as U+FFFD.
fn text_of<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Text<'a>> {
    if let Ok(text) = crate::input_texts::str_text(s) {
        return Ok(Text { text: Cow::Borrowed(text), lossy: false });
    }
    let encoded = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let bytes: &[u8] = encoded.extract()?;
    Ok(Text { text: Cow::Owned(surrogates_to_replacement(bytes)), lossy: true })
}

/// Decodes UTF-8 that may hold encoded surrogates (ED A0..BF xx), one U+FFFD per surrogate.
fn surrogates_to_replacement(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        // Each surrogate is 3 invalid bytes; `utf8_chunks` reports them one byte at a time.
        let invalid = chunk.invalid();
        if !invalid.is_empty() && invalid[0] == 0xED {
            out.push('\u{FFFD}');
        }
    }
    out
}

fn texts_of<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Text<'a>>> {
    texts.iter().map(text_of).collect()
}

/// One Python list per text: `compute` runs on every text in parallel without the GIL, then
/// `to_list` makes a text's list from the str, its UTF-8 and what was computed.
fn batch_lists<'py, R: Send>(
    py: Python<'py>,
    texts: &[Bound<'py, PyString>],
    compute: impl Fn(&str) -> R + Sync + Send,
    mut to_list: impl FnMut(&PyStr<'py>, &Text<'_>, &R) -> ListResult<'py>,
) -> ListResult<'py> {
    let prepared = texts_of(texts)?;
    let all: Vec<R> =
        py.allow_threads(|| parallel::map_ref_collect(&prepared, |t| compute(&t.text)));
    let lists: Vec<Bound<'py, PyList>> = texts
        .iter()
        .zip(&prepared)
        .zip(&all)
        .map(|((original, text), computed)| to_list(original, text, computed))
        .collect::<PyResult<_>>()?;
    PyList::new(py, lists)
}

/// Rule-based word tokenizer (see `tokenmill.words.WordTokenizer`).
#[pyclass(module = "tokenmill.words", name = "WordTokenizer", frozen)]
pub struct PyWordTokenizer {
    /// Read by batches without the GIL while `add_abbreviations` may change it (see
    /// `SnapshotCell`).
    state: SnapshotCell<WordTokenizerState>,
}

#[derive(Clone)]
struct WordTokenizerState {
    inner: core::WordTokenizer,
    /// Chinese / Japanese: the dictionary segmenter does the work (see `segmenter`).
    segmenter: Option<std::sync::Arc<core::Segmenter>>,
}

impl WordTokenizerState {
    fn tokens(&self, text: &str) -> Vec<WordToken> {
        match &self.segmenter {
            Some(s) => s.cut(text),
            None => self.inner.tokenize(text),
        }
    }

    /// The Python list of `tokens` (of `text`, read from `original`): their strings, or (with
    /// `with_offsets`) `(token, start, end)` tuples with character offsets.
    fn to_list<'py>(
        &self,
        py: Python<'py>,
        original: &PyStr<'py>,
        text: &Text<'_>,
        tokens: &[WordToken],
        with_offsets: bool,
    ) -> ListResult<'py> {
        if !text.lossy {
            let strings = &mut StringCache::new(tokens.len());
            return cached_token_list(py, original, &text.text, tokens, with_offsets, strings);
        }
        // Lone surrogates were replaced in `text`: a token is sliced from `original` by its
        // character offsets (or is its PTB spelling).
        let mut offsets = CharOffsets::new(&text.text);
        let mut items = Vec::with_capacity(tokens.len());
        for t in tokens {
            let (s, e) = offsets.span(t.start, t.end);
            let token: Bound<'py, PyAny> = match t.replacement {
                None => original.as_any().get_item(PySlice::new(py, s as isize, e as isize, 1))?,
                Some(r) => PyString::new(py, r).into_any(),
            };
            items.push(if with_offsets {
                let (s, e) = (s.into_pyobject(py)?.into_any(), e.into_pyobject(py)?.into_any());
                PyTuple::new(py, [token, s, e])?.into_any()
            } else {
                token
            });
        }
        PyList::new(py, items)
    }
}

/// Builds `list[str]` or `list[tuple[str, int, int]]` (char offsets) with the C API directly:
/// this is the hot path of tokenization from Python (about a million tokens per call for a few
/// MB of text). Short token strings are shared through a per-call cache (see `StringCache`), the
/// others are sliced out of the original `str` (one copy, no UTF-8 decoding), and an offset
/// equal to the previous token's end shares its `int`.
///
/// Each `(str, int, int)` tuple is untracked by the cyclic GC as soon as it is filled: it holds
/// only a str and two ints, so it can never be part of a reference cycle (CPython untracks such
/// tuples itself, but only when a collection happens to look at them). Left tracked, a list of
/// a million fresh tuples made the collections that their allocation triggers rescan them again
/// and again, and the first collection after the call walk all of them.
struct TokenListBuilder<'py, 'a> {
    py: Python<'py>,
    text: &'a str,
    /// The `str` that `text` is the UTF-8 of, when token strings may be sliced out of it.
    original: Option<&'a Bound<'py, PyString>>,
    with_offsets: bool,
    offsets: CharOffsets<'a>,
    strings: &'a mut StringCache,
    items: Vec<Bound<'py, PyAny>>,
    /// The char offset the previous token ended at, and its `int`.
    last_end: Option<(usize, Bound<'py, PyAny>)>,
}

/// A direct-mapped cache of the `str` objects of short tokens (up to 16 bytes: nearly every
/// word), so that a repeated word is one shared `str`. Hand-written rather than a hash map: the
/// key bytes live in the slot, so a lookup is one multiply and two integer compares, where a
/// map keyed by `&str` compares against the word's first occurrence far back in the text (a
/// cache miss per token on a long text). A collision just replaces the slot. Made per call, or
/// kept across calls by an object that is called once per line (`ChineseSegmenter`): `str`
/// objects are immutable, so sharing one between results is invisible to the caller.
pub(crate) struct StringCache {
    bits: u32,
    slots: Vec<CacheSlot>,
}

struct CacheSlot {
    key: (u64, u64, usize),
    string: Option<Py<PyString>>,
}

const CACHE_BITS: u32 = 13;
const CACHE_MAX_BYTES: usize = 16;

impl StringCache {
    /// Sized for the expected number of tokens (at most 2^CACHE_BITS slots): a short text
    /// (one line, one sentence) must not pay for clearing and dropping 8,192 slots per call.
    pub(crate) fn new(expected_tokens: usize) -> Self {
        let bits =
            (expected_tokens.max(32).next_power_of_two().trailing_zeros() + 1).min(CACHE_BITS);
        StringCache {
            bits,
            slots: (0..1usize << bits)
                .map(|_| CacheSlot { key: (0, 0, 0), string: None })
                .collect(),
        }
    }

    /// The `str` for `s`: the cached one, or `make()`'s (cached when `s` is short).
    fn get<'py>(
        &mut self,
        py: Python<'py>,
        s: &str,
        make: impl FnOnce() -> PyResult<Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyString>> {
        let bytes = s.as_bytes();
        if bytes.len() > CACHE_MAX_BYTES {
            return make();
        }
        let mut buf = [0u8; CACHE_MAX_BYTES];
        buf[..bytes.len()].copy_from_slice(bytes);
        let [a, b] = [0, 8].map(|i| {
            u64::from_le_bytes([
                buf[i],
                buf[i + 1],
                buf[i + 2],
                buf[i + 3],
                buf[i + 4],
                buf[i + 5],
                buf[i + 6],
                buf[i + 7],
            ])
        });
        let key = (a, b, bytes.len());
        let hash = (a ^ b.rotate_left(31) ^ ((bytes.len() as u64) << 56))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.slots[(hash >> (64 - self.bits)) as usize];
        match &slot.string {
            Some(cached) if slot.key == key => Ok(cached.bind(py).clone()),
            _ => {
                let fresh = make()?;
                *slot = CacheSlot { key, string: Some(fresh.clone().unbind()) };
                Ok(fresh)
            }
        }
    }
}

impl<'py, 'a> TokenListBuilder<'py, 'a> {
    fn new(
        py: Python<'py>,
        text: &'a str,
        original: Option<&'a Bound<'py, PyString>>,
        with_offsets: bool,
        expected_tokens: usize,
        strings: &'a mut StringCache,
    ) -> Self {
        TokenListBuilder {
            py,
            text,
            original,
            with_offsets,
            offsets: CharOffsets::new(text),
            strings,
            items: Vec::with_capacity(expected_tokens),
            last_end: None,
        }
    }

    fn int(&self, value: usize) -> PyResult<Bound<'py, PyAny>> {
        // PyLong_FromLong has CPython's fast path for one-digit ints (below 2**30), which
        // PyLong_FromSize_t lacks; a char offset always fits a C long on the platforms we build.
        let value = std::os::raw::c_long::try_from(value)
            .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("offset too large"))?;
        // SAFETY: a fresh reference from the C API, NULL turned into the pending exception.
        unsafe { Bound::from_owned_ptr_or_err(self.py, pyo3::ffi::PyLong_FromLong(value)) }
    }

    /// The token's `str`: its replacement (PTB spellings), or the original's chars `cs..ce`.
    fn token_string(
        &mut self,
        t: &WordToken,
        cs: usize,
        ce: usize,
    ) -> PyResult<Bound<'py, PyString>> {
        let (py, original) = (self.py, self.original);
        let s = t.as_str(self.text);
        self.strings.get(py, s, || match (original, t.replacement) {
            (Some(original), None) => {
                // SAFETY: a fresh reference from the C API (NULL: the pending exception); the
                // char offsets are within the str, whose UTF-8 is `text`.
                unsafe {
                    Ok(Bound::from_owned_ptr_or_err(
                        py,
                        pyo3::ffi::PyUnicode_Substring(
                            original.as_ptr(),
                            cs as pyo3::ffi::Py_ssize_t,
                            ce as pyo3::ffi::Py_ssize_t,
                        ),
                    )?
                    .downcast_into_unchecked())
                }
            }
            _ => Ok(PyString::new(py, s)),
        })
    }

    fn push(&mut self, tokens: &[WordToken]) -> PyResult<()> {
        use pyo3::ffi;
        self.items.reserve(tokens.len());
        for t in tokens {
            let (cs, ce) = if self.with_offsets || self.original.is_some() {
                self.offsets.span(t.start, t.end)
            } else {
                (0, 0)
            };
            let string = self.token_string(t, cs, ce)?;
            if !self.with_offsets {
                self.items.push(string.into_any());
                continue;
            }
            let start = match self.last_end.take() {
                Some((e, obj)) if e == cs => obj,
                _ => self.int(cs)?,
            };
            let end = self.int(ce)?;
            let end_ptr = end.as_ptr();
            self.last_end = Some((ce, end));
            // SAFETY: PyTuple_SetItem steals each reference, at indices within the tuple's size
            // (`end` is kept as `last_end`, so its slot gets a new reference); the tuple holds
            // only a str and ints, so untracking it is safe (see the type's docs).
            let tuple = unsafe {
                let tuple = Bound::from_owned_ptr_or_err(self.py, ffi::PyTuple_New(3))?;
                ffi::PyTuple_SetItem(tuple.as_ptr(), 0, string.into_ptr());
                ffi::PyTuple_SetItem(tuple.as_ptr(), 1, start.into_ptr());
                ffi::Py_IncRef(end_ptr);
                ffi::PyTuple_SetItem(tuple.as_ptr(), 2, end_ptr);
                ffi::PyObject_GC_UnTrack(tuple.as_ptr().cast());
                tuple
            };
            self.items.push(tuple);
        }
        Ok(())
    }

    fn finish(self) -> PyResult<Bound<'py, PyList>> {
        use pyo3::ffi;
        // SAFETY: a list of exactly `items.len()` slots, each filled once; SetItem steals.
        unsafe {
            let list = Bound::from_owned_ptr_or_err(
                self.py,
                ffi::PyList_New(self.items.len() as ffi::Py_ssize_t),
            )?;
            for (i, item) in self.items.into_iter().enumerate() {
                ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr());
            }
            Ok(list.downcast_into_unchecked())
        }
    }
}

/// The list of `tokens` of `original` (whose UTF-8 is `text`), as `TokenListBuilder` builds it,
/// with token strings shared through `strings`.
fn cached_token_list<'py>(
    py: Python<'py>,
    original: &Bound<'py, PyString>,
    text: &str,
    tokens: &[WordToken],
    with_offsets: bool,
    strings: &mut StringCache,
) -> PyResult<Bound<'py, PyList>> {
    let mut builder =
        TokenListBuilder::new(py, text, Some(original), with_offsets, tokens.len(), strings);
    builder.push(tokens)?;
    builder.finish()
}

/// Bytes per block when one long text is tokenized block by block (see `stream_token_list`).
const BLOCK_BYTES: usize = 1 << 16;

/// Tokenizes one text and builds its list block by block: each block is tokenized with the
/// GIL released into a small reused vector, then turned into Python objects while both are
/// still in cache. A whole book in one call then costs what its paragraphs cost one by one,
/// where one vector of all tokens (tens of MB, freshly paged in) made it several times slower.
fn stream_token_list<'py>(
    py: Python<'py>,
    tokenizer: &core::WordTokenizer,
    original: &Bound<'py, PyString>,
    text: &str,
    with_offsets: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut strings = StringCache::new(text.len() / 5 + 1);
    let mut builder = TokenListBuilder::new(
        py,
        text,
        Some(original),
        with_offsets,
        text.len() / 5 + 1,
        &mut strings,
    );
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = core::block_end(text, start, BLOCK_BYTES);
        tokens.clear();
        if end - start >= BLOCK_BYTES / 4 {
            py.allow_threads(|| tokenizer.tokenize_range_into(text, start, end, &mut tokens));
        } else {
            tokenizer.tokenize_range_into(text, start, end, &mut tokens);
        }
        builder.push(&tokens)?;
        start = end;
    }
    builder.finish()
}

/// Char offsets of every token of `text`, tokenized block by block (see `stream_token_list`).
fn char_span_arrays(tokenizer: &core::WordTokenizer, text: &str) -> (Vec<i64>, Vec<i64>) {
    let mut offsets = CharOffsets::new(text);
    let (mut starts, mut ends) =
        (Vec::with_capacity(text.len() / 5), Vec::with_capacity(text.len() / 5));
    let mut tokens = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = core::block_end(text, start, BLOCK_BYTES);
        tokens.clear();
        tokenizer.tokenize_range_into(text, start, end, &mut tokens);
        for t in &tokens {
            let (s, e) = offsets.span(t.start, t.end);
            starts.push(s as i64);
            ends.push(e as i64);
        }
        start = end;
    }
    (starts, ends)
}

impl PyWordTokenizer {
    /// The tokens of `text` as strings, or (`with_offsets`) as `(token, start, end)` tuples.
    fn token_list<'py>(&self, text: &PyStr<'py>, with_offsets: bool) -> ListResult<'py> {
        let py = text.py();
        let this = self.state.get(py);
        let t = text_of(text)?;
        if !t.lossy && this.segmenter.is_none() {
            return stream_token_list(py, &this.inner, text, &t.text, with_offsets);
        }
        let tokens = py.allow_threads(|| this.tokens(&t.text));
        this.to_list(py, text, &t, &tokens, with_offsets)
    }

    /// `token_list` of every text, tokenized in parallel.
    fn token_lists<'py>(
        &self,
        py: Python<'py>,
        texts: &[PyStr<'py>],
        with_offsets: bool,
    ) -> ListResult<'py> {
        let this = self.state.get(py);
        let to_list = |o: &PyStr<'py>, t: &Text<'_>, tokens: &Vec<WordToken>| {
            this.to_list(py, o, t, tokens, with_offsets)
        };
        batch_lists(py, texts, |t| this.tokens(t), to_list)
    }
}

#[pymethods]
impl PyWordTokenizer {
    #[new]
    #[pyo3(signature = (
        language="en", penn_treebank=false, split_clitics=true, abbreviations=None, rules=None
    ))]
    fn new(
        py: Python<'_>,
        language: &str,
        penn_treebank: bool,
        split_clitics: bool,
        abbreviations: Option<Vec<String>>,
        rules: Option<&str>,
    ) -> PyResult<Self> {
        let mut rules = match rules {
            Some(json) => LanguageRules::from_json(json).py()?,
            None => LanguageRules::for_language(language),
        };
        if let Some(extra) = abbreviations {
            rules.abbreviations.extend(extra);
        }
        let options = WordTokenizerOptions { penn_treebank, keep_clitics: !split_clitics };
        let segmenter = segmenter::for_language(py, &rules.language)?;
        let inner = core::WordTokenizer::new(rules, options).py()?;
        Ok(PyWordTokenizer { state: SnapshotCell::new(WordTokenizerState { inner, segmenter }) })
    }

    #[getter]
    fn language(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        this.inner.rules().language.clone()
    }

    #[getter]
    fn penn_treebank(&self, py: Python<'_>) -> bool {
        let this = self.state.get(py);
        this.inner.options().penn_treebank
    }

    #[getter]
    fn split_clitics(&self, py: Python<'_>) -> bool {
        let this = self.state.get(py);
        !this.inner.options().keep_clitics
    }

    /// The rules as JSON (abbreviations, elisions, clitic suffixes, ...).
    fn rules_json(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        this.inner.rules().to_json()
    }

    fn add_abbreviations(&self, py: Python<'_>, abbreviations: Vec<String>) -> PyResult<()> {
        self.state.update(py, |this| {
            let mut rules = this.inner.rules().clone();
            rules.abbreviations.extend(abbreviations);
            this.inner = core::WordTokenizer::new(rules, this.inner.options()).py()?;
            Ok(())
        })
    }

    fn tokenize<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.token_list(text, false)
    }

    fn tokenize_with_offsets<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.token_list(text, true)
    }

    /// `(starts, ends)`: the tokens' character offsets as two NumPy int64 arrays, with no
    /// Python object per token (the fast form for long texts; `text[starts[i]:ends[i]]` is
    /// token i as it appears in the text, PTB spellings aside).
    fn tokenize_spans<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<crate::ArrayPair<'py, i64, i64>> {
        let this = self.state.get(py);
        let t = text_of(text)?;
        let (starts, ends) = py.allow_threads(|| match &this.segmenter {
            Some(segmenter) => {
                let mut offsets = CharOffsets::new(&t.text);
                segmenter
                    .cut(&t.text)
                    .iter()
                    .map(|w| offsets.span(w.start, w.end))
                    .map(|(s, e)| (s as i64, e as i64))
                    .unzip()
            }
            None => char_span_arrays(&this.inner, &t.text),
        });
        crate::arrays::array_pair(py, starts, ends)
    }

    fn tokenize_batch<'py>(&self, py: Python<'py>, texts: Vec<PyStr<'py>>) -> ListResult<'py> {
        self.token_lists(py, &texts, false)
    }

    fn tokenize_with_offsets_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyStr<'py>>,
    ) -> ListResult<'py> {
        self.token_lists(py, &texts, true)
    }

    fn __call__<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.token_list(text, false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        let o = this.inner.options();
        format!(
            "WordTokenizer(language={:?}, penn_treebank={}, split_clitics={})",
            this.inner.rules().language,
            if o.penn_treebank { "True" } else { "False" },
            if o.keep_clitics { "False" } else { "True" }
        )
    }

    fn __getstate__(&self, py: Python<'_>) -> (String, bool, bool) {
        let this = self.state.get(py);
        let o = this.inner.options();
        (this.inner.rules().to_json(), o.penn_treebank, o.keep_clitics)
    }

    fn __setstate__(&self, py: Python<'_>, state: (String, bool, bool)) -> PyResult<()> {
        let rules = LanguageRules::from_json(&state.0).py()?;
        let segmenter = segmenter::for_language(py, &rules.language)?;
        let inner = core::WordTokenizer::new(
            rules,
            WordTokenizerOptions { penn_treebank: state.1, keep_clitics: state.2 },
        )
        .py()?;
        self.state.set(py, WordTokenizerState { inner, segmenter })
    }
}

/// Sentence splitter with Punkt parameters (see `tokenmill.words.SentenceSplitter`).
#[pyclass(module = "tokenmill.words", name = "SentenceSplitter", frozen)]
pub struct PySentenceSplitter {
    /// Read by batches without the GIL while training may change it (see `SnapshotCell`).
    state: SnapshotCell<SentenceSplitterState>,
}

#[derive(Clone)]
struct SentenceSplitterState {
    inner: core::SentenceSplitter,
    trainer: Option<PunktTrainer>,
}

impl PySentenceSplitter {
    fn with_splitter(inner: core::SentenceSplitter) -> Self {
        PySentenceSplitter {
            state: SnapshotCell::new(SentenceSplitterState { inner, trainer: None }),
        }
    }
}

fn char_spans(text: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut offsets = CharOffsets::new(text);
    spans.iter().map(|&(s, e)| offsets.span(s, e)).collect()
}

fn slice_sentences<'py>(
    py: Python<'py>,
    original: &Bound<'py, PyString>,
    text: &Text<'_>,
    spans: &[(usize, usize)],
) -> PyResult<Bound<'py, PyList>> {
    if text.lossy {
        let items: Vec<Bound<'py, PyAny>> = char_spans(&text.text, spans)
            .into_iter()
            .map(|(s, e)| original.as_any().get_item(PySlice::new(py, s as isize, e as isize, 1)))
            .collect::<PyResult<_>>()?;
        return PyList::new(py, items);
    }
    PyList::new(py, spans.iter().map(|&(s, e)| &text.text[s..e]))
}

#[pymethods]
impl PySentenceSplitter {
    #[new]
    #[pyo3(signature = (language="en"))]
    fn new(language: Option<&str>) -> Self {
        let inner = match language {
            Some(l) => core::SentenceSplitter::for_language(l),
            None => core::SentenceSplitter::default(),
        };
        PySentenceSplitter::with_splitter(inner)
    }

    #[getter]
    fn language(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        this.inner.language.clone()
    }

    #[getter]
    fn abbreviations(&self, py: Python<'_>) -> Vec<String> {
        let this = self.state.get(py);
        this.inner.params.abbrev_types.iter().cloned().collect()
    }

    #[getter]
    fn sentence_starters(&self, py: Python<'_>) -> Vec<String> {
        let this = self.state.get(py);
        this.inner.params.sent_starters.iter().cloned().collect()
    }

    #[getter]
    fn collocations(&self, py: Python<'_>) -> Vec<(String, String)> {
        let this = self.state.get(py);
        this.inner.params.collocations.iter().cloned().collect()
    }

    fn add_abbreviations(&self, py: Python<'_>, abbreviations: Vec<String>) -> PyResult<()> {
        self.state.update(py, |this| {
            for a in abbreviations {
                this.inner.params.abbrev_types.insert(a.trim_end_matches('.').to_lowercase());
            }
            Ok(())
        })
    }

    fn split<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let this = self.state.get(py);
        let t = text_of(text)?;
        let spans = py.allow_threads(|| this.inner.spans(&t.text));
        slice_sentences(py, text, &t, &spans)
    }

    fn spans(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<Vec<(usize, usize)>> {
        let this = self.state.get(py);
        let t = text_of(text)?;
        Ok(py.allow_threads(|| char_spans(&t.text, &this.inner.spans(&t.text))))
    }

    fn split_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let this = self.state.get(py);
        batch_lists(py, &texts, |t| this.inner.spans(t), |o, t, s| slice_sentences(py, o, t, s))
    }

    fn spans_batch(
        &self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
    ) -> PyResult<Vec<Vec<(usize, usize)>>> {
        let this = self.state.get(py);
        let prepared = texts_of(&texts)?;
        Ok(py.allow_threads(|| {
            parallel::map_ref_collect(&prepared, |t| {
                char_spans(&t.text, &this.inner.spans(&t.text))
            })
        }))
    }

    /// Learns from raw text (a str or an iterable of str); counts accumulate across calls.
    #[pyo3(signature = (text, finalize=true))]
    /// Trains a copy: splitting goes on with the current parameters meanwhile.
    fn train(&self, py: Python<'_>, text: &Bound<'_, PyAny>, finalize: bool) -> PyResult<()> {
        let texts: Vec<String> = match text.downcast::<PyString>() {
            Ok(s) => vec![text_of(s)?.text.into_owned()],
            Err(_) => text
                .try_iter()?
                .map(|t| Ok(text_of(t?.downcast::<PyString>()?)?.text.into_owned()))
                .collect::<PyResult<_>>()?,
        };
        self.state.update_copy(py, |this| {
            let params = this.inner.params.clone();
            let trainer = this.trainer.get_or_insert_with(|| PunktTrainer::with_params(params));
            py.allow_threads(|| {
                for t in &texts {
                    trainer.train(t);
                }
                if finalize {
                    trainer.finalize();
                }
            });
            this.inner.params = trainer.params().clone();
            Ok(())
        })
    }

    /// Derives sentence starters and collocations from what `train(..., finalize=False)` counted.
    fn finalize_training(&self, py: Python<'_>) -> PyResult<()> {
        self.state.update(py, |this| {
            if let Some(trainer) = this.trainer.as_mut() {
                trainer.finalize();
                this.inner.params = trainer.params().clone();
            }
            Ok(())
        })
    }

    fn to_json(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        this.inner.to_json()
    }

    #[staticmethod]
    fn from_json(json: &str) -> PyResult<Self> {
        Ok(PySentenceSplitter::with_splitter(core::SentenceSplitter::from_json(json).py()?))
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let this = self.state.get(py);
        write_atomic(&path, this.inner.to_json().as_bytes()).py()
    }

    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        let json = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e)).py()?;
        let inner = core::SentenceSplitter::from_json(&json).map_err(|e| e.in_file(&path)).py()?;
        Ok(PySentenceSplitter::with_splitter(inner))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        format!(
            "SentenceSplitter(language={:?}, abbreviations={}, sentence_starters={}, \
                collocations={})",
            this.inner.language,
            this.inner.params.abbrev_types.len(),
            this.inner.params.sent_starters.len(),
            this.inner.params.collocations.len()
        )
    }

    fn __getstate__(&self, py: Python<'_>) -> String {
        let this = self.state.get(py);
        this.inner.to_json()
    }

    fn __setstate__(&self, py: Python<'_>, state: &str) -> PyResult<()> {
        let inner = core::SentenceSplitter::from_json(state).py()?;
        self.state.set(py, SentenceSplitterState { inner, trainer: None })
    }
}

/// Overlapping character k-grams per word, the first of each word marked.
#[pyfunction]
#[pyo3(signature = (text, k, mark="#"))]
fn char_ngrams(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    k: usize,
    mark: &str,
) -> PyResult<Vec<String>> {
    let t = text_of(text)?;
    Ok(py.allow_threads(|| core::char_ngrams(&t.text, k, mark)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWordTokenizer>()?;
    m.add_class::<PySentenceSplitter>()?;
    segmenter::register(m)?;
    m.add_function(wrap_pyfunction!(char_ngrams, m)?)?;
    m.add("LANGUAGES", core::LANGUAGES.to_vec())?;
    Ok(())
}
