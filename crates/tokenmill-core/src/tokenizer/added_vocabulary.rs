//! Added tokens: tokens the user puts on top of a model's vocabulary (special tokens such as
//! `<|endoftext|>`, or extra words). They are cut out of the input before the model sees it and
//! are never split.
//!
//! Semantics follow `tokenizers`:
//! - tokens with `normalized = false` are matched on the raw input, first;
//! - the remaining pieces are then normalized, and tokens with `normalized = true` are matched
//!   on the normalized text (their own content normalized the same way);
//! - matching is leftmost-longest; `single_word` rejects a match that touches a word character
//!   on either side, `lstrip` / `rstrip` absorb the whitespace before / after the match;
//! - ids of new tokens come after the model's vocabulary (a token already known to the model, or
//!   already added, keeps its id).
use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use educe::Educe;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::{Model, NormalizedString, Normalizer, Offsets, PreTokenizedString, Token};
use crate::utils::macros::setters;

/// A token added on top of the model's vocabulary, with its matching options.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Educe)]
#[educe(Default)]
pub struct AddedToken {
    /// The text of the token, as the user gave it.
    pub content: String,
    /// Only match when not inside a word (no word character right before or after).
    #[serde(default)]
    pub single_word: bool,
    /// Absorb the whitespace on the left of a match.
    #[serde(default)]
    pub lstrip: bool,
    /// Absorb the whitespace on the right of a match.
    #[serde(default)]
    pub rstrip: bool,
    /// Match against the normalized text (and normalize the token's content the same way).
    #[serde(default = "default_true")]
    #[educe(Default = true)]
    pub normalized: bool,
    /// A special token: skipped by `decode(skip_special_tokens=True)`.
    #[serde(default)]
    pub special: bool,
}

fn default_true() -> bool {
    true
}

impl AddedToken {
    /// A token with default options; special tokens are not normalized by default.
    pub fn from(content: impl Into<String>, special: bool) -> Self {
        AddedToken { content: content.into(), normalized: !special, special, ..Default::default() }
    }
    setters! {
        single_word: bool;
        lstrip: bool;
        rstrip: bool;
        normalized: bool;
        special: bool;
    }
}

/// An added token with its id, as tokenizer.json lists it under `added_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AddedTokenWithId {
    pub id: u32,
    #[serde(flatten)]
    pub token: AddedToken,
}

/// One automaton over a set of added tokens. `ids[pattern_index]` is the token id.
#[derive(Debug, Clone)]
struct Matcher {
    automaton: AhoCorasick,
    ids: Vec<u32>,
}

impl Matcher {
    /// `None` when there is nothing to match. Patterns are sorted by id so that, when two
    /// tokens have the same text (possible after normalization), the lower id wins.
    fn build(mut patterns: Vec<(String, u32)>) -> Result<Option<Matcher>> {
        if patterns.is_empty() {
            return Ok(None);
        }
        patterns.sort_by_key(|p| p.1);
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns.iter().map(|p| p.0.as_bytes()))
            .map_err(|e| Error::Other(format!("cannot build the added-token matcher: {e}")))?;
        Ok(Some(Matcher { automaton, ids: patterns.into_iter().map(|p| p.1).collect() }))
    }
}

/// The added tokens of a tokenizer and the automata that find them in text.
#[derive(Debug, Clone, Default)]
pub struct AddedVocabulary {
    /// content → id, for every added token.
    by_content: HashMap<String, u32>,
    /// id → token.
    by_id: HashMap<u32, AddedToken>,
    special_contents: HashSet<String>,
    /// For `normalized` tokens whose content the normalizer changes: id → normalized content
    /// (what is matched, and what `id_to_token` returns so decoders invert it correctly).
    normalized_content: HashMap<u32, String>,
    /// Tokens matched on the raw input (`normalized = false`).
    raw_matcher: Option<Matcher>,
    /// Tokens matched on the normalized text (`normalized = true`).
    normalized_matcher: Option<Matcher>,
    /// When true, special tokens are not extracted (they are encoded like ordinary text).
    encode_special_tokens: bool,
}

impl PartialEq for AddedVocabulary {
    fn eq(&self, other: &Self) -> bool {
        self.by_id == other.by_id && self.encode_special_tokens == other.encode_special_tokens
    }
}

impl AddedVocabulary {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.by_content.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_content.is_empty()
    }
    /// content → id of every added token.
    pub fn get_vocab(&self) -> &HashMap<String, u32> {
        &self.by_content
    }
    /// id → token of every added token.
    pub fn get_added_tokens_decoder(&self) -> &HashMap<u32, AddedToken> {
        &self.by_id
    }
    /// The added tokens with their ids, by ascending id (the tokenizer.json order).
    pub fn tokens_with_ids(&self) -> Vec<AddedTokenWithId> {
        let mut tokens: Vec<AddedTokenWithId> = self
            .by_id
            .iter()
            .map(|(id, token)| AddedTokenWithId { id: *id, token: token.clone() })
            .collect();
        tokens.sort_unstable_by_key(|t| t.id);
        tokens
    }

    /// Id of `token`: added tokens first, then the model.
    pub fn token_to_id(&self, token: &str, model: &impl Model) -> Option<u32> {
        self.by_content.get(token).copied().or_else(|| model.token_to_id(token))
    }

    /// The text of an added token for decoding: its normalized form when it was normalized on
    /// the way in, else its content. `None` if `id` is not an added token.
    pub fn simple_id_to_token(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(|t| self.normalized_content.get(&id).unwrap_or(&t.content).as_str())
    }

    pub fn is_special_token(&self, content: &str) -> bool {
        self.special_contents.contains(content)
    }
    pub fn set_encode_special_tokens(&mut self, value: bool) {
        self.encode_special_tokens = value;
    }
    pub fn get_encode_special_tokens(&self) -> bool {
        self.encode_special_tokens
    }

    /// Adds tokens; returns how many were actually added or changed (empty contents and exact
    /// duplicates are ignored). A token the model already knows keeps the model's id.
    pub fn add_tokens<N: Normalizer>(
        &mut self,
        tokens: impl IntoIterator<Item = AddedToken>,
        model: &impl Model,
        normalizer: Option<&N>,
    ) -> Result<usize> {
        let vocab_size = model.get_vocab_size() as u32;
        // New ids continue after the model vocabulary, or after the highest added id if that
        // is already beyond it.
        let mut next_id = match self.by_id.keys().max() {
            Some(&max) if max >= vocab_size || vocab_size == 0 => max + 1,
            _ => vocab_size,
        };
        let mut added = 0;
        for token in tokens {
            if token.content.is_empty() {
                continue;
            }
            if let Some(id) = self.by_content.get(&token.content) {
                if self.by_id.get(id) == Some(&token) {
                    continue;
                }
            }
            let id = match self.token_to_id(&token.content, model) {
                Some(id) => id,
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
            if token.normalized {
                if let Some(normalized) = normalize_content(&token.content, normalizer)? {
                    self.normalized_content.insert(id, normalized);
                }
            }
            self.by_content.insert(token.content.clone(), id);
            if token.special {
                self.special_contents.insert(token.content.clone());
            }
            self.by_id.insert(id, token);
            added += 1;
        }
        self.rebuild_matchers()?;
        Ok(added)
    }

    /// Re-normalizes the `normalized` tokens (after the tokenizer's normalizer changed).
    pub fn refresh_normalized_tokens<N: Normalizer>(
        &mut self,
        normalizer: Option<&N>,
    ) -> Result<()> {
        self.normalized_content.clear();
        for (id, token) in &self.by_id {
            if token.normalized {
                if let Some(normalized) = normalize_content(&token.content, normalizer)? {
                    self.normalized_content.insert(*id, normalized);
                }
            }
        }
        self.rebuild_matchers()
    }

    fn rebuild_matchers(&mut self) -> Result<()> {
        let mut raw = Vec::new();
        let mut normalized = Vec::new();
        for (id, token) in &self.by_id {
            if token.normalized {
                let text = self.normalized_content.get(id).unwrap_or(&token.content);
                normalized.push((text.clone(), *id));
            } else {
                raw.push((token.content.clone(), *id));
            }
        }
        self.raw_matcher = Matcher::build(raw)?;
        self.normalized_matcher = Matcher::build(normalized)?;
        Ok(())
    }

    /// Covers `text` with spans, each `Some(id)` for an added token (options applied) or
    /// `None` for the text between them.
    fn find_matches(&self, text: &str, matcher: &Matcher) -> Vec<(Option<u32>, Offsets)> {
        let mut spans = Vec::new();
        let mut covered_to = 0;
        for m in matcher.automaton.find_iter(text) {
            let id = matcher.ids[m.pattern().as_usize()];
            let Some(token) = self.by_id.get(&id) else { continue };
            // As in `tokenizers`, a content once added as special stays special here, even if
            // re-added without the flag.
            if self.encode_special_tokens && self.special_contents.contains(&token.content) {
                continue;
            }
            let (mut start, mut end) = (m.start(), m.end());
            if token.single_word
                && (ends_with_word_char(&text[..start]) || starts_with_word_char(&text[end..]))
            {
                continue;
            }
            if token.lstrip {
                // Never reach back into what the previous match already took.
                start = start_of_trailing_whitespace(&text[..start]).max(covered_to);
            }
            if token.rstrip {
                end += length_of_leading_whitespace(&text[end..]);
            }
            if covered_to < start {
                spans.push((None, (covered_to, start)));
            }
            spans.push((Some(id), (start, end)));
            covered_to = end;
        }
        if covered_to < text.len() || spans.is_empty() {
            spans.push((None, (covered_to, text.len())));
        }
        spans
    }

    /// Cuts `piece` at the added tokens `matcher` finds; added-token pieces get their token.
    fn split_piece(
        &self,
        piece: NormalizedString,
        matcher: &Option<Matcher>,
    ) -> Vec<(NormalizedString, Option<Vec<Token>>)> {
        let Some(matcher) = matcher else { return vec![(piece, None)] };
        let spans = self.find_matches(piece.get(), matcher);
        if spans.len() == 1 && spans[0].0.is_none() {
            return vec![(piece, None)];
        }
        spans
            .into_iter()
            .filter_map(|(id, (start, end))| {
                // Match ends are on char boundaries (the patterns are valid UTF-8, and the
                // strip/word checks move by whole chars), so `slice` cannot fail here.
                let slice = piece.slice(start..end)?;
                let tokens =
                    id.map(|id| vec![Token::new(id, slice.get().to_owned(), (0, slice.len()))]);
                Some((slice, tokens))
            })
            .collect()
    }

    /// `extract_and_normalize` for a tokenizer without normalizer, as spans of `text`: each
    /// `Some(id)` is an added token, `None` the text between (empty spans left out). Same
    /// matching as the general path (raw tokens first, then normalized tokens in the gaps).
    pub fn split_unnormalized(&self, text: &str) -> Vec<(Option<u32>, Offsets)> {
        let whole = vec![(None, (0, text.len()))];
        let first = match &self.raw_matcher {
            Some(m) => self.find_matches(text, m),
            None => whole,
        };
        let mut spans = Vec::with_capacity(first.len());
        for (id, (start, end)) in first {
            if start >= end {
                continue;
            }
            match (&self.normalized_matcher, id) {
                (Some(m), None) => spans.extend(
                    self.find_matches(&text[start..end], m)
                        .into_iter()
                        .filter(|(_, (s, e))| s < e)
                        .map(|(id, (s, e))| (id, (start + s, start + e))),
                ),
                _ => spans.push((id, (start, end))),
            }
        }
        spans
    }

    /// Whether some added token is matched in normalized text (its `normalized` flag set).
    pub fn has_normalized_tokens(&self) -> bool {
        self.normalized_matcher.is_some()
    }

    /// Extracts the added tokens from `sequence` and normalizes the rest (see the module docs).
    pub fn extract_and_normalize<N: Normalizer>(
        &self,
        normalizer: Option<&N>,
        sequence: &str,
    ) -> Result<PreTokenizedString> {
        let mut pretokenized = PreTokenizedString::from(sequence);
        if self.raw_matcher.is_some() {
            pretokenized.split(|_, piece| Ok(self.split_piece(piece, &self.raw_matcher)))?;
        }
        pretokenized.split(|_, mut piece| {
            if let Some(n) = normalizer {
                n.normalize(&mut piece)?;
            }
            Ok(self.split_piece(piece, &self.normalized_matcher))
        })?;
        Ok(pretokenized)
    }
}

/// The content normalized by `normalizer`, if that changes it.
fn normalize_content<N: Normalizer>(
    content: &str,
    normalizer: Option<&N>,
) -> Result<Option<String>> {
    let Some(n) = normalizer else { return Ok(None) };
    let mut s = NormalizedString::from(content);
    n.normalize(&mut s)?;
    Ok((s.get() != content).then(|| s.get().to_owned()))
}

/// `\w` as regular expressions define it (Unicode word characters), like `tokenizers`' check.
fn is_word_char(c: char) -> bool {
    regex_syntax::is_word_character(c)
}

fn ends_with_word_char(text: &str) -> bool {
    text.chars().next_back().is_some_and(is_word_char)
}

fn starts_with_word_char(text: &str) -> bool {
    text.chars().next().is_some_and(is_word_char)
}

/// Byte index where the run of whitespace at the end of `text` starts (`\s*$`).
fn start_of_trailing_whitespace(text: &str) -> usize {
    text.trim_end_matches(char::is_whitespace).len()
}

/// Byte length of the run of whitespace at the start of `text` (`^\s*`).
fn length_of_leading_whitespace(text: &str) -> usize {
    text.len() - text.trim_start_matches(char::is_whitespace).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::test_support::{Lowercase, WordModel};

    fn pieces(
        vocab: &AddedVocabulary,
        text: &str,
        normalizer: Option<&Lowercase>,
    ) -> Vec<(String, Option<u32>)> {
        let pre = vocab.extract_and_normalize(normalizer, text).unwrap();
        pre.splits()
            .iter()
            .map(|s| (s.normalized.get().to_string(), s.tokens.as_ref().map(|t| t[0].id)))
            .collect()
    }

    /// An added vocabulary of `tokens` over a model with no vocabulary of its own.
    fn vocab_of<const K: usize>(
        tokens: [AddedToken; K],
        normalizer: Option<&Lowercase>,
    ) -> AddedVocabulary {
        let mut vocab = AddedVocabulary::new();
        vocab.add_tokens(tokens, &WordModel::new(&[]), normalizer).unwrap();
        vocab
    }

    #[test]
    fn ids_follow_the_model_vocabulary() {
        let model = WordModel::new(&["a", "b", "c"]);
        let mut vocab = AddedVocabulary::new();
        let n = vocab
            .add_tokens(
                [AddedToken::from("<s>", true), AddedToken::from("b", false)],
                &model,
                None::<&Lowercase>,
            )
            .unwrap();
        assert_eq!(n, 2);
        assert_eq!(vocab.token_to_id("<s>", &model), Some(3));
        assert_eq!(vocab.token_to_id("b", &model), Some(1));
        vocab.add_tokens([AddedToken::from("</s>", true)], &model, None::<&Lowercase>).unwrap();
        assert_eq!(vocab.token_to_id("</s>", &model), Some(4));
        // exact duplicate: ignored
        assert_eq!(
            vocab.add_tokens([AddedToken::from("</s>", true)], &model, None::<&Lowercase>).unwrap(),
            0
        );
    }

    #[test]
    fn strip_and_single_word() {
        let vocab = vocab_of(
            [
                AddedToken::from("[M]", true).lstrip(true).rstrip(true),
                AddedToken::from("ing", false).single_word(true),
            ],
            None,
        );
        let got = pieces(&vocab, "a  [M]  b ing sing", None);
        assert_eq!(
            got,
            vec![
                ("a".into(), None),
                ("  [M]  ".into(), Some(0)),
                ("b ".into(), None),
                ("ing".into(), Some(1)),
                (" sing".into(), None)
            ]
        );
    }

    #[test]
    fn normalized_tokens_match_normalized_text() {
        let lower = Lowercase::Lowercase;
        let tokens = [AddedToken::from("Day", false), AddedToken::from("[X]", true)];
        let vocab = vocab_of(tokens, Some(&lower));
        let got = pieces(&vocab, "A DAY[X]", Some(&lower));
        assert_eq!(
            got,
            vec![("a ".into(), None), ("day".into(), Some(0)), ("[X]".into(), Some(1))]
        );
        assert_eq!(vocab.simple_id_to_token(0), Some("day"));
    }

    #[test]
    fn leftmost_longest() {
        let vocab =
            vocab_of([AddedToken::from("<a>", true), AddedToken::from("<a><b>", true)], None);
        assert_eq!(
            pieces(&vocab, "x<a><b><a>", None),
            vec![("x".into(), None), ("<a><b>".into(), Some(1)), ("<a>".into(), Some(0))]
        );
    }
}
