//! A byte-keyed double-array trie in the Darts-clone unit layout, the layout SentencePiece stores
//! in `precompiled_charsmap` and uses for its piece lookups.
//!
//! Hand-written because no maintained crate builds the Darts-clone layout (which the charsmap
//! we write must use so that `sentencepiece` can read it), and the same trie then serves the
//! piece lookups of the Unigram encoder and the user-defined-symbol matcher.
//!
//! Unit layout (one `u32` per slot): bits 0-7 label, bit 8 "has leaf", bit 9 "offset is shifted
//! by 8", bits 10-31 offset; a value unit has bit 31 set and the value in bits 0-30 (so it never
//! matches a byte label). The children of a node at position `p` with offset `o` live at
//! `p ^ o ^ label`; the value of a node with a leaf lives at `p ^ o` (label 0).
use crate::error::{Error, Result};

const HAS_LEAF: u32 = 1 << 8;
const SHIFTED_OFFSET: u32 = 1 << 9;
const VALUE_FLAG: u32 = 1 << 31;
/// Offsets at or above this need the shifted form (low 8 bits zero).
const PLAIN_OFFSET_LIMIT: usize = 1 << 21;
const OFFSET_LIMIT: usize = 1 << 29;
/// How many of the most recent 256-slot blocks are searched for room before a new one is added.
const OPEN_BLOCKS: usize = 16;
/// Offsets that must have a zero low byte in the shifted form.
const SHIFTED_ALIGNMENT: usize = 0xFF;

#[inline]
fn unit_offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & SHIFTED_OFFSET) >> 6)) as usize
}
#[inline]
fn unit_label(unit: u32) -> u32 {
    unit & (VALUE_FLAG | 0xFF)
}
#[inline]
fn unit_value(unit: u32) -> u32 {
    unit & !VALUE_FLAG
}

/// Calls `found(value, prefix_length)` for every key that is a prefix of `key`, shortest first.
/// Never panics on a malformed array: a lookup that leaves the array simply ends.
#[inline]
pub fn common_prefix_search(units: &[u32], key: &[u8], mut found: impl FnMut(u32, usize)) {
    let Some(&root) = units.first() else { return };
    let mut node = unit_offset(root);
    for (i, &byte) in key.iter().enumerate() {
        // Keys never hold NUL, and a free slot's label reads as 0: stop rather than match it.
        if byte == 0 {
            return;
        }
        node ^= byte as usize;
        let Some(&unit) = units.get(node) else { return };
        if unit_label(unit) != byte as u32 {
            return;
        }
        node ^= unit_offset(unit);
        if unit & HAS_LEAF != 0 {
            let Some(&value_unit) = units.get(node) else { return };
            found(unit_value(value_unit), i + 1);
        }
    }
}

/// Whether some key starts with `prefix` (or is it).
pub fn has_key_starting_with(units: &[u32], prefix: &[u8]) -> bool {
    let Some(&root) = units.first() else { return false };
    let mut node = unit_offset(root);
    for &byte in prefix {
        if byte == 0 {
            return false;
        }
        node ^= byte as usize;
        match units.get(node) {
            Some(&unit) if unit_label(unit) == byte as u32 => node ^= unit_offset(unit),
            _ => return false,
        }
    }
    true
}

/// The longest key that is a prefix of `key`: `(value, length)`.
#[inline]
pub fn longest_prefix(units: &[u32], key: &[u8]) -> Option<(u32, usize)> {
    let mut best = None;
    common_prefix_search(units, key, |value, len| best = Some((value, len)));
    best
}

/// Every key of the trie with its value, sorted by key (a charsmap's rules, for
/// `SentencePieceNormalizer.Decompile`). A malformed array cannot loop: the walk visits at
/// most as many nodes as there are units.
pub fn keys(units: &[u32]) -> Vec<(Vec<u8>, u32)> {
    let mut out = Vec::new();
    let Some(&root) = units.first() else { return out };
    let mut stack: Vec<(usize, Vec<u8>)> = vec![(unit_offset(root), Vec::new())];
    let mut budget = units.len();
    while let Some((base, prefix)) = stack.pop() {
        for byte in 1..=255u8 {
            let position = base ^ byte as usize;
            let Some(&unit) = units.get(position) else { continue };
            if unit_label(unit) != byte as u32 {
                continue;
            }
            if budget == 0 {
                return out;
            }
            budget -= 1;
            let child = position ^ unit_offset(unit);
            let mut key = prefix.clone();
            key.push(byte);
            if unit & HAS_LEAF != 0 {
                if let Some(&value_unit) = units.get(child) {
                    out.push((key.clone(), unit_value(value_unit)));
                }
            }
            stack.push((child, key));
        }
    }
    out.sort();
    out
}

/// A built double array (its units).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DoubleArray {
    pub units: Vec<u32>,
}

impl DoubleArray {
    /// Builds the trie of `keys` (with their values). Keys must be non-empty, free of NUL bytes
    /// and unique; values below 2^31.
    pub fn build(keys: &[(&[u8], u32)]) -> Result<Self> {
        Self::build_with(keys, false)
    }

    /// Like [`DoubleArray::build`], but subtrees that are equal (same labels, values and
    /// subtrees below) are stored once, as Darts-clone does when it builds from a DAWG. Worth
    /// it when many keys share endings and values (a charsmap's rules: ~8 times fewer units);
    /// a trie whose values are all distinct has nothing to share.
    pub fn build_sharing_suffixes(keys: &[(&[u8], u32)]) -> Result<Self> {
        Self::build_with(keys, true)
    }

    fn build_with(keys: &[(&[u8], u32)], share_suffixes: bool) -> Result<Self> {
        let mut sorted: Vec<(&[u8], u32)> = keys.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        for pair in sorted.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(Error::InvalidArgument(format!("double array: duplicate key {:?}", String::from_utf8_lossy(pair[0].0))));
            }
        }
        if let Some((key, _)) = sorted.iter().find(|(k, v)| k.is_empty() || k.contains(&0) || *v >= VALUE_FLAG) {
            return Err(Error::InvalidArgument(format!("double array: key {:?} is empty, has a NUL byte or its value is too large", String::from_utf8_lossy(key))));
        }
        let mut graph = Graph { share: share_suffixes, ..Default::default() };
        let root = graph.add_node(&sorted, 0);
        let mut builder = Builder {
            units: vec![0; 256],
            used: vec![false; 256],
            free_in_block: vec![256],
            free_bits: vec![[u64::MAX; 4]],
            used_base: vec![false; 256],
            node_base: vec![None; graph.nodes.len()],
        };
        builder.mark_used(0);
        // No node may use base 0 (for the root: offset 0, its children around unit 0 itself):
        // sentencepiece's charsmap validation ("precompiled_charsmap is invalid") rejects such
        // arrays, and Darts-clone never builds them.
        builder.used_base[0] = true;
        builder.place(&graph, root, 0)?;
        // Whole 256-unit blocks: Darts-clone (SentencePiece's reader) requires it.
        Ok(DoubleArray { units: builder.units })
    }

    pub fn common_prefix_search(&self, key: &[u8], found: impl FnMut(u32, usize)) {
        common_prefix_search(&self.units, key, found)
    }

    pub fn longest_prefix(&self, key: &[u8]) -> Option<(u32, usize)> {
        longest_prefix(&self.units, key)
    }

    pub fn is_empty(&self) -> bool {
        self.units.len() <= 1
    }

    /// Little-endian bytes of the units (the serialized form).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.units.iter().flat_map(|u| u.to_le_bytes()).collect()
    }
}

/// The trie as a graph: each node's value (a key ends there) and its children by label. With
/// `share`, equal nodes are one node (a DAWG: suffixes shared).
#[derive(Default)]
struct Graph {
    share: bool,
    nodes: Vec<Node>,
    edges: Vec<(u8, u32)>,
    interned: rustc_hash::FxHashMap<(Option<u32>, Vec<(u8, u32)>), u32>,
}

#[derive(Clone, Copy)]
struct Node {
    value: Option<u32>,
    /// This node's children in `edges`, labels ascending.
    first_edge: u32,
    edge_count: u32,
}

impl Graph {
    /// The node of `keys` (sorted, sharing their first `depth` bytes), its subtree built first.
    /// Depth-first, so the recursion depth is the longest key's length.
    fn add_node(&mut self, keys: &[(&[u8], u32)], depth: usize) -> u32 {
        let (value, rest) = match keys.first() {
            Some(&(key, value)) if key.len() == depth => (Some(value), &keys[1..]),
            _ => (None, keys),
        };
        let mut children: Vec<(u8, u32)> = Vec::new();
        let mut start = 0;
        while start < rest.len() {
            let label = rest[start].0[depth];
            let end = start + rest[start..].partition_point(|(k, _)| k[depth] == label);
            children.push((label, self.add_node(&rest[start..end], depth + 1)));
            start = end;
        }
        if self.share {
            if let Some(&id) = self.interned.get(&(value, children.clone())) {
                return id;
            }
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node { value, first_edge: self.edges.len() as u32, edge_count: children.len() as u32 });
        self.edges.extend_from_slice(&children);
        if self.share {
            self.interned.insert((value, children), id);
        }
        id
    }

    fn children(&self, node: &Node) -> &[(u8, u32)] {
        &self.edges[node.first_edge as usize..(node.first_edge + node.edge_count) as usize]
    }
}

struct Builder {
    units: Vec<u32>,
    used: Vec<bool>,
    /// Unused slots per 256-slot block, so full blocks are skipped without a scan.
    free_in_block: Vec<u16>,
    /// The unused slots of each block as a bit set, so a scan visits only those.
    free_bits: Vec<[u64; 4]>,
    /// Bases taken by a node, by slot.
    used_base: Vec<bool>,
    /// The base each graph node's children were placed at (shared nodes point there again).
    node_base: Vec<Option<usize>>,
}

impl Builder {
    /// Places the children of graph node `id`, which sits at `position`, then recurses into
    /// each child. A node already placed elsewhere is pointed at its children again when the
    /// offset allows.
    fn place(&mut self, graph: &Graph, id: u32, position: usize) -> Result<()> {
        let node = graph.nodes[id as usize];
        let has_leaf = if node.value.is_some() { HAS_LEAF } else { 0 };
        if let Some(base) = self.node_base[id as usize].filter(|&base| Self::encodable(position, base)) {
            self.units[position] |= Self::offset_bits(position ^ base) | has_leaf;
            return Ok(());
        }
        let children = graph.children(&node);
        // The labels of the children: 0 for the value (a key that ends here), then the bytes.
        let labels: Vec<u8> = node.value.map(|_| 0).into_iter().chain(children.iter().map(|&(label, _)| label)).collect();
        let base = self.find_base(position, &labels)?;
        self.units[position] |= Self::offset_bits(position ^ base) | has_leaf;
        self.used_base[base] = true;
        self.node_base[id as usize] = Some(base);
        for &label in &labels {
            self.mark_used(base ^ label as usize);
        }
        if let Some(value) = node.value {
            self.units[base] = value | VALUE_FLAG;
        }
        for &(label, child) in children {
            let at = base ^ label as usize;
            self.units[at] = label as u32;
            self.place(graph, child, at)?;
        }
        Ok(())
    }

    /// The offset field of a unit (plain, or shifted when it is too large).
    fn offset_bits(offset: usize) -> u32 {
        if offset < PLAIN_OFFSET_LIMIT {
            (offset as u32) << 10
        } else {
            ((offset as u32) << 2) | SHIFTED_OFFSET
        }
    }

    fn mark_used(&mut self, slot: usize) {
        if !self.used[slot] {
            self.used[slot] = true;
            self.free_in_block[slot >> 8] -= 1;
            self.free_bits[slot >> 8][(slot >> 6) & 3] &= !(1u64 << (slot & 63));
        }
    }

    /// Whether `position ^ base` has an encoding (plain, or shifted with a zero low byte); a
    /// zero offset is avoided as Darts-clone never builds one.
    fn encodable(position: usize, base: usize) -> bool {
        let offset = position ^ base;
        offset != 0
            && (offset < PLAIN_OFFSET_LIMIT
                || (offset & SHIFTED_ALIGNMENT == 0 && offset < OFFSET_LIMIT))
    }

    /// A base for a node at `position` with children `labels` (ascending): the children's
    /// slots must be free, the offset (`position ^ base`) encodable, and the base unused by any
    /// other node (which is what makes a label check enough to tell nodes apart). Every free
    /// slot of the recent blocks is tried as the first child's, which packs the array densely
    /// (a trie of SentencePiece's NFKC rules fills ~5 times fewer slots than with one
    /// candidate per block); failing that, a new block is opened with a base whose offset is
    /// always encodable (same low byte as the position).
    fn find_base(&mut self, position: usize, labels: &[u8]) -> Result<usize> {
        let first_label = labels[0] as usize;
        let blocks = self.units.len() / 256;
        for block in blocks.saturating_sub(OPEN_BLOCKS)..blocks {
            if (self.free_in_block[block] as usize) < labels.len() {
                continue;
            }
            for (word, &bits) in self.free_bits[block].iter().enumerate() {
                let mut bits = bits;
                while bits != 0 {
                    let slot = (block << 8) | (word << 6) | bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let base = slot ^ first_label;
                    if Self::encodable(position, base)
                        && !self.used_base[base]
                        && labels[1..].iter().all(|&l| !self.used[base ^ l as usize])
                    {
                        return Ok(base);
                    }
                }
            }
        }
        let base = (blocks << 8) | (position & 0xFF);
        if base ^ position >= OFFSET_LIMIT {
            return Err(Error::InvalidArgument("double array: too many keys".into()));
        }
        self.units.resize(self.units.len() + 256, 0);
        self.used.resize(self.used.len() + 256, false);
        self.free_in_block.push(256);
        self.free_bits.push([u64::MAX; 4]);
        self.used_base.resize(self.used_base.len() + 256, false);
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_lists_every_key_with_its_value_in_order() {
        let words: Vec<String> = (0..2000).map(|i| format!("{}{}", ["a", "ab", "▁x", "zz", "ü"][i % 5], i * 7919 % 997)).collect();
        let mut expected: Vec<(Vec<u8>, u32)> = words.iter().enumerate().map(|(i, w)| (w.as_bytes().to_vec(), i as u32)).collect();
        expected.sort();
        expected.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<(&[u8], u32)> = expected.iter().map(|(k, v)| (k.as_slice(), *v)).collect();
        assert_eq!(super::keys(&DoubleArray::build(&keys).unwrap().units), expected);
        assert_eq!(super::keys(&DoubleArray::build_sharing_suffixes(&keys).unwrap().units), expected);
        assert!(super::keys(&[]).is_empty());
        // A malformed array ends the walk instead of looping.
        let garbage: Vec<u32> = (0..4096u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        assert!(super::keys(&garbage).len() <= garbage.len());
    }

    #[test]
    fn finds_every_prefix_and_nothing_else() {
        let words: Vec<String> = (0..3000).map(|i| format!("{}{}", ["a", "ab", "▁x", "zz"][i % 4], i * 7919 % 1000)).collect();
        let mut keys: Vec<(&[u8], u32)> = words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)).collect();
        keys.sort();
        keys.dedup_by(|a, b| a.0 == b.0);
        let da = DoubleArray::build(&keys).unwrap();
        let lookup: std::collections::HashMap<&[u8], u32> = keys.iter().cloned().collect();
        for probe in words.iter().map(|w| format!("{w}9q")) {
            let mut found = Vec::new();
            da.common_prefix_search(probe.as_bytes(), |v, len| found.push((v, len)));
            let expected: Vec<(u32, usize)> =
                (1..=probe.len()).filter_map(|len| lookup.get(&probe.as_bytes()[..len]).map(|&v| (v, len))).collect();
            assert_eq!(found, expected, "{probe}");
        }
    }

    #[test]
    fn shared_suffixes_find_the_same_keys_in_fewer_units() {
        // Many prefixes in front of the same endings with the same values (as in a charsmap).
        let words: Vec<String> = (0..400).flat_map(|i| (0..20).map(move |j| format!("{i}-{j:02}"))).collect();
        let keys: Vec<(&[u8], u32)> = words.iter().map(|w| (w.as_bytes(), w[w.len() - 2..].parse::<u32>().unwrap())).collect();
        let plain = DoubleArray::build(&keys).unwrap();
        let shared = DoubleArray::build_sharing_suffixes(&keys).unwrap();
        assert!(shared.units.len() * 3 < plain.units.len(), "{} vs {}", shared.units.len(), plain.units.len());
        for probe in words.iter().flat_map(|w| [w.clone(), format!("{w}7"), w[..w.len() - 1].to_string()]) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            plain.common_prefix_search(probe.as_bytes(), |v, len| a.push((v, len)));
            shared.common_prefix_search(probe.as_bytes(), |v, len| b.push((v, len)));
            assert_eq!(a, b, "{probe}");
        }
    }

    #[test]
    fn malformed_units_never_panic() {
        let units = vec![0xFFFF_FFFF, 7, 0x8000_0000];
        common_prefix_search(&units, b"abc\xff", |_, _| {});
        common_prefix_search(&[], b"abc", |_, _| {});
    }
}
