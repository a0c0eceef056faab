//! Shared helpers: regex engine wrapper, byte-level alphabet, offset conversion, parallelism.
pub mod offsets;
pub mod regex;
