//! Differential tests: every scanner must give exactly the spans `fancy-regex` gives.
use super::*;
use rand::{Rng, SeedableRng};

const ALL_PATTERNS: [&str; 6] =
    [GPT2_PATTERN, R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN];

fn fancy_spans(pattern: &str, text: &str) -> Vec<(usize, usize)> {
    let re =
        fancy_regex::RegexBuilder::new(pattern).backtrack_limit(1_000_000_000).build().unwrap();
    re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect()
}

fn assert_same(pattern: &str, text: &str) {
    let scanner = Scanner::for_pattern(pattern).unwrap();
    let got = scanner.find_spans(text);
    let want = fancy_spans(pattern, text);
    if got != want {
        let first =
            got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        let around = |v: &[(usize, usize)]| -> Vec<String> {
            v[first.saturating_sub(2)..(first + 3).min(v.len())]
                .iter()
                .map(|&(s, e)| format!("{:?}", &text[s..e]))
                .collect()
        };
        panic!(
            "{:?} differs from fancy-regex at span {first}: scanner {:?} vs regex {:?}",
            scanner.kind(),
            around(&got),
            around(&want)
        );
    }
}

/// Characters that sit on the edges of the patterns' classes.
const TRICKY: &[char] = &[
    'a',
    'Z',
    's',
    'S',
    't',
    'T',
    'd',
    'D',
    'm',
    'M',
    'l',
    'L',
    'v',
    'V',
    'r',
    'R',
    'e',
    'E',
    'k',
    'ſ',
    'K',
    '\'',
    '’',
    ' ',
    ' ',
    ' ',
    '\t',
    '\n',
    '\r',
    '\u{0b}',
    '\u{0c}',
    '\u{85}',
    '\u{a0}',
    '\u{1680}',
    '\u{2003}',
    '\u{2028}',
    '\u{2029}',
    '\u{202f}',
    '\u{3000}',
    '\u{1c}',
    '\u{1f}',
    '\u{0}',
    '\u{7f}',
    '\u{200b}',
    '\u{200d}',
    '\u{feff}',
    '0',
    '7',
    '²',
    '½',
    'Ⅻ',
    '٣',
    '߀',
    '.',
    ',',
    '!',
    '?',
    '/',
    '/',
    '\\',
    '-',
    '_',
    '(',
    '"',
    '#',
    '$',
    '€',
    '😀',
    '👩',
    '\u{1f3fd}',
    '\u{fe0f}',
    '\u{0301}',
    '\u{0308}',
    '\u{093f}',
    '\u{20dd}',
    'é',
    'É',
    'ǅ',
    'ʰ',
    'ー',
    '中',
    '文',
    'の',
    'ア',
    '한',
    'ا',
    'ب',
    'ש',
    'Ω',
    'ω',
    'ß',
    'İ',
    'ı',
    'Ⓐ',
    'ⓐ',
    '\u{10400}',
    '\u{10428}',
    '𝐀',
    '\u{e0001}',
    '\u{f0000}',
];

fn random_text(rng: &mut impl Rng, len: usize) -> String {
    (0..len)
        .map(|_| match rng.gen_range(0..10) {
            0 => loop {
                if let Some(c) = char::from_u32(rng.gen_range(0..0x11_0000)) {
                    break c;
                }
            },
            1 => char::from_u32(rng.gen_range(0x80..0x3000)).unwrap_or('x'),
            _ => TRICKY[rng.gen_range(0..TRICKY.len())],
        })
        .collect()
}

#[test]
fn random_unicode_matches_fancy_regex() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for pattern in ALL_PATTERNS {
        for _ in 0..300 {
            let len = rng.gen_range(0..40);
            let text = random_text(&mut rng, len);
            assert_same(pattern, &text);
        }
        let long = random_text(&mut rng, 20_000);
        assert_same(pattern, &long);
    }
}

#[test]
fn every_code_point_matches_fancy_regex() {
    // Each code point appears after a space, an apostrophe, a letter and a mark, and before
    // letters, so it is seen as a word start, a prefix, a contraction letter and a continuation.
    let mut text = String::new();
    let contexts = [" ", "'", "a", "\u{0301}", "A", "\n", "1", "."];
    for cp in 0..0x11_0000u32 {
        if let Some(c) = char::from_u32(cp) {
            text.push_str(contexts[cp as usize % contexts.len()]);
            text.push(c);
            if cp % 3 == 0 {
                text.push('l');
            }
        }
    }
    for pattern in ALL_PATTERNS {
        assert_same(pattern, &text);
    }
}

#[test]
fn adversarial_strings_match_fancy_regex() {
    let cases: Vec<String> = vec![
        String::new(),
        " ".into(),
        "\n".into(),
        "   ".into(),
        "a  ".into(),
        "  a".into(),
        " \n ".into(),
        "hello   world \n\n  \t x".into(),
        "I'm 'tis they'LL WE'VE ſ 'ſ 'S 'Ll'd''s".into(),
        "HELLO'S World's mIxEd CamelCase ABCdef".into(),
        "1234567 12 3 ½²³ ⅯⅯⅫ".into(),
        "a/b//c\n/\r\n!!\n\n/ ?? ...\n".into(),
        "👩‍👩‍👧‍👦 👍🏽 🇫🇷 ❤️".into(),
        "e\u{0301}\u{0301} \u{0301}x \u{0301}\u{0301}A Ä\u{0308}B".into(),
        "中文没有空格的句子。日本語のテキスト、カタカナ".into(),
        "مرحبا بالعالم שלום עולם".into(),
        "\u{0}\u{1}\u{7}\u{1b}[0m\u{7f}\u{85}\u{a0}x\u{2028}y".into(),
        "x".repeat(100_000),
        " ".repeat(100_000),
        "\n".repeat(10_000) + "x",
        " \t\u{a0}\u{3000}\r\n\u{2003}".repeat(5_000),
        "'".repeat(10_000),
        "1".repeat(10_001),
        "\u{0301}".repeat(5_000),
        "Aʰ".repeat(5_000),
    ];
    for pattern in ALL_PATTERNS {
        for text in &cases {
            assert_same(pattern, text);
        }
    }
}

#[test]
fn corpus_samples_match_fancy_regex() {
    let Some(root) = crate::utils::test_data::shared_dir().map(|d| d.join("corpora")) else {
        eprintln!("skipping corpus samples: the shared data folder is absent");
        return;
    };
    let files = [
        "english_large/gutenberg_en_large_part1.txt",
        "multilingual/ar/ar_ud_pud_test_text.txt",
        "multilingual/de/de_debian_fortunes-de_0.35-1.txt",
        "multilingual/hi/hi_ltrc_premchand_sevasadan.txt",
        "multilingual/ja/ja_aozora_soseki_kokoro.txt",
        "multilingual/ru/ru_ruslit_chekhov_drama_na_okhote.txt",
        "multilingual/zh/zh_debian_fortunes-zh_2.98.txt",
        "multilingual/pl/pl_debian_fortunes-pl_0.0.20130525-3.txt",
        "sighan2005/msr_test.utf8",
    ];
    for file in files {
        let bytes = std::fs::read(root.join(file)).unwrap();
        let sample = String::from_utf8_lossy(&bytes[..bytes.len().min(200_000)]).into_owned();
        for pattern in ALL_PATTERNS {
            assert_same(pattern, &sample);
        }
    }
}

#[test]
fn unknown_patterns_have_no_scanner() {
    assert!(Scanner::for_pattern(r"\w+").is_none());
    assert!(Scanner::for_pattern(&(GPT2_PATTERN.to_string() + "|x")).is_none());
}
