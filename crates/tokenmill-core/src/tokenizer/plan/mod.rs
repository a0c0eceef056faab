//! The encode plan: how `encode` turns one text into tokens, chosen once whenever the
//! tokenizer's components change (see `TokenizerImpl::refresh_plan`).
//!
//! - `general.rs`: the reference path, any components: added tokens cut out, the rest through
//!   the normalizer, pre-tokenizer and model with `NormalizedString` alignments.
//! - `byte_level.rs`: no normalizer and a plain byte-level pre-tokenizer (GPT-2 and kin).
//! - `bert.rs`: `BertNormalizer` + `BertPreTokenizer` (BERT and kin).
//!
//! The two fast plans compute exactly what the general one does for their components, walking
//! the input once with few allocations. Components say what they are through one query,
//! [`Capabilities::capability`], read only here, when a plan is chosen.
//!
//! May import: the pipeline's contracts and carriers (`crate::tokenizer`), the component
//! wrappers (to answer the capability query) and `crate::utils`; nothing imports this folder
//! but `tokenizer::pipeline`.
use std::sync::Arc;

use crate::error::Result;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::tokenizer::added_vocabulary::AddedVocabulary;
use crate::tokenizer::memory::PIPELINE_BYTES_PER_BYTE;
use crate::tokenizer::memory::{self, ENCODING_BYTES_PER_BYTE, IDS_BYTES_PER_BYTE};
use crate::tokenizer::{Encoding, Model, Normalizer, OffsetType, Offsets, PreTokenizer};
use crate::utils::byte_level::BYTES_TO_CHARS;
use crate::utils::offsets::ByteToCharOffsets;
use crate::utils::tokens_by_id::TokensById;

mod bert;
mod byte_level;
mod general;

pub(crate) use byte_level::tokenize_mapped_bytes;
pub(crate) use general::normalize_and_pre_tokenize;

/// What a component is, as far as choosing an encode plan goes.
#[derive(Debug, Clone, Default)]
pub enum Capability {
    /// Nothing a plan relies on.
    #[default]
    Nothing,
    /// A normalizer that is exactly BERT's (`lowercase` as given).
    BertNormalizer { lowercase: bool },
    /// A pre-tokenizer that is exactly BERT's (whitespace, then each punctuation char alone).
    BertPreTokenizer,
    /// A pre-tokenizer that is exactly byte-level splitting without a prefix space
    /// (`use_regex`: the GPT-2 pattern splits first).
    ByteLevelSplit { use_regex: bool },
    /// A model: `word_slices` when every token's text is exactly the slice of the word it
    /// spans (so no text need be looked up); `table`, its token texts by id when it has one
    /// (so texts can be deferred).
    Model { word_slices: bool, table: Option<Arc<TokensById>> },
    /// A post-processor that reads token texts (so they cannot be deferred).
    ReadsTokenTexts,
}

/// The one question the pipeline asks its components, only to choose a plan.
pub trait Capabilities {
    fn capability(&self) -> Capability {
        Capability::Nothing
    }
}

impl Capabilities for NormalizerWrapper {
    fn capability(&self) -> Capability {
        match self {
            NormalizerWrapper::BertNormalizer(n) => {
                Capability::BertNormalizer { lowercase: n.lowercase }
            }
            _ => Capability::Nothing,
        }
    }
}

impl Capabilities for PreTokenizerWrapper {
    fn capability(&self) -> Capability {
        match self {
            PreTokenizerWrapper::ByteLevel(b) if !b.add_prefix_space => {
                Capability::ByteLevelSplit { use_regex: b.use_regex }
            }
            PreTokenizerWrapper::BertPreTokenizer(_) => Capability::BertPreTokenizer,
            _ => Capability::Nothing,
        }
    }
}

impl Capabilities for ModelWrapper {
    fn capability(&self) -> Capability {
        let (word_slices, table) = match self {
            // BPE tokens are concatenations of the word's chars, except the unk token,
            // byte-fallback tokens and prefixed / suffixed forms.
            ModelWrapper::BPE(b) => {
                let plain = b.unk_token.is_none()
                    && !b.byte_fallback
                    && b.continuing_subword_prefix.is_none()
                    && b.end_of_word_suffix.is_none();
                (plain, None)
            }
            // Continuation tokens carry the prefix; unknown words become the unk token.
            ModelWrapper::WordPiece(model) => (false, Some(model.token_table())),
            ModelWrapper::WordLevel(model) => (false, Some(model.token_table())),
            // Unigram tokens are slices (unknown runs too, as in `tokenizers`) except byte
            // fallback.
            ModelWrapper::Unigram(u) => (!u.byte_fallback(), None),
        };
        Capability::Model { word_slices, table }
    }
}

impl Capabilities for PostProcessorWrapper {
    /// ByteLevel's and Roberta's offset trimming read token texts.
    fn capability(&self) -> Capability {
        let reads = match self {
            PostProcessorWrapper::Bert(_) | PostProcessorWrapper::Template(_) => false,
            PostProcessorWrapper::Roberta(_) | PostProcessorWrapper::ByteLevel(_) => true,
            PostProcessorWrapper::Sequence(s) => {
                s.processors.iter().any(|p| matches!(p.capability(), Capability::ReadsTokenTexts))
            }
        };
        if reads {
            Capability::ReadsTokenTexts
        } else {
            Capability::Nothing
        }
    }
}

/// The stages a plan runs, borrowed from the tokenizer.
pub(crate) struct Stages<'t, M, N, PT> {
    pub(crate) added_vocabulary: &'t AddedVocabulary,
    pub(crate) normalizer: Option<&'t N>,
    pub(crate) pre_tokenizer: Option<&'t PT>,
    pub(crate) model: &'t M,
}

/// How a text is walked (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Walk {
    General,
    Fast(FastWalk),
}

/// The walks that emit tokens as they find them (`Emit`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum FastWalk {
    ByteLevel { use_regex: bool, word_slices: bool },
    Bert { lowercase: bool },
}

impl FastWalk {
    fn walk<M, N, PT>(
        self,
        stages: &Stages<'_, M, N, PT>,
        text: &str,
        emit: impl FnMut(u32, Offsets, u32, TokenText),
    ) -> Result<()>
    where
        M: Model,
        N: Normalizer,
        PT: PreTokenizer,
    {
        match self {
            FastWalk::ByteLevel { use_regex, word_slices } => {
                byte_level::walk(stages, text, use_regex, word_slices, emit)
            }
            FastWalk::Bert { lowercase } => bert::walk(stages, text, lowercase, emit),
        }
    }
}

/// The plan: the walk, and where deferred token texts come from.
#[derive(Debug, Clone)]
pub struct EncodePlan {
    walk: Walk,
    /// The model's token texts by id, when its tokens' texts can be left empty and filled
    /// later (its post-processor never reads them).
    deferred_texts: Option<Arc<TokensById>>,
}

impl Default for EncodePlan {
    fn default() -> Self {
        EncodePlan { walk: Walk::General, deferred_texts: None }
    }
}

/// A plan follows from the components, which the tokenizer compares itself.
impl PartialEq for EncodePlan {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Where a fast walk's token text comes from.
pub(crate) enum TokenText<'t> {
    /// This text (an added token's match).
    Text(&'t str),
    /// These raw input bytes, each mapped to its byte-level char.
    ByteLevel(&'t [u8]),
    /// The model's vocabulary, by id.
    Vocabulary,
}

/// What a fast walk calls per token: `(id, input byte span, word index, token text)`.
type Emit<'e> = dyn FnMut(u32, Offsets, u32, TokenText) + 'e;

impl EncodePlan {
    /// The plan for these components (`post_processor`: its capability).
    pub(crate) fn choose<M, N, PT>(
        stages: &Stages<'_, M, N, PT>,
        post_processor: Capability,
    ) -> Self
    where
        M: Capabilities,
        N: Capabilities,
        PT: Capabilities,
    {
        let (word_slices, table) = match stages.model.capability() {
            Capability::Model { word_slices, table } => (word_slices, table),
            _ => (false, None),
        };
        let normalizer = stages.normalizer.map(Capabilities::capability);
        let pre_tokenizer = stages.pre_tokenizer.map(Capabilities::capability);
        let walk = match (normalizer, pre_tokenizer) {
            (None, Some(Capability::ByteLevelSplit { use_regex })) => {
                Walk::Fast(FastWalk::ByteLevel { use_regex, word_slices })
            }
            // Added tokens matched in normalized text need the general path's normalization.
            (
                Some(Capability::BertNormalizer { lowercase }),
                Some(Capability::BertPreTokenizer),
            ) if !stages.added_vocabulary.has_normalized_tokens() => {
                Walk::Fast(FastWalk::Bert { lowercase })
            }
            _ => Walk::General,
        };
        let deferred_texts =
            table.filter(|_| !matches!(post_processor, Capability::ReadsTokenTexts));
        EncodePlan { walk, deferred_texts }
    }

    /// The table deferred token texts are filled from, when this plan defers them.
    pub fn deferred_texts(&self) -> Option<&Arc<TokensById>> {
        self.deferred_texts.as_ref()
    }

    /// Whether `encode` takes the BERT fast path.
    #[cfg(test)]
    pub(crate) fn is_bert(&self) -> bool {
        matches!(self.walk, Walk::Fast(FastWalk::Bert { .. }))
    }

    /// The `Encoding` of `text` before post-processing, offsets in `offset_type`, each token's
    /// word its own index in the text (or `word_idx`). With `defer_texts`, the tokens whose
    /// text is the vocabulary's get an empty one (see `deferred_texts`).
    /// An error before anything is built when the text is too long for the memory there is
    /// (every plan may take a stretch of it through the `NormalizedString` machinery).
    pub(crate) fn encode<M, N, PT>(
        &self,
        stages: &Stages<'_, M, N, PT>,
        text: &str,
        type_id: u32,
        word_idx: Option<u32>,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding>
    where
        M: Model,
        N: Normalizer,
        PT: PreTokenizer,
    {
        let per_byte = PIPELINE_BYTES_PER_BYTE + ENCODING_BYTES_PER_BYTE;
        memory::check_text(text.len(), per_byte, "encode it")?;
        let fast = match self.walk {
            Walk::General => return general::encode(stages, text, type_id, word_idx, offset_type),
            Walk::Fast(fast) => fast,
        };
        let converter = (offset_type == OffsetType::Char).then(|| ByteToCharOffsets::new(text));
        let mut encoding = Encoding::with_capacity(text.len() / 3 + 1);
        let emit: &mut Emit = &mut |id, span, word, token| {
            let value = match token {
                TokenText::Text(t) => t.to_owned(),
                TokenText::ByteLevel(bytes) => {
                    let mut value = String::with_capacity(2 * bytes.len());
                    value.extend(bytes.iter().map(|&b| BYTES_TO_CHARS[b as usize]));
                    value
                }
                TokenText::Vocabulary if defer_texts => String::new(),
                TokenText::Vocabulary => stages.model.id_to_token(id).unwrap_or_default(),
            };
            let span = match &converter {
                Some(c) => c.convert_span(span),
                None => span,
            };
            encoding.push(id, value, span, Some(word_idx.unwrap_or(word)), type_id, false);
        };
        fast.walk(stages, text, emit)?;
        Ok(encoding)
    }

    /// The ids of `text` (added tokens included) before post-processing: no token strings or
    /// offsets are built. An error first when the text is too long for the memory there is.
    pub(crate) fn ids<M, N, PT>(
        &self,
        stages: &Stages<'_, M, N, PT>,
        text: &str,
    ) -> Result<Vec<u32>>
    where
        M: Model,
        N: Normalizer,
        PT: PreTokenizer,
    {
        let per_byte = PIPELINE_BYTES_PER_BYTE + IDS_BYTES_PER_BYTE;
        memory::check_text(text.len(), per_byte, "encode it")?;
        let mut ids = Vec::with_capacity(text.len() / 3 + 1);
        match self.walk {
            Walk::General => general::ids(stages, text, &mut ids)?,
            Walk::Fast(fast) => fast.walk(stages, text, |id, _, _, _| ids.push(id))?,
        }
        Ok(ids)
    }
}
