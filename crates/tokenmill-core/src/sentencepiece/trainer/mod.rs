//! `SentencePieceTrainer`: the trainer interface every model type shares, laid out as
//! sentencepiece lays out its trainers (trainer_interface.cc, sentencepiece_trainer.cc, one
//! file per model type).
//!
//! - here: the entry ([`train`], [`train_with`]) — the spec's checks, the meta pieces
//!   (`InitMetaPieces`), character coverage, the piece validity rule (`IsValidSentencePiece`)
//!   and the dispatch to the model type's trainer;
//! - `sentences`: sentence loading (`LoadSentences`): filtering, sampling, normalization (and
//!   the normalizer spec a training fills in), meta pieces replaced by a boundary, words counted;
//! - `model_file`: the trained `.model` (`Serialize`) and the `.vocab` text beside it;
//! - `flags`: sentencepiece's options (`--name=value`) set on the specs;
//! - `input`: the input files (text or tsv), line by line;
//! - the model types: `bpe` (a merge rule on `trainers::merge_loop`), `char`, `word`, and
//!   `unigram` (sentencepiece's default, over `trainers::unigram`).
//!
//! A model type's file gets the counted words and the spec and returns the learned pieces with
//! their scores; it may import this interface (`super`) and the engines in `trainers`, never
//! another model type's file. The interface may import the rest of `sentencepiece` (proto,
//! normalizer, model), `trainers::word_counts` and `utils`.
mod bpe;
mod char;
mod flags;
mod input;
mod model_file;
mod sentences;
mod unigram;
mod word;

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use unicode_script::{Script, UnicodeScript};

pub use flags::{parse_flags, set_option};
pub use input::read_inputs;
pub use model_file::vocab_file_text;
pub use sentences::{prepare_normalizer_spec, Pretokenizer};

use super::model::byte_to_piece;
use super::proto::{ModelProto, ModelType, NormalizerSpec, PieceType, TrainerSpec};
use crate::error::{Error, Result};
use model_file::serialize;
use sentences::{load_words, WordSplit};

/// Stands for characters outside the character coverage (SentencePiece's kUNKChar).
const UNK_CHAR: char = '\u{2585}';
const WS_CHAR: char = '\u{2581}';
/// Replaces meta pieces in training sentences (a boundary no piece may cross).
const BOUNDARY_CHAR: char = '\t';

/// The meta pieces (unk/bos/eos/pad, control, user-defined, byte) by id, with their types.
type MetaPieces = BTreeMap<i32, (String, PieceType)>;

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidArgument(message.into())
}

/// The meta pieces (unk/bos/eos/pad, control, user-defined, byte) by id (`InitMetaPieces`).
fn meta_pieces(spec: &TrainerSpec) -> Result<MetaPieces> {
    let mut meta = MetaPieces::new();
    let vocab_size = spec.vocab_size();
    let unk_piece = spec.unk_piece().to_string();
    let mut has_unk = false;
    for (id, piece) in [
        (spec.unk_id(), spec.unk_piece()),
        (spec.bos_id(), spec.bos_piece()),
        (spec.eos_id(), spec.eos_piece()),
        (spec.pad_id(), spec.pad_piece()),
    ] {
        if id < 0 {
            continue;
        }
        if id >= vocab_size || meta.contains_key(&id) || (has_unk && piece == unk_piece) {
            return Err(invalid(format!(
                "the id {id} of {piece:?} is out of range or used twice (vocab_size {vocab_size})"
            )));
        }
        let kind = if piece == unk_piece {
            has_unk = true;
            PieceType::Unknown
        } else {
            PieceType::Control
        };
        meta.insert(id, (piece.to_string(), kind));
    }
    if !has_unk {
        return Err(invalid(format!("{unk_piece} must be defined (unk_id must be >= 0)")));
    }
    let mut seen = FxHashSet::default();
    let mut next_id = 0;
    let mut add = |meta: &mut MetaPieces, w: &str, kind: PieceType| -> Result<()> {
        if !seen.insert(w.to_string()) {
            return Err(invalid(format!(
                "{w} is already defined. duplicated symbols are not allowed."
            )));
        }
        if w == unk_piece {
            return Err(invalid(format!(
                "{unk_piece} must not be defined with --control_symbols \
                and --user_defined_symbols."
            )));
        }
        let special = [
            (spec.bos_piece(), spec.bos_id()),
            (spec.eos_piece(), spec.eos_id()),
            (spec.pad_piece(), spec.pad_id()),
        ];
        if let Some(&(_, id)) = special.iter().find(|(p, id)| *p == w && *id >= 0) {
            if let Some(entry) = meta.get_mut(&id) {
                entry.1 = kind;
            }
        } else {
            while meta.contains_key(&next_id) {
                next_id += 1;
            }
            meta.insert(next_id, (w.to_string(), kind));
        }
        Ok(())
    };
    for w in &spec.control_symbols {
        add(&mut meta, w, PieceType::Control)?;
    }
    for w in &spec.user_defined_symbols {
        add(&mut meta, w, PieceType::UserDefined)?;
    }
    if spec.byte_fallback() {
        for b in 0..=255u8 {
            add(&mut meta, &byte_to_piece(b), PieceType::Byte)?;
        }
    }
    Ok(meta)
}

/// SentencePiece's `IsValidSentencePiece`: length, script consistency, digits and ▁ placement.
fn is_valid_piece(spec: &TrainerSpec, chars: &[char]) -> bool {
    if chars.is_empty() || chars.len() > spec.max_sentencepiece_length().max(0) as usize {
        return false;
    }
    let all_ws = chars.iter().all(|&c| c == WS_CHAR);
    // `None` is "any script" (SentencePiece's kAnyType).
    let mut prev: Option<Script> = None;
    let last = chars.len() - 1;
    for (pos, &c) in chars.iter().enumerate() {
        if c == UNK_CHAR || c == '\0' || c == BOUNDARY_CHAR || c == ' ' {
            return false;
        }
        if c == WS_CHAR {
            if !spec.allow_whitespace_only_pieces() || !all_ws {
                let by_ws = spec.split_by_whitespace();
                let bad = if spec.treat_whitespace_as_suffix() {
                    pos < last && (by_ws || pos == 0)
                } else {
                    pos > 0 && (by_ws || pos == last)
                };
                if bad {
                    return false;
                }
            }
            continue;
        }
        let mut script = Some(match c.script() {
            Script::Hiragana | Script::Katakana => Script::Han,
            _ if c == '\u{30FC}' => Script::Han,
            s => s,
        });
        if script == Some(Script::Inherited) {
            script = prev;
        }
        let is_digit = c.is_numeric()
            && unicode_general_category::get_general_category(c)
                == unicode_general_category::GeneralCategory::DecimalNumber;
        if !spec.split_by_number() && is_digit {
            script = None;
        }
        if spec.split_digits() && is_digit && chars.len() > 1 {
            return false;
        }
        if spec.split_by_unicode_script() && script.is_some() && prev.is_some() && prev != script {
            return false;
        }
        prev = script;
    }
    true
}

/// Sentences shorter than this (in bytes) are not checked by [`check_sentence_memory`].
const CHECKED_SENTENCE_BYTES: usize = 1 << 20;

/// Checks, before anything is built from it, that a training sentence of `bytes` bytes (within
/// `max_sentence_length`) can be trained on: a sentence is one word for the trainer when it has
/// no whitespace, and its tables take memory in proportion to its length — at least
/// [`memory_per_byte`] bytes a byte. A size the system refuses (a trial reservation, released
/// at once and never written) is an error saying so, where an allocation during training
/// would abort the process.
fn check_sentence_memory(spec: &TrainerSpec, bytes: usize) -> Result<()> {
    if bytes < CHECKED_SENTENCE_BYTES || bytes > spec.max_sentence_length().max(0) as usize {
        return Ok(());
    }
    let kind = ModelType::try_from(spec.model_type.unwrap_or(ModelType::Unigram as i32))
        .unwrap_or(ModelType::Unigram);
    let need = bytes.saturating_mul(memory_per_byte(kind));
    if crate::utils::can_allocate(need) {
        return Ok(());
    }
    Err(invalid(format!(
        "a training sentence of {bytes} bytes needs about {need} bytes of memory to train a \
            {kind:?} model on, more than can be allocated: split it into shorter lines or lower \
            max_sentence_length (now {})",
        spec.max_sentence_length()
    )))
}

/// The least memory training takes per byte of one long word (measured on runs of one letter
/// and of random letters): Unigram its suffix array (~12 bytes) and EM tables (16–24 bytes),
/// BPE its symbols and pairs, word and char models a copy or two of the text.
fn memory_per_byte(kind: ModelType) -> usize {
    match kind {
        ModelType::Unigram | ModelType::Bpe => 24,
        ModelType::Word | ModelType::Char => 4,
    }
}

/// Sorts by count (descending), then key (ascending): SentencePiece's `Sorted`.
fn sorted_by_count<K: Ord + Clone>(map: impl IntoIterator<Item = (K, u64)>) -> Vec<(K, u64)> {
    let mut v: Vec<(K, u64)> = map.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Trains a model from `sentences` (already split into lines; an error item stops training).
/// `spec.model_type` picks the algorithm.
pub fn train(
    spec: TrainerSpec,
    normalizer_spec: NormalizerSpec,
    sentences: impl Iterator<Item = Result<String>>,
) -> Result<ModelProto> {
    train_with(spec, normalizer_spec, sentences, None)
}

/// [`train`] with a [`Pretokenizer`].
pub fn train_with(
    mut spec: TrainerSpec,
    mut normalizer_spec: NormalizerSpec,
    sentences: impl Iterator<Item = Result<String>>,
    pretokenizer: Option<&Pretokenizer>,
) -> Result<ModelProto> {
    if pretokenizer.is_some() && !spec.pretokenization_delimiter().is_empty() {
        return Err(invalid("pretokenizer and pretokenization_delimiter are mutually exclusive"));
    }
    let kind = ModelType::try_from(spec.model_type.unwrap_or(ModelType::Unigram as i32))
        .map_err(|_| invalid("unknown model_type"))?;
    if spec.vocab_size() <= 0 {
        return Err(invalid("vocab_size must be > 0"));
    }
    if !(0.0..=1.0).contains(&spec.character_coverage()) || spec.character_coverage() <= 0.0 {
        return Err(invalid("character_coverage must be in (0, 1]"));
    }
    if spec.max_sentencepiece_length() <= 0 || spec.max_sentencepiece_length() > 512 {
        return Err(invalid("max_sentencepiece_length must be in 1..=512"));
    }
    if !normalizer_spec.escape_whitespaces() {
        return Err(invalid("escape_whitespaces must be true to train"));
    }
    let meta = meta_pieces(&spec)?;
    prepare_normalizer_spec(&mut normalizer_spec)?;
    let words = load_words(
        &spec,
        &normalizer_spec,
        &meta,
        WordSplit::of(&spec, kind),
        pretokenizer,
        sentences,
    )?;
    let (words, required_chars) = apply_character_coverage(&spec, words)?;
    let meta_count = meta.len() as i64;
    if !matches!(kind, ModelType::Word | ModelType::Char)
        && required_chars.len() as i64 + meta_count > spec.vocab_size() as i64
    {
        return Err(invalid(format!(
            "Vocabulary size is smaller than required_chars. {} vs {}. Increase vocab_size or \
                decrease character_coverage with --character_coverage option.",
            spec.vocab_size(),
            required_chars.len() as i64 + meta_count
        )));
    }
    let budget = spec.vocab_size() as i64 - meta_count;
    let final_pieces = match kind {
        ModelType::Bpe => bpe::train_bpe(
            &spec,
            words,
            &required_chars,
            (budget - required_chars.len() as i64).max(0) as usize,
        ),
        ModelType::Char => char::train_char(&spec, &required_chars, budget.max(0) as usize),
        ModelType::Word => word::train_word(&spec, words, budget.max(0) as usize),
        ModelType::Unigram => unigram::train_unigram(&spec, words, meta.len(), BOUNDARY_CHAR)?,
    };
    if spec.use_all_vocab() && matches!(kind, ModelType::Char | ModelType::Word) {
        spec.vocab_size = Some(final_pieces.len() as i32 + meta.len() as i32);
    }
    serialize(spec, normalizer_spec, &meta, final_pieces)
}

/// Words with their counts.
type WordCounts = Vec<(String, u64)>;

/// Character coverage: the most frequent characters that cover `character_coverage` of the
/// corpus are required; the others become ▅ in the sentences.
fn apply_character_coverage(
    spec: &TrainerSpec,
    mut words: WordCounts,
) -> Result<(WordCounts, Vec<(char, u64)>)> {
    let mut counts: FxHashMap<char, (bool, u64)> = FxHashMap::default();
    for c in spec.required_chars().chars().filter(|&c| c != '\0') {
        counts.entry(c).or_default().0 = true;
    }
    let mut all: u64 = 0;
    for (s, freq) in &words {
        for c in s.chars().filter(|&c| c != '\0' && c != ' ') {
            counts.entry(c).or_default().1 += freq;
            all += freq;
        }
    }
    let mut ordered: Vec<(char, (bool, u64))> = counts.into_iter().collect();
    ordered.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut required: FxHashMap<char, u64> = FxHashMap::default();
    let mut accumulated: u64 = 0;
    for (c, (_, count)) in ordered {
        let coverage = accumulated as f64 / all.max(1) as f64;
        if !spec.use_all_vocab() && coverage >= spec.character_coverage() as f64 {
            break;
        }
        accumulated += count;
        if c == BOUNDARY_CHAR {
            continue;
        }
        required.insert(c, count);
    }
    if required.contains_key(&UNK_CHAR) {
        return Err(invalid("the corpus holds U+2585, which SentencePiece reserves"));
    }
    for (s, _) in &mut words {
        if s.chars().any(|c| !required.contains_key(&c)) {
            *s = s.chars().map(|c| if required.contains_key(&c) { c } else { UNK_CHAR }).collect();
        }
    }
    Ok((words, sorted_by_count(required)))
}
