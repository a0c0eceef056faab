//! What a trainer records of its last run (`merge_history`): one type for every trainer.
use std::sync::Mutex;

/// The steps of the last training run, one `T` each. Behind a lock because the Tokenizer trains
/// through `&self` (a trainer's options do not change by training). A record of the last run,
/// not part of a trainer's identity: trainers compare equal whatever their histories.
#[derive(Debug)]
pub struct History<T>(Mutex<Vec<T>>);

impl<T: Clone> History<T> {
    /// The recorded steps (empty before training, or if a run panicked while recording).
    pub fn get(&self) -> Vec<T> {
        self.0.lock().map(|h| h.clone()).unwrap_or_default()
    }

    pub fn set(&self, history: Vec<T>) {
        if let Ok(mut h) = self.0.lock() {
            *h = history;
        }
    }
}

impl<T> Default for History<T> {
    fn default() -> Self {
        History(Mutex::new(Vec::new()))
    }
}

impl<T: Clone> Clone for History<T> {
    fn clone(&self) -> Self {
        History(Mutex::new(self.get()))
    }
}

impl<T> PartialEq for History<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
