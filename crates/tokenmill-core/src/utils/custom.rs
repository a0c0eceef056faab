//! A pipeline component implemented outside this crate (the bindings wrap a Python object in
//! one, for `Normalizer.custom(obj)` and friends). It runs like any other component but, as in
//! `tokenizers`, cannot be written to tokenizer.json: serializing it is an error.
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Serialize, Serializer};

pub struct Custom<T: ?Sized> {
    inner: Arc<T>,
    /// The stage, for messages: "Normalizer", "PreTokenizer", "Decoder".
    stage: &'static str,
}

impl<T: ?Sized> Custom<T> {
    pub fn new(inner: Arc<T>, stage: &'static str) -> Self {
        Custom { inner, stage }
    }
}

impl<T: ?Sized> Clone for Custom<T> {
    fn clone(&self) -> Self {
        Custom { inner: Arc::clone(&self.inner), stage: self.stage }
    }
}

impl<T: ?Sized> fmt::Debug for Custom<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Custom{}", self.stage)
    }
}

/// Two custom components are equal when they are the same object.
impl<T: ?Sized> PartialEq for Custom<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl<T: ?Sized> Deref for Custom<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: ?Sized> Serialize for Custom<T> {
    fn serialize<S: Serializer>(&self, _serializer: S) -> std::result::Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom(format!("Custom {} cannot be serialized", self.stage)))
    }
}
