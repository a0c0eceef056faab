//! A word cache's large table held once for all threads: an immutable *snapshot* that every
//! thread reads without a lock or an atomic, replaced by a bigger one now and then.
//!
//! Why: with a table per thread, two threads keep two copies of the same words (20 MB each for
//! the ~230,000 distinct words of 20 MB of English), which do not fit the L3 cache together,
//! and each thread tokenizes for itself the words the other one already did. Here the words
//! live in one [`Shared`] per model: the current snapshot (`Arc<M>`, never written once
//! published) and the *pending* words tokenized since it was built. Each thread keeps a
//! [`Local`]: a clone of the snapshot's `Arc` and a small private map of the words it
//! tokenized that the snapshot lacks. A lookup reads the snapshot, then the private map; only
//! when both miss does the thread look for a newer snapshot (one relaxed atomic load) or, when
//! batches run on several threads, in the pending words (under a lock). A thread that stores
//! a word adds it to its private map and to the pending words; when the pending words reach
//! half the snapshot's size (at least `MIN_PUBLISH`), that thread builds the next snapshot
//! (a copy of the current one plus the pending words) and publishes it. The snapshot thus
//! grows geometrically (the copies add up to a few times its final size), and after warm-up
//! nearly every lookup is answered by the snapshot. With one thread the same path runs: the
//! snapshot simply is that thread's table.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A map of cached words that a snapshot can be built from.
pub(crate) trait SnapshotMap: Default + Clone {
    /// Words held.
    fn len(&self) -> usize;
    /// This map with the words of `pending` it lacks added, while it holds fewer than
    /// `capacity` (the next snapshot).
    fn merged(&self, pending: &Self, capacity: usize) -> Self;
    /// Forgets every word (keeping the allocation).
    fn clear(&mut self);
}

/// Pending words that make a new snapshot worth building at least (fewer would rebuild the
/// early snapshots too often for nothing).
const MIN_PUBLISH: usize = 4096;

/// One model's words shared by all threads.
pub(crate) struct Shared<M> {
    /// The current snapshot, with its generation.
    current: Mutex<(Arc<M>, u64)>,
    /// The generation of `current`, read without the lock to notice a new one.
    generation: AtomicU64,
    /// Words stored since `current` was built.
    pending: Mutex<M>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<M: SnapshotMap> Default for Shared<M> {
    fn default() -> Self {
        Shared {
            current: Mutex::new((Arc::new(M::default()), 0)),
            generation: AtomicU64::new(0),
            pending: Mutex::default(),
        }
    }
}

impl<M: SnapshotMap> Shared<M> {
    fn current(&self) -> (Arc<M>, u64) {
        let current = locked(&self.current);
        (current.0.clone(), current.1)
    }

    /// Builds and publishes the next snapshot from the current one and `pending` (whose lock
    /// the caller holds, so that no word is stored meanwhile and none is lost).
    #[cold]
    fn publish(&self, pending: &mut M, capacity: usize) -> (Arc<M>, u64) {
        let (base, generation) = self.current();
        let next = base.merged(pending, capacity);
        drop(base);
        pending.clear();
        let next = (Arc::new(next), generation + 1);
        *locked(&self.current) = next.clone();
        self.generation.store(generation + 1, Ordering::Relaxed);
        next
    }
}

/// One thread's view of a [`Shared`]: the snapshot it reads and its private words.
pub(crate) struct Local<M> {
    shared: Arc<Shared<M>>,
    snapshot: Arc<M>,
    generation: u64,
    private: M,
}

impl<M: SnapshotMap> Local<M> {
    pub(crate) fn new(shared: Arc<Shared<M>>) -> Self {
        let (snapshot, generation) = shared.current();
        Local { shared, snapshot, generation, private: M::default() }
    }

    /// The snapshot this thread reads (look here first).
    #[inline]
    pub(crate) fn snapshot(&self) -> &M {
        &self.snapshot
    }

    /// The words this thread stored that its snapshot lacks (look here second).
    #[inline]
    pub(crate) fn private(&self) -> &M {
        &self.private
    }

    /// Words this thread sees.
    pub(crate) fn len(&self) -> usize {
        self.snapshot.len() + self.private.len()
    }

    /// After a miss of both maps: takes the newest snapshot if another thread published one
    /// (then true: look again), dropping the private words (the new snapshot has them).
    #[inline]
    pub(crate) fn refresh(&mut self) -> bool {
        if self.shared.generation.load(Ordering::Relaxed) == self.generation {
            return false;
        }
        self.adopt(self.shared.current());
        true
    }

    fn adopt(&mut self, (snapshot, generation): (Arc<M>, u64)) {
        self.snapshot = snapshot;
        self.generation = generation;
        self.private.clear();
    }

    /// After a miss of everything: `find` in the words other threads stored since the last
    /// snapshot (under the lock); what it returns is stored in this thread's private map by
    /// `keep`.
    #[cold]
    pub(crate) fn find_pending<T>(
        &mut self,
        find: impl FnOnce(&M) -> Option<T>,
        keep: impl FnOnce(&mut M, &T),
    ) -> Option<T> {
        let found = find(&locked(&self.shared.pending))?;
        keep(&mut self.private, &found);
        Some(found)
    }

    /// Stores a word (`insert` adds it to a map) for this thread and the others, unless this
    /// thread sees `capacity` words already (then false); publishes the next snapshot when it
    /// is due.
    pub(crate) fn store(&mut self, capacity: usize, insert: impl Fn(&mut M)) -> bool {
        if self.len() >= capacity {
            return false;
        }
        insert(&mut self.private);
        let shared = Arc::clone(&self.shared);
        let mut pending = locked(&shared.pending);
        // Snapshots are published only under the `pending` lock, so this stays true meanwhile.
        let base = if shared.generation.load(Ordering::Relaxed) == self.generation {
            self.snapshot.len()
        } else {
            locked(&shared.current).0.len()
        };
        if base + pending.len() < capacity {
            insert(&mut pending);
        }
        let full = base + pending.len() >= capacity && pending.len() > 0;
        if full || pending.len() >= (base / 2).max(MIN_PUBLISH) {
            let next = shared.publish(&mut pending, capacity);
            drop(pending);
            self.adopt(next);
        }
        true
    }
}

/// The [`Shared`] words of the models used last, by cache id: at most `MAX_MODELS`; when full
/// it starts over (tables that hold an evicted one keep using it).
pub(crate) struct Registry<M> {
    models: Mutex<Vec<(u64, Arc<Shared<M>>)>>,
}

const MAX_MODELS: usize = 64;

impl<M: SnapshotMap> Registry<M> {
    pub(crate) const fn new() -> Self {
        Registry { models: Mutex::new(Vec::new()) }
    }

    /// A new thread view of the words of the model with `cache_id`.
    pub(crate) fn local(&self, cache_id: u64) -> Local<M> {
        let mut models = locked(&self.models);
        let shared = match models.iter().find(|(id, _)| *id == cache_id) {
            Some((_, shared)) => shared.clone(),
            None => {
                if models.len() >= MAX_MODELS {
                    models.clear();
                }
                let shared = Arc::new(Shared::default());
                models.push((cache_id, shared.clone()));
                shared
            }
        };
        Local::new(shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A map of numbers to themselves.
    #[derive(Default, Clone)]
    struct Numbers(BTreeMap<u32, u32>);

    impl SnapshotMap for Numbers {
        fn len(&self) -> usize {
            self.0.len()
        }
        fn merged(&self, pending: &Self, capacity: usize) -> Self {
            let mut next = self.clone();
            for (&k, &v) in &pending.0 {
                if next.0.len() >= capacity {
                    break;
                }
                next.0.insert(k, v);
            }
            next
        }
        fn clear(&mut self) {
            self.0.clear()
        }
    }

    fn has(local: &Local<Numbers>, n: u32) -> bool {
        local.snapshot().0.contains_key(&n) || local.private().0.contains_key(&n)
    }

    #[test]
    fn one_thread_grows_its_snapshot_geometrically() {
        let registry = Registry::<Numbers>::new();
        let mut local = registry.local(1);
        let mut generations = vec![0];
        for n in 0..50_000 {
            local.store(usize::MAX, |m| {
                m.0.insert(n, n);
            });
            if generations.last() != Some(&local.generation) {
                generations.push(local.generation);
                // A snapshot was just built from everything stored: nothing is private.
                assert_eq!(local.private().len(), 0);
                assert_eq!(local.snapshot().len(), n as usize + 1);
            }
        }
        assert!((0..50_000).all(|n| has(&local, n)));
        // 4096, 8192, 12288, 18432, 27648, 41472: each at least 1.5 times the last.
        assert_eq!(local.snapshot().len(), 41_472);
        assert_eq!(generations, (0..=6).collect::<Vec<u64>>());
    }

    #[test]
    fn words_stored_by_one_thread_are_found_by_another_after_publication() {
        let registry = Arc::new(Registry::<Numbers>::new());
        let mut reader = registry.local(7);
        let writer_registry = registry.clone();
        std::thread::spawn(move || {
            let mut writer = writer_registry.local(7);
            for n in 0..10 {
                writer.store(1000, |m| {
                    m.0.insert(n, n);
                });
            }
        })
        .join()
        .unwrap();
        // Not published yet (10 < MIN_PUBLISH): only in the pending words.
        assert!(!has(&reader, 3));
        assert!(!reader.refresh());
        let pending = reader.find_pending(
            |m| m.0.get(&3).copied(),
            |m, &v| {
                m.0.insert(3, v);
            },
        );
        assert_eq!(pending, Some(3));
        assert!(reader.private().0.contains_key(&3));
        // Enough words to publish: the reader sees the new generation on its next miss.
        let writer_registry = registry.clone();
        std::thread::spawn(move || {
            let mut writer = writer_registry.local(7);
            for n in 10..(MIN_PUBLISH as u32 + 10) {
                writer.store(usize::MAX, |m| {
                    m.0.insert(n, n);
                });
            }
        })
        .join()
        .unwrap();
        assert!(!has(&reader, 100));
        assert!(reader.refresh());
        assert!(has(&reader, 100) && has(&reader, 3));
        assert_eq!(reader.private().len(), 0);
        assert!(!reader.refresh());
        // Another model's words are apart.
        assert!(!has(&registry.local(8), 100));
    }

    #[test]
    fn capacity_bounds_the_words_a_thread_sees() {
        let registry = Registry::<Numbers>::new();
        let mut local = registry.local(1);
        for n in 0..10_000 {
            local.store(5000, |m| {
                m.0.insert(n, n);
            });
        }
        // The first 5000 words, published as the table filled up.
        assert_eq!(local.len(), 5000);
        assert_eq!(local.snapshot().len(), 5000);
        assert!(has(&local, 4999) && !has(&local, 5000));
        let mut other = registry.local(1);
        other.store(5000, |m| {
            m.0.insert(99_999, 0);
        });
        assert!(!has(&other, 99_999));
    }
}
