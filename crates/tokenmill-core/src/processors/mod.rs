//! Post-processors: add special tokens and join pairs into one `Encoding`.
//!
//! Each component mirrors its `tokenizers` namesake, including (de)serialization in
//! tokenizer.json. `process` follows `tokenizers`' default: every input encoding (and each of
//! its overflowing windows) is tagged with its sequence index, the inputs get type ids 0 / 1,
//! the component transforms the list (`process_encodings`), and the result is merged.
//!
//! One file per component. May import `tokenizer` (the `PostProcessor` trait, `Encoding`),
//! `error`, `utils` and `pre_tokenizers::byte_level` (`ByteLevel` is one component serving
//! three stages); never `models` or `decoders`.
use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::{Encoding, PostProcessor};
use crate::utils::macros::component_enum;

pub(crate) mod bert;
pub(crate) mod byte_level;
pub(crate) mod roberta;
pub(crate) mod sequence;
pub(crate) mod template;

pub use bert::BertProcessing;
pub use byte_level::ByteLevel;
pub use roberta::RobertaProcessing;
pub use sequence::Sequence;
pub use template::{Piece, SpecialToken, Template, TemplateProcessing, Tokens};

component_enum! {
    /// Every post-processor. Serialized untagged: each component writes its own `"type"`.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(untagged)]
    pub enum PostProcessorWrapper {
        Roberta(RobertaProcessing),
        Bert(BertProcessing),
        ByteLevel(ByteLevel),
        Template(TemplateProcessing),
        Sequence(Sequence),
    }
}

impl PostProcessorWrapper {
    /// Transforms the list of encodings (one per input); the caller merges the result.
    pub fn process_encodings(
        &self,
        encodings: Vec<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Vec<Encoding>> {
        match self {
            Self::Roberta(p) => Ok(p.process_encodings(encodings, add_special_tokens)),
            Self::Bert(p) => Ok(p.process_encodings(encodings, add_special_tokens)),
            Self::ByteLevel(p) => Ok(byte_level::process_encodings(p, encodings)),
            Self::Template(p) => p.process_encodings(encodings, add_special_tokens),
            Self::Sequence(p) => p.process_encodings(encodings, add_special_tokens),
        }
    }
}

impl PostProcessor for PostProcessorWrapper {
    fn added_tokens(&self, is_pair: bool) -> usize {
        match self {
            Self::Roberta(p) => p.added_tokens(is_pair),
            Self::Bert(p) => p.added_tokens(is_pair),
            Self::ByteLevel(_) => 0,
            Self::Template(p) => p.added_tokens(is_pair),
            Self::Sequence(p) => p.added_tokens(is_pair),
        }
    }

    fn process(
        &self,
        encoding: Encoding,
        pair: Option<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Encoding> {
        let mut encodings: Vec<Encoding> = std::iter::once(encoding).chain(pair).collect();
        for (i, e) in encodings.iter_mut().enumerate() {
            e.set_sequence_id(i);
            for o in &mut e.overflowing {
                o.set_sequence_id(i);
            }
            e.set_type_ids(i as u32);
        }
        let mut processed = self.process_encodings(encodings, add_special_tokens)?;
        if processed.len() == 1 {
            // Merging one encoding into an empty one gives it back unchanged; skip the copy.
            return Ok(processed.remove(0));
        }
        Ok(Encoding::merge(processed, false))
    }
}

/// What Bert and Roberta put around the encoding of input `i` (see `surround`): `(before,
/// after, special_type_id, content_type_id)`.
pub(crate) type Around<'a> = (Option<&'a SpecialPair>, Option<&'a SpecialPair>, u32, Option<u32>);

/// Surrounds the encoding of each input `i` (its sequence id) and each of its overflowing
/// windows as `around(i)` says, the windows becoming the overflowing list of the result (how
/// Bert/Roberta treat truncated inputs).
pub(crate) fn surround_each<'a>(
    encodings: Vec<Encoding>,
    around: impl Fn(usize) -> Around<'a>,
) -> Vec<Encoding> {
    let wrap = |(i, mut encoding): (usize, Encoding)| {
        let (before, after, special_type_id, content_type_id) = around(i);
        let f = |e| surround(e, before, after, special_type_id, content_type_id, i);
        let overflowing: Vec<Encoding> = encoding.take_overflowing().into_iter().map(f).collect();
        let mut wrapped = f(encoding);
        wrapped.overflowing = overflowing;
        wrapped
    };
    encodings.into_iter().enumerate().map(wrap).collect()
}

impl<'de> Deserialize<'de> for PostProcessorWrapper {
    /// Tries the components in `tokenizers`' order (a Roberta config also reads as Bert, so
    /// Roberta comes first). When none fits and `"type"` names a component, that component's
    /// own error is reported, which says which field is wrong.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = serde_json::Value::deserialize(deserializer)?;
        // `strict`: the component only reads JSON whose "type" is its name (as in tokenizers).
        type Attempt = fn(&serde_json::Value) -> serde_json::Result<PostProcessorWrapper>;
        let attempts: [(&str, bool, Attempt); 5] = [
            ("RobertaProcessing", false, |v| RobertaProcessing::deserialize(v).map(Self::Roberta)),
            ("BertProcessing", false, |v| BertProcessing::deserialize(v).map(Self::Bert)),
            ("ByteLevel", true, |v| ByteLevel::deserialize(v).map(Self::ByteLevel)),
            ("TemplateProcessing", false, |v| {
                TemplateProcessing::deserialize(v).map(Self::Template)
            }),
            ("Sequence", true, |v| Sequence::deserialize(v).map(Self::Sequence)),
        ];
        let declared = value.get("type").and_then(|t| t.as_str());
        let mut declared_error = None;
        for (name, strict, attempt) in attempts {
            if strict && declared != Some(name) {
                continue;
            }
            match attempt(&value) {
                Ok(p) => return Ok(p),
                Err(e) if declared == Some(name) => declared_error = Some(e),
                Err(_) => {}
            }
        }
        Err(match (declared, declared_error) {
            (Some(name), Some(e)) => {
                D::Error::custom(format!("invalid {name} post-processor: {e}"))
            }
            (Some(name), None) => D::Error::custom(format!("unknown post-processor type {name:?}")),
            _ => D::Error::custom(
                "post-processor: data did not match any variant of PostProcessorWrapper",
            ),
        })
    }
}

impl PostProcessorWrapper {
    pub fn from_json(json: &str) -> Result<Self> {
        serde_json::from_str(json).map_err(|e| Error::format(format!("post-processor JSON: {e}")))
    }
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self)
            .map_err(|e| Error::Other(format!("post-processor to JSON: {e}")))
    }
}

/// A special token as Bert/Roberta configure it: `(token, id)`.
pub type SpecialPair = (String, u32);

/// `before` + the tokens of `content` + `after`: the specials get offsets `(0, 0)`, no word,
/// type id `special_type_id` and are masked special; `content` keeps its ids, tokens, words and
/// offsets, takes `content_type_id` when given (else keeps its own), and is masked non-special
/// with full attention. The only sequence range is `sequence_id` over the content.
pub(crate) fn surround(
    mut content: Encoding,
    before: Option<&SpecialPair>,
    after: Option<&SpecialPair>,
    special_type_id: u32,
    content_type_id: Option<u32>,
    sequence_id: usize,
) -> Encoding {
    // Edited in place: the content's token strings are moved, never cloned.
    if let Some(t) = content_type_id {
        content.type_ids.iter_mut().for_each(|x| *x = t);
    }
    content.special_tokens_mask.iter_mut().for_each(|m| *m = 0);
    content.attention_mask.iter_mut().for_each(|m| *m = 1);
    content.overflowing = Vec::new();
    content.sequence_ranges.clear();
    let mut start = 0;
    if let Some((token, id)) = before {
        content.ids.insert(0, *id);
        content.type_ids.insert(0, special_type_id);
        content.tokens.insert(0, token.clone());
        content.words.insert(0, None);
        content.offsets.insert(0, (0, 0));
        content.special_tokens_mask.insert(0, 1);
        content.attention_mask.insert(0, 1);
        start = 1;
    }
    let end = content.len();
    if let Some((token, id)) = after {
        content.push(*id, token.clone(), (0, 0), None, special_type_id, true);
    }
    content.sequence_ranges.insert(sequence_id, start..end);
    content
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{Offsets, Token};

    fn hello_there() -> Encoding {
        Encoding::from_tokens(
            vec![Token::new(12, "Hello".into(), (0, 5)), Token::new(14, "there".into(), (6, 11))],
            0,
        )
    }
    fn pair() -> Encoding {
        Encoding::from_tokens(vec![Token::new(15, "pair".into(), (0, 4))], 0)
    }
    fn ranges(e: &Encoding) -> Vec<(usize, std::ops::Range<usize>)> {
        let mut r: Vec<_> = e.sequence_ranges.clone().into_iter().collect();
        r.sort_by_key(|(s, _)| *s);
        r
    }

    #[test]
    fn serde_matches_tokenizers() {
        let cases = [
            r#"{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}"#,
            concat!(
                r#"{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"#,
                r#""trim_offsets":true,"add_prefix_space":true}"#
            ),
            r#"{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true}"#,
            concat!(
                r#"{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","#,
                r#""type_id":0}},{"Sequence":{"id":"A","type_id":0}},"#,
                r#"{"SpecialToken":{"id":"[SEP]","type_id":0}}],"#,
                r#""pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},"#,
                r#"{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","#,
                r#""type_id":0}},{"Sequence":{"id":"B","type_id":1}},"#,
                r#"{"SpecialToken":{"id":"[SEP]","type_id":1}}],"#,
                r#""special_tokens":{"[CLS]":{"id":"[CLS]","ids":[1],"tokens":["[CLS]"]},"#,
                r#""[SEP]":{"id":"[SEP]","ids":[0],"tokens":["[SEP]"]}}}"#
            ),
            concat!(
                r#"{"type":"Sequence","processors":[{"type":"ByteLevel","#,
                r#""add_prefix_space":true,"trim_offsets":true,"use_regex":true},"#,
                r#"{"type":"BertProcessing","sep":["[SEP]",102],"cls":["[CLS]",101]}]}"#
            ),
        ];
        for json in cases {
            let p = PostProcessorWrapper::from_json(json).unwrap();
            assert_eq!(p.to_json().unwrap(), json);
        }
    }

    #[test]
    fn deserialization_leniency_like_tokenizers() {
        // Untagged order: a Roberta config wins even when it says Bert; Bert's tag is not checked.
        let p = PostProcessorWrapper::from_json(concat!(
            r#"{"type":"BertProcessing","sep":["</s>",2],"cls":["<s>",0],"#,
            r#""trim_offsets":true,"add_prefix_space":true}"#
        ))
        .unwrap();
        assert!(matches!(p, PostProcessorWrapper::Roberta(_)));
        let p = PostProcessorWrapper::from_json(r#"{"sep":["[SEP]",102],"cls":["[CLS]",101]}"#)
            .unwrap();
        assert!(matches!(p, PostProcessorWrapper::Bert(_)));
        // ByteLevel's tag is checked, `use_regex` defaults to true.
        let p = PostProcessorWrapper::from_json(
            r#"{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true}"#,
        )
        .unwrap();
        assert_eq!(p, PostProcessorWrapper::ByteLevel(ByteLevel::new(false, true, true)));
        assert!(PostProcessorWrapper::from_json(
            r#"{"add_prefix_space":true,"trim_offsets":false,"use_regex":false}"#
        )
        .is_err());
        // A template is never mistaken for a ByteLevel (whose fields all have defaults).
        let t = PostProcessorWrapper::from_json(
            r#"{"type":"TemplateProcessing","single":[],"pair":[],"special_tokens":{}}"#,
        )
        .unwrap();
        assert!(matches!(t, PostProcessorWrapper::Template(_)));
        let err = PostProcessorWrapper::from_json(r#"{"type":"TemplateProcessing","single":[]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("pair"), "{err}");
    }

    #[test]
    fn bert_single_pair_and_without_specials() {
        let p = PostProcessorWrapper::Bert(BertProcessing::default());
        assert_eq!((p.added_tokens(false), p.added_tokens(true)), (2, 3));
        let single = p.process(hello_there(), None, true).unwrap();
        assert_eq!(single.ids, vec![101, 12, 14, 102]);
        assert_eq!(single.offsets, vec![(0, 0), (0, 5), (6, 11), (0, 0)]);
        assert_eq!(single.special_tokens_mask, vec![1, 0, 0, 1]);
        assert_eq!(ranges(&single), vec![(0, 1..3)]);
        assert_eq!(single.token_to_sequence(3), None);

        let both = p.process(hello_there(), Some(pair()), true).unwrap();
        assert_eq!(both.ids, vec![101, 12, 14, 102, 15, 102]);
        assert_eq!(both.type_ids, vec![0, 0, 0, 0, 1, 1]);
        assert_eq!(both.special_tokens_mask, vec![1, 0, 0, 1, 0, 1]);
        assert_eq!(ranges(&both), vec![(0, 1..3), (1, 4..5)]);
        assert_eq!(both.sequence_ids(), vec![None, Some(0), Some(0), None, Some(1), None]);

        let plain = p.process(hello_there(), Some(pair()), false).unwrap();
        assert_eq!(plain.ids, vec![12, 14, 15]);
        assert_eq!(plain.type_ids, vec![0, 0, 1]);
        assert_eq!(ranges(&plain), vec![(0, 0..2), (1, 2..3)]);
    }

    #[test]
    fn roberta_pair() {
        let p = PostProcessorWrapper::Roberta(RobertaProcessing::default());
        assert_eq!((p.added_tokens(false), p.added_tokens(true)), (2, 4));
        let both = p.process(hello_there(), Some(pair()), true).unwrap();
        assert_eq!(both.ids, vec![0, 12, 14, 2, 2, 15, 2]);
        assert_eq!(both.type_ids, vec![0; 7]);
        assert_eq!(both.special_tokens_mask, vec![1, 0, 0, 1, 1, 0, 1]);
        assert_eq!(ranges(&both), vec![(0, 1..3), (1, 5..6)]);
        let plain = p.process(hello_there(), Some(pair()), false).unwrap();
        assert_eq!(plain.type_ids, vec![0, 0, 0]);
    }

    #[test]
    fn byte_level_trims_offsets() {
        // tokenizers' `processor_trims_offsets` and `processor_trims_offsets_pre_tokenized`.
        let mk = |tokens: &[(&str, Offsets)]| {
            Encoding::from_tokens(
                tokens.iter().map(|(t, o)| Token::new(0, t.to_string(), *o)).collect(),
                0,
            )
        };
        let trim = PostProcessorWrapper::ByteLevel(ByteLevel::new(true, true, true));
        let start = mk(&[
            ("Ġ", (0, 1)),
            ("ĠĠĠĠHelloĠĠ", (0, 11)),
            ("ĠĠHello", (11, 18)),
            ("HelloĠĠ", (18, 25)),
            ("ĠĠĠĠ", (25, 29)),
        ]);
        let trimmed = trim.process(start.clone(), None, false).unwrap();
        assert_eq!(trimmed.offsets, vec![(0, 0), (4, 9), (13, 18), (18, 23), (29, 29)]);
        let both = trim.process(start.clone(), Some(start.clone()), false).unwrap();
        assert_eq!(both.offsets[5..], trimmed.offsets[..]);
        assert_eq!(both.type_ids, vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
        assert_eq!(ranges(&both), vec![(0, 0..5), (1, 5..10)]);
        let pretokenized = mk(&[("Ġl", (0, 1)), ("ove", (1, 4)), ("Ġl", (0, 1)), ("ove", (1, 4))]);
        assert_eq!(
            trim.process(pretokenized.clone(), None, true).unwrap().offsets,
            pretokenized.offsets
        );
        let kept = PostProcessorWrapper::ByteLevel(ByteLevel::new(true, false, true))
            .process(start.clone(), None, true)
            .unwrap();
        assert_eq!(kept.offsets, start.offsets);
    }

    #[test]
    fn template_bert_like_with_multi_id_special() {
        let specials: Tokens = [
            SpecialToken::single("[CLS]".into(), 1),
            SpecialToken::single("[SEP]".into(), 0),
            SpecialToken::new("[2FR]".into(), vec![7, 8], vec!["to".into(), "FR".into()]).unwrap(),
        ]
        .into_iter()
        .collect();
        let t = TemplateProcessing::new(
            Some(Template::parse("[CLS] $0 [SEP]").unwrap()),
            Some(Template::parse("[CLS]:0 $A:0 [SEP]:0 [2FR]:1 $B:1 [SEP]:1").unwrap()),
            specials,
        )
        .unwrap();
        let p = PostProcessorWrapper::Template(t);
        assert_eq!((p.added_tokens(false), p.added_tokens(true)), (2, 5));
        let both = p.process(hello_there(), Some(pair()), true).unwrap();
        assert_eq!(
            both.tokens,
            vec!["[CLS]", "Hello", "there", "[SEP]", "to", "FR", "pair", "[SEP]"]
        );
        assert_eq!(both.ids, vec![1, 12, 14, 0, 7, 8, 15, 0]);
        assert_eq!(both.type_ids, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(both.special_tokens_mask, vec![1, 0, 0, 1, 1, 1, 0, 1]);
        assert_eq!(ranges(&both), vec![(0, 1..3), (1, 6..7)]);
        let plain = p.process(hello_there(), Some(pair()), false).unwrap();
        assert_eq!(plain.tokens, vec!["Hello", "there", "pair"]);
    }

    #[test]
    fn template_parsing_and_validation() {
        use template::Sequence::{A, B};
        for (text, id, type_id) in [("$", A, 0), ("$B:2", B, 2), ("$1", A, 1), ("$:1", A, 1)] {
            assert_eq!(Piece::parse(text).unwrap(), Piece::Sequence { id, type_id }, "{text}");
        }
        assert!(Piece::parse("$C:1").is_err());
        assert!(Piece::parse("$A:").is_err());
        assert!(Piece::parse("a:b:c").is_err());
        let e = TemplateProcessing::new(
            None,
            Some(Template::parse("$A [SEP]").unwrap()),
            Tokens::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("both sequences"));
        let e = TemplateProcessing::new(
            Some(Template::parse("[CLS] $A").unwrap()),
            None,
            Tokens::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("[CLS]"));
        // Loaded unchecked (as tokenizers does), failing cleanly when used.
        let t = PostProcessorWrapper::from_json(concat!(
            r#"{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"X","#,
            r#""type_id":0}}],"pair":[],"special_tokens":{}}"#
        ))
        .unwrap();
        assert!(t.process(hello_there(), None, true).is_err());
    }

    #[test]
    fn overflowing_windows_get_specials() {
        let mut first = Encoding::from_tokens(
            (0..5).map(|i| Token::new(i, format!("t{i}"), (i as usize, i as usize + 1))).collect(),
            0,
        );
        first.truncate(3, 1, crate::tokenizer::encoding::TruncationDirection::Right).unwrap();
        let bert = PostProcessorWrapper::Bert(BertProcessing::default());
        let out = bert.process(first.clone(), None, true).unwrap();
        assert_eq!(out.ids, vec![101, 0, 1, 2, 102]);
        let over: Vec<_> = out.overflowing.iter().map(|o| o.ids.clone()).collect();
        assert_eq!(over, vec![vec![101, 2, 3, 4, 102]]);
        let template = PostProcessorWrapper::Template(
            TemplateProcessing::new(
                Some(Template::parse("[CLS] $A [SEP]").unwrap()),
                None,
                [
                    SpecialToken::single("[CLS]".into(), 101),
                    SpecialToken::single("[SEP]".into(), 102),
                ]
                .into_iter()
                .collect(),
            )
            .unwrap(),
        );
        let out2 = template.process(first, None, true).unwrap();
        assert_eq!(out2.ids, out.ids);
        assert_eq!(out2.overflowing[0].ids, out.overflowing[0].ids);
    }

    #[test]
    fn sequence_chains() {
        let p = PostProcessorWrapper::Sequence(Sequence::new(vec![
            ByteLevel::new(true, true, true).into(),
            BertProcessing::default().into(),
        ]));
        assert_eq!(p.added_tokens(true), 3);
        let e = Encoding::from_tokens(
            vec![Token::new(1, "ĠHello".into(), (0, 6)), Token::new(2, "Ġthere".into(), (6, 12))],
            0,
        );
        let out = p.process(e, None, true).unwrap();
        assert_eq!(out.offsets, vec![(0, 0), (0, 6), (7, 12), (0, 0)]);
    }
}
