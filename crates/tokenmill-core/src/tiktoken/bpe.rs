//! Byte-pair merging of one piece with tiktoken's rules, as a ranker over the BPE kernel
//! (`models::bpe::merge`).
//!
//! A piece starts as single bytes. While some adjacent pair of parts concatenates to bytes that
//! have a rank, the pair with the lowest rank is merged; among equal ranks (the same bytes at
//! several places) the leftmost pair is merged first. Ranks are unique per byte string, so this
//! fully determines the result.
use std::cell::Cell;

use super::token_map::TokenMap;
use crate::error::{Error, Result};
use crate::models::bpe::merge::{Merge, PairRanker, Symbol, Word, MAX_SYMBOLS};

/// A token id (tiktoken calls it a rank: lower ranks merge first).
pub type Rank = u32;

/// Not a rank: the id of a single byte before any merge (looked up when it is emitted), and
/// what a rank of `Rank::MAX` counts as (no merge), as in tiktoken.
const NO_RANK: Rank = Rank::MAX;

/// Pieces shorter than this take the kernel's small-word scan; longer ones its heap.
const LONG_PIECE_BYTES: usize = 128;

/// tiktoken's merge rule: two parts merge if their concatenated bytes have a rank, at that
/// rank, into the token of that rank.
struct ByteRanks<'a> {
    ranks: &'a TokenMap,
    piece: &'a [u8],
}

impl PairRanker for ByteRanks<'_> {
    const SMALL_WORD_SYMBOLS: usize = LONG_PIECE_BYTES - 1;

    #[inline(always)]
    fn rank(&mut self, left: &Symbol, right: &Symbol) -> Option<Merge> {
        let rank = self.ranks.get(&self.piece[left.start..right.end]).filter(|&r| r != NO_RANK)?;
        Some(Merge { priority: rank, id: rank })
    }
}

thread_local! {
    /// The word buffer of this thread: merging a piece allocates nothing once it has grown.
    static WORD: Cell<Word> = const { Cell::new(Word::new()) };
}

/// Appends the tokens of `piece` to `out`.
#[inline]
pub fn encode_piece(ranks: &TokenMap, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    if let Some(rank) = ranks.get(piece) {
        out.push(rank);
        return Ok(());
    }
    encode_piece_by_merges(ranks, piece, out)
}

/// Appends the tokens that merging reaches from the single bytes of `piece`, without first
/// looking `piece` up as a whole (tiktoken's `byte_pair_encode`: a token that no merge sequence
/// builds comes out in parts).
pub fn encode_piece_by_merges(ranks: &TokenMap, piece: &[u8], out: &mut Vec<Rank>) -> Result<()> {
    if piece.len() > MAX_SYMBOLS {
        return Err(Error::InvalidArgument(format!(
            "a piece of {} bytes is longer than BPE accepts ({MAX_SYMBOLS})",
            piece.len()
        )));
    }
    WORD.with(|cell| {
        let mut word = cell.take();
        word.clear();
        word.push_bytes(piece.len(), NO_RANK);
        word.merge(&mut ByteRanks { ranks, piece });
        let result = push_parts(ranks, piece, &word, out);
        cell.set(word);
        result
    })
}

/// Appends the ranks of the merged parts of `piece`; a single byte that was not merged is
/// looked up (the only kind of part that can lack a rank).
fn push_parts(ranks: &TokenMap, piece: &[u8], word: &Word, out: &mut Vec<Rank>) -> Result<()> {
    for part in word.symbols() {
        if part.id != NO_RANK {
            out.push(part.id);
            continue;
        }
        let bytes = &piece[part.start..part.end];
        match ranks.get(bytes) {
            Some(rank) => out.push(rank),
            None => {
                return Err(Error::InvalidArgument(format!(
                    "the byte sequence {bytes:?} has no rank, so this text cannot be encoded \
                     (the mergeable ranks must include every single byte)"
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiktoken::Ranks;

    fn ranks_of(tokens: &[&[u8]]) -> Ranks {
        let mut ranks: Ranks = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in tokens.iter().enumerate() {
            ranks.insert(t.to_vec(), 256 + i as Rank);
        }
        ranks
    }

    fn map_of(ranks: &Ranks) -> TokenMap {
        let mut map = TokenMap::default();
        for (t, &r) in ranks {
            map.insert(t, r);
        }
        map
    }

    /// The definition, step by step: merge the lowest-rank (then leftmost) adjacent pair.
    fn reference(ranks: &Ranks, piece: &[u8]) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    ranks.get(&[parts[i].clone(), parts[i + 1].clone()].concat()).map(|&r| (r, i))
                })
                .min();
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| ranks[p]).collect()
    }

    fn encode(ranks: &Ranks, piece: &[u8]) -> Vec<Rank> {
        let mut out = Vec::new();
        encode_piece(&map_of(ranks), piece, &mut out).unwrap();
        out
    }

    #[test]
    fn short_and_long_pieces_follow_the_definition() {
        let ranks = ranks_of(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"cab", b"bca", b"aab"]);
        let mut seed = 12345u64;
        for len in [0usize, 1, 2, 3, 5, 17, 127, 128, 129, 300, 1000] {
            for _ in 0..20 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        b"abc"[(seed >> 33) as usize % 3]
                    })
                    .collect();
                assert_eq!(
                    encode(&ranks, &piece),
                    reference(&ranks, &piece),
                    "piece {:?}",
                    String::from_utf8_lossy(&piece)
                );
            }
        }
    }

    #[test]
    fn ties_go_to_the_leftmost_pair() {
        let ranks = ranks_of(&[b"aa"]);
        assert_eq!(encode(&ranks, b"aaa"), vec![256, b'a' as Rank]);
        let long = vec![b'a'; 1001];
        let mut want = vec![256; 500];
        want.push(b'a' as Rank);
        assert_eq!(encode(&ranks, &long), want);
    }

    #[test]
    fn a_megabyte_piece_is_fast_enough() {
        let ranks = ranks_of(&[b"ab", b"abab", b"abababab"]);
        let piece = b"ab".repeat(500_000);
        let out = encode(&ranks, &piece);
        assert_eq!(out.len(), 125_000);
    }

    #[test]
    fn hostile_pieces_are_merged_in_windows() {
        // Every kind of long piece of the adversarial bench, with the real vocabularies: the
        // windows always find a shared symbol (no fallback to merging the whole piece at
        // once), and the result is the whole piece's.
        use crate::models::bpe::merge::{Dropout, WINDOW_OVERLAP, WINDOW_SYMBOLS};
        let Some(shared) = crate::utils::test_data::shared_dir() else {
            eprintln!("skipping: the shared data folder is absent");
            return;
        };
        let mut seed = 7u64;
        let mut pick = |alphabet: &[&str], chars: usize| -> Vec<u8> {
            (0..chars)
                .flat_map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    alphabet[(seed >> 33) as usize % alphabet.len()].bytes()
                })
                .collect()
        };
        let letters: Vec<String> = ('a'..='z').map(String::from).collect();
        let letters: Vec<&str> = letters.iter().map(String::as_str).collect();
        let cjk: Vec<String> =
            (0x4E00..0x4F00).filter_map(char::from_u32).map(String::from).collect();
        let cjk: Vec<&str> = cjk.iter().map(String::as_str).collect();
        let n = 200_000;
        let pieces = [
            b"a".repeat(n),
            b"\t".repeat(n),
            " \u{a0}".repeat(n / 3).into_bytes(),
            pick(&letters, n),
            pick(&["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"], n),
            pick(&["!", "#", "$", "%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", "?"], n),
            pick(&cjk, n / 3),
            pick(&["\u{1f468}\u{200d}\u{1f469}", "\u{200d}", "\u{1f467}", "\u{fe0f}"], n / 8),
            pick(&["a", "1", "!", " ", "\u{e9}", "\u{301}"], n),
        ];
        for name in ["whisper/gpt2", "cl100k_base/cl100k_base", "o200k_base/o200k_base"] {
            let path = shared.join("pretrained").join(format!("{name}.tiktoken"));
            let ranks = crate::tiktoken::ranks::load_tiktoken_bpe(&path).unwrap();
            let map = map_of(&ranks);
            for piece in &pieces {
                let mut windowed = Word::new();
                windowed.push_bytes(piece.len(), NO_RANK);
                let mut whole = windowed.clone();
                let ranker = &mut ByteRanks { ranks: &map, piece };
                assert!(
                    windowed.merge_in_windows(ranker, WINDOW_SYMBOLS, WINDOW_OVERLAP),
                    "{name}"
                );
                whole.merge_with_dropout(ranker, Dropout::Discard(|| false));
                assert!(windowed.symbols().eq(whole.symbols()), "{name}");
            }
        }
    }

    #[test]
    fn missing_single_bytes_are_an_error_not_a_panic() {
        let ranks: Ranks = [(b"a".to_vec(), 0)].into_iter().collect();
        let mut out = Vec::new();
        assert!(encode_piece(&map_of(&ranks), b"ab", &mut out).is_err());
    }
}
