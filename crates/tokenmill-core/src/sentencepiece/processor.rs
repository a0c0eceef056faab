//! `SentencePieceProcessor` (sentencepiece_processor.cc): normalize, segment, then turn the
//! segmentation into pieces the way SentencePiece does — unknown pieces become byte pieces when
//! byte_fallback is on, runs of unknown pieces merge otherwise — with surfaces and offsets; and
//! decode pieces or ids back to text.
use std::sync::Arc;

use rand::{Rng, SeedableRng};

use super::bpe;
use super::model::{self, byte_to_piece, piece_to_byte, Span, Vocab};
use super::normalizer::{Normalized, SpNormalizer, SPACE_SYMBOL};
use super::proto::{ModelProto, ModelType, PieceType, SentencePieceText, SentencePieceTextPiece};
use super::unigram::{self, to_spans};
use super::unigram_cache::{LongWordMaps, WordCache};
use crate::error::{Error, Result};
use crate::models::unigram::{ScoredSampling, Unigram};

const DEFAULT_UNK_SURFACE: &str = " \u{2047} ";

/// Reusable buffers of the ids-only encode path, one set per thread.
#[derive(Default)]
struct Scratch {
    normalized: Vec<u8>,
    spans: Vec<Span>,
    tokens: Vec<(u32, u32)>,
    unigram: unigram::UnigramBuffers,
    /// This thread's Unigram long words, one map per model (by cache id).
    unigram_long_words: LongWordMaps,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Records one piece's surface text while decoding: (text so far, surfaces, surface).
type SetSurface<'a> = dyn FnMut(&mut String, &mut Vec<(String, usize, usize)>, &str) + 'a;

/// One piece of an encoded text, as SentencePiece's `SentencePieceText.SentencePiece`.
/// `begin`/`end` are byte offsets into the original text.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedPiece {
    pub piece: String,
    pub id: u32,
    /// `None` where SentencePiece leaves it unset (control pieces, all but the last byte piece
    /// of a character).
    pub surface: Option<String>,
    pub begin: usize,
    pub end: usize,
}

/// An encoded text (SentencePiece's `SentencePieceText`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EncodedText {
    pub text: String,
    pub pieces: Vec<EncodedPiece>,
    /// Set for n-best and sampled results only (as SentencePiece does).
    pub score: Option<f32>,
}

impl EncodedText {
    /// The protobuf form (`SentencePieceText`), byte offsets.
    pub fn to_proto(&self) -> SentencePieceText {
        SentencePieceText {
            text: Some(self.text.clone()),
            pieces: self
                .pieces
                .iter()
                .map(|p| SentencePieceTextPiece {
                    piece: Some(p.piece.clone()),
                    id: Some(p.id),
                    surface: p.surface.clone(),
                    begin: Some(p.begin as u32),
                    end: Some(p.end as u32),
                })
                .collect(),
            score: self.score,
        }
    }
}

/// Options of one encode call (the Python wrapper's keyword arguments).
#[derive(Debug, Clone, Copy, Default)]
pub struct EncodeOptions {
    pub add_bos: bool,
    pub add_eos: bool,
    pub reverse: bool,
    pub emit_unk_piece: bool,
    pub enable_sampling: bool,
    pub nbest_size: i32,
    pub alpha: f32,
}

#[derive(Debug, Clone)]
pub struct Processor {
    /// Names this model in the BPE word cache and in the threads' maps of long Unigram words.
    cache_id: u64,
    proto: ModelProto,
    pub vocab: Vocab,
    kind: ModelType,
    /// The Unigram engine over this vocabulary with sentencepiece's rules (Unigram models only):
    /// Viterbi, lattice, n-best, sampling, entropy.
    unigram: Option<Unigram>,
    normalizer: SpNormalizer,
    denormalizer: Option<SpNormalizer>,
    unk_surface: String,
    decode_strips_bos_ws: bool,
    decode_strips_all_leading_ws: bool,
    special: [String; 4],
    /// The Unigram word cache, shared by every thread that encodes with this model (and its
    /// clones, which encode alike).
    unigram_words: Arc<WordCache>,
}

/// sentencepiece's n-best timeout in milliseconds (`SetNBestTimeout`; 0 or less: none): an
/// n-best search still running after it returns the best segmentation alone. Process-wide,
/// as in sentencepiece.
static NBEST_TIMEOUT_MS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(30_000);

/// Sets the n-best timeout (see [`NBEST_TIMEOUT_MS`]).
pub fn set_nbest_timeout(milliseconds: i64) {
    NBEST_TIMEOUT_MS.store(milliseconds, std::sync::atomic::Ordering::Relaxed);
}

/// The deadline of an n-best search starting now.
fn nbest_deadline() -> Option<std::time::Instant> {
    let ms = NBEST_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed);
    (ms > 0).then(|| std::time::Instant::now() + std::time::Duration::from_millis(ms as u64))
}

/// The rng of sampling calls; `seed` makes them reproducible (`set_random_generator_seed`).
pub fn make_rng(seed: Option<u64>) -> rand::rngs::StdRng {
    match seed {
        Some(seed) => rand::rngs::StdRng::seed_from_u64(seed),
        None => rand::rngs::StdRng::from_entropy(),
    }
}

impl Processor {
    pub fn from_proto(proto: ModelProto) -> Result<Self> {
        let vocab = Vocab::from_proto(&proto)?;
        let kind = model::model_type(&proto)?;
        let unigram =
            if kind == ModelType::Unigram { Some(unigram::unigram_model(&vocab)?) } else { None };
        let trainer = proto.trainer_spec();
        let spec = proto.normalizer_spec();
        let normalizer = SpNormalizer::for_model(&spec, &trainer, vocab.user_defined.clone())?;
        let denormalizer = match &proto.denormalizer_spec {
            Some(spec) => SpNormalizer::denormalizer(spec)?,
            None => None,
        };
        let non_empty = |s: Option<&String>, default: &str| {
            s.filter(|s| !s.is_empty()).cloned().unwrap_or_else(|| default.to_string())
        };
        let t = proto.trainer_spec.as_ref();
        let special = [
            non_empty(t.and_then(|t| t.unk_piece.as_ref()), "<unk>"),
            non_empty(t.and_then(|t| t.bos_piece.as_ref()), "<s>"),
            non_empty(t.and_then(|t| t.eos_piece.as_ref()), "</s>"),
            non_empty(t.and_then(|t| t.pad_piece.as_ref()), "<pad>"),
        ];
        let unk_surface = t
            .and_then(|t| t.unk_surface.clone())
            .unwrap_or_else(|| DEFAULT_UNK_SURFACE.to_string());
        let processor = Processor {
            cache_id: crate::utils::word_cache::new_cache_id(),
            decode_strips_bos_ws: spec.add_dummy_prefix() || spec.remove_extra_whitespaces(),
            decode_strips_all_leading_ws: spec.remove_extra_whitespaces(),
            proto,
            vocab,
            kind,
            unigram,
            normalizer,
            denormalizer,
            unk_surface,
            special,
            unigram_words: Arc::default(),
        };
        processor.self_test()?;
        Ok(processor)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Processor::from_proto(ModelProto::from_bytes(bytes)?)
    }

    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        Processor::from_proto(ModelProto::from_file(path)?).map_err(|e| e.in_file(path))
    }

    /// Runs the model's self-test samples, as SentencePiece does on load.
    fn self_test(&self) -> Result<()> {
        let Some(data) = &self.proto.self_test_data else { return Ok(()) };
        let mut failures = 0;
        for sample in &data.samples {
            let pieces = self.encode_pieces(
                sample.input.as_deref().unwrap_or(""),
                &EncodeOptions::default(),
                None,
            )?;
            if pieces.join(" ") != sample.expected.as_deref().unwrap_or("") {
                failures += 1;
            }
        }
        if failures > 0 {
            return Err(Error::format(format!(
                "SentencePiece model: {failures}/{} self-test samples did not pass",
                data.samples.len()
            )));
        }
        Ok(())
    }

    pub fn proto(&self) -> &ModelProto {
        &self.proto
    }

    pub fn model_type(&self) -> ModelType {
        self.kind
    }

    pub fn normalizer(&self) -> &SpNormalizer {
        &self.normalizer
    }

    pub fn normalize(&self, text: &str) -> Normalized {
        self.normalizer.normalize(text)
    }

    pub fn piece_size(&self) -> usize {
        self.vocab.len()
    }

    pub fn piece_to_id(&self, piece: &str) -> u32 {
        self.vocab.piece_to_id(piece)
    }

    pub fn id_to_piece(&self, id: u32) -> Result<&str> {
        self.vocab.pieces.get(id as usize).map(String::as_str).ok_or_else(|| self.out_of_range(id))
    }

    pub fn score(&self, id: u32) -> Result<f32> {
        self.vocab.scores.get(id as usize).copied().ok_or_else(|| self.out_of_range(id))
    }

    pub fn is(&self, id: u32, kind: PieceType) -> Result<bool> {
        self.vocab.kind(id).map(|k| k == kind).ok_or_else(|| self.out_of_range(id))
    }

    fn out_of_range(&self, id: u32) -> Error {
        let _ = self;
        Error::UnknownId(id)
    }

    /// `unk_id`, `bos_id`, `eos_id`, `pad_id`: the id of the piece named in the trainer spec if
    /// it has the right type (UNKNOWN for unk, CONTROL for the others), else -1.
    pub fn special_id(&self, which: usize) -> i32 {
        let id = self.vocab.piece_to_id(&self.special[which]);
        let wanted = if which == 0 { PieceType::Unknown } else { PieceType::Control };
        if self.vocab.is(id, wanted) {
            id as i32
        } else {
            -1
        }
    }

    pub fn special_piece(&self, which: usize) -> &str {
        &self.special[which]
    }

    /// The model's segmentation of a normalized text (before byte fallback / unk merging).
    fn segment(
        &self,
        normalized: &str,
        options: &EncodeOptions,
        rng: &mut dyn FnMut() -> f64,
    ) -> Result<Vec<Span>> {
        let sampling = options.enable_sampling;
        if sampling && options.nbest_size > 512 {
            return Err(Error::InvalidArgument("nbest_size must be nbest_size <= 512".into()));
        }
        Ok(match self.kind {
            ModelType::Bpe => {
                let dropout = if sampling { options.alpha } else { 0.0 };
                bpe::encode_bpe(&self.vocab, normalized, dropout, rng)
            }
            ModelType::Unigram => {
                if sampling && options.nbest_size != 0 && options.nbest_size != 1 {
                    // One seed from the call's generator drives the Unigram sampler.
                    let mut rng =
                        rand::rngs::StdRng::seed_from_u64((rng() * (1u64 << 53) as f64) as u64);
                    return self.sample_unigram(
                        normalized,
                        options.nbest_size,
                        options.alpha,
                        &mut rng,
                    );
                }
                unigram::encode_unigram(&self.vocab, self.unigram()?, normalized)?
            }
            ModelType::Char => model::encode_char(&self.vocab, normalized),
            ModelType::Word => model::encode_word(&self.vocab, normalized),
        })
    }

    /// Ids of `text` (the fast path: no strings, no alignment, buffers reused per thread).
    pub fn encode_ids(
        &self,
        text: &str,
        options: &EncodeOptions,
        seed: Option<u64>,
    ) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        self.encode_ids_into(text, options, seed, &mut ids)?;
        Ok(ids)
    }

    /// [`Processor::encode_ids`] appended to `out` (a batch collects all its ids in one buffer).
    /// On error `out` may hold part of this text's ids.
    pub fn encode_ids_into(
        &self,
        text: &str,
        options: &EncodeOptions,
        seed: Option<u64>,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let first = out.len();
        if options.enable_sampling {
            let normalized = self.normalizer.normalize(text);
            let mut rng = make_rng_fn(options, seed);
            let spans = self.segment(&normalized.text, options, &mut rng)?;
            self.ids_of(&normalized.text, &spans, out);
        } else {
            SCRATCH.with(|cell| match cell.try_borrow_mut() {
                Ok(mut scratch) => self.plain_ids(text, &mut scratch, out),
                Err(_) => self.plain_ids(text, &mut Scratch::default(), out),
            })?;
        }
        // `rewrite_ids` on this text's part of `out`.
        self.check_specials(options)?;
        if options.reverse {
            out[first..].reverse();
        }
        if options.add_bos {
            out.insert(first, self.special_id(1) as u32);
        }
        if options.add_eos {
            out.push(self.special_id(2) as u32);
        }
        Ok(())
    }

    /// Appends the ids of the best segmentation of `text` (no sampling) to `out`.
    fn plain_ids(&self, text: &str, scratch: &mut Scratch, out: &mut Vec<u32>) -> Result<()> {
        let Scratch { normalized, spans, tokens, unigram, unigram_long_words } = scratch;
        self.normalizer.normalize_into(text, normalized);
        if let (ModelType::Unigram, Some(model)) = (self.kind, &self.unigram) {
            if unigram::unigram_words_cacheable(&self.vocab) {
                // On the bytes: they are valid UTF-8 (the normalizer only writes whole
                // characters and U+FFFD), and checking that again costs more than one might
                // think (each ▁ ends the validator's ASCII fast path).
                debug_assert!(std::str::from_utf8(normalized).is_ok());
                let mut cache = self.unigram_words.view(unigram_long_words.select(self.cache_id));
                return unigram::encode_unigram_words(
                    &self.vocab,
                    model,
                    normalized,
                    &mut cache,
                    unigram,
                    out,
                );
            }
        }
        // Always valid for `&str` input (whole characters and validated replacements are copied).
        let normalized: std::borrow::Cow<str> = match std::str::from_utf8(normalized) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(normalized),
        };
        match (self.kind, &self.unigram) {
            (ModelType::Bpe, _) if self.vocab.words_are_independent => {
                bpe::encode_bpe_words(&self.vocab, &normalized, self.cache_id, tokens, spans)
            }
            _ => *spans = self.segment(&normalized, &EncodeOptions::default(), &mut || 1.0)?,
        }
        self.ids_of(&normalized, spans, out);
        Ok(())
    }

    /// Appends the ids of a segmentation to `out`, with byte fallback and unknown-run merging
    /// applied (the ids that `populate` would give).
    fn ids_of(&self, normalized: &str, spans: &[Span], ids: &mut Vec<u32>) {
        ids.reserve(spans.len() + 2);
        let mut writer = model::IdWriter::new(&self.vocab);
        for span in spans {
            writer.push(ids, span.id, &normalized.as_bytes()[span.start..span.end]);
        }
    }

    /// Pieces of `text` (`out_type=str`).
    pub fn encode_pieces(
        &self,
        text: &str,
        options: &EncodeOptions,
        seed: Option<u64>,
    ) -> Result<Vec<String>> {
        let encoded = self.encode_full(text, options, seed)?;
        let mut pieces: Vec<String> = encoded.pieces.into_iter().map(|p| p.piece).collect();
        self.rewrite_pieces(&mut pieces, options)?;
        Ok(pieces)
    }

    fn check_specials(&self, options: &EncodeOptions) -> Result<()> {
        if options.add_bos && self.special_id(1) < 0 {
            return Err(Error::InvalidArgument(
                "BOS token is not defined as a control symbol in this model.".into(),
            ));
        }
        if options.add_eos && self.special_id(2) < 0 {
            return Err(Error::InvalidArgument(
                "EOS token is not defined as a control symbol in this model.".into(),
            ));
        }
        if options.emit_unk_piece && self.special_id(0) < 0 {
            return Err(Error::InvalidArgument("UNK token is not defined in this model.".into()));
        }
        Ok(())
    }

    /// The Python wrapper's `RewriteIds`: `reverse`, then `<s>` / `</s>`.
    pub fn rewrite_ids(&self, ids: &mut Vec<u32>, options: &EncodeOptions) -> Result<()> {
        self.check_specials(options)?;
        if options.reverse {
            ids.reverse();
        }
        if options.add_bos {
            ids.insert(0, self.special_id(1) as u32);
        }
        if options.add_eos {
            ids.push(self.special_id(2) as u32);
        }
        Ok(())
    }

    /// `RewriteIds` for pieces: unknown pieces become `<unk>` (emit_unk_piece), `reverse`,
    /// then `<s>` / `</s>`.
    pub fn rewrite_pieces(&self, pieces: &mut Vec<String>, options: &EncodeOptions) -> Result<()> {
        self.check_specials(options)?;
        let piece_of = |which: usize| self.vocab.pieces[self.special_id(which) as usize].clone();
        if options.emit_unk_piece {
            let unk = piece_of(0);
            for piece in pieces.iter_mut() {
                if self.vocab.piece_to_id(piece) == self.vocab.unk_id {
                    piece.clone_from(&unk);
                }
            }
        }
        if options.reverse {
            pieces.reverse();
        }
        if options.add_bos {
            pieces.insert(0, piece_of(1));
        }
        if options.add_eos {
            pieces.push(piece_of(2));
        }
        Ok(())
    }

    /// The full result with surfaces and byte offsets (the proto output types).
    pub fn encode_full(
        &self,
        text: &str,
        options: &EncodeOptions,
        seed: Option<u64>,
    ) -> Result<EncodedText> {
        let normalized = self.normalizer.normalize(text);
        let mut rng = make_rng_fn(options, seed);
        let spans = self.segment(&normalized.text, options, &mut rng)?;
        self.populate(text, &normalized, &spans)
    }

    /// [`Processor::encode_full`] of one long text on several threads (sentencepiece's
    /// `ParallelEncode`), with exactly `encode_full`'s result. The normalized text is cut
    /// into chunks of at least `chunk_bytes` at word starts that no piece of the model
    /// crosses (a BPE vocabulary whose words are independent, see
    /// [`Vocab::words_are_independent`]), and the chunks are segmented in parallel on
    /// tokenmill's fork-safe pool (`utils::parallel`). Other models are segmented on this
    /// thread: Unigram sums path scores along the whole text, so a chunk's segmentation can
    /// depend on the score reached before it (sentencepiece's own chunked result can then differ
    /// from its `Encode`); char and word models are cheap. Sampling is not supported here (as in
    /// sentencepiece).
    pub fn encode_full_chunked(
        &self,
        text: &str,
        chunk_bytes: usize,
        parallel: bool,
    ) -> Result<EncodedText> {
        let normalized = self.normalizer.normalize(text);
        if !(parallel && self.kind == ModelType::Bpe && self.vocab.words_are_independent) {
            let spans = self.segment(&normalized.text, &EncodeOptions::default(), &mut || 1.0)?;
            return self.populate(text, &normalized, &spans);
        }
        let chunks = chunk_at_word_starts(normalized.text.as_bytes(), chunk_bytes.max(1));
        let encoded: Vec<Vec<Span>> =
            crate::utils::parallel::map_ref_collect(&chunks, |&(start, end)| {
                let mut spans = Vec::new();
                bpe::encode_bpe_words(
                    &self.vocab,
                    &normalized.text[start..end],
                    self.cache_id,
                    &mut Vec::new(),
                    &mut spans,
                );
                spans.iter_mut().for_each(|s| {
                    s.start += start;
                    s.end += start;
                });
                spans
            });
        self.populate(text, &normalized, &encoded.concat())
    }

    /// The ids of [`Processor::encode_full_chunked`] (`encode_ids`' result, without options):
    /// the text-only normalization and the id writer of the ids path, chunk by chunk.
    pub fn encode_ids_chunked(
        &self,
        text: &str,
        chunk_bytes: usize,
        parallel: bool,
    ) -> Result<Vec<u32>> {
        if !(parallel && self.kind == ModelType::Bpe && self.vocab.words_are_independent) {
            return self.encode_ids(text, &EncodeOptions::default(), None);
        }
        let mut bytes = Vec::new();
        self.normalizer.normalize_into(text, &mut bytes);
        let normalized = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        let chunks = chunk_at_word_starts(normalized.as_bytes(), chunk_bytes.max(1));
        let ids: Vec<Vec<u32>> =
            crate::utils::parallel::map_ref_collect(&chunks, |&(start, end)| {
                let chunk = &normalized[start..end];
                let (mut spans, mut ids) = (Vec::new(), Vec::new());
                bpe::encode_bpe_words(
                    &self.vocab,
                    chunk,
                    self.cache_id,
                    &mut Vec::new(),
                    &mut spans,
                );
                self.ids_of(chunk, &spans, &mut ids);
                ids
            });
        Ok(ids.concat())
    }

    /// The Unigram engine (an error for the other model types, which never build one).
    fn unigram(&self) -> Result<&Unigram> {
        self.unigram.as_ref().ok_or_else(|| Error::Other("unigram model missing".into()))
    }

    fn require_unigram(&self, what: &str) -> Result<&Unigram> {
        if self.kind != ModelType::Unigram {
            return Err(self.unavailable(what));
        }
        self.unigram()
    }

    /// sentencepiece's `SampleEncode` for Unigram: `nbest_size` < 0 samples from the whole
    /// lattice (forward filtering, backward sampling), > 1 from the n best with
    /// P ∝ exp(`alpha` × score), 0 or 1 is the best segmentation.
    fn sample_unigram(
        &self,
        normalized: &str,
        nbest_size: i32,
        alpha: f32,
        rng: &mut rand::rngs::StdRng,
    ) -> Result<Vec<Span>> {
        let model = self.unigram()?;
        let segmentation = match nbest_size {
            n if n < 0 => model.sample(normalized, alpha as f64, rng)?,
            0 | 1 => return self.segment(normalized, &EncodeOptions::default(), &mut || 1.0),
            n => {
                let nbest = model.nbest_until(normalized, n as usize, nbest_deadline())?;
                if nbest.is_empty() {
                    return Err(Error::Other("NBestEncode returns empty result.".into()));
                }
                crate::models::unigram::lattice::pick_scored(nbest, alpha as f64, rng)
                    .unwrap_or_default()
            }
        };
        Ok(to_spans(segmentation))
    }

    /// The n best segmentations (Unigram only), best first, each with its score
    /// (sentencepiece's `NBestEncode`: `nbest_size` above 512 is an error, below 1 means 1; one
    /// is the plain encoding with score 0; an empty text gives one empty result).
    pub fn nbest_encode(
        &self,
        text: &str,
        nbest_size: i32,
        _options: &EncodeOptions,
    ) -> Result<Vec<EncodedText>> {
        let model = self.require_unigram("NBestEncode")?;
        if nbest_size > 512 {
            return Err(Error::InvalidArgument("nbest_size must be nbest_size <= 512".into()));
        }
        let deadline = nbest_deadline();
        let normalized = self.normalizer.normalize(text);
        let n = nbest_size.clamp(1, 1024) as usize;
        let nbest: Vec<(Vec<Span>, f64)> = if n == 1 || normalized.text.is_empty() {
            vec![(self.segment(&normalized.text, &EncodeOptions::default(), &mut || 1.0)?, 0.0)]
        } else {
            model
                .nbest_until(&normalized.text, n, deadline)?
                .into_iter()
                .map(|(seg, score)| (to_spans(seg), score))
                .collect()
        };
        if nbest.is_empty() {
            return Err(Error::Other("NBestEncode returns empty result.".into()));
        }
        self.populate_scored(text, &normalized, nbest)
    }

    fn populate_scored(
        &self,
        text: &str,
        normalized: &Normalized,
        results: Vec<(Vec<Span>, f64)>,
    ) -> Result<Vec<EncodedText>> {
        results
            .into_iter()
            .map(|(spans, score)| {
                let mut encoded = self.populate(text, normalized, &spans)?;
                encoded.score = Some(score as f32);
                Ok(encoded)
            })
            .collect()
    }

    /// Sampled segmentations with their scores (Unigram only; sentencepiece's
    /// `SampleEncodeAndScore`, see [`Unigram::sample_and_score`]). An empty result (an empty
    /// text) is an error, as in sentencepiece.
    #[allow(clippy::too_many_arguments)]
    pub fn sample_encode_and_score(
        &self,
        text: &str,
        num_samples: i32,
        alpha: f32,
        wor: bool,
        include_best: bool,
        _options: &EncodeOptions,
        seed: Option<u64>,
    ) -> Result<Vec<EncodedText>> {
        let model = self.require_unigram("SampleEncodeAndScore")?;
        if num_samples <= 0 {
            return Err(Error::InvalidArgument("num_samples must be positive".into()));
        }
        if include_best && !wor {
            return Err(Error::InvalidArgument(
                "include_best is supported only with wor=True".into(),
            ));
        }
        let normalized = self.normalizer.normalize(text);
        let mut rng = make_rng(seed);
        let how = ScoredSampling {
            inv_theta: alpha as f64,
            samples: num_samples as usize,
            without_replacement: wor,
            include_best,
        };
        let results = model.sample_and_score(&normalized.text, &how, &mut rng)?;
        if results.is_empty() {
            return Err(Error::InvalidArgument(
                "SampleEncodeAndScore returns empty result.".into(),
            ));
        }
        self.populate_scored(
            text,
            &normalized,
            results.into_iter().map(|(seg, score)| (to_spans(seg), score)).collect(),
        )
    }

    /// The entropy of the segmentation distribution P ∝ exp(`alpha` × score) of `text`
    /// (Unigram only; sentencepiece's `CalculateEntropy`, finite on texts of any length, see
    /// `Lattice::entropy`).
    pub fn calculate_entropy(&self, text: &str, alpha: f32) -> Result<f32> {
        let model = self.require_unigram("CalculateEntropy")?;
        let normalized = self.normalizer.normalize(text);
        Ok(model.entropy(&normalized.text, alpha as f64)? as f32)
    }

    fn unavailable(&self, what: &str) -> Error {
        Error::InvalidArgument(format!(
            "{what} is not available for the current model ({:?})",
            self.kind
        ))
    }

    /// SentencePiece's `PopulateSentencePieceText`.
    pub fn populate(
        &self,
        text: &str,
        normalized: &Normalized,
        spans: &[Span],
    ) -> Result<EncodedText> {
        let map = &normalized.norm_to_orig;
        let mut pieces: Vec<EncodedPiece> = Vec::with_capacity(spans.len());
        let mut prev_unk = false;
        let mut consumed = 0;
        for span in spans {
            let w = &normalized.text[span.start..span.end];
            let is_unk = self.vocab.is(span.id, PieceType::Unknown);
            if self.vocab.is(span.id, PieceType::Control) {
                let at = map[consumed];
                pieces.push(EncodedPiece {
                    piece: w.to_string(),
                    id: span.id,
                    surface: None,
                    begin: at,
                    end: at,
                });
                prev_unk = is_unk;
                continue;
            }
            let (begin, end) = (map[consumed], map[consumed + w.len()]);
            if begin > end || end > text.len() {
                return Err(Error::Other(format!(
                    "SentencePiece: inconsistent alignment at normalized byte {consumed}"
                )));
            }
            let surface = text.get(begin..end).unwrap_or("");
            match (&self.vocab.byte_ids, is_unk) {
                (Some(bytes), true) => {
                    let n = w.len();
                    for (i, &b) in w.as_bytes().iter().enumerate() {
                        let last = i + 1 == n;
                        pieces.push(EncodedPiece {
                            piece: byte_to_piece(b),
                            id: bytes[b as usize],
                            surface: last.then(|| surface.to_string()),
                            begin,
                            end: if last { end } else { begin },
                        });
                    }
                }
                _ if is_unk && prev_unk => {
                    if let Some(last) = pieces.last_mut() {
                        last.piece.push_str(w);
                        last.surface.get_or_insert_with(String::new).push_str(surface);
                        last.end = end;
                    }
                }
                _ => pieces.push(EncodedPiece {
                    piece: w.to_string(),
                    id: span.id,
                    surface: Some(surface.to_string()),
                    begin,
                    end,
                }),
            }
            consumed += w.len();
            prev_unk = is_unk;
        }
        if consumed != normalized.text.len() {
            return Err(Error::Other(
                "SentencePiece: not all normalized characters are consumed".into(),
            ));
        }
        Ok(EncodedText { text: text.to_string(), pieces, score: None })
    }

    /// Decodes ids (each must be in range).
    pub fn decode_ids(&self, ids: &[u32]) -> Result<String> {
        let pieces = ids.iter().map(|&id| self.id_to_piece(id)).collect::<Result<Vec<&str>>>()?;
        Ok(self.decode_pieces(&pieces).text)
    }

    /// SentencePiece's `Decode`: control pieces vanish, `<unk>` becomes the unk surface, runs of
    /// byte pieces are decoded as UTF-8 (invalid bytes become U+FFFD), ▁ becomes a space and
    /// the first one is dropped when the model adds a dummy prefix.
    pub fn decode_pieces<S: AsRef<str>>(&self, pieces: &[S]) -> EncodedText {
        let ids: Vec<u32> = pieces.iter().map(|p| self.vocab.piece_to_id(p.as_ref())).collect();
        let mut out = EncodedText::default();
        let mut text = String::new();
        let mut surfaces: Vec<(String, usize, usize)> = Vec::with_capacity(pieces.len());
        let mut set_surface =
            |text: &mut String, surfaces: &mut Vec<(String, usize, usize)>, surface: &str| {
                surfaces.push((surface.to_string(), text.len(), text.len() + surface.len()));
                text.push_str(surface);
            };
        let mut byte_run: Vec<u8> = Vec::new();
        let flush_bytes = |text: &mut String,
                           surfaces: &mut Vec<(String, usize, usize)>,
                           run: &mut Vec<u8>,
                           set_surface: &mut SetSurface<'_>| {
            let mut rest: &[u8] = run;
            while !rest.is_empty() {
                match super::normalizer::utf8_char_len(rest) {
                    Some(len) => {
                        let ch = std::str::from_utf8(&rest[..len]).unwrap_or("\u{FFFD}");
                        for _ in 1..len {
                            set_surface(text, surfaces, "");
                        }
                        set_surface(text, surfaces, ch);
                        rest = &rest[len..];
                    }
                    None => {
                        set_surface(text, surfaces, "\u{FFFD}");
                        rest = &rest[1..];
                    }
                }
            }
            run.clear();
        };
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for (piece, &id) in pieces.iter().zip(&ids) {
            let piece = piece.as_ref();
            if self.vocab.is(id, PieceType::Byte) {
                byte_run.push(piece_to_byte(piece).unwrap_or(0));
                continue;
            }
            flush_bytes(&mut text, &mut surfaces, &mut byte_run, &mut set_surface);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            let decoded;
            (decoded, bos_ws_seen) = self.decode_piece(piece, id, is_bos_ws);
            set_surface(&mut text, &mut surfaces, &decoded);
        }
        flush_bytes(&mut text, &mut surfaces, &mut byte_run, &mut set_surface);
        if let Some(denormalizer) = &self.denormalizer {
            text = denormalizer.normalize(&text).text;
        }
        out.pieces = pieces
            .iter()
            .zip(&ids)
            .zip(surfaces)
            .map(|((p, &id), (surface, begin, end))| EncodedPiece {
                piece: p.as_ref().to_string(),
                id,
                surface: Some(surface),
                begin,
                end,
            })
            .collect();
        out.text = text;
        out
    }

    fn decode_piece(&self, piece: &str, id: u32, is_bos_ws: bool) -> (String, bool) {
        match self.vocab.kind(id) {
            Some(PieceType::Control) => return (String::new(), false),
            Some(PieceType::Unknown) => {
                let surface = if self.vocab.pieces[id as usize] == piece {
                    self.unk_surface.clone()
                } else {
                    piece.to_string()
                };
                return (surface, false);
            }
            _ => {}
        }
        let mut piece = piece;
        let mut has_bos_ws = false;
        if is_bos_ws && self.decode_strips_bos_ws {
            if let Some(rest) = piece.strip_prefix(SPACE_SYMBOL) {
                piece = rest;
                has_bos_ws = true;
            }
            if self.decode_strips_all_leading_ws {
                has_bos_ws = false;
            }
        }
        (piece.replace(SPACE_SYMBOL, " "), has_bos_ws)
    }
}

/// Byte ranges covering `normalized`, each a run of whole words of
/// [`model::independent_words`] at least `min_bytes` long (the last may be shorter).
pub(super) fn chunk_at_word_starts(normalized: &[u8], min_bytes: usize) -> Vec<(usize, usize)> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for (_, end) in model::independent_words(normalized) {
        if end - start >= min_bytes {
            chunks.push((start, end));
            start = end;
        }
    }
    if start < normalized.len() || chunks.is_empty() {
        chunks.push((start, normalized.len()));
    }
    chunks
}

/// A uniform [0, 1) source for BPE-dropout.
fn make_rng_fn(options: &EncodeOptions, seed: Option<u64>) -> impl FnMut() -> f64 {
    let mut rng = if options.enable_sampling { Some(make_rng(seed)) } else { None };
    move || rng.as_mut().map_or(1.0, |r| r.gen::<f64>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_and_end_at_word_starts() {
        let text = "▁a▁▁bc▁d▁▁▁efgh▁i▁j".repeat(50);
        for min_bytes in [1, 5, 17, 200, 10_000] {
            let chunks = chunk_at_word_starts(text.as_bytes(), min_bytes);
            assert_eq!(chunks.first().map(|c| c.0), Some(0));
            assert_eq!(chunks.last().map(|c| c.1), Some(text.len()));
            for pair in chunks.windows(2) {
                assert_eq!(pair[0].1, pair[1].0);
                // a chunk ends where a word of `independent_words` ends (a ▁ run starts)
                assert!(text[pair[0].1..].starts_with(SPACE_SYMBOL));
                assert!(!text[..pair[0].1].ends_with(SPACE_SYMBOL));
                assert!(pair[0].1 - pair[0].0 >= min_bytes);
            }
        }
        assert_eq!(chunk_at_word_starts(b"", 4), vec![(0, 0)]);
    }
}
