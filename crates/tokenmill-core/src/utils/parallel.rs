//! Batch work on tokenmill's thread pool, or on the calling thread when parallelism is off or
//! the pool has one thread.
//!
//! Why not always the pool: with one thread the pool gains nothing, and everything the work
//! allocates (an encoding's vectors and token strings) would be allocated on the pool's thread
//! and freed on the caller's (Python drops the results there). Frees from another thread take
//! mimalloc's slow cross-thread path; on the calling thread they are plain local frees. This is
//! also what `tokenizers` does when its parallelism is off.
//!
//! Settings, read from the environment:
//! - `TOKENIZERS_PARALLELISM`, as in `tokenizers`: unset or any other value means on;
//!   `""`, `off`, `false`, `f`, `no`, `n` or `0` (any case) means off, and every batch then
//!   runs on the calling thread. It is read at every batch call.
//! - `TOKENMILL_NUM_THREADS`: the number of threads of the pool (else `RAYON_NUM_THREADS`,
//!   else one per core). Read when the pool is made: at the first parallel batch of a process.
//!
//! Fork: a forked child has none of its parent's threads, so a pool made before the fork would
//! wait forever for them (what `tokenizers` does with parallelism on). A `pthread_atfork` child
//! handler forgets the pool (it is leaked, never dropped: its locks may have been held when the
//! process forked), and the child makes a new one when it needs one. As in `tokenizers`, a
//! child forked after parallelism was used, with `TOKENIZERS_PARALLELISM` unset, prints a
//! warning and runs with parallelism off; set the variable to keep it on (with a new pool) or
//! off without the warning.
//!
//! An explicit `num_threads` (tiktoken's batch calls, sentencepiece's) goes through
//! [`pool_for`]: the request is capped at the number of items and at the number of cores, a
//! request that reaches the core count runs on the process's pool, and a smaller one on a pool
//! of that size made once per process and kept (forgotten in a forked child like the main
//! pool). A call never starts threads of its own, whatever it asks for.
//!
//! Every thread-spawning place of tokenmill goes through here. Nothing uses rayon's global
//! pool: it cannot be replaced after a fork.
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard, Once, PoisonError};

use rayon::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

/// The environment variable that turns parallelism on or off (the one `tokenizers` reads).
pub const PARALLELISM_ENV: &str = "TOKENIZERS_PARALLELISM";
/// The environment variable that sets the number of threads of the pool.
pub const NUM_THREADS_ENV: &str = "TOKENMILL_NUM_THREADS";

/// Parallelism set by [`set_parallelism`] (or by the fork handler), which wins over the
/// environment: `UNSET`, `OFF` or `ON`.
static OVERRIDE: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
/// Whether batch work has run on the pool in this process (or in the parent it was forked from).
static USED: AtomicBool = AtomicBool::new(false);
/// Whether the last batch decided to run on the pool: a cheap hint for code that runs per
/// word (see [`may_run_in_parallel`]).
static RUNS_PARALLEL: AtomicBool = AtomicBool::new(false);
/// The pool of this process (leaked, so that references to it live for the whole process);
/// null until the first parallel batch, and again in a forked child.
static POOL: AtomicPtr<ThreadPool> = AtomicPtr::new(ptr::null_mut());
static FORK_HANDLER: Once = Once::new();
/// Pools of an explicitly requested size below the core count, by size (see [`pool_for`]);
/// null until first asked for. Larger requests share the process's pool.
static SIZED: [AtomicPtr<ThreadPool>; SIZED_MAX + 1] =
    [const { AtomicPtr::new(ptr::null_mut()) }; SIZED_MAX + 1];
/// The largest size of a pool in `SIZED`.
const SIZED_MAX: usize = 64;

thread_local! {
    /// How many [`callback`]s the calling thread is inside.
    static CALLBACK_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// How deeply [`callback`]s may nest on one thread: far more than any real use (a custom
/// component that encodes with its own tokenizer nests 1 deep), far less than what a pool
/// thread's stack holds (a level takes ~10 kB of it).
pub const MAX_CALLBACK_DEPTH: usize = 32;

/// Runs `call`, a call into user code (a custom component written in Python) that may call
/// tokenmill again, even the very tokenizer running it. Batch work started inside it runs on
/// the calling thread: a pool thread waiting inside a callback for nested work would take
/// other items of the outer batch meanwhile, each one callbacks deeper on its small stack.
/// Nested more than [`MAX_CALLBACK_DEPTH`] deep, `call` is not run and the result is an error
/// (a component that calls its own tokenizer without end would overflow the stack first on a
/// pool thread, before Python's recursion limit stops it).
pub fn callback<R>(what: &str, call: impl FnOnce() -> crate::Result<R>) -> crate::Result<R> {
    let depth = CALLBACK_DEPTH.with(Cell::get);
    if depth >= MAX_CALLBACK_DEPTH {
        return Err(crate::Error::Other(format!(
            "{what} was called {depth} levels deep inside custom components: a custom \
             component that calls its own tokenizer without end?"
        )));
    }
    /// Leaves the level however `call` returns (even by a panic).
    struct Level;
    impl Drop for Level {
        fn drop(&mut self) {
            CALLBACK_DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
    CALLBACK_DEPTH.with(|d| d.set(depth + 1));
    let _level = Level;
    call()
}

/// Whether the calling thread is inside a [`callback`] (batch work then runs on it).
fn in_callback() -> bool {
    CALLBACK_DEPTH.with(Cell::get) > 0
}

/// Whether batch work may run on several threads: [`set_parallelism`] if called, else
/// `TOKENIZERS_PARALLELISM` (see the module docs).
pub fn parallelism() -> bool {
    match OVERRIDE.load(Ordering::SeqCst) {
        OFF => false,
        ON => true,
        _ => env_parallelism(),
    }
}

fn env_parallelism() -> bool {
    match std::env::var(PARALLELISM_ENV) {
        Ok(value) => !matches!(
            value.to_ascii_lowercase().as_str(),
            "" | "off" | "false" | "f" | "no" | "n" | "0"
        ),
        Err(_) => true,
    }
}

/// Turns parallelism on or off for this process, whatever the environment says.
pub fn set_parallelism(on: bool) {
    OVERRIDE.store(if on { ON } else { OFF }, Ordering::SeqCst);
}

/// Whether parallelism was set explicitly (the environment variable exists, or
/// [`set_parallelism`] was called).
pub fn is_parallelism_configured() -> bool {
    std::env::var_os(PARALLELISM_ENV).is_some() || OVERRIDE.load(Ordering::SeqCst) != UNSET
}

/// Whether batch work has run on the pool in this process or before the fork that made it.
pub fn has_parallelism_been_used() -> bool {
    USED.load(Ordering::SeqCst)
}

/// How many threads a batch runs on now: 1 when parallelism is off, else the pool's size.
pub fn num_threads() -> usize {
    parallel_pool().map_or(1, ThreadPool::current_num_threads)
}

/// True when batch work should run on the calling thread (parallelism off, or a pool of one
/// thread, e.g. `TOKENMILL_NUM_THREADS=1`).
pub fn sequential() -> bool {
    parallel_pool().is_none()
}

/// Whether the last batch ran on the pool: a hint for code that runs too often to read the
/// environment (e.g. per cache miss), never a reason to take a different result.
pub fn may_run_in_parallel() -> bool {
    RUNS_PARALLEL.load(Ordering::Relaxed)
}

/// Runs `serial(input)` on the calling thread when batch work is sequential, else
/// `parallel(input)` inside the pool (where rayon's parallel iterators run on its threads).
pub fn either<I: Send, R: Send>(
    input: I,
    serial: impl FnOnce(I) -> R,
    parallel: impl FnOnce(I) -> R + Send,
) -> R {
    match parallel_pool() {
        None => serial(input),
        Some(pool) => pool.install(|| parallel(input)),
    }
}

/// The pool, when this batch is to run on several threads.
fn parallel_pool() -> Option<&'static ThreadPool> {
    if in_callback() {
        return None;
    }
    let pool = if parallelism() { pool().filter(|p| p.current_num_threads() > 1) } else { None };
    RUNS_PARALLEL.store(pool.is_some(), Ordering::Relaxed);
    if pool.is_some() && !USED.load(Ordering::Relaxed) {
        USED.store(true, Ordering::SeqCst);
    }
    pool
}

/// The process's pool, made on first use (None if no thread can be started: work then runs on
/// the calling thread).
fn pool() -> Option<&'static ThreadPool> {
    published(&POOL, build_pool)
}

/// The pool for a batch of `items` items run with an explicit request of `requested` threads
/// (0: tokenmill's setting, as every other batch). None (always for fewer than two items): run
/// it on the calling thread. The
/// request is capped at `items` and at the number of cores (more threads than cores only add
/// switches); a capped request of the core count or more gets the process's pool, a smaller one
/// a pool of that size kept for the process. So repeated calls never start threads.
pub fn pool_for(requested: usize, items: usize) -> Option<&'static ThreadPool> {
    if items < 2 || in_callback() {
        return None;
    }
    if requested == 0 {
        return parallel_pool();
    }
    let cores = cores();
    let n = requested.min(items).min(cores);
    if n <= 1 {
        None
    } else if n >= cores || n > SIZED_MAX {
        pool().filter(|p| p.current_num_threads() > 1)
    } else {
        published(&SIZED[n], || {
            ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(move |i| format!("tokenmill-{n}-{i}"))
                .build()
                .ok()
        })
    }
}

/// The number of cores this process may use (read once).
fn cores() -> usize {
    static CORES: AtomicUsize = AtomicUsize::new(0);
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            CORES.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// The pool published in `slot`, made by `build` and published if there is none yet.
fn published(
    slot: &AtomicPtr<ThreadPool>,
    build: impl FnOnce() -> Option<ThreadPool>,
) -> Option<&'static ThreadPool> {
    let current = slot.load(Ordering::Acquire);
    if !current.is_null() {
        // SAFETY: a published pool is leaked, never freed.
        return Some(unsafe { &*current });
    }
    FORK_HANDLER.call_once(register_fork_handler);
    let built = Box::into_raw(Box::new(build()?));
    match slot.compare_exchange(ptr::null_mut(), built, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: just published, never freed from now on.
        Ok(_) => Some(unsafe { &*built }),
        Err(other) => {
            // Another thread made one first: this one was never shared, so it can go.
            // SAFETY: `built` came from `Box::into_raw` above and was not published.
            drop(unsafe { Box::from_raw(built) });
            // SAFETY: a published pool is never freed.
            Some(unsafe { &*other })
        }
    }
}

fn build_pool() -> Option<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(configured_threads())
        .thread_name(|i| format!("tokenmill-{i}"))
        .build()
        .ok()
}

/// `TOKENMILL_NUM_THREADS`, or 0 (rayon's default: `RAYON_NUM_THREADS`, else one per core).
fn configured_threads() -> usize {
    let Some(value) = std::env::var_os(NUM_THREADS_ENV) else { return 0 };
    match value.to_str().and_then(|v| v.trim().parse::<usize>().ok()) {
        Some(n) => n,
        None => {
            eprintln!(
                "tokenmill: ignoring {NUM_THREADS_ENV}={value:?}: not a number of threads \
                (0 means one per core)"
            );
            0
        }
    }
}

extern "C" {
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> c_int;
    fn getenv(name: *const c_char) -> *const c_char;
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
}

fn register_fork_handler() {
    // SAFETY: registers a plain function; it only touches atomics, the environment and stderr.
    unsafe {
        pthread_atfork(None, None, Some(after_fork_in_child));
    }
}

/// What `tokenizers` prints in a child forked after parallelism was used, when the environment
/// does not say whether to use it.
const FORK_WARNING: &str = "huggingface/tokenizers: The current process just got forked, \
after parallelism has already been used. \
Disabling parallelism to avoid deadlocks...\nTo disable this warning, you can either:\n\
\t- Avoid using `tokenizers` before the fork if possible\n\
\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)\n";

/// Runs in the child right after a fork, with a single thread: forgets the pools (their threads
/// stayed in the parent), and turns parallelism off with `tokenizers`' warning when it was used
/// and is not configured. Only async-signal-safe calls: atomics, `getenv`, `write`.
extern "C" fn after_fork_in_child() {
    POOL.store(ptr::null_mut(), Ordering::SeqCst);
    for slot in &SIZED {
        slot.store(ptr::null_mut(), Ordering::SeqCst);
    }
    RUNS_PARALLEL.store(false, Ordering::Relaxed);
    // SAFETY: a NUL-terminated name; the result is only compared with null.
    let configured = !unsafe { getenv(c"TOKENIZERS_PARALLELISM".as_ptr()) }.is_null()
        || OVERRIDE.load(Ordering::SeqCst) != UNSET;
    if USED.load(Ordering::SeqCst) && !configured {
        // SAFETY: writes a static buffer to stderr; a failed write is of no consequence.
        unsafe {
            write(2, FORK_WARNING.as_ptr().cast(), FORK_WARNING.len());
        }
        OVERRIDE.store(OFF, Ordering::SeqCst);
    }
}

/// `f` over `items` (a vector, a slice, ...), in order, collected (e.g. into
/// `Result<Vec<_>>`).
pub fn map_collect<I, R, C>(items: I, f: impl Fn(<I as IntoIterator>::Item) -> R + Sync + Send) -> C
where
    I: IntoIterator + IntoParallelIterator<Item = <I as IntoIterator>::Item> + Send,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R> + Send,
{
    either(
        items,
        |items| items.into_iter().map(&f).collect(),
        |items| items.into_par_iter().map(&f).collect(),
    )
}

/// `f` over `items`, in order, into a vector, or the error of the first item (in input order)
/// that fails. With several threads every item is processed and each result written straight
/// into its place in one vector: collecting rayon's `Result`s instead gathers per-thread chunks
/// and copies them into one vector on the calling thread, freeing there the chunks the workers
/// allocated (serial work at the end of every batch), and reports whichever error it met first.
pub fn try_map_collect<T, R, E>(
    items: Vec<T>,
    f: impl Fn(T) -> Result<R, E> + Sync + Send,
) -> Result<Vec<R>, E>
where
    T: Send,
    R: Send,
    E: Send,
{
    either(
        items,
        |items| items.into_iter().map(&f).collect(),
        |items| {
            let results: Vec<Result<R, E>> = items.into_par_iter().map(&f).collect();
            results.into_iter().collect()
        },
    )
}

/// `f` over `items` by reference, in order, collected (`map_collect` of the slice).
pub fn map_ref_collect<'a, T, R, C>(items: &'a [T], f: impl Fn(&'a T) -> R + Sync + Send) -> C
where
    T: Sync,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R> + Send,
{
    map_collect(items, f)
}

/// `f` on every item of `items`, in place.
pub fn for_each_mut<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    either(items, |items| items.iter_mut().for_each(&f), |items| items.par_iter_mut().for_each(&f))
}

/// `f(item, chunk)` for each item of `items` and its `chunk_len`-long chunk of `out` (item `i`
/// gets `out[i * chunk_len..(i + 1) * chunk_len]`): rows of a table filled in parallel.
pub fn for_each_with_chunk<T: Sync, U: Send>(
    items: &[T],
    out: &mut [U],
    chunk_len: usize,
    f: impl Fn(&T, &mut [U]) + Sync + Send,
) {
    if chunk_len == 0 {
        return;
    }
    either(
        out,
        |out| out.chunks_mut(chunk_len).zip(items).for_each(|(chunk, item)| f(item, chunk)),
        |out| out.par_chunks_mut(chunk_len).zip(items).for_each(|(chunk, item)| f(item, chunk)),
    )
}

/// Drops `items`, in parallel when the pool has more than one thread (freeing a batch of
/// encodings is millions of small frees; done by the caller alone it is a serial tail of every
/// batch call).
pub fn drop_all<T: Send>(items: Vec<T>) {
    either(items, drop, |items| items.into_par_iter().for_each(drop))
}

/// Produces a result for every item that `feed` hands over and hands the results to `consume`
/// in the order of the items, always on the calling thread (`consume` gets each run of results
/// that are ready in order, as one call). `feed` runs first, on the calling thread, and passes
/// the items one by one to the function it is given; up to `helpers` of the pool's threads
/// start producing as soon as there are two items (one item is produced on the calling
/// thread, with no pool thread woken), while `feed` goes on (e.g. while the
/// calling thread reads the texts of a batch out of Python objects, which only it can do, the
/// helpers already encode the first ones). Once `feed` is done, the calling thread produces too,
/// whenever the next result in order is not ready yet. With `helpers: 0` (or parallelism off,
/// see the module docs) everything runs on
/// the calling thread: every item is produced, then all are consumed in one call (alternating
/// item by item was ~15% slower for SentencePiece BPE, whose word cache the consumer's work
/// evicted from the core's cache each time).
///
/// Why the calling thread produces too: when consuming can only happen on one thread (building
/// Python objects under the GIL), a consumer waiting beside a full pool makes one thread more
/// than there are cores. Each wake-up of the consumer then preempts a producer, and on two
/// cores those switches cost a tenth of the time. Here a pool of `helpers + 1` threads keeps
/// exactly that many threads busy. The first error of `feed` or `consume` stops the helpers;
/// each one finishes its current item.
pub fn produce_in_order<T, R, E>(
    helpers: usize,
    feed: impl FnOnce(&mut dyn FnMut(T)) -> Result<(), E>,
    produce: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(Vec<R>) -> Result<(), E>,
) -> Result<(), E>
where
    T: Send + Sync,
    R: Send,
{
    let pool = if helpers == 0 { None } else { parallel_pool() };
    let Some(pool) = pool else {
        let mut items = Vec::new();
        feed(&mut |item| items.push(item))?;
        return if items.is_empty() {
            Ok(())
        } else {
            consume(items.iter().map(produce).collect())
        };
    };
    let fed = Fed::default();
    let claimed = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let claim = || {
        if stop.load(Ordering::Relaxed) {
            None
        } else {
            Some(claimed.fetch_add(1, Ordering::Relaxed))
        }
    };
    let (sender, receiver) = mpsc::channel::<(usize, R)>();
    pool.in_place_scope(|scope| {
        let spawn_helpers = || {
            for _ in 0..helpers {
                let (sender, claim, produce, fed) = (sender.clone(), &claim, &produce, &fed);
                scope.spawn(move |_| {
                    while let Some(i) = claim() {
                        let Some(item) = fed.wait_for(i) else { break };
                        // A send fails only once the caller has stopped receiving (after an error).
                        if sender.send((i, produce(&item))).is_err() {
                            break;
                        }
                    }
                });
            }
        };
        // Ends the feed however `feed` returns (even by a panic): no helper waits for more.
        let feeding = EndOfFeed(&fed);
        // Helpers start with the second item: a feed of one item (a batch of one short text,
        // e.g. every single-text call) is produced here, without waking a pool thread, which
        // costs several times the encoding of a sentence.
        let result = feed(&mut |item| {
            if fed.push(item) == 2 {
                spawn_helpers();
            }
        });
        drop(feeding);
        drop(sender);
        if let Err(e) = result {
            stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        let n = fed.len();
        let mut pending: Vec<Option<R>> = (0..n).map(|_| None).collect();
        let mut next = 0;
        while next < n {
            while let Ok((i, result)) = receiver.try_recv() {
                pending[i] = Some(result);
            }
            let run: Vec<R> = pending[next..].iter_mut().map_while(Option::take).collect();
            if !run.is_empty() {
                next += run.len();
                if let Err(e) = consume(run) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            } else if let Some(i) = claim().filter(|&i| i < n) {
                pending[i] = fed.wait_for(i).map(|item| produce(&item));
            } else {
                match receiver.recv() {
                    Ok((i, result)) => pending[i] = Some(result),
                    // Every helper is gone with results missing: one panicked, and the scope
                    // re-raises that panic when it ends.
                    Err(_) => break,
                }
            }
        }
        Ok(())
    })
}

/// The items of [`produce_in_order`]'s feed so far, for the threads that produce them.
struct Fed<T> {
    state: Mutex<FedState<T>>,
    more: Condvar,
}

struct FedState<T> {
    items: Vec<Arc<T>>,
    ended: bool,
    /// Threads waiting for an item (so that a push wakes no one, and makes no system call,
    /// when none is).
    waiting: usize,
}

impl<T> Default for Fed<T> {
    fn default() -> Self {
        Fed {
            state: Mutex::new(FedState { items: Vec::new(), ended: false, waiting: 0 }),
            more: Condvar::new(),
        }
    }
}

impl<T> Fed<T> {
    fn lock(&self) -> MutexGuard<'_, FedState<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds an item; returns how many there are now.
    fn push(&self, item: T) -> usize {
        let mut state = self.lock();
        state.items.push(Arc::new(item));
        if state.waiting > 0 {
            self.more.notify_all();
        }
        state.items.len()
    }

    fn end(&self) {
        self.lock().ended = true;
        self.more.notify_all();
    }

    fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Item `i`, once fed; None if the feed ends without it.
    fn wait_for(&self, i: usize) -> Option<Arc<T>> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.items.get(i) {
                return Some(Arc::clone(item));
            }
            if state.ended {
                return None;
            }
            state.waiting += 1;
            state = self.more.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.waiting -= 1;
        }
    }
}

/// Ends a feed when dropped.
struct EndOfFeed<'a, T>(&'a Fed<T>);

impl<T> Drop for EndOfFeed<'_, T> {
    fn drop(&mut self) {
        self.0.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_thread_counts_are_capped_and_pooled() {
        let size =
            |requested, items| pool_for(requested, items).map(ThreadPool::current_num_threads);
        assert_eq!(size(usize::MAX, 1), None, "one item runs on the calling thread");
        assert_eq!(size(1, 1000), None);
        let cores = cores();
        if cores > 2 {
            assert_eq!(size(2, 1000), Some(2));
            assert_eq!(size(1000, 2), Some(2), "never more threads than items");
        }
        // A huge request is capped at the core count (the process's pool, whatever its size).
        let huge = pool_for(1 << 40, 1 << 40);
        assert_eq!(huge.map(|p| p as *const ThreadPool), pool().map(|p| p as *const ThreadPool));
        // The same request gets the same pool again: nothing is started per call.
        for requested in [2, 3, 64, 1 << 20] {
            let first = pool_for(requested, 100).map(|p| p as *const ThreadPool);
            assert_eq!(pool_for(requested, 100).map(|p| p as *const ThreadPool), first);
        }
    }

    #[test]
    fn results_keep_order_and_errors_stop() {
        let doubled: Vec<u32> = map_collect((0..1000u32).collect::<Vec<_>>(), |x| 2 * x);
        assert_eq!(doubled, (0..1000u32).map(|x| 2 * x).collect::<Vec<_>>());
        let failed: Result<Vec<u32>, String> =
            map_ref_collect(
                &[1u32, 2, 3],
                |&x| if x == 2 { Err("two".to_string()) } else { Ok(x) },
            );
        assert_eq!(failed, Err("two".to_string()));
        let mut items = vec![1, 2, 3];
        for_each_mut(&mut items, |x| *x += 1);
        assert_eq!(items, vec![2, 3, 4]);
        let mut table = vec![0; 6];
        for_each_with_chunk(&items, &mut table, 2, |&x, row| row.fill(x));
        assert_eq!(table, vec![2, 2, 3, 3, 4, 4]);
        drop_all(vec![String::from("a"); 100]);
        let halves: Result<Vec<u32>, u32> =
            try_map_collect(
                (0..1000u32).collect(),
                |x| if x % 2 == 0 { Ok(x / 2) } else { Err(x) },
            );
        assert_eq!(halves, Err(1), "the first failure in input order");
        let all: Result<Vec<u32>, u32> = try_map_collect((0..1000u32).collect(), Ok);
        assert_eq!(all, Ok((0..1000).collect()));
    }

    #[test]
    fn produce_in_order_hands_every_result_over_in_order() {
        for helpers in [0, 1, 3] {
            for n in [0, 1, 2, 7, 500] {
                let mut seen = Vec::new();
                let mut calls = 0;
                let done: Result<(), ()> = produce_in_order(
                    helpers,
                    |push| {
                        let _: () = (0..n).for_each(push);
                        Ok(())
                    },
                    |&i| i * 3,
                    |run| {
                        calls += 1;
                        seen.extend(run);
                        Ok(())
                    },
                );
                assert_eq!(done, Ok(()));
                assert_eq!(
                    seen,
                    (0..n).map(|i| i * 3).collect::<Vec<_>>(),
                    "helpers {helpers}, n {n}"
                );
                assert!(calls <= n);
            }
        }
    }

    #[test]
    fn produce_in_order_stops_at_the_first_consume_error() {
        let produced = AtomicUsize::new(0);
        let mut consumed = 0;
        let done = produce_in_order(
            2,
            |push| {
                let _: () = (0..10_000).for_each(push);
                Ok(())
            },
            |&i| {
                produced.fetch_add(1, Ordering::Relaxed);
                if i >= 10 {
                    // Slow enough that all 10,000 would take seconds if the stop were ignored.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                i
            },
            |run| {
                consumed += run.len();
                if consumed >= 10 {
                    Err(consumed)
                } else {
                    Ok(())
                }
            },
        );
        assert!(matches!(done, Err(c) if c >= 10));
        // The helpers stopped well before the end (each finishes at most its current item
        // after the stop; the caller's loop no longer claims).
        assert!(produced.load(Ordering::Relaxed) < 10_000);
    }

    #[test]
    fn produce_in_order_starts_before_the_feed_ends_and_stops_at_its_error() {
        // The helper produces item 0 while the feed waits for it: only possible if helpers
        // start on the items fed so far.
        let first_done = AtomicBool::new(false);
        let mut seen = Vec::new();
        let done: Result<(), ()> = produce_in_order(
            1,
            |push| {
                push(0);
                push(1);
                while !first_done.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                (2..50).for_each(push);
                Ok(())
            },
            |&i| {
                first_done.store(true, Ordering::Release);
                i + 1
            },
            |run| {
                seen.extend(run);
                Ok(())
            },
        );
        assert_eq!(done, Ok(()));
        assert_eq!(seen, (1..=50).collect::<Vec<_>>());
        // A feed of one item is produced on the calling thread: no pool thread is woken.
        let caller = std::thread::current().id();
        let mut producers = Vec::new();
        let done: Result<(), ()> = produce_in_order(
            1,
            |push| {
                let _: () = push(7);
                Ok(())
            },
            |_| std::thread::current().id(),
            |run| {
                producers.extend(run);
                Ok(())
            },
        );
        assert_eq!(done, Ok(()));
        assert_eq!(producers, vec![caller]);
        // An error of the feed ends the call, and no helper waits for items that never come.
        for helpers in [0, 1, 3] {
            let mut consumed = 0;
            let done = produce_in_order(
                helpers,
                |push| {
                    (0..20).for_each(push);
                    Err("bad item 20")
                },
                |&i| i,
                |run| {
                    consumed += run.len();
                    Ok(())
                },
            );
            assert_eq!(done, Err("bad item 20"));
            assert_eq!(consumed, 0);
        }
    }
}
