//! Pre-tokenizers: cut normalized text into words (see `PreTokenizedString`).
//!
//! Every component keeps exact alignments: each piece is a `NormalizedString` cut out of the
//! input with `NormalizedString::split`/`slice`, so its offsets point into the original text.
//! Semantics, defaults and the JSON form follow Hugging Face `tokenizers` (tokenizer.json):
//! `{"type": "<Name>", ...fields}`; `PreTokenizerWrapper` reads and writes that form.
//!
//! One file per component; `scanners/` holds the hand-compiled GPT-2 / cl100k / o200k split
//! patterns and `unicode_scripts/` the script table of `UnicodeScripts`. May import `tokenizer`
//! (the `PreTokenizer` trait, `PreTokenizedString`, `Pattern`), `error` and `utils`; nothing
//! from `normalizers` or later stages.
use serde::{Deserialize, Deserializer, Serialize};

use crate::tokenizer::normalized::Pattern;
use crate::tokenizer::{Offsets, PreTokenizedString, PreTokenizer};
pub use crate::utils::custom::Custom;
use crate::utils::macros::component_enum;

pub(crate) mod bert;
pub mod byte_level;
pub(crate) mod delimiter;
pub(crate) mod digits;
pub(crate) mod fixed_length;
pub(crate) mod metaspace;
pub(crate) mod punctuation;
pub(crate) mod scanners;
pub(crate) mod sequence;
pub(crate) mod split;
pub(crate) mod unicode_scripts;
pub(crate) mod whitespace;

pub use bert::BertPreTokenizer;
pub use byte_level::ByteLevel;
pub use delimiter::CharDelimiterSplit;
pub use digits::Digits;
pub use fixed_length::FixedLength;
pub use metaspace::{Metaspace, PrependScheme};
pub use punctuation::Punctuation;
/// The split patterns of the pretrained encodings that have hand-compiled scanners.
pub use scanners::{
    CL100K_PATTERN, GPT2_PATTERN, LLAMA3_PATTERN, O200K_PATTERN, QWEN2_PATTERN, R50K_PATTERN,
};
pub use sequence::Sequence;
pub use split::{Split, SplitPattern};
pub use unicode_scripts::UnicodeScripts;
pub use whitespace::{Whitespace, WhitespaceSplit};

component_enum! {
    /// Every pre-tokenizer of this stage, as the `Tokenizer` holds it. Serialized untagged: each
    /// component writes its own `"type"`.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(untagged)]
    pub enum PreTokenizerWrapper {
        BertPreTokenizer(BertPreTokenizer),
        ByteLevel(ByteLevel),
        Delimiter(CharDelimiterSplit),
        Metaspace(Metaspace),
        Whitespace(Whitespace),
        Sequence(Sequence),
        Split(Split),
        Punctuation(Punctuation),
        WhitespaceSplit(WhitespaceSplit),
        Digits(Digits),
        UnicodeScripts(UnicodeScripts),
        FixedLength(FixedLength),
        /// A pre-tokenizer from outside the crate (a Python object); never serialized.
        Custom(Custom<dyn PreTokenizer + Send + Sync>),
    }
}

impl PreTokenizer for PreTokenizerWrapper {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> crate::Result<()> {
        match self {
            Self::BertPreTokenizer(t) => t.pre_tokenize(p),
            Self::ByteLevel(t) => t.pre_tokenize(p),
            Self::Delimiter(t) => t.pre_tokenize(p),
            Self::Metaspace(t) => t.pre_tokenize(p),
            Self::Whitespace(t) => t.pre_tokenize(p),
            Self::Sequence(t) => t.pre_tokenize(p),
            Self::Split(t) => t.pre_tokenize(p),
            Self::Punctuation(t) => t.pre_tokenize(p),
            Self::WhitespaceSplit(t) => t.pre_tokenize(p),
            Self::Digits(t) => t.pre_tokenize(p),
            Self::UnicodeScripts(t) => t.pre_tokenize(p),
            Self::FixedLength(t) => t.pre_tokenize(p),
            Self::Custom(t) => t.pre_tokenize(p),
        }
    }
}

impl<'de> Deserialize<'de> for PreTokenizerWrapper {
    /// Dispatches on `"type"` (so an error names the component and the bad field, rather than
    /// serde's "did not match any variant").
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let kind = match value.get("type") {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "pre_tokenizer \"type\" must be a string, got {other}"
                )))
            }
            None => {
                return Err(D::Error::custom(format!(
                    "pre_tokenizer without a \"type\" field: {value}"
                )))
            }
        };
        fn parse<T: serde::de::DeserializeOwned, E: Error>(
            kind: &str,
            value: serde_json::Value,
        ) -> std::result::Result<T, E> {
            serde_json::from_value(value)
                .map_err(|e| E::custom(format!("pre_tokenizer {kind}: {e}")))
        }
        Ok(match kind.as_str() {
            "BertPreTokenizer" => Self::BertPreTokenizer(parse(&kind, value)?),
            "ByteLevel" => Self::ByteLevel(parse(&kind, value)?),
            "CharDelimiterSplit" => Self::Delimiter(parse(&kind, value)?),
            "Metaspace" => Self::Metaspace(parse(&kind, value)?),
            "Whitespace" => Self::Whitespace(parse(&kind, value)?),
            "Sequence" => Self::Sequence(parse(&kind, value)?),
            "Split" => Self::Split(parse(&kind, value)?),
            "Punctuation" => Self::Punctuation(parse(&kind, value)?),
            "WhitespaceSplit" => Self::WhitespaceSplit(parse(&kind, value)?),
            "Digits" => Self::Digits(parse(&kind, value)?),
            "UnicodeScripts" => Self::UnicodeScripts(parse(&kind, value)?),
            "FixedLength" => Self::FixedLength(parse(&kind, value)?),
            other => return Err(D::Error::custom(format!("unknown pre_tokenizer type {other:?}"))),
        })
    }
}

/// Flips the `is_match` flag of every span of the wrapped pattern: a pattern that matches
/// words then splits on what lies between them.
pub struct Invert<P: Pattern>(pub P);

impl<P: Pattern> Pattern for Invert<P> {
    fn find_matches(&self, inside: &str) -> crate::Result<Vec<(Offsets, bool)>> {
        let mut spans = self.0.find_matches(inside)?;
        spans.iter_mut().for_each(|(_, is_match)| *is_match = !*is_match);
        Ok(spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(json: &str) {
        let w: PreTokenizerWrapper = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), json);
    }

    #[test]
    fn json_forms_match_tokenizers() {
        roundtrip(
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
        );
        roundtrip(
            r#"{"type":"Split","pattern":{"String":" "},"behavior":"Removed","invert":false}"#,
        );
        roundtrip(concat!(
            r#"{"type":"Split","pattern":{"Regex":"\\s+"},"#,
            r#""behavior":"MergedWithNext","invert":true}"#
        ));
        roundtrip(r#"{"type":"Whitespace"}"#);
        roundtrip(r#"{"type":"WhitespaceSplit"}"#);
        roundtrip(r#"{"type":"BertPreTokenizer"}"#);
        roundtrip(r#"{"type":"Punctuation","behavior":"Contiguous"}"#);
        roundtrip(r#"{"type":"Digits","individual_digits":true}"#);
        roundtrip(
            r#"{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":false}"#,
        );
        roundtrip(r#"{"type":"CharDelimiterSplit","delimiter":"x"}"#);
        roundtrip(r#"{"type":"UnicodeScripts"}"#);
        roundtrip(r#"{"type":"FixedLength","length":3}"#);
        roundtrip(concat!(
            r#"{"type":"Sequence","pretokenizers":[{"type":"Whitespace"},"#,
            r#"{"type":"Digits","individual_digits":false}]}"#
        ));
    }

    #[test]
    fn older_forms_are_accepted() {
        let w: PreTokenizerWrapper = serde_json::from_str(
            r#"{"type":"Metaspace","replacement":"▁","add_prefix_space":true,"str_rep":"▁"}"#,
        )
        .unwrap();
        assert_eq!(
            w,
            PreTokenizerWrapper::Metaspace(Metaspace::new('▁', PrependScheme::Always, true))
        );
        let w: PreTokenizerWrapper = serde_json::from_str(
            r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true}"#,
        )
        .unwrap();
        assert_eq!(w, PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, true)));
        let w: PreTokenizerWrapper = serde_json::from_str(r#"{"type":"Punctuation"}"#).unwrap();
        assert_eq!(w, PreTokenizerWrapper::Punctuation(Punctuation::default()));
    }

    #[test]
    fn bad_json_is_an_error() {
        for bad in [
            r#"{"type":"Nope"}"#,
            r#"{"add_prefix_space":true}"#,
            concat!(
                r#"{"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Removed","#,
                r#""invert":false}"#
            ),
            r#"{"type":"Split","pattern":{"Regex":"a"},"behavior":"Sideways","invert":false}"#,
            r#"{"type":"CharDelimiterSplit","delimiter":"xy"}"#,
            concat!(
                r#"{"type":"Metaspace","replacement":"▁","add_prefix_space":false,"#,
                r#""prepend_scheme":"always"}"#
            ),
        ] {
            assert!(serde_json::from_str::<PreTokenizerWrapper>(bad).is_err(), "{bad}");
        }
    }
}

/// The pieces `pre` cuts `s` into, with their char offsets in `s` (for the tests).
#[cfg(test)]
pub(crate) fn pieces(pre: &impl PreTokenizer, s: &str) -> Vec<(String, Offsets)> {
    use crate::tokenizer::{OffsetReferential, OffsetType};
    let mut p = PreTokenizedString::from(s);
    pre.pre_tokenize(&mut p).unwrap();
    p.get_splits(OffsetReferential::Original, OffsetType::Char)
        .into_iter()
        .map(|(s, o, _)| (s.to_string(), o))
        .collect()
}

#[cfg(test)]
mod examples {
    use super::*;
    use crate::tokenizer::SplitDelimiterBehavior;

    fn run(pre: impl Into<PreTokenizerWrapper>, s: &str) -> Vec<(String, Offsets)> {
        pieces(&pre.into(), s)
    }

    fn words(pre: impl Into<PreTokenizerWrapper>, s: &str) -> Vec<String> {
        run(pre, s).into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn whitespace_and_bert() {
        assert_eq!(
            words(Whitespace, "Hello, world! Let's go."),
            ["Hello", ",", "world", "!", "Let", "'", "s", "go", "."]
        );
        assert_eq!(words(WhitespaceSplit, " Hello,\u{a0}world!\n"), ["Hello,", "world!"]);
        assert_eq!(
            words(BertPreTokenizer, "Hey, I'm «here»"),
            ["Hey", ",", "I", "'", "m", "«", "here", "»"]
        );
        assert_eq!(run(Whitespace, "日本 語")[1], ("語".to_string(), (3, 4)));
    }

    #[test]
    fn punctuation_digits_delimiter() {
        assert_eq!(
            words(Punctuation::new(SplitDelimiterBehavior::MergedWithPrevious), "a,b!!c"),
            ["a,", "b!", "!", "c"]
        );
        assert_eq!(
            words(Digits::new(false), "Call 123 please ٣٤"),
            ["Call ", "123", " please ", "٣٤"]
        );
        assert_eq!(words(Digits::new(true), "a12"), ["a", "1", "2"]);
        assert_eq!(words(CharDelimiterSplit::new('x'), "xhelloxxthere"), ["hello", "there"]);
    }

    #[test]
    fn metaspace_schemes() {
        assert_eq!(
            run(Metaspace::default(), "Hey  you"),
            vec![("▁Hey".into(), (0, 3)), ("▁".into(), (3, 4)), ("▁you".into(), (4, 8))]
        );
        assert_eq!(
            words(Metaspace::new('▁', PrependScheme::Never, true), "Hey you"),
            ["Hey", "▁you"]
        );
        assert_eq!(words(Metaspace::new('_', PrependScheme::Always, false), "a b"), ["_a_b"]);
        // "first": only the piece at offset 0 gets the prefix.
        let seq = Sequence::new(vec![
            CharDelimiterSplit::new('|').into(),
            Metaspace::new('▁', PrependScheme::First, true).into(),
        ]);
        assert_eq!(words(seq, "a|b"), ["▁a", "b"]);
    }

    #[test]
    fn scripts_and_fixed_length() {
        assert_eq!(
            run(UnicodeScripts, "どこ Where"),
            vec![("どこ ".into(), (0, 3)), ("Where".into(), (3, 8))]
        );
        assert_eq!(words(UnicodeScripts, " a, b"), ["a", ", ", "b"]);
        assert_eq!(words(FixedLength::new(2), "abcde"), ["ab", "cd", "e"]);
    }
}

#[cfg(test)]
mod long_input_tests {
    use super::*;
    use crate::tokenizer::{OffsetReferential, OffsetType};

    /// A 10 MB line through each kind of pass (prepend + byte map, char map, regex split, char
    /// predicate split, script cuts): each is linear (a quadratic one — e.g. splicing the
    /// string once per match — would not finish), and the pieces come out in order.
    #[test]
    fn ten_megabyte_line() {
        let line = "Word, other 123 words! \u{3000}日本語 ".repeat(300_000);
        assert!(line.len() > 10_000_000);
        let all: Vec<PreTokenizerWrapper> = vec![
            ByteLevel::default().into(),
            Metaspace::default().into(),
            Whitespace.into(),
            BertPreTokenizer.into(),
            UnicodeScripts.into(),
            Split::new(
                SplitPattern::Regex(r"\s+".into()),
                crate::tokenizer::SplitDelimiterBehavior::Isolated,
                false,
            )
            .unwrap()
            .into(),
        ];
        for pre in all {
            let mut p = PreTokenizedString::from(line.as_str());
            pre.pre_tokenize(&mut p).unwrap();
            let splits = p.get_splits(OffsetReferential::Original, OffsetType::Byte);
            assert!(splits.len() > 300_000, "{pre:?}");
            assert!(
                splits.windows(2).all(|w| w[0].1 .1 <= w[1].1 .0),
                "{pre:?}: pieces out of order"
            );
            assert!(splits.last().unwrap().1 .1 <= line.len());
        }
    }
}
