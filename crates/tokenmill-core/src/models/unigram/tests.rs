use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::tokenizer::Model;

fn pieces(text: &[(&str, f64)]) -> Vec<(String, f64)> {
    text.iter().map(|(p, s)| (p.to_string(), *s)).collect()
}

fn abcd() -> Unigram {
    let vocab = pieces(&[
        ("<unk>", 0.0),
        ("a", 0.0),
        ("b", 0.0),
        ("c", 0.0),
        ("d", 0.0),
        ("cd", 1.0),
        ("ab", 2.0),
        ("abc", 5.0),
        ("abcd", 10.0),
    ]);
    Unigram::from(vocab, Some(0), false).unwrap()
}

fn values(model: &Unigram, text: &str) -> Vec<String> {
    model.tokenize(text).unwrap().into_iter().map(|t| t.value).collect()
}

#[test]
fn best_path_and_fused_unknowns() {
    let model = abcd();
    assert_eq!(values(&model, "abcdacdxx"), ["abcd", "a", "cd", "xx"]);
    let tokens = model.tokenize("xxab").unwrap();
    assert_eq!(tokens[0].id, 0);
    assert_eq!(tokens[0].offsets, (0, 2));
    assert!(model.tokenize("").unwrap().is_empty());
}

#[test]
fn byte_fallback_spans_the_run() {
    let mut vocab = pieces(&[("<unk>", 0.0), ("a", -1.0)]);
    vocab.extend((0..256).map(|b| (format!("<0x{b:02X}>"), -5.0)));
    let model = Unigram::from(vocab, Some(0), true).unwrap();
    let tokens = model.tokenize("aé").unwrap();
    assert_eq!(
        tokens.iter().map(|t| t.value.as_str()).collect::<Vec<_>>(),
        ["a", "<0xC3>", "<0xA9>"]
    );
    assert_eq!(tokens[1].offsets, (1, 3));
    assert_eq!(tokens[2].offsets, (1, 3));
}

#[test]
fn missing_unk_is_an_error() {
    let model = Unigram::from(pieces(&[("a", -1.0)]), None, false).unwrap();
    assert!(model.tokenize("ab").is_err());
    assert!(Unigram::from(vec![], Some(0), false).is_err());
    assert!(Unigram::from(pieces(&[("a", -1.0)]), Some(3), false).is_err());
}

/// Every segmentation of `text` into pieces of `model` with its score (brute force).
fn all_segmentations(model: &Unigram, text: &str) -> Vec<(Vec<u32>, f64)> {
    if text.is_empty() {
        return vec![(vec![], 0.0)];
    }
    let mut out = vec![];
    for (end, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
        if let Some(id) = model.token_to_id(&text[..end]) {
            for (mut rest, score) in all_segmentations(model, &text[end..]) {
                rest.insert(0, id);
                out.push((rest, score + model.score(id).unwrap()));
            }
        }
    }
    out
}

#[test]
fn nbest_lists_segmentations_by_score() {
    let vocab = pieces(&[
        ("<unk>", 0.0),
        ("a", -1.0),
        ("b", -1.5),
        ("c", -2.0),
        ("ab", -2.1),
        ("bc", -2.7),
        ("abc", -5.5),
    ]);
    let model = Unigram::from(vocab, Some(0), false).unwrap();
    let mut expected = all_segmentations(&model, "abcab");
    expected.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
    let nbest = model.nbest("abcab", 100).unwrap();
    assert_eq!(nbest.len(), expected.len());
    for ((seg, score), (ids, want)) in nbest.iter().zip(&expected) {
        assert!((score - want).abs() < 1e-9);
        let got: Vec<u32> = seg.iter().map(|s| s.0).collect();
        let got_score: f64 = got.iter().map(|&i| model.score(i).unwrap()).sum();
        assert!((got_score - want).abs() < 1e-9, "{got:?} vs {ids:?}");
    }
    assert_eq!(model.nbest("abcab", 1).unwrap()[0].0, model.best_segmentation("abcab").unwrap());
}

#[test]
fn sampling_is_reproducible_and_follows_the_distribution() {
    let vocab = pieces(&[("<unk>", 0.0), ("a", -1.0), ("b", -1.5), ("ab", -2.0)]);
    let model = Unigram::from(vocab, Some(0), false).unwrap();
    let draw = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..20).map(|_| model.sample("abab", 0.5, &mut rng).unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(draw(7), draw(7));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 20000;
    let hits = (0..n).filter(|_| model.sample("ab", 1.0, &mut rng).unwrap().len() == 1).count();
    let p_ab = (-2.0f64).exp() / ((-2.0f64).exp() + (-2.5f64).exp());
    assert!(((hits as f64 / n as f64) - p_ab).abs() < 0.02);
}

#[test]
fn sentencepiece_rules_skip_unused_and_price_user_defined() {
    let pieces = vec![
        ("<unk>".to_string(), 0.0, PieceType::Unknown),
        ("a".to_string(), -1.0, PieceType::Normal),
        ("b".to_string(), -1.0, PieceType::Normal),
        ("ab".to_string(), -0.5, PieceType::Unused),
        ("bb".to_string(), 0.0, PieceType::UserDefined),
    ];
    let model = Unigram::from_sentencepiece(pieces, 0, false).unwrap();
    let ids: Vec<u32> = model.best_segmentation("abb").unwrap().iter().map(|s| s.0).collect();
    assert_eq!(ids, [1, 4]);
}

#[test]
fn serde_round_trip() {
    let model = abcd();
    let json = serde_json::to_string(&model).unwrap();
    assert!(json.starts_with(r#"{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0.0],"#));
    let back: Unigram = serde_json::from_str(&json).unwrap();
    assert_eq!(back, model);
    assert!(serde_json::from_str::<Unigram>(
        r#"{"type":"Unigram","unk_id":5,"vocab":[["a",0.0]]}"#
    )
    .is_err());
}
