use super::*;

fn dict(words: &[(&str, u64)]) -> Dictionary {
    Dictionary::from_pairs(words.iter().map(|&(w, f)| (w.to_string(), f))).unwrap()
}

fn zh(words: &[(&str, u64)], options: SegmenterOptions) -> Segmenter {
    Segmenter::new(SegmenterLanguage::Chinese, options, dict(words), None)
}

const NO_HMM: SegmenterOptions = SegmenterOptions { hmm: false, numbers: false };

#[test]
fn maximum_probability_path() {
    let s = zh(
        &[
            ("我", 10),
            ("来到", 5),
            ("北京", 8),
            ("清华", 3),
            ("清华大学", 4),
            ("大学", 6),
            ("华大", 1),
        ],
        NO_HMM,
    );
    assert_eq!(s.cut_strings("我来到北京清华大学"), ["我", "来到", "北京", "清华大学"]);
}

#[test]
fn ties_go_to_the_longer_first_word() {
    // 研究 + 生命 and 研究生 + 命 score the same: the path whose first word ends further right wins.
    let s = zh(&[("研究", 1), ("研究生", 1), ("生命", 1), ("命", 1)], NO_HMM);
    assert_eq!(s.cut_strings("研究生命"), ["研究生", "命"]);
}

#[test]
fn covers_every_non_space_char_once() {
    let s = zh(&[("中国", 3), ("人民", 2)], SegmenterOptions::default());
    let text =
        "中国人民 hello, １９９８年 ２８．３％的\u{0301}e\u{0301}  😀\u{200D}😀 \u{FFFF}…… end";
    let tokens = s.cut(text);
    let mut pos = 0;
    for t in &tokens {
        assert!(text[pos..t.start].chars().all(is_space), "gap before {:?}", &text[t.start..t.end]);
        assert!(t.end > t.start);
        pos = t.end;
    }
    assert!(text[pos..].chars().all(is_space));
    assert!(s.cut("").is_empty());
    assert!(s.cut("   \n").is_empty());
}

#[test]
fn numbers_take_suffixes_the_dictionary_shows() {
    let s = zh(
        &[
            ("１９２０年", 1),
            ("１９２４年", 1),
            ("一九八三年", 1),
            ("一九九六年", 1),
            ("一九一九年", 1),
            ("二十五日", 1),
            ("新年", 1),
        ],
        SegmenterOptions { hmm: false, numbers: true },
    );
    assert_eq!(s.cut_strings("１９９８年新年"), ["１９９８年", "新年"]);
    assert_eq!(s.cut_strings("二○○一年新年"), ["二○○一年", "新年"]);
    assert_eq!(s.cut_strings("３.５％"), ["３.５％"]);
}

#[test]
fn japanese_character_type_runs() {
    let s = Segmenter::empty(
        SegmenterLanguage::Japanese,
        SegmenterOptions { hmm: false, numbers: false },
    );
    assert_eq!(s.cut_strings("東京タワーへ行った"), ["東京", "タワー", "へ", "行", "った"]);
    let mut s = s;
    s.add_words([("行った".to_string(), Some(5)), ("東京".to_string(), Some(5))]).unwrap();
    assert_eq!(s.cut_strings("東京タワーへ行った"), ["東京", "タワー", "へ", "行った"]);
}

#[test]
fn trains_from_a_segmented_corpus_with_hmm() {
    let mut trainer = SegmenterTrainer::new();
    for _ in 0..50 {
        trainer.feed_segmented_line("我们 喜欢 北京 的 天安门");
        trainer.feed_segmented_line("他们 在 北京 工作");
    }
    let s = trainer.finish(SegmenterLanguage::Chinese, SegmenterOptions::default()).unwrap();
    assert_eq!(s.dictionary().freq("北京"), 100);
    assert_eq!(s.cut_strings("他们喜欢北京"), ["他们", "喜欢", "北京"]);
    let back = Segmenter::from_json(&s.to_json()).unwrap();
    assert_eq!(back, s);
}

#[test]
fn user_words_without_frequency_get_suggested_ones() {
    let mut s = zh(&[("台", 100), ("中", 100), ("台中", 1)], NO_HMM);
    assert_eq!(s.cut_strings("台中"), ["台", "中"]);
    let f = s.suggest_freq("台中");
    assert!(f > 1);
    s.add_words([("台中".to_string(), None)]).unwrap();
    assert_eq!(s.cut_strings("台中"), ["台中"]);
}

#[test]
fn long_inputs_are_linear_and_safe() {
    let s = zh(&[("中国", 3), ("人民", 2), ("中国人", 1)], SegmenterOptions::default());
    let text = "中国人民".repeat(250_000);
    assert_eq!(s.cut(&text).len(), 500_000);
    let digits = "1".repeat(1_000_000);
    assert_eq!(s.cut(&digits).len(), 1);
}
