//! The `Tokenizer`: the stages tied together.
//!
//! encode: added tokens are cut out first (see `AddedVocabulary`), the rest is normalized,
//! pre-tokenized into words, each word tokenized by the model, the tokens gathered into an
//! `Encoding` (offsets mapped back to the input), and the post-processor adds special tokens and
//! joins pairs. decode goes the other way through the decoder. train feeds a trainer with the
//! normalized, pre-tokenized corpus and replaces the model with what it learned.
//!
//! `TokenizerImpl` is generic over its stages so that the plumbing can be tested with stand-in
//! components; `Tokenizer` (see `tokenizer::mod`) is the instance over the stage wrappers.
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::decoders::DecoderWrapper;
use crate::error::Error;
use crate::error::Result;
use crate::models::ModelWrapper;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::byte_level::gpt2_regex as byte_level_regex;
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::processors::PostProcessorWrapper;
use crate::tokenizer::added_vocabulary::{AddedToken, AddedVocabulary};
use crate::tokenizer::{
    Decoder, Encoding, Model, NormalizedString, Normalizer, OffsetType, Offsets, PostProcessor,
    PreTokenizedString, PreTokenizer, StoredEncoding,
};
use crate::trainers::progress::Progress;
use crate::trainers::{corpus, TrainerWrapper};
use crate::utils::byte_level::{map_bytes_with_origins, BYTES_TO_CHARS};
use crate::utils::offsets::ByteToCharOffsets;
use crate::utils::padding::{pad_encodings, BatchPadding, PaddingParams};
use crate::utils::parallel;
use crate::utils::tokens_by_id::TokensById;
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

/// Tells the pipeline that a pre-tokenizer is one that `encode` has a fast path for (same
/// results as the general `NormalizedString` machinery, a fraction of the allocations).
pub trait ByteLevelHint {
    /// `Some(use_regex)` for exactly byte-level splitting without prefix space
    /// (`ByteLevel { add_prefix_space: false, .. }` alone), else `None`.
    fn plain_byte_level(&self) -> Option<bool> {
        None
    }
    /// True for `BertPreTokenizer` (see `NormalizerHint::bert_lowercase`).
    fn is_bert(&self) -> bool {
        false
    }
}

impl ByteLevelHint for PreTokenizerWrapper {
    fn plain_byte_level(&self) -> Option<bool> {
        match self {
            PreTokenizerWrapper::ByteLevel(b) if !b.add_prefix_space => Some(b.use_regex),
            _ => None,
        }
    }
    fn is_bert(&self) -> bool {
        matches!(self, PreTokenizerWrapper::BertPreTokenizer(_))
    }
}

/// Tells the pipeline that a normalizer is `BertNormalizer`: with `BertPreTokenizer` after it,
/// `encode` then handles the words of plain ASCII text directly (see `walk_bert`).
pub trait NormalizerHint {
    /// `Some(lowercase)` for a `BertNormalizer`, else `None`.
    fn bert_lowercase(&self) -> Option<bool> {
        None
    }
}

impl NormalizerHint for NormalizerWrapper {
    fn bert_lowercase(&self) -> Option<bool> {
        match self {
            NormalizerWrapper::BertNormalizer(n) => Some(n.lowercase),
            _ => None,
        }
    }
}

/// Models that can give `(id, byte offsets)` per token without building token strings.
pub trait TokenizeWith: Model {
    fn tokenize_ids_offsets(&self, word: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        self.tokenize(word)?.into_iter().for_each(|t| emit(t.id, t.offsets));
        Ok(())
    }
    /// Tokenizes `raw` with each byte replaced by its GPT-2 byte-level char; offsets are bytes
    /// of `raw` (a token may end inside one of its multi-byte chars).
    fn tokenize_byte_level(&self, raw: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        tokenize_mapped_bytes(self, raw, emit)
    }
    /// True when every token's text is exactly the slice of the word it spans (so it need
    /// not be looked up by id).
    fn tokens_are_word_slices(&self) -> bool {
        false
    }
}

impl TokenizeWith for ModelWrapper {
    fn tokenize_ids_offsets(&self, word: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        self.tokenize_with(word, emit)
    }
    fn tokenize_byte_level(&self, raw: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        match self {
            ModelWrapper::BPE(b) => b.tokenize_byte_level(raw, emit),
            #[allow(unreachable_patterns)]
            _ => tokenize_mapped_bytes(self, raw, emit),
        }
    }
    /// BPE tokens are concatenations of the word's chars, except the unk token, byte-fallback
    /// tokens and prefixed / suffixed forms.
    fn tokens_are_word_slices(&self) -> bool {
        match self {
            ModelWrapper::BPE(b) => {
                b.unk_token.is_none()
                    && !b.byte_fallback
                    && b.continuing_subword_prefix.is_none()
                    && b.end_of_word_suffix.is_none()
            }
            // Continuation tokens carry the prefix; unknown words become the unk token.
            ModelWrapper::WordPiece(_) | ModelWrapper::WordLevel(_) => false,
            // Unigram tokens are slices (unknown runs too, as in `tokenizers`) except byte
            // fallback.
            ModelWrapper::Unigram(u) => !u.byte_fallback(),
        }
    }
}

/// `TokenizeWith::tokenize_byte_level` done plainly: map the bytes, tokenize, map the offsets back.
fn tokenize_mapped_bytes<M: TokenizeWith + ?Sized>(
    model: &M,
    raw: &str,
    emit: &mut dyn FnMut(u32, Offsets),
) -> Result<()> {
    let (mapped, raw_offset) = map_bytes_with_origins(raw.as_bytes());
    model.tokenize_ids_offsets(&mapped, &mut |id, (start, end)| {
        emit(id, (raw_offset[start], raw_offset[end]))
    })
}

/// Where the byte-level fast path gets a token's text from.
enum TokenText<'t> {
    /// This text (an added token's match).
    Text(&'t str),
    /// These raw input bytes, each mapped to its byte-level char.
    ByteLevel(&'t [u8]),
    /// The model's vocabulary, by id.
    Vocabulary,
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
}

impl<M, N, PT, PP, D> TokenizerImpl<M, N, PT, PP, D>
where
    M: Model + TokenizeWith + Send + Sync,
    N: Normalizer + NormalizerHint + Send + Sync,
    PT: PreTokenizer + ByteLevelHint + Send + Sync,
    PP: PostProcessor + Send + Sync,
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
        }
    }

    // ---- components ----

    /// Sets the normalizer; added tokens that match normalized text are re-normalized.
    pub fn with_normalizer(&mut self, normalizer: Option<N>) -> Result<&mut Self> {
        self.normalizer = normalizer;
        self.added_vocabulary.refresh_normalized_tokens(self.normalizer.as_ref())?;
        Ok(self)
    }
    pub fn get_normalizer(&self) -> Option<&N> {
        self.normalizer.as_ref()
    }
    pub fn with_pre_tokenizer(&mut self, pre_tokenizer: Option<PT>) -> &mut Self {
        self.pre_tokenizer = pre_tokenizer;
        self
    }
    pub fn get_pre_tokenizer(&self) -> Option<&PT> {
        self.pre_tokenizer.as_ref()
    }
    pub fn with_model(&mut self, model: M) -> &mut Self {
        self.model = model;
        self
    }
    pub fn get_model(&self) -> &M {
        &self.model
    }
    pub fn get_model_mut(&mut self) -> &mut M {
        &mut self.model
    }
    pub fn with_post_processor(&mut self, post_processor: Option<PP>) -> &mut Self {
        self.post_processor = post_processor;
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
        self.added_vocabulary.add_tokens(tokens, &self.model, self.normalizer.as_ref())
    }
    /// Same as `add_tokens`: whether a token is special is its own `special` flag.
    pub fn add_special_tokens(
        &mut self,
        tokens: impl IntoIterator<Item = AddedToken>,
    ) -> Result<usize> {
        self.add_tokens(tokens)
    }

    // ---- encode ----

    /// Encodes one input (or pair); offsets count bytes or chars (`offset_type`) of the input.
    /// The tokenizer's truncation and padding apply (see `post_process`).
    pub fn encode<'s>(
        &self,
        input: impl Into<EncodeInput<'s>>,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> Result<Encoding> {
        self.encode_with(
            input,
            add_special_tokens,
            offset_type,
            self.truncation.as_ref(),
            self.padding.as_ref(),
        )
    }

    /// `encode` with explicit truncation and padding instead of the tokenizer's own (what a
    /// transformers-style call with per-call settings needs, without mutating the tokenizer).
    pub fn encode_with<'s>(
        &self,
        input: impl Into<EncodeInput<'s>>,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
    ) -> Result<Encoding> {
        self.encode_with_texts(
            input.into(),
            add_special_tokens,
            offset_type,
            truncation,
            padding,
            false,
        )
    }

    /// `encode_with`; with `defer_texts`, the tokens taken from the model's vocabulary get an
    /// empty text (see `Tokenizer::encode_batch_deferred`).
    fn encode_with_texts(
        &self,
        input: EncodeInput,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
        defer_texts: bool,
    ) -> Result<Encoding> {
        let (first, second) = match input {
            EncodeInput::Single(a) => (a, None),
            EncodeInput::Dual(a, b) => (a, Some(b)),
        };
        let encoding = self.encode_sequence(first, 0, offset_type, defer_texts)?;
        let pair =
            second.map(|s| self.encode_sequence(s, 1, offset_type, defer_texts)).transpose()?;
        self.post_process_with(encoding, pair, add_special_tokens, truncation, padding)
    }

    /// Encodes many inputs in parallel (tokenmill's pool; `TOKENMILL_NUM_THREADS` sets its size
    /// and `TOKENIZERS_PARALLELISM` turns it off; with one thread, on the calling thread: see
    /// `utils::parallel`), then
    /// pads them together when padding is enabled (`BatchLongest`: to the longest of the batch).
    pub fn encode_batch<'s, E>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
    ) -> Result<Vec<Encoding>>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        self.encode_batch_with(
            inputs,
            add_special_tokens,
            offset_type,
            self.truncation.as_ref(),
            self.padding.as_ref(),
        )
    }

    /// `encode_batch` with explicit truncation and padding (see `encode_with`).
    pub fn encode_batch_with<'s, E>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
    ) -> Result<Vec<Encoding>>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        self.encode_batch_texts(inputs, add_special_tokens, offset_type, truncation, padding, false)
    }

    /// `encode_batch_with`, with the token texts deferred or not (see `encode_with_texts`).
    fn encode_batch_texts<'s, E>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
        defer_texts: bool,
    ) -> Result<Vec<Encoding>>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        let encode = |input: E| {
            self.encode_with_texts(
                input.into(),
                add_special_tokens,
                offset_type,
                truncation,
                padding,
                defer_texts,
            )
        };
        let mut encodings: Vec<Encoding> = parallel::try_map_collect(inputs, encode)?;
        if let Some(p) = padding {
            pad_encodings(&mut encodings, p);
        }
        Ok(encodings)
    }

    fn encode_sequence(
        &self,
        sequence: InputSequence,
        type_id: u32,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding> {
        match sequence {
            InputSequence::Raw(text) => {
                self.encode_text(&text, type_id, None, offset_type, defer_texts)
            }
            InputSequence::PreTokenized(words) => {
                // Each word is its own text (offsets relative to it) and its own word index.
                let mut encoding = Encoding::default();
                for (i, word) in words.iter().enumerate() {
                    encoding.merge_with(
                        self.encode_text(word, type_id, Some(i as u32), offset_type, defer_texts)?,
                        false,
                    );
                }
                Ok(encoding)
            }
        }
    }

    fn encode_text(
        &self,
        text: &str,
        type_id: u32,
        word_idx: Option<u32>,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding> {
        if let Some(use_regex) = self.byte_level_fast_path() {
            return self.encode_byte_level(
                text,
                use_regex,
                type_id,
                word_idx,
                offset_type,
                defer_texts,
            );
        }
        if let Some(lowercase) = self.bert_fast_path() {
            let walk = |emit: &mut dyn FnMut(u32, Offsets, u32, TokenText)| {
                self.walk_bert(text, lowercase, emit)
            };
            return self.encode_walk(text, walk, type_id, word_idx, offset_type, defer_texts);
        }
        let mut pretokenized = self.normalize_and_pre_tokenize(text)?;
        pretokenized.tokenize(|word| self.model.tokenize(word.get()))?;
        pretokenized.into_encoding(word_idx, type_id, offset_type)
    }

    /// `Some(use_regex)` when `encode` can take the byte-level fast path: no normalizer and a
    /// plain byte-level pre-tokenizer (see `ByteLevelHint`).
    fn byte_level_fast_path(&self) -> Option<bool> {
        if self.normalizer.is_some() {
            return None;
        }
        self.pre_tokenizer.as_ref()?.plain_byte_level()
    }

    /// `Some(lowercase)` when `encode` can take the BERT fast path: a `BertNormalizer`, a
    /// `BertPreTokenizer`, and no added token that is matched in normalized text.
    fn bert_fast_path(&self) -> Option<bool> {
        let lowercase = self.normalizer.as_ref()?.bert_lowercase()?;
        let fits = self.pre_tokenizer.as_ref()?.is_bert()
            && !self.added_vocabulary.has_normalized_tokens();
        fits.then_some(lowercase)
    }

    /// The BERT fast path: exactly what the general path computes with `BertNormalizer` and
    /// `BertPreTokenizer` (see `bert_fast_path`), calling `emit` as `walk_byte_level` does.
    ///
    /// Between added tokens, the text is cut at ASCII whitespace (space, tab, newline, carriage
    /// return), which both stages treat as a word boundary whatever the options (clean_text
    /// turns them into spaces, the pre-tokenizer drops them). Each stage works char by char and
    /// NFD never reorders across such a boundary, so every segment can be processed alone. A
    /// segment of printable ASCII (no control char, which clean_text would drop) is normalized
    /// to itself, lowercased if asked, and split into runs of non-punctuation with every
    /// punctuation char alone, offsets unchanged; any other segment goes through the general
    /// machinery on its own.
    fn walk_bert(
        &self,
        text: &str,
        lowercase: bool,
        mut emit: impl FnMut(u32, Offsets, u32, TokenText),
    ) -> Result<()> {
        let mut word = 0u32;
        let mut lowered = String::new();
        for (added, (start, end)) in self.added_vocabulary.split_unnormalized(text) {
            if let Some(id) = added {
                emit(id, (start, end), word, TokenText::Text(&text[start..end]));
                word += 1;
                continue;
            }
            let segments = text[start..end].split([' ', '\t', '\n', '\r']);
            let mut segment_start = start;
            for segment in segments {
                let shift = segment_start;
                segment_start += segment.len() + 1;
                if segment.is_empty() {
                    continue;
                }
                if !segment.bytes().all(|b| b.is_ascii_graphic()) {
                    self.walk_segment_generally(segment, shift, &mut word, &mut emit)?;
                    continue;
                }
                let bytes = segment.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    let run_end = if bytes[i].is_ascii_punctuation() {
                        i + 1
                    } else {
                        bytes[i..]
                            .iter()
                            .position(|b| b.is_ascii_punctuation())
                            .map_or(bytes.len(), |k| i + k)
                    };
                    let mut piece = &segment[i..run_end];
                    if lowercase && piece.bytes().any(|b| b.is_ascii_uppercase()) {
                        lowered.clear();
                        lowered.push_str(piece);
                        lowered.make_ascii_lowercase();
                        piece = &lowered;
                    }
                    let piece_start = shift + i;
                    self.model.tokenize_ids_offsets(piece, &mut |id, (ts, te)| {
                        emit(id, (piece_start + ts, piece_start + te), word, TokenText::Vocabulary)
                    })?;
                    word += 1;
                    i = run_end;
                }
            }
        }
        Ok(())
    }

    /// One segment of `walk_bert` through the normalizer, pre-tokenizer and model, as the
    /// general path does it; `shift` is where the segment starts in the input.
    fn walk_segment_generally(
        &self,
        segment: &str,
        shift: usize,
        word: &mut u32,
        emit: &mut impl FnMut(u32, Offsets, u32, TokenText),
    ) -> Result<()> {
        let mut normalized = NormalizedString::from(segment);
        if let Some(n) = &self.normalizer {
            n.normalize(&mut normalized)?;
        }
        let mut pretokenized = PreTokenizedString::from(normalized);
        if let Some(p) = &self.pre_tokenizer {
            p.pre_tokenize(&mut pretokenized)?;
        }
        for split in pretokenized.splits() {
            let piece = &split.normalized;
            self.model.tokenize_ids_offsets(piece.get(), &mut |id, (ts, te)| {
                let (s, e) = piece
                    .convert_offsets_to_input(ts..te)
                    .unwrap_or_else(|| piece.offsets_original());
                emit(id, (shift + s, shift + e), *word, TokenText::Vocabulary)
            })?;
            *word += 1;
        }
        Ok(())
    }

    /// The byte-level fast path: exactly what the general path computes for this configuration
    /// (added tokens, then each piece split by the GPT-2 pattern into words, each word mapped to
    /// byte-level chars and tokenized), walking the input once. Each mapped char stands for
    /// one input byte, so a token's input span is read off directly; like the general path's
    /// alignments, a span that ends inside a multi-byte char is widened to the whole char.
    /// `emit(id, input byte span, word index, token text)`: the token text is the added
    /// token's matched text, or the token's raw bytes when the model's tokens are word slices
    /// (see `TokenizeWith`), else to be looked up.
    fn walk_byte_level(
        &self,
        text: &str,
        use_regex: bool,
        mut emit: impl FnMut(u32, Offsets, u32, TokenText),
    ) -> Result<()> {
        let slices = self.model.tokens_are_word_slices();
        let mut word = 0u32;
        let mut words: Vec<Offsets> = Vec::new();
        for (added, (start, end)) in self.added_vocabulary.split_unnormalized(text) {
            if let Some(id) = added {
                emit(id, (start, end), word, TokenText::Text(&text[start..end]));
                word += 1;
                continue;
            }
            let piece = &text[start..end];
            words.clear();
            if use_regex {
                let mut covered = 0;
                byte_level_regex().for_each_match(piece, |s, e| {
                    if s > covered {
                        words.push((covered, s));
                    }
                    words.push((s, e));
                    covered = e;
                })?;
                if covered < piece.len() {
                    words.push((covered, piece.len()));
                }
            } else {
                words.push((0, piece.len()));
            }
            for &(ws, we) in words.iter().filter(|(s, e)| s < e) {
                let word_start = start + ws;
                self.model.tokenize_byte_level(&piece[ws..we], &mut |id, (ts, te)| {
                    let (ts, te) = (word_start + ts, word_start + te);
                    let span = (floor_char_boundary(text, ts), ceil_char_boundary(text, te));
                    let token = if slices {
                        TokenText::ByteLevel(&text.as_bytes()[ts..te])
                    } else {
                        TokenText::Vocabulary
                    };
                    emit(id, span, word, token);
                })?;
                word += 1;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn encode_byte_level(
        &self,
        text: &str,
        use_regex: bool,
        type_id: u32,
        word_idx: Option<u32>,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding> {
        let walk = |emit: &mut dyn FnMut(u32, Offsets, u32, TokenText)| {
            self.walk_byte_level(text, use_regex, emit)
        };
        self.encode_walk(text, walk, type_id, word_idx, offset_type, defer_texts)
    }

    /// The `Encoding` of the tokens a fast-path walk (`walk_byte_level`, `walk_bert`) emits;
    /// with `defer_texts`, vocabulary tokens get an empty text (no string is built).
    fn encode_walk(
        &self,
        text: &str,
        walk: impl FnOnce(&mut dyn FnMut(u32, Offsets, u32, TokenText)) -> Result<()>,
        type_id: u32,
        word_idx: Option<u32>,
        offset_type: OffsetType,
        defer_texts: bool,
    ) -> Result<Encoding> {
        let converter = (offset_type == OffsetType::Char).then(|| ByteToCharOffsets::new(text));
        let mut encoding = Encoding::with_capacity(text.len() / 3 + 1);
        walk(&mut |id, span, word, token| {
            let value = match token {
                TokenText::Text(t) => t.to_owned(),
                TokenText::ByteLevel(bytes) => {
                    let mut value = String::with_capacity(2 * bytes.len());
                    value.extend(bytes.iter().map(|&b| BYTES_TO_CHARS[b as usize]));
                    value
                }
                TokenText::Vocabulary if defer_texts => String::new(),
                TokenText::Vocabulary => self.model.id_to_token(id).unwrap_or_default(),
            };
            let span = match &converter {
                Some(c) => c.convert_span(span),
                None => span,
            };
            encoding.push(id, value, span, Some(word_idx.unwrap_or(word)), type_id, false);
        })?;
        Ok(encoding)
    }

    /// The ids of `text` only (the lean path): no token strings or offsets are built. When
    /// truncation or padding is enabled, falls back to the full `encode`. Special tokens come
    /// from the post-processor run on a skeleton encoding (the model's ids, empty token strings,
    /// zero offsets): a post-processor's ids never depend on token texts or offsets.
    pub fn encode_ids(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        if self.truncation.is_some() || self.padding.is_some() {
            return Ok(self.encode(text, add_special_tokens, OffsetType::Byte)?.ids);
        }
        let ids = self.model_ids(text)?;
        if !add_special_tokens || self.num_special_tokens_to_add(false) == 0 {
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
        Ok(self.post_process(skeleton, None, true)?.ids)
    }

    /// The ids the model gives for `text` (added tokens included), before post-processing.
    fn model_ids(&self, text: &str) -> Result<Vec<u32>> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 1);
        if let Some(use_regex) = self.byte_level_fast_path() {
            self.walk_byte_level(text, use_regex, |id, _, _, _| ids.push(id))?;
            return Ok(ids);
        }
        if let Some(lowercase) = self.bert_fast_path() {
            self.walk_bert(text, lowercase, |id, _, _, _| ids.push(id))?;
            return Ok(ids);
        }
        let pretokenized = self.normalize_and_pre_tokenize(text)?;
        for split in pretokenized.splits() {
            match &split.tokens {
                Some(tokens) => ids.extend(tokens.iter().map(|t| t.id)),
                None => self
                    .model
                    .tokenize_ids_offsets(split.normalized.get(), &mut |id, _| ids.push(id))?,
            }
        }
        Ok(ids)
    }

    /// Added tokens extracted, the rest normalized and cut into words (not yet tokenized).
    pub fn normalize_and_pre_tokenize(&self, text: &str) -> Result<PreTokenizedString> {
        let mut pretokenized =
            self.added_vocabulary.extract_and_normalize(self.normalizer.as_ref(), text)?;
        if let Some(p) = &self.pre_tokenizer {
            p.pre_tokenize(&mut pretokenized)?;
        }
        Ok(pretokenized)
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
            pad_encodings(std::slice::from_mut(&mut encoding), p);
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
    // ---- encode, token texts deferred ----

    /// The table that deferred token texts are filled from, when this tokenizer can defer them:
    /// its model has one (WordPiece, WordLevel) and its post-processor never reads token texts
    /// (ByteLevel's and Roberta's offset trimming do, so those keep the texts).
    pub fn deferred_token_table(&self) -> Option<Arc<TokensById>> {
        fn reads_texts(p: &PostProcessorWrapper) -> bool {
            match p {
                PostProcessorWrapper::Bert(_) | PostProcessorWrapper::Template(_) => false,
                PostProcessorWrapper::Roberta(_) | PostProcessorWrapper::ByteLevel(_) => true,
                PostProcessorWrapper::Sequence(s) => s.processors.iter().any(reads_texts),
            }
        }
        let table = match &self.model {
            ModelWrapper::WordPiece(model) => model.token_table(),
            ModelWrapper::WordLevel(model) => model.token_table(),
            _ => return None,
        };
        (!self.post_processor.as_ref().is_some_and(reads_texts)).then_some(table)
    }

    /// `encode_batch_with` without a string per token: when `deferred_token_table` gives a
    /// table, the tokens taken from the model's vocabulary are left with an empty text, and
    /// that table is returned with the encodings; `Encoding::fill_deferred_tokens` (or
    /// `tokens_filled`) gives them their texts when they are needed. Ids, offsets, words and
    /// masks are those of `encode_batch_with`; so are the texts once filled. Batches whose
    /// texts are never read (arrays for a model) skip most of the allocation work.
    pub fn encode_batch_deferred<'s, E>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
    ) -> Result<(Vec<Encoding>, Option<Arc<TokensById>>)>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        let table = self.deferred_token_table();
        let encodings = self.encode_batch_texts(
            inputs,
            add_special_tokens,
            offset_type,
            truncation,
            padding,
            table.is_some(),
        )?;
        Ok((encodings, table))
    }

    /// `encode_batch_deferred` for results that are held (handed to Python): each encoding whose
    /// token texts are deferred is stored packed (`StoredEncoding`) by the worker thread that
    /// made it, so the full `Encoding`s never pile up (they are freed and their memory reused by
    /// the thread that allocated it) and the held batch is ~4× smaller. Padding is decided (the
    /// batch's target length) but not applied: `StoredBatch::pad_rows` applies it; rows turned
    /// into arrays get the pad values written directly. Once padded, the rows are those of
    /// `encode_batch_deferred`.
    pub fn encode_batch_stored<'s, E>(
        &self,
        inputs: Vec<E>,
        add_special_tokens: bool,
        offset_type: OffsetType,
        truncation: Option<&TruncationParams>,
        padding: Option<&PaddingParams>,
    ) -> Result<StoredBatch>
    where
        E: Into<EncodeInput<'s>> + Send,
    {
        let table = self.deferred_token_table();
        let defer = table.is_some();
        // Padding each encoding alone and then the batch to its longest gives what padding
        // the batch once gives (pad lengths only grow), so only the batch padding is kept.
        // Only encodings whose token texts are deferred are packed: where every token has its
        // own text (byte-level BPE), copying the texts costs more than packing saves.
        let encode = |input: E| {
            let encoding = self.encode_with_texts(
                input.into(),
                add_special_tokens,
                offset_type,
                truncation,
                None,
                defer,
            )?;
            Ok::<_, Error>(if defer {
                StoredEncoding::from(encoding)
            } else {
                StoredEncoding::whole(encoding)
            })
        };
        let rows: Vec<StoredEncoding> = parallel::try_map_collect(inputs, encode)?;
        let padding =
            padding.and_then(|p| BatchPadding::new(rows.iter().map(StoredEncoding::len), p));
        Ok(StoredBatch { rows, texts: table, padding })
    }

    // ---- train ----

    /// Trains the model on text files, read line by line (line ends kept) and streamed. Invalid
    /// UTF-8 stops training with an error naming the file, line and byte offset.
    pub fn train_from_files(
        &mut self,
        trainer: &mut TrainerWrapper,
        files: &[PathBuf],
    ) -> Result<()> {
        trainer.check_model(&self.model)?;
        let total = corpus::total_size(files)?;
        let progress = Progress::bytes(trainer.should_show_progress(), total, "Reading files");
        let lines = corpus::file_lines(files.to_vec()).inspect(|line| {
            if let Ok(line) = line {
                progress.inc(line.len() as u64)
            }
        });
        self.feed_trainer(trainer, lines)?;
        progress.finish();
        self.finish_training(trainer)
    }

    /// Trains the model on sequences (an error item stops training and is returned).
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
        self.feed_trainer(trainer, sequences)?;
        self.finish_training(trainer)
    }

    /// Feeds the trainer the words `encode` would give the model: added tokens extracted, the
    /// rest normalized and pre-tokenized (as in `tokenizers`, added tokens count as words).
    fn feed_trainer<I, S>(&self, trainer: &mut TrainerWrapper, sequences: I) -> Result<()>
    where
        I: Iterator<Item = Result<S>>,
        S: AsRef<str> + Send + Sync,
    {
        trainer.feed_tokenizer(self, sequences)
    }

    /// Replaces the model by the trained one (the trainer keeps the current model's options,
    /// as `tokenizers` does) and adds the trainer's special tokens.
    fn finish_training(&mut self, trainer: &mut TrainerWrapper) -> Result<()> {
        let special_tokens = Trainer::train(trainer, &mut self.model)?;
        self.add_special_tokens(special_tokens)?;
        Ok(())
    }
}

/// A batch of encodings as `Tokenizer::encode_batch_stored` gives it.
#[derive(Debug, Clone, Default)]
pub struct StoredBatch {
    /// One per input, not yet padded.
    pub rows: Vec<StoredEncoding>,
    /// Where the rows' deferred token texts come from (None: nothing was deferred).
    pub texts: Option<Arc<TokensById>>,
    /// The batch's padding, still to apply to `rows` (None: no padding).
    pub padding: Option<BatchPadding>,
}

impl StoredBatch {
    /// Applies the pending padding to the rows, in parallel (a row that needs pads is unpacked,
    /// padded and packed again).
    pub fn pad_rows(&mut self) {
        let Some(padding) = self.padding.take() else { return };
        parallel::for_each_mut(&mut self.rows, |row| padding.apply_stored(row));
    }
}

/// Start of the char that holds byte `i` of `text`.
fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// End of the char that holds byte `i - 1` of `text` (`i` itself when it is a boundary).
fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
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
        use crate::models::bpe::BPE;
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
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .unk_token("[UNK]".into())
            .build()
            .unwrap();
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
    fn stored_batch_once_padded_equals_the_deferred_batch() {
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
                let (expected, expected_texts) = t
                    .encode_batch_deferred(
                        texts.to_vec(),
                        true,
                        OffsetType::Char,
                        truncation,
                        padding,
                    )
                    .unwrap();
                let mut stored = t
                    .encode_batch_stored(
                        texts.to_vec(),
                        true,
                        OffsetType::Char,
                        truncation,
                        padding,
                    )
                    .unwrap();
                assert_eq!(stored.padding.is_some(), padding.is_some());
                stored.pad_rows();
                let rows: Vec<Encoding> =
                    stored.rows.iter().map(StoredEncoding::to_encoding).collect();
                assert_eq!(rows, expected, "{truncation:?} {padding:?}");
                assert_eq!(stored.texts.is_some(), expected_texts.is_some());
                assert!(stored
                    .rows
                    .iter()
                    .all(|r| matches!(r, StoredEncoding::Packed(_)) == packs));
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
            assert!(fast.bert_fast_path().is_some() && general.bert_fast_path().is_none());
            for text in texts {
                for offset_type in [OffsetType::Byte, OffsetType::Char] {
                    let expected = general.encode(text, true, offset_type).unwrap();
                    assert_eq!(
                        fast.encode(text, true, offset_type).unwrap(),
                        expected,
                        "{text:?} lowercase={lowercase}"
                    );
                }
                assert_eq!(
                    fast.encode_ids(text, false).unwrap(),
                    general.encode_ids(text, false).unwrap(),
                    "{text:?}"
                );
                for add_special_tokens in [true, false] {
                    let full =
                        general.encode(text, add_special_tokens, OffsetType::Byte).unwrap().ids;
                    assert_eq!(
                        fast.encode_ids(text, add_special_tokens).unwrap(),
                        full,
                        "{text:?}"
                    );
                }
            }
        }
    }
}
