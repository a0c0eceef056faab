//! [`SnapshotCell`]: a value that any number of threads read while others change it, for the
//! pyclasses whose methods release the GIL (a batch) while a setter may run in another thread.
//!
//! Copy-on-write: the value is an immutable snapshot behind an `Arc`. A reader takes the current
//! `Arc` under a lock held only for that clone, then works on its snapshot without the GIL and
//! without any lock, so it sees the value entirely before or entirely after any change. A writer
//! works under a writers' mutex: it changes the value in place when no reader holds it (the
//! usual case: no copy, caches stay warm), else it changes a copy and publishes it while the
//! running readers finish on the old one. The pyclass is `frozen`: nothing is ever borrowed
//! mutably from Python, so no call raises "Already borrowed".
//!
//! Locks and the GIL: a lock is only waited for without the GIL (a thread holding one may need
//! the GIL: a custom Python component run by an in-place change, a Python iterator read while
//! training on a copy), and no lock is held while a reader runs.
//!
//! Re-entrance: such a Python component may use the very object being changed (a custom
//! normalizer that encodes with its own tokenizer, run by the tokenizer's setter). The thread
//! doing a change is recorded, and its own reads of a value it is changing in place, or a change
//! started inside its change, raise `RuntimeError` where they would wait for themselves forever.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockWriteGuard, TryLockError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// A change of a value, which may fail (then nothing is published).
pub(crate) trait Change<T, R>: FnOnce(&mut T) -> PyResult<R> {}

impl<T, R, F: FnOnce(&mut T) -> PyResult<R>> Change<T, R> for F {}

pub(crate) struct SnapshotCell<T> {
    current: RwLock<Arc<T>>,
    /// Held by a writer for its whole change, so that changes apply one after the other.
    writers: Mutex<()>,
    /// The thread holding `writers` (see [`this_thread`]), 0 when none.
    writer: AtomicUsize,
}

/// A number that tells the calling thread from every other running thread (never 0).
fn this_thread() -> usize {
    thread_local!(static MARK: u8 = const { 0 });
    MARK.with(|mark| mark as *const u8 as usize)
}

/// The error of a thread that uses an object it is changing (see the module docs).
fn reentered() -> PyErr {
    PyRuntimeError::new_err(
        "the object is being changed by this thread: a custom component run by the change \
         (e.g. a custom normalizer run when it is set) cannot use the same object",
    )
}

/// The writers' mutex, and this thread's mark as the writer while it is held.
struct Writing<'a> {
    _guard: MutexGuard<'a, ()>,
    writer: &'a AtomicUsize,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.writer.store(0, Ordering::SeqCst);
    }
}

impl<T: Send + Sync> SnapshotCell<T> {
    pub(crate) fn new(value: T) -> Self {
        Self::shared(Arc::new(value))
    }

    /// A cell over a value others hold too (the first change then works on a copy).
    pub(crate) fn shared(value: Arc<T>) -> Self {
        SnapshotCell {
            current: RwLock::new(value),
            writers: Mutex::new(()),
            writer: AtomicUsize::new(0),
        }
    }

    /// The current snapshot. For values whose changes never run Python code (see
    /// [`Self::try_get`]).
    pub(crate) fn get(&self, py: Python<'_>) -> Arc<T> {
        loop {
            match self.current.try_read() {
                Ok(guard) => return Arc::clone(&guard),
                Err(TryLockError::Poisoned(p)) => return Arc::clone(&p.into_inner()),
                // A writer is changing the value in place or publishing: wait without the GIL.
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.current.read())),
            }
        }
    }

    /// The current snapshot; `RuntimeError` when this thread is changing the value in place
    /// (a Python component run by the change reads it), where `get` would wait forever.
    pub(crate) fn try_get(&self, py: Python<'_>) -> PyResult<Arc<T>> {
        if self.writer.load(Ordering::SeqCst) == this_thread()
            && matches!(self.current.try_read(), Err(TryLockError::WouldBlock))
        {
            return Err(reentered());
        }
        Ok(self.get(py))
    }

    /// Replaces the value.
    pub(crate) fn set(&self, py: Python<'_>, value: T) -> PyResult<()> {
        let _writer = self.lock_writers(py)?;
        *self.write_current(py) = Arc::new(value);
        Ok(())
    }

    /// The writers' mutex; `RuntimeError` when this thread holds it already (a change started
    /// by a Python component that a change of the same value runs).
    fn lock_writers(&self, py: Python<'_>) -> PyResult<Writing<'_>> {
        let me = this_thread();
        if self.writer.load(Ordering::SeqCst) == me {
            return Err(reentered());
        }
        let guard = loop {
            match self.writers.try_lock() {
                Ok(guard) => break guard,
                Err(TryLockError::Poisoned(p)) => break p.into_inner(),
                // Another writer: wait for it without the GIL, then retry.
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.writers.lock())),
            }
        };
        self.writer.store(me, Ordering::SeqCst);
        Ok(Writing { _guard: guard, writer: &self.writer })
    }

    fn write_current(&self, py: Python<'_>) -> RwLockWriteGuard<'_, Arc<T>> {
        loop {
            match self.current.try_write() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                // Readers are taking their snapshot: wait without the GIL, then retry.
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.current.write())),
            }
        }
    }
}

impl<T: Clone + Send + Sync> SnapshotCell<T> {
    /// Changes the value with `change`: in place when no reader holds the current snapshot,
    /// else on a copy that is then published. An error leaves a copy unpublished (an in-place
    /// change is expected to fail before it changes anything).
    pub(crate) fn update<R>(&self, py: Python<'_>, change: impl Change<T, R>) -> PyResult<R> {
        let _writer = self.lock_writers(py)?;
        let mut current = self.write_current(py);
        if let Some(value) = Arc::get_mut(&mut current) {
            return change(value);
        }
        let copy = T::clone(&current);
        drop(current);
        self.publish_changed(py, copy, change)
    }

    /// Changes a copy of the value with `change`, without holding the current snapshot (for
    /// long changes, e.g. training: readers go on with the old value meanwhile), and publishes
    /// it if `change` succeeds. Other writers wait.
    pub(crate) fn update_copy<R>(&self, py: Python<'_>, change: impl Change<T, R>) -> PyResult<R> {
        let _writer = self.lock_writers(py)?;
        let copy = T::clone(&self.get(py));
        self.publish_changed(py, copy, change)
    }

    /// `change` on `next`, which becomes the current value if it succeeds (the caller holds
    /// the writers' mutex).
    fn publish_changed<R>(
        &self,
        py: Python<'_>,
        mut next: T,
        change: impl Change<T, R>,
    ) -> PyResult<R> {
        let result = change(&mut next)?;
        *self.write_current(py) = Arc::new(next);
        Ok(result)
    }
}
