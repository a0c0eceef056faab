//! Python exceptions for core errors. Every core error becomes a subclass of `TokenmillError`
//! whose message names what was wrong and where (file, line, byte offset).
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOverflowError, PyTypeError, PyValueError};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyTypeInfo;
use tokenmill_core::Error;

create_exception!(tokenmill, TokenmillError, PyException, "Base class of all tokenmill errors.");
create_exception!(
    tokenmill,
    FormatError,
    TokenmillError,
    "A file or string is malformed (tokenizer.json, merges, ranks, vocab, ...)."
);
create_exception!(
    tokenmill,
    UnknownIdError,
    TokenmillError,
    "An id that the vocabulary does not contain."
);

/// Exceptions that derive from `TokenmillError` and a builtin (so code written for
/// `tokenizers`, which raises the builtin, keeps working). `create_exception!` allows one base
/// only, so each class is made once with `type(name, bases, namespace)`.
fn dual_exception_class<'py, Builtin: PyTypeInfo>(
    py: Python<'py>,
    cell: &'static GILOnceCell<Py<PyType>>,
    name: &str,
    doc: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    derived_exception_class(py, cell, name, doc, || {
        PyTuple::new(py, [py.get_type::<TokenmillError>(), py.get_type::<Builtin>()])
    })
}

/// An exception class made once with `type(name, bases(), namespace)` in module `tokenmill`.
fn derived_exception_class<'py>(
    py: Python<'py>,
    cell: &'static GILOnceCell<Py<PyType>>,
    name: &str,
    doc: &str,
    bases: impl FnOnce() -> PyResult<Bound<'py, PyTuple>>,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.get_or_try_init(py, || {
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "tokenmill")?;
        namespace.set_item("__doc__", doc)?;
        let class = py.get_type::<PyType>().call1((name, bases()?, namespace))?;
        Ok::<_, PyErr>(class.downcast_into::<PyType>()?.unbind())
    })
    .map(|c| c.bind(py))
}

/// A new exception of a class made by `dual_exception_class`.
fn dual_exception(class: PyResult<&Bound<'_, PyType>>, message: String) -> PyErr {
    match class {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

/// `InputTypeError`: an input of the wrong type (text that is not a str, ...); also a `TypeError`.
static INPUT_TYPE_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn input_type_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "An input of the wrong type (e.g. text that is not a str); also a TypeError.";
    dual_exception_class::<PyTypeError>(py, &INPUT_TYPE_ERROR, "InputTypeError", doc)
}

/// `InvalidArgumentError`: arguments that do not make sense (together); also a `ValueError`
/// (what `tokenizers` raises for them).
static INVALID_ARGUMENT_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn invalid_argument_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "Arguments that do not make sense (together); also a ValueError.";
    dual_exception_class::<PyValueError>(py, &INVALID_ARGUMENT_ERROR, "InvalidArgumentError", doc)
}

/// Builds `tokenmill.InvalidArgumentError`s: `InvalidArgumentError::new_err(message)`.
pub struct InvalidArgumentError;

impl InvalidArgumentError {
    pub fn new_err(message: impl Into<String>) -> PyErr {
        let message = message.into();
        Python::with_gil(|py| dual_exception(invalid_argument_error_class(py), message))
    }
}

/// An `InputTypeError` with `message`.
pub fn input_type_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| dual_exception(input_type_error_class(py), message))
}

/// `IdOutOfRangeError`: a token id no vocabulary can hold (negative, or not below 2**32);
/// also an `OverflowError` (what `tokenizers` raises for it).
static ID_OUT_OF_RANGE_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn id_out_of_range_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "A token id outside 0..2**32 (negative or too large); also an OverflowError.";
    dual_exception_class::<PyOverflowError>(py, &ID_OUT_OF_RANGE_ERROR, "IdOutOfRangeError", doc)
}

/// An `IdOutOfRangeError` with `message`.
pub fn id_out_of_range_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| dual_exception(id_out_of_range_error_class(py), message))
}

/// `InvalidTextError`: a text that is not valid Unicode (a str holding a lone surrogate). Both an
/// `InvalidArgumentError` (a `ValueError`) and an `InputTypeError`: `tokenizers` raises a
/// `TypeError` for it.
static INVALID_TEXT_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn invalid_text_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "A text that is not valid Unicode (a lone surrogate); an InvalidArgumentError \
        (ValueError) and an InputTypeError (TypeError, what tokenizers raises).";
    derived_exception_class(py, &INVALID_TEXT_ERROR, "InvalidTextError", doc, || {
        PyTuple::new(py, [invalid_argument_error_class(py)?, input_type_error_class(py)?])
    })
}

/// An `InvalidTextError` with `message`.
pub fn invalid_text_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| dual_exception(invalid_text_error_class(py), message))
}

/// `TokenmillIOError`: a file that could not be read or written; also an `OSError`.
static IO_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn io_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "A file could not be read or written; also an OSError (errno, strerror and filename \
        are set when the system gave an error code).";
    dual_exception_class::<PyOSError>(py, &IO_ERROR, "TokenmillIOError", doc)
}

/// `TokenmillFileNotFoundError`: a file that does not exist; a `TokenmillIOError` and a
/// `FileNotFoundError`.
static FILE_NOT_FOUND_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn file_not_found_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "A file that does not exist; a TokenmillIOError and a FileNotFoundError.";
    derived_exception_class(py, &FILE_NOT_FOUND_ERROR, "TokenmillFileNotFoundError", doc, || {
        PyTuple::new(py, [io_error_class(py)?, &py.get_type::<PyFileNotFoundError>()])
    })
}

/// The exception for an I/O error on `path`: with the system's error code, the
/// `OSError(errno, strerror, filename)` form (so `e.errno` and `e.filename` are set, and a missing
/// file is a `FileNotFoundError`); else `message` alone.
fn io_error(path: &std::path::Path, source: &std::io::Error, message: String) -> PyErr {
    Python::with_gil(|py| {
        let not_found = source.kind() == std::io::ErrorKind::NotFound;
        let class = if not_found { file_not_found_error_class(py) } else { io_error_class(py) };
        let class = match class {
            Ok(class) => class.clone(),
            Err(e) => return e,
        };
        let Some(code) = source.raw_os_error() else {
            return PyErr::from_type(class, message);
        };
        match py.import("os").and_then(|os| os.call_method1("strerror", (code,))) {
            Ok(strerror) => {
                let filename = path.as_os_str().to_os_string();
                PyErr::from_type(class, (code, strerror.unbind(), filename))
            }
            Err(_) => PyErr::from_type(class, message),
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputTypeError", input_type_error_class(py)?)?;
    m.add("IdOutOfRangeError", id_out_of_range_error_class(py)?)?;
    m.add("TokenmillError", py.get_type::<TokenmillError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("TokenmillIOError", io_error_class(py)?)?;
    m.add("TokenmillFileNotFoundError", file_not_found_error_class(py)?)?;
    m.add("InvalidTextError", invalid_text_error_class(py)?)?;
    m.add("UnknownIdError", py.get_type::<UnknownIdError>())?;
    m.add("InvalidArgumentError", invalid_argument_error_class(py)?)?;
    Ok(())
}

/// Converts a core error into the matching Python exception.
pub fn to_py_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Io { path, source } => io_error(&path, &source, msg),
        Error::Format { .. } | Error::Utf8 { .. } | Error::Regex { .. } => {
            FormatError::new_err(msg)
        }
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
