//! The state of a `tokenmill.Tokenizer`, safe to read and change from any number of threads.
//!
//! The state (the core pipeline and the shared components it copies) is a [`SnapshotCell`]:
//! encode, decode and the getters work on a snapshot, without the GIL and without any lock,
//! and see the tokenizer entirely before or entirely after any change; a setter,
//! `add_tokens` or `train` changes it in place when no call is running (so the model's word
//! cache stays warm), else a copy that it then publishes. Training always works on a copy.
//! Before a call, the copies of the shared components (`tok.model.dropout = 0.1` changes the
//! Python object's value) are brought up to date.
use std::ops::Deref;
use std::sync::Arc;

use pyo3::prelude::*;
use tokenmill_core::decoders::DecoderWrapper;
use tokenmill_core::models::ModelWrapper;
use tokenmill_core::normalizers::NormalizerWrapper;
use tokenmill_core::pre_tokenizers::PreTokenizerWrapper;
use tokenmill_core::processors::PostProcessorWrapper;
use tokenmill_core::tokenizer::Tokenizer;

use crate::errors::ToPyResult;
use crate::shared::{Node, Sequenced, Shared, Versioned};
use crate::snapshot_cell::{Change, SnapshotCell};

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
pub(crate) fn attach_optional<H: Handle>(
    handle: Option<H>,
) -> (Option<Attached<H>>, Option<H::Value>) {
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
            pre_tokenizer: tokenizer
                .get_pre_tokenizer()
                .map(|p| Attached::synced(Node::new(p.clone()))),
            post_processor: tokenizer
                .get_post_processor()
                .map(|p| Attached::synced(Node::new(p.clone()))),
            decoder: tokenizer.get_decoder().map(|d| Attached::synced(Node::new(d.clone()))),
        }
    }

    /// Whether a component changed since the pipeline copied it (atomic loads only).
    fn stale(&self) -> bool {
        self.model.stale()
            || stale(&self.normalizer)
            || stale(&self.pre_tokenizer)
            || stale(&self.post_processor)
            || stale(&self.decoder)
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

/// `change`, run once the state's copies of the shared components are up to date.
fn after_refresh<R>(change: impl Change<State, R>) -> impl Change<State, R> {
    move |state| {
        state.refresh().py()?;
        change(state)
    }
}

/// The state of one tokenizer (see the module docs).
pub(crate) struct TokenizerState {
    cell: SnapshotCell<State>,
}

impl TokenizerState {
    pub(crate) fn new(state: State) -> Self {
        TokenizerState { cell: SnapshotCell::new(state) }
    }

    /// The current snapshot as it is (components maybe stale): for the component handles.
    pub(crate) fn current(&self, py: Python<'_>) -> PyResult<Arc<State>> {
        self.cell.try_get(py)
    }

    /// The current snapshot, its copies of the shared components up to date.
    pub(crate) fn read(&self, py: Python<'_>) -> PyResult<Pipeline> {
        let state = self.current(py)?;
        if !state.components.stale() {
            return Ok(Pipeline(state));
        }
        drop(state);
        self.update(py, |_| Ok(()))?;
        Ok(Pipeline(self.current(py)?))
    }

    /// Changes the state with `change`, after bringing its components up to date (see
    /// `SnapshotCell::update`).
    pub(crate) fn update<R>(&self, py: Python<'_>, change: impl Change<State, R>) -> PyResult<R> {
        self.cell.update(py, after_refresh(change))
    }

    /// Changes a copy of the state (see `SnapshotCell::update_copy`): for training.
    pub(crate) fn update_copy<R>(
        &self,
        py: Python<'_>,
        change: impl Change<State, R>,
    ) -> PyResult<R> {
        self.cell.update_copy(py, after_refresh(change))
    }

    /// Replaces the whole state.
    pub(crate) fn replace(&self, py: Python<'_>, state: State) -> PyResult<()> {
        self.cell.set(py, state)
    }
}
