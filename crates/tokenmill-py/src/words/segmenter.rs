//! `tokenmill._native.words.ChineseSegmenter`: dictionary + HMM word segmentation for Chinese
//! and Japanese (core: `tokenmill_words::segmenter`).
//!
//! The built-in dictionaries are built once per process and shared (`Arc`); a segmenter that
//! changes its words (`load_dictionary`, `add_word`) gets its own copy first.
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use macro_rules_attribute::apply;
use pyo3::prelude::*;
use pyo3::types::{PyList, PySlice, PyString, PyTuple, PyType};
use tokenmill_core::utils::atomic::write_atomic;
use tokenmill_core::Error;
use tokenmill_words::{CharOffsets, WordToken};
use tokenmill_words::{Segmenter, SegmenterLanguage, SegmenterOptions, SegmenterTrainer};

use super::{batch_lists, cached_token_list, text_of, StringCache, Text};
use crate::errors::ToPyResult;
use crate::gc_pause::GcPause;
use crate::snapshot_cell::SnapshotCell;
use crate::{ListResult, PyStr};

/// Texts shorter than this are cut without releasing the GIL (see `cut_list`).
const SHORT_TEXT_BYTES: usize = 4096;
/// Words whose `str` a segmenter keeps between calls (see `PySegmenter::strings`).
const KEPT_STRINGS: usize = 4096;

static DEFAULT_CHINESE: OnceLock<Arc<Segmenter>> = OnceLock::new();
static DEFAULT_JAPANESE: OnceLock<Arc<Segmenter>> = OnceLock::new();

fn default_options(language: SegmenterLanguage) -> SegmenterOptions {
    // The HMM is trained on Chinese; Japanese has none unless the user trains one.
    SegmenterOptions { hmm: language == SegmenterLanguage::Chinese, numbers: true }
}

/// The built-in segmenter of a language, from the word list shipped as package data (read by
/// `tokenmill.words._default_word_list`; `word [freq]` per line): Chinese from CC-CEDICT's
/// headwords (no frequencies), Japanese from IPADIC (frequencies from its word costs).
pub(crate) fn default_segmenter(
    py: Python<'_>,
    language: SegmenterLanguage,
) -> PyResult<Arc<Segmenter>> {
    let cell = match language {
        SegmenterLanguage::Chinese => &DEFAULT_CHINESE,
        SegmenterLanguage::Japanese => &DEFAULT_JAPANESE,
    };
    if let Some(s) = cell.get() {
        return Ok(s.clone());
    }
    let words: Option<String> = py
        .import("tokenmill.words")?
        .getattr("_default_word_list")?
        .call1((language.code(),))?
        .extract()?;
    let options = default_options(language);
    let built = py
        .allow_threads(|| -> tokenmill_core::Result<Segmenter> {
            match words {
                None => Ok(Segmenter::empty(language, options)),
                Some(text) => {
                    let mut trainer = SegmenterTrainer::new();
                    for (index, line) in
                        text.lines().map(str::trim).enumerate().filter(|(_, l)| !l.is_empty())
                    {
                        let entry = tokenmill_words::parse_dictionary_line(line, index + 1)?;
                        trainer.feed_word(&entry.word, entry.freq);
                    }
                    trainer.finish(language, options)
                }
            }
        })
        .py()?;
    Ok(cell.get_or_init(|| Arc::new(built)).clone())
}

/// The segmenter `WordTokenizer(language)` uses: the built-in one for "zh" / "ja", else none.
pub(crate) fn for_language(py: Python<'_>, language: &str) -> PyResult<Option<Arc<Segmenter>>> {
    let code = language.to_ascii_lowercase();
    let primary = code.split(['-', '_']).next().unwrap_or("");
    match SegmenterLanguage::from_code(primary) {
        Ok(l) => Ok(Some(default_segmenter(py, l)?)),
        Err(_) => Ok(None),
    }
}

/// Dictionary + HMM word segmenter (see `tokenmill.words.ChineseSegmenter`).
#[pyclass(subclass, module = "tokenmill.words", name = "ChineseSegmenter", frozen)]
pub struct PySegmenter {
    /// Read by batches without the GIL while a setter may change it (see `SnapshotCell`).
    inner: SnapshotCell<Segmenter>,
    /// The `str` objects of recent words, shared by the lists of successive calls: a segmenter
    /// is called once per line, and a few thousand words make most of any Chinese text, so a
    /// word is mostly a reference count rather than a new `str` (see `StringCache`). Clones
    /// share it (it maps text to equal `str`s, whatever the words).
    strings: Arc<Mutex<StringCache>>,
}

fn token_list<'py>(
    py: Python<'py>,
    original: &Bound<'py, PyString>,
    text: &Text<'_>,
    tokens: &[WordToken],
    with_offsets: bool,
    strings: &mut StringCache,
) -> PyResult<Bound<'py, PyList>> {
    if !text.lossy {
        return cached_token_list(py, original, &text.text, tokens, with_offsets, strings);
    }
    // Lone surrogates: cut the words out of the original str by char offsets.
    let mut offsets = CharOffsets::new(&text.text);
    let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let (s, e) = offsets.span(t.start, t.end);
        let word = original.as_any().get_item(PySlice::new(py, s as isize, e as isize, 1))?;
        items.push(if with_offsets {
            PyTuple::new(
                py,
                [word, s.into_pyobject(py)?.into_any(), e.into_pyobject(py)?.into_any()],
            )?
            .into_any()
        } else {
            word
        });
    }
    PyList::new(py, items)
}

fn paths_of(files: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(p) = files.extract::<PathBuf>() {
        return Ok(vec![p]);
    }
    files.try_iter()?.map(|f| f?.extract::<PathBuf>()).collect()
}

enum TrainingFormat {
    Segmented,
    Words,
}

fn training_format(format: &str) -> PyResult<TrainingFormat> {
    match format {
        "segmented" => Ok(TrainingFormat::Segmented),
        "words" | "dictionary" => Ok(TrainingFormat::Words),
        other => Err(Error::InvalidArgument(format!(
            "format must be 'segmented' or 'words', not {other:?}"
        )))
        .py(),
    }
}

impl PySegmenter {
    fn with_segmenter(inner: Arc<Segmenter>) -> Self {
        PySegmenter {
            inner: SnapshotCell::shared(inner),
            strings: Arc::new(Mutex::new(StringCache::new(KEPT_STRINGS / 2))),
        }
    }

    /// The current segmenter (a snapshot: later changes do not show in it).
    fn segmenter(&self, py: Python<'_>) -> Arc<Segmenter> {
        self.inner.get(py)
    }

    /// Builds result lists with the kept strings (a fresh cache if another thread holds them,
    /// which the GIL makes impossible today) and, for `(word, start, end)` tuples, the cyclic
    /// GC paused (see `GcPause::always`).
    fn build_lists<'py, T>(
        &self,
        py: Python<'py>,
        with_offsets: bool,
        build: impl FnOnce(&mut StringCache) -> PyResult<T>,
    ) -> PyResult<T> {
        let _pause = if with_offsets { Some(GcPause::always(py)?) } else { None };
        match self.strings.try_lock() {
            Ok(mut strings) => build(&mut strings),
            Err(_) => build(&mut StringCache::new(KEPT_STRINGS / 2)),
        }
    }

    fn cut_list<'py>(&self, text: &PyStr<'py>, with_offsets: bool) -> ListResult<'py> {
        let py = text.py();
        let t = text_of(text)?;
        // A short text (a line, a sentence) is cut with the GIL held: releasing and taking it
        // back would cost more than the cut itself saves other threads.
        let segmenter = self.segmenter(py);
        let tokens = if t.text.len() < SHORT_TEXT_BYTES {
            segmenter.cut(&t.text)
        } else {
            py.allow_threads(|| segmenter.cut(&t.text))
        };
        self.build_lists(py, with_offsets, |strings| {
            token_list(py, text, &t, &tokens, with_offsets, strings)
        })
    }

    fn cut_lists<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyStr<'py>>,
        with_offsets: bool,
    ) -> ListResult<'py> {
        let segmenter = self.segmenter(py);
        self.build_lists(py, with_offsets, |strings| {
            let to_list = |o: &PyStr<'py>, t: &Text<'_>, tokens: &Vec<WordToken>| {
                token_list(py, o, t, tokens, with_offsets, strings)
            };
            batch_lists(py, &texts, |t| segmenter.cut(t), to_list)
        })
    }

    fn trained(
        &self,
        py: Python<'_>,
        feed: impl FnOnce(&mut SegmenterTrainer) -> tokenmill_core::Result<()> + Send,
    ) -> PyResult<Segmenter> {
        let segmenter = self.segmenter(py);
        let (language, options) = (segmenter.language(), segmenter.options());
        py.allow_threads(|| {
            let mut trainer = SegmenterTrainer::new();
            feed(&mut trainer)?;
            trainer.finish(language, options)
        })
        .py()
    }
}

/// Applied to the segmenter's `#[pymethods]` block (`#[apply(option_properties!)]`: PyO3 takes
/// one block per class), adds a property for each boolean option listed here (a
/// `SegmenterOptions` field).
macro_rules! option_properties {
    ($pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }) => {
        option_properties! { @options hmm, numbers; $pound $pymethods impl $Class { $($methods)* } }
    };
    (
        @options $($option:ident),*;
        $pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }
    ) => {pastey::paste! {
        $pound $pymethods
        impl $Class {
            $($methods)*

            $(
                #[getter]
                fn [<get_ $option>](&self, py: Python<'_>) -> bool {
                    self.segmenter(py).options().$option
                }

                #[setter]
                fn [<set_ $option>](&self, py: Python<'_>, value: bool) -> PyResult<()> {
                    self.inner.update(py, |s| {
                        s.set_options(SegmenterOptions { $option: value, ..s.options() });
                        Ok(())
                    })
                }
            )*
        }
    }};
}

#[apply(option_properties!)]
#[pymethods]
impl PySegmenter {
    #[new]
    #[pyo3(signature = (dictionary=None, hmm=None, numbers=true, language="zh"))]
    fn new(
        py: Python<'_>,
        dictionary: Option<PathBuf>,
        hmm: Option<bool>,
        numbers: bool,
        language: &str,
    ) -> PyResult<Self> {
        let language = SegmenterLanguage::from_code(language).py()?;
        let options =
            SegmenterOptions { hmm: hmm.unwrap_or(default_options(language).hmm), numbers };
        let mut inner = match dictionary {
            None => default_segmenter(py, language)?,
            Some(path) => Arc::new(
                py.allow_threads(|| {
                    let mut trainer = SegmenterTrainer::new();
                    trainer.feed_word_list_file(&path)?;
                    trainer.finish(language, options)
                })
                .py()?,
            ),
        };
        if inner.options() != options {
            Arc::make_mut(&mut inner).set_options(options);
        }
        Ok(PySegmenter::with_segmenter(inner))
    }

    /// A segmenter without words (Chinese: one word per character, numbers and Latin words by
    /// rule; Japanese: runs of one character type).
    #[staticmethod]
    #[pyo3(signature = (language="zh"))]
    fn empty(language: &str) -> PyResult<Self> {
        let language = SegmenterLanguage::from_code(language).py()?;
        Ok(PySegmenter::with_segmenter(Arc::new(Segmenter::empty(
            language,
            default_options(language),
        ))))
    }

    #[getter]
    fn language(&self, py: Python<'_>) -> &'static str {
        self.segmenter(py).language().code()
    }

    /// Whether an HMM for unknown words is present (trained or built in).
    #[getter]
    fn has_hmm_model(&self, py: Python<'_>) -> bool {
        self.segmenter(py).hmm().is_some()
    }

    #[getter]
    fn total(&self, py: Python<'_>) -> u64 {
        self.segmenter(py).dictionary().total()
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.segmenter(py).dictionary().len()
    }

    fn __contains__(&self, py: Python<'_>, word: &str) -> bool {
        self.segmenter(py).dictionary().contains(word)
    }

    fn freq(&self, py: Python<'_>, word: &str) -> u64 {
        self.segmenter(py).dictionary().freq(word)
    }

    fn cut<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.cut_list(text, false)
    }

    fn cut_with_offsets<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.cut_list(text, true)
    }

    fn cut_batch<'py>(&self, py: Python<'py>, texts: Vec<PyStr<'py>>) -> ListResult<'py> {
        self.cut_lists(py, texts, false)
    }

    fn cut_with_offsets_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyStr<'py>>,
    ) -> ListResult<'py> {
        self.cut_lists(py, texts, true)
    }

    fn __call__<'py>(&self, text: &PyStr<'py>) -> ListResult<'py> {
        self.cut_list(text, false)
    }

    /// Adds a user dictionary in jieba's format on top of the current words; returns the
    /// number of entries read.
    fn load_dictionary(&self, py: Python<'_>, path: PathBuf) -> PyResult<usize> {
        self.inner
            .update(py, |segmenter| py.allow_threads(|| segmenter.load_user_dictionary(&path)).py())
    }

    #[pyo3(signature = (word, freq=None))]
    fn add_word(&self, py: Python<'_>, word: String, freq: Option<u64>) -> PyResult<()> {
        self.inner.update(py, |s| s.add_words([(word, freq)]).py())?;
        Ok(())
    }

    fn del_word(&self, py: Python<'_>, word: String) -> PyResult<()> {
        self.inner.update(py, |s| s.add_words([(word, Some(0))]).py())?;
        Ok(())
    }

    fn suggest_freq(&self, py: Python<'_>, word: &str) -> u64 {
        self.segmenter(py).suggest_freq(word)
    }

    /// Replaces words and HMM by those learned from files.
    #[pyo3(signature = (files, format="segmented"))]
    fn train(&self, py: Python<'_>, files: &Bound<'_, PyAny>, format: &str) -> PyResult<()> {
        let paths = paths_of(files)?;
        let format = training_format(format)?;
        let trained = self.trained(py, |t| {
            for p in &paths {
                match format {
                    TrainingFormat::Segmented => t.feed_segmented_file(p)?,
                    TrainingFormat::Words => t.feed_word_list_file(p)?,
                }
            }
            Ok(())
        })?;
        self.inner.set(py, trained)
    }

    /// Replaces words and HMM by those learned from lines (an iterable of str).
    #[pyo3(signature = (lines, format="segmented"))]
    fn train_from_iterator(
        &self,
        py: Python<'_>,
        lines: &Bound<'_, PyAny>,
        format: &str,
    ) -> PyResult<()> {
        let format = training_format(format)?;
        let mut collected: Vec<String> = Vec::new();
        for line in lines.try_iter()? {
            collected.push(line?.extract::<String>()?);
        }
        let trained = self.trained(py, |t| {
            for (index, line) in collected.iter().enumerate() {
                match format {
                    TrainingFormat::Segmented => t.feed_segmented_line(line),
                    TrainingFormat::Words => {
                        let line = line.trim();
                        if line.is_empty() {
                            continue;
                        }
                        let entry = tokenmill_words::parse_dictionary_line(line, index + 1)?;
                        t.feed_word(&entry.word, entry.freq);
                    }
                }
            }
            Ok(())
        })?;
        self.inner.set(py, trained)
    }

    fn to_json(&self, py: Python<'_>) -> String {
        let segmenter = self.segmenter(py);
        py.allow_threads(|| segmenter.to_json())
    }

    /// A saved segmenter (see `load`).
    #[classmethod]
    fn from_json<'py>(cls: &Bound<'py, PyType>, json: &str) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let inner = py.allow_threads(|| Segmenter::from_json(json)).py()?;
        instance_of(cls, inner)
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let json = self.to_json(py);
        write_atomic(&path, json.as_bytes()).py()
    }

    /// A saved segmenter, as an instance of the class it was saved from: `JapaneseSegmenter`
    /// for a Japanese one loaded through `ChineseSegmenter.load`, else the class called.
    #[classmethod]
    fn load<'py>(cls: &Bound<'py, PyType>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let json = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e)).py()?;
        let inner =
            py.allow_threads(|| Segmenter::from_json(&json)).map_err(|e| e.in_file(&path)).py()?;
        instance_of(cls, inner)
    }

    fn __getstate__(&self, py: Python<'_>) -> String {
        self.to_json(py)
    }

    fn __setstate__(&self, py: Python<'_>, state: &str) -> PyResult<()> {
        self.inner.set(py, py.allow_threads(|| Segmenter::from_json(state)).py()?)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let segmenter = self.segmenter(py);
        let o = segmenter.options();
        let py_bool = |b: bool| if b { "True" } else { "False" };
        format!(
            "ChineseSegmenter(language={:?}, words={}, hmm={}, numbers={})",
            segmenter.language().code(),
            segmenter.dictionary().len(),
            py_bool(o.hmm),
            py_bool(o.numbers)
        )
    }
}

/// `segmenter` wrapped in `cls`, or in `tokenmill.words.JapaneseSegmenter` when `cls` is the
/// base class and the segmenter is Japanese (so that saving and loading keeps the class). A
/// Python subclass is instantiated with no arguments and then given the segmenter.
fn instance_of<'py>(cls: &Bound<'py, PyType>, segmenter: Segmenter) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    let base = py.get_type::<PySegmenter>();
    let target = if cls.is(&base) && segmenter.language() == SegmenterLanguage::Japanese {
        py.import("tokenmill.words")?.getattr("JapaneseSegmenter")?.downcast_into::<PyType>()?
    } else {
        cls.clone()
    };
    if target.is(&base) {
        return Ok(Bound::new(py, PySegmenter::with_segmenter(Arc::new(segmenter)))?.into_any());
    }
    let object = target.call0()?;
    object.downcast::<PySegmenter>()?.get().inner.set(py, segmenter)?;
    Ok(object)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySegmenter>()?;
    Ok(())
}
