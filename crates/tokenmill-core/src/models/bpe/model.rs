//! The BPE model: vocabulary, ranked merges, options, and the word cache.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use educe::Educe;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::merge::{Dropout, Merge, PairRanker, Symbol, Word, MAX_SYMBOLS};
use crate::error::{Error, Result};
use crate::tokenizer::{Model, Token, TokenSink};
use crate::utils::byte_level::map_bytes_with_origins;
use crate::utils::shared_rng::SharedRng;
use crate::utils::vocabulary::debug_size;
use crate::utils::word_cache::{self as cache, new_cache_id};

/// token → id
pub type Vocab = HashMap<String, u32>;
/// Merges in rank order (rank = index), as token pairs.
pub type Merges = Vec<(String, String)>;
/// (left id, right id) → (rank, id of the merged token)
pub type MergeMap = FxHashMap<(u32, u32), (u32, u32)>;

/// `tokenizers`' merge rule for the kernel (`merge`): two tokens merge if their pair is in
/// merges.txt, at the pair's rank (its line), into the token the merge names.
pub(crate) struct MergeRanks<'a>(pub &'a MergeMap);

impl PairRanker for MergeRanks<'_> {
    #[inline(always)]
    fn rank(&mut self, left: &Symbol, right: &Symbol) -> Option<Merge> {
        let &(priority, id) = self.0.get(&(left.id, right.id))?;
        Some(Merge { priority, id })
    }
}

/// Default number of words cached per model (the threads share them). Far above `tokenizers`'
/// 10,000: the distinct words of 20 MB of English prose number ~95,000, and a word that misses
/// the cache costs ~10x a hit. See `cache` for the memory this takes (at most ~24 MB per model).
pub const DEFAULT_CACHE_CAPACITY: usize = 262_144;

/// Code points below this get a direct-index entry in `BPE::char_ids` (covers Latin, Greek,
/// Cyrillic and the whole GPT-2 byte alphabet).
const CHAR_TABLE_SIZE: usize = 0x800;
const NO_ID: u32 = u32::MAX;

/// Marks the cache of words given as raw bytes (see `BPE::tokenize_byte_level`), apart from the
/// cache of words given as text.
const RAW_BYTES_CACHE: u64 = 1 << 63;

/// The options of a BPE model beside its vocabulary and merges. Read from tokenizer.json (see
/// `serialization`): a missing or null option takes its default; the cache and the seed are
/// not part of it.
#[derive(Debug, Clone, PartialEq, Educe, Deserialize)]
#[educe(Default)]
#[serde(default)]
pub struct BpeOptions {
    /// Words cached (per model, shared by the threads); 0 disables the cache.
    #[educe(Default = DEFAULT_CACHE_CAPACITY)]
    #[serde(skip)]
    pub cache_capacity: usize,
    /// Probability of skipping each merge (BPE-dropout). `None` or 0 means deterministic.
    pub dropout: Option<f32>,
    /// Seed of the dropout random generator; `None` seeds from the operating system.
    #[serde(skip)]
    pub dropout_seed: Option<u64>,
    pub unk_token: Option<String>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    #[serde(deserialize_with = "null_as_false")]
    pub fuse_unk: bool,
    #[serde(deserialize_with = "null_as_false")]
    pub byte_fallback: bool,
    #[serde(deserialize_with = "null_as_false")]
    pub ignore_merges: bool,
}

/// A flag of tokenizer.json that may be null (read as false, as `tokenizers` does).
fn null_as_false<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

/// Builds a [`BPE`] from a vocabulary, merges and options.
#[derive(Debug, Clone, Default)]
pub struct BpeBuilder {
    vocab: Vocab,
    merges: Merges,
    options: BpeOptions,
}

impl BpeBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn vocab_and_merges(mut self, vocab: Vocab, merges: Merges) -> Self {
        self.vocab = vocab;
        self.merges = merges;
        self
    }
    pub fn options(mut self, options: BpeOptions) -> Self {
        self.options = options;
        self
    }

    /// Checks the options and resolves every merge to ids. A merge whose tokens (or whose
    /// result) are not in the vocabulary is an `InvalidArgument` error naming the merge's index.
    pub fn build(self) -> Result<BPE> {
        self.build_with_merge_error(|index, message| {
            Error::InvalidArgument(format!("merge #{index}: {message}"))
        })
    }

    /// Like `build`, with the caller choosing how a bad merge (index into the merges, message)
    /// is reported, e.g. with the file and line it came from.
    pub(crate) fn build_with_merge_error(
        self,
        merge_error: impl Fn(usize, String) -> Error,
    ) -> Result<BPE> {
        check_dropout(self.options.dropout)?;
        let prefix = self.options.continuing_subword_prefix.as_deref().unwrap_or("");
        let merges = resolve_merges(&self.vocab, &self.merges, prefix)
            .map_err(|(i, m)| merge_error(i, m))?;
        Ok(BPE::assemble(self.vocab, merges, self.options))
    }
}

fn check_dropout(dropout: Option<f32>) -> Result<()> {
    match dropout {
        Some(p) if !(0.0..=1.0).contains(&p) => Err(Error::InvalidArgument(format!(
            "dropout must be between 0 and 1 inclusive, got {p}"
        ))),
        _ => Ok(()),
    }
}

/// Turns token-pair merges into the id map. A later duplicate of a pair replaces the earlier
/// one (its rank is the later index), as in `tokenizers`. The merged token is `a` followed by `b`
/// without the first `prefix.len()` bytes (the continuing-subword prefix).
fn resolve_merges(
    vocab: &Vocab,
    merges: &Merges,
    prefix: &str,
) -> std::result::Result<MergeMap, (usize, String)> {
    let lookup = |index: usize, token: &str| {
        vocab
            .get(token)
            .copied()
            .ok_or_else(|| (index, format!("token {token:?} is not in the vocabulary")))
    };
    let mut map = MergeMap::default();
    map.reserve(merges.len());
    let mut merged = String::new();
    for (index, (a, b)) in merges.iter().enumerate() {
        let a_id = lookup(index, a)?;
        let b_id = lookup(index, b)?;
        let b_rest = b.get(prefix.len()..).ok_or_else(|| {
            (index, format!("token {b:?} is shorter than the continuing subword prefix {prefix:?}"))
        })?;
        merged.clear();
        merged.push_str(a);
        merged.push_str(b_rest);
        let new_id = lookup(index, &merged)?;
        map.insert((a_id, b_id), (index as u32, new_id));
    }
    Ok(map)
}

/// A byte-pair-encoding model, classic (characters, optional `</w>` suffix / `##` prefix) or
/// byte-level (GPT-2 byte alphabet, done by the pre-tokenizer).
///
/// Fields other than the vocabulary and merges may be changed in place; call
/// [`BPE::clear_cache`] afterwards.
///
/// Two models are equal when their vocabulary, merges and tokenization options are; caches and
/// random state do not count. A clone gets its own (empty) cache and a copy of the dropout
/// generator's state.
#[derive(Educe)]
#[educe(Clone, PartialEq, Debug)]
pub struct BPE {
    #[educe(Debug(method(debug_size)))]
    pub(crate) vocab: FxHashMap<String, u32>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    pub(crate) vocab_r: FxHashMap<u32, String>,
    #[educe(Debug(method(debug_size)))]
    pub(crate) merges: MergeMap,
    /// `<0xNN>` token id per byte, where the vocabulary has it.
    #[educe(PartialEq(ignore), Debug(ignore))]
    byte_tokens: Box<[Option<u32>; 256]>,
    /// Id of each one-character token for code points below `CHAR_TABLE_SIZE` (`NO_ID` if
    /// absent): the initial symbols of most words are found by indexing instead of hashing.
    #[educe(PartialEq(ignore), Debug(ignore))]
    char_ids: Box<[u32]>,
    #[educe(PartialEq(ignore), Debug(ignore))]
    cache_capacity: usize,
    #[educe(Clone(method(fresh_cache_id)), PartialEq(ignore), Debug(ignore))]
    cache_id: AtomicU64,
    #[educe(PartialEq(ignore), Debug(ignore))]
    rng: SharedRng,
    #[educe(PartialEq(ignore), Debug(ignore))]
    dropout_seed: Option<u64>,
    pub dropout: Option<f32>,
    pub unk_token: Option<String>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub fuse_unk: bool,
    pub byte_fallback: bool,
    pub ignore_merges: bool,
}

impl BPE {
    pub fn builder() -> BpeBuilder {
        BpeBuilder::new()
    }

    /// A model from a trainer's output: vocabulary, merges in order, options.
    pub fn from_trained(vocab: Vocab, merges: Merges, options: BpeOptions) -> Result<BPE> {
        BpeBuilder::new().vocab_and_merges(vocab, merges).options(options).build()
    }

    fn assemble(vocab: Vocab, merges: MergeMap, options: BpeOptions) -> BPE {
        let vocab: FxHashMap<String, u32> = vocab.into_iter().collect();
        let vocab_r = vocab.iter().map(|(token, &id)| (id, token.clone())).collect();
        let mut char_ids = vec![NO_ID; CHAR_TABLE_SIZE].into_boxed_slice();
        for (token, &id) in &vocab {
            let mut chars = token.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                if let Some(slot) = char_ids.get_mut(c as usize) {
                    *slot = id;
                }
            }
        }
        let mut byte_tokens = Box::new([None; 256]);
        for (byte, slot) in byte_tokens.iter_mut().enumerate() {
            *slot = vocab.get(&byte_fallback_token(byte as u8)).copied();
        }
        BPE {
            vocab,
            vocab_r,
            merges,
            byte_tokens,
            char_ids,
            cache_capacity: options.cache_capacity,
            cache_id: AtomicU64::new(new_cache_id()),
            rng: SharedRng::new(options.dropout_seed),
            dropout_seed: options.dropout_seed,
            dropout: options.dropout,
            unk_token: options.unk_token,
            continuing_subword_prefix: options.continuing_subword_prefix,
            end_of_word_suffix: options.end_of_word_suffix,
            fuse_unk: options.fuse_unk,
            byte_fallback: options.byte_fallback,
            ignore_merges: options.ignore_merges,
        }
    }

    /// The options as they are now (for rebuilding or serializing).
    pub fn options(&self) -> BpeOptions {
        BpeOptions {
            cache_capacity: self.cache_capacity,
            dropout: self.dropout,
            dropout_seed: self.dropout_seed,
            unk_token: self.unk_token.clone(),
            continuing_subword_prefix: self.continuing_subword_prefix.clone(),
            end_of_word_suffix: self.end_of_word_suffix.clone(),
            fuse_unk: self.fuse_unk,
            byte_fallback: self.byte_fallback,
            ignore_merges: self.ignore_merges,
        }
    }

    /// Forgets every cached word (in all threads), e.g. after changing an option.
    pub fn clear_cache(&self) {
        self.cache_id.store(new_cache_id(), Ordering::Relaxed);
    }

    /// Changes how many words each thread caches (0 disables the cache).
    pub fn resize_cache(&mut self, capacity: usize) {
        self.cache_capacity = capacity;
        self.clear_cache();
    }

    pub fn cache_capacity(&self) -> usize {
        self.cache_capacity
    }

    /// Reseeds the dropout generator (`None`: from the operating system).
    pub fn set_dropout_seed(&mut self, seed: Option<u64>) {
        self.dropout_seed = seed;
        self.rng = SharedRng::new(seed);
    }

    pub fn dropout_seed(&self) -> Option<u64> {
        self.dropout_seed
    }

    /// Checks an in-place change of `dropout`.
    pub fn set_dropout(&mut self, dropout: Option<f32>) -> Result<()> {
        check_dropout(dropout)?;
        self.dropout = dropout;
        self.clear_cache();
        Ok(())
    }

    /// Merges in rank order, as token pairs.
    pub fn merges(&self) -> Merges {
        let mut ranked: Vec<(&(u32, u32), u32)> =
            self.merges.iter().map(|(pair, &(rank, _))| (pair, rank)).collect();
        ranked.sort_unstable_by_key(|&(_, rank)| rank);
        let sharing = self.tokens_sharing_an_id();
        ranked
            .into_iter()
            .map(|(&(a, b), _)| {
                if sharing.is_empty() {
                    (self.token_of(a), self.token_of(b))
                } else {
                    self.spell_merge(a, b, &sharing)
                }
            })
            .collect()
    }

    /// Every (token, id), in increasing id order (tokens that share an id by their text).
    /// `tokenizers` writes one token per id, so that a vocabulary giving two tokens one id (which
    /// it loads) saves a file it cannot load again; this one loads.
    pub fn vocab_in_id_order(&self) -> Vec<(&str, u32)> {
        let mut entries: Vec<(&str, u32)> =
            self.vocab.iter().map(|(t, &id)| (t.as_str(), id)).collect();
        entries.sort_unstable_by_key(|&(token, id)| (id, token));
        entries
    }

    /// The tokens of each id that more than one token has (none in real vocabularies).
    fn tokens_sharing_an_id(&self) -> FxHashMap<u32, Vec<&str>> {
        if self.vocab.len() == self.vocab_r.len() {
            return FxHashMap::default();
        }
        let mut by_id: FxHashMap<u32, Vec<&str>> = FxHashMap::default();
        for (token, &id) in &self.vocab {
            by_id.entry(id).or_default().push(token);
        }
        by_id.retain(|_, tokens| tokens.len() > 1);
        by_id.values_mut().for_each(|tokens| tokens.sort_unstable());
        by_id
    }

    /// The merge of ids `a` and `b` as two tokens whose merge is in the vocabulary with the id
    /// it merges into, where `a` or `b` names several tokens.
    fn spell_merge(&self, a: u32, b: u32, sharing: &FxHashMap<u32, Vec<&str>>) -> (String, String) {
        let merged_id = self.merges[&(a, b)].1;
        let skip = self.continuing_subword_prefix.as_deref().map_or(0, str::len);
        let spellings = |id: u32| match sharing.get(&id) {
            Some(tokens) => tokens.clone(),
            None => vec![self.vocab_r.get(&id).map_or("", String::as_str)],
        };
        for left in spellings(a) {
            for right in spellings(b) {
                let Some(rest) = right.get(skip..) else { continue };
                if self.vocab.get(&format!("{left}{rest}")) == Some(&merged_id) {
                    return (left.to_string(), right.to_string());
                }
            }
        }
        (self.token_of(a), self.token_of(b))
    }

    fn token_of(&self, id: u32) -> String {
        self.vocab_r.get(&id).cloned().unwrap_or_default()
    }

    fn dropout_active(&self) -> bool {
        matches!(self.dropout, Some(p) if p > 0.0)
    }

    /// Splits `word` into its initial symbols (one per char, with the continuing-subword prefix
    /// on all but the first and the end-of-word suffix on the last), resolving unknown chars with
    /// byte fallback or the unk token, exactly as `tokenizers` does.
    fn initial_symbols(&self, word: &str) -> Result<Word> {
        if word.len() > MAX_SYMBOLS {
            return Err(Error::InvalidArgument(format!(
                "a word of {} bytes is longer than the BPE model accepts ({MAX_SYMBOLS})",
                word.len()
            )));
        }
        let mut symbols = Word::with_capacity(word.len());
        let mut pending_unk: Option<(u32, usize)> = None;
        let mut decorated = String::new();
        let mut chars = word.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            let is_first = start == 0;
            let is_last = chars.peek().is_none();
            let char_len = c.len_utf8();
            let plain = &word[start..start + char_len];
            let prefix = self.continuing_subword_prefix.as_deref().filter(|_| !is_first);
            let suffix = self.end_of_word_suffix.as_deref().filter(|_| is_last);
            let undecorated = prefix.is_none() && suffix.is_none();
            if undecorated {
                if let Some(&id) = self.char_ids.get(c as usize).filter(|&&id| id != NO_ID) {
                    if let Some((unk_id, unk_len)) = pending_unk.take() {
                        symbols.push(unk_id, unk_len);
                    }
                    symbols.push(id, char_len);
                    continue;
                }
            }
            let text: &str = if undecorated {
                plain
            } else {
                decorated.clear();
                decorated.push_str(prefix.unwrap_or(""));
                decorated.push_str(plain);
                decorated.push_str(suffix.unwrap_or(""));
                &decorated
            };

            if let Some(&id) = self.vocab.get(text) {
                if let Some((unk_id, unk_len)) = pending_unk.take() {
                    symbols.push(unk_id, unk_len);
                }
                symbols.push(id, char_len);
                continue;
            }
            // Byte fallback covers the decorated text, one 1-byte symbol per byte; like
            // `tokenizers`, it does not flush a pending unk first.
            if self.byte_fallback {
                let bytes: Option<Vec<u32>> =
                    text.bytes().map(|b| self.byte_tokens[b as usize]).collect();
                if let Some(ids) = bytes {
                    for id in ids {
                        symbols.push(id, 1);
                    }
                    continue;
                }
            }
            if let Some(unk) = &self.unk_token {
                let unk_id = || {
                    self.vocab.get(unk).copied().ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "unk token {unk:?} is not in the vocabulary"
                        ))
                    })
                };
                pending_unk = match pending_unk {
                    Some((id, len)) if self.fuse_unk => Some((id, len + char_len)),
                    Some((id, len)) => {
                        symbols.push(id, len);
                        Some((unk_id()?, char_len))
                    }
                    None => Some((unk_id()?, char_len)),
                };
            }
        }
        if let Some((unk_id, unk_len)) = pending_unk {
            symbols.push(unk_id, unk_len);
        }
        Ok(symbols)
    }

    /// The merged word: initial symbols, then every merge in rank order (with dropout if set).
    fn merge_word(&self, word: &str) -> Result<Word> {
        let mut symbols = self.initial_symbols(word)?;
        let mut ranks = MergeRanks(&self.merges);
        match self.dropout {
            Some(p) if p > 0.0 => {
                // As `tokenizers`: a skipped merge is tried again after the next one.
                let mut rng = ChaCha8Rng::seed_from_u64(self.rng.next_seed());
                let skip = || rng.gen::<f32>() < p;
                symbols.merge_with_dropout(&mut ranks, Dropout::Retry(skip));
            }
            _ => symbols.merge(&mut ranks),
        }
        Ok(symbols)
    }

    /// Calls `emit(id, (start, end))` for each token of `word` (byte offsets within `word`).
    /// This is the allocation-light core that `tokenize` and the ids-only paths share.
    pub fn tokenize_with(&self, word: &str, mut emit: impl TokenSink) -> Result<()> {
        if word.is_empty() {
            return Ok(());
        }
        let Some(cache_id) = self.usable_cache_id() else {
            return self.tokenize_uncached(word, emit);
        };
        if replay_cached(cache_id, word.as_bytes(), &mut emit) {
            return Ok(());
        }
        let mut cached = Vec::new();
        self.tokenize_uncached(word, |id, (start, end)| {
            emit(id, (start, end));
            cached.push((id, (end - start) as u32));
        })?;
        cache::store(cache_id, self.cache_capacity, word.as_bytes(), &cached);
        Ok(())
    }

    /// `tokenize_with` without the cache: the whole word if `ignore_merges` finds it in the
    /// vocabulary, else the merged word.
    fn tokenize_uncached(&self, word: &str, mut emit: impl TokenSink) -> Result<()> {
        // As `tokenizers`: with dropout on, every word goes through the (dropped-out) merges,
        // even one that is a whole token.
        if self.ignore_merges && !self.dropout_active() {
            if let Some(&id) = self.vocab.get(word) {
                emit(id, (0, word.len()));
                return Ok(());
            }
        }
        let merged = self.merge_word(word)?;
        merged.symbols().for_each(|s| emit(s.id, (s.start, s.end)));
        Ok(())
    }

    /// The current cache id, or `None` when the cache is off (no capacity, or dropout: each
    /// call must draw its own merges).
    fn usable_cache_id(&self) -> Option<u64> {
        (!self.dropout_active() && self.cache_capacity > 0)
            .then(|| self.cache_id.load(Ordering::Relaxed))
    }

    /// Tokenizes a word of raw text the byte-level way: each byte of `raw` becomes its GPT-2
    /// alphabet char (see `utils::byte_level`) and the result is tokenized; `emit(id, (start,
    /// end))` gets byte offsets *in `raw`* (a token may end inside a multi-byte char of `raw`).
    /// Same tokens as mapping the word and calling `tokenize_with`, but cached by the raw bytes
    /// (in a table of their own, and only there), so that a word is neither mapped nor looked up
    /// twice.
    pub fn tokenize_byte_level(&self, raw: &str, mut emit: impl TokenSink) -> Result<()> {
        if raw.is_empty() {
            return Ok(());
        }
        let cache_id = self.usable_cache_id();
        if let Some(id) = cache_id {
            if replay_cached(id | RAW_BYTES_CACHE, raw.as_bytes(), &mut emit) {
                return Ok(());
            }
        }
        let (mapped, raw_offset) = map_bytes_with_origins(raw.as_bytes());
        let mut cached = Vec::new();
        self.tokenize_uncached(&mapped, |id, (start, end)| {
            let span = (raw_offset[start], raw_offset[end]);
            emit(id, span);
            cached.push((id, (span.1 - span.0) as u32));
        })?;
        if let Some(id) = cache_id {
            cache::store(id | RAW_BYTES_CACHE, self.cache_capacity, raw.as_bytes(), &cached);
        }
        Ok(())
    }

    /// Appends the ids of `word`'s tokens to `ids` (no token strings are built).
    pub fn tokenize_ids_into(&self, word: &str, ids: &mut Vec<u32>) -> Result<()> {
        self.tokenize_with(word, |id, _| ids.push(id))
    }
}

/// Replays a cached word as `emit(id, (start, end))` calls.
#[inline]
fn replay_cached(cache_id: u64, word: &[u8], emit: &mut impl FnMut(u32, (usize, usize))) -> bool {
    let mut start = 0;
    cache::replay(cache_id, word, |id, len| {
        emit(id, (start, start + len));
        start += len;
    })
}

/// The byte-fallback token for a byte: `<0x0A>` style (upper-case hex, two digits).
pub fn byte_fallback_token(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

impl Model for BPE {
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>> {
        // Most words are one to three tokens; this avoids regrowing the vector.
        let mut tokens = Vec::with_capacity(4);
        self.tokenize_with(sequence, |id, offsets| {
            tokens.push(Token::new(id, self.token_of(id), offsets));
        })?;
        Ok(tokens)
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        self.vocab_r.get(&id).cloned()
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        self.vocab.iter().map(|(t, &id)| (t.clone(), id)).collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.vocab.len()
    }

    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        super::files::save(self, folder, prefix)
    }
}

impl Default for BPE {
    fn default() -> Self {
        BPE::assemble(Vocab::new(), MergeMap::default(), BpeOptions::default())
    }
}

/// A clone's cache: a fresh one (the clone's options may change apart from the original's).
fn fresh_cache_id(_: &AtomicU64) -> AtomicU64 {
    AtomicU64::new(new_cache_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[&str]) -> Vocab {
        tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect()
    }

    fn merges(pairs: &[(&str, &str)]) -> Merges {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    fn tokens(bpe: &BPE, word: &str) -> Vec<(String, (usize, usize))> {
        bpe.tokenize(word).unwrap().into_iter().map(|t| (t.value, t.offsets)).collect()
    }

    fn owned(list: &[(&str, (usize, usize))]) -> Vec<(String, (usize, usize))> {
        list.iter().map(|(v, o)| (v.to_string(), *o)).collect()
    }

    fn build(v: Vocab, m: Merges, options: BpeOptions) -> Result<BPE> {
        BPE::builder().vocab_and_merges(v, m).options(options).build()
    }

    fn unk(token: &str) -> BpeOptions {
        BpeOptions { unk_token: Some(token.into()), ..Default::default() }
    }

    #[test]
    fn unknown_chars_fused_or_not() {
        let v = vocab(&["<unk>", "a", "b", "ab"]);
        let m = merges(&[("a", "b")]);
        let plain = build(v.clone(), m.clone(), unk("<unk>")).unwrap();
        assert_eq!(
            tokens(&plain, "abxyab"),
            owned(&[("ab", (0, 2)), ("<unk>", (2, 3)), ("<unk>", (3, 4)), ("ab", (4, 6))])
        );
        let fused =
            build(v.clone(), m.clone(), BpeOptions { fuse_unk: true, ..unk("<unk>") }).unwrap();
        assert_eq!(
            tokens(&fused, "abxyab"),
            owned(&[("ab", (0, 2)), ("<unk>", (2, 4)), ("ab", (4, 6))])
        );
        // Without an unk token unknown characters are dropped; offsets add up the lengths of
        // the kept symbols (as in `tokenizers`), so they shift.
        let dropping = BPE::builder().vocab_and_merges(v, m).build().unwrap();
        assert_eq!(tokens(&dropping, "xab"), owned(&[("ab", (0, 2))]));
    }

    #[test]
    fn byte_fallback_uses_byte_tokens() {
        let mut v = vocab(&["<unk>", "a"]);
        for b in 0..=255u8 {
            v.insert(byte_fallback_token(b), 2 + b as u32);
        }
        let bpe = build(v, vec![], BpeOptions { byte_fallback: true, ..unk("<unk>") }).unwrap();
        assert_eq!(
            tokens(&bpe, "aé"),
            owned(&[("a", (0, 1)), ("<0xC3>", (1, 2)), ("<0xA9>", (2, 3))])
        );
    }

    #[test]
    fn prefix_and_suffix_decorate_symbols() {
        let v = vocab(&["h", "##e", "##y", "he", "hey"]);
        let m = merges(&[("h", "##e"), ("he", "##y")]);
        let prefix = Some("##".into());
        let bpe =
            build(v, m, BpeOptions { continuing_subword_prefix: prefix, ..Default::default() })
                .unwrap();
        assert_eq!(tokens(&bpe, "hey"), owned(&[("hey", (0, 3))]));
        let v = vocab(&["h", "e", "y</w>", "he", "hey</w>"]);
        let m = merges(&[("h", "e"), ("he", "y</w>")]);
        let suffix = Some("</w>".into());
        let bpe =
            build(v, m, BpeOptions { end_of_word_suffix: suffix, ..Default::default() }).unwrap();
        assert_eq!(tokens(&bpe, "hey"), owned(&[("hey</w>", (0, 3))]));
        // "e</w>" is not in the vocabulary: dropped.
        assert_eq!(tokens(&bpe, "hehe"), owned(&[("he", (0, 2)), ("h", (2, 3))]));
    }

    #[test]
    fn ignore_merges_takes_whole_words() {
        let v = vocab(&["a", "b", "c", "ab", "abc"]);
        let m = merges(&[("a", "b")]);
        let mut bpe = BPE::builder().vocab_and_merges(v, m).build().unwrap();
        assert_eq!(tokens(&bpe, "abc"), owned(&[("ab", (0, 2)), ("c", (2, 3))]));
        bpe.ignore_merges = true;
        bpe.clear_cache();
        assert_eq!(tokens(&bpe, "abc"), owned(&[("abc", (0, 3))]));
        // With dropout, `tokenizers` ignores `ignore_merges`: dropout 1 skips every merge.
        bpe.set_dropout(Some(1.0)).unwrap();
        assert_eq!(tokens(&bpe, "abc").len(), 3);
        bpe.set_dropout(Some(0.0)).unwrap();
        assert_eq!(tokens(&bpe, "abc"), owned(&[("abc", (0, 3))]));
    }

    #[test]
    fn cache_gives_the_same_answers_and_is_per_model() {
        let v = vocab(&["a", "b", "ab"]);
        let with =
            BPE::builder().vocab_and_merges(v.clone(), merges(&[("a", "b")])).build().unwrap();
        let without = BPE::builder().vocab_and_merges(v, vec![]).build().unwrap();
        for _ in 0..3 {
            assert_eq!(tokens(&with, "abab"), owned(&[("ab", (0, 2)), ("ab", (2, 4))]));
            assert_eq!(tokens(&without, "abab").len(), 4);
        }
        let mut ids = vec![];
        with.tokenize_ids_into("abab", &mut ids).unwrap();
        assert_eq!(ids, vec![2, 2]);
    }

    #[test]
    fn seeded_dropout_is_reproducible() {
        let v = vocab(&["a", "aa", "aaaa"]);
        let m = merges(&[("a", "a"), ("aa", "aa")]);
        let make = |seed| {
            let options =
                BpeOptions { dropout: Some(0.5), dropout_seed: Some(seed), ..Default::default() };
            build(v.clone(), m.clone(), options).unwrap()
        };
        let word = "a".repeat(64);
        let (one, two) = (make(7), make(7));
        let runs: Vec<_> = (0..5).map(|_| tokens(&one, &word)).collect();
        assert_eq!(runs, (0..5).map(|_| tokens(&two, &word)).collect::<Vec<_>>());
        assert!(runs.windows(2).any(|w| w[0] != w[1]), "dropout varies from call to call");
        let too_high = BpeOptions { dropout: Some(1.5), ..Default::default() };
        assert!(build(Vocab::new(), vec![], too_high).is_err());
    }

    #[test]
    fn bad_merges_are_errors() {
        let v = vocab(&["a", "b"]);
        let err =
            BPE::builder().vocab_and_merges(v.clone(), merges(&[("a", "b")])).build().unwrap_err();
        assert!(err.to_string().contains("\"ab\""), "{err}");
        let prefix =
            BpeOptions { continuing_subword_prefix: Some("###".into()), ..Default::default() };
        let err = build(v, merges(&[("a", "b")]), prefix).unwrap_err();
        assert!(err.to_string().contains("shorter"), "{err}");
    }
}
