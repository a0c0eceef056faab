//! The state of a `tokenmill.Tokenizer`, safe to read and change from any number of threads.
//!
//! Copy-on-write: the state (the core pipeline and the shared components it copies) is an
//! immutable snapshot behind an `Arc`. A reader (encode, decode, a getter) takes the current
//! `Arc` under a lock held only for that clone, then works on its snapshot without the GIL and
//! without any lock, so it sees the tokenizer entirely before or entirely after any change.
//! A writer (a setter, `add_tokens`, `train`, ...) works under a writers' mutex: it changes the
//! state in place when no reader holds it (the usual case: no copy, the model's word cache
//! stays warm), else it changes a copy and publishes that, while running readers finish on the
//! old one. Nothing is ever borrowed mutably from Python, so no call raises "Already borrowed".
//!
//! Locks and the GIL: a lock is only waited for without the GIL (a thread holding a lock may
//! need the GIL, e.g. for a custom Python component or the training iterator), and no lock is
//! held while a reader runs.
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockWriteGuard, TryLockError};

use pyo3::prelude::*;
use tokenmill_core::decoders::DecoderWrapper;
use tokenmill_core::models::ModelWrapper;
use tokenmill_core::normalizers::NormalizerWrapper;
use tokenmill_core::pre_tokenizers::PreTokenizerWrapper;
use tokenmill_core::processors::PostProcessorWrapper;
use tokenmill_core::tokenizer::Tokenizer;

use crate::errors::ToPyResult;
use crate::shared::{Node, Sequenced, Shared, Versioned};

/// A snapshot: the pipeline encode / decode run on, and the shared components (the Python
/// objects' values) it holds copies of.
#[derive(Clone)]
pub(crate) struct State {
    pub(crate) tokenizer: Tokenizer,
    pub(crate) components: Components,
}

/// The components shared with Python objects, each with the version stamp of the copy the
/// pipeline holds.
#[derive(Clone)]
pub(crate) struct Components {
    pub(crate) model: Attached<Shared<ModelWrapper>>,
    pub(crate) normalizer: Option<Attached<Node<NormalizerWrapper>>>,
    pub(crate) pre_tokenizer: Option<Attached<Node<PreTokenizerWrapper>>>,
    pub(crate) post_processor: Option<Attached<Node<PostProcessorWrapper>>>,
    pub(crate) decoder: Option<Attached<Node<DecoderWrapper>>>,
}

/// A shared component and the stamp of the copy in the pipeline.
#[derive(Clone)]
pub(crate) struct Attached<H> {
    pub(crate) handle: H,
    synced: u64,
}

/// A shared component handle: a version stamp and a copy of the current value.
pub(crate) trait Handle: Versioned {
    type Value;
    fn copy(&self) -> Self::Value;
}

impl Handle for Shared<ModelWrapper> {
    type Value = ModelWrapper;
    fn copy(&self) -> ModelWrapper {
        self.snapshot()
    }
}

impl<W: Sequenced> Handle for Node<W> {
    type Value = W;
    fn copy(&self) -> W {
        self.snapshot()
    }
}

/// No stamp is ever this, so a newly attached component is always copied in.
const NEVER_SYNCED: u64 = u64::MAX;

impl<H: Handle> Attached<H> {
    /// A component whose value the pipeline already holds.
    fn synced(handle: H) -> Self {
        let stamp = handle.stamp();
        Attached { handle, synced: stamp }
    }

    /// A component to be copied into the pipeline, and that copy.
    pub(crate) fn attach(handle: H) -> (Self, H::Value) {
        let mut attached = Attached { handle, synced: NEVER_SYNCED };
        let value = attached.refresh().expect("a newly attached component is stale");
        (attached, value)
    }

    fn stale(&self) -> bool {
        self.handle.stamp() != self.synced
    }

    /// The current value if the pipeline's copy is stale. The stamp is read before the copy
    /// is taken: a write in between makes the next check stale again, never lost.
    fn refresh(&mut self) -> Option<H::Value> {
        let stamp = self.handle.stamp();
        if stamp == self.synced {
            return None;
        }
        let value = self.handle.copy();
        self.synced = stamp;
        Some(value)
    }
}

/// `(attached, value)` for a component given from Python, `(None, None)` for None.
pub(crate) fn attach_optional<H: Handle>(handle: Option<H>) -> (Option<Attached<H>>, Option<H::Value>) {
    match handle.map(Attached::attach) {
        Some((attached, value)) => (Some(attached), Some(value)),
        None => (None, None),
    }
}

fn stale<H: Handle>(component: &Option<Attached<H>>) -> bool {
    component.as_ref().is_some_and(Attached::stale)
}

fn refresh<H: Handle>(component: &mut Option<Attached<H>>) -> Option<H::Value> {
    component.as_mut().and_then(Attached::refresh)
}

impl Components {
    /// Shared components holding copies of the pipeline's own.
    fn of(tokenizer: &Tokenizer) -> Self {
        Components {
            model: Attached::synced(Shared::new(tokenizer.get_model().clone())),
            normalizer: tokenizer.get_normalizer().map(|n| Attached::synced(Node::new(n.clone()))),
            pre_tokenizer: tokenizer.get_pre_tokenizer().map(|p| Attached::synced(Node::new(p.clone()))),
            post_processor: tokenizer.get_post_processor().map(|p| Attached::synced(Node::new(p.clone()))),
            decoder: tokenizer.get_decoder().map(|d| Attached::synced(Node::new(d.clone()))),
        }
    }

    /// Whether a component changed since the pipeline copied it (atomic loads only).
    fn stale(&self) -> bool {
        self.model.stale() || stale(&self.normalizer) || stale(&self.pre_tokenizer) || stale(&self.post_processor) || stale(&self.decoder)
    }
}

impl State {
    /// A state over `tokenizer`, its components shared with no Python object yet.
    pub(crate) fn new(tokenizer: Tokenizer) -> Self {
        let components = Components::of(&tokenizer);
        State { tokenizer, components }
    }

    /// Copies the changed components into the pipeline.
    fn refresh(&mut self) -> tokenmill_core::Result<()> {
        let (components, tokenizer) = (&mut self.components, &mut self.tokenizer);
        if let Some(model) = components.model.refresh() {
            tokenizer.with_model(model);
        }
        if let Some(normalizer) = refresh(&mut components.normalizer) {
            tokenizer.with_normalizer(Some(normalizer))?;
        }
        if let Some(pre_tokenizer) = refresh(&mut components.pre_tokenizer) {
            tokenizer.with_pre_tokenizer(Some(pre_tokenizer));
        }
        if let Some(post_processor) = refresh(&mut components.post_processor) {
            tokenizer.with_post_processor(Some(post_processor));
        }
        if let Some(decoder) = refresh(&mut components.decoder) {
            tokenizer.with_decoder(Some(decoder));
        }
        Ok(())
    }

    /// After the pipeline's model changed (training): the shared model takes the new value.
    pub(crate) fn publish_model(&mut self) {
        let model = &mut self.components.model;
        model.handle.set(self.tokenizer.get_model().clone());
        model.synced = model.handle.stamp();
    }
}

/// A snapshot being read: derefs to the pipeline.
pub(crate) struct Pipeline(Arc<State>);

impl Deref for Pipeline {
    type Target = Tokenizer;
    fn deref(&self) -> &Tokenizer {
        &self.0.tokenizer
    }
}

/// The state of one tokenizer (see the module docs).
pub(crate) struct TokenizerState {
    current: RwLock<Arc<State>>,
    /// Held by a writer for its whole change, so that changes apply one after the other.
    writers: Mutex<()>,
}

impl TokenizerState {
    pub(crate) fn new(state: State) -> Self {
        TokenizerState { current: RwLock::new(Arc::new(state)), writers: Mutex::new(()) }
    }

    /// The current snapshot as it is (components maybe stale): for the component handles.
    pub(crate) fn current(&self, py: Python<'_>) -> Arc<State> {
        loop {
            match self.current.try_read() {
                Ok(guard) => return Arc::clone(&guard),
                Err(TryLockError::Poisoned(p)) => return Arc::clone(&p.into_inner()),
                // A writer is publishing: wait for it without the GIL (it may need the GIL).
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.current.read())),
            }
        }
    }

    /// The current snapshot, its copies of the shared components up to date.
    pub(crate) fn read(&self, py: Python<'_>) -> PyResult<Pipeline> {
        let state = self.current(py);
        if !state.components.stale() {
            return Ok(Pipeline(state));
        }
        drop(state);
        self.update(py, |_| Ok(()))?;
        Ok(Pipeline(self.current(py)))
    }

    /// Changes the state with `change` (after bringing its components up to date): in place
    /// when no reader holds the current snapshot, else on a copy that is then published. An
    /// error leaves a copy unpublished (an in-place change is expected to fail before it
    /// changes anything, as the core's setters do).
    pub(crate) fn update<R>(&self, py: Python<'_>, change: impl FnOnce(&mut State) -> PyResult<R>) -> PyResult<R> {
        let _writer = self.lock_writers(py);
        let mut current = self.write_current(py);
        if let Some(state) = Arc::get_mut(&mut current) {
            state.refresh().py()?;
            return change(state);
        }
        let mut next = State::clone(&current);
        drop(current);
        next.refresh().py()?;
        let result = change(&mut next)?;
        *self.write_current(py) = Arc::new(next);
        Ok(result)
    }

    /// Changes a copy of the state with `change`, without holding the current snapshot (for
    /// long changes: readers go on with the old state meanwhile), and publishes it if `change`
    /// succeeds. Other writers wait.
    pub(crate) fn update_copy<R>(&self, py: Python<'_>, change: impl FnOnce(&mut State) -> PyResult<R>) -> PyResult<R> {
        let _writer = self.lock_writers(py);
        let mut next = State::clone(&self.current(py));
        next.refresh().py()?;
        let result = change(&mut next)?;
        *self.write_current(py) = Arc::new(next);
        Ok(result)
    }

    /// Replaces the whole state.
    pub(crate) fn replace(&self, py: Python<'_>, state: State) {
        let _writer = self.lock_writers(py);
        *self.write_current(py) = Arc::new(state);
    }

    fn lock_writers(&self, py: Python<'_>) -> MutexGuard<'_, ()> {
        loop {
            match self.writers.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                // Another writer: wait for it without the GIL (it may need the GIL), then retry.
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.writers.lock())),
            }
        }
    }

    fn write_current(&self, py: Python<'_>) -> RwLockWriteGuard<'_, Arc<State>> {
        loop {
            match self.current.try_write() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                // Readers are taking their snapshot: wait without the GIL, then retry.
                Err(TryLockError::WouldBlock) => py.allow_threads(|| drop(self.current.write())),
            }
        }
    }
}
