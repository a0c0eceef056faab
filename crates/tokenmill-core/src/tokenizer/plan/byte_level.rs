//! The byte-level plan: no normalizer and a plain byte-level pre-tokenizer (see
//! `Capability::ByteLevelSplit`).
use super::{Stages, TokenText};
use crate::error::Result;
use crate::pre_tokenizers::byte_level::gpt2_regex;
use crate::tokenizer::memory::check_word;
use crate::tokenizer::{Model, Offsets};
use crate::utils::byte_level::map_bytes_with_origins;

/// Exactly what the general plan computes for these components (added tokens, then each piece
/// split by the GPT-2 pattern into words, each word mapped to byte-level chars and tokenized),
/// walking the input once. Each mapped char stands for one input byte, so a token's input span
/// is read off directly; like the general path's alignments, a span that ends inside a
/// multi-byte char is widened to the whole char. A token's text is the added token's matched
/// text, or its raw bytes when the model's tokens are `word_slices`, else to be looked up.
pub(super) fn walk<M: Model, N, PT>(
    stages: &Stages<'_, M, N, PT>,
    text: &str,
    use_regex: bool,
    word_slices: bool,
    mut emit: impl FnMut(u32, Offsets, u32, TokenText),
) -> Result<()> {
    let mut word = 0u32;
    let mut words: Vec<Offsets> = Vec::new();
    for (added, (start, end)) in stages.added_vocabulary.split_unnormalized(text) {
        if let Some(id) = added {
            emit(id, (start, end), word, TokenText::Text(&text[start..end]));
            word += 1;
            continue;
        }
        let piece = &text[start..end];
        words.clear();
        if use_regex {
            let mut covered = 0;
            gpt2_regex().for_each_match(piece, |s, e| {
                if s > covered {
                    words.push((covered, s));
                }
                words.push((s, e));
                covered = e;
            })?;
            if covered < piece.len() {
                words.push((covered, piece.len()));
            }
        } else {
            words.push((0, piece.len()));
        }
        for &(ws, we) in words.iter().filter(|(s, e)| s < e) {
            let word_start = start + ws;
            check_word(&piece[ws..we])?;
            stages.model.tokenize_byte_level(&piece[ws..we], &mut |id, (ts, te)| {
                let (ts, te) = (word_start + ts, word_start + te);
                let span = (floor_char_boundary(text, ts), ceil_char_boundary(text, te));
                let token = if word_slices {
                    TokenText::ByteLevel(&text.as_bytes()[ts..te])
                } else {
                    TokenText::Vocabulary
                };
                emit(id, span, word, token);
            })?;
            word += 1;
        }
    }
    Ok(())
}

/// `Model::tokenize_byte_level` done plainly: map the bytes, tokenize, map the offsets back.
pub(crate) fn tokenize_mapped_bytes<M: Model + ?Sized>(
    model: &M,
    raw: &str,
    emit: &mut dyn FnMut(u32, Offsets),
) -> Result<()> {
    let (mapped, raw_offset) = map_bytes_with_origins(raw.as_bytes());
    model.tokenize_ids_offsets(&mapped, &mut |id, (start, end)| {
        emit(id, (raw_offset[start], raw_offset[end]))
    })
}

/// Start of the char that holds byte `i` of `text`.
fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// End of the char that holds byte `i - 1` of `text` (`i` itself when it is a boundary).
fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}
