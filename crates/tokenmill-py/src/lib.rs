//! Thin PyO3 bindings over `tokenmill-core`. One file per pipeline stage; each registers a
//! submodule of `tokenmill._native` that the matching `python/tokenmill/*.py` re-exports.
use pyo3::prelude::*;

/// mimalloc instead of the system allocator: the pipeline allocates many short-lived small
/// buffers per document, which glibc's malloc serves slowly (and with page-fault churn).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

extern "C" {
    /// mimalloc's runtime option setter (part of the statically linked mimalloc library).
    fn mi_option_set(option: std::os::raw::c_int, value: std::os::raw::c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (the same index in v2 and in v3, which the
/// `mimalloc` crate builds).
const MI_OPTION_PURGE_DELAY: std::os::raw::c_int = 15;

/// The purge delay outside training: never (see [`tune_allocator`]; training sets its own,
/// `memory.rs`).
const ENCODING_PURGE_DELAY: std::os::raw::c_long = -1;

/// `mi_option_allow_thp` in mimalloc v3's `mi_option_t`.
const MI_OPTION_ALLOW_THP: std::os::raw::c_int = 43;

/// Keeps freed pages for reuse instead of handing them back to the OS after 10 ms: batch
/// encoding frees and re-allocates buffers constantly, and re-faulting purged pages (the kernel
/// zeroing them) cost ~20% of the time. Freed memory stays with the process, to be reused.
///
/// Also stops mimalloc from asking for transparent huge pages on the memory it maps: its pages
/// are spread over 2 MiB regions, and with huge pages the kernel zeroes each whole region on first
/// touch. That zeroing was half the time of the first `encode_batch` in a process (about 800 MB
/// zeroed for 5 MB of text, against 120 MB with normal pages). Only mimalloc's own mappings are
/// affected (no process-wide setting changes).
fn tune_allocator() {
    // SAFETY: sets plain integer options; valid at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, ENCODING_PURGE_DELAY);
        mi_option_set(MI_OPTION_ALLOW_THP, 0);
    }
}

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
mod repr;
mod sentencepiece;
mod shared;
mod snapshot_cell;
mod tiktoken;
mod tokenizer;
mod tokenizer_state;
mod trainers;
mod unigram;
mod words;

/// Two NumPy arrays returned together: flat values and where each item's values start.
pub(crate) type ArrayPair<'py, A, B> =
    (Bound<'py, numpy::PyArray1<A>>, Bound<'py, numpy::PyArray1<B>>);

/// Creates `tokenmill._native.<name>` and lets `fill` add its classes.
pub(crate) fn add_submodule(
    parent: &Bound<'_, PyModule>,
    name: &str,
    fill: impl FnOnce(&Bound<'_, PyModule>) -> PyResult<()>,
) -> PyResult<()> {
    let sub = PyModule::new(parent.py(), name)?;
    fill(&sub)?;
    parent.add_submodule(&sub)?;
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
    tune_allocator();
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
