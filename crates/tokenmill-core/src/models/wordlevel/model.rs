//! The WordLevel model: a vocabulary and an unknown token.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use educe::Educe;

use crate::error::{Error, Result};
use crate::tokenizer::{Model, Token, TokenSink};
use crate::utils::macros::setters;
use crate::utils::tokens_by_id::TokensById;
use crate::utils::vocabulary::{vocabulary_lookups, Vocabulary};

/// token → id
pub type Vocab = HashMap<String, u32>;

/// The unknown token of a model built without one (as `tokenizers`).
pub const DEFAULT_UNK_TOKEN: &str = "<unk>";

/// Builds a [`WordLevel`] (the options of `tokenizers`' `WordLevelBuilder`).
#[derive(Debug, Clone, Educe)]
#[educe(Default)]
pub struct WordLevelBuilder {
    vocab: Vocab,
    file: Option<PathBuf>,
    #[educe(Default = DEFAULT_UNK_TOKEN.to_owned())]
    unk_token: String,
}

impl WordLevelBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    setters! {
        vocab: Vocab;
        unk_token: String;
        /// Reads the vocabulary from a `vocab.json` file at `build` (see
        /// [`super::files::read_file`]). As in `tokenizers`, the unknown token need not be in it.
        file: Some(PathBuf);
    }

    pub fn build(self) -> Result<WordLevel> {
        let vocab = match &self.file {
            Some(path) => super::files::read_file(path)?,
            None => self.vocab,
        };
        Ok(WordLevel { vocab: Vocabulary::new(vocab), unk_token: self.unk_token })
    }
}

/// A WordLevel model: a word in the vocabulary is its own token; any other word is the unknown
/// token, or an error when the vocabulary lacks the unknown token too (as `tokenizers`).
/// The token's offsets cover the whole word.
/// The default model has an empty vocabulary and `<unk>`.
#[derive(Debug, Clone, PartialEq, Educe)]
#[educe(Default)]
pub struct WordLevel {
    vocab: Vocabulary,
    #[educe(Default = DEFAULT_UNK_TOKEN.to_owned())]
    pub unk_token: String,
}

impl WordLevel {
    pub fn builder() -> WordLevelBuilder {
        WordLevelBuilder::new()
    }

    /// A model reading `vocab.json` (`tokenizers`' `WordLevel::from_file`).
    pub fn from_file(path: impl Into<PathBuf>) -> WordLevelBuilder {
        WordLevelBuilder::new().file(path)
    }

    /// Replaces the vocabulary, keeping the unknown token (what training does).
    pub fn set_vocab(&mut self, vocab: Vocab) {
        self.vocab = Vocabulary::new(vocab);
    }

    /// The id → token text table (shared, cheap to clone): what encodings whose token texts
    /// were deferred fill them from (see `EncodePlan::deferred_texts`).
    pub fn token_table(&self) -> Arc<TokensById> {
        self.vocab.table()
    }

    /// (token, id) in increasing id order.
    pub fn vocab_in_id_order(&self) -> Vec<(&str, u32)> {
        self.vocab.in_id_order()
    }

    /// The id of `word`: its own, or the unknown token's. The error starts with `tokenizers`'
    /// message (which says `[UNK]` whatever the unknown token is) and names the word and the
    /// unknown token.
    #[inline]
    fn id_of(&self, word: &str) -> Result<u32> {
        if let Some(id) = self.vocab.id(word) {
            return Ok(id);
        }
        self.vocab.id(&self.unk_token).ok_or_else(|| {
            let shown: String = word.chars().take(40).collect();
            let more = if shown.len() < word.len() { "…" } else { "" };
            Error::InvalidArgument(format!(
                "WordLevel error: Missing [UNK] token from the vocabulary: the word \
                 {shown:?}{more} is not in the vocabulary, nor is the unk token {:?}",
                self.unk_token
            ))
        })
    }

    /// Calls `emit(id, (0, word.len()))`: the allocation-free core of `tokenize` and the
    /// ids-only paths.
    #[inline]
    pub fn tokenize_with(&self, word: &str, mut emit: impl TokenSink) -> Result<()> {
        emit(self.id_of(word)?, (0, word.len()));
        Ok(())
    }
}

impl Model for WordLevel {
    fn tokenize(&self, word: &str) -> Result<Vec<Token>> {
        let id = self.id_of(word)?;
        // The word's own text, or the unk token's (as `tokenizers`, even where several tokens
        // share an id).
        let value = if self.vocab.id(word).is_some() { word } else { &self.unk_token };
        Ok(vec![Token::new(id, value.to_owned(), (0, word.len()))])
    }
    vocabulary_lookups!();
    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        super::files::save(self, folder, prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tokens: &[&str], unk: &str) -> WordLevel {
        let vocab = tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        WordLevel::builder().vocab(vocab).unk_token(unk.into()).build().unwrap()
    }

    fn tokens(m: &WordLevel, word: &str) -> Vec<(u32, String, (usize, usize))> {
        m.tokenize(word).unwrap().into_iter().map(|t| (t.id, t.value, t.offsets)).collect()
    }

    #[test]
    fn whole_words_or_unk() {
        let m = model(&["<unk>", "héllo", "a"], "<unk>");
        assert_eq!(tokens(&m, "héllo"), vec![(1, "héllo".to_string(), (0, 6))]);
        assert_eq!(tokens(&m, "hello"), vec![(0, "<unk>".to_string(), (0, 5))]);
        assert_eq!(tokens(&m, ""), vec![(0, "<unk>".to_string(), (0, 0))]);
        let mut ids = vec![];
        m.tokenize_with("a", |id, offsets| ids.push((id, offsets))).unwrap();
        assert_eq!(ids, vec![(2, (0, 1))]);
    }

    #[test]
    fn missing_unk_is_an_error_only_when_needed() {
        let m = model(&["a", "b"], "<unk>");
        assert_eq!(tokens(&m, "b").len(), 1);
        let err = m.tokenize("c").unwrap_err().to_string();
        assert!(
            err.starts_with("WordLevel error: Missing [UNK] token from the vocabulary"),
            "{err}"
        );
        assert!(err.contains("\"c\"") && err.contains("<unk>"), "{err}");
    }

    #[test]
    fn default_and_lookups() {
        assert_eq!(WordLevel::default(), WordLevel::builder().build().unwrap());
        assert_eq!(WordLevel::default().unk_token, DEFAULT_UNK_TOKEN);
        let m = model(&["x", "y"], "x");
        assert_eq!(
            (m.token_to_id("y"), m.id_to_token(0), m.id_to_token(5)),
            (Some(1), Some("x".into()), None)
        );
        assert_eq!(m.get_vocab_size(), 2);
    }
}
