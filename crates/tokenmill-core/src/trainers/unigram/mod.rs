//! Unigram training: one engine ([`train_pieces`]) with two sets of rules ([`Flavor`]), the
//! ones of SentencePiece (unigram_model_trainer.cc, trainer_interface.cc) and the ones of
//! `tokenizers` (models/unigram/trainer.rs, itself a port of SentencePiece's with differences).
//! The steps:
//! 1. required characters: the most frequent characters covering `character_coverage` of the
//!    corpus (all of them at 1.0) plus `initial_alphabet`; with sentencepiece's rules, rarer
//!    characters become U+2585 (▅, sentencepiece's unknown character), which no piece may
//!    contain;
//! 2. seed pieces: every character plus the most frequent substrings (suffix array, [`seeds`]);
//! 3. EM ([`em`]): `n_sub_iterations` E/M steps, then pruning by likelihood loss down to
//!    `shrinking_factor` × size, until at most 1.1 × `vocab_size` pieces remain;
//! 4. the final vocabulary: the required characters and the best pieces, `vocab_size` minus the
//!    meta/special pieces in all.
//!
//! Where `tokenizers` differs from SentencePiece ([`Flavor::Tokenizers`], used by
//! `trainers.UnigramTrainer`):
//! * every character of the corpus is required (no coverage, ▅ and NUL are ordinary characters;
//!   NUL never enters a piece) and the alphabet may not outnumber `vocab_size`;
//! * seeds: a substring counts once per distinct word (not per occurrence in the running text),
//!   sentence ends are one shared boundary symbol, characters tie by code point descending and
//!   substrings by text descending, and `seed_size` counts the characters too;
//! * the EM loop counts the trainer's own `<UNK>` piece among the pieces, pruning keeps
//!   characters that no Viterbi path uses and pieces used in a Viterbi path even when they are
//!   not their own best segmentation, its loss normalizes with the number of *pieces* where
//!   SentencePiece uses the length of the alternative segmentation, and its unknown piece's
//!   Viterbi frequency counts in the total;
//! * the final pieces are taken in training order (kept pieces, then pruning candidates by
//!   loss), not by score, then sorted by score (stable).
//!
//! [`train_pieces`] is the engine (sentences with counts in, `(piece, score)` out) shared by
//! `trainers.UnigramTrainer` ([`UnigramTrainer`]) and `SentencePieceTrainer`, which configures
//! it with [`UnigramConfig`] (sentencepiece's options) and [`PieceRules`].
//!
//! Determinism: sentences and words are processed in a fixed order (count descending, then
//! text), parallel sums are split into a fixed number of parts and added in order, and every
//! sort breaks ties by a fixed rule — the same corpus and options give the same vocabulary on
//! any number of threads. (`tokenizers` itself sums expected counts in hash-map order split by
//! the number of threads, so its scores vary in the last bits from run to run, and it orders its
//! required characters by hash: equal-scored characters, and the scores it gives characters the
//! model lost, vary from run to run. Here those characters go by code point.)
//!
//! May import `models::unigram` (the lattice it trains on), `trainers`' shared parts, `utils` and
//! `error`.
pub(crate) mod em;
pub(crate) mod pieces;
pub(crate) mod seeds;

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::progress::Progress;
use super::spill::{Budget, CountTable};
use super::word_counts::count_words_within;
use super::AddedToken;
use crate::error::{Error, Result};
use crate::models::unigram::Unigram;
use pieces::PieceIndex;

/// sentencepiece's unknown character: replaces characters outside the coverage.
pub const UNK_CHAR: char = '\u{2585}';
/// sentencepiece's whitespace marker.
pub const WHITESPACE: char = '\u{2581}';

/// Which substrings may become pieces, beyond the length limit: sentencepiece's
/// `IsValidSentencePiece` rules. `None` in [`UnigramConfig::rules`] means only the length (and
/// the unknown character) is checked, as `tokenizers` does.
#[derive(Debug, Clone, PartialEq)]
pub struct PieceRules {
    pub split_by_whitespace: bool,
    pub treat_whitespace_as_suffix: bool,
    pub allow_whitespace_only_pieces: bool,
    pub split_by_unicode_script: bool,
    pub split_by_number: bool,
    pub split_digits: bool,
}

impl Default for PieceRules {
    /// sentencepiece's defaults.
    fn default() -> Self {
        PieceRules {
            split_by_whitespace: true,
            treat_whitespace_as_suffix: false,
            allow_whitespace_only_pieces: false,
            split_by_unicode_script: true,
            split_by_number: true,
            split_digits: false,
        }
    }
}

/// Whose rules [`train_pieces`] follows where SentencePiece and `tokenizers` differ (see the
/// module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    #[default]
    SentencePiece,
    Tokenizers,
}

/// Options of [`train_pieces`].
#[derive(Debug, Clone, PartialEq)]
pub struct UnigramConfig {
    pub flavor: Flavor,
    /// Size of the whole vocabulary, meta pieces included.
    pub vocab_size: usize,
    /// Pieces the caller adds itself (special tokens, `<unk>`, `<s>`, ...): the trainer returns
    /// `vocab_size - num_meta_pieces` pieces at most.
    pub num_meta_pieces: usize,
    pub n_sub_iterations: usize,
    pub shrinking_factor: f64,
    /// In characters.
    pub max_piece_length: usize,
    /// Number of seed substrings (besides the characters).
    pub seed_size: usize,
    /// Share of the corpus's characters that must be in the vocabulary (1.0: all).
    pub character_coverage: f64,
    /// Characters always in the vocabulary.
    pub initial_alphabet: BTreeSet<char>,
    pub rules: Option<PieceRules>,
    pub show_progress: bool,
}

impl Default for UnigramConfig {
    fn default() -> Self {
        UnigramConfig {
            flavor: Flavor::SentencePiece,
            vocab_size: 8000,
            num_meta_pieces: 0,
            n_sub_iterations: 2,
            shrinking_factor: 0.75,
            max_piece_length: 16,
            seed_size: 1_000_000,
            character_coverage: 1.0,
            initial_alphabet: BTreeSet::new(),
            rules: None,
            show_progress: false,
        }
    }
}

/// What [`train_pieces`] learned.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainedPieces {
    /// The pieces with their log-probabilities, best first.
    pub pieces: Vec<(String, f64)>,
    /// The required characters with their counts.
    pub required_chars: Vec<(char, u64)>,
    /// Corpus log-likelihood (Σ count × log P(word)) at the last E-step.
    pub log_likelihood: f64,
}

impl UnigramConfig {
    /// Whether `piece` may be a piece (see [`PieceRules`]).
    pub fn is_valid_piece(&self, piece: &str) -> bool {
        let n = piece.chars().count();
        if n == 0
            || n > self.max_piece_length
            || (self.flavor == Flavor::SentencePiece && piece.contains(UNK_CHAR))
        {
            return false;
        }
        match &self.rules {
            None => true,
            Some(rules) => rules.is_valid(piece),
        }
    }
}

impl PieceRules {
    fn is_valid(&self, piece: &str) -> bool {
        use unicode_script::{Script, UnicodeScript};
        let chars: Vec<char> = piece.chars().collect();
        let all_whitespace = chars.iter().all(|&c| c == WHITESPACE);
        let mut prev: Option<Script> = None; // None: any script
        let last = chars.len() - 1;
        for (pos, &c) in chars.iter().enumerate() {
            // NUL cannot be in sentencepiece's trie; space and tab (its "UPP boundary") never
            // appear in normalized pieces.
            if c == '\0' || c == ' ' || c == '\t' {
                return false;
            }
            if c == WHITESPACE {
                if !self.allow_whitespace_only_pieces || !all_whitespace {
                    // Split by whitespace: ▁ only at the piece's edge; otherwise, not at the
                    // opposite edge of a longer piece.
                    let bad = if self.treat_whitespace_as_suffix {
                        pos < last && (self.split_by_whitespace || pos == 0)
                    } else {
                        pos > 0 && (self.split_by_whitespace || pos == last)
                    };
                    if bad {
                        return false;
                    }
                }
                continue;
            }
            let mut script = Some(c.script());
            if matches!(script, Some(Script::Hiragana | Script::Katakana)) || c == '\u{30FC}' {
                script = Some(Script::Han);
            } else if script == Some(Script::Inherited) {
                script = prev;
            }
            let is_digit = c.is_ascii_digit() || ('\u{FF10}'..='\u{FF19}').contains(&c);
            if !self.split_by_number && is_digit {
                script = None;
            }
            if self.split_digits && is_digit && chars.len() > 1 {
                return false;
            }
            if self.split_by_unicode_script && script.is_some() && prev.is_some() && prev != script
            {
                return false;
            }
            prev = script;
        }
        true
    }
}

/// The required characters (see the module docs), sorted by count then code point.
fn required_chars(sentences: &[(String, u64)], config: &UnigramConfig) -> Vec<(char, u64)> {
    let tokenizers = config.flavor == Flavor::Tokenizers;
    let mut counts: FxHashMap<char, u64> = FxHashMap::default();
    for (s, n) in sentences {
        for c in s.chars() {
            if tokenizers || (c != '\0' && c != UNK_CHAR) {
                *counts.entry(c).or_insert(0) += n;
            }
        }
    }
    let total: u64 = counts.values().sum();
    let mut sorted: Vec<(char, u64)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut required = vec![];
    let mut accumulated = 0u64;
    for (c, n) in sorted {
        if config.character_coverage < 1.0
            && total > 0
            && accumulated as f64 / total as f64 >= config.character_coverage
        {
            break;
        }
        accumulated += n;
        required.push((c, n));
    }
    for &c in &config.initial_alphabet {
        if !required.iter().any(|r| r.0 == c) {
            required.push((c, 0));
        }
    }
    required
}

/// Replaces the characters that are not required by [`UNK_CHAR`] (only when some are not).
fn mask_rare_chars(sentences: Vec<(String, u64)>, required: &[(char, u64)]) -> Vec<(String, u64)> {
    let keep: rustc_hash::FxHashSet<char> = required.iter().map(|r| r.0).collect();
    let all_kept =
        sentences.iter().all(|(s, _)| s.chars().all(|c| keep.contains(&c) || c == UNK_CHAR));
    if all_kept {
        return sentences;
    }
    sentences
        .into_iter()
        .map(|(s, n)| {
            (s.chars().map(|c| if keep.contains(&c) { c } else { UNK_CHAR }).collect(), n)
        })
        .collect()
}

/// Trains Unigram pieces on words with counts: they seed the pieces (suffix array) and EM runs
/// on them. Callers split their text into words first: a piece never crosses a word, so the
/// seeds' frequencies are those of the running text (see [`seeds`]).
pub fn train_pieces(config: &UnigramConfig, words: Vec<(String, u64)>) -> Result<TrainedPieces> {
    let mut sentences: Vec<(String, u64)> =
        words.into_iter().filter(|s| !s.0.is_empty() && s.1 > 0).collect();
    if sentences.is_empty() {
        if config.flavor == Flavor::Tokenizers {
            // `tokenizers` trains an empty vocabulary (its unk token and special tokens only).
            return Ok(TrainedPieces {
                pieces: vec![],
                required_chars: vec![],
                log_likelihood: 0.0,
            });
        }
        return Err(Error::InvalidArgument("Unigram training: the corpus is empty".into()));
    }
    if !(config.shrinking_factor > 0.0 && config.shrinking_factor < 1.0) {
        return Err(Error::InvalidArgument(format!(
            "Unigram training: shrinking_factor must be in (0, 1), got {}",
            config.shrinking_factor
        )));
    }
    if config.max_piece_length == 0 {
        return Err(Error::InvalidArgument(
            "Unigram training: max_piece_length must be at least 1".into(),
        ));
    }
    check_memory(&sentences)?;
    seeds::sort_by_count(&mut sentences);
    let required = required_chars(&sentences, config);
    let size = config.vocab_size.saturating_sub(config.num_meta_pieces);
    let tokenizers = config.flavor == Flavor::Tokenizers;
    if tokenizers && required.len() > config.vocab_size {
        // `tokenizers`' check (against the whole size) and message.
        return Err(Error::InvalidArgument(
            "The vocabulary is not large enough to contain all chars".into(),
        ));
    }
    if !tokenizers && (required.len() > size || size == 0) {
        return Err(Error::InvalidArgument(format!(
            "Unigram training: the vocabulary is too small for the alphabet: vocab_size {} holds \
                {} pieces besides {} special/meta pieces, but the corpus needs {} characters",
            config.vocab_size,
            size,
            config.num_meta_pieces,
            required.len()
        )));
    }
    let sentences = if tokenizers { sentences } else { mask_rare_chars(sentences, &required) };

    let progress =
        Progress::new(config.show_progress, sentences.len() as u64, "Suffix array seeds");
    let is_valid = |p: &str| config.is_valid_piece(p);
    let pieces = seeds::seed_pieces(
        &sentences,
        config.flavor,
        config.seed_size,
        config.max_piece_length,
        &is_valid,
    );
    progress.finish();

    // Masking rare characters can make two words equal; EM sums their counts.
    let words = if tokenizers { sentences } else { merge_equal_words(sentences) };

    let desired = config.vocab_size * 11 / 10;
    // `tokenizers` counts its training `<UNK>` piece among the pieces.
    let extra = usize::from(tokenizers);
    let expected_rounds =
        ((desired as f64).ln() - (pieces.len().max(1) as f64).ln()) / config.shrinking_factor.ln();
    let steps = (expected_rounds.max(0.0) as u64 + 1) * config.n_sub_iterations as u64;
    let progress = Progress::new(config.show_progress, steps, "EM training");
    let mut index = PieceIndex::new(pieces)?;
    let mut log_likelihood = 0.0;
    loop {
        for _ in 0..config.n_sub_iterations {
            let (expected, ll) = em::e_step(&index, &words, config.flavor)?;
            log_likelihood = ll;
            em::m_step(&mut index, &expected);
            progress.inc(1);
        }
        let live = index.num_alive();
        if live + extra <= desired {
            break;
        }
        let pruned = em::prune(&index, &words, config, desired)?;
        if pruned.len() >= live {
            // Nothing left to prune (tiny corpora; `tokenizers` would loop for ever).
            break;
        }
        // The next round's trie is built over the survivors only.
        drop(index);
        index = PieceIndex::new(pruned)?;
    }
    progress.finish();
    let live: Vec<usize> = (0..index.pieces.len()).filter(|&i| index.alive[i]).collect();
    let pieces = index.pieces.select(live, |i| index.pieces.scores[i]);
    let pieces = match config.flavor {
        Flavor::SentencePiece => em::finalize(&pieces, &required, size),
        Flavor::Tokenizers => em::finalize_tokenizers(&pieces, &required, size),
    };
    Ok(TrainedPieces { pieces, required_chars: required, log_likelihood })
}

/// The least memory training takes per byte of its text (the suffix array of the seeds).
const MEMORY_PER_TEXT_BYTE: usize = 12;
/// The least memory training takes per byte of its longest word (the EM tables: 16–24 bytes a
/// character).
const MEMORY_PER_WORD_BYTE: usize = 24;

/// Checks that the memory training takes can be had before anything is built (an error naming
/// the size of the input, where a refused allocation would abort).
fn check_memory(words: &[(String, u64)]) -> Result<()> {
    let words = words.iter().map(|w| w.0.as_str());
    super::check_words_memory("Unigram", words, 0, &memory_limits(u64::MAX))
}

/// The resident memory training takes per byte of its words: the suffix array of the seeds (12
/// a byte) and the words' own copy (a `String` and a count each).
const RESIDENT_PER_TEXT_BYTE: usize = 24;

fn memory_limits(budget: u64) -> super::MemoryLimits {
    super::MemoryLimits {
        per_text_byte: MEMORY_PER_TEXT_BYTE,
        per_word_byte: MEMORY_PER_WORD_BYTE,
        resident_per_text_byte: RESIDENT_PER_TEXT_BYTE,
        budget,
    }
}

/// Words with counts, equal words merged, in a fixed order (count descending, then text).
fn merge_equal_words(words: Vec<(String, u64)>) -> Vec<(String, u64)> {
    let mut counts: FxHashMap<String, u64> = FxHashMap::default();
    counts.reserve(words.len());
    for (w, n) in words {
        *counts.entry(w).or_insert(0) += n;
    }
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    seeds::sort_by_count(&mut words);
    words
}

/// `tokenizers.trainers.UnigramTrainer`: the same options and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UnigramTrainer {
    pub show_progress: bool,
    pub vocab_size: u32,
    pub n_sub_iterations: u32,
    pub shrinking_factor: f64,
    pub special_tokens: Vec<AddedToken>,
    pub initial_alphabet: BTreeSet<char>,
    pub unk_token: Option<String>,
    pub max_piece_length: usize,
    pub seed_size: usize,
    /// The word counts gathered by `feed`.
    pub words: CountTable,
    /// Memory budget of counting and training, in bytes (None:
    /// [`super::spill::default_max_memory`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<u64>,
    /// Folder where counting spills sorted runs (None: the system's temporary folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_dir: Option<std::path::PathBuf>,
}

impl Default for UnigramTrainer {
    fn default() -> Self {
        UnigramTrainer {
            show_progress: true,
            vocab_size: 8000,
            n_sub_iterations: 2,
            shrinking_factor: 0.75,
            special_tokens: vec![],
            initial_alphabet: BTreeSet::new(),
            unk_token: None,
            max_piece_length: 16,
            seed_size: 1_000_000,
            words: CountTable::default(),
            max_memory: None,
            spill_dir: None,
        }
    }
}

impl UnigramTrainer {
    /// Counts the words of `sequences`, replacing earlier counts (see `word_counts`).
    pub fn feed_with<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send,
        F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
    {
        let progress = Progress::new(self.show_progress, 0, "Pre-processing sequences");
        self.words = count_words_within(sequences, process, |n| progress.inc(n), &self.budget())?;
        progress.finish();
        Ok(())
    }

    /// The memory budget of counting and training.
    pub fn budget(&self) -> Budget {
        Budget::new(self.max_memory, self.spill_dir.clone())
    }

    /// The unk token's id and whether it must be added in front (as `tokenizers`: the unk token
    /// is a special token's id when it is one, else a new id 0).
    fn unk_placement(&self) -> (Option<usize>, bool) {
        match &self.unk_token {
            None => (None, false),
            Some(unk) => match self.special_tokens.iter().position(|t| t.content == *unk) {
                Some(id) => (Some(id), false),
                None => (Some(0), true),
            },
        }
    }

    /// Trains on the fed words with `tokenizers`' rules ([`Flavor::Tokenizers`]); returns the
    /// model: the unk token when it is not a special token, the special tokens, then the pieces
    /// (`vocab_size` entries in all unless the alphabet alone needs more). As `tokenizers`, the
    /// special tokens are not checked against the pieces: one that is also a learned piece is
    /// in the vocabulary twice (its text maps to the later id).
    pub fn train_model(&self, byte_fallback: bool) -> Result<Unigram> {
        let (unk_id, add_unk) = self.unk_placement();
        let mut specials: Vec<(String, f64)> = vec![];
        if add_unk {
            specials.push((self.unk_token.clone().unwrap_or_default(), 0.0));
        }
        specials.extend(self.special_tokens.iter().map(|t| (t.content.clone(), 0.0)));
        let config = UnigramConfig {
            flavor: Flavor::Tokenizers,
            vocab_size: self.vocab_size as usize,
            num_meta_pieces: specials.len(),
            n_sub_iterations: self.n_sub_iterations as usize,
            shrinking_factor: self.shrinking_factor,
            max_piece_length: self.max_piece_length,
            seed_size: self.seed_size,
            character_coverage: 1.0,
            initial_alphabet: self.initial_alphabet.clone(),
            rules: None,
            show_progress: self.show_progress,
        };
        let limits = memory_limits(self.budget().max_memory);
        let table = self.words.heap_bytes();
        super::check_words_memory("Unigram", self.words.words(), table, &limits)?;
        let sentences: Vec<(String, u64)> =
            self.words.iter().map(|(w, n)| (w.to_owned(), n)).collect();
        let trained = train_pieces(&config, sentences)?;
        let vocab: Vec<(String, f64)> = specials.into_iter().chain(trained.pieces).collect();
        Unigram::from(vocab, unk_id, byte_fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Model;

    #[test]
    fn trains_a_small_vocabulary_deterministically() {
        let text = "the quick brown fox jumps over the lazy dog and the quick cat sleeps under \
            the warm sun while the dog barks";
        let mut trainer = UnigramTrainer {
            vocab_size: 40,
            show_progress: false,
            unk_token: Some("<unk>".into()),
            ..Default::default()
        };
        trainer
            .feed_with((0..50).map(|_| Ok(text)), |s, emit| {
                s.split(' ').for_each(emit);
                Ok(())
            })
            .unwrap();
        let a = trainer.train_model(false).unwrap();
        let b = trainer.train_model(false).unwrap();
        assert_eq!(a, b);
        assert!(a.get_vocab_size() <= 40 && a.get_vocab_size() > 20);
        assert_eq!(a.id_to_token(0).as_deref(), Some("<unk>"));
        // As `tokenizers` (each distinct word counts once in the seeds): 31 entries, no "the".
        assert_eq!(a.get_vocab_size(), 31);
        assert!(text
            .chars()
            .filter(|&c| c != ' ')
            .all(|c| a.token_to_id(&c.to_string()).is_some()));
        assert!(!a.tokenize("the").unwrap().is_empty());
    }

    #[test]
    fn vocabulary_too_small_is_an_error() {
        let mut trainer =
            UnigramTrainer { vocab_size: 3, show_progress: false, ..Default::default() };
        trainer.words = [("abcdef", 3)].into_iter().collect();
        assert!(matches!(trainer.train_model(false), Err(Error::InvalidArgument(_))));
        // As `tokenizers`: no words, an empty vocabulary (here the unk token alone).
        let empty = UnigramTrainer {
            show_progress: false,
            unk_token: Some("<unk>".into()),
            ..Default::default()
        };
        assert_eq!(empty.train_model(false).unwrap().get_vocab_size(), 1);
        let config = UnigramConfig { vocab_size: 10, ..Default::default() };
        assert!(train_pieces(&config, vec![]).is_err()); // sentencepiece's rules: an error
    }

    #[test]
    fn sentencepiece_rules() {
        let config = UnigramConfig { rules: Some(PieceRules::default()), ..Default::default() };
        assert!(config.is_valid_piece("▁the"));
        assert!(!config.is_valid_piece("the▁"));
        assert!(!config.is_valid_piece("ab1"));
        assert!(config.is_valid_piece("カタカナ漢字"));
        assert!(!config.is_valid_piece("abc漢"));
        assert!(!config.is_valid_piece("a▅"));
    }
}
