//! Byte-pair merging of one piece with tiktoken's rules.
//!
//! A piece starts as single bytes. While some adjacent pair of parts concatenates to bytes that
//! have a rank, the pair with the lowest rank is merged; among equal ranks (the same bytes at
//! several places) the leftmost pair is merged first. Ranks are unique per byte string, so this
//! fully determines the result.
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::token_map::TokenMap;
use crate::error::{Error, Result};

/// A token id (tiktoken calls it a rank: lower ranks merge first).
pub type Rank = u32;

const NO_RANK: Rank = Rank::MAX;

/// Pieces at least this long use the heap-based merge (O(n log n)); shorter ones the simple
/// scan over a small array (O(n²) but faster for the short pieces real text is made of).
const LONG_PIECE_BYTES: usize = 128;

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
    if piece.len() == 1 {
        return push_parts(ranks, piece, &[0, 1], out);
    }
    if piece.len() < LONG_PIECE_BYTES {
        let mut starts = [0u32; LONG_PIECE_BYTES + 1];
        let parts = merge_short(ranks, piece, &mut starts);
        push_parts(ranks, piece, parts, out)
    } else {
        let starts = merge_long(ranks, piece);
        push_parts(ranks, piece, &starts, out)
    }
}

/// `starts` holds the start of every part plus `piece.len()` at the end.
fn push_parts(ranks: &TokenMap, piece: &[u8], starts: &[u32], out: &mut Vec<Rank>) -> Result<()> {
    for w in starts.windows(2) {
        let part = &piece[w[0] as usize..w[1] as usize];
        match ranks.get(part) {
            Some(rank) => out.push(rank),
            // Only a single byte can be missing (merged parts have ranks by construction).
            None => {
                return Err(Error::InvalidArgument(format!(
                    "the byte sequence {part:?} has no rank, so this text cannot be encoded \
                     (the mergeable ranks must include every single byte)"
                )))
            }
        }
    }
    Ok(())
}

#[inline]
fn rank_of(ranks: &TokenMap, bytes: &[u8]) -> Rank {
    ranks.get(bytes).unwrap_or(NO_RANK)
}

/// Merge for short pieces: `starts[..len]` are the part starts plus the end; `pair[i]` is the
/// rank of part i merged with part i+1. Each step scans for the lowest rank.
fn merge_short<'a>(
    ranks: &TokenMap,
    piece: &[u8],
    starts: &'a mut [u32; LONG_PIECE_BYTES + 1],
) -> &'a [u32] {
    let n = piece.len();
    let mut pair = [NO_RANK; LONG_PIECE_BYTES];
    for (i, start) in starts.iter_mut().enumerate().take(n + 1) {
        *start = i as u32;
    }
    for i in 0..n.saturating_sub(1) {
        pair[i] = rank_of(ranks, &piece[i..i + 2]);
    }
    let mut len = n + 1; // entries in `starts`; there are len-1 parts and len-2 pairs
    loop {
        let mut best = NO_RANK;
        let mut at = 0;
        for (i, &r) in pair[..len.saturating_sub(2)].iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == NO_RANK {
            break;
        }
        // Merge part `at` with part `at + 1`: drop start `at + 1`.
        starts.copy_within(at + 2..len, at + 1);
        pair.copy_within(at + 2..len - 1, at + 1);
        len -= 1;
        let pair_rank = |i: usize| {
            if i + 2 < len {
                rank_of(ranks, &piece[starts[i] as usize..starts[i + 2] as usize])
            } else {
                NO_RANK
            }
        };
        pair[at] = pair_rank(at);
        if at > 0 {
            pair[at - 1] = pair_rank(at - 1);
        }
    }
    &starts[..len]
}

/// Merge for long pieces: parts form a linked list keyed by their start byte; candidate pairs
/// sit in a min-heap ordered by (rank, start), so ties go to the leftmost pair as in the scan.
/// Stale heap entries (a part that was merged away or whose pair changed) are skipped on pop.
fn merge_long(ranks: &TokenMap, piece: &[u8]) -> Vec<u32> {
    let n = piece.len();
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let mut pair = vec![NO_RANK; n];
    let mut heap = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        pair[i] = rank_of(ranks, &piece[i..i + 2]);
        if pair[i] != NO_RANK {
            heap.push(Reverse((pair[i], i)));
        }
    }
    // The rank of part `i` merged with its successor.
    let pair_rank = |next: &[usize], i: usize| {
        let j = next[i];
        if j < n {
            rank_of(ranks, &piece[i..next[j]])
        } else {
            NO_RANK
        }
    };
    while let Some(Reverse((rank, i))) = heap.pop() {
        if !alive[i] || pair[i] != rank {
            continue;
        }
        let j = next[i];
        alive[j] = false;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
        }
        pair[i] = pair_rank(&next, i);
        if pair[i] != NO_RANK {
            heap.push(Reverse((pair[i], i)));
        }
        let p = prev[i];
        if p != usize::MAX {
            pair[p] = pair_rank(&next, p);
            if pair[p] != NO_RANK {
                heap.push(Reverse((pair[p], p)));
            }
        }
    }
    let mut starts: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < n {
        starts.push(i as u32);
        i = next[i];
    }
    starts.push(n as u32);
    starts
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
    fn missing_single_bytes_are_an_error_not_a_panic() {
        let ranks: Ranks = [(b"a".to_vec(), 0)].into_iter().collect();
        let mut out = Vec::new();
        assert!(encode_piece(&map_of(&ranks), b"ab", &mut out).is_err());
    }
}
