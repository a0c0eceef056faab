//! The trained model as sentencepiece writes it: the `.model` proto (meta pieces at their ids,
//! learned pieces in the other slots; `Serialize`) and the `.vocab` text beside it.
//!
//! May import the trainer interface (`super`) and `sentencepiece::proto`.
use rustc_hash::FxHashSet;

use super::{invalid, MetaPieces};
use crate::error::Result;
use crate::sentencepiece::proto::{
    ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec,
};

/// The model proto: meta pieces at their ids, learned pieces in the other slots (`Serialize`).
pub(super) fn serialize(
    mut spec: TrainerSpec,
    normalizer_spec: NormalizerSpec,
    meta: &MetaPieces,
    final_pieces: Vec<(String, f32)>,
) -> Result<ModelProto> {
    let kind = spec.model_type();
    let mut pieces = Vec::new();
    let mut learned = final_pieces.into_iter();
    let mut dup = FxHashSet::default();
    let mut leftover = false;
    for id in 0..spec.vocab_size() {
        let piece = if let Some((w, t)) = meta.get(&id) {
            SentencePiece::new(w.clone(), 0.0, *t)
        } else if let Some((w, score)) = learned.next() {
            SentencePiece::new(w, score, PieceType::Normal)
        } else {
            leftover = true;
            continue;
        };
        let text = piece.piece.clone().unwrap_or_default();
        if !dup.insert(text.clone()) {
            return Err(invalid(format!("{text} is already defined")));
        }
        if leftover && meta.contains_key(&id) {
            return Err(invalid(format!(
                "meta piece id {id} is beyond the vocabulary the corpus supports"
            )));
        }
        pieces.push(piece);
    }
    // Normal pieces are not typed explicitly in SentencePiece's files.
    for p in &mut pieces {
        if p.r#type == Some(PieceType::Normal as i32) {
            p.r#type = None;
        }
    }
    if !spec.hard_vocab_limit() || kind == ModelType::Char {
        spec.vocab_size = Some(pieces.len() as i32);
    } else if pieces.len() as i32 != spec.vocab_size() {
        return Err(invalid(format!(
            "Vocabulary size too high ({}). Please set it to a value <= {}.",
            spec.vocab_size(),
            pieces.len()
        )));
    }
    let proto = ModelProto {
        pieces,
        trainer_spec: Some(spec),
        normalizer_spec: Some(normalizer_spec),
        self_test_data: None,
        denormalizer_spec: None,
    };
    Ok(proto)
}

/// The `.vocab` file SentencePiece writes beside a model: `piece<TAB>score` per line (the
/// score as C++'s `ostream << float` prints it, `%g`), or only the pieces when
/// `vocabulary_output_piece_score` is false.
pub fn vocab_file_text(proto: &ModelProto) -> String {
    let with_scores =
        proto.trainer_spec.as_ref().is_none_or(|spec| spec.vocabulary_output_piece_score());
    let mut text = String::with_capacity(proto.pieces.len() * 16);
    for piece in &proto.pieces {
        text.push_str(piece.piece.as_deref().unwrap_or(""));
        if with_scores {
            text.push('\t');
            text.push_str(&format_general(piece.score.unwrap_or(0.0) as f64));
        }
        text.push('\n');
    }
    text
}

/// `x` as C's `%g` prints it: 6 significant digits, trailing zeros dropped, in exponent form
/// (`1.5e+06`, `1e-05`) when the exponent is below -4 or at least 6.
fn format_general(x: f64) -> String {
    const PRECISION: i32 = 6;
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // Rounded to 6 significant digits first: the rounding decides the exponent (9.999995 → 10).
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |digits: &str| -> String {
        if digits.contains('.') {
            digits.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            digits.to_string()
        }
    };
    if !(-4..PRECISION).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        trim(&format!("{:.*}", (PRECISION - 1 - exponent) as usize, x))
    }
}

#[cfg(test)]
mod vocab_tests {
    use super::*;

    #[test]
    fn scores_print_as_printf_g() {
        let cases = [
            (0.0, "0"),
            (-0.0, "-0"),
            (-1.0, "-1"),
            (-31999.0, "-31999"),
            (-123456.0, "-123456"),
            (-1234567.0, "-1.23457e+06"),
            (-10.123456789, "-10.1235"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (9.9999996, "10"),
            (999999.5, "1e+06"),
            (0.5, "0.5"),
            (1234.125, "1234.12"),
            (1234.375, "1234.38"),
            (f64::INFINITY, "inf"),
        ];
        for (x, expected) in cases {
            assert_eq!(format_general(x), expected, "{x}");
        }
    }
}
