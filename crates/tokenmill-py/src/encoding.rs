//! `tokenmill.Encoding`: the result of `Tokenizer.encode`, as in `tokenizers`.
use std::sync::Arc;

use macro_rules_attribute::apply;
use pyo3::exceptions::PyDeprecationWarning;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tokenmill_core::tokenizer::encoding::{PaddingDirection, TruncationDirection};
use tokenmill_core::tokenizer::{Encoding, Offsets, StoredEncoding};
use tokenmill_core::utils::padding::{check_padded_size, BatchPadding};
use tokenmill_core::utils::tokens_by_id::TokensById;

use crate::errors::{FormatError, InvalidArgumentError, ToPyResult};

/// The output of a :class:`Tokenizer`: ids, tokens, offsets (character indexes into the input
/// string), word ids, type ids, masks and overflowing windows, all of the same length.
/// Same API as ``tokenizers.Encoding``, alignment lookups included (``char_to_token``,
/// ``word_to_tokens``, ...); pickles through JSON.
///
/// The token texts of an encoding from a batch call may be made on first use (see
/// ``EncodePlan.deferred_texts`` in the core): ``tokens`` always gives them. An encoding
/// from a batch call is held packed (see ``StoredEncoding`` in the core: ~22 bytes per token);
/// the getters read it as is, and the first lookup or edit unpacks it.
#[pyclass(module = "tokenmill", name = "Encoding")]
#[derive(Clone, Default)]
pub struct PyEncoding {
    /// The encoding; when `texts` is set, its deferred token texts are still empty.
    encoding: StoredEncoding,
    /// Where the deferred token texts come from (None: every text is in `encoding`).
    texts: Option<Arc<TokensById>>,
}

impl From<Encoding> for PyEncoding {
    fn from(encoding: Encoding) -> Self {
        PyEncoding { encoding: StoredEncoding::whole(encoding), texts: None }
    }
}

impl PyEncoding {
    /// An encoding whose deferred token texts (if any) are read from `texts` when needed.
    pub(crate) fn deferred(encoding: StoredEncoding, texts: Option<Arc<TokensById>>) -> Self {
        PyEncoding { encoding, texts }
    }

    /// The encoding with every token text filled in (a copy).
    pub(crate) fn to_encoding(&self) -> Encoding {
        let mut encoding = self.encoding.to_encoding();
        if let Some(table) = &self.texts {
            encoding.fill_deferred_tokens(table);
        }
        encoding
    }

    /// The encoding as held: ids, offsets, words and masks are final; token texts may still be
    /// deferred (use `to_encoding` where they are read).
    pub(crate) fn held(&self) -> &StoredEncoding {
        &self.encoding
    }

    /// The encoding whole, for lookups and edits (unpacked once, in place).
    fn full(&mut self) -> &mut Encoding {
        self.encoding.make_full()
    }
}

/// Applied to `Encoding`'s `#[pymethods]` block (`#[apply(column_getters!)]`: PyO3 takes one
/// block per class), adds the getters of the per-token columns listed here, each the core
/// encoding's method of the same name turned into a Python list.
macro_rules! column_getters {
    ($pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }) => {
        column_getters! {
            @list $pound $pymethods impl $Class { $($methods)* }
            /// The token ids.
            ids() -> Vec<u32>, to_vec;
            /// The word index of each token (``None`` for special tokens added by the
            /// post-processor).
            word_ids() -> Vec<Option<u32>>, collect;
            /// The sequence index of each token (``None`` for special tokens added around
            /// sequences).
            sequence_ids() -> Vec<Option<usize>>, into;
            /// The type id of each token (0 for the first sequence, 1 for the pair, by default).
            type_ids() -> Vec<u32>, to_vec;
            /// ``(start, end)`` character offsets of each token in its input string.
            offsets() -> Vec<Offsets>, collect;
            /// 1 for special tokens added by the post-processor, else 0.
            special_tokens_mask() -> Vec<u32>, collect;
            /// 1 for real tokens, 0 for padding.
            attention_mask() -> Vec<u32>, collect;
        }
    };
    (
        @list $pound:tt $pymethods:tt impl $Class:ident { $($methods:tt)* }
        $($(#[$doc:meta])* $name:ident() -> $ty:ty, $convert:ident;)*
    ) => {
        $pound $pymethods
        impl $Class {
            $($methods)*

            $(
                $(#[$doc])*
                #[getter]
                fn $name(&self) -> $ty {
                    self.encoding.$name().$convert()
                }
            )*
        }
    };
}

#[apply(column_getters!)]
#[pymethods]
impl PyEncoding {
    #[new]
    fn new() -> Self {
        PyEncoding::default()
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let json = serde_json::to_vec(&self.to_encoding())
            .map_err(|e| FormatError::new_err(format!("cannot pickle the Encoding: {e}")))?;
        Ok(PyBytes::new(py, &json))
    }

    /// Restores a pickled state (JSON).
    ///
    /// Raises:
    ///     FormatError: the state is not an Encoding's JSON.
    ///     InvalidArgumentError: its fields do not fit together (columns of different lengths,
    ///         an offset or sequence range that is not a range); the message names the field.
    fn __setstate__(&mut self, state: &Bound<'_, PyBytes>) -> PyResult<()> {
        let encoding: Encoding = serde_json::from_slice(state.as_bytes())
            .map_err(|e| FormatError::new_err(format!("cannot unpickle the Encoding: {e}")))?;
        encoding.validate().map_err(|e| {
            InvalidArgumentError::new_err(format!("cannot unpickle the Encoding: {e}"))
        })?;
        self.encoding = StoredEncoding::whole(encoding);
        self.texts = None;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "Encoding(num_tokens={}, attributes=[ids, type_ids, tokens, offsets, attention_mask, \
                special_tokens_mask, overflowing])",
            self.encoding.len()
        )
    }

    fn __len__(&self) -> usize {
        self.encoding.len()
    }

    /// Concatenates encodings; with ``growing_offsets`` the offsets of each one continue
    /// after the previous one's last offset.
    ///
    /// Raises:
    ///     InvalidArgumentError: the merge would need more memory than can be allocated (the
    ///         overflowing windows of the encodings multiply), checked before any of it is.
    #[staticmethod]
    #[pyo3(signature = (encodings, growing_offsets = true))]
    fn merge(encodings: Vec<PyRef<PyEncoding>>, growing_offsets: bool) -> PyResult<PyEncoding> {
        // Filled first: the encodings may come from different vocabularies.
        let encodings: Vec<Encoding> = encodings.iter().map(|e| e.to_encoding()).collect();
        Encoding::check_merge(&encodings).py()?;
        Ok(Encoding::merge(encodings, growing_offsets).into())
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

    /// The tokens (their text in the model's vocabulary).
    #[getter]
    fn tokens(&self) -> Vec<String> {
        self.encoding.tokens(self.texts.as_deref())
    }

    /// The word index of each token (``None`` for special tokens). Deprecated alias of
    /// ``word_ids`` (warns, as ``tokenizers`` does).
    #[getter]
    fn words(&self, py: Python<'_>) -> PyResult<Vec<Option<u32>>> {
        PyErr::warn(
            py,
            &py.get_type::<PyDeprecationWarning>(),
            c"Encoding.words is deprecated, please use Encoding.word_ids instead.",
            1,
        )?;
        Ok(self.encoding.word_ids().collect())
    }

    /// The windows cut off by truncation, each an :class:`Encoding`.
    #[getter]
    fn overflowing(&self) -> Vec<PyEncoding> {
        self.encoding
            .overflowing()
            .into_iter()
            .map(|o| PyEncoding::deferred(o, self.texts.clone()))
            .collect()
    }

    /// The tokens ``(start, end + 1)`` of word ``word_index`` in sequence ``sequence_index``,
    /// or None.
    #[pyo3(signature = (word_index, sequence_index = 0))]
    fn word_to_tokens(&mut self, word_index: u32, sequence_index: usize) -> Option<(usize, usize)> {
        self.full().word_to_tokens(word_index, sequence_index)
    }

    /// The ``(start, end)`` character span of word ``word_index`` in sequence
    /// ``sequence_index``, or None.
    #[pyo3(signature = (word_index, sequence_index = 0))]
    fn word_to_chars(&mut self, word_index: u32, sequence_index: usize) -> Option<Offsets> {
        self.full().word_to_chars(word_index, sequence_index)
    }

    /// The index of the sequence the token at ``token_index`` belongs to, or None.
    fn token_to_sequence(&mut self, token_index: usize) -> Option<usize> {
        self.full().token_to_sequence(token_index)
    }

    /// The ``(start, end)`` character offsets of the token at ``token_index``, or None.
    fn token_to_chars(&mut self, token_index: usize) -> Option<Offsets> {
        self.full().token_to_chars(token_index).map(|(_, offsets)| offsets)
    }

    /// The word (in its sequence) of the token at ``token_index``, or None.
    fn token_to_word(&mut self, token_index: usize) -> Option<u32> {
        self.full().token_to_word(token_index).map(|(_, word)| word)
    }

    /// The token of sequence ``sequence_index`` that contains character ``char_pos``, or None.
    #[pyo3(signature = (char_pos, sequence_index = 0))]
    fn char_to_token(&mut self, char_pos: usize, sequence_index: usize) -> Option<usize> {
        self.full().char_to_token(char_pos, sequence_index)
    }

    /// The word of sequence ``sequence_index`` that contains character ``char_pos``, or None.
    #[pyo3(signature = (char_pos, sequence_index = 0))]
    fn char_to_word(&mut self, char_pos: usize, sequence_index: usize) -> Option<u32> {
        self.full().char_to_word(char_pos, sequence_index)
    }

    /// Pads to ``length`` tokens (this encoding and its overflowing windows), in place.
    ///
    /// Args:
    ///     length (int): the length to reach (longer encodings are left as they are).
    ///     direction (str): ``"right"`` or ``"left"``.
    ///     pad_id (int), pad_type_id (int), pad_token (str): what the pad tokens hold.
    ///
    /// Raises:
    ///     InvalidArgumentError: a length too large to allocate (checked before any of it is).
    #[pyo3(signature = (
        length, direction = "right", pad_id = 0, pad_type_id = 0, pad_token = "[PAD]"
    ))]
    fn pad(
        &mut self,
        length: usize,
        direction: &str,
        pad_id: u32,
        pad_type_id: u32,
        pad_token: &str,
    ) -> PyResult<()> {
        let direction = PaddingDirection::from_name(direction).py()?;
        let encoding = self.full();
        check_padded_size(encoding.n_encodings(), length, pad_token).py()?;
        encoding.pad(length, pad_id, pad_type_id, pad_token, direction);
        Ok(())
    }

    /// Truncates to ``max_length`` tokens, in place; the rest becomes overflowing windows of
    /// ``max_length`` tokens, consecutive windows sharing ``stride`` tokens.
    ///
    /// Raises:
    ///     InvalidArgumentError: ``stride >= max_length`` (where ``tokenizers`` panics) or an
    ///         unknown direction (with ``tokenizers``' message, ``"Invalid truncation direction
    ///         value : <direction>"``).
    #[pyo3(signature = (max_length, stride = 0, direction = "right"))]
    fn truncate(&mut self, max_length: usize, stride: usize, direction: &str) -> PyResult<()> {
        let direction = TruncationDirection::from_name(direction).map_err(|_| {
            InvalidArgumentError::new_err(format!(
                "Invalid truncation direction value : {direction}"
            ))
        })?;
        self.full().truncate(max_length, stride, direction).py()
    }
}

/// The encodings of a batch, kept natively (what ``tok(..., return_tensors="np")`` returns
/// with its arrays): an :class:`Encoding` is made for a row only when it is asked for, and the
/// batch is freed in parallel. Indexing gives a copy of the row's encoding.
#[pyclass(module = "tokenmill", name = "EncodingBatch", frozen)]
pub struct PyEncodingBatch {
    /// Packed where they fit; not padded yet when `padding` is set.
    rows: Vec<StoredEncoding>,
    /// Where the rows' deferred token texts come from (see `PyEncoding`).
    texts: Option<Arc<TokensById>>,
    /// The batch's padding, applied to a row when its :class:`Encoding` is made.
    padding: Option<BatchPadding>,
}

impl PyEncodingBatch {
    pub(crate) fn new(
        rows: Vec<StoredEncoding>,
        texts: Option<Arc<TokensById>>,
        padding: Option<BatchPadding>,
    ) -> Self {
        PyEncodingBatch { rows, texts, padding }
    }

    /// Row `i`, padded, as it is handed out.
    fn row(&self, i: usize) -> Option<StoredEncoding> {
        let mut row = self.rows.get(i)?.clone();
        if let Some(padding) = &self.padding {
            padding.apply_stored(&mut row);
        }
        Some(row)
    }
}

#[pymethods]
impl PyEncodingBatch {
    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// The :class:`Encoding` of row ``index`` (negative indexes count from the end).
    fn __getitem__(&self, index: isize) -> PyResult<PyEncoding> {
        let position = if index < 0 { index + self.rows.len() as isize } else { index };
        usize::try_from(position)
            .ok()
            .and_then(|i| self.row(i))
            .map(|e| PyEncoding::deferred(e, self.texts.clone()))
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err(format!(
                    "row {index} of a batch of {}",
                    self.rows.len()
                ))
            })
    }

    fn __repr__(&self) -> String {
        format!("EncodingBatch(rows={})", self.rows.len())
    }
}

impl Drop for PyEncodingBatch {
    fn drop(&mut self) {
        tokenmill_core::utils::parallel::drop_all(std::mem::take(&mut self.rows));
    }
}
