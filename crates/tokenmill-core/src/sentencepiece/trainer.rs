//! `SentencePieceTrainer` for the bpe, char and word model types (trainer_interface.cc,
//! bpe_model_trainer.cc, char_model_trainer.cc, word_model_trainer.cc): sentence loading and
//! normalization, character coverage, meta pieces, and a `.model` that SentencePiece loads.
//! The unigram type (the default) shares this pipeline; its algorithm is in `unigram_trainer.rs`.
//!
//! BPE differs from SentencePiece in one deliberate way: SentencePiece looks for the best pair
//! only among an "active" 5% of the candidates, refreshed every 100 merges (an approximation);
//! tokenmill always takes the true best (highest frequency, then fewer characters, then the
//! smaller string — SentencePiece's tie-breaking), with a lazily-updated max-heap.
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::io::BufRead;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rustc_hash::{FxHashMap, FxHashSet};
use unicode_script::{Script, UnicodeScript};

use super::darts::DoubleArray;
use super::model::{byte_to_piece, split_into_words};
use super::normalizer::SpNormalizer;
use super::proto::{ModelProto, ModelType, NormalizerSpec, PieceType, SentencePiece, TrainerSpec};
use super::rules;
use crate::error::{Error, Result};
use crate::trainers::word_counts::count_words;

/// Stands for characters outside the character coverage (SentencePiece's kUNKChar).
const UNK_CHAR: char = '\u{2585}';
const WS_CHAR: char = '\u{2581}';
/// Replaces meta pieces in training sentences (a boundary no piece may cross).
const BOUNDARY_CHAR: char = '\t';

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidArgument(message.into())
}

/// Fills in the normalizer spec of a model to train: the charsmap of the named rules (or of
/// `normalization_rule_tsv`), as SentencePiece's `Builder` does.
pub fn prepare_normalizer_spec(spec: &mut NormalizerSpec) -> Result<()> {
    let has_tsv = spec.normalization_rule_tsv.as_deref().is_some_and(|p| !p.is_empty());
    if spec.precompiled_charsmap.is_some() && !has_tsv {
        // A spec that comes compiled (the `normalizer=` of training) keeps its rules.
        return Ok(());
    }
    let charsmap = match spec.normalization_rule_tsv.as_deref().filter(|p| !p.is_empty()) {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            spec.name = Some("user_defined".into());
            rules::compile_charsmap(&rules::rules_from_tsv(&text).map_err(|e| e.in_file(path))?)?
        }
        None => {
            let name = spec.name.clone().unwrap_or_else(|| "nmt_nfkc".into());
            let charsmap = rules::builtin_charsmap(&name)?.to_vec();
            spec.name = Some(name);
            charsmap
        }
    };
    spec.precompiled_charsmap = Some(charsmap);
    Ok(())
}

/// The meta pieces (unk/bos/eos/pad, control, user-defined, byte) by id (`InitMetaPieces`).
fn meta_pieces(spec: &TrainerSpec) -> Result<std::collections::BTreeMap<i32, (String, PieceType)>> {
    let mut meta = std::collections::BTreeMap::new();
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
    let mut add = |meta: &mut std::collections::BTreeMap<i32, (String, PieceType)>,
                   w: &str,
                   kind: PieceType|
     -> Result<()> {
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

/// A caller's pretokenizer (sentencepiece's `TrainerComponents::pretokenizer`): it gets each
/// normalized training sentence and returns its chunks; no piece is learnt across two chunks.
pub struct Pretokenizer<'a> {
    pub split: &'a (dyn Fn(&str) -> Result<Vec<String>> + Sync),
    /// Whether the chunks may differ from the sentence when joined (otherwise an error).
    pub allow_inconsistent: bool,
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
        ModelType::Bpe => train_bpe(
            &spec,
            words,
            &required_chars,
            (budget - required_chars.len() as i64).max(0) as usize,
        ),
        ModelType::Char => train_char(&spec, &required_chars, budget.max(0) as usize),
        ModelType::Word => train_word(&spec, words, budget.max(0) as usize),
        ModelType::Unigram => {
            super::unigram_trainer::train_unigram(&spec, words, meta.len(), BOUNDARY_CHAR)?
        }
    };
    if spec.use_all_vocab() && matches!(kind, ModelType::Char | ModelType::Word) {
        spec.vocab_size = Some(final_pieces.len() as i32 + meta.len() as i32);
    }
    serialize(spec, normalizer_spec, &meta, final_pieces)
}

/// How a model type cuts normalized sentences into the words it trains on (`SplitIntoWords`
/// with the spec's whitespace options; sentencepiece's word and char trainers use the
/// defaults). `None`: the whole sentence is one unit (`split_by_whitespace=false`).
#[derive(Clone, Copy)]
struct WordSplit(Option<(bool, bool)>);

impl WordSplit {
    fn of(spec: &TrainerSpec, kind: ModelType) -> Self {
        match kind {
            ModelType::Word | ModelType::Char => WordSplit(Some((false, false))),
            ModelType::Bpe | ModelType::Unigram if !spec.split_by_whitespace() => WordSplit(None),
            ModelType::Bpe | ModelType::Unigram => WordSplit(Some((
                spec.treat_whitespace_as_suffix(),
                spec.allow_whitespace_only_pieces(),
            ))),
        }
    }

    fn split(self, text: &str, emit: &mut dyn FnMut(&str)) {
        match self.0 {
            None => emit(text),
            Some((suffix, whitespace_only)) => {
                for (start, end) in split_into_words(text, suffix, whitespace_only) {
                    emit(&text[start..end]);
                }
            }
        }
    }
}

/// Reads, filters, samples and normalizes the training sentences (`LoadSentences`), with meta
/// pieces replaced by the boundary character, and counts their words (`split`): every trainer
/// works on words with counts, so no sentence is kept after it is counted. Sentences stream
/// through in chunks normalized in parallel; only `input_sentence_size` sampling keeps the
/// sampled raw sentences (as sentencepiece does). Returns (word, count) pairs, most frequent
/// first (ties: text).
fn load_words(
    spec: &TrainerSpec,
    normalizer_spec: &NormalizerSpec,
    meta: &std::collections::BTreeMap<i32, (String, PieceType)>,
    split: WordSplit,
    pretokenizer: Option<&Pretokenizer>,
    sentences: impl Iterator<Item = Result<String>>,
) -> Result<Vec<(String, u64)>> {
    let max_len = spec.max_sentence_length().max(0) as usize;
    let accept = |s: &str| !(s.is_empty() || s.len() > max_len || s.contains(UNK_CHAR));
    let normalizer = SpNormalizer::new(normalizer_spec, spec.treat_whitespace_as_suffix(), None)?;
    let meta_matcher = MetaMatcher::new(meta.values().map(|(p, _)| p.as_str()))?;
    let delimiter = spec.pretokenization_delimiter();
    let boundary = BOUNDARY_CHAR.to_string();
    // The delimiter or the pretokenizer's chunk ends become boundaries no piece crosses.
    let pretokenize = |text: std::borrow::Cow<'_, str>| -> Result<String> {
        if let Some(p) = pretokenizer {
            let chunks = (p.split)(&text)?;
            if !p.allow_inconsistent && chunks.concat() != *text {
                return Err(invalid(format!(
                    "Pretokenized output mismatch: joined={:?}, original={:?}. Set \
                        allow_inconsistent_pretokenization=True to bypass.",
                    chunks.concat(),
                    text
                )));
            }
            return Ok(chunks.join(&boundary));
        }
        Ok(if delimiter.is_empty() {
            text.into_owned()
        } else {
            text.replace(delimiter, &boundary)
        })
    };
    let process = |sentence: &str, emit: &mut dyn FnMut(&str)| -> Result<()> {
        if accept(sentence) {
            // Text only (no alignment), into this worker's buffer: no allocation per sentence.
            return NORMALIZED.with_borrow_mut(|buffer| {
                normalizer.normalize_into(sentence, buffer);
                let text = String::from_utf8_lossy(buffer);
                let text = meta_matcher.replace(&text);
                if pretokenizer.is_none() && delimiter.is_empty() {
                    split.split(&text, emit);
                } else {
                    split.split(&pretokenize(text)?, emit);
                }
                Ok(())
            });
        }
        Ok(())
    };
    let counts = if spec.input_sentence_size() > 0 {
        count_words(
            sample_sentences(spec, sentences.filter(|s| s.as_ref().map_or(true, |s| accept(s))))?
                .into_iter()
                .map(Ok),
            process,
            |_| {},
        )?
    } else {
        count_words(sentences, process, |_| {})?
    };
    let mut words: Vec<(String, u64)> = counts.into_iter().filter(|(w, _)| !w.is_empty()).collect();
    if words.is_empty() {
        return Err(invalid(
            "the training corpus is empty (no non-empty sentence after filtering \
            and normalization)",
        ));
    }
    // A fixed order (most frequent first, ties by text) for every trainer.
    crate::trainers::unigram::seeds::sort_by_count(&mut words);
    Ok(words)
}

/// `input_sentence_size` sentences: the first ones, or with `shuffle_input_sentence` a uniform
/// sample (reservoir sampling, seeded) in shuffled order.
fn sample_sentences(
    spec: &TrainerSpec,
    sentences: impl Iterator<Item = Result<String>>,
) -> Result<Vec<String>> {
    let limit = spec.input_sentence_size() as usize;
    let mut kept: Vec<String> = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed);
    for (seen, sentence) in sentences.enumerate() {
        let sentence = sentence?;
        if kept.len() < limit {
            kept.push(sentence);
        } else if spec.shuffle_input_sentence() {
            // Every sentence is kept with probability limit / seen.
            let slot = rand::Rng::gen_range(&mut rng, 0..seen + 1);
            if slot < limit {
                kept[slot] = sentence;
            }
        } else {
            break;
        }
    }
    if spec.shuffle_input_sentence() {
        kept.shuffle(&mut rng);
    }
    Ok(kept)
}

thread_local! {
    /// A training worker's buffer for normalized sentences.
    static NORMALIZED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Finds the meta pieces in training sentences (SentencePiece's `GlobalReplace` of each).
struct MetaMatcher {
    trie: Option<DoubleArray>,
    /// The first bytes of the pieces: a sentence without any of them (nearly all) is left as is
    /// without a trie lookup per character.
    first_bytes: [bool; 256],
}

impl MetaMatcher {
    fn new<'a>(pieces: impl Iterator<Item = &'a str>) -> Result<Self> {
        let keys: Vec<(&[u8], u32)> = pieces
            .map(|p| (p.as_bytes(), 0))
            .filter(|(k, _)| !k.is_empty() && !k.contains(&0))
            .collect();
        let mut first_bytes = [false; 256];
        keys.iter().for_each(|(k, _)| first_bytes[k[0] as usize] = true);
        Ok(MetaMatcher {
            trie: if keys.is_empty() { None } else { Some(DoubleArray::build(&keys)?) },
            first_bytes,
        })
    }

    /// `text` with every occurrence of a meta piece (longest first) replaced by the boundary
    /// character.
    fn replace<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        let Some(trie) = &self.trie else { return text.into() };
        if !text.bytes().any(|b| self.first_bytes[b as usize]) {
            return text.into();
        }
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut pos = 0;
        while pos < bytes.len() {
            if let Some((_, len)) = trie.longest_prefix(&bytes[pos..]) {
                out.push(BOUNDARY_CHAR);
                pos += len;
            } else {
                let c = text[pos..].chars().next().unwrap_or(' ');
                out.push(c);
                pos += c.len_utf8();
            }
        }
        out.into()
    }
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

fn train_char(spec: &TrainerSpec, required: &[(char, u64)], budget: usize) -> Vec<(String, f32)> {
    let sum: u64 = required.iter().map(|(_, n)| n).sum();
    let logsum = (sum as f32).ln();
    required
        .iter()
        .take(if spec.use_all_vocab() { usize::MAX } else { budget })
        .map(|(c, n)| (c.to_string(), (*n as f32).ln() - logsum))
        .collect()
}

/// The most frequent words (already split, [`WordSplit`]; masking may have made some equal).
fn train_word(spec: &TrainerSpec, words: Vec<(String, u64)>, budget: usize) -> Vec<(String, f32)> {
    let mut freq: FxHashMap<String, u64> = FxHashMap::default();
    for (w, n) in words {
        *freq.entry(w).or_default() += n;
    }
    let sum: u64 = freq.values().sum();
    let logsum = (sum as f32).ln();
    sorted_by_count(freq)
        .into_iter()
        .filter(|(w, _)| !w.contains(UNK_CHAR))
        .take(if spec.use_all_vocab() { usize::MAX } else { budget })
        .map(|(w, n)| (w, (n as f32).ln() - logsum))
        .collect()
}

/// SentencePiece's BPE training on words (sentences split at whitespace, [`WordSplit`]): merges
/// the most frequent valid pair until `merges` pieces are learned, then appends the required
/// characters.
fn train_bpe(
    spec: &TrainerSpec,
    words: Vec<(String, u64)>,
    required: &[(char, u64)],
    merges: usize,
) -> Vec<(String, f32)> {
    // Word order does not matter: the best pair is found by a total order.
    let mut state = SpBpe::new(spec, words.iter().map(|(w, n)| (w.as_str(), *n)).collect());
    drop(words);
    let mut final_pieces: Vec<(String, f32)> = Vec::with_capacity(merges + required.len());
    let mut seen_texts: FxHashSet<String> = FxHashSet::default();
    while final_pieces.len() < merges {
        let Some(pair) = state.best_pair() else { break };
        let text = state.pair_text(state.pairs[pair as usize].pair);
        if !seen_texts.insert(text.clone()) {
            // The same string as an earlier piece (made of other parts): never merged.
            state.forbid(pair);
            continue;
        }
        final_pieces.push((text.clone(), -(final_pieces.len() as f32)));
        state.merge(pair, text);
    }
    for (c, _) in required {
        final_pieces.push((c.to_string(), -(final_pieces.len() as f32)));
    }
    final_pieces
}

/// A candidate merge in the heap, best first: higher count, then fewer characters, then the
/// smaller text (SentencePiece's order). The text is compared here by its first 16 bytes;
/// candidates equal on all three are settled on their full text when popped
/// ([`SpBpe::best_pair`]). Keeping no string in the heap keeps pushes and pops cheap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Candidate {
    count: u64,
    chars: u32,
    /// The pair's index in [`SpBpe::pairs`].
    index: u32,
    prefix: u128,
}

impl Candidate {
    fn same_rank(&self, other: &Candidate) -> bool {
        (self.count, self.chars, self.prefix) == (other.count, other.chars, other.prefix)
    }
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| Reverse(self.chars).cmp(&Reverse(other.chars)))
            .then_with(|| Reverse(self.prefix).cmp(&Reverse(other.prefix)))
            .then_with(|| self.index.cmp(&other.index))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

fn pack(a: u32, b: u32) -> u64 {
    ((a as u64) << 32) | b as u64
}

fn unpack(p: u64) -> (u32, u32) {
    ((p >> 32) as u32, p as u32)
}

/// A pair that may become a piece: its symbols, how often it occurs, and the words it occurs in
/// (ascending; may hold words that lost it since). A pair of existing symbols never becomes
/// adjacent later (merges only fuse neighbours into new symbols), so each list is filled in one
/// pass over ascending words: it stays sorted without duplicates.
struct PairStats {
    pair: u64,
    count: u64,
    words: Vec<u32>,
    /// The merge that last pushed this pair as created (see [`SpBpe::merge`]).
    pushed_at: u32,
}

/// Marks a pair that may not become a piece in [`SpBpe::index`].
const INVALID_PAIR: u32 = u32::MAX;

/// The state of SentencePiece-BPE training: words as runs of symbol ids in one arena (merged in
/// place), the valid pairs with their counts and words (one hash lookup per pair update), and a
/// lazily updated max-heap of candidates. Invariant: every counted pair has a heap entry with at
/// least its current count (only pairs that a merge creates gain counts, and they are pushed
/// after the merge; an entry whose count went down is pushed back with the current count when
/// popped).
struct SpBpe<'a> {
    spec: &'a TrainerSpec,
    /// Text and length in characters of each symbol id.
    texts: Vec<String>,
    chars: Vec<u32>,
    unk_symbol: Option<u32>,
    arena: Vec<u32>,
    start: Vec<usize>,
    len: Vec<u32>,
    count: Vec<u64>,
    /// Every pair seen: its index in `pairs`, or [`INVALID_PAIR`] (`is_valid_piece` said no,
    /// cached).
    index: FxHashMap<u64, u32>,
    pairs: Vec<PairStats>,
    heap: BinaryHeap<Candidate>,
    /// How many merges were made (stamps `PairStats::pushed_at`).
    merges: u32,
}

impl<'a> SpBpe<'a> {
    fn new(spec: &'a TrainerSpec, words: Vec<(&str, u64)>) -> Self {
        let mut state = SpBpe {
            spec,
            texts: Vec::new(),
            chars: Vec::new(),
            unk_symbol: None,
            arena: Vec::new(),
            start: Vec::with_capacity(words.len()),
            len: Vec::with_capacity(words.len()),
            count: Vec::with_capacity(words.len()),
            index: FxHashMap::default(),
            pairs: Vec::new(),
            heap: BinaryHeap::new(),
            merges: 0,
        };
        let mut char_ids: FxHashMap<char, u32> = FxHashMap::default();
        for (w, n) in &words {
            let start = state.arena.len();
            for c in w.chars() {
                let id = *char_ids.entry(c).or_insert_with(|| {
                    state.texts.push(c.to_string());
                    state.chars.push(1);
                    state.texts.len() as u32 - 1
                });
                state.arena.push(id);
            }
            state.start.push(start);
            state.len.push((state.arena.len() - start) as u32);
            state.count.push(*n);
        }
        state.unk_symbol = char_ids.get(&UNK_CHAR).copied();
        for w in 0..state.start.len() {
            let (start, len) = (state.start[w], state.len[w] as usize);
            for i in start + 1..start + len {
                let pair = pack(state.arena[i - 1], state.arena[i]);
                state.add(pair, state.count[w], w as u32);
            }
        }
        let candidates: Vec<Candidate> =
            (0..state.pairs.len() as u32).map(|i| state.candidate(i)).collect();
        state.heap = candidates.into();
        state
    }

    fn is_valid(&self, pair: u64) -> bool {
        let (a, b) = unpack(pair);
        Some(a) != self.unk_symbol && Some(b) != self.unk_symbol && {
            let joined: Vec<char> =
                self.texts[a as usize].chars().chain(self.texts[b as usize].chars()).collect();
            is_valid_piece(self.spec, &joined)
        }
    }

    /// Counts `n` more occurrences of `pair` in word `w` (valid pairs only); returns the pair's
    /// index if it counted.
    fn add(&mut self, pair: u64, n: u64, w: u32) -> Option<u32> {
        let index = match self.index.get(&pair) {
            Some(&index) => index,
            None => {
                let index = if self.is_valid(pair) {
                    self.pairs.push(PairStats {
                        pair,
                        count: 0,
                        words: Vec::new(),
                        pushed_at: u32::MAX,
                    });
                    self.pairs.len() as u32 - 1
                } else {
                    INVALID_PAIR
                };
                self.index.insert(pair, index);
                index
            }
        };
        let stats = self.pairs.get_mut(index as usize)?;
        stats.count += n;
        if stats.words.last() != Some(&w) {
            stats.words.push(w);
        }
        Some(index)
    }

    /// Counts `n` fewer occurrences of `pair` (if it is counted at all).
    fn subtract(&mut self, pair: u64, n: u64) {
        if let Some(stats) = self.index.get(&pair).and_then(|&i| self.pairs.get_mut(i as usize)) {
            stats.count = stats.count.saturating_sub(n);
        }
    }

    fn pair_text(&self, pair: u64) -> String {
        let (a, b) = unpack(pair);
        [self.texts[a as usize].as_str(), self.texts[b as usize].as_str()].concat()
    }

    /// The heap entry of pair `index` with its current count.
    fn candidate(&self, index: u32) -> Candidate {
        let stats = &self.pairs[index as usize];
        let (a, b) = unpack(stats.pair);
        let mut prefix = [0u8; 16];
        let bytes = self.texts[a as usize].bytes().chain(self.texts[b as usize].bytes());
        for (slot, byte) in prefix.iter_mut().zip(bytes) {
            *slot = byte;
        }
        Candidate {
            count: stats.count,
            chars: self.chars[a as usize] + self.chars[b as usize],
            index,
            prefix: u128::from_be_bytes(prefix),
        }
    }

    /// Whether a popped entry is up to date; a stale one is pushed back with the current count
    /// (or dropped when its pair is gone).
    fn is_current(&mut self, entry: &Candidate) -> bool {
        let current = self.pairs[entry.index as usize].count;
        if current == entry.count && current > 0 {
            return true;
        }
        if current > 0 {
            let fresh = self.candidate(entry.index);
            self.heap.push(fresh);
        }
        false
    }

    /// The best pair: the highest count, then the fewest characters, then the smallest text,
    /// then (one text made in two ways) the largest pair of ids.
    fn best_pair(&mut self) -> Option<u32> {
        loop {
            let top = self.heap.pop()?;
            if !self.is_current(&top) {
                continue;
            }
            let mut tied = vec![top];
            while let Some(next) = self.heap.peek().copied() {
                if !next.same_rank(&top) {
                    break;
                }
                self.heap.pop();
                if self.is_current(&next) {
                    tied.push(next);
                }
            }
            let pair = |c: &Candidate| self.pairs[c.index as usize].pair;
            let best = (0..tied.len())
                .min_by(|&i, &j| {
                    self.pair_text(pair(&tied[i]))
                        .cmp(&self.pair_text(pair(&tied[j])))
                        .then(pair(&tied[j]).cmp(&pair(&tied[i])))
                })
                .unwrap_or(0);
            let chosen = tied.swap_remove(best);
            self.heap.extend(tied);
            return Some(chosen.index);
        }
    }

    /// Takes pair `index` out of training for good (its text is already a piece).
    fn forbid(&mut self, index: u32) {
        let stats = &mut self.pairs[index as usize];
        stats.count = 0;
        stats.words = Vec::new();
        self.index.insert(stats.pair, INVALID_PAIR);
    }

    /// Merges pair `index` into a new symbol `text` in every word that has it, left to right,
    /// updating only the counts of the neighbouring pairs, and pushes the pairs it created.
    fn merge(&mut self, index: u32, text: String) {
        let (left, right) = unpack(self.pairs[index as usize].pair);
        let merged = self.texts.len() as u32;
        self.chars.push(self.chars[left as usize] + self.chars[right as usize]);
        self.texts.push(text);
        // Gone for good: no `left right` is left in any word after the merge (and subtracting
        // from it below changes nothing).
        self.pairs[index as usize].count = 0;
        let words = std::mem::take(&mut self.pairs[index as usize].words);
        self.merges += 1;
        let mut created: Vec<u32> = Vec::new();
        let mut note_created = |state: &mut Self, counted: Option<u32>| {
            if let Some(i) = counted {
                if state.pairs[i as usize].pushed_at != state.merges {
                    state.pairs[i as usize].pushed_at = state.merges;
                    created.push(i);
                }
            }
        };
        for w in words {
            let (start, n, count) =
                (self.start[w as usize], self.len[w as usize] as usize, self.count[w as usize]);
            let (mut read, mut write) = (0, 0);
            while read < n {
                let here = self.arena[start + read];
                if read + 1 < n && here == left && self.arena[start + read + 1] == right {
                    if write > 0 {
                        let prev = self.arena[start + write - 1];
                        self.subtract(pack(prev, left), count);
                        let counted = self.add(pack(prev, merged), count, w);
                        note_created(self, counted);
                    }
                    if read + 2 < n {
                        let next = self.arena[start + read + 2];
                        self.subtract(pack(right, next), count);
                        let counted = self.add(pack(merged, next), count, w);
                        note_created(self, counted);
                    }
                    self.arena[start + write] = merged;
                    read += 2;
                } else {
                    self.arena[start + write] = here;
                    read += 1;
                }
                write += 1;
            }
            self.len[w as usize] = write as u32;
        }
        for i in created {
            if self.pairs[i as usize].count > 0 {
                let fresh = self.candidate(i);
                self.heap.push(fresh);
            }
        }
    }
}

/// The model proto: meta pieces at their ids, learned pieces in the other slots (`Serialize`).
fn serialize(
    mut spec: TrainerSpec,
    normalizer_spec: NormalizerSpec,
    meta: &std::collections::BTreeMap<i32, (String, PieceType)>,
    final_pieces: Vec<(String, f32)>,
) -> Result<ModelProto> {
    let kind = spec.model_type();
    let mut pieces = Vec::new();
    let mut learned = final_pieces.into_iter();
    let mut dup = FxHashSet::default();
    let mut leftover = false;
    for id in 0..spec.vocab_size() {
        let piece = if let Some((w, t)) = meta.get(&id) {
            SentencePiece::new(w.clone(), 0.0, *t)
        } else if let Some((w, score)) = learned.next() {
            SentencePiece::new(w, score, PieceType::Normal)
        } else {
            leftover = true;
            continue;
        };
        let text = piece.piece.clone().unwrap_or_default();
        if !dup.insert(text.clone()) {
            return Err(invalid(format!("{text} is already defined")));
        }
        if leftover && meta.contains_key(&id) {
            return Err(invalid(format!(
                "meta piece id {id} is beyond the vocabulary the corpus supports"
            )));
        }
        pieces.push(piece);
    }
    // Normal pieces are not typed explicitly in SentencePiece's files.
    for p in &mut pieces {
        if p.r#type == Some(PieceType::Normal as i32) {
            p.r#type = None;
        }
    }
    if !spec.hard_vocab_limit() || kind == ModelType::Char {
        spec.vocab_size = Some(pieces.len() as i32);
    } else if pieces.len() as i32 != spec.vocab_size() {
        return Err(invalid(format!(
            "Vocabulary size too high ({}). Please set it to a value <= {}.",
            spec.vocab_size(),
            pieces.len()
        )));
    }
    let proto = ModelProto {
        pieces,
        trainer_spec: Some(spec),
        normalizer_spec: Some(normalizer_spec),
        self_test_data: None,
        denormalizer_spec: None,
    };
    Ok(proto)
}

/// The `.vocab` file SentencePiece writes beside a model: `piece<TAB>score` per line (the
/// score as C++'s `ostream << float` prints it, `%g`), or only the pieces when
/// `vocabulary_output_piece_score` is false.
pub fn vocab_file_text(proto: &ModelProto) -> String {
    let with_scores =
        proto.trainer_spec.as_ref().is_none_or(|spec| spec.vocabulary_output_piece_score());
    let mut text = String::with_capacity(proto.pieces.len() * 16);
    for piece in &proto.pieces {
        text.push_str(piece.piece.as_deref().unwrap_or(""));
        if with_scores {
            text.push('\t');
            text.push_str(&format_general(piece.score.unwrap_or(0.0) as f64));
        }
        text.push('\n');
    }
    text
}

/// `x` as C's `%g` prints it: 6 significant digits, trailing zeros dropped, in exponent form
/// (`1.5e+06`, `1e-05`) when the exponent is below -4 or at least 6.
fn format_general(x: f64) -> String {
    const PRECISION: i32 = 6;
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // Rounded to 6 significant digits first: the rounding decides the exponent (9.999995 → 10).
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |digits: &str| -> String {
        if digits.contains('.') {
            digits.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            digits.to_string()
        }
    };
    if !(-4..PRECISION).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        trim(&format!("{:.*}", (PRECISION - 1 - exponent) as usize, x))
    }
}

/// The value of a boolean flag ("true"/"false", "1"/"0", "yes"/"no", any case).
fn parse_bool(name: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "t" | "yes" | "y" | "" => Ok(true),
        "false" | "0" | "f" | "no" | "n" => Ok(false),
        _ => Err(invalid(format!("cannot parse \"{value}\" as bool for --{name}"))),
    }
}

fn parse_num<T: std::str::FromStr>(name: &str, value: &str) -> Result<T> {
    value
        .trim()
        .parse()
        .map_err(|_| invalid(format!("cannot parse \"{value}\" as a number for --{name}")))
}

/// Comma-separated values (the Python wrapper writes lists as one CSV row).
fn parse_list(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

/// Sets one of SentencePiece's training flags (`--name=value`) on the specs.
pub fn set_option(
    spec: &mut TrainerSpec,
    normalizer: &mut NormalizerSpec,
    name: &str,
    value: &str,
) -> Result<()> {
    let n = name;
    match name {
        "input" => spec.input = parse_list(value),
        "input_format" => spec.input_format = Some(value.into()),
        "model_prefix" => spec.model_prefix = Some(value.into()),
        "model_type" => {
            let kind = match value.to_ascii_lowercase().as_str() {
                "unigram" => ModelType::Unigram,
                "bpe" => ModelType::Bpe,
                "word" => ModelType::Word,
                "char" => ModelType::Char,
                other => {
                    return Err(invalid(format!(
                        "unknown model_type \"{other}\" (unigram, bpe, word or char)"
                    )))
                }
            };
            spec.model_type = Some(kind as i32);
        }
        "vocab_size" => spec.vocab_size = Some(parse_num(n, value)?),
        "accept_language" => spec.accept_language = parse_list(value),
        "self_test_sample_size" => spec.self_test_sample_size = Some(parse_num(n, value)?),
        "character_coverage" => spec.character_coverage = Some(parse_num(n, value)?),
        "input_sentence_size" => spec.input_sentence_size = Some(parse_num(n, value)?),
        "shuffle_input_sentence" => spec.shuffle_input_sentence = Some(parse_bool(n, value)?),
        "seed_sentencepiece_size" => spec.seed_sentencepiece_size = Some(parse_num(n, value)?),
        "shrinking_factor" => spec.shrinking_factor = Some(parse_num(n, value)?),
        "num_threads" => spec.num_threads = Some(parse_num(n, value)?),
        "num_sub_iterations" => spec.num_sub_iterations = Some(parse_num(n, value)?),
        "max_sentence_length" => spec.max_sentence_length = Some(parse_num(n, value)?),
        "max_sentencepiece_length" => spec.max_sentencepiece_length = Some(parse_num(n, value)?),
        "split_by_unicode_script" => spec.split_by_unicode_script = Some(parse_bool(n, value)?),
        "split_by_whitespace" => spec.split_by_whitespace = Some(parse_bool(n, value)?),
        "split_by_number" => spec.split_by_number = Some(parse_bool(n, value)?),
        "split_digits" => spec.split_digits = Some(parse_bool(n, value)?),
        "treat_whitespace_as_suffix" => {
            spec.treat_whitespace_as_suffix = Some(parse_bool(n, value)?)
        }
        "allow_whitespace_only_pieces" => {
            spec.allow_whitespace_only_pieces = Some(parse_bool(n, value)?)
        }
        "control_symbols" => spec.control_symbols = parse_list(value),
        "user_defined_symbols" => spec.user_defined_symbols = parse_list(value),
        "required_chars" => spec.required_chars = Some(value.into()),
        "byte_fallback" => spec.byte_fallback = Some(parse_bool(n, value)?),
        "vocabulary_output_piece_score" => {
            spec.vocabulary_output_piece_score = Some(parse_bool(n, value)?)
        }
        "hard_vocab_limit" => spec.hard_vocab_limit = Some(parse_bool(n, value)?),
        "use_all_vocab" => spec.use_all_vocab = Some(parse_bool(n, value)?),
        "unk_id" => spec.unk_id = Some(parse_num(n, value)?),
        "bos_id" => spec.bos_id = Some(parse_num(n, value)?),
        "eos_id" => spec.eos_id = Some(parse_num(n, value)?),
        "pad_id" => spec.pad_id = Some(parse_num(n, value)?),
        "unk_piece" => spec.unk_piece = Some(value.into()),
        "bos_piece" => spec.bos_piece = Some(value.into()),
        "eos_piece" => spec.eos_piece = Some(value.into()),
        "pad_piece" => spec.pad_piece = Some(value.into()),
        "unk_surface" => spec.unk_surface = Some(value.into()),
        "train_extremely_large_corpus" => {
            spec.train_extremely_large_corpus = Some(parse_bool(n, value)?)
        }
        "pretokenization_delimiter" => spec.pretokenization_delimiter = Some(value.into()),
        "seed_sentencepieces_file" => spec.seed_sentencepieces_file = Some(value.into()),
        "normalization_rule_name" => normalizer.name = Some(value.into()),
        "normalization_rule_tsv" => normalizer.normalization_rule_tsv = Some(value.into()),
        "add_dummy_prefix" => normalizer.add_dummy_prefix = Some(parse_bool(n, value)?),
        "remove_extra_whitespaces" => {
            normalizer.remove_extra_whitespaces = Some(parse_bool(n, value)?)
        }
        "escape_whitespaces" => normalizer.escape_whitespaces = Some(parse_bool(n, value)?),
        // sentencepiece 0.2.1's automatic character coverage is not implemented: only its
        // default (false) is accepted.
        "auto_character_coverage" => {
            if parse_bool(n, value)? {
                return Err(invalid(
                    "auto_character_coverage=true is not supported by tokenmill \
                    (set character_coverage instead)",
                ));
            }
        }
        // Accepted for compatibility; they change nothing here.
        "minloglevel"
        | "random_seed"
        | "denormalization_rule_tsv"
        | "enable_differential_privacy"
        | "differential_privacy_noise_level"
        | "differential_privacy_clipping_threshold"
        | "mining_sentence_size"
        | "training_sentence_size" => {}
        _ => {
            return Err(invalid(format!(
                "unknown field name \"{name}\" in TrainerSpec or NormalizerSpec"
            )))
        }
    }
    Ok(())
}

/// Parses the `"--name=value --name2=value2"` string form.
pub fn parse_flags(args: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for arg in args.split_whitespace() {
        let arg = arg.trim_start_matches('-');
        let (name, value) = arg.split_once('=').unwrap_or((arg, "true"));
        out.push((name.to_string(), value.to_string()));
    }
    Ok(out)
}

/// The training sentences of `spec.input`, read one line at a time (line ends and a `\r`
/// before them removed; invalid UTF-8 becomes U+FFFD, as in sentencepiece's reading). The `tsv`
/// format gives `sentence<TAB>count` and repeats the sentence count times.
pub fn read_inputs(spec: &TrainerSpec) -> impl Iterator<Item = Result<String>> + '_ {
    let tsv = spec.input_format.as_deref() == Some("tsv");
    spec.input.iter().flat_map(move |path| -> Box<dyn Iterator<Item = Result<String>>> {
        let file = match std::fs::File::open(path) {
            Ok(f) => std::io::BufReader::with_capacity(1 << 20, f),
            Err(e) => return Box::new(std::iter::once(Err(Error::io(path, e)))),
        };
        let lines = file.split(b'\n').enumerate().map(move |(n, line)| {
            let mut line = line.map_err(|e| Error::io(path, e))?;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8(line)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            Ok((n + 1, line))
        });
        if !tsv {
            return Box::new(lines.map(|l| l.map(|(_, line)| line)));
        }
        Box::new(lines.flat_map(move |item| -> Box<dyn Iterator<Item = Result<String>>> {
            match item.and_then(|(n, line)| tsv_entry(path, n, &line)) {
                Ok((sentence, count)) => {
                    Box::new(std::iter::repeat_n(sentence, count.min(1 << 20) as usize).map(Ok))
                }
                Err(e) => Box::new(std::iter::once(Err(e))),
            }
        }))
    })
}

/// One `sentence<TAB>count` line of a tsv input.
fn tsv_entry(path: &str, line_number: usize, line: &str) -> Result<(String, u64)> {
    let format = |message: &str| Error::Format {
        path: Some(path.into()),
        line: Some(line_number),
        byte_offset: None,
        message: message.into(),
    };
    let (sentence, count) =
        line.split_once('\t').ok_or_else(|| format("Input format must be: word <tab> freq."))?;
    let count: u64 = count.trim().parse().map_err(|_| format("Could not parse the frequency"))?;
    Ok((sentence.to_string(), count))
}

#[cfg(test)]
mod input_tests {
    use super::*;
    use std::io::Write;

    fn read(bytes: &[u8], format: Option<&str>) -> Vec<Result<String>> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let spec = TrainerSpec {
            input: vec![f.path().to_string_lossy().into_owned()],
            input_format: format.map(String::from),
            ..Default::default()
        };
        read_inputs(&spec).collect()
    }

    #[test]
    fn lines_stream_without_ends_and_bad_utf8_becomes_replacement_characters() {
        let lines: Vec<String> =
            read(b"one\r\ntwo\nth\xffree\n\nlast", None).into_iter().map(|l| l.unwrap()).collect();
        assert_eq!(lines, ["one", "two", "th\u{FFFD}ree", "", "last"]);
    }

    #[test]
    fn tsv_repeats_sentences_and_bad_lines_are_located() {
        let lines: Vec<String> =
            read(b"ab\t2\ncd\t1\n", Some("tsv")).into_iter().map(|l| l.unwrap()).collect();
        assert_eq!(lines, ["ab", "ab", "cd"]);
        let bad = read(b"ab\t2\ncd\tx\n", Some("tsv"));
        assert!(matches!(bad.last(), Some(Err(Error::Format { line: Some(2), .. }))), "{bad:?}");
        let spec =
            TrainerSpec { input: vec!["/nonexistent/corpus.txt".into()], ..Default::default() };
        assert!(matches!(read_inputs(&spec).next(), Some(Err(Error::Io { .. }))));
    }
}

#[cfg(test)]
mod vocab_tests {
    use super::*;

    #[test]
    fn scores_print_as_printf_g() {
        let cases = [
            (0.0, "0"),
            (-0.0, "-0"),
            (-1.0, "-1"),
            (-31999.0, "-31999"),
            (-123456.0, "-123456"),
            (-1234567.0, "-1.23457e+06"),
            (-10.123456789, "-10.1235"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (9.9999996, "10"),
            (999999.5, "1e+06"),
            (0.5, "0.5"),
            (1234.125, "1234.12"),
            (1234.375, "1234.38"),
            (f64::INFINITY, "inf"),
        ];
        for (x, expected) in cases {
            assert_eq!(format_general(x), expected, "{x}");
        }
    }
}

#[cfg(test)]
mod bpe_tests {
    use super::*;

    fn bpe_pieces(spec: &TrainerSpec, words: &[(&str, u64)], merges: usize) -> Vec<String> {
        let sentences: Vec<(String, u64)> =
            words.iter().map(|(w, n)| (w.to_string(), *n)).collect();
        train_bpe(spec, sentences, &[], merges).into_iter().map(|(piece, _)| piece).collect()
    }

    #[test]
    fn ties_go_to_fewer_characters_then_the_smaller_text() {
        let spec = TrainerSpec::default();
        assert_eq!(bpe_pieces(&spec, &[("▁cd", 2), ("▁ab", 2)], 4), ["ab", "cd", "▁ab", "▁cd"]);
    }

    #[test]
    fn ties_beyond_the_heap_key_compare_whole_texts() {
        // The two last candidates agree on count, length and their first 16 bytes.
        let spec = TrainerSpec { max_sentencepiece_length: Some(32), ..Default::default() };
        let pieces = bpe_pieces(&spec, &[("abcdefghijklmnopr", 1), ("abcdefghijklmnopq", 1)], 17);
        assert_eq!(pieces[14], "abcdefghijklmnop");
        assert_eq!(&pieces[15..], ["abcdefghijklmnopq", "abcdefghijklmnopr"]);
    }

    #[test]
    fn merges_update_neighbours_only_and_stop_when_no_pair_is_left() {
        // "aaaa" → "aa aa" → "aaaa": overlapping pairs counted once per merge.
        let pieces = bpe_pieces(&TrainerSpec::default(), &[("aaaa", 3), ("aaa", 1)], 10);
        assert_eq!(pieces, ["aa", "aaaa", "aaa"]);
    }
}
