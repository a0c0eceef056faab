//! `SharedRng`: the random generator of one model (BPE dropout, Unigram sampling), shared by the
//! threads that use the model. A clone gets a copy of its state, so a cloned model draws what
//! the original would.
use std::sync::{Mutex, MutexGuard};

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug)]
pub struct SharedRng(Mutex<ChaCha8Rng>);

impl SharedRng {
    /// Seeded with `seed`, or from the operating system.
    pub fn new(seed: Option<u64>) -> Self {
        let rng = match seed {
            Some(s) => ChaCha8Rng::seed_from_u64(s),
            None => ChaCha8Rng::from_entropy(),
        };
        SharedRng(Mutex::new(rng))
    }

    /// The generator, locked. A thread that panicked while holding it left a valid generator
    /// (its state is only ever advanced), so the lock is taken over.
    pub fn lock(&self) -> MutexGuard<'_, ChaCha8Rng> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn reseed(&self, seed: u64) {
        *self.lock() = ChaCha8Rng::seed_from_u64(seed);
    }

    /// A seed drawn from the generator, for a generator of one's own (the lock is held only to
    /// draw it).
    pub fn next_seed(&self) -> u64 {
        self.lock().next_u64()
    }
}

impl Clone for SharedRng {
    fn clone(&self) -> Self {
        SharedRng(Mutex::new(self.lock().clone()))
    }
}
