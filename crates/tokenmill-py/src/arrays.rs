//! NumPy arrays made from Rust vectors, with NumPy imported fallibly first.
//!
//! rust-numpy imports NumPy the first time an array is made and panics if that import fails
//! (a `MemoryError` under an address-space limit, a broken install): the panic reaches Python
//! as `PanicException`, which `except Exception` does not catch, and printing its backtrace
//! allocates again. Importing NumPy here first turns that into the import's own exception.
use numpy::{Element, IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;

/// Set once NumPy's C API module imported and exposed its API capsule.
static NUMPY_IMPORTED: GILOnceCell<()> = GILOnceCell::new();

/// Imports what rust-numpy reads on its first array (`numpy._core.multiarray._ARRAY_API`, or
/// `numpy.core…` before NumPy 2), so that reading it cannot fail afterwards.
fn import_numpy(py: Python<'_>) -> PyResult<()> {
    NUMPY_IMPORTED
        .get_or_try_init(py, || {
            let version: String = py.import("numpy")?.getattr("__version__")?.extract()?;
            let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(2);
            let core = if major >= 2 { "numpy._core.multiarray" } else { "numpy.core.multiarray" };
            py.import(core)?.getattr("_ARRAY_API")?;
            Ok::<_, PyErr>(())
        })
        .map(|_| ())
}

/// `values` as a one-dimensional array that owns their buffer.
pub(crate) fn array<T: Element>(
    py: Python<'_>,
    values: Vec<T>,
) -> PyResult<Bound<'_, PyArray1<T>>> {
    import_numpy(py)?;
    Ok(values.into_pyarray(py))
}

/// Two vectors as two arrays (see [`crate::ArrayPair`]).
pub(crate) fn array_pair<A: Element, B: Element>(
    py: Python<'_>,
    first: Vec<A>,
    second: Vec<B>,
) -> PyResult<crate::ArrayPair<'_, A, B>> {
    Ok((array(py, first)?, array(py, second)?))
}
