//! Components from Hugging Face `tokenizers` accepted wherever a tokenmill one is expected.
//!
//! `transformers` builds its fast tokenizers with `tokenizers` objects and assigns them to the
//! backend (`backend.post_processor = tokenizers.processors.TemplateProcessing(...)`,
//! `backend.add_tokens([tokenizers.AddedToken(...)])`). An argument that is not already a
//! tokenmill object goes through `tokenmill._foreign.adopt`, which converts an object of the
//! `tokenizers` package through its JSON state and hands anything else back unchanged (so that
//! the usual type error names it). The conversion itself lives in Python: it is not hot and
//! `tokenizers` is only ever touched through objects the caller made with it.
use std::ops::Deref;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::PyClass;

use crate::{decoders, models, normalizers, pre_tokenizers, processors, tokenizer, trainers};

/// A tokenmill class and the name of its role for `tokenmill._foreign.adopt`.
pub(crate) trait Role: PyClass {
    const ROLE: &'static str;
}

macro_rules! roles {
    ($($class:ty => $role:literal),* $(,)?) => {
        $(impl Role for $class {
            const ROLE: &'static str = $role;
        })*
    };
}

roles! {
    normalizers::PyNormalizer => "normalizer",
    pre_tokenizers::PyPreTokenizer => "pre_tokenizer",
    models::PyModel => "model",
    processors::PyPostProcessor => "post_processor",
    decoders::PyDecoder => "decoder",
    trainers::PyTrainer => "trainer",
    tokenizer::PyAddedToken => "added_token",
}

/// `ob` itself when it is a `T` (or of no known origin), else its conversion to a `T`.
pub(crate) fn adopt<'py, T: Role>(ob: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if ob.is_instance_of::<T>() {
        return Ok(ob.clone());
    }
    let py = ob.py();
    py.import(intern!(py, "tokenmill._foreign"))?.call_method1(intern!(py, "adopt"), (ob, T::ROLE))
}

/// An argument of type `T`, converted from its `tokenizers` equivalent when need be.
pub(crate) struct Adopted<'py, T: Role>(PyRef<'py, T>);

impl<'py, T: Role> FromPyObject<'py> for Adopted<'py, T> {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(Adopted(adopt::<T>(ob)?.extract()?))
    }
}

impl<T: Role> Deref for Adopted<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
