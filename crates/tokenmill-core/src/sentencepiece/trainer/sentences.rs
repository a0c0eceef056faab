//! Sentence loading (sentencepiece's `LoadSentences`): the training sentences filtered,
//! sampled (`input_sentence_size`) and normalized, meta pieces and pretokenizer chunk ends
//! replaced by the boundary character, cut into the words each model type trains on, and
//! counted. Also the normalizer spec a training fills in (`prepare_normalizer_spec`).
//!
//! May import the trainer interface (`super`), the rest of `sentencepiece` (normalizer, model,
//! rules), `trainers::word_counts` and `utils`.
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{check_sentence_memory, invalid, MetaPieces, BOUNDARY_CHAR, UNK_CHAR};
use crate::error::{Error, Result};
use crate::sentencepiece::model::split_into_words;
use crate::sentencepiece::normalizer::SpNormalizer;
use crate::sentencepiece::proto::{ModelType, NormalizerSpec, TrainerSpec};
use crate::sentencepiece::rules;
use crate::trainers::word_counts::count_words;
use crate::utils::darts::DoubleArray;

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

/// A caller's pretokenizer (sentencepiece's `TrainerComponents::pretokenizer`): it gets each
/// normalized training sentence and returns its chunks; no piece is learnt across two chunks.
pub struct Pretokenizer<'a> {
    pub split: &'a (dyn Fn(&str) -> Result<Vec<String>> + Sync),
    /// Whether the chunks may differ from the sentence when joined (otherwise an error).
    pub allow_inconsistent: bool,
}

/// How a model type cuts normalized sentences into the words it trains on (`SplitIntoWords`
/// with the spec's whitespace options; sentencepiece's word and char trainers use the
/// defaults). `None`: the whole sentence is one unit (`split_by_whitespace=false`).
#[derive(Clone, Copy)]
pub(super) struct WordSplit(Option<(bool, bool)>);

impl WordSplit {
    pub(super) fn of(spec: &TrainerSpec, kind: ModelType) -> Self {
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
pub(super) fn load_words(
    spec: &TrainerSpec,
    normalizer_spec: &NormalizerSpec,
    meta: &MetaPieces,
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
            check_sentence_memory(spec, sentence.len())?;
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
