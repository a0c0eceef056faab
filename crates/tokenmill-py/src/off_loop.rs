//! Awaitable versions of blocking calls (`Tokenizer.async_encode_batch` & co.), as
//! `tokenizers` 0.23 offers them.
//!
//! Why the running loop's default executor and not a runtime of our own (`tokenizers` uses
//! tokio through `pyo3-async-runtimes`): the work already runs on the encoder's own thread pool
//! with the GIL released; all an awaitable call needs is a thread to wait on it that is not the
//! event loop's, and a future the loop completes. `loop.run_in_executor` gives both, bounded by
//! the executor's size, honours a custom executor set with `loop.set_default_executor`, and
//! cancels and shuts down the way asyncio users expect.
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyCFunction;

/// Starts `work` now on a thread of the running event loop's default executor and returns the
/// `asyncio.Future` of its result. Raises `RuntimeError` outside a running event loop (as
/// `tokenizers` does). `work` takes the GIL only for its Python parts: the native work inside
/// releases it.
pub(crate) fn run_in_executor<'py>(
    py: Python<'py>,
    work: impl FnOnce(Python<'_>) -> PyResult<PyObject> + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    // The executor calls the job once; a Mutex makes the FnOnce callable through a Fn.
    let work = Mutex::new(Some(work));
    let job =
        PyCFunction::new_closure(py, None, None, move |args, _kwargs| -> PyResult<PyObject> {
            let work = work.lock().unwrap_or_else(PoisonError::into_inner).take();
            let work = work
                .ok_or_else(|| PyRuntimeError::new_err("this awaitable's work was already run"))?;
            work(args.py())
        })?;
    event_loop.call_method1("run_in_executor", (py.None(), job))
}
