//! Tiny stand-in components for the pipeline's unit tests (the real ones live in their stage
//! modules; these keep the tests of the plumbing independent of them).
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::tokenizer::{
    Decoder, Encoding, Model, NormalizedString, Normalizer, PostProcessor, PreTokenizedString,
    PreTokenizer, SplitDelimiterBehavior, Token,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Lowercase {
    Lowercase,
}

impl Normalizer for Lowercase {
    fn normalize(&self, n: &mut NormalizedString) -> Result<()> {
        n.lowercase();
        Ok(())
    }
}

/// Splits on whitespace, dropping it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum WhitespaceSplit {
    WhitespaceSplit,
}

impl PreTokenizer for WhitespaceSplit {
    fn pre_tokenize(&self, p: &mut PreTokenizedString) -> Result<()> {
        p.split(|_, n| n.split(char::is_whitespace, SplitDelimiterBehavior::Removed))
    }
}

/// Whole words from a vocabulary; unknown words become single characters when known, else fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub struct WordModel {
    pub vocab: HashMap<String, u32>,
}

impl WordModel {
    pub fn new(words: &[&str]) -> Self {
        WordModel {
            vocab: words.iter().enumerate().map(|(i, w)| (w.to_string(), i as u32)).collect(),
        }
    }
}

impl Model for WordModel {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        if let Some(&id) = self.vocab.get(sequence) {
            return Ok(vec![Token::new(id, sequence.to_string(), (0, sequence.len()))]);
        }
        sequence
            .char_indices()
            .map(|(i, c)| {
                let s = c.to_string();
                let id = *self.vocab.get(&s).ok_or_else(|| Error::UnknownToken(s.clone()))?;
                Ok(Token::new(id, s, (i, i + c.len_utf8())))
            })
            .collect()
    }
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }
    fn id_to_token(&self, id: u32) -> Option<String> {
        self.vocab.iter().find(|(_, &v)| v == id).map(|(k, _)| k.clone())
    }
    fn get_vocab(&self) -> HashMap<String, u32> {
        self.vocab.clone()
    }
    fn get_vocab_size(&self) -> usize {
        self.vocab.len()
    }
    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        Ok(vec![])
    }
}

/// Joins a pair, marking sequences, and adds nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum JoinPair {
    JoinPair,
}

impl PostProcessor for JoinPair {
    fn added_tokens(&self, _is_pair: bool) -> usize {
        0
    }
    fn process(
        &self,
        encoding: Encoding,
        pair: Option<Encoding>,
        _add_special_tokens: bool,
    ) -> Result<Encoding> {
        Ok(super::pipeline::join_sequences(encoding, pair))
    }
}

/// Joins tokens with spaces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SpaceJoin {
    SpaceJoin,
}

impl Decoder for SpaceJoin {
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>> {
        let n = tokens.len();
        Ok(tokens
            .into_iter()
            .enumerate()
            .map(|(i, t)| if i + 1 < n { t + " " } else { t })
            .collect())
    }
}

impl crate::tokenizer::Capabilities for WhitespaceSplit {}
impl crate::tokenizer::Capabilities for Lowercase {}
impl crate::tokenizer::Capabilities for WordModel {}
impl crate::tokenizer::Capabilities for JoinPair {}
