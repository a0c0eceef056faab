//! Bytes → rank lookup tuned for BPE's many short keys.
//!
//! Why not just `HashMap<Vec<u8>, Rank>`: encoding does several lookups per piece (the whole
//! piece, then every candidate pair), almost all of keys shorter than 16 bytes, and with byte-slice
//! keys each lookup hashes the slice and calls `memcmp` on a heap key (a cache miss). Here keys
//! shorter than 16 bytes are packed into one `u128` (bytes + length) with a few unaligned
//! loads, so hashing and comparison are a couple of integer operations; longer keys keep a
//! byte-slice map.
use rustc_hash::FxHashMap;

use super::bpe::Rank;

/// Keys shorter than this are packed into a `u128`.
pub const PACKED_MAX: usize = 15;

#[derive(Debug, Clone, Default)]
pub struct TokenMap {
    packed: FxHashMap<u128, Rank>,
    long: FxHashMap<Box<[u8]>, Rank>,
}

#[inline(always)]
fn read_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

#[inline(always)]
fn read_u32(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4])) as u64
}

#[inline(always)]
fn read_u16(b: &[u8], at: usize) -> u64 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap_or([0; 2])) as u64
}

/// Up to 8 bytes as a little-endian integer (bytes beyond `b.len()` are zero). Two overlapping
/// loads cover any length; OR-ing them is exact because the overlap holds the same bytes.
#[inline(always)]
fn pack_le(b: &[u8]) -> u64 {
    let n = b.len();
    match n {
        0 => 0,
        1 => b[0] as u64,
        2..=3 => read_u16(b, 0) | (read_u16(b, n - 2) << (8 * (n - 2))),
        4..=7 => read_u32(b, 0) | (read_u32(b, n - 4) << (8 * (n - 4))),
        _ => read_u64(b, 0),
    }
}

/// `b.len() <= PACKED_MAX`: low 64 bits = the first 8 bytes, then the rest, length in the top byte.
#[inline(always)]
fn pack(b: &[u8]) -> u128 {
    let n = b.len();
    let (lo, hi) = if n <= 8 { (pack_le(b), 0) } else { (read_u64(b, 0), pack_le(&b[8..])) };
    lo as u128 | (hi as u128) << 64 | (n as u128) << 120
}

impl TokenMap {
    pub fn with_capacity(n: usize) -> Self {
        let mut packed = FxHashMap::default();
        packed.reserve(n);
        TokenMap { packed, long: FxHashMap::default() }
    }

    #[inline(always)]
    pub fn get(&self, bytes: &[u8]) -> Option<Rank> {
        if bytes.len() <= PACKED_MAX {
            self.packed.get(&pack(bytes)).copied()
        } else {
            self.long.get(bytes).copied()
        }
    }

    /// Inserts, returning the previous rank of these bytes if any.
    pub fn insert(&mut self, bytes: &[u8], rank: Rank) -> Option<Rank> {
        if bytes.len() <= PACKED_MAX {
            self.packed.insert(pack(bytes), rank)
        } else {
            self.long.insert(bytes.into(), rank)
        }
    }

    pub fn len(&self) -> usize {
        self.packed.len() + self.long.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_injective_on_short_keys() {
        let mut seen = std::collections::HashMap::new();
        let mut keys: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=PACKED_MAX {
            for fill in [0u8, 1, 255] {
                keys.push(vec![fill; len]);
                let mut k: Vec<u8> = (0..len as u8).collect();
                keys.push(k.clone());
                k[len - 1] = 0;
                keys.push(k);
            }
        }
        for k in keys {
            if let Some(other) = seen.insert(pack(&k), k.clone()) {
                assert_eq!(other, k, "two keys pack the same");
            }
        }
    }

    #[test]
    fn short_and_long_keys_round_trip() {
        let mut map = TokenMap::default();
        let keys: Vec<Vec<u8>> =
            (0..40).map(|n| (0..n).map(|i| (i * 7 + n) as u8).collect()).collect();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.insert(k, i as Rank), None);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k), Some(i as Rank));
        }
        assert_eq!(map.get(b"\x00\x00"), None);
        assert_eq!(map.len(), 40);
    }
}
