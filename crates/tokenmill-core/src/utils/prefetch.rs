//! A hint to the CPU to start loading a cache line that will be read soon: for loops over
//! items scattered in memory (hash-table slots, Python objects) whose addresses are known a
//! few iterations ahead, so that their misses overlap instead of following one another.

/// Starts loading the cache line at `address` (no effect on the program's results; any
/// address may be passed, a prefetch never faults).
#[inline(always)]
pub fn prefetch_line<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing architecturally and cannot fault, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
