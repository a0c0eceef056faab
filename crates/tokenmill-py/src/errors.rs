//! Python exceptions for core errors. Every core error becomes a subclass of `TokenmillError`
//! whose message names what was wrong and where (file, line, byte offset).
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyType};
use tokenmill_core::Error;

create_exception!(tokenmill, TokenmillError, PyException, "Base class of all tokenmill errors.");
create_exception!(tokenmill, FormatError, TokenmillError, "A file or string is malformed (tokenizer.json, merges, ranks, vocab, ...).");
create_exception!(tokenmill, TokenmillIOError, TokenmillError, "A file could not be read or written.");
create_exception!(tokenmill, UnknownIdError, TokenmillError, "An id that the vocabulary does not contain.");

/// Exceptions that derive from both `TokenmillError` and a builtin (so code written for
/// `tokenizers`, which raises the builtin, keeps working). `create_exception!` allows one base
/// only, so each class is made once with `type(name, (TokenmillError, builtin), namespace)`.
fn dual_exception_class<'py>(
    py: Python<'py>,
    cell: &'static GILOnceCell<Py<PyType>>,
    name: &str,
    doc: &str,
    builtin: Bound<'py, PyType>,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.get_or_try_init(py, || {
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "tokenmill")?;
        namespace.set_item("__doc__", doc)?;
        let bases = (py.get_type::<TokenmillError>(), builtin);
        let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
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
    dual_exception_class(py, &INPUT_TYPE_ERROR, "InputTypeError", doc, py.get_type::<PyTypeError>())
}

/// `InvalidArgumentError`: arguments that do not make sense (together); also a `ValueError`
/// (what `tokenizers` raises for them).
static INVALID_ARGUMENT_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn invalid_argument_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    let doc = "Arguments that do not make sense (together); also a ValueError.";
    dual_exception_class(py, &INVALID_ARGUMENT_ERROR, "InvalidArgumentError", doc, py.get_type::<PyValueError>())
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
    dual_exception_class(py, &ID_OUT_OF_RANGE_ERROR, "IdOutOfRangeError", doc, py.get_type::<PyOverflowError>())
}

/// An `IdOutOfRangeError` with `message`.
pub fn id_out_of_range_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| dual_exception(id_out_of_range_error_class(py), message))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputTypeError", input_type_error_class(py)?)?;
    m.add("IdOutOfRangeError", id_out_of_range_error_class(py)?)?;
    m.add("TokenmillError", py.get_type::<TokenmillError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("TokenmillIOError", py.get_type::<TokenmillIOError>())?;
    m.add("UnknownIdError", py.get_type::<UnknownIdError>())?;
    m.add("InvalidArgumentError", invalid_argument_error_class(py)?)?;
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
