//! Texts to encode, read from Python str objects without copying them.
//!
//! A batch call holds a strong reference to every str of its input (so that none is freed while
//! the GIL is released, even if the caller's list is changed meanwhile) and hands the encoder
//! the strs' own UTF-8 buffers. Copying each text into a Rust `String` instead was most of the
//! serial work of a parallel `encode_batch` (tens of ms for 20 MB on the calling thread, while
//! the pool waited), a part that does not shrink with more threads.
use std::borrow::Cow;

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use tokenmill_core::tokenizer::{EncodeInput, InputSequence};

use crate::errors::{input_type_error, invalid_text_error};

extern "C" {
    /// CPython's UTF-8 view of a str: the str's own buffer (ASCII strs), or a UTF-8 copy made on
    /// the first call and kept by the str object (as `tokenizers` reads its inputs); NULL with
    /// an exception set for lone surrogates. Part of the C API since Python 3.3, exported by
    /// every interpreter we load into, but only in the limited API from 3.10, so `pyo3`'s
    /// abi3-py39 bindings do not declare it (its `to_cow` encodes to a fresh `bytes` and copies
    /// it on every call instead).
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}

/// The text of a Python str, borrowed from the str object (see [`PyUnicode_AsUTF8AndSize`]).
/// A lone surrogate (which UTF-8 cannot carry) becomes an `InvalidTextError` that says where it
/// is, instead of Python's UnicodeEncodeError: an `InvalidArgumentError` (`ValueError`), and a
/// `TypeError` as `tokenizers` raises for it.
pub(crate) fn str_text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    str_utf8(s).map_err(|e| lone_surrogate_error(s, e))
}

/// The text of a Python str, borrowed from the str object (see [`PyUnicode_AsUTF8AndSize`]);
/// for a lone surrogate, Python's own `UnicodeEncodeError` (for callers that handle it
/// themselves or must raise what their reference library raises).
pub(crate) fn str_utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    // SAFETY: `s` is a live str, borrowed for `'a`.
    unsafe { utf8_of(s.py(), s.as_ptr()) }
}

/// # Safety
/// `ob` must be a live object that stays alive (and, being a str, unchanged) for `'a`.
unsafe fn utf8_of<'a>(py: Python<'_>, ob: *mut pyo3::ffi::PyObject) -> PyResult<&'a str> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    let data = PyUnicode_AsUTF8AndSize(ob, &mut size);
    if data.is_null() {
        return Err(PyErr::fetch(py));
    }
    // CPython guarantees `size` bytes of valid UTF-8 at `data`, owned by the str object.
    Ok(std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast::<u8>(), size as usize)))
}

fn lone_surrogate_error(s: &Bound<'_, PyString>, e: PyErr) -> PyErr {
    if !e.is_instance_of::<PyUnicodeEncodeError>(s.py()) {
        return e;
    }
    let at = e.value(s.py()).getattr("start").and_then(|v| v.extract::<usize>()).ok();
    let code = at
        .and_then(|i| s.get_item(i).ok())
        .and_then(|c| c.call_method0("__repr__").ok())
        .map(|r| r.to_string());
    invalid_text_error(format!(
        "text contains a lone surrogate{}{}: tokenmill needs valid Unicode (encode with \
            errors='replace' or fix the text)",
        code.map(|c| format!(" {c}")).unwrap_or_default(),
        at.map(|i| format!(" at index {i}")).unwrap_or_default()
    ))
}

/// `ob` as a str, or an `InputTypeError` naming what it is.
pub(crate) fn as_str<'a, 'py>(ob: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyString>> {
    ob.downcast::<PyString>()
        .map_err(|_| input_type_error(format!("expected a str, got {}", type_name(ob))))
}

pub(crate) fn type_name(ob: &Bound<'_, PyAny>) -> String {
    ob.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// `s`, held, once its text is known to be readable (so that a bad text fails where it is met,
/// in input order; reading it again later costs nothing: CPython keeps the UTF-8).
fn checked<'py>(s: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    str_text(s)?;
    Ok(s.clone())
}

/// One sequence of an input, its str objects held: a text, or (pre-tokenized) its words.
pub(crate) enum HeldSequence<'py> {
    Text(Bound<'py, PyString>),
    Words(Vec<Bound<'py, PyString>>),
}

/// One input of a batch, its str objects held: a sequence or a pair of sequences.
pub(crate) enum HeldInput<'py> {
    Single(HeldSequence<'py>),
    Pair(HeldSequence<'py>, HeldSequence<'py>),
}

/// The error for a text that is not a str (`tokenizers`' words, then what it got).
fn not_a_text(ob: &Bound<'_, PyAny>) -> PyErr {
    input_type_error(format!("TextInputSequence must be str, got {}", type_name(ob)))
}

/// The error for a pre-tokenized sequence that is not a sequence of str (`tokenizers`' words,
/// then what it got).
fn not_words(what: &str) -> PyErr {
    input_type_error(format!(
        "PreTokenizedInputSequence must be Union[List[str], Tuple[str]], got {what}"
    ))
}

impl<'py> HeldSequence<'py> {
    /// A text, or (`is_pretokenized`) a sequence of str: a list, a tuple, a NumPy array or any
    /// other iterable of str.
    pub(crate) fn hold(ob: &Bound<'py, PyAny>, is_pretokenized: bool) -> PyResult<Self> {
        if !is_pretokenized {
            let text = ob.downcast::<PyString>().map_err(|_| not_a_text(ob))?;
            return Ok(HeldSequence::Text(checked(text)?));
        }
        if ob.downcast::<PyString>().is_ok() {
            return Err(not_words("a str"));
        }
        let words = ob
            .try_iter()
            .map_err(|_| not_words(&type_name(ob)))?
            .map(|w| {
                let w = w?;
                let word = w
                    .downcast::<PyString>()
                    .map_err(|_| not_words(&format!("an item of type {}", type_name(&w))))?;
                checked(word)
            })
            .collect::<PyResult<_>>()?;
        Ok(HeldSequence::Words(words))
    }

    /// The sequence for the encoder, borrowing the held strs' text.
    pub(crate) fn sequence(&self) -> PyResult<InputSequence<'_>> {
        Ok(match self {
            HeldSequence::Text(text) => InputSequence::Raw(Cow::Borrowed(str_text(text)?)),
            HeldSequence::Words(words) => InputSequence::PreTokenized(
                words.iter().map(|w| str_text(w).map(Cow::Borrowed)).collect::<PyResult<_>>()?,
            ),
        })
    }
}

impl<'py> HeldInput<'py> {
    /// One item of a batch: a sequence, or a pair given as any sequence of two (a tuple, a list,
    /// a row of a NumPy array), as `tokenizers` takes them. Pre-tokenized, two items are a pair
    /// only if neither is a str (else they are the two words of one sequence).
    pub(crate) fn hold(ob: &Bound<'py, PyAny>, is_pretokenized: bool) -> PyResult<Self> {
        if let Some((a, b)) = two_items(ob)? {
            let is_str = |x: &Bound<'py, PyAny>| x.is_instance_of::<PyString>();
            if !is_pretokenized || (!is_str(&a) && !is_str(&b)) {
                let first = HeldSequence::hold(&a, is_pretokenized)?;
                return Ok(HeldInput::Pair(first, HeldSequence::hold(&b, is_pretokenized)?));
            }
        }
        if !is_pretokenized && ob.downcast::<PyString>().is_err() {
            return Err(input_type_error(format!(
                "TextEncodeInput must be Union[TextInputSequence, \
                 Tuple[InputSequence, InputSequence]], got {}",
                type_name(ob)
            )));
        }
        Ok(HeldInput::Single(HeldSequence::hold(ob, is_pretokenized)?))
    }

    /// The input for the encoder, borrowing the held strs' text.
    pub(crate) fn input(&self) -> PyResult<EncodeInput<'_>> {
        Ok(match self {
            HeldInput::Single(s) => EncodeInput::Single(s.sequence()?),
            HeldInput::Pair(a, b) => EncodeInput::Dual(a.sequence()?, b.sequence()?),
        })
    }
}

/// The items of `ob` if it is a sequence of exactly two that is not a str or bytes: a tuple, a
/// list, or anything else with the sequence protocol (a NumPy array's row), as `tokenizers`
/// accepts.
fn two_items<'py>(
    ob: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if ob.is_instance_of::<PyString>() || ob.is_instance_of::<PyBytes>() {
        return Ok(None);
    }
    // SAFETY: `ob` is a live object; PySequence_Check only reads its type.
    let has_protocol = || unsafe { pyo3::ffi::PySequence_Check(ob.as_ptr()) } != 0;
    let is_sequence =
        ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() || has_protocol();
    if !is_sequence || ob.len().ok() != Some(2) {
        return Ok(None);
    }
    Ok(Some((ob.get_item(0)?, ob.get_item(1)?)))
}

/// A held input detached from the GIL's lifetime (`Send`), to be encoded on another thread:
/// [`HeldInput::unbind`], then [`OwnedInput::bind`] there with the GIL.
pub(crate) enum OwnedInput {
    Single(OwnedSequence),
    Pair(OwnedSequence, OwnedSequence),
}

/// A [`HeldSequence`] detached from the GIL's lifetime.
pub(crate) enum OwnedSequence {
    Text(Py<PyString>),
    Words(Vec<Py<PyString>>),
}

impl HeldSequence<'_> {
    pub(crate) fn unbind(self) -> OwnedSequence {
        match self {
            HeldSequence::Text(text) => OwnedSequence::Text(text.unbind()),
            HeldSequence::Words(words) => {
                OwnedSequence::Words(words.into_iter().map(Bound::unbind).collect())
            }
        }
    }
}

impl OwnedSequence {
    pub(crate) fn bind<'py>(&self, py: Python<'py>) -> HeldSequence<'py> {
        match self {
            OwnedSequence::Text(text) => HeldSequence::Text(text.bind(py).clone()),
            OwnedSequence::Words(words) => {
                HeldSequence::Words(words.iter().map(|w| w.bind(py).clone()).collect())
            }
        }
    }
}

impl HeldInput<'_> {
    pub(crate) fn unbind(self) -> OwnedInput {
        match self {
            HeldInput::Single(s) => OwnedInput::Single(s.unbind()),
            HeldInput::Pair(a, b) => OwnedInput::Pair(a.unbind(), b.unbind()),
        }
    }
}

impl OwnedInput {
    pub(crate) fn bind<'py>(&self, py: Python<'py>) -> HeldInput<'py> {
        match self {
            OwnedInput::Single(s) => HeldInput::Single(s.bind(py)),
            OwnedInput::Pair(a, b) => HeldInput::Pair(a.bind(py), b.bind(py)),
        }
    }
}

/// Every str of an iterable of str, held.
pub(crate) fn hold_texts<'py>(texts: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
    texts.try_iter()?.map(|t| checked(as_str(&t?)?)).collect()
}

/// Every item of a batch (any iterable), held.
pub(crate) fn hold_batch<'py>(
    input: &Bound<'py, PyAny>,
    is_pretokenized: bool,
) -> PyResult<Vec<HeldInput<'py>>> {
    input.try_iter()?.map(|item| HeldInput::hold(&item?, is_pretokenized)).collect()
}

/// The encoder's inputs for a held batch, borrowing its text.
pub(crate) fn batch_inputs<'a>(held: &'a [HeldInput<'_>]) -> PyResult<Vec<EncodeInput<'a>>> {
    held.iter().map(HeldInput::input).collect()
}

/// Calls `each(str, its UTF-8)` for every item of a batch (any iterable of str or UTF-8
/// `bytes`, as `sentencepiece` takes them), in order, in one pass over the items; a `bytes` item
/// is decoded into a new str first, anything else is a `TypeError` naming the item.
///
/// Why one pass, with the objects a few items ahead prefetched: this runs on the calling
/// thread, with the GIL, and each item is a separate object, most of them out of the core's
/// caches for a large batch (20 MB of lines is ~40 MB of str objects). Copying the items into a
/// tuple, checking their types, then reading their UTF-8 touched every object three times, one
/// miss after another: ~9 ms of serial work per 20 MB, 5% of a two-thread SentencePiece encode.
pub(crate) fn for_each_text<'py>(
    items: &Bound<'py, PyAny>,
    mut each: impl FnMut(Bound<'py, PyString>, &str) -> PyResult<()>,
) -> PyResult<()> {
    let mut one = |index: usize, item: Bound<'py, PyAny>| -> PyResult<()> {
        let s = match item.downcast_into::<PyString>() {
            Ok(s) => s,
            Err(not_str) => {
                let item = not_str.into_inner();
                if !item.is_instance_of::<PyBytes>() {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "texts to encode must be str or bytes; item {index} is {}",
                        type_name(&item)
                    )));
                }
                item.call_method1("decode", ("utf-8",))?.downcast_into::<PyString>()?
            }
        };
        // SAFETY: `s` is a live str, and the text is used only while `each` borrows it.
        let text = unsafe { utf8_of(s.py(), s.as_ptr())? };
        each(s, text)
    };
    if let Ok(list) = items.downcast::<PyList>() {
        // By index: a list's items can be looked at ahead without touching them.
        let mut i = 0;
        while i < list.len() {
            if i + PREFETCH_AHEAD < list.len() {
                // A borrowed pointer, only used as a hint (never dereferenced here).
                // SAFETY: `list` is a live list and the index is in range.
                prefetch_object(unsafe {
                    pyo3::ffi::PyList_GetItem(
                        list.as_ptr(),
                        (i + PREFETCH_AHEAD) as pyo3::ffi::Py_ssize_t,
                    )
                });
            }
            one(i, list.get_item(i)?)?;
            i += 1;
        }
        return Ok(());
    }
    for (i, item) in items.try_iter()?.enumerate() {
        one(i, item?)?;
    }
    Ok(())
}

/// How many items ahead the objects are prefetched: enough to cover a miss to memory
/// (~100 ns) with the few ns of work per item.
const PREFETCH_AHEAD: usize = 16;

/// Starts loading the object at `object` (its header; for a str, where its length, kind and
/// UTF-8 pointer are, and an ASCII str's first characters).
#[inline(always)]
fn prefetch_object(object: *mut pyo3::ffi::PyObject) {
    tokenmill_core::utils::prefetch::prefetch_line(object);
    tokenmill_core::utils::prefetch::prefetch_line(object.cast::<u8>().wrapping_add(48));
}

/// Releases `count` held strs from the front of `strs` (with the GIL: `Py` drops at once),
/// the ones [`PREFETCH_AHEAD`] on already loading.
pub(crate) fn release_front(strs: &mut std::collections::VecDeque<Py<PyString>>, count: usize) {
    for _ in 0..count.min(strs.len()) {
        if let Some(ahead) = strs.get(PREFETCH_AHEAD) {
            prefetch_object(ahead.as_ptr());
        }
        drop(strs.pop_front());
    }
}

/// A text's UTF-8 with the lifetime its holder guarantees.
///
/// # Safety
/// The str that owns `text` must stay alive (held) for as long as the result is read.
pub(crate) unsafe fn held_text<'a>(text: &str) -> &'a str {
    // SAFETY: the caller keeps the owning str alive; a str's UTF-8 never changes or moves.
    unsafe { &*(text as *const str) }
}

/// The texts of a batch (see [`for_each_text`]), each str held for as long as this lives.
pub(crate) struct HeldTexts<'py> {
    /// A reference to each text's str (the decoded str for a `bytes` item).
    strs: std::collections::VecDeque<Py<PyString>>,
    /// Each str's UTF-8 (see [`PyUnicode_AsUTF8AndSize`]), in the same order as `strs`.
    texts: Vec<&'static str>,
    /// Ties this to the GIL held by the call, so that it is dropped with the GIL held and the
    /// strs are released at once (see [`release_front`]).
    _gil: Python<'py>,
}

impl<'py> HeldTexts<'py> {
    pub(crate) fn hold(items: &Bound<'py, PyAny>) -> PyResult<Self> {
        let capacity = items.len().unwrap_or(0);
        let mut held = HeldTexts {
            strs: std::collections::VecDeque::with_capacity(capacity),
            texts: Vec::with_capacity(capacity),
            _gil: items.py(),
        };
        for_each_text(items, |s, text| {
            // SAFETY: `strs` holds the str for as long as `self` lives, and `texts` hands the
            // text out only borrowed from `self` (see `texts`).
            held.texts.push(unsafe { held_text(text) });
            held.strs.push_back(s.unbind());
            Ok(())
        })?;
        Ok(held)
    }

    /// Every text's UTF-8, borrowed from the held strs (no copy; strs are immutable, so it may
    /// be read without the GIL).
    pub(crate) fn texts(&self) -> &[&str] {
        &self.texts
    }
}

impl Drop for HeldTexts<'_> {
    fn drop(&mut self) {
        self.texts.clear();
        let count = self.strs.len();
        release_front(&mut self.strs, count);
    }
}
