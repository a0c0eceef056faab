//! Thin PyO3 bindings over `tokenmill-core`: the extension module `tokenmill._native`, whose
//! submodules the matching `python/tokenmill/*.py` re-export. What lives where:
//!
//! - Pipeline stages, one file each: `normalizers.rs` (also `Regex`, `NormalizedString`),
//!   `pre_tokenizers.rs`, `models.rs` (+ `unigram.rs`: `Unigram`, `UnigramTrainer`),
//!   `processors.rs`, `decoders.rs` (+ `DecodeStream`), `trainers.rs`; `custom.rs`: components
//!   written in Python (+ `PreTokenizedString`).
//! - Shared by the stages: `shared.rs` (one component value shared by every Python object that
//!   holds it, and the `getter!` / `setter!` accessors), `stage.rs` (the one definition of a
//!   stage's base class and `Sequence`, and the Tokenizer's stage properties), `properties.rs`
//!   (the concrete classes and their properties, each declared once as a list of fields),
//!   `repr.rs` (`tokenizers`' repr format), `foreign.rs` (accepting `tokenizers` objects),
//!   `errors.rs`.
//! - The Tokenizer: `tokenizer.rs`, its state (`tokenizer_state.rs`, `snapshot_cell.rs`), its
//!   inputs and outputs (`input_texts.rs`, `model_inputs.rs`, `encoding.rs`, `id_lists.rs`),
//!   `gc_pause.rs`, `off_loop.rs` (asyncio).
//! - Other front ends: `tiktoken.rs`, `sentencepiece.rs`, `words.rs` / `collocations.rs`.
//! - `arrays.rs`: NumPy arrays out (NumPy imported fallibly first).
//! - `memory.rs`: the allocator's policy. Loading the module tunes only tokenmill's own
//!   allocator (mimalloc, private to this extension); process-wide tuning (transparent huge
//!   pages off while training) happens only with `TOKENMILL_TUNE_MEMORY=1` (see there).
//!
//! May import `tokenmill-core`, `tokenmill-words`, PyO3/NumPy and two macro helpers (`pastey`
//! for generated names, `macro_rules_attribute` to apply a macro to a class's one `#[pymethods]`
//! block); no algorithm lives here.
use pyo3::prelude::*;

/// mimalloc instead of the system allocator: the pipeline allocates many short-lived small
/// buffers per document, which glibc's malloc serves slowly (and with page-fault churn). Its
/// policy is set in `memory.rs`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arrays;
mod collocations;
mod custom;
mod decoders;
mod encoding;
mod errors;
mod foreign;
mod gc_pause;
mod id_lists;
mod input_texts;
mod memory;
mod model_inputs;
mod models;
mod normalizers;
mod off_loop;
mod pre_tokenizers;
mod processors;
mod properties;
mod repr;
mod sentencepiece;
mod shared;
mod snapshot_cell;
mod stage;
mod tiktoken;
mod tokenizer;
mod tokenizer_state;
mod trainers;
mod unigram;
mod words;

/// A Python str.
pub(crate) type PyStr<'py> = Bound<'py, pyo3::types::PyString>;

/// A new Python list, or the error that prevented it.
pub(crate) type ListResult<'py> = PyResult<Bound<'py, pyo3::types::PyList>>;

/// Two NumPy arrays returned together: flat values and where each item's values start.
pub(crate) type ArrayPair<'py, A, B> =
    (Bound<'py, numpy::PyArray1<A>>, Bound<'py, numpy::PyArray1<B>>);

/// Adds classes to a module: `add_classes!(m, PyA, PyB)` (in a function returning `PyResult`).
macro_rules! add_classes {
    ($m:expr, $($Class:ty),* $(,)?) => {
        $($m.add_class::<$Class>()?;)*
    };
}

pub(crate) use add_classes;

/// Creates `tokenmill._native.<name>` and lets `fill` add its classes. The submodule is also
/// put in `sys.modules`, so that `from tokenmill._native.<name> import X` works.
pub(crate) fn add_submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    fill: impl FnOnce(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let py = parent.py();
    let sub = PyModule::new(py, name)?;
    fill(&sub)?;
    parent.add_submodule(&sub)?;
    let modules = py.import("sys")?.getattr("modules")?;
    modules.set_item(format!("tokenmill._native.{name}"), sub)?;
    Ok(())
}

/// `(parallelism, used, threads)`: whether batches may run on several threads now
/// (`TOKENIZERS_PARALLELISM`, or off in a child forked after parallel use), whether they have in
/// this process or its parent, and how many threads a batch runs on now. For tests and
/// diagnostics (see `tokenmill_core::utils::parallel`).
#[pyfunction]
fn _parallelism() -> (bool, bool, usize) {
    use tokenmill_core::utils::parallel;
    (parallel::parallelism(), parallel::has_parallelism_been_used(), parallel::num_threads())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    memory::tune_allocator();
    m.add("__version__", tokenmill_core::version())?;
    m.add_function(wrap_pyfunction!(_parallelism, m)?)?;
    errors::register(m)?;
    add_submodule(m, "normalizers", normalizers::register)?;
    normalizers::register_top_level(m)?;
    custom::register_top_level(m)?;
    add_submodule(m, "pre_tokenizers", pre_tokenizers::register)?;
    add_submodule(m, "models", models::register)?;
    add_submodule(m, "trainers", trainers::register)?;
    add_submodule(m, "processors", processors::register)?;
    add_submodule(m, "decoders", decoders::register)?;
    add_submodule(m, "tiktoken", tiktoken::register)?;
    add_submodule(m, "sentencepiece", sentencepiece::register)?;
    add_submodule(m, "words", words::register)?;
    add_submodule(m, "collocations", collocations::register)?;
    tokenizer::register(m)?;
    Ok(())
}
