//! The WordPiece model: vocabulary, unknown token, continuing-subword prefix, word length limit.
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use educe::Educe;

use super::trie::{Automaton, Pop};
use crate::error::{Error, Result};
use crate::models::bpe::BPE;
use crate::models::bpe::DEFAULT_CACHE_CAPACITY;
use crate::tokenizer::{Model, Token, TokenSink};
use crate::utils::macros::setters;
use crate::utils::tokens_by_id::TokensById;
use crate::utils::vocabulary::{vocabulary_lookups, Vocabulary};
use crate::utils::word_cache::{self, new_cache_id};

/// token → id
pub type Vocab = HashMap<String, u32>;

pub const DEFAULT_UNK_TOKEN: &str = "[UNK]";
pub const DEFAULT_CONTINUING_SUBWORD_PREFIX: &str = "##";
pub const DEFAULT_MAX_INPUT_CHARS_PER_WORD: usize = 100;

thread_local! {
    /// Scratch space for one word's tokens (taken out while in use, so re-entry is harmless).
    static SCRATCH: Cell<Vec<Pop>> = const { Cell::new(Vec::new()) };
}

/// Builds a [`WordPiece`] (the options of `tokenizers`' `WordPieceBuilder`).
#[derive(Debug, Clone, Educe)]
#[educe(Default)]
pub struct WordPieceBuilder {
    vocab: Vocab,
    file: Option<PathBuf>,
    #[educe(Default = DEFAULT_UNK_TOKEN.to_owned())]
    unk_token: String,
    #[educe(Default = DEFAULT_CONTINUING_SUBWORD_PREFIX.to_owned())]
    continuing_subword_prefix: String,
    #[educe(Default = DEFAULT_MAX_INPUT_CHARS_PER_WORD)]
    max_input_chars_per_word: usize,
}

impl WordPieceBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    setters! {
        vocab: Vocab;
        unk_token: String;
        continuing_subword_prefix: String;
        max_input_chars_per_word: usize;
        /// Reads the vocabulary from a `vocab.txt` file at `build` (see
        /// [`super::files::read_file`]); the unknown token must then be in it.
        file: Some(PathBuf);
    }

    pub fn build(self) -> Result<WordPiece> {
        let vocab = match &self.file {
            Some(path) => {
                let vocab = super::files::read_file(path)?;
                if !vocab.contains_key(&self.unk_token) {
                    return Err(Error::Format {
                        path: Some(path.clone()),
                        line: None,
                        byte_offset: None,
                        message: format!(
                            "the unk token {:?} is not in the vocabulary",
                            self.unk_token
                        ),
                    });
                }
                vocab
            }
            None => self.vocab,
        };
        Ok(WordPiece::assemble(
            vocab,
            self.unk_token,
            self.continuing_subword_prefix,
            self.max_input_chars_per_word,
        ))
    }
}

/// A WordPiece model: each word becomes the longest vocabulary token it starts with, then the
/// longest continuation token (`##…`) the rest starts with, and so on (greedy longest match
/// first, as BERT and `tokenizers`). A word longer than `max_input_chars_per_word` characters,
/// or with any part that no token matches, becomes the single unknown token.
///
/// Matching runs on a precompiled automaton (see `trie`), in time linear in the word length.
/// The tokens of the words matched are cached, for all threads (see `utils::word_cache`; at
/// most `DEFAULT_CACHE_CAPACITY` words): a cached word costs one lookup instead of a walk
/// of the automaton. Only matched words are cached, so the cache depends on nothing but the
/// vocabulary and the prefix (the unk token and the length limit are applied before it).
///
/// Equal vocabularies and options make equal models.
#[derive(Clone, Educe)]
#[educe(PartialEq, Debug)]
pub struct WordPiece {
    vocab: Vocabulary,
    pub unk_token: String,
    continuing_subword_prefix: String,
    pub max_input_chars_per_word: usize,
    #[educe(PartialEq(ignore), Debug(ignore))]
    automaton: Automaton,
    /// This vocabulary and prefix's word cache (a clone shares it: same answers).
    #[educe(PartialEq(ignore), Debug(ignore))]
    cache_id: u64,
}

impl WordPiece {
    pub fn builder() -> WordPieceBuilder {
        WordPieceBuilder::new()
    }

    /// A model reading `vocab.txt` (`tokenizers`' `WordPiece::from_file`), default options.
    pub fn from_file(path: impl Into<PathBuf>) -> WordPieceBuilder {
        WordPieceBuilder::new().file(path)
    }

    pub(crate) fn assemble(
        vocab: Vocab,
        unk_token: String,
        prefix: String,
        max_input_chars_per_word: usize,
    ) -> Self {
        let vocab = Vocabulary::new(vocab);
        let automaton = Automaton::new(vocab.iter(), &prefix);
        WordPiece {
            vocab,
            unk_token,
            continuing_subword_prefix: prefix,
            max_input_chars_per_word,
            automaton,
            cache_id: new_cache_id(),
        }
    }

    /// A WordPiece model with `bpe`'s vocabulary, and its unk token and continuing-subword
    /// prefix where it has them (`tokenizers`' `WordPiece::from_bpe`).
    pub fn from_bpe(bpe: &BPE) -> Self {
        WordPiece::assemble(
            bpe.get_vocab(),
            bpe.unk_token.clone().unwrap_or_else(|| DEFAULT_UNK_TOKEN.into()),
            bpe.continuing_subword_prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_CONTINUING_SUBWORD_PREFIX.into()),
            DEFAULT_MAX_INPUT_CHARS_PER_WORD,
        )
    }

    pub fn continuing_subword_prefix(&self) -> &str {
        &self.continuing_subword_prefix
    }

    /// Changes the prefix (and recompiles the matcher).
    pub fn set_continuing_subword_prefix(&mut self, prefix: String) {
        if prefix != self.continuing_subword_prefix {
            self.automaton = Automaton::new(self.vocab.iter(), &prefix);
            self.continuing_subword_prefix = prefix;
            self.cache_id = new_cache_id();
        }
    }

    /// Replaces the vocabulary, keeping the options (what training does).
    pub fn set_vocab(&mut self, vocab: Vocab) {
        *self = WordPiece::assemble(
            vocab,
            std::mem::take(&mut self.unk_token),
            std::mem::take(&mut self.continuing_subword_prefix),
            self.max_input_chars_per_word,
        );
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

    fn unk_id(&self, word: &str) -> Result<u32> {
        self.vocab.id(&self.unk_token).ok_or_else(|| {
            let shown: String = word.chars().take(40).collect();
            let more = if shown.len() < word.len() { "…" } else { "" };
            Error::InvalidArgument(format!(
                "WordPiece: the word {shown:?}{more} needs the unk token {:?}, which is not in \
                    the vocabulary",
                self.unk_token
            ))
        })
    }

    fn too_long(&self, word: &str) -> bool {
        // A word of at most `max` bytes has at most `max` chars: no need to count them.
        word.len() > self.max_input_chars_per_word
            && word.chars().count() > self.max_input_chars_per_word
    }

    /// Calls `emit(id, (start, end))` for each token of `word` (byte offsets within `word`).
    /// The allocation-free core of `tokenize` and the ids-only paths.
    pub fn tokenize_with(&self, word: &str, mut emit: impl TokenSink) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        if self.too_long(word) {
            emit(self.unk_id(word)?, (0, word.len()));
            return Ok(());
        }
        let mut start = 0;
        let cached = word_cache::replay(self.cache_id, word.as_bytes(), |id, len| {
            emit(id, (start, start + len));
            start += len;
        });
        if cached {
            return Ok(());
        }
        let mut pops = SCRATCH.take();
        pops.clear();
        let matched = self.automaton.tokenize(word.as_bytes(), &mut pops);
        let result = if matched {
            let mut start = 0;
            for pop in &pops {
                let end = start + pop.len as usize;
                emit(pop.id, (start, end));
                start = end;
            }
            word_cache::store_with(
                self.cache_id,
                DEFAULT_CACHE_CAPACITY,
                word.as_bytes(),
                pops.iter().map(|p| (p.id, p.len)),
            );
            Ok(())
        } else {
            self.unk_id(word).map(|id| emit(id, (0, word.len())))
        };
        SCRATCH.set(pops);
        result
    }

    /// Appends the ids of `word`'s tokens to `ids`.
    pub fn tokenize_ids_into(&self, word: &str, ids: &mut Vec<u32>) -> Result<()> {
        self.tokenize_with(word, |id, _| ids.push(id))
    }

    fn token_of(&self, id: u32) -> String {
        self.vocab.token(id).unwrap_or_default().to_owned()
    }
}

impl Default for WordPiece {
    fn default() -> Self {
        WordPieceBuilder::new().build().unwrap_or_else(|_| unreachable!("no file to read"))
    }
}

impl Model for WordPiece {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        let mut tokens = Vec::with_capacity(4);
        self.tokenize_with(sequence, |id, offsets| {
            tokens.push(Token::new(id, self.token_of(id), offsets))
        })?;
        Ok(tokens)
    }
    vocabulary_lookups!();
    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        super::files::save(self, folder, prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::bpe::BpeOptions;

    fn model(tokens: &[&str]) -> WordPiece {
        let vocab = tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        WordPiece::builder().vocab(vocab).build().unwrap()
    }

    fn tokens(wp: &WordPiece, word: &str) -> Vec<(String, (usize, usize))> {
        wp.tokenize(word).unwrap().into_iter().map(|t| (t.value, t.offsets)).collect()
    }

    fn owned(list: &[(&str, (usize, usize))]) -> Vec<(String, (usize, usize))> {
        list.iter().map(|(v, o)| (v.to_string(), *o)).collect()
    }

    #[test]
    fn greedy_longest_match_first_with_offsets() {
        let wp = model(&["[UNK]", "un", "##aff", "##able", "una", "##ff", "é", "##é"]);
        // "una" is the longest token the word starts with, even though "un" + "##aff" would fit.
        assert_eq!(
            tokens(&wp, "unaffable"),
            owned(&[("una", (0, 3)), ("##ff", (3, 5)), ("##able", (5, 9))])
        );
        assert_eq!(tokens(&wp, "unff"), owned(&[("un", (0, 2)), ("##ff", (2, 4))]));
        assert_eq!(tokens(&wp, "ééé"), owned(&[("é", (0, 2)), ("##é", (2, 4)), ("##é", (4, 6))]));
        // No token for "##x": the whole word is unknown.
        assert_eq!(tokens(&wp, "unx"), owned(&[("[UNK]", (0, 3))]));
        assert!(wp.tokenize("").unwrap().is_empty());
    }

    #[test]
    fn max_input_chars_counts_characters() {
        let mut wp = model(&["[UNK]", "é", "##é"]);
        wp.max_input_chars_per_word = 3;
        assert_eq!(tokens(&wp, "ééé").len(), 3, "6 bytes but 3 chars");
        assert_eq!(tokens(&wp, "éééé"), owned(&[("[UNK]", (0, 8))]));
    }

    #[test]
    fn missing_unk_is_an_error_only_when_needed() {
        let wp = model(&["a", "##b"]);
        assert_eq!(tokens(&wp, "ab").len(), 2);
        let err = wp.tokenize("ac").unwrap_err().to_string();
        assert!(err.contains("[UNK]") && err.contains("\"ac\""), "{err}");
    }

    #[test]
    fn prefix_can_change() {
        let mut wp = model(&["[UNK]", "a", "@@b", "##b"]);
        assert_eq!(tokens(&wp, "ab"), owned(&[("a", (0, 1)), ("##b", (1, 2))]));
        wp.set_continuing_subword_prefix("@@".into());
        assert_eq!(tokens(&wp, "ab"), owned(&[("a", (0, 1)), ("@@b", (1, 2))]));
    }

    #[test]
    fn from_bpe_keeps_vocab_unk_and_prefix() {
        let vocab: Vocab =
            [("<unk>", 0), ("a", 1), ("@@b", 2)].iter().map(|&(t, i)| (t.to_string(), i)).collect();
        let options = BpeOptions {
            unk_token: Some("<unk>".into()),
            continuing_subword_prefix: Some("@@".into()),
            ..Default::default()
        };
        let bpe = BPE::from_trained(vocab.clone(), vec![], options).unwrap();
        let wp = WordPiece::from_bpe(&bpe);
        assert_eq!(wp.get_vocab(), vocab);
        assert_eq!(wp.unk_token, "<unk>");
        assert_eq!(wp.continuing_subword_prefix(), "@@");
        assert_eq!(tokens(&wp, "ab"), owned(&[("a", (0, 1)), ("@@b", (1, 2))]));
    }
}
