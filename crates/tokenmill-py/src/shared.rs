//! Shared component state, as in `tokenizers`: a Python component object, every Tokenizer it
//! is assigned to, and every Sequence it is put in hold the *same* value, so that
//! `tok.model.dropout = 0.5` or `n = tok.normalizer; n.lowercase = False` change the tokenizer.
//!
//! - [`Shared<T>`]: one value behind an `Arc<RwLock<…>>`, with a version that every write bumps.
//! - [`Node<W>`]: what a stage's base class holds: one shared value, or (for `Sequence`
//!   components) the list of shared items, so that `tok.normalizer[0]` is the tokenizer's item.
//! - The Tokenizer binding does not lock per token: it runs the core pipeline on a snapshot of
//!   its components and refreshes the snapshot when a version changed (see `tokenizer.rs`).
//!
//! The concrete classes (`BPE`, `Strip`, ...; see `properties.rs`) read and change their fields
//! through `getter!` (under the read lock) and `setter!` (under the write lock, bumping the
//! version); both raise `TypeError` if the object holds another kind of component.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;

/// A value shared by every object that holds a clone of this handle.
pub(crate) struct Shared<T> {
    cell: Arc<Cell<T>>,
}

struct Cell<T> {
    value: RwLock<T>,
    /// Bumped by every write, so holders of a snapshot can tell it is stale.
    version: AtomicU64,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared { cell: Arc::clone(&self.cell) }
    }
}

impl<T> Shared<T> {
    pub(crate) fn new(value: T) -> Self {
        Shared { cell: Arc::new(Cell { value: RwLock::new(value), version: AtomicU64::new(0) }) }
    }

    /// Reads the value. A panic while it was written cannot leave a half-written component
    /// (writes are plain field assignments), so a poisoned lock is used as is.
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, T> {
        self.cell.value.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the value; the version changes.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        let guard = self.cell.value.write().unwrap_or_else(PoisonError::into_inner);
        self.cell.version.fetch_add(1, Ordering::AcqRel);
        guard
    }

    /// Replaces the value.
    pub(crate) fn set(&self, value: T) {
        *self.write() = value;
    }

    /// How many writes the value has seen.
    pub(crate) fn version(&self) -> u64 {
        self.cell.version.load(Ordering::Acquire)
    }

    /// Runs `f` on the value under the read lock.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.read())
    }

    /// Changes the value under the write lock (always succeeds; the `PyResult` matches
    /// `Node::update` so that `setter!` serves both).
    pub(crate) fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> PyResult<R> {
        Ok(f(&mut self.write()))
    }
}

impl<T: Clone> Shared<T> {
    pub(crate) fn snapshot(&self) -> T {
        self.read().clone()
    }
}

/// A stage wrapper whose `Sequence` variant is kept as a list of shared items (implemented
/// for the four stage wrappers in `stage.rs`).
pub(crate) trait Sequenced: Sized + Clone {
    /// The items of a `Sequence` value, or the value back.
    fn into_items(self) -> Result<Vec<Self>, Self>;
    /// The `Sequence` value of these items.
    fn from_items(items: Vec<Self>) -> Self;
}

/// What a stage's base class holds: one shared component, or a `Sequence` as its shared items
/// (as `tokenizers`' `Py*TypeWrapper`), so that indexing a sequence gives its live items.
pub(crate) enum Node<W> {
    Single(Shared<W>),
    Sequence(Vec<Shared<W>>),
}

impl<W> Clone for Node<W> {
    fn clone(&self) -> Self {
        match self {
            Node::Single(s) => Node::Single(s.clone()),
            Node::Sequence(items) => Node::Sequence(items.clone()),
        }
    }
}

impl<W: Sequenced> Node<W> {
    /// A new node; a `Sequence` value is split into new shared items (one level, as
    /// `tokenizers` does when it loads a Sequence).
    pub(crate) fn new(value: W) -> Self {
        match value.into_items() {
            Ok(items) => Node::Sequence(items.into_iter().map(Shared::new).collect()),
            Err(single) => Node::Single(Shared::new(single)),
        }
    }

    /// A `Sequence` node over existing shared items (shared, not copied).
    pub(crate) fn sequence(items: Vec<Shared<W>>) -> Self {
        Node::Sequence(items)
    }

    /// The current value (a Sequence rebuilt from its items).
    pub(crate) fn snapshot(&self) -> W {
        match self {
            Node::Single(s) => s.snapshot(),
            Node::Sequence(items) => W::from_items(items.iter().map(Shared::snapshot).collect()),
        }
    }

    /// Runs `f` on the current value: under the read lock for a single component, on a
    /// snapshot for a Sequence.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&W) -> R) -> R {
        match self {
            Node::Single(s) => f(&s.read()),
            Node::Sequence(_) => f(&self.snapshot()),
        }
    }

    /// Changes a single component (not a Sequence: its items are changed through indexing).
    pub(crate) fn update<R>(&self, f: impl FnOnce(&mut W) -> R) -> PyResult<R> {
        match self {
            Node::Single(s) => Ok(f(&mut s.write())),
            Node::Sequence(_) => {
                Err(PyTypeError::new_err("a Sequence is changed through its items (seq[i])"))
            }
        }
    }

    /// Replaces the whole value in place (for `__setstate__`): a Sequence node gets its new
    /// items one by one when their number is unchanged.
    pub(crate) fn replace(&mut self, value: W) {
        match (&*self, value.into_items()) {
            (Node::Single(s), Err(single)) => s.set(single),
            (Node::Sequence(items), Ok(new_items)) if items.len() == new_items.len() => {
                items.iter().zip(new_items).for_each(|(cell, v)| cell.set(v));
            }
            (_, Ok(new_items)) => {
                *self = Node::Sequence(new_items.into_iter().map(Shared::new).collect())
            }
            (_, Err(single)) => *self = Node::Single(Shared::new(single)),
        }
    }

    /// The shared items as a flat list: a Sequence's items, or the single component itself.
    pub(crate) fn items(&self) -> Vec<Shared<W>> {
        match self {
            Node::Single(s) => vec![s.clone()],
            Node::Sequence(items) => items.clone(),
        }
    }

    /// The item at a Python index (negative counts from the end).
    pub(crate) fn item(&self, index: isize) -> PyResult<Shared<W>> {
        match self {
            Node::Sequence(items) => Ok(items[resolve_index(index, items.len())?].clone()),
            Node::Single(_) => Err(PyTypeError::new_err("this component is not a Sequence")),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Node::Single(_) => 1,
            Node::Sequence(items) => items.len(),
        }
    }
}

/// A version stamp that changes whenever the node's value may have changed.
pub(crate) trait Versioned {
    fn stamp(&self) -> u64;
}

impl<T> Versioned for Shared<T> {
    fn stamp(&self) -> u64 {
        self.version()
    }
}

impl<W> Versioned for Node<W> {
    /// Versions only grow, so the sum over a fixed list of items changes with any write.
    fn stamp(&self) -> u64 {
        match self {
            Node::Single(s) => s.version(),
            Node::Sequence(items) => items.iter().map(Shared::version).sum(),
        }
    }
}

/// A Python index (negative counts from the end) into a list of `len` items.
pub(crate) fn resolve_index(index: isize, len: usize) -> PyResult<usize> {
    let resolved = if index < 0 { index + len as isize } else { index };
    if resolved < 0 || resolved as usize >= len {
        return Err(PyIndexError::new_err(format!(
            "index {index} out of range for a Sequence of {len} components"
        )));
    }
    Ok(resolved as usize)
}

/// The error of a getter/setter whose object holds another kind of component.
pub(crate) fn wrong_component(expected: &str) -> PyErr {
    PyTypeError::new_err(format!("this object does not hold a {expected} component"))
}

/// Reads a field of the component a concrete class holds (see the module docs):
/// `getter!(self_, NormalizerWrapper::Strip, |n| n.strip_left)` → `PyResult<_>`.
macro_rules! getter {
    ($self_:expr, $wrapper:ident :: $variant:ident, |$c:ident| $body:expr) => {
        $self_.as_super().inner.with(|w| match w {
            $wrapper::$variant($c) => Ok($body),
            #[allow(unreachable_patterns)]
            _ => Err($crate::shared::wrong_component(stringify!($variant))),
        })
    };
}

/// Changes a field of the component a concrete class holds (see the module docs):
/// `setter!(self_, NormalizerWrapper::Strip, |n| n.strip_left = value)` → `PyResult<()>`.
macro_rules! setter {
    ($self_:expr, $wrapper:ident :: $variant:ident, |$c:ident| $body:expr) => {
        $self_.as_super().inner.update(|w| match w {
            $wrapper::$variant($c) => {
                #[allow(clippy::let_unit_value, unused_variables)]
                let result = $body;
                Ok(result)
            }
            #[allow(unreachable_patterns)]
            _ => Err($crate::shared::wrong_component(stringify!($variant))),
        })?
    };
}

pub(crate) use {getter, setter};
