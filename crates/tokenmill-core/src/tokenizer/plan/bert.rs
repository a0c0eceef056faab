//! The BERT plan: `BertNormalizer` then `BertPreTokenizer`, and no added token matched in
//! normalized text (see `Capability::BertNormalizer`).
use super::{Stages, TokenText};
use crate::error::Result;
use crate::tokenizer::memory::check_word;
use crate::tokenizer::PreTokenizer;
use crate::tokenizer::{Model, NormalizedString, Normalizer, Offsets, PreTokenizedString};

/// Exactly what the general plan computes for these components, calling `emit` as the
/// byte-level walk does.
///
/// Between added tokens, the text is cut at ASCII whitespace (space, tab, newline, carriage
/// return), which both stages treat as a word boundary whatever the options (clean_text
/// turns them into spaces, the pre-tokenizer drops them). Each stage works char by char and
/// NFD never reorders across such a boundary, so every segment can be processed alone. A
/// segment of printable ASCII (no control char, which clean_text would drop) is normalized
/// to itself, lowercased if asked, and split into runs of non-punctuation with every
/// punctuation char alone, offsets unchanged; any other segment goes through the general
/// machinery on its own.
pub(super) fn walk<M, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    text: &str,
    lowercase: bool,
    mut emit: impl FnMut(u32, Offsets, u32, TokenText),
) -> Result<()>
where
    M: Model,
    N: Normalizer,
    PT: PreTokenizer,
{
    let mut word = 0u32;
    let mut lowered = String::new();
    for (added, (start, end)) in stages.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = added {
            emit(id, (start, end), word, TokenText::Text(&text[start..end]));
            word += 1;
            continue;
        }
        let segments = text[start..end].split([' ', '\t', '\n', '\r']);
        let mut segment_start = start;
        for segment in segments {
            let shift = segment_start;
            segment_start += segment.len() + 1;
            if segment.is_empty() {
                continue;
            }
            if !segment.bytes().all(|b| b.is_ascii_graphic()) {
                walk_segment_generally(stages, segment, shift, &mut word, &mut emit)?;
                continue;
            }
            let bytes = segment.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let run_end = if bytes[i].is_ascii_punctuation() {
                    i + 1
                } else {
                    bytes[i..]
                        .iter()
                        .position(|b| b.is_ascii_punctuation())
                        .map_or(bytes.len(), |k| i + k)
                };
                let mut piece = &segment[i..run_end];
                if lowercase && piece.bytes().any(|b| b.is_ascii_uppercase()) {
                    lowered.clear();
                    lowered.push_str(piece);
                    lowered.make_ascii_lowercase();
                    piece = &lowered;
                }
                let piece_start = shift + i;
                check_word(piece)?;
                stages.model.tokenize_ids_offsets(piece, &mut |id, (ts, te)| {
                    emit(id, (piece_start + ts, piece_start + te), word, TokenText::Vocabulary)
                })?;
                word += 1;
                i = run_end;
            }
        }
    }
    Ok(())
}

/// One segment of `walk` through the normalizer, pre-tokenizer and model, as the general
/// plan does it; `shift` is where the segment starts in the input.
fn walk_segment_generally<M, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    segment: &str,
    shift: usize,
    word: &mut u32,
    emit: &mut impl FnMut(u32, Offsets, u32, TokenText),
) -> Result<()>
where
    M: Model,
    N: Normalizer,
    PT: PreTokenizer,
{
    let mut normalized = NormalizedString::from(segment);
    if let Some(n) = stages.normalizer {
        n.normalize(&mut normalized)?;
    }
    let mut pretokenized = PreTokenizedString::from(normalized);
    if let Some(p) = stages.pre_tokenizer {
        p.pre_tokenize(&mut pretokenized)?;
    }
    for split in pretokenized.splits() {
        let piece = &split.normalized;
        check_word(piece.get())?;
        stages.model.tokenize_ids_offsets(piece.get(), &mut |id, (ts, te)| {
            let (s, e) =
                piece.convert_offsets_to_input(ts..te).unwrap_or_else(|| piece.offsets_original());
            emit(id, (shift + s, shift + e), *word, TokenText::Vocabulary)
        })?;
        *word += 1;
    }
    Ok(())
}
