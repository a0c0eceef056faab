//! Batch work on rayon's thread pool, or on the calling thread when the pool has one thread.
//!
//! Why not always the pool: with one thread the pool gains nothing, and everything the work
//! allocates (an encoding's vectors and token strings) would be allocated on the pool's thread
//! and freed on the caller's (Python drops the results there). Frees from another thread take
//! mimalloc's slow cross-thread path; on the calling thread they are plain local frees. This is
//! also what `tokenizers` does when its parallelism is off.
use rayon::prelude::*;

/// True when batch work should run on the calling thread (a pool of one thread, e.g.
/// `RAYON_NUM_THREADS=1`).
pub fn sequential() -> bool {
    rayon::current_num_threads() <= 1
}

/// `f` over `items`, in order, collected (e.g. into `Result<Vec<_>>`).
pub fn map_collect<T, R, C>(items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> C
where
    T: Send,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R>,
{
    if sequential() {
        items.into_iter().map(f).collect()
    } else {
        items.into_par_iter().map(f).collect()
    }
}

/// `f` over `items`, in order, into a vector, or the error of the first item (in input order)
/// that fails. With several threads every item is processed and each result written straight
/// into its place in one vector: collecting rayon's `Result`s instead gathers per-thread chunks
/// and copies them into one vector on the calling thread, freeing there the chunks the workers
/// allocated (serial work at the end of every batch), and reports whichever error it met first.
pub fn try_map_collect<T, R, E>(items: Vec<T>, f: impl Fn(T) -> Result<R, E> + Sync + Send) -> Result<Vec<R>, E>
where
    T: Send,
    R: Send,
    E: Send,
{
    if sequential() {
        return items.into_iter().map(f).collect();
    }
    let results: Vec<Result<R, E>> = items.into_par_iter().map(f).collect();
    results.into_iter().collect()
}

/// `f` over `items` by reference, in order, collected.
pub fn map_ref_collect<'a, T, R, C>(items: &'a [T], f: impl Fn(&'a T) -> R + Sync + Send) -> C
where
    T: Sync,
    R: Send,
    C: FromIterator<R> + FromParallelIterator<R>,
{
    if sequential() {
        items.iter().map(f).collect()
    } else {
        items.par_iter().map(f).collect()
    }
}

/// `f` on every item of `items`, in place.
pub fn for_each_mut<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    if sequential() {
        items.iter_mut().for_each(f)
    } else {
        items.par_iter_mut().for_each(f)
    }
}

/// `f(item, chunk)` for each item of `items` and its `chunk_len`-long chunk of `out` (item `i`
/// gets `out[i * chunk_len..(i + 1) * chunk_len]`): rows of a table filled in parallel.
pub fn for_each_with_chunk<T: Sync, U: Send>(items: &[T], out: &mut [U], chunk_len: usize, f: impl Fn(&T, &mut [U]) + Sync + Send) {
    if chunk_len == 0 {
        return;
    }
    if sequential() {
        out.chunks_mut(chunk_len).zip(items).for_each(|(chunk, item)| f(item, chunk))
    } else {
        out.par_chunks_mut(chunk_len).zip(items).for_each(|(chunk, item)| f(item, chunk))
    }
}

/// Drops `items`, in parallel when the pool has more than one thread (freeing a batch of
/// encodings is millions of small frees; done by the caller alone it is a serial tail of every
/// batch call).
pub fn drop_all<T: Send>(items: Vec<T>) {
    if sequential() {
        drop(items)
    } else {
        items.into_par_iter().for_each(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_order_and_errors_stop() {
        let doubled: Vec<u32> = map_collect((0..1000u32).collect(), |x| 2 * x);
        assert_eq!(doubled, (0..1000u32).map(|x| 2 * x).collect::<Vec<_>>());
        let failed: Result<Vec<u32>, String> = map_ref_collect(&[1u32, 2, 3], |&x| if x == 2 { Err("two".to_string()) } else { Ok(x) });
        assert_eq!(failed, Err("two".to_string()));
        let mut items = vec![1, 2, 3];
        for_each_mut(&mut items, |x| *x += 1);
        assert_eq!(items, vec![2, 3, 4]);
        let mut table = vec![0; 6];
        for_each_with_chunk(&items, &mut table, 2, |&x, row| row.fill(x));
        assert_eq!(table, vec![2, 2, 3, 3, 4, 4]);
        drop_all(vec![String::from("a"); 100]);
        let halves: Result<Vec<u32>, u32> = try_map_collect((0..1000u32).collect(), |x| if x % 2 == 0 { Ok(x / 2) } else { Err(x) });
        assert_eq!(halves, Err(1), "the first failure in input order");
        let all: Result<Vec<u32>, u32> = try_map_collect((0..1000u32).collect(), Ok);
        assert_eq!(all, Ok((0..1000).collect()));
    }
}
