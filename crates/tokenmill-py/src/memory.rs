//! Memory policy: tokenmill's own allocator, and the opt-in process-wide tuning of training.
//!
//! **tokenmill's allocator** (always): the extension allocates through mimalloc (`lib.rs`'s
//! global allocator), statically linked and private to it: Python and other extensions keep
//! their allocators, and the options set here change only mimalloc's own heap.
//! - Outside training it keeps freed pages for reuse instead of handing them back to the OS
//!   after 10 ms: batch encoding frees and re-allocates buffers constantly, and re-faulting
//!   purged pages (the kernel zeroing them) cost ~20% of the time.
//! - It does not ask for transparent huge pages (`MADV_HUGEPAGE`) on what it maps: its pages are
//!   spread over 2 MiB regions, and with huge pages the kernel zeroes each whole region on first
//!   touch (about 800 MB zeroed for 5 MB of text in the first `encode_batch`, against 120 MB).
//! - While a training runs it gives freed pages back at once: training goes through phases
//!   (counting on all threads, seeding, EM, ...) that each free what the previous one built, and
//!   pages kept by the worker threads added up (Unigram training on 10 MB peaked at ~170 MB with
//!   them kept, ~100 MB without, for ~10% more CPU time).
//!
//! **Process-wide tuning** (opt-in: `TOKENMILL_TUNE_MEMORY=1` in the environment):
//! while a training runs, transparent huge pages are turned off for the whole process
//! (`prctl(PR_SET_THP_DISABLE)`, which only affects new page faults) and back on afterwards.
//! Training's many small long-lived blocks spread over many 2 MiB regions, and huge pages made
//! each resident in full: WordPiece on 39 MB of English peaked at ~105 MB with them, ~87 MB
//! without, at the same speed. Off by default because it changes the page policy of every
//! thread and library of the process, not only tokenmill's.
//!
//! `TOKENMILL_TUNE_MEMORY=0` leaves mimalloc's defaults alone as well (no tuning at all). The
//! variable is read once, when the extension is loaded.
use std::os::raw::{c_int, c_long};
use std::sync::{Mutex, OnceLock};

/// The environment variable that chooses the tuning: `1` all of it, `0` none, unset (or
/// anything else) tokenmill's allocator only.
const TUNE_MEMORY_VAR: &str = "TOKENMILL_TUNE_MEMORY";

#[derive(Clone, Copy, PartialEq)]
enum Tuning {
    None,
    Allocator,
    Process,
}

fn tuning() -> Tuning {
    static TUNING: OnceLock<Tuning> = OnceLock::new();
    *TUNING.get_or_init(|| match std::env::var(TUNE_MEMORY_VAR).as_deref().map(str::trim) {
        Ok("1") => Tuning::Process,
        Ok("0") => Tuning::None,
        _ => Tuning::Allocator,
    })
}

extern "C" {
    /// mimalloc's runtime option setter (part of the statically linked mimalloc library; the
    /// `libmimalloc-sys` crate does not declare the options used here).
    fn mi_option_set(option: c_int, value: c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (index 15 in both v2.3 and v3.3, which
/// the `mimalloc` crate vendors; see their `include/mimalloc.h`).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// `mi_option_allow_thp` in mimalloc v3's `mi_option_t` (the version the `mimalloc` crate builds
/// by default).
const MI_OPTION_ALLOW_THP: c_int = 43;

/// The purge delay outside training (-1: never give freed pages back).
const ENCODING_PURGE_DELAY: c_long = -1;

/// The purge delay while training (ms; 0: give freed pages back at once).
const TRAINING_PURGE_DELAY: c_long = 0;

/// Sets tokenmill's allocator policy for encoding (see the module docs); called once, when the
/// extension module is loaded.
pub(crate) fn tune_allocator() {
    if tuning() == Tuning::None {
        return;
    }
    // SAFETY: sets plain integer options of the statically linked mimalloc; valid at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, ENCODING_PURGE_DELAY);
        mi_option_set(MI_OPTION_ALLOW_THP, 0);
    }
}

fn set_purge_delay(ms: c_long) {
    if tuning() == Tuning::None {
        return;
    }
    // SAFETY: as in `tune_allocator`.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

/// How many trainings are running, and whether the first one turned huge pages off (and so
/// the last one must turn them back on). A process that had them off already keeps them off.
static TRAININGS: Mutex<(usize, bool)> = Mutex::new((0, false));

/// Runs a training `f` under the training memory policy (see the module docs).
pub(crate) fn for_training<T>(f: impl FnOnce() -> T) -> T {
    enter();
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            leave();
        }
    }
    let _leave = Leave;
    f()
}

fn enter() {
    let mut state = TRAININGS.lock().unwrap_or_else(|e| e.into_inner());
    if state.0 == 0 {
        state.1 = tuning() == Tuning::Process && !thp_disabled() && set_thp_disabled(true);
        set_purge_delay(TRAINING_PURGE_DELAY);
    }
    state.0 += 1;
}

fn leave() {
    let mut state = TRAININGS.lock().unwrap_or_else(|e| e.into_inner());
    state.0 = state.0.saturating_sub(1);
    if state.0 == 0 {
        set_purge_delay(ENCODING_PURGE_DELAY);
        if state.1 {
            set_thp_disabled(false);
            state.1 = false;
        }
    }
}

#[cfg(target_os = "linux")]
fn thp_disabled() -> bool {
    // SAFETY: PR_GET_THP_DISABLE takes no pointer arguments and only reads a process flag.
    unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0 }
}

/// Sets the flag; true if the kernel accepted it.
#[cfg(target_os = "linux")]
fn set_thp_disabled(disabled: bool) -> bool {
    // SAFETY: PR_SET_THP_DISABLE takes a plain integer and only sets a process flag.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, disabled as libc::c_ulong, 0, 0, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn thp_disabled() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn set_thp_disabled(_: bool) -> bool {
    false
}
