//! `CoreBpe`: split pattern + mergeable ranks + special tokens.
use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::bpe::{encode_piece, Rank};
use super::ranks::Ranks;
use super::token_map::TokenMap;
use crate::error::{Error, Result};
use crate::utils::regex::Regex;
use crate::utils::{parallel, word_cache};

/// The tiktoken encoder/decoder core.
///
/// Ordinary text is split with the pattern; each piece that is a token is one id, the others go
/// through `bpe::encode_piece`. Special tokens are only recognised by `encode` when allowed.
/// When several allowed special tokens start at the same place, the longest wins (tiktoken
/// leaves this to hash order; here it is deterministic).
#[derive(Debug, Clone)]
pub struct CoreBpe {
    regex: Regex,
    pub(super) encoder: TokenMap,
    n_ranks: usize,
    special_encoder: FxHashMap<String, Rank>,
    /// Special token texts, in the order of `special_matcher`'s patterns.
    special_names: Vec<String>,
    special_matcher: Option<AhoCorasick>,
    pub(super) decoder: Decoder,
    /// Ordinary token ids by their bytes, built on first use (`encode_with_unstable`).
    pub(super) sorted_tokens: std::sync::OnceLock<Vec<Rank>>,
    /// This encoding's tables in the word cache (`utils::word_cache`).
    cache_id: u64,
}

/// Pieces cached per encoding. Real text has far fewer distinct pieces; the
/// frequent ones come first, so a full cache keeps serving them.
const PIECE_CACHE_CAPACITY: usize = 1 << 18;

/// Id → bytes for ordinary and special tokens: one byte buffer plus a span per id. Ids below
/// `dense_limit` index a vector (tiktoken's ids are dense, and encoding looks up every token's
/// length); larger ids, which tiktoken accepts too, live in a map.
#[derive(Debug, Clone, Default)]
pub(super) struct Decoder {
    bytes: Vec<u8>,
    /// `spans[id] = (start, len)`; `len == u32::MAX` marks an id without a token.
    spans: Vec<(u32, u32)>,
    /// Spans of the ids at or above `dense_limit`.
    sparse: FxHashMap<Rank, (u32, u32)>,
    dense_limit: usize,
}

const ABSENT: (u32, u32) = (0, u32::MAX);

impl Decoder {
    /// A decoder for `n_ids` ids: a vector for ids below `max(4 * n_ids, 2**20)`.
    fn for_ids(n_ids: usize) -> Self {
        Decoder { dense_limit: n_ids.saturating_mul(4).max(1 << 20), ..Decoder::default() }
    }

    fn insert(&mut self, id: Rank, token: &[u8]) -> std::result::Result<(), Rank> {
        let span = (self.bytes.len() as u32, token.len() as u32);
        let index = id as usize;
        if index < self.dense_limit {
            if index >= self.spans.len() {
                self.spans.resize(index + 1, ABSENT);
            }
            if self.spans[index] != ABSENT {
                return Err(id);
            }
            self.spans[index] = span;
        } else {
            match self.sparse.entry(id) {
                std::collections::hash_map::Entry::Occupied(_) => return Err(id),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(span);
                }
            }
        }
        self.bytes.extend_from_slice(token);
        Ok(())
    }

    #[inline]
    fn span(&self, id: Rank) -> Option<(u32, u32)> {
        let span = match self.spans.get(id as usize) {
            Some(&span) => span,
            None => *self.sparse.get(&id)?,
        };
        (span.1 != u32::MAX).then_some(span)
    }

    /// The byte length of an id's token (0 for an id without one).
    #[inline]
    fn len(&self, id: Rank) -> u32 {
        self.span(id).map_or(0, |(_, len)| len)
    }

    #[inline]
    pub(super) fn get(&self, id: Rank) -> Option<&[u8]> {
        let (start, len) = self.span(id)?;
        Some(&self.bytes[start as usize..start as usize + len as usize])
    }

    /// Every id that has a token, in increasing order.
    fn ids(&self) -> impl Iterator<Item = Rank> + '_ {
        let mut sparse: Vec<Rank> = self.sparse.keys().copied().collect();
        sparse.sort_unstable();
        (0..self.spans.len() as Rank).filter(|&id| self.spans[id as usize] != ABSENT).chain(sparse)
    }

    /// The largest id with a token.
    fn max_id(&self) -> Option<Rank> {
        let dense = self.spans.iter().rposition(|&s| s != ABSENT).map(|i| i as Rank);
        dense.max(self.sparse.keys().copied().max())
    }
}

impl CoreBpe {
    /// Builds the core. Every id must be given once (across ranks and special tokens).
    pub fn new(
        encoder: Ranks,
        special_tokens: FxHashMap<String, Rank>,
        pattern: &str,
    ) -> Result<Self> {
        let regex = Regex::new(pattern)?;
        // Rank::MAX marks "no rank" in the merge loop, so it cannot be a token id.
        if let Some(id) =
            encoder.values().chain(special_tokens.values()).find(|&&id| id == Rank::MAX)
        {
            return Err(Error::InvalidArgument(format!(
                "token id {id} is reserved (ids must be below {id})"
            )));
        }
        let mut decoder = Decoder::for_ids(encoder.len() + special_tokens.len());
        let mut by_rank: Vec<(&Vec<u8>, Rank)> = encoder.iter().map(|(t, &r)| (t, r)).collect();
        by_rank.sort_unstable_by_key(|&(_, r)| r);
        let mut map = TokenMap::with_capacity(by_rank.len());
        for (token, rank) in by_rank {
            decoder.insert(rank, token).map_err(|id| {
                Error::InvalidArgument(format!("rank {id} is given to more than one token"))
            })?;
            map.insert(token, rank);
        }
        let n_ranks = map.len();
        drop(encoder);
        let mut special_names: Vec<String> = special_tokens.keys().cloned().collect();
        special_names.sort();
        // A special token may share its id with an ordinary token or another special token
        // (o200k_harmony gives 200018 two names). As in tiktoken, decoding prefers the ordinary
        // token; among special tokens the first name in sorted order wins.
        for name in &special_names {
            let _ = decoder.insert(special_tokens[name], name.as_bytes());
        }
        let special_matcher = if special_names.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&special_names)
                    .map_err(|e| Error::InvalidArgument(format!("special tokens: {e}")))?,
            )
        };
        Ok(CoreBpe {
            regex,
            encoder: map,
            n_ranks,
            special_encoder: special_tokens,
            special_names,
            special_matcher,
            decoder,
            sorted_tokens: std::sync::OnceLock::new(),
            cache_id: word_cache::new_cache_id(),
        })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// The mergeable ranks (rebuilt from the decoder: the core does not keep a second copy).
    pub fn mergeable_ranks(&self) -> Ranks {
        self.ordinary_tokens().map(|(id, bytes)| (bytes.to_vec(), id)).collect()
    }

    /// Number of mergeable ranks.
    pub fn n_ranks(&self) -> usize {
        self.n_ranks
    }

    /// The largest id, ordinary or special.
    pub fn max_token_value(&self) -> Option<Rank> {
        self.decoder.max_id()
    }

    /// (id, bytes) of every mergeable token, by id.
    pub(super) fn ordinary_tokens(&self) -> impl Iterator<Item = (Rank, &[u8])> + '_ {
        let special_ids: rustc_hash::FxHashSet<Rank> =
            self.special_encoder.values().copied().collect();
        self.decoder
            .ids()
            .filter(move |id| !special_ids.contains(id))
            .filter_map(|id| self.decoder.get(id).map(|b| (id, b)))
    }

    pub fn special_tokens(&self) -> &FxHashMap<String, Rank> {
        &self.special_encoder
    }

    /// Encodes `text` ignoring special tokens (their text is encoded as ordinary text).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(text.len() / 4);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// Appends the tokens of `text` (no special tokens) to `out`.
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        self.encode_segment(text, out).map(drop)
    }

    /// Splits `text` with the pattern and appends each piece's tokens. Pieces go through the
    /// word cache first: its small per-thread direct-mapped front table answers the frequent
    /// pieces from the core's own cache, where a probe of the rank table (8 MB for o200k) is a
    /// likely miss to main memory — whose cost varied from process to process.
    ///
    /// Returns where the last piece's tokens start in `out` (`out.len()` on entry when `text`
    /// has no piece): tiktoken's unstable-token logic needs them.
    fn encode_segment(&self, text: &str, out: &mut Vec<Rank>) -> Result<usize> {
        let bytes = text.as_bytes();
        let mut failure = None;
        let mut last_piece_start = out.len();
        self.regex.for_each_match(text, |start, end| {
            let piece = &bytes[start..end];
            last_piece_start = out.len();
            if word_cache::replay(self.cache_id, piece, |id, _| out.push(id)) {
                return;
            }
            let first = out.len();
            let encoded = match self.encoder.get(piece) {
                Some(rank) => {
                    out.push(rank);
                    Ok(())
                }
                None => encode_piece(&self.encoder, piece, out),
            };
            match encoded {
                Ok(()) => {
                    let tokens = out[first..].iter().map(|&id| (id, self.decoder.len(id)));
                    word_cache::store_with(self.cache_id, PIECE_CACHE_CAPACITY, piece, tokens);
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        })?;
        failure.map_or(Ok(last_piece_start), Err)
    }

    /// Encodes `text`, turning the special tokens for which `allowed(text)` holds into their ids;
    /// other special-token text is encoded as ordinary text.
    pub fn encode(&self, text: &str, allowed: impl Fn(&str) -> bool) -> Result<Vec<Rank>> {
        self.encode_with_last_piece(text, allowed).map(|(ids, _)| ids)
    }

    /// `encode`, plus how many of the ids come from the last piece of the split pattern (0 when
    /// the text ends with a special token), as tiktoken's native `encode` reports it.
    pub(super) fn encode_with_last_piece(
        &self,
        text: &str,
        allowed: impl Fn(&str) -> bool,
    ) -> Result<(Vec<Rank>, usize)> {
        let mut out = Vec::with_capacity(text.len() / 4);
        let mut start = 0;
        while let Some((special_start, special_end, id)) =
            self.next_allowed_special(text, start, &allowed)
        {
            self.encode_segment(&text[start..special_start], &mut out)?;
            out.push(id);
            start = special_end;
        }
        let last_piece_start = self.encode_segment(&text[start..], &mut out)?;
        let last_piece_len = out.len() - last_piece_start;
        Ok((out, last_piece_len))
    }

    /// The first allowed special token at or after byte `from`: (start, end, id).
    fn next_allowed_special(
        &self,
        text: &str,
        from: usize,
        allowed: &impl Fn(&str) -> bool,
    ) -> Option<(usize, usize, Rank)> {
        let matcher = self.special_matcher.as_ref()?;
        let mut search_from = from;
        while search_from < text.len() {
            let m = matcher.find(aho_corasick::Input::new(text).range(search_from..))?;
            let name = &self.special_names[m.pattern().as_usize()];
            if allowed(name) {
                return Some((m.start(), m.end(), self.special_encoder[name]));
            }
            search_from = m.start() + 1;
        }
        None
    }

    /// Encodes many texts in parallel (tokenmill's pool, see `utils::parallel`, or at most
    /// `num_threads` threads if given: see `parallel::pool_for`).
    pub fn encode_ordinary_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        num_threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        in_pool(num_threads, texts, |t| self.encode_ordinary(t.as_ref()))
    }

    /// Like `encode_ordinary_batch` but with special tokens allowed by `allowed`.
    pub fn encode_batch<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        allowed: impl Fn(&str) -> bool + Sync,
        num_threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        in_pool(num_threads, texts, |t| self.encode(t.as_ref(), &allowed))
    }

    /// All ids of many texts in one flat vector, plus `offsets` (len = texts + 1) such that the
    /// ids of text i are `ids[offsets[i]..offsets[i + 1]]`.
    pub fn encode_ordinary_batch_flat<S: AsRef<str> + Sync>(
        &self,
        texts: &[S],
        num_threads: Option<usize>,
    ) -> Result<(Vec<Rank>, Vec<usize>)> {
        let per_text = self.encode_ordinary_batch(texts, num_threads)?;
        let mut offsets = Vec::with_capacity(per_text.len() + 1);
        offsets.push(0);
        let total: usize = per_text.iter().map(Vec::len).sum();
        let mut ids = Vec::with_capacity(total);
        for t in per_text {
            ids.extend_from_slice(&t);
            offsets.push(ids.len());
        }
        Ok((ids, offsets))
    }

    /// Encodes bytes as one piece, without splitting (no special tokens).
    pub fn encode_single_piece(&self, piece: &[u8]) -> Result<Vec<Rank>> {
        let mut out = Vec::new();
        if !piece.is_empty() {
            encode_piece(&self.encoder, piece, &mut out)?;
        }
        Ok(out)
    }

    /// The id of bytes that are exactly one token (ordinary or special).
    pub fn encode_single_token(&self, token: &[u8]) -> Option<Rank> {
        if let Some(rank) = self.encoder.get(token) {
            return Some(rank);
        }
        std::str::from_utf8(token).ok().and_then(|s| self.special_encoder.get(s).copied())
    }

    /// The bytes of one token (ordinary or special).
    pub fn decode_single_token_bytes(&self, id: Rank) -> Result<&[u8]> {
        self.decoder.get(id).ok_or(Error::UnknownId(id))
    }

    /// The concatenated bytes of `ids`.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.decode_single_token_bytes(id)?);
        }
        Ok(out)
    }

    /// The bytes of every ordinary token, sorted (tiktoken's `token_byte_values`).
    pub fn token_byte_values(&self) -> Vec<&[u8]> {
        let mut values: Vec<&[u8]> = self.ordinary_tokens().map(|(_, b)| b).collect();
        values.sort_unstable();
        values
    }
}

/// `encode` of every text, on tokenmill's pool (`None` or 0) or on `num_threads` threads at
/// most (see `parallel::pool_for`: capped, from pools kept for the process).
fn in_pool<S: Sync>(
    num_threads: Option<usize>,
    texts: &[S],
    encode: impl Fn(&S) -> Result<Vec<Rank>> + Sync + Send,
) -> Result<Vec<Vec<Rank>>> {
    match parallel::pool_for(num_threads.unwrap_or(0), texts.len()) {
        None => texts.iter().map(encode).collect(),
        Some(pool) => pool.install(|| texts.par_iter().map(encode).collect()),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::pre_tokenizers::scanners::R50K_PATTERN;

    /// Bytes, a few merges up to "hello" and " world", and two special tokens.
    pub(crate) fn tiny() -> CoreBpe {
        let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in [&b"he"[..], b"ll", b"hell", b"hello", b" w", b"or", b" wor", b" world"]
            .iter()
            .enumerate()
        {
            ranks.insert(t.to_vec(), 256 + i as Rank);
        }
        let specials = [("<|endoftext|>".to_string(), 1000), ("<|end|>".to_string(), 1001)]
            .into_iter()
            .collect();
        CoreBpe::new(ranks, specials, R50K_PATTERN).unwrap()
    }

    #[test]
    fn encodes_and_decodes() {
        let core = tiny();
        let ids = core.encode_ordinary("hello world").unwrap();
        assert_eq!(ids, vec![259, 263]);
        assert_eq!(core.decode_bytes(&ids).unwrap(), b"hello world");
        let ids = core.encode_ordinary("helloo worl").unwrap();
        assert_eq!(core.decode_bytes(&ids).unwrap(), b"helloo worl");
    }

    #[test]
    fn special_tokens_only_when_allowed() {
        let core = tiny();
        let text = "hello<|endoftext|> world<|end|>";
        assert_eq!(core.encode(text, |_| true).unwrap(), vec![259, 1000, 263, 1001]);
        let only_eot = core.encode(text, |s| s == "<|endoftext|>").unwrap();
        assert_eq!(&only_eot[..3], &[259, 1000, 263]);
        assert_eq!(core.decode_bytes(&only_eot).unwrap(), text.as_bytes());
        assert_eq!(core.encode(text, |_| false).unwrap(), core.encode_ordinary(text).unwrap());
    }

    #[test]
    fn unknown_ids_and_duplicate_ranks_are_errors() {
        let core = tiny();
        assert!(matches!(core.decode_bytes(&[5, 99_999]), Err(Error::UnknownId(99_999))));
        let ranks: Ranks = [(b"a".to_vec(), 0), (b"b".to_vec(), 0)].into_iter().collect();
        assert!(CoreBpe::new(ranks, FxHashMap::default(), R50K_PATTERN).is_err());
        let ranks: Ranks = [(b"a".to_vec(), 0)].into_iter().collect();
        let specials = [("<s>".to_string(), 0), ("<t>".to_string(), 0)].into_iter().collect();
        let shared_id = CoreBpe::new(ranks, specials, R50K_PATTERN).unwrap();
        assert_eq!(shared_id.decode_bytes(&[0]).unwrap(), b"a");
        assert_eq!(shared_id.encode("<t>", |_| true).unwrap(), vec![0]);
        let ranks: Ranks = [(b"a".to_vec(), u32::MAX)].into_iter().collect();
        assert!(CoreBpe::new(ranks, FxHashMap::default(), R50K_PATTERN).is_err());
    }

    #[test]
    fn sparse_large_ids_encode_and_decode() {
        let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        ranks.insert(b"ab".to_vec(), 3_000_000_000);
        let specials = [("<s>".to_string(), 4_000_000_000)].into_iter().collect();
        let core = CoreBpe::new(ranks, specials, R50K_PATTERN).unwrap();
        assert_eq!(core.encode("ab<s>", |_| true).unwrap(), vec![3_000_000_000, 4_000_000_000]);
        assert_eq!(core.decode_bytes(&[3_000_000_000, 4_000_000_000]).unwrap(), b"ab<s>");
        assert_eq!(core.max_token_value(), Some(4_000_000_000));
        assert_eq!(core.mergeable_ranks().len(), 257);
    }

    #[test]
    fn batches_match_single_calls() {
        let core = tiny();
        let texts = ["hello world", "", "world hello  \n"];
        let (ids, offsets) = core.encode_ordinary_batch_flat(&texts, Some(2)).unwrap();
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(
                &ids[offsets[i]..offsets[i + 1]],
                core.encode_ordinary(t).unwrap().as_slice()
            );
        }
    }
}
