//! Pausing Python's cyclic garbage collector while a call builds many container objects.
use pyo3::prelude::*;

/// Python's cyclic GC switched off while a large list of fresh tuples is built: each tuple is
/// GC-tracked, and the collections the allocations trigger would otherwise rescan the growing
/// list again and again (half the time for a 1.7 M-token list). Restored afterwards (if the
/// GC was on: a caller's `gc.disable()` is left alone). Only the moment of collections
/// changes: the allocations still count, so the first GC allocation after the pause collects.
pub(crate) struct GcPause<'py> {
    enable: Option<&'py Bound<'py, PyAny>>,
}

/// `gc.isenabled`, `gc.disable` and `gc.enable`, looked up once (a pause per call of a few
/// microseconds must not import a module).
struct GcSwitches {
    isenabled: Py<PyAny>,
    disable: Py<PyAny>,
    enable: Py<PyAny>,
}

static GC_SWITCHES: pyo3::sync::GILOnceCell<GcSwitches> = pyo3::sync::GILOnceCell::new();

impl<'py> GcPause<'py> {
    /// A pause when `objects` (GC-tracked objects to be made) is large.
    pub(crate) fn new(py: Python<'py>, objects: usize) -> PyResult<Self> {
        if objects < 20_000 {
            return Ok(GcPause { enable: None });
        }
        GcPause::always(py)
    }

    /// A pause whatever the size: for calls made once per line or sentence, whose tuples
    /// would otherwise trigger a collection every ~25 calls, each of which walks all the
    /// recent result lists (and every ~3,000 calls a full one that walks all of them).
    pub(crate) fn always(py: Python<'py>) -> PyResult<Self> {
        let switches = GC_SWITCHES.get_or_try_init(py, || -> PyResult<GcSwitches> {
            let gc = py.import("gc")?;
            Ok(GcSwitches {
                isenabled: gc.getattr("isenabled")?.unbind(),
                disable: gc.getattr("disable")?.unbind(),
                enable: gc.getattr("enable")?.unbind(),
            })
        })?;
        if !switches.isenabled.bind(py).call0()?.is_truthy()? {
            return Ok(GcPause { enable: None });
        }
        switches.disable.bind(py).call0()?;
        Ok(GcPause { enable: Some(switches.enable.bind(py)) })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(enable) = self.enable {
            let _ = enable.call0();
        }
    }
}
