//! What an encode call gives back: the one encode entry (`TokenizerImpl::encode_as` for one
//! input, `encode_batch_as` for many) takes the output wanted as a type parameter.
//!
//! - `Encoding`: full encodings, every token with its text, padded as the options say.
//! - `StoredEncoding`: encodings to be held (handed to Python): stored packed by the worker
//!   thread that made them when their token texts are deferred (see `EncodePlan`), the batch's
//!   padding decided but not applied (`StoredBatch`).
//! - `Ids`: the ids only, through the lean path when nothing is truncated or padded.
use std::sync::Arc;

use crate::error::Result;
use crate::tokenizer::pipeline::EncodeInput;
use crate::tokenizer::plan::EncodePlan;
use crate::tokenizer::{Encoding, OffsetType, StoredEncoding};
use crate::utils::padding::{pad_encodings, BatchPadding, PaddingParams};
use crate::utils::parallel;
use crate::utils::tokens_by_id::TokensById;
use crate::utils::truncation::TruncationParams;

/// The settings of one encode call.
#[derive(Debug, Clone, Copy)]
pub struct EncodeOptions<'p> {
    /// Let the post-processor add its special tokens.
    pub add_special_tokens: bool,
    /// Offsets count bytes or chars of the input.
    pub offset_type: OffsetType,
    pub truncation: Option<&'p TruncationParams>,
    pub padding: Option<&'p PaddingParams>,
}

impl EncodeOptions<'_> {
    /// No truncation, no padding.
    pub fn new(add_special_tokens: bool, offset_type: OffsetType) -> Self {
        EncodeOptions { add_special_tokens, offset_type, truncation: None, padding: None }
    }
}

/// `(input, options, defer_texts, pad)`: see `RowEncoder::encoding`.
type EncodingFn<'t> =
    dyn Fn(EncodeInput<'_>, &EncodeOptions<'_>, bool, bool) -> Result<Encoding> + Sync + 't;
/// `(input, options)`: see `RowEncoder::ids`.
type IdsFn<'t> = dyn Fn(EncodeInput<'_>, &EncodeOptions<'_>) -> Result<Vec<u32>> + Sync + 't;

/// What the outputs ask of the tokenizer (made by `TokenizerImpl::with_row_encoder`).
pub struct RowEncoder<'t> {
    pub(crate) plan: &'t EncodePlan,
    /// `input` encoded and post-processed (truncated as the options say), padded alone when
    /// `pad`; with `defer_texts`, the tokens whose text is the model's vocabulary get an empty
    /// one (see `EncodePlan::deferred_texts`).
    pub(crate) encoding: &'t EncodingFn<'t>,
    /// The ids of `input`, post-processed (see `Ids`).
    pub(crate) ids: &'t IdsFn<'t>,
}

/// An output kind (see the module docs): what one input becomes, and what a batch of them.
pub trait Output: Sized + Send {
    type Batch;
    fn encode(
        tokenizer: &RowEncoder,
        input: EncodeInput<'_>,
        o: &EncodeOptions<'_>,
    ) -> Result<Self>;
    fn gather(
        rows: Vec<Self>,
        options: &EncodeOptions<'_>,
        plan: &EncodePlan,
    ) -> Result<Self::Batch>;
}

/// Encodes `inputs` in parallel (tokenmill's pool; `TOKENMILL_NUM_THREADS` sets its size and
/// `TOKENIZERS_PARALLELISM` turns it off; with one thread, on the calling thread: see
/// `utils::parallel`), then gathers the rows into `O`'s batch.
pub(crate) fn encode_batch<'s, O: Output, E: Into<EncodeInput<'s>> + Send>(
    tokenizer: &RowEncoder,
    inputs: Vec<E>,
    options: &EncodeOptions<'_>,
) -> Result<O::Batch> {
    let encode = |input: E| O::encode(tokenizer, input.into(), options);
    let rows: Vec<O> = parallel::try_map_collect(inputs, encode)?;
    O::gather(rows, options, tokenizer.plan)
}

/// Full encodings; a batch is padded together (`BatchLongest`: to its longest).
impl Output for Encoding {
    type Batch = Vec<Encoding>;
    fn encode(t: &RowEncoder, input: EncodeInput<'_>, o: &EncodeOptions<'_>) -> Result<Self> {
        (t.encoding)(input, o, false, true)
    }
    fn gather(
        mut rows: Vec<Self>,
        options: &EncodeOptions<'_>,
        _: &EncodePlan,
    ) -> Result<Vec<Encoding>> {
        if let Some(p) = options.padding {
            pad_encodings(&mut rows, p)?;
        }
        Ok(rows)
    }
}

/// Held encodings. Padding each encoding alone and then the batch to its longest gives what
/// padding the batch once gives (pad lengths only grow), so only the batch padding is kept.
/// Only encodings whose token texts are deferred are packed: where every token has its own
/// text (byte-level BPE), copying the texts costs more than packing saves.
impl Output for StoredEncoding {
    type Batch = StoredBatch;
    fn encode(t: &RowEncoder, input: EncodeInput<'_>, o: &EncodeOptions<'_>) -> Result<Self> {
        let defer = t.plan.deferred_texts().is_some();
        let encoding = (t.encoding)(input, o, defer, false)?;
        Ok(if defer { StoredEncoding::from(encoding) } else { StoredEncoding::whole(encoding) })
    }
    fn gather(
        rows: Vec<Self>,
        options: &EncodeOptions<'_>,
        plan: &EncodePlan,
    ) -> Result<StoredBatch> {
        let padding = match options.padding {
            Some(p) => BatchPadding::new(rows.iter().map(StoredEncoding::len), p)?,
            None => None,
        };
        Ok(StoredBatch { rows, texts: plan.deferred_texts().cloned(), padding })
    }
}

/// The ids of one input. Without truncation and padding, from the lean path: no token strings
/// or offsets are built, and special tokens come from the post-processor run on a skeleton
/// encoding (a post-processor's ids never depend on token texts or offsets). Else from the
/// full encoding, each row padded alone (a batch of ids is not padded together).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ids(pub Vec<u32>);

impl Output for Ids {
    type Batch = Vec<Vec<u32>>;
    fn encode(t: &RowEncoder, input: EncodeInput<'_>, o: &EncodeOptions<'_>) -> Result<Self> {
        (t.ids)(input, o).map(Ids)
    }
    fn gather(rows: Vec<Self>, _: &EncodeOptions<'_>, _: &EncodePlan) -> Result<Vec<Vec<u32>>> {
        Ok(rows.into_iter().map(|Ids(ids)| ids).collect())
    }
}

/// A batch of encodings to be held (the `StoredEncoding` output).
#[derive(Debug, Clone, Default)]
pub struct StoredBatch {
    /// One per input, not yet padded.
    pub rows: Vec<StoredEncoding>,
    /// Where the rows' deferred token texts come from (None: nothing was deferred).
    pub texts: Option<Arc<TokensById>>,
    /// The batch's padding, still to apply to `rows` (None: no padding).
    pub padding: Option<BatchPadding>,
}

impl StoredBatch {
    /// Applies the pending padding to the rows, in parallel (a row that needs pads is unpacked,
    /// padded and packed again).
    pub fn pad_rows(&mut self) {
        let Some(padding) = self.padding.take() else { return };
        parallel::for_each_mut(&mut self.rows, |row| padding.apply_stored(row));
    }
}
