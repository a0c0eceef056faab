//! Python exceptions for core errors. Every core error becomes a subclass of `TokenmillError`
//! whose message names what was wrong and where (file, line, byte offset).
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyType};
use tokenmill_core::Error;

create_exception!(tokenmill, TokenmillError, PyException, "Base class of all tokenmill errors.");
create_exception!(tokenmill, FormatError, TokenmillError, "A file or string is malformed (tokenizer.json, merges, ranks, vocab, ...).");
create_exception!(tokenmill, TokenmillIOError, TokenmillError, "A file could not be read or written.");
create_exception!(tokenmill, UnknownIdError, TokenmillError, "An id that the vocabulary does not contain.");
create_exception!(tokenmill, InvalidArgumentError, TokenmillError, "Arguments that do not make sense (together).");

/// Exceptions that derive from a tokenmill exception *and* the builtin one `tokenizers` raises
/// in the same place (so code written for `tokenizers` keeps working). `create_exception!`
/// allows one base only, so each class is made once with `type(name, bases, namespace)`.
struct DualException {
    class: GILOnceCell<Py<PyType>>,
    name: &'static str,
    doc: &'static str,
}

impl DualException {
    const fn new(name: &'static str, doc: &'static str) -> Self {
        DualException { class: GILOnceCell::new(), name, doc }
    }

    fn class<'py>(&'py self, py: Python<'py>, bases: impl FnOnce() -> (Bound<'py, PyType>, Bound<'py, PyType>)) -> PyResult<&'py Bound<'py, PyType>> {
        self.class
            .get_or_try_init(py, || {
                let namespace = PyDict::new(py);
                namespace.set_item("__module__", "tokenmill")?;
                namespace.set_item("__doc__", self.doc)?;
                let class = py.get_type::<PyType>().call1((self.name, bases(), namespace))?;
                Ok::<_, PyErr>(class.downcast_into::<PyType>()?.unbind())
            })
            .map(|c| c.bind(py))
    }
}

/// `InputTypeError(TokenmillError, TypeError)`: an input of the wrong type (text that is not a str, ...).
static INPUT_TYPE_ERROR: DualException =
    DualException::new("InputTypeError", "An input of the wrong type (e.g. text that is not a str); also a TypeError.");

/// `IdOutOfRangeError(UnknownIdError, OverflowError)`: an id that no vocabulary can hold
/// (negative, or not below 2**32).
static ID_OUT_OF_RANGE_ERROR: DualException =
    DualException::new("IdOutOfRangeError", "A token id outside 0..2**32 (negative or too large); also an OverflowError.");

fn input_type_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    INPUT_TYPE_ERROR.class(py, || (py.get_type::<TokenmillError>(), py.get_type::<PyTypeError>()))
}

fn id_out_of_range_error_class(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ID_OUT_OF_RANGE_ERROR.class(py, || (py.get_type::<UnknownIdError>(), py.get_type::<PyOverflowError>()))
}

fn raise(class: PyResult<&Bound<'_, PyType>>, message: String) -> PyErr {
    match class {
        Ok(class) => PyErr::from_type(class.clone(), message),
        Err(e) => e,
    }
}

/// An `InputTypeError` with `message`.
pub fn input_type_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| raise(input_type_error_class(py), message))
}

/// An `IdOutOfRangeError` with `message`.
pub fn id_out_of_range_error(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::with_gil(|py| raise(id_out_of_range_error_class(py), message))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputTypeError", input_type_error_class(py)?)?;
    m.add("IdOutOfRangeError", id_out_of_range_error_class(py)?)?;
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
