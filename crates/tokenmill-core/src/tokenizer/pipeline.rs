//! The `Tokenizer`: the stages tied together.
//!
//! encode: added tokens are cut out first (see `AddedVocabulary`), the rest is normalized,
//! pre-tokenized into words, each word tokenized by the model, the tokens gathered into an
//! `Encoding` (offsets mapped back to the input), and the post-processor adds special tokens and
//! joins pairs. decode goes the other way through the decoder. train feeds a trainer with the
//! normalized, pre-tokenized corpus and replaces the model with what it learned.
//!
//! How a text goes through the stages is the encode plan's business (`tokenizer::plan`, chosen
//! again whenever a component or the added tokens change); what an encode call gives back is
//! the output kind it is asked for (`tokenizer::output`), through the one entry `encode_as` /
//! `encode_batch_as` (`encode` / `encode_batch` are its `tokenizers`-style shorthands).
//!
//! `TokenizerImpl` is generic over its stages so that the plumbing can be tested with stand-in
//! components; `Tokenizer` (see `tokenizer::mod`) is the instance over the stage wrappers.
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;

use crate::decoders::DecoderWrapper;
use crate::error::Error;
use crate::error::Result;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::tokenizer::added_vocabulary::{AddedToken, AddedVocabulary};
use crate::tokenizer::memory;
use crate::tokenizer::output::{self, EncodeOptions, Output, RowEncoder};
use crate::tokenizer::plan::{self, Capabilities, EncodePlan, Stages};
use crate::tokenizer::{
    Decoder, Encoding, Model, Normalizer, OffsetType, PostProcessor, PreTokenizedString,
    PreTokenizer,
};
use crate::trainers::progress::Progress;
use crate::trainers::{corpus, Budget, CountTable, TrainerWrapper};
use crate::utils::padding::{pad_encodings, PaddingParams};
use crate::utils::parallel;
use crate::utils::truncation::{truncate_encodings, TruncationParams};

/// Learns a model from a corpus. `feed` receives the corpus (each sequence turned into words by
/// `process`, the tokenizer's normalizer + pre-tokenizer); `train` then updates the model and
/// returns the special tokens to add to the tokenizer.
pub trait Trainer {
    type Model: Model;
    fn should_show_progress(&self) -> bool;
    fn feed<I, S, F>(&mut self, iterator: I, process: F) -> Result<()>
    where
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send,
        F: Fn(&str) -> Result<Vec<String>> + Sync;
    fn train(&self, model: &mut Self::Model) -> Result<Vec<AddedToken>>;
}

/// One input: raw text, or text already cut into words by the caller.
#[derive(Debug, Clone)]
pub enum InputSequence<'s> {
    Raw(Cow<'s, str>),
    PreTokenized(Vec<Cow<'s, str>>),
}

impl<'s> From<&'s str> for InputSequence<'s> {
    fn from(s: &'s str) -> Self {
        InputSequence::Raw(Cow::Borrowed(s))
    }
}
impl From<String> for InputSequence<'_> {
    fn from(s: String) -> Self {
        InputSequence::Raw(Cow::Owned(s))
    }
}
impl<'s> From<&'s [&'s str]> for InputSequence<'s> {
    fn from(words: &'s [&'s str]) -> Self {
        InputSequence::PreTokenized(words.iter().map(|w| Cow::Borrowed(*w)).collect())
    }
}
impl From<Vec<String>> for InputSequence<'_> {
    fn from(words: Vec<String>) -> Self {
        InputSequence::PreTokenized(words.into_iter().map(Cow::Owned).collect())
    }
}

/// What `encode` takes: one sequence or a pair.
#[derive(Debug, Clone)]
pub enum EncodeInput<'s> {
    Single(InputSequence<'s>),
    Dual(InputSequence<'s>, InputSequence<'s>),
}

impl<'s, I: Into<InputSequence<'s>>> From<I> for EncodeInput<'s> {
    fn from(input: I) -> Self {
        EncodeInput::Single(input.into())
    }
}
impl<'s, A: Into<InputSequence<'s>>, B: Into<InputSequence<'s>>> From<(A, B)> for EncodeInput<'s> {
    fn from((a, b): (A, B)) -> Self {
        EncodeInput::Dual(a.into(), b.into())
    }
}

/// The pipeline. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizerImpl<M, N, PT, PP, D> {
    pub(crate) normalizer: Option<N>,
    pub(crate) pre_tokenizer: Option<PT>,
    pub(crate) model: M,
    pub(crate) post_processor: Option<PP>,
    pub(crate) decoder: Option<D>,
    pub(crate) added_vocabulary: AddedVocabulary,
    pub(crate) truncation: Option<TruncationParams>,
    pub(crate) padding: Option<PaddingParams>,
    /// How `encode` walks a text: chosen from the components whenever one changes.
    pub(crate) plan: EncodePlan,
}

impl<M, N, PT, PP, D> TokenizerImpl<M, N, PT, PP, D>
where
    M: Model + Capabilities + Send + Sync,
    N: Normalizer + Capabilities + Send + Sync,
    PT: PreTokenizer + Capabilities + Send + Sync,
    PP: PostProcessor + Capabilities + Send + Sync,
    D: Decoder + Send + Sync,
{
    pub fn new(model: M) -> Self {
        TokenizerImpl {
            normalizer: None,
            pre_tokenizer: None,
            model,
            post_processor: None,
            decoder: None,
            added_vocabulary: AddedVocabulary::new(),
            truncation: None,
            padding: None,
            plan: EncodePlan::default(),
        }
    }

    /// The stages a plan runs.
    fn stages(&self) -> Stages<'_, M, N, PT> {
        Stages {
            added_vocabulary: &self.added_vocabulary,
            normalizer: self.normalizer.as_ref(),
            pre_tokenizer: self.pre_tokenizer.as_ref(),
            model: &self.model,
        }
    }

    /// Chooses the encode plan again; every change of a component or of the added tokens
    /// calls it.
    fn refresh_plan(&mut self) {
        let post_processor = self.post_processor.as_ref().map(Capabilities::capability);
        self.plan = EncodePlan::choose(&self.stages(), post_processor.unwrap_or_default());
    }

    /// The plan `encode` follows (see `tokenizer::plan`).
    pub fn plan(&self) -> &EncodePlan {
        &self.plan
    }

    // ---- components ----

    /// Sets the normalizer; added tokens that match normalized text are re-normalized.
    pub fn with_normalizer(&mut self, normalizer: Option<N>) -> Result<&mut Self> {
        self.normalizer = normalizer;
        self.added_vocabulary.refresh_normalized_tokens(self.normalizer.as_ref())?;
        self.refresh_plan();
        Ok(self)
    }
    pub fn get_normalizer(&self) -> Option<&N> {
        self.normalizer.as_ref()
    }
    pub fn with_pre_tokenizer(&mut self, pre_tokenizer: Option<PT>) -> &mut Self {
        self.pre_tokenizer = pre_tokenizer;
        self.refresh_plan();
        self
    }
    pub fn get_pre_tokenizer(&self) -> Option<&PT> {
        self.pre_tokenizer.as_ref()
    }
    pub fn with_model(&mut self, model: M) -> &mut Self {
        self.model = model;
        self.refresh_plan();
        self
    }
    pub fn get_model(&self) -> &M {
        &self.model
    }
    pub fn with_post_processor(&mut self, post_processor: Option<PP>) -> &mut Self {
        self.post_processor = post_processor;
        self.refresh_plan();
        self
    }
    pub fn get_post_processor(&self) -> Option<&PP> {
        self.post_processor.as_ref()
    }
    pub fn with_decoder(&mut self, decoder: Option<D>) -> &mut Self {
        self.decoder = decoder;
        self
    }
    pub fn get_decoder(&self) -> Option<&D> {
        self.decoder.as_ref()
    }
    pub fn get_added_vocabulary(&self) -> &AddedVocabulary {
        &self.added_vocabulary
    }
    pub fn get_truncation(&self) -> Option<&TruncationParams> {
        self.truncation.as_ref()
    }
    /// Sets (or with `None` removes) truncation. Refuses, as `tokenizers` does, a stride that
    /// would not leave windows room to advance once the single-sequence special tokens are
    /// counted.
    pub fn with_truncation(&mut self, truncation: Option<TruncationParams>) -> Result<&mut Self> {
        if let Some(t) = &truncation {
            let added = self.num_special_tokens_to_add(false);
            // `tokenizers` subtracts without checking; a max_length below the special tokens is
            // reported when encoding (see `post_process`).
            let effective = t.max_length.saturating_sub(added);
            if t.max_length >= added && effective < t.stride {
                return Err(Error::InvalidArgument(format!(
                    "truncation stride ({}) must be less than the effective max length {effective} \
                     (= max_length {} - {added} special tokens added by the post-processor)",
                    t.stride, t.max_length
                )));
            }
        }
        self.truncation = truncation;
        Ok(self)
    }
    pub fn get_padding(&self) -> Option<&PaddingParams> {
        self.padding.as_ref()
    }
    /// Sets (or with `None` removes) padding.
    pub fn with_padding(&mut self, padding: Option<PaddingParams>) -> &mut Self {
        self.padding = padding;
        self
    }
    pub fn set_encode_special_tokens(&mut self, value: bool) {
        self.added_vocabulary.set_encode_special_tokens(value);
    }
    pub fn get_encode_special_tokens(&self) -> bool {
        self.added_vocabulary.get_encode_special_tokens()
    }

    // ---- vocabulary ----

    /// The model's vocabulary, plus the added tokens if asked.
    pub fn get_vocab(&self, with_added_tokens: bool) -> HashMap<String, u32> {
        let mut vocab = self.model.get_vocab();
        if with_added_tokens {
            vocab.extend(self.added_vocabulary.get_vocab().iter().map(|(k, v)| (k.clone(), *v)));
        }
        vocab
    }

    /// The model's vocabulary size, plus the added tokens the model does not already have.
    pub fn get_vocab_size(&self, with_added_tokens: bool) -> usize {
        let base = self.model.get_vocab_size();
        if !with_added_tokens {
            return base;
        }
        let added = self.added_vocabulary.get_vocab();
        base + added.keys().filter(|t| self.model.token_to_id(t).is_none()).count()
    }

    pub fn get_added_tokens_decoder(&self) -> &HashMap<u32, AddedToken> {
        self.added_vocabulary.get_added_tokens_decoder()
    }
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.added_vocabulary.token_to_id(token, &self.model)
    }
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match self.added_vocabulary.simple_id_to_token(id) {
            Some(t) => Some(t.to_owned()),
            None => self.model.id_to_token(id),
        }
    }
    pub fn add_tokens(&mut self, tokens: impl IntoIterator<Item = AddedToken>) -> Result<usize> {
        let added =
            self.added_vocabulary.add_tokens(tokens, &self.model, self.normalizer.as_ref())?;
        self.refresh_plan();
        Ok(added)
    }
    /// Same as `add_tokens`: whether a token is special is its own `special` flag.
    pub fn add_special_tokens(
        &mut self,
        tokens: impl IntoIterator<Item = AddedToken>,
    ) -> Result<usize> {
        self.add_tokens(tokens)
    }

    // ---- encode ----

    /// The one encode entry: encodes `input` (one sequence or a pair) into the output wanted
    /// (`Encoding`, `StoredEncoding` or `Ids`: see `tokenizer::output`) with `options`.
    pub fn encode_as<'s, O: Output>(
        &self,
        input: impl Into<EncodeInput<'s>>,
        options: &EncodeOptions<'_>,
    ) -> Result<O> {
        self.with_row_encoder(|rows| O::encode(rows, input.into(), options))
    }

    /// `encode_as` for many inputs, in parallel, gathered into the output's batch (full
    /// encodings are padded together: `BatchLongest` pads to the longest of the batch).
    pub fn encode_batch_as<'s, O: Output, E: Into<EncodeInput<'s>> + Send>(
        &self,
        inputs: Vec<E>,
        options: &EncodeOptions<'_>,
    ) -> Result<O::Batch> {
        self.with_row_encoder(|rows| output::encode_batch::<O, E>(rows, inputs, options))
    }

    /// The options of a call with the tokenizer's own truncation and padding.
    pub fn encode_options(
        &self,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> EncodeOptions<'_> {
        EncodeOptions {
            add_special_tokens,
            offset_type,
            truncation: self.truncation.as_ref(),
            padding: self.padding.as_ref(),
        }
    }

    /// Shorthand for `encode_as::<Encoding>` with the tokenizer's own truncation and padding
    /// (`tokenizers`' `encode`); offsets count bytes or chars (`offset_type`) of the input.
    pub fn encode<'s>(
        &self,
        input: impl Into<EncodeInput<'s>>,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> Result<Encoding> {
        self.encode_as(input, &self.encode_options(add_special_tokens, offset_type))
    }

    /// Shorthand for `encode_batch_as::<Encoding>` with the tokenizer's own truncation and
    /// padding (`tokenizers`' `encode_batch`).
    pub fn encode_batch<'s, E: Into<EncodeInput<'s>> + Send>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> Result<Vec<Encoding>> {
        self.encode_batch_as::<Encoding, E>(
            inputs,
            &self.encode_options(add_special_tokens, offset_type),
        )
    }

    /// Runs `f` with this tokenizer as the outputs see it.
    fn with_row_encoder<R>(&self, f: impl FnOnce(&RowEncoder) -> R) -> R {
        let encoding = |input: EncodeInput<'_>, o: &EncodeOptions<'_>, defer: bool, pad: bool| {
            self.encode_row(input, o, defer, pad)
        };
        let ids = |input: EncodeInput<'_>, o: &EncodeOptions<'_>| self.encode_ids_row(input, o);
        f(&RowEncoder { plan: &self.plan, encoding: &encoding, ids: &ids })
    }

    /// See `RowEncoder::encoding`.
    fn encode_row(
        &self,
        input: EncodeInput<'_>,
        options: &EncodeOptions<'_>,
        defer_texts: bool,
        pad: bool,
    ) -> Result<Encoding> {
        let (first, second) = match input {
            EncodeInput::Single(a) => (a, None),
            EncodeInput::Dual(a, b) => (a, Some(b)),
        };
        let offset_type = options.offset_type;
        let encoding = self.encode_sequence(first, 0, offset_type, defer_texts)?;
        let pair =
            second.map(|s| self.encode_sequence(s, 1, offset_type, defer_texts)).transpose()?;
        let padding = options.padding.filter(|_| pad);
        let add_special_tokens = options.add_special_tokens;
        self.post_process_with(encoding, pair, add_special_tokens, options.truncation, padding)
    }

    /// See `RowEncoder::ids`: the lean path, or the ids of the full encoding.
    fn encode_ids_row(
        &self,
        input: EncodeInput<'_>,
        options: &EncodeOptions<'_>,
    ) -> Result<Vec<u32>> {
        let text = match &input {
            EncodeInput::Single(InputSequence::Raw(text))
                if options.truncation.is_none() && options.padding.is_none() =>
            {
                text
            }
            _ => {
                let defer = self.plan.deferred_texts().is_some();
                return Ok(self.encode_row(input, options, defer, true)?.ids);
            }
        };
        let ids = self.plan.ids(&self.stages(), text)?;
        if !options.add_special_tokens || self.num_special_tokens_to_add(false) == 0 {
            return Ok(ids);
        }
        let n = ids.len();
        let skeleton = Encoding {
            ids,
            type_ids: vec![0; n],
            tokens: vec![String::new(); n],
            words: vec![None; n],
            offsets: vec![(0, 0); n],
            special_tokens_mask: vec![0; n],
            attention_mask: vec![1; n],
            ..Encoding::default()
        };
        Ok(self.post_process_with(skeleton, None, true, None, None)?.ids)
    }

    fn encode_sequence(
        &self,
        sequence: InputSequence,
        type_id: u32,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding> {
        let (stages, plan) = (self.stages(), &self.plan);
        match sequence {
            InputSequence::Raw(text) => {
                plan.encode(&stages, &text, type_id, None, offset_type, defer_texts)
            }
            InputSequence::PreTokenized(words) => {
                // Each word is its own text (offsets relative to it) and its own word index.
                let mut encoding = Encoding::default();
                for (i, word) in words.iter().enumerate() {
                    let word_idx = Some(i as u32);
                    encoding.merge_with(
                        plan.encode(&stages, word, type_id, word_idx, offset_type, defer_texts)?,
                        false,
                    );
                }
                Ok(encoding)
            }
        }
    }

    /// Added tokens extracted, the rest normalized and cut into words (not yet tokenized).
    pub fn normalize_and_pre_tokenize(&self, text: &str) -> Result<PreTokenizedString> {
        plan::normalize_and_pre_tokenize(&self.stages(), text)
    }

    /// Trains the model on sequences with any `Trainer`, then adds its special tokens.
    pub fn train<T, I, S>(&mut self, trainer: &mut T, sequences: I) -> Result<&mut Self>
    where
        T: Trainer<Model = M>,
        I: Iterator<Item = S> + Send,
        S: AsRef<str> + Send,
    {
        trainer.feed(sequences, |sequence| {
            let pretokenized = self.normalize_and_pre_tokenize(sequence)?;
            Ok(pretokenized
                .splits()
                .iter()
                .map(|split| split.normalized.get().to_owned())
                .collect())
        })?;
        let special_tokens = trainer.train(&mut self.model)?;
        self.add_special_tokens(special_tokens)?;
        Ok(self)
    }

    /// Truncates (the tokenizer's truncation), adds special tokens and joins the pair (the
    /// post-processor, or the default join), then pads (the tokenizer's padding), in
    /// `tokenizers`' order.
    pub fn post_process(
        &self,
        encoding: Encoding,
        pair: Option<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Encoding> {
        self.post_process_with(
            encoding,
            pair,
            add_special_tokens,
            self.truncation.as_ref(),
            self.padding.as_ref(),
        )
    }

    /// `post_process` with explicit truncation and padding. The special tokens the
    /// post-processor will add count toward `max_length`.
    pub fn post_process_with(
        &self,
        encoding: Encoding,
        pair: Option<Encoding>,
        add_special_tokens: bool,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
    ) -> Result<Encoding> {
        let (encoding, pair) = match truncation {
            Some(t) => {
                let added = if add_special_tokens {
                    self.num_special_tokens_to_add(pair.is_some())
                } else {
                    0
                };
                let max_length = t.max_length.checked_sub(added).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "truncation max_length ({}) is smaller than the {added} special tokens \
                            the post-processor adds",
                        t.max_length
                    ))
                })?;
                truncate_encodings(encoding, pair, &TruncationParams { max_length, ..t.clone() })?
            }
            None => (encoding, pair),
        };
        let mut encoding = match &self.post_processor {
            Some(p) => p.process(encoding, pair, add_special_tokens)?,
            None => join_sequences(encoding, pair),
        };
        if let Some(p) = padding {
            pad_encodings(std::slice::from_mut(&mut encoding), p)?;
        }
        Ok(encoding)
    }

    /// How many special tokens the post-processor adds.
    pub fn num_special_tokens_to_add(&self, is_pair: bool) -> usize {
        self.post_processor.as_ref().map_or(0, |p| p.added_tokens(is_pair))
    }

    // ---- decode ----

    /// Text of `ids`. Ids that are in no vocabulary are skipped, as `tokenizers` does; special
    /// tokens too when `skip_special_tokens`. Without a decoder, tokens are joined by spaces.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        let tokens: Vec<String> = ids
            .iter()
            .filter_map(|&id| self.id_to_token(id))
            .filter(|t| !skip_special_tokens || !self.added_vocabulary.is_special_token(t))
            .collect();
        match &self.decoder {
            Some(d) => d.decode(tokens),
            None => Ok(tokens.join(" ")),
        }
    }

    pub fn decode_batch(
        &self,
        sequences: &[Vec<u32>],
        skip_special_tokens: bool,
    ) -> Result<Vec<String>> {
        parallel::map_ref_collect(sequences, |ids| self.decode(ids, skip_special_tokens))
    }
}

/// The tokenizer over every supported component: what a tokenizer.json describes.
pub type Tokenizer = TokenizerImpl<
    ModelWrapper,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

impl Tokenizer {
    // ---- train ----

    /// Trains the model on text files, read line by line (line ends kept) and streamed. Invalid
    /// UTF-8 stops training with an error naming the file, line and byte offset.
    pub fn train_from_files(
        &mut self,
        trainer: &mut TrainerWrapper,
        files: &[PathBuf],
    ) -> Result<()> {
        trainer.check_model(&self.model)?;
        let show_progress = trainer.should_show_progress();
        let counts = self.count_words_in_files(files, &trainer.budget(), show_progress)?;
        self.train_from_counts(trainer, counts)
    }

    /// Counts the words of text files (read as [`train_from_files`](Self::train_from_files)
    /// does) that training would count, within `budget`.
    pub fn count_words_in_files(
        &self,
        files: &[PathBuf],
        budget: &Budget,
        show_progress: bool,
    ) -> Result<CountTable> {
        let total = corpus::total_size(files)?;
        let progress = Progress::bytes(show_progress, total, "Reading files");
        let per_byte = crate::trainers::feed_bytes_per_byte(self);
        let lines = corpus::file_lines_within(files.to_vec(), per_byte).inspect(|line| {
            if let Ok(line) = line {
                progress.inc(line.len() as u64)
            }
        });
        let counts = crate::trainers::count_words(self, lines, budget)?;
        progress.finish();
        Ok(counts)
    }

    /// Trains the model on sequences (an error item stops training and is returned). A sequence
    /// too long for the memory there is stops training with an error naming it (`text N of the
    /// iterator`, from 1).
    pub fn train_from_sequences<I, S>(
        &mut self,
        trainer: &mut TrainerWrapper,
        sequences: I,
    ) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send + Sync,
    {
        trainer.check_model(&self.model)?;
        let counts = self.count_words_in_sequences(sequences, &trainer.budget())?;
        self.train_from_counts(trainer, counts)
    }

    /// Counts the words of sequences that training would count (the words `encode` would give
    /// the model: added tokens extracted, the rest normalized and pre-tokenized), within
    /// `budget`. An error item stops counting and is returned.
    pub fn count_words_in_sequences<I, S>(
        &self,
        sequences: I,
        budget: &Budget,
    ) -> Result<CountTable>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send + Sync,
    {
        let per_byte = crate::trainers::feed_bytes_per_byte(self);
        let sequences = sequences.enumerate().map(|(i, sequence)| {
            let sequence = sequence?;
            memory::check_text(sequence.as_ref().len(), per_byte, "cut it into words")
                .map_err(|e| memory::locate(e, format_args!("text {} of the iterator", i + 1)))?;
            Ok(sequence)
        });
        crate::trainers::count_words(self, sequences, budget)
    }

    /// Trains the model on counted words (e.g. from [`count_words_in_files`] on several
    /// machines, merged): the same model as training on the corpus they were counted from.
    ///
    /// [`count_words_in_files`]: Self::count_words_in_files
    pub fn train_from_counts(
        &mut self,
        trainer: &mut TrainerWrapper,
        counts: CountTable,
    ) -> Result<()> {
        trainer.check_model(&self.model)?;
        trainer.set_words(counts);
        self.finish_training(trainer)
    }

    /// Replaces the model by the trained one (the trainer keeps the current model's options,
    /// as `tokenizers` does) and adds the trainer's special tokens.
    fn finish_training(&mut self, trainer: &mut TrainerWrapper) -> Result<()> {
        let special_tokens = Trainer::train(trainer, &mut self.model)?;
        self.add_special_tokens(special_tokens)?;
        Ok(())
    }
}

/// The default post-processing: a single encoding as is; a pair marked as sequences 0 and 1
/// and concatenated.
pub fn join_sequences(mut encoding: Encoding, pair: Option<Encoding>) -> Encoding {
    match pair {
        None => encoding,
        Some(mut pair) => {
            encoding.set_sequence_id(0);
            pair.set_sequence_id(1);
            encoding.merge_with(pair, false);
            encoding
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::test_support::{
        JoinPair, Lowercase, SpaceJoin, WhitespaceSplit, WordModel,
    };
    use crate::tokenizer::{Ids, StoredEncoding};

    type TestTokenizer = TokenizerImpl<WordModel, Lowercase, WhitespaceSplit, JoinPair, SpaceJoin>;

    fn tokenizer() -> TestTokenizer {
        let mut t =
            TestTokenizer::new(WordModel::new(&["hello", "world", "h", "é", "l", "o", "<x>"]));
        t.with_normalizer(Some(Lowercase::Lowercase)).unwrap();
        t.with_pre_tokenizer(Some(WhitespaceSplit::WhitespaceSplit));
        t
    }

    #[test]
    fn encode_offsets_and_words() {
        let t = tokenizer();
        let e = t.encode("Hello  WORLD héllo", true, OffsetType::Char).unwrap();
        assert_eq!(e.ids, vec![0, 1, 2, 3, 4, 4, 5]);
        assert_eq!(e.words, vec![Some(0), Some(1), Some(2), Some(2), Some(2), Some(2), Some(2)]);
        assert_eq!(e.offsets[0], (0, 5));
        assert_eq!(e.offsets[1], (7, 12));
        assert_eq!(e.offsets[3], (14, 15));
        let b = t.encode("Hello  WORLD héllo", true, OffsetType::Byte).unwrap();
        assert_eq!(b.offsets[3], (14, 16));
        assert_eq!(b.offsets[6], (18, 19));
    }

    #[test]
    fn added_tokens_get_ids_after_the_vocab_and_decode() {
        let mut t = tokenizer();
        t.add_special_tokens([AddedToken::from("[SEP]", true)]).unwrap();
        assert_eq!(t.token_to_id("[SEP]"), Some(7));
        assert_eq!(t.get_vocab_size(true), 8);
        let e = t.encode("hello[SEP]world", true, OffsetType::Char).unwrap();
        assert_eq!(e.ids, vec![0, 7, 1]);
        assert_eq!(e.words, vec![Some(0), Some(1), Some(2)]);
        assert_eq!(t.decode(&e.ids, true).unwrap(), "hello world");
        assert_eq!(t.decode(&e.ids, false).unwrap(), "hello [SEP] world");
        // unknown ids are skipped
        assert_eq!(t.decode(&[0, 999, 1], false).unwrap(), "hello world");
    }

    #[test]
    fn pairs_and_pretokenized() {
        let t = tokenizer();
        let e = t.encode(("hello", "world hello"), true, OffsetType::Char).unwrap();
        assert_eq!(e.ids, vec![0, 1, 0]);
        assert_eq!(e.type_ids, vec![0, 1, 1]);
        assert_eq!(e.sequence_ids(), vec![Some(0), Some(1), Some(1)]);
        let words: &[&str] = &["hello", "world"];
        let p = t.encode(words, true, OffsetType::Char).unwrap();
        assert_eq!(p.words, vec![Some(0), Some(1)]);
        assert_eq!(p.offsets, vec![(0, 5), (0, 5)]);
    }

    #[test]
    fn truncation_then_padding_in_encode_and_batch() {
        use crate::utils::padding::{PaddingParams, PaddingStrategy};
        use crate::utils::truncation::{TruncationParams, TruncationStrategy};
        let mut t = tokenizer();
        t.with_truncation(Some(TruncationParams {
            max_length: 3,
            stride: 1,
            strategy: TruncationStrategy::OnlySecond,
            ..Default::default()
        }))
        .unwrap();
        let e = t.encode(("hello", "world hello world hello"), true, OffsetType::Char).unwrap();
        assert_eq!(e.ids, vec![0, 1, 0]);
        // the second sequence's windows: 2 tokens each, sharing 1, joined to the first again
        let windows: Vec<Vec<u32>> = e.overflowing.iter().map(|o| o.ids.clone()).collect();
        assert_eq!(windows, vec![vec![0, 0, 1], vec![0, 1, 0]]);
        assert!(
            t.encode("hello world", true, OffsetType::Char).is_ok(),
            "fits: nothing to truncate"
        );
        assert!(
            t.encode("hello world hello world", true, OffsetType::Char).is_err(),
            "only_second needs a pair"
        );
        t.with_truncation(None).unwrap();
        t.with_padding(Some(PaddingParams {
            pad_id: 9,
            pad_to_multiple_of: Some(4),
            ..Default::default()
        }));
        let batch = t
            .encode_batch(vec!["hello", "hello world hello world hello"], true, OffsetType::Char)
            .unwrap();
        assert_eq!(batch[0].ids, vec![0, 9, 9, 9, 9, 9, 9, 9]);
        assert_eq!(batch[0].attention_mask, vec![1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(batch[1].len(), 8);
        t.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::Fixed(2),
            ..Default::default()
        }));
        assert_eq!(
            t.encode("hello world hello", true, OffsetType::Char).unwrap().len(),
            3,
            "padding never cuts"
        );
    }

    #[test]
    fn batch_equals_single() {
        let t = tokenizer();
        let texts: Vec<String> = (0..50)
            .map(|i| if i % 2 == 0 { "hello world".into() } else { "héllo".into() })
            .collect();
        let batch = t.encode_batch(texts.clone(), true, OffsetType::Char).unwrap();
        for (text, e) in texts.iter().zip(batch) {
            assert_eq!(e, t.encode(text.as_str(), true, OffsetType::Char).unwrap());
        }
    }

    /// A BPE tokenizer with BERT's normalizer and pre-tokenizer; `fast: false` wraps the
    /// normalizer in a Sequence, which takes the general path.
    fn bert_like(fast: bool, lowercase: bool) -> Tokenizer {
        use crate::models::bpe::{BpeOptions, BPE};
        use crate::normalizers::{BertNormalizer, Sequence};
        use crate::pre_tokenizers::BertPreTokenizer;
        let mut tokens: Vec<String> = ["[UNK]", "[SEP]", "th", "the", "he", "in", "ing", "é"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        tokens.extend((b'!'..=b'~').map(|b| (b as char).to_string()));
        let vocab = tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let merges = [("t", "h"), ("th", "e"), ("h", "e"), ("i", "n"), ("in", "g")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let options = BpeOptions { unk_token: Some("[UNK]".into()), ..Default::default() };
        let bpe = BPE::from_trained(vocab, merges, options).unwrap();
        let mut t = Tokenizer::new(bpe.into());
        let bert =
            NormalizerWrapper::BertNormalizer(BertNormalizer::new(true, true, None, lowercase));
        let normalizer =
            if fast { bert } else { NormalizerWrapper::Sequence(Sequence::new(vec![bert])) };
        t.with_normalizer(Some(normalizer)).unwrap();
        t.with_pre_tokenizer(Some(PreTokenizerWrapper::BertPreTokenizer(BertPreTokenizer)));
        t.add_special_tokens([AddedToken::from("[SEP]", true)]).unwrap();
        let (cls, sep) = (("[UNK]".to_string(), 0), ("[SEP]".to_string(), 1));
        t.with_post_processor(Some(crate::processors::BertProcessing::new(sep, cls).into()));
        t
    }

    #[test]
    fn stored_batch_once_padded_and_filled_equals_the_full_batch() {
        use crate::utils::padding::{PaddingDirection, PaddingStrategy};
        use crate::utils::truncation::TruncationParams;
        let mut wordpiece = bert_like(true, true);
        let vocab = ["[UNK]", "[SEP]", "the", "thing", "in", "end", "go", "##ing", "x", ",", "of"];
        let vocab = vocab.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        wordpiece.with_model(
            crate::models::wordpiece::WordPiece::builder()
                .vocab(vocab)
                .unk_token("[UNK]".into())
                .build()
                .unwrap()
                .into(),
        );
        let texts = [
            "the thing in the end",
            "x",
            "",
            "going in the thing, the end of the thing in going",
            "[SEP]the",
        ];
        let truncations =
            [None, Some(TruncationParams { max_length: 6, stride: 2, ..Default::default() })];
        let paddings =
            [PaddingDirection::Left, PaddingDirection::Right].into_iter().flat_map(|direction| {
                [PaddingStrategy::BatchLongest, PaddingStrategy::Fixed(9)].map(|strategy| {
                    Some(PaddingParams {
                        direction,
                        strategy,
                        pad_to_multiple_of: Some(4),
                        ..Default::default()
                    })
                })
            });
        let paddings: Vec<Option<PaddingParams>> = std::iter::once(None).chain(paddings).collect();
        // BPE: every token has its text, nothing is packed; WordPiece: everything is.
        for (t, packs) in [(bert_like(true, true), false), (wordpiece, true)] {
            for (truncation, padding) in truncations
                .iter()
                .flat_map(|t| paddings.iter().map(move |p| (t.as_ref(), p.as_ref())))
            {
                let options = EncodeOptions {
                    truncation,
                    padding,
                    ..EncodeOptions::new(true, OffsetType::Char)
                };
                let expected = t.encode_batch_as::<Encoding, _>(texts.to_vec(), &options).unwrap();
                let mut stored =
                    t.encode_batch_as::<StoredEncoding, _>(texts.to_vec(), &options).unwrap();
                assert_eq!(stored.padding.is_some(), padding.is_some());
                stored.pad_rows();
                let rows: Vec<Encoding> = stored
                    .rows
                    .iter()
                    .map(|row| {
                        let mut row = row.to_encoding();
                        if let Some(table) = &stored.texts {
                            row.fill_deferred_tokens(table);
                        }
                        row
                    })
                    .collect();
                assert_eq!(rows, expected, "{truncation:?} {padding:?}");
                assert_eq!(stored.texts.is_some(), packs);
                assert!(stored.rows.iter().all(|r| r.is_packed() == packs));
            }
        }
    }

    #[test]
    fn bert_fast_path_equals_the_general_path() {
        let texts = [
            "",
            "The thing, in the-end: THE (going) 'in'!",
            "  leading and trailing  \t\n\r ",
            "ctrl\u{1}inside and\u{b}vertical tab\u{c}form feed\u{85}next line\u{a0}nbsp",
            "Café naïve ÉCOLE e\u{301} 中文字 mixed中x Ⅻ İstanbul ǅ",
            "[SEP]the[SEP] x[SEP]y THE[SEP]",
            "\u{0}\u{fffd}a\u{7f}b «quoted» — dash … ellipsis",
            "x\u{300}\u{301} a\u{334}\u{301}b",
        ];
        for lowercase in [true, false] {
            let (fast, general) = (bert_like(true, lowercase), bert_like(false, lowercase));
            assert!(fast.plan().is_bert() && !general.plan().is_bert());
            for text in texts {
                for offset_type in [OffsetType::Byte, OffsetType::Char] {
                    let expected = general.encode(text, true, offset_type).unwrap();
                    assert_eq!(
                        fast.encode(text, true, offset_type).unwrap(),
                        expected,
                        "{text:?} lowercase={lowercase}"
                    );
                }
                let ids = |t: &Tokenizer, add_special_tokens| {
                    let options = t.encode_options(add_special_tokens, OffsetType::Byte);
                    t.encode_as::<Ids>(text, &options).unwrap().0
                };
                assert_eq!(ids(&fast, false), ids(&general, false), "{text:?}");
                for add_special_tokens in [true, false] {
                    let full =
                        general.encode(text, add_special_tokens, OffsetType::Byte).unwrap().ids;
                    assert_eq!(ids(&fast, add_special_tokens), full, "{text:?}");
                }
            }
        }
    }
}
