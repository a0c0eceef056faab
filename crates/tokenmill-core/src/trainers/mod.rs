//! Trainers: learn a model's vocabulary from a corpus.
//!
//! Training runs in two phases, like `tokenizers`:
//! 1. **feed** — every sequence of the corpus goes through the tokenizer's normalizer and
//!    pre-tokenizer (the `process` callback) and the resulting words are counted
//!    ([`word_counts`]: in parallel, streamed chunk by chunk, never holding the corpus whole;
//!    counts are `u64`).
//! 2. **train** — the model is learned from the word counts ([`bpe::BpeTrainer`],
//!    [`wordpiece::WordPieceTrainer`], [`wordlevel::WordLevelTrainer`],
//!    [`unigram::UnigramTrainer`]). A trainer only trains its own kind of model; another kind
//!    is an error before anything is read (`tokenizers` raises the same error after reading).
//!
//! Every trainer that learns merges (BPE, WordPiece's likelihood rule, and sentencepiece's BPE
//! in `sentencepiece::trainer`) runs the one merge loop of [`merge_loop`]: the words, the pair
//! table and the lazy max-heap are shared; a trainer is a merge rule plus its setup and output.
//!
//! [`TrainerWrapper`] is the enum the Tokenizer drives: `feed(iterator, process)` then `train`.
//!
//! # BPE: the exact rules (the same merges and vocabulary as `tokenizers`' BpeTrainer)
//! * ids go to the special tokens first (in the given order, duplicates once), then to the
//!   alphabet in code-point order, then to the continuing-subword / end-of-word forms of
//!   alphabet characters (`##a`, `a</w>`) in code-point order of their text, then to merged
//!   tokens in the order they are learned.
//! * the alphabet is every character of the corpus plus `initial_alphabet`; with
//!   `limit_alphabet = n` only the `n` most frequent characters are kept (initial-alphabet
//!   characters count as infinitely frequent; among equally frequent characters the lower code
//!   points are kept). Characters outside the alphabet are dropped from the words.
//! * at each step the pair with the highest count is merged; **ties go to the lowest pair of
//!   ids** (first id, then second id). Training stops at `vocab_size` tokens, or when the best
//!   count is below `min_frequency` (or zero).
//! * `tokenizers` gives the `##x` / `x</w>` tokens ids in hash order, so its tie-breaking there
//!   varies from run to run; tokenmill uses the code-point order above and is deterministic
//!   (the same set of tokens, the same merges wherever `tokenizers`' own result is unambiguous).
//!
//! May import the models they build (`models`), the pipeline stages that split a corpus
//! (`normalizers`, `pre_tokenizers` through `tokenizer`), `utils` (thread pool, vocabulary) and
//! `error`; no model imports a trainer.
pub(crate) mod bpe;
pub mod corpus;
pub(crate) mod direct;
mod history;
pub(crate) mod merge_loop;
pub mod progress;
pub mod spill;
pub mod unigram;
pub(crate) mod word_counts;
pub(crate) mod wordlevel;
pub(crate) mod wordpiece;

use serde::{Deserialize, Serialize};

pub use bpe::{BpeTrainResult, BpeTrainer, LearnedMerge};
pub use history::History;
pub use spill::{parse_memory, Budget, CountTable};
pub use unigram::UnigramTrainer;
pub use word_counts::WordCounts;
pub use wordlevel::WordLevelTrainer;
pub use wordpiece::{MergeScore, WordPieceAlgorithm, WordPieceTrainResult, WordPieceTrainer};

use crate::error::{Error, Result};
use crate::models::bpe::{BpeOptions, BPE};
use crate::models::{ModelWrapper, WordPiece};
pub use crate::tokenizer::AddedToken;
use crate::tokenizer::Trainer;
use crate::utils::macros::component_enum;

component_enum! {
    /// Every trainer the Tokenizer can drive. Serialized like `tokenizers` (`{"type":
    /// "BpeTrainer", ...}`) so trainers can be pickled.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type")]
    pub enum TrainerWrapper {
        BpeTrainer(BpeTrainer),
        WordPieceTrainer(WordPieceTrainer),
        WordLevelTrainer(WordLevelTrainer),
        UnigramTrainer(UnigramTrainer),
    }
}

impl TrainerWrapper {
    /// A default trainer for `model`'s kind (`tokenizers`' `model.get_trainer()`).
    pub fn for_model(model: &ModelWrapper) -> Self {
        match model {
            ModelWrapper::BPE(_) => BpeTrainer::default().into(),
            ModelWrapper::WordPiece(_) => WordPieceTrainer::default().into(),
            ModelWrapper::WordLevel(_) => WordLevelTrainer::default().into(),
            ModelWrapper::Unigram(_) => UnigramTrainer::default().into(),
        }
    }

    /// The trainer's name and the kind of model it trains ("BpeTrainer", "BPE").
    fn name_and_kind(&self) -> (&'static str, &'static str) {
        match self {
            TrainerWrapper::BpeTrainer(_) => ("BpeTrainer", "BPE"),
            TrainerWrapper::WordPieceTrainer(_) => ("WordPieceTrainer", "WordPiece"),
            TrainerWrapper::WordLevelTrainer(_) => ("WordLevelTrainer", "WordLevel"),
            TrainerWrapper::UnigramTrainer(_) => ("UnigramTrainer", "Unigram"),
        }
    }

    /// The error for a model of another kind: `tokenizers`' message ("UnigramTrainer can only
    /// train a Unigram"), then the model's kind.
    fn mismatch(&self, model_kind: &str) -> Error {
        let (name, kind) = self.name_and_kind();
        Error::InvalidArgument(format!(
            "{name} can only train a {kind} model, not a {model_kind} model"
        ))
    }

    /// Fails unless this trainer trains `model`'s kind of model.
    pub fn check_model(&self, model: &ModelWrapper) -> Result<()> {
        if model.kind() == self.name_and_kind().1 {
            return Ok(());
        }
        Err(self.mismatch(model.kind()))
    }

    pub fn should_show_progress(&self) -> bool {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.show_progress,
            TrainerWrapper::WordPieceTrainer(t) => t.bpe_trainer.show_progress,
            TrainerWrapper::WordLevelTrainer(t) => t.show_progress,
            TrainerWrapper::UnigramTrainer(t) => t.show_progress,
        }
    }

    /// Counts the words of `sequences` (each cut into words by `process`), replacing earlier
    /// counts.
    pub fn feed<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send,
        F: Fn(&str) -> Result<Vec<String>> + Sync,
    {
        self.feed_with(sequences.map(Ok), word_counts::emit_words(process))
    }

    /// Like [`feed`](Self::feed) with a callback that hands each word to `emit` without allocating;
    /// sequences may be errors (e.g. unreadable lines), which stop the feed.
    pub fn feed_with<I, S, F>(&mut self, sequences: I, process: F) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send,
        F: Fn(&str, &mut dyn FnMut(&str)) -> Result<()> + Sync,
    {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.feed_with(sequences, process),
            TrainerWrapper::WordPieceTrainer(t) => t.bpe_trainer.feed_with(sequences, process),
            TrainerWrapper::WordLevelTrainer(_) => {
                let budget = self.budget();
                self.set_words(word_counts::count_words_within(
                    sequences,
                    process,
                    |_| {},
                    &budget,
                )?);
                Ok(())
            }
            TrainerWrapper::UnigramTrainer(t) => t.feed_with(sequences, process),
        }
    }

    /// Feeds the words `tokenizer` would give its model for each sequence ([`count_words`]),
    /// within the trainer's memory budget. An error item stops the feed.
    pub fn feed_tokenizer<I, S>(
        &mut self,
        tokenizer: &crate::tokenizer::Tokenizer,
        sequences: I,
    ) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send,
    {
        let counts = count_words(tokenizer, sequences, &self.budget())?;
        self.set_words(counts);
        Ok(())
    }

    /// The memory budget of counting and training.
    pub fn budget(&self) -> Budget {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.budget(),
            TrainerWrapper::WordPieceTrainer(t) => t.bpe_trainer.budget(),
            TrainerWrapper::WordLevelTrainer(t) => Budget::new(t.max_memory, t.spill_dir.clone()),
            TrainerWrapper::UnigramTrainer(t) => t.budget(),
        }
    }

    /// The `max_memory` and `spill_dir` options, to read or change.
    pub fn memory_options(&mut self) -> (&mut Option<u64>, &mut Option<std::path::PathBuf>) {
        match self {
            TrainerWrapper::BpeTrainer(t) => (&mut t.max_memory, &mut t.spill_dir),
            TrainerWrapper::WordPieceTrainer(t) => {
                (&mut t.bpe_trainer.max_memory, &mut t.bpe_trainer.spill_dir)
            }
            TrainerWrapper::WordLevelTrainer(t) => (&mut t.max_memory, &mut t.spill_dir),
            TrainerWrapper::UnigramTrainer(t) => (&mut t.max_memory, &mut t.spill_dir),
        }
    }

    /// Replaces the word counts (as a feed does).
    pub fn set_words(&mut self, words: CountTable) {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.words = words,
            TrainerWrapper::WordPieceTrainer(t) => t.bpe_trainer.words = words,
            TrainerWrapper::WordLevelTrainer(t) => t.words = words,
            TrainerWrapper::UnigramTrainer(t) => t.words = words,
        }
    }

    /// Trains a BPE model's data from the fed words (and records the merge history).
    pub fn train_bpe(&self) -> Result<BpeTrainResult> {
        match self {
            TrainerWrapper::BpeTrainer(t) => t.train_and_record(),
            _ => Err(self.mismatch("BPE")),
        }
    }

    /// The special tokens the trained model needs registered in the Tokenizer.
    pub fn special_tokens(&self) -> &[AddedToken] {
        match self {
            TrainerWrapper::BpeTrainer(t) => &t.special_tokens,
            TrainerWrapper::WordPieceTrainer(t) => t.special_tokens(),
            TrainerWrapper::WordLevelTrainer(t) => &t.special_tokens,
            TrainerWrapper::UnigramTrainer(t) => &t.special_tokens,
        }
    }
}

/// The least budget the second counting table of a direct cut gets (a few runs' worth).
const MIN_COUNTING_MEMORY: u64 = 16 << 20;

/// Counts the words `tokenizer` would give its model for each sequence, within `budget`: cut
/// straight from the raw text when the pipeline allows it ([`direct::DirectWords`], much
/// faster), otherwise through the tokenizer's normalizer and pre-tokenizer (as in `tokenizers`,
/// added tokens count as words). An error item stops counting.
pub fn count_words<I, S>(
    tokenizer: &crate::tokenizer::Tokenizer,
    sequences: I,
    budget: &Budget,
) -> Result<CountTable>
where
    I: Iterator<Item = Result<S>>,
    S: AsRef<str> + Send,
{
    match direct::DirectWords::for_tokenizer(tokenizer) {
        Some(cutter) => {
            let raw = word_counts::count_words_within(
                sequences,
                |s: &str, emit: &mut dyn FnMut(&str)| cutter.split(s, emit),
                |_| {},
                budget,
            )?;
            // The raw words stay in memory while they are turned into the pipeline's words:
            // the rest of the budget is for the new table.
            let rest = budget.max_memory.saturating_sub(raw.heap_bytes() as u64);
            let rest = Budget { max_memory: rest.max(MIN_COUNTING_MEMORY), ..budget.clone() };
            cutter.finish(tokenizer, &raw, &rest)
        }
        None => word_counts::count_words_within(
            sequences,
            |s: &str, emit: &mut dyn FnMut(&str)| {
                let pre = tokenizer.normalize_and_pre_tokenize(s)?;
                pre.splits().iter().for_each(|split| emit(split.normalized.get()));
                Ok(())
            },
            |_| {},
            budget,
        ),
    }
}

/// The memory a sequence fed through `tokenizer` takes per byte at the peak: the words of the
/// byte-level direct cut (see [`direct`]), or the `NormalizedString` machinery (the BERT cut
/// runs its distinct pieces through it).
pub fn feed_bytes_per_byte(tokenizer: &crate::tokenizer::Tokenizer) -> usize {
    use crate::tokenizer::memory::{DIRECT_FEED_BYTES_PER_BYTE, PIPELINE_BYTES_PER_BYTE};
    match direct::DirectWords::for_tokenizer(tokenizer) {
        Some(direct::DirectWords::ByteLevel(_)) => DIRECT_FEED_BYTES_PER_BYTE,
        _ => PIPELINE_BYTES_PER_BYTE,
    }
}

/// What a trainer's tables take per byte of the distinct words ([`check_words_memory`]).
pub(crate) struct MemoryLimits {
    /// Address space a byte of the distinct words.
    pub per_text_byte: usize,
    /// Address space a byte of the longest word.
    pub per_word_byte: usize,
    /// Resident memory a byte of the distinct words (checked against the budget).
    pub resident_per_text_byte: usize,
    /// The memory budget in bytes.
    pub budget: u64,
}

/// Checks, before a trainer builds its tables, that the memory they take fits in the budget
/// (the counted table's `table` bytes plus `resident_per_text_byte` a byte of its words) and can
/// be had (at least `per_text_byte` bytes a byte of the distinct words and `per_word_byte` a
/// byte of the longest). An error naming the numbers, where a refused allocation would abort the
/// process.
pub(crate) fn check_words_memory<'w>(
    trainer: &str,
    words: impl ExactSizeIterator<Item = &'w str>,
    table: usize,
    limits: &MemoryLimits,
) -> Result<()> {
    let distinct = words.len();
    let (text, longest) = words
        .fold((0usize, 0usize), |(text, longest), w| (text + w.len() + 1, longest.max(w.len())));
    let resident = text.saturating_mul(limits.resident_per_text_byte);
    let in_budget = (resident.saturating_add(table)) as u64;
    if in_budget > limits.budget {
        return Err(Error::InvalidArgument(format!(
            "{trainer} training: {distinct} distinct words of {text} bytes need about \
                {in_budget} bytes ({table} for the counted words, {resident} for training's \
                tables), more than max_memory allows ({} bytes); raise max_memory",
            limits.budget
        )));
    }
    let need =
        text.saturating_mul(limits.per_text_byte).max(longest.saturating_mul(limits.per_word_byte));
    if crate::utils::can_allocate(need) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{trainer} training: {distinct} distinct words of {text} bytes (the longest {longest} \
            bytes) need about {need} bytes of memory, more than can be allocated"
    )))
}

/// The Tokenizer's training protocol: `feed` then `train(model)`.
impl Trainer for TrainerWrapper {
    type Model = ModelWrapper;

    fn should_show_progress(&self) -> bool {
        TrainerWrapper::should_show_progress(self)
    }

    fn feed<I, S, F>(&mut self, iterator: I, process: F) -> Result<()>
    where
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send,
        F: Fn(&str) -> Result<Vec<String>> + Sync,
    {
        TrainerWrapper::feed(self, iterator, process)
    }

    /// Trains and puts the learned vocabulary (and merges) into `model`, keeping the model's
    /// other options (unk token, dropout, byte fallback, ...) as `tokenizers` does. Like
    /// `tokenizers`, a trainer only trains its own kind of model (see `check_model`).
    fn train(&self, model: &mut ModelWrapper) -> Result<Vec<AddedToken>> {
        match (self, &mut *model) {
            (TrainerWrapper::BpeTrainer(_), ModelWrapper::BPE(_)) => self.train_bpe_model(model),
            (TrainerWrapper::WordPieceTrainer(t), ModelWrapper::WordPiece(wordpiece)) => {
                train_wordpiece(t, wordpiece)
            }
            (TrainerWrapper::WordLevelTrainer(t), ModelWrapper::WordLevel(wordlevel)) => {
                wordlevel.set_vocab(t.train());
                Ok(t.special_tokens.clone())
            }
            (TrainerWrapper::UnigramTrainer(t), ModelWrapper::Unigram(unigram)) => {
                // As `tokenizers` (0.23): byte_fallback ends off (it builds the result from its
                // training model, which never has it).
                *unigram = t.train_model(false)?;
                Ok(t.special_tokens.clone())
            }
            (_, other) => Err(self.mismatch(other.kind())),
        }
    }
}

/// Puts the learned vocabulary into `model` and sets its prefix (the only option training
/// changes), as `tokenizers` does: the trainer's prefix, or WordPiece's default `##` when the
/// trainer has none (`tokenizers` goes through `WordPiece::from_bpe`, which starts from `##`).
fn train_wordpiece(trainer: &WordPieceTrainer, model: &mut WordPiece) -> Result<Vec<AddedToken>> {
    let result = trainer.train_and_record()?;
    model.set_vocab(result.vocab_map());
    model.set_continuing_subword_prefix(result.continuing_subword_prefix.unwrap_or_else(|| {
        crate::models::wordpiece::DEFAULT_CONTINUING_SUBWORD_PREFIX.to_string()
    }));
    Ok(result.special_tokens)
}

impl TrainerWrapper {
    fn train_bpe_model(&self, model: &mut ModelWrapper) -> Result<Vec<AddedToken>> {
        let result = self.train_bpe()?;
        let ModelWrapper::BPE(old) = &*model else {
            return Err(Error::InvalidArgument("BpeTrainer can only train a BPE model".into()));
        };
        let options = BpeOptions {
            continuing_subword_prefix: result.continuing_subword_prefix.clone(),
            end_of_word_suffix: result.end_of_word_suffix.clone(),
            ..old.options()
        };
        let vocab = result.vocab_map();
        let special_tokens = result.special_tokens.clone();
        *model = ModelWrapper::BPE(
            BPE::from_trained(vocab, result.merges, options)
                .map_err(|e| Error::Other(format!("trained BPE model: {e}")))?,
        );
        Ok(special_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pre_tokenizers::{byte_level::ByteLevel, PreTokenizerWrapper};
    use crate::tokenizer::{Model, Tokenizer};

    /// The Hugging Face course's training example.
    const COURSE_CORPUS: [&str; 4] = [
        "This is the Hugging Face Course.",
        "This chapter is about tokenization.",
        "This section shows several tokenizer algorithms.",
        "Hopefully, you will be able to understand how they are trained and generate tokens.",
    ];

    #[test]
    fn tokenizer_trains_byte_level_bpe_on_the_course_corpus() {
        let mut tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
        tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(
            false, true, true,
        ))));
        let mut trainer = TrainerWrapper::BpeTrainer(BpeTrainer {
            vocab_size: 60,
            show_progress: false,
            special_tokens: vec![AddedToken::from("<|endoftext|>", true)],
            ..Default::default()
        });
        tokenizer.train(&mut trainer, COURSE_CORPUS.iter()).unwrap();
        let TrainerWrapper::BpeTrainer(bpe) = &trainer else { unreachable!() };
        assert_eq!(bpe.merge_history.get()[0], ("Ġ".to_string(), "t".to_string(), 7));
        assert_eq!(tokenizer.get_model().get_vocab_size(), 60);
        assert_eq!(tokenizer.token_to_id("<|endoftext|>"), Some(0));
        assert!(tokenizer.token_to_id("Ġt").is_some());
    }

    #[test]
    fn likelihood_wordpiece_on_the_course_corpus_with_bert_pre_tokenization() {
        use crate::pre_tokenizers::bert::BertPreTokenizer;
        let mut tokenizer = Tokenizer::new(ModelWrapper::WordPiece(WordPiece::default()));
        tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::BertPreTokenizer(BertPreTokenizer)));
        let mut wordpiece =
            WordPieceTrainer { algorithm: WordPieceAlgorithm::Likelihood, ..Default::default() };
        wordpiece.bpe_trainer.vocab_size = 70;
        wordpiece.bpe_trainer.show_progress = false;
        wordpiece.bpe_trainer.special_tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .iter()
            .map(|t| AddedToken::from(*t, true))
            .collect();
        let mut trainer = TrainerWrapper::WordPieceTrainer(wordpiece);
        tokenizer.train(&mut trainer, COURSE_CORPUS.iter()).unwrap();
        let TrainerWrapper::WordPieceTrainer(wordpiece) = &trainer else {
            panic!("a WordPieceTrainer")
        };
        let first = &wordpiece.merge_history.get()[0];
        assert_eq!((first.0.as_str(), first.1.as_str()), ("a", "##b"));
        assert_eq!(first.2, MergeScore::Likelihood(0.2));
        assert_eq!(tokenizer.get_model().get_vocab_size(), 70);
        assert_eq!(tokenizer.token_to_id("[UNK]"), Some(1));
        assert!(tokenizer.token_to_id("ab").is_some());
        // A trainer only trains its own kind of model.
        let mut bpe_tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
        assert!(bpe_tokenizer.train(&mut trainer, COURSE_CORPUS.iter()).is_err());
    }
}
