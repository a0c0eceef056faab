use super::*;

fn roundtrip(json: &str) -> NormalizerWrapper {
    let n: NormalizerWrapper = serde_json::from_str(json).unwrap();
    assert_eq!(serde_json::to_string(&n).unwrap(), json, "re-serialization differs");
    n
}

#[test]
fn serialization_matches_tokenizers() {
    for json in [
        r#"{"type":"NFC"}"#,
        r#"{"type":"NFD"}"#,
        r#"{"type":"NFKC"}"#,
        r#"{"type":"NFKD"}"#,
        r#"{"type":"Lowercase"}"#,
        r#"{"type":"StripAccents"}"#,
        r#"{"type":"Nmt"}"#,
        r#"{"type":"ByteLevel"}"#,
        r#"{"type":"Strip","strip_left":false,"strip_right":true}"#,
        r#"{"type":"Replace","pattern":{"String":"a"},"content":"b"}"#,
        r#"{"type":"Replace","pattern":{"Regex":"\\s+"},"content":" "}"#,
        r#"{"type":"Prepend","prepend":"▁"}"#,
        concat!(
            r#"{"type":"BertNormalizer","clean_text":true,"#,
            r#""handle_chinese_chars":true,"strip_accents":null,"lowercase":true}"#
        ),
        concat!(
            r#"{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Sequence","#,
            r#""normalizers":[{"type":"Lowercase"}]}]}"#
        ),
        r#"{"type":"Precompiled","precompiled_charsmap":""}"#,
    ] {
        roundtrip(json);
    }
}

#[test]
fn legacy_forms_are_read() {
    let n: NormalizerWrapper =
        serde_json::from_str(r#"{"strip_left":false,"strip_right":true}"#).unwrap();
    assert_eq!(n, Strip::new(false, true).into());
    let n: NormalizerWrapper = serde_json::from_str(r#"{"prepend":"a"}"#).unwrap();
    assert_eq!(n, Prepend::new("a").into());
    let n: NormalizerWrapper = serde_json::from_str(concat!(
        r#"{"type":"Bert","clean_text":true,"handle_chinese_chars":false,"#,
        r#""strip_accents":null,"lowercase":true}"#
    ))
    .unwrap();
    assert_eq!(n, BertNormalizer::new(true, false, None, true).into());
}

#[test]
fn bad_json_is_an_error_not_a_panic() {
    for json in [
        r#"{}"#,
        r#"{"type":"Sequence","normalizers":[{}]}"#,
        r#"{"type":"Sequence"}"#,
        r#"{"type":"Nope"}"#,
        r#"{"type":"Replace","pattern":{"Regex":"("},"content":""}"#,
        r#"{"type":"Precompiled","precompiled_charsmap":"!!"}"#,
        r#"{"type":"Precompiled","precompiled_charsmap":"AAAA/w=="}"#,
        r#"[1]"#,
    ] {
        let err = serde_json::from_str::<NormalizerWrapper>(json).unwrap_err();
        assert!(!err.to_string().is_empty());
    }
}

#[test]
fn components_normalize_as_documented() {
    let bert = NormalizerWrapper::from(BertNormalizer::default());
    assert_eq!(bert.normalize_str("Héllo\tWORLD\u{0}中国").unwrap(), "hello world 中  国 ");
    let seq = NormalizerWrapper::from(Sequence::new(vec![
        NFKD.into(),
        StripAccents.into(),
        Lowercase.into(),
    ]));
    assert_eq!(seq.normalize_str("ﬁnal Çà").unwrap(), "final ca");
    assert_eq!(
        NormalizerWrapper::from(Strip::new(true, false)).normalize_str("  a  ").unwrap(),
        "a  "
    );
    assert_eq!(NormalizerWrapper::from(Prepend::new("▁")).normalize_str("").unwrap(), "");
    assert_eq!(
        NormalizerWrapper::from(Replace::new(ReplacePattern::Regex(r"\s+".into()), " ").unwrap())
            .normalize_str("a \n b")
            .unwrap(),
        "a b"
    );
    assert_eq!(NormalizerWrapper::from(ByteLevel).normalize_str("é ").unwrap(), "Ã©Ġ");
}

#[test]
fn malformed_charsmaps_never_panic() {
    // Trie units pointing anywhere, replacement offsets past the end: lookups just fail.
    let mut charsmap = 8u32.to_le_bytes().to_vec();
    charsmap.extend(0xFFFF_FFFFu32.to_le_bytes());
    charsmap.extend(0x0000_0100u32.to_le_bytes());
    charsmap.extend(b"x\0");
    let p = Precompiled::from_charsmap(&charsmap).unwrap();
    let mut n = NormalizedString::from("any text, é 中");
    p.normalize(&mut n).unwrap();
}
