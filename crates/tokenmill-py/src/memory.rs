//! Memory policy around training.
//!
//! mimalloc asks the kernel for transparent huge pages (`MADV_HUGEPAGE`) on its arenas, which
//! speeds up encoding (fewer page faults and TLB misses) but makes every touched 2 MiB region
//! resident in full. Training builds a few hundred thousand small, long-lived blocks (word
//! counts, symbol arenas, pair indexes) spread over many such regions, so huge pages inflated
//! its peak memory by ~20 MB (WordPiece on 39 MB of English: ~105 MB with them, ~87 MB
//! without, at the same speed). [`small_pages`] turns transparent huge pages off for the
//! process while a training runs (`prctl(PR_SET_THP_DISABLE)`, which only affects new page
//! faults) and back on afterwards, so encoding keeps them.
//!
//! Outside training mimalloc never hands freed pages back to the OS (`lib.rs`: re-faulting them
//! slowed encoding). Training goes through phases (counting on all threads, seeding, EM, ...)
//! that each free what the previous one built, and freed pages kept by the worker threads
//! added up: Unigram training on 10 MB peaked at ~170 MB with them kept, ~100 MB with freed
//! pages returned at once, for ~10% more CPU time. So [`small_pages`] also sets the purge delay
//! to 0 while a training runs.
use std::sync::Mutex;

/// How many trainings are running, and whether the first one turned huge pages off (and so
/// the last one must turn them back on). A process that had them off already keeps them off.
static TRAININGS: Mutex<(usize, bool)> = Mutex::new((0, false));

/// Runs `f` with transparent huge pages off for new page faults of the process (Linux; a
/// no-op elsewhere or if the kernel refuses).
pub(crate) fn small_pages<T>(f: impl FnOnce() -> T) -> T {
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
        state.1 = !thp_disabled() && set_thp_disabled(true);
        set_purge_delay(TRAINING_PURGE_DELAY_MS);
    }
    state.0 += 1;
}

fn leave() {
    let mut state = TRAININGS.lock().unwrap_or_else(|e| e.into_inner());
    state.0 = state.0.saturating_sub(1);
    if state.0 == 0 {
        set_purge_delay(crate::ENCODING_PURGE_DELAY);
        if state.1 {
            set_thp_disabled(false);
            state.1 = false;
        }
    }
}

/// mimalloc's purge delay while training (ms; 0 = give freed memory back at once).
const TRAINING_PURGE_DELAY_MS: std::os::raw::c_long = 0;

fn set_purge_delay(ms: std::os::raw::c_long) {
    // SAFETY: sets a plain integer option of the statically linked mimalloc; valid at any time.
    unsafe { crate::mi_option_set(crate::MI_OPTION_PURGE_DELAY, ms) }
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
