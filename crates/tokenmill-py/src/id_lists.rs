//! Python lists of token ids without a new int object per token.
//!
//! Why: CPython caches only the ints up to 256, so a list of n ids normally allocates n int
//! objects. For 10 MB of text that is ~3 M objects, ~100 MB of fresh memory the kernel faults in
//! and zeroes, and building the list then costs about as much as the encoding itself. Ints are
//! immutable, so lists may share one object per id: [`IdObjects`] creates each id's object the
//! first time it is returned and every later list refers to it (a list of n ids is then one
//! n-pointer allocation). Memory: at most one int object (32 bytes) per id of the vocabulary.
use std::sync::{Mutex, PoisonError};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// One shared int object per token id, created on first use.
#[derive(Default)]
pub(crate) struct IdObjects {
    objects: Mutex<Vec<Option<Py<PyAny>>>>,
}

impl IdObjects {
    /// `ids` as a Python list of ints.
    pub(crate) fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        fill_list(py, &mut objects, ids, 0..ids.len())
    }

    /// Every id list as a Python list of lists of ints.
    pub(crate) fn lists<'py>(
        &self,
        py: Python<'py>,
        batches: &[Vec<u32>],
    ) -> PyResult<Bound<'py, PyList>> {
        self.lists_of(py, batches.iter().map(Vec::as_slice))
    }

    /// [`IdObjects::lists`] from id slices (e.g. views into one flat buffer of a batch).
    pub(crate) fn lists_of<'a, 'py>(
        &self,
        py: Python<'py>,
        batches: impl Iterator<Item = &'a [u32]>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut inner = Vec::new();
        self.push_lists(py, batches, &mut inner)?;
        PyList::new(py, inner)
    }

    /// Appends one list per id slice to `out` (the table is locked once for all of them).
    pub(crate) fn push_lists<'a>(
        &self,
        py: Python<'_>,
        batches: impl Iterator<Item = &'a [u32]>,
        out: &mut Vec<Py<PyAny>>,
    ) -> PyResult<()> {
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        for ids in batches {
            out.push(fill_list(py, &mut objects, ids, 0..ids.len())?.into_any().unbind());
        }
        Ok(())
    }

    /// Appends one list per text of a flat id buffer to `out` (text `i`'s ids end at
    /// `ends[i]`), with the objects of the ids a few places on already loading across the
    /// texts' boundaries (texts are often shorter than the prefetch distance).
    pub(crate) fn push_flat_lists(
        &self,
        py: Python<'_>,
        ids: &[u32],
        ends: &[usize],
        out: &mut Vec<Py<PyAny>>,
    ) -> PyResult<()> {
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        let mut start = 0;
        for &end in ends {
            out.push(fill_list(py, &mut objects, ids, start..end)?.into_any().unbind());
            start = end;
        }
        Ok(())
    }
}

/// How many ids ahead [`fill_list`] prefetches the int objects. Why at all: a batch's calling
/// thread builds lists between encoding chunks itself (see the SentencePiece batch), and the
/// encoding evicts the int objects from the core's caches each time; measured, the reference
/// counting then cost ~50% more than when all lists are built at the end.
const PREFETCH_AHEAD: usize = 16;

/// Ids below this share one object each (a table of at most 32 MB); larger ids, which only
/// sparse rank files have (tiktoken accepts any u32), get a new object per use.
const MAX_SHARED_ID: usize = 1 << 22;

/// A new reference to the object of `id`: the shared one, created if needed.
fn object_of(
    py: Python<'_>,
    objects: &mut Vec<Option<Py<PyAny>>>,
    id: u32,
) -> PyResult<*mut ffi::PyObject> {
    let index = id as usize;
    if index >= MAX_SHARED_ID {
        return Ok(id.into_pyobject(py)?.into_any().into_ptr());
    }
    if index >= objects.len() {
        objects.resize_with(index + 1, || None);
    }
    let slot = &mut objects[index];
    if slot.is_none() {
        *slot = Some(id.into_pyobject(py)?.into_any().unbind());
    }
    Ok(slot.as_ref().map_or(std::ptr::null_mut(), |o| o.clone_ref(py).into_ptr()))
}

/// The list of `all[range]`, the objects of `all`'s ids [`PREFETCH_AHEAD`] on already loading.
fn fill_list<'py>(
    py: Python<'py>,
    objects: &mut Vec<Option<Py<PyAny>>>,
    all: &[u32],
    range: std::ops::Range<usize>,
) -> PyResult<Bound<'py, PyList>> {
    let first = range.start;
    let ids = &all[range];
    let len = ffi::Py_ssize_t::try_from(ids.len())
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("too many ids for one list"))?;
    // SAFETY: `PyList_New` returns a new reference (or NULL with an exception set), owned by
    // `list` from here on. `PyList_SetItem` steals one reference to the item, which
    // `object_of` returns; each index is set once and within bounds. Items not yet
    // set if an error returns early are NULL, which deallocating a list allows.
    unsafe {
        let raw = ffi::PyList_New(len);
        if raw.is_null() {
            return Err(PyErr::fetch(py));
        }
        let list = Bound::from_owned_ptr(py, raw).downcast_into_unchecked::<PyList>();
        for (index, &id) in ids.iter().enumerate() {
            // Two stages: the table's slot of the id twice as far on, then the object of the
            // id ahead (its slot loaded by then).
            if let Some(&far) = all.get(first + index + 2 * PREFETCH_AHEAD) {
                tokenmill_core::utils::prefetch::prefetch_line(
                    objects.as_ptr().wrapping_add(far as usize),
                );
            }
            if let Some(Some(ahead)) = all
                .get(first + index + PREFETCH_AHEAD)
                .and_then(|&ahead| objects.get(ahead as usize))
            {
                tokenmill_core::utils::prefetch::prefetch_line(ahead.as_ptr());
            }
            let item = object_of(py, objects, id)?;
            if ffi::PyList_SetItem(raw, index as ffi::Py_ssize_t, item) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(list)
    }
}
