//! `TemplateProcessing`: special tokens placed by templates such as
//! `"[CLS] $A [SEP] $B:1 [SEP]:1"`.
//!
//! A template is a list of pieces separated by single spaces. `$A` / `$B` (or `$a` / `$b`)
//! name the first / second input, `$` alone is `$A`, and `$<n>` is `$A` with type id `n`;
//! anything else is the id of a special token. Either form takes an optional `:<type_id>`
//! (default 0). Each special token id maps to one or more `(token, id)` to insert.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::Encoding;

/// Which input a template piece stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sequence {
    A,
    B,
}

/// One template element; serialized `{"Sequence":{"id":"A","type_id":0}}` or
/// `{"SpecialToken":{"id":"[CLS]","type_id":0}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    Sequence { id: Sequence, type_id: u32 },
    SpecialToken { id: String, type_id: u32 },
}

impl Piece {
    /// Reads the part before any `:`; `None` when it starts with `$` but names no input.
    fn from_id(s: &str) -> Option<Piece> {
        let Some(rest) = s.strip_prefix('$') else {
            return Some(Piece::SpecialToken { id: s.to_string(), type_id: 0 });
        };
        let (id, type_id) = match rest {
            "" | "A" | "a" => (Sequence::A, 0),
            "B" | "b" => (Sequence::B, 0),
            n => (Sequence::A, n.parse::<u32>().ok()?),
        };
        Some(Piece::Sequence { id, type_id })
    }

    fn with_type_id(self, type_id: u32) -> Piece {
        match self {
            Piece::Sequence { id, .. } => Piece::Sequence { id, type_id },
            Piece::SpecialToken { id, .. } => Piece::SpecialToken { id, type_id },
        }
    }

    /// Parses `<id>` or `<id>:<type_id>`.
    pub fn parse(s: &str) -> Result<Piece> {
        let err = || Error::InvalidArgument(format!("Cannot build Piece from string \"{s}\""));
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            [id] => Piece::from_id(id).ok_or_else(err),
            [id, type_id] => {
                let type_id: u32 = type_id.parse().map_err(|_| err())?;
                Ok(Piece::from_id(id).ok_or_else(err)?.with_type_id(type_id))
            }
            _ => Err(err()),
        }
    }
}

/// A list of pieces; serialized as a JSON list of pieces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Template(pub Vec<Piece>);

impl Template {
    /// Parses a template string: pieces separated by single spaces (as in `tokenizers`, two
    /// spaces make an empty piece, i.e. a special token with an empty id).
    pub fn parse(s: &str) -> Result<Template> {
        Template::from_pieces(s.split(' '))
    }

    /// Parses a list of piece strings.
    pub fn from_pieces<S: AsRef<str>>(pieces: impl IntoIterator<Item = S>) -> Result<Template> {
        Ok(Template(pieces.into_iter().map(|p| Piece::parse(p.as_ref())).collect::<Result<_>>()?))
    }

    fn uses(&self, sequence: Sequence) -> bool {
        self.0.iter().any(|p| matches!(p, Piece::Sequence { id, .. } if *id == sequence))
    }

    fn special_ids(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|p| match p {
            Piece::SpecialToken { id, .. } => Some(id.as_str()),
            Piece::Sequence { .. } => None,
        })
    }
}

/// What a special token id of a template expands to: `tokens[i]` with id `ids[i]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecialToken {
    pub id: String,
    pub ids: Vec<u32>,
    pub tokens: Vec<String>,
}

impl SpecialToken {
    pub fn new(id: String, ids: Vec<u32>, tokens: Vec<String>) -> Result<Self> {
        if ids.len() != tokens.len() {
            return Err(Error::InvalidArgument(format!(
                "SpecialToken {id:?}: ids and tokens must be of the same length \
                 ({} ids, {} tokens)",
                ids.len(),
                tokens.len()
            )));
        }
        Ok(SpecialToken { id, ids, tokens })
    }

    /// A special token that is one token: its id in templates is the token itself.
    pub fn single(token: String, id: u32) -> Self {
        SpecialToken { id: token.clone(), ids: vec![id], tokens: vec![token] }
    }
}

/// Special tokens by template id; serialized as a JSON object with sorted keys, like `tokenizers`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Tokens(pub BTreeMap<String, SpecialToken>);

impl FromIterator<SpecialToken> for Tokens {
    fn from_iter<I: IntoIterator<Item = SpecialToken>>(iter: I) -> Self {
        Tokens(iter.into_iter().map(|t| (t.id.clone(), t)).collect())
    }
}

/// Serialized `{"type":"TemplateProcessing","single":[..],"pair":[..],"special_tokens":{..}}`;
/// all three fields are required when reading and `"type"` is not checked (as in `tokenizers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", from = "TemplateFields")]
pub struct TemplateProcessing {
    pub single: Template,
    pub pair: Template,
    #[serde(skip)]
    added_single: usize,
    #[serde(skip)]
    added_pair: usize,
    pub special_tokens: Tokens,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
struct TemplateFields {
    single: Template,
    pair: Template,
    special_tokens: Tokens,
}

impl From<TemplateFields> for TemplateProcessing {
    fn from(f: TemplateFields) -> Self {
        TemplateProcessing::from_parts(f.single, f.pair, f.special_tokens)
    }
}

impl Default for TemplateProcessing {
    /// The constructor defaults of `tokenizers.processors.TemplateProcessing()`: `$0` and `$A:0
    /// $B:1`.
    fn default() -> Self {
        let single = Template(vec![Piece::Sequence { id: Sequence::A, type_id: 0 }]);
        let pair = Template(vec![
            Piece::Sequence { id: Sequence::A, type_id: 0 },
            Piece::Sequence { id: Sequence::B, type_id: 1 },
        ]);
        TemplateProcessing::from_parts(single, pair, Tokens::default())
    }
}

impl TemplateProcessing {
    /// Builds without checks (what reading tokenizer.json does).
    fn from_parts(single: Template, pair: Template, special_tokens: Tokens) -> Self {
        let added_single = count_added(&single, &special_tokens);
        let added_pair = count_added(&pair, &special_tokens);
        TemplateProcessing { single, pair, added_single, added_pair, special_tokens }
    }

    /// Builds and validates like `tokenizers`' builder: missing templates take the defaults,
    /// the pair template must use both `$A` and `$B`, and every special token id used must be
    /// among `special_tokens`.
    pub fn new(
        single: Option<Template>,
        pair: Option<Template>,
        special_tokens: Tokens,
    ) -> Result<Self> {
        let defaults = TemplateProcessing::default();
        if let Some(p) = &pair {
            if !(p.uses(Sequence::A) && p.uses(Sequence::B)) {
                return Err(Error::InvalidArgument(
                    "Template for `pair` must use both sequences".into(),
                ));
            }
        }
        let single = single.unwrap_or(defaults.single);
        let pair = pair.unwrap_or(defaults.pair);
        let mut missing: Vec<&str> = single
            .special_ids()
            .chain(pair.special_ids())
            .filter(|id| !special_tokens.0.contains_key(*id))
            .collect();
        if !missing.is_empty() {
            missing.sort_unstable();
            missing.dedup();
            return Err(Error::InvalidArgument(format!(
                "Missing SpecialToken(s) with id(s) `{}`",
                missing.join(", ")
            )));
        }
        Ok(TemplateProcessing::from_parts(single, pair, special_tokens))
    }

    /// Replaces the single template (no validation, like `tokenizers`' setter).
    pub fn set_single(&mut self, single: Template) {
        self.added_single = count_added(&single, &self.special_tokens);
        self.single = single;
    }

    pub fn added_tokens(&self, is_pair: bool) -> usize {
        if is_pair {
            self.added_pair
        } else {
            self.added_single
        }
    }

    /// Lays out the inputs along the single (one encoding) or pair (two) template: each input
    /// piece contributes its encoding with the piece's type id, each special piece (only with
    /// `add_special_tokens`) its tokens. The caller merges the parts.
    pub fn process_encodings(
        &self,
        mut encodings: Vec<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Vec<Encoding>> {
        let template = match encodings.len() {
            1 => &self.single,
            2 => &self.pair,
            n => {
                return Err(Error::InvalidArgument(format!(
                    "TemplateProcessing takes 1 or 2 encodings, got {n}"
                )))
            }
        };
        let mut parts = Vec::with_capacity(template.0.len());
        for piece in &template.0 {
            match piece {
                Piece::Sequence { id, type_id } => {
                    let index = usize::from(*id == Sequence::B);
                    let encoding = encodings.get_mut(index).ok_or_else(|| {
                        Error::InvalidArgument(
                            "the single template of TemplateProcessing uses $B, which needs a pair"
                                .into(),
                        )
                    })?;
                    encoding.set_type_ids(*type_id);
                    encoding.set_sequence_id(index);
                    parts.push(encoding.clone());
                }
                Piece::SpecialToken { id, type_id } => {
                    if add_special_tokens {
                        let special = self.special_tokens.0.get(id).ok_or_else(|| {
                            Error::InvalidArgument(format!(
                                "TemplateProcessing: missing SpecialToken with id `{id}`"
                            ))
                        })?;
                        parts.push(Encoding::from_special_tokens(
                            &special.ids,
                            &special.tokens,
                            *type_id,
                        ));
                    }
                }
            }
        }
        Ok(parts)
    }
}

/// How many tokens the special pieces of `template` insert (unknown ids count 0).
fn count_added(template: &Template, special_tokens: &Tokens) -> usize {
    template.special_ids().map(|id| special_tokens.0.get(id).map_or(0, |s| s.ids.len())).sum()
}
