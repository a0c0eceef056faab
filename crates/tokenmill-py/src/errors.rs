//! Python exceptions for core errors. Every core error becomes a subclass of `TokenmillError`
//! whose message names what was wrong and where (file, line, byte offset).
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tokenmill_core::Error;

create_exception!(tokenmill, TokenmillError, PyException, "Base class of all tokenmill errors.");
create_exception!(tokenmill, FormatError, TokenmillError, "A file or string is malformed (tokenizer.json, merges, ranks, vocab, ...).");
create_exception!(tokenmill, TokenmillIOError, TokenmillError, "A file could not be read or written.");
create_exception!(tokenmill, UnknownIdError, TokenmillError, "An id that the vocabulary does not contain.");
create_exception!(tokenmill, InvalidArgumentError, TokenmillError, "Arguments that do not make sense (together).");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TokenmillError", py.get_type::<TokenmillError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("TokenmillIOError", py.get_type::<TokenmillIOError>())?;
    m.add("UnknownIdError", py.get_type::<UnknownIdError>())?;
    m.add("InvalidArgumentError", py.get_type::<InvalidArgumentError>())?;
    Ok(())
}

/// Converts a core error into the matching Python exception.
pub fn to_py_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Io { .. } => TokenmillIOError::new_err(msg),
        Error::Format { .. } | Error::Utf8 { .. } | Error::Regex { .. } => FormatError::new_err(msg),
        Error::UnknownId(_) => UnknownIdError::new_err(msg),
        Error::InvalidArgument(_) | Error::UnknownToken(_) => InvalidArgumentError::new_err(msg),
        Error::Other(_) => TokenmillError::new_err(msg),
    }
}

/// `core_result.py()?` turns a core `Result` into a `PyResult`.
pub trait ToPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> ToPyResult<T> for tokenmill_core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}
