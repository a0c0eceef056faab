//! `tokenmill.Encoding`: the result of `Tokenizer.encode`, as in `tokenizers`.
use pyo3::prelude::*;
use tokenmill_core::tokenizer::{Encoding, Offsets};

/// The output of a :class:`Tokenizer`: ids, tokens, offsets (character indexes into the input
/// string), word ids, type ids, masks and overflowing windows, all of the same length.
#[pyclass(module = "tokenmill", name = "Encoding")]
#[derive(Clone, Default)]
pub struct PyEncoding {
    pub(crate) encoding: Encoding,
}

impl From<Encoding> for PyEncoding {
    fn from(encoding: Encoding) -> Self {
        PyEncoding { encoding }
    }
}

#[pymethods]
impl PyEncoding {
    #[new]
    fn new() -> Self {
        PyEncoding::default()
    }

    fn __repr__(&self) -> String {
        format!(
            "Encoding(num_tokens={}, attributes=[ids, type_ids, tokens, offsets, attention_mask, special_tokens_mask, overflowing])",
            self.encoding.len()
        )
    }

    fn __len__(&self) -> usize {
        self.encoding.len()
    }

    /// Concatenates encodings; with ``growing_offsets`` the offsets of each one continue
    /// after the previous one's last offset.
    #[staticmethod]
    #[pyo3(signature = (encodings, growing_offsets = true))]
    fn merge(encodings: Vec<PyRef<PyEncoding>>, growing_offsets: bool) -> PyEncoding {
        Encoding::merge(encodings.iter().map(|e| e.encoding.clone()), growing_offsets).into()
    }

    /// The number of sequences (1, or 2 for a pair).
    #[getter]
    fn n_sequences(&self) -> usize {
        self.encoding.n_sequences()
    }

    /// Marks every token as belonging to sequence ``sequence_id``.
    fn set_sequence_id(&mut self, sequence_id: usize) {
        self.encoding.set_sequence_id(sequence_id)
    }

    /// The token ids.
    #[getter]
    fn ids(&self) -> Vec<u32> {
        self.encoding.ids.clone()
    }

    /// The tokens (their text in the model's vocabulary).
    #[getter]
    fn tokens(&self) -> Vec<String> {
        self.encoding.tokens.clone()
    }

    /// The word index of each token (``None`` for special tokens). Deprecated alias of ``word_ids``.
    #[getter]
    fn words(&self) -> Vec<Option<u32>> {
        self.encoding.words.clone()
    }

    /// The word index of each token (``None`` for special tokens added by the post-processor).
    #[getter]
    fn word_ids(&self) -> Vec<Option<u32>> {
        self.encoding.words.clone()
    }

    /// The sequence index of each token (``None`` for special tokens added around sequences).
    #[getter]
    fn sequence_ids(&self) -> Vec<Option<usize>> {
        self.encoding.sequence_ids()
    }

    /// The type id of each token (0 for the first sequence, 1 for the pair, by default).
    #[getter]
    fn type_ids(&self) -> Vec<u32> {
        self.encoding.type_ids.clone()
    }

    /// ``(start, end)`` character offsets of each token in its input string.
    #[getter]
    fn offsets(&self) -> Vec<Offsets> {
        self.encoding.offsets.clone()
    }

    /// 1 for special tokens added by the post-processor, else 0.
    #[getter]
    fn special_tokens_mask(&self) -> Vec<u32> {
        self.encoding.special_tokens_mask.clone()
    }

    /// 1 for real tokens, 0 for padding.
    #[getter]
    fn attention_mask(&self) -> Vec<u32> {
        self.encoding.attention_mask.clone()
    }

    /// The windows cut off by truncation, each an :class:`Encoding`.
    #[getter]
    fn overflowing(&self) -> Vec<PyEncoding> {
        self.encoding.overflowing.iter().cloned().map(PyEncoding::from).collect()
    }
}
