//! The general plan: any components, through the `NormalizedString` machinery (the reference
//! the fast plans match).
use super::Stages;
use crate::error::Result;
use crate::tokenizer::memory::{self, check_word, PIPELINE_BYTES_PER_BYTE};
use crate::tokenizer::{Encoding, Model, Normalizer, OffsetType, PreTokenizedString, PreTokenizer};

/// Added tokens extracted, the rest normalized and cut into words (not yet tokenized). An error
/// before anything is built when the text is too long for the memory there is.
pub(crate) fn normalize_and_pre_tokenize<M, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    text: &str,
) -> Result<PreTokenizedString>
where
    N: Normalizer,
    PT: PreTokenizer,
{
    memory::check_text(text.len(), PIPELINE_BYTES_PER_BYTE, "normalize and pre-tokenize it")?;
    let mut pretokenized =
        stages.added_vocabulary.extract_and_normalize(stages.normalizer, text)?;
    if let Some(p) = stages.pre_tokenizer {
        p.pre_tokenize(&mut pretokenized)?;
    }
    Ok(pretokenized)
}

/// See `EncodePlan::encode`.
pub(super) fn encode<M, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    text: &str,
    type_id: u32,
    word_idx: Option<u32>,
    offset_type: OffsetType,
) -> Result<Encoding>
where
    M: Model,
    N: Normalizer,
    PT: PreTokenizer,
{
    memory::check_text(text.len(), PIPELINE_BYTES_PER_BYTE, "normalize and pre-tokenize it")?;
    let mut pretokenized = normalize_and_pre_tokenize(stages, text)?;
    pretokenized.tokenize(|word| {
        check_word(word.get())?;
        stages.model.tokenize(word.get())
    })?;
    pretokenized.into_encoding(word_idx, type_id, offset_type)
}

/// See `EncodePlan::ids`.
pub(super) fn ids<M, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    text: &str,
    ids: &mut Vec<u32>,
) -> Result<()>
where
    M: Model,
    N: Normalizer,
    PT: PreTokenizer,
{
    let pretokenized = normalize_and_pre_tokenize(stages, text)?;
    for split in pretokenized.splits() {
        match &split.tokens {
            Some(tokens) => ids.extend(tokens.iter().map(|t| t.id)),
            None => {
                let word = split.normalized.get();
                check_word(word)?;
                stages.model.tokenize_ids_offsets(word, &mut |id, _| ids.push(id))?
            }
        }
    }
    Ok(())
}
