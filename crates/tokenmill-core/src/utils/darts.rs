//! The one double-array trie of the crate: byte keys, Darts-clone's unit layout (the layout
//! SentencePiece stores in `precompiled_charsmap` and reads in its flatbuffer models).
//!
//! Hand-written because no maintained crate builds the Darts-clone layout, which the charsmaps
//! and flatbuffers we write must use so that `sentencepiece` can read them byte for byte. The
//! same trie then serves every piece lookup: the Unigram model's (`models::unigram`), the
//! user-defined-symbol matcher and the trainers'.
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
                return Err(Error::InvalidArgument(format!(
                    "double array: duplicate key {:?}",
                    String::from_utf8_lossy(pair[0].0)
                )));
            }
        }
        if let Some((key, _)) =
            sorted.iter().find(|(k, v)| k.is_empty() || k.contains(&0) || *v >= VALUE_FLAG)
        {
            return Err(Error::InvalidArgument(format!(
                "double array: key {:?} is empty, has a NUL byte or its value is too large",
                String::from_utf8_lossy(key)
            )));
        }
        let mut graph = Graph { share: share_suffixes, ..Default::default() };
        let root = graph.add_root(&sorted);
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
        builder.place_all(&graph, root)?;
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
/// A node as interning sees it: its value and its (label, child) edges.
type NodeShape = (Option<u32>, Vec<(u8, u32)>);

#[derive(Default)]
struct Graph {
    share: bool,
    nodes: Vec<Node>,
    edges: Vec<(u8, u32)>,
    interned: rustc_hash::FxHashMap<NodeShape, u32>,
}

#[derive(Clone, Copy)]
struct Node {
    value: Option<u32>,
    /// This node's children in `edges`, labels ascending.
    first_edge: u32,
    edge_count: u32,
}

impl Graph {
    /// The root node of `keys` (sorted), every subtree built (and numbered) before its parent.
    /// Iterative, with one frame per key byte on an explicit stack: a key of any length (a
    /// 100 kB piece) cannot overflow the call stack.
    fn add_root(&mut self, keys: &[(&[u8], u32)]) -> u32 {
        let mut stack = vec![Frame::new(keys, 0, keys.len(), 0)];
        loop {
            let top = stack.last_mut().expect("the root frame is popped last");
            if let Some((start, end, label)) = top.next_group(keys) {
                let depth = top.depth + 1;
                stack.push(Frame::new(keys, start, end, depth).with_label(label));
                continue;
            }
            let frame = stack.pop().expect("checked above");
            let id = self.intern(frame.value, frame.children);
            match stack.last_mut() {
                Some(parent) => parent.children.push((frame.label, id)),
                None => return id,
            }
        }
    }

    /// The id of a node with this value and children: a new one, or with `share` an equal one
    /// already built.
    fn intern(&mut self, value: Option<u32>, children: Vec<(u8, u32)>) -> u32 {
        if self.share {
            if let Some(&id) = self.interned.get(&(value, children.clone())) {
                return id;
            }
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node {
            value,
            first_edge: self.edges.len() as u32,
            edge_count: children.len() as u32,
        });
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

/// A node of [`Graph::add_root`]'s walk: the keys `keys[next..end]` that share their first
/// `depth` bytes (the node's value already taken off), the label from its parent and the
/// children built so far.
struct Frame {
    next: usize,
    end: usize,
    depth: usize,
    label: u8,
    value: Option<u32>,
    children: Vec<(u8, u32)>,
}

impl Frame {
    fn new(keys: &[(&[u8], u32)], start: usize, end: usize, depth: usize) -> Frame {
        let (value, next) = match keys.get(start) {
            Some(&(key, value)) if start < end && key.len() == depth => (Some(value), start + 1),
            _ => (None, start),
        };
        Frame { next, end, depth, label: 0, value, children: Vec::new() }
    }

    fn with_label(self, label: u8) -> Frame {
        Frame { label, ..self }
    }

    /// The next child's keys (`start..end`) and label, consumed.
    fn next_group(&mut self, keys: &[(&[u8], u32)]) -> Option<(usize, usize, u8)> {
        let start = self.next;
        if start >= self.end {
            return None;
        }
        let depth = self.depth;
        let label = keys[start].0[depth];
        let end = start + keys[start..self.end].partition_point(|(k, _)| k[depth] == label);
        self.next = end;
        Some((start, end, label))
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
    /// Places the graph below `root` (which sits at unit 0), depth first, children in label
    /// order. An explicit stack instead of recursion, so that a key of any length (a 100 kB
    /// piece) cannot overflow the call stack; the order, hence every unit, is the recursive
    /// walk's.
    fn place_all(&mut self, graph: &Graph, root: u32) -> Result<()> {
        // (graph node, its unit, its label; None for the root, whose unit keeps label 0)
        let mut stack: Vec<(u32, usize, Option<u8>)> = vec![(root, 0, None)];
        while let Some((id, position, label)) = stack.pop() {
            if let Some(label) = label {
                self.units[position] = label as u32;
            }
            if let Some(base) = self.place(graph, id, position)? {
                let children = graph.children(&graph.nodes[id as usize]);
                stack.extend(
                    children
                        .iter()
                        .rev()
                        .map(|&(label, child)| (child, base ^ label as usize, Some(label))),
                );
            }
        }
        Ok(())
    }

    /// Places the children of graph node `id`, which sits at `position`, and returns their
    /// base, or `None` when the node was placed before (a shared subtree, pointed at again
    /// when the offset allows) and its children need no placing.
    fn place(&mut self, graph: &Graph, id: u32, position: usize) -> Result<Option<usize>> {
        let node = graph.nodes[id as usize];
        let has_leaf = if node.value.is_some() { HAS_LEAF } else { 0 };
        if let Some(base) =
            self.node_base[id as usize].filter(|&base| Self::encodable(position, base))
        {
            self.units[position] |= Self::offset_bits(position ^ base) | has_leaf;
            return Ok(None);
        }
        let children = graph.children(&node);
        // The labels of the children: 0 for the value (a key that ends here), then the bytes.
        let labels: Vec<u8> = node
            .value
            .map(|_| 0)
            .into_iter()
            .chain(children.iter().map(|&(label, _)| label))
            .collect();
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
        Ok(Some(base))
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

/// Darts-clone's own construction, unit for unit, for callers whose output must be
/// byte-identical to a file that SentencePiece writes with Darts-clone (the FlatBuffers model's
/// tries). [`DoubleArray::build`] packs more densely but places nodes differently; this one
/// follows `DoubleArrayBuilder` exactly: a ring of 16 open 256-unit blocks with a free list,
/// the first free unit that fits wins, and the blocks that leave the ring are closed by giving
/// their unused units dummy labels. With `values`, keys go through Darts-clone's DAWG (equal
/// subtrees stored once); without, each key's value is its index and no subtree is shared.
pub(crate) mod darts_clone {
    use crate::error::{Error, Result};

    const BLOCK_SIZE: usize = 256;
    const EXTRA_BLOCKS: usize = 16;
    const EXTRAS: usize = BLOCK_SIZE * EXTRA_BLOCKS;
    const LOWER_MASK: usize = 0xFF;
    const UPPER_MASK: usize = 0xFF << 21;

    /// Builds the units of `keys` (sorted, unique, non-empty, NUL-free). `values` (one per
    /// key, below 2^31) selects the DAWG construction.
    pub fn build(keys: &[&[u8]], values: Option<&[u32]>) -> Result<Vec<u32>> {
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidArgument(
                "double array: keys must be sorted and unique".into(),
            ));
        }
        if keys.iter().any(|k| k.is_empty() || k.contains(&0)) {
            return Err(Error::InvalidArgument(
                "double array: empty key or NUL byte in a key".into(),
            ));
        }
        let mut builder = ArrayBuilder::default();
        builder.start();
        match values {
            Some(values) => {
                if values.len() != keys.len() || values.iter().any(|&v| v >= 1 << 31) {
                    return Err(Error::InvalidArgument("double array: bad values".into()));
                }
                let dawg = Dawg::build(keys, values);
                builder.table = vec![0; dawg.num_intersections()];
                if dawg.child(0) != 0 {
                    builder.build_from_dawg(&dawg)?;
                }
            }
            None => {
                if !keys.is_empty() {
                    builder.build_from_keyset(keys)?;
                }
            }
        }
        builder.fix_all_blocks();
        Ok(builder.units)
    }

    #[derive(Clone, Copy, Default)]
    struct Extra {
        prev: usize,
        next: usize,
        used: bool,
        fixed: bool,
    }

    #[derive(Default)]
    struct ArrayBuilder {
        units: Vec<u32>,
        extras: Vec<Extra>,
        extras_head: usize,
        labels: Vec<u8>,
        /// Offsets of already-placed DAWG intersections.
        table: Vec<usize>,
    }

    fn set_offset(unit: &mut u32, offset: usize) -> Result<()> {
        if offset >= 1 << 29 {
            return Err(Error::InvalidArgument("double array: too many keys".into()));
        }
        *unit &= (1 << 31) | (1 << 8) | 0xFF;
        let offset = offset as u32;
        *unit |= if offset < 1 << 21 { offset << 10 } else { (offset << 2) | (1 << 9) };
        Ok(())
    }

    fn set_label(unit: &mut u32, label: u8) {
        *unit = (*unit & !0xFF) | label as u32;
    }

    impl ArrayBuilder {
        fn extra(&mut self, id: usize) -> &mut Extra {
            &mut self.extras[id % EXTRAS]
        }

        fn start(&mut self) {
            self.extras = vec![Extra::default(); EXTRAS];
            self.reserve_id(0);
            self.extra(0).used = true;
            set_offset(&mut self.units[0], 1).expect("offset 1 fits");
            set_label(&mut self.units[0], 0);
        }

        fn num_blocks(&self) -> usize {
            self.units.len() / BLOCK_SIZE
        }

        /// Places the nodes of `keys` depth first, children in label order, as Darts-clone's
        /// recursive `build_from_keyset` does; an explicit stack of `(begin, end, depth,
        /// dic_id)` instead of recursion, so that a key of any length cannot overflow the call
        /// stack.
        fn build_from_keyset(&mut self, keys: &[&[u8]]) -> Result<()> {
            let mut stack = vec![(0, keys.len(), 0, 0)];
            let mut groups = Vec::new();
            while let Some((mut begin, end, depth, dic_id)) = stack.pop() {
                let label_at = |i: usize| keys[i].get(depth).copied().unwrap_or(0);
                self.labels.clear();
                let mut value = None;
                for i in begin..end {
                    let label = label_at(i);
                    if label == 0 && value.is_none() {
                        value = Some(i as u32);
                    }
                    if self.labels.last() != Some(&label) {
                        self.labels.push(label);
                    }
                }
                let offset = self.arrange(dic_id, value.unwrap_or(0))?;
                while begin < end && label_at(begin) == 0 {
                    begin += 1;
                }
                groups.clear();
                while begin < end {
                    let label = label_at(begin);
                    let group_end = begin
                        + keys[begin..end]
                            .partition_point(|k| k.get(depth).copied().unwrap_or(0) == label);
                    groups.push((begin, group_end, depth + 1, offset ^ label as usize));
                    begin = group_end;
                }
                stack.extend(groups.drain(..).rev());
            }
            Ok(())
        }

        /// Places the DAWG's nodes depth first, children in label order, as Darts-clone's
        /// recursive `build_from_dawg` does; an explicit stack of `(dawg_id, dic_id)` instead
        /// of recursion, so that a key of any length cannot overflow the call stack.
        fn build_from_dawg(&mut self, dawg: &Dawg) -> Result<()> {
            let mut stack = vec![(0, 0)];
            let mut children = Vec::new();
            while let Some((dawg_id, dic_id)) = stack.pop() {
                let first_child = dawg.child(dawg_id);
                if dawg.is_intersection[first_child] {
                    let known = self.table[dawg.intersection_id(first_child)];
                    if known != 0 {
                        let offset = known ^ dic_id;
                        if offset & UPPER_MASK == 0 || offset & LOWER_MASK == 0 {
                            if dawg.labels[first_child] == 0 {
                                self.units[dic_id] |= 1 << 8;
                            }
                            set_offset(&mut self.units[dic_id], offset)?;
                            continue;
                        }
                    }
                }
                self.labels.clear();
                let mut child = first_child;
                while child != 0 {
                    self.labels.push(dawg.labels[child]);
                    child = dawg.sibling(child);
                }
                // A terminal (label 0) sorts first among its siblings.
                let offset = self.arrange(dic_id, dawg.value(first_child))?;
                if dawg.is_intersection[first_child] {
                    self.table[dawg.intersection_id(first_child)] = offset;
                }
                children.clear();
                let mut child = first_child;
                while child != 0 {
                    let label = dawg.labels[child];
                    if label != 0 {
                        children.push((child, offset ^ label as usize));
                    }
                    child = dawg.sibling(child);
                }
                stack.extend(children.drain(..).rev());
            }
            Ok(())
        }

        /// Places the children labelled `self.labels` of the node at `dic_id`; a label 0 child
        /// is the node's value unit, holding `value`. Returns the children's base.
        fn arrange(&mut self, dic_id: usize, value: u32) -> Result<usize> {
            let offset = self.find_valid_offset(dic_id);
            set_offset(&mut self.units[dic_id], dic_id ^ offset)?;
            for index in 0..self.labels.len() {
                let label = self.labels[index];
                let child = offset ^ label as usize;
                self.reserve_id(child);
                if label == 0 {
                    self.units[dic_id] |= 1 << 8;
                    self.units[child] = value | (1 << 31);
                } else {
                    set_label(&mut self.units[child], label);
                }
            }
            self.extra(offset).used = true;
            Ok(offset)
        }

        fn find_valid_offset(&mut self, id: usize) -> usize {
            if self.extras_head < self.units.len() {
                let mut unfixed = self.extras_head;
                loop {
                    let offset = unfixed ^ self.labels[0] as usize;
                    if self.is_valid_offset(id, offset) {
                        return offset;
                    }
                    unfixed = self.extra(unfixed).next;
                    if unfixed == self.extras_head {
                        break;
                    }
                }
            }
            self.units.len() | (id & LOWER_MASK)
        }

        fn is_valid_offset(&mut self, id: usize, offset: usize) -> bool {
            if self.extra(offset).used {
                return false;
            }
            let relative = id ^ offset;
            if relative & LOWER_MASK != 0 && relative & UPPER_MASK != 0 {
                return false;
            }
            (1..self.labels.len()).all(|i| {
                let at = offset ^ self.labels[i] as usize;
                !self.extras[at % EXTRAS].fixed
            })
        }

        fn reserve_id(&mut self, id: usize) {
            if id >= self.units.len() {
                self.expand_units();
            }
            if id == self.extras_head {
                self.extras_head = self.extra(id).next;
                if self.extras_head == id {
                    self.extras_head = self.units.len();
                }
            }
            let Extra { prev, next, .. } = *self.extra(id);
            self.extra(prev).next = next;
            self.extra(next).prev = prev;
            self.extra(id).fixed = true;
        }

        fn expand_units(&mut self) {
            let src_units = self.units.len();
            let src_blocks = self.num_blocks();
            let dest_units = src_units + BLOCK_SIZE;
            let dest_blocks = src_blocks + 1;
            if dest_blocks > EXTRA_BLOCKS {
                self.fix_block(src_blocks - EXTRA_BLOCKS);
            }
            self.units.resize(dest_units, 0);
            if dest_blocks > EXTRA_BLOCKS {
                for id in src_units..dest_units {
                    let extra = self.extra(id);
                    extra.used = false;
                    extra.fixed = false;
                }
            }
            for i in src_units + 1..dest_units {
                self.extra(i - 1).next = i;
                self.extra(i).prev = i - 1;
            }
            self.extra(src_units).prev = dest_units - 1;
            self.extra(dest_units - 1).next = src_units;
            let head = self.extras_head;
            let head_prev = self.extra(head).prev;
            self.extra(src_units).prev = head_prev;
            self.extra(dest_units - 1).next = head;
            self.extra(head_prev).next = src_units;
            self.extra(head).prev = dest_units - 1;
        }

        fn fix_all_blocks(&mut self) {
            let end = self.num_blocks();
            for block in end.saturating_sub(EXTRA_BLOCKS)..end {
                self.fix_block(block);
            }
        }

        fn fix_block(&mut self, block: usize) {
            let begin = block * BLOCK_SIZE;
            let end = begin + BLOCK_SIZE;
            let unused = (begin..end).find(|&offset| !self.extra(offset).used).unwrap_or(0);
            for id in begin..end {
                if !self.extra(id).fixed {
                    self.reserve_id(id);
                    set_label(&mut self.units[id], (id ^ unused) as u8);
                }
            }
        }
    }

    #[derive(Clone, Copy, Default)]
    struct DawgNode {
        /// The first child, or the value of a terminal (label 0) node.
        child: u32,
        sibling: u32,
        label: u8,
        is_state: bool,
        has_sibling: bool,
    }

    impl DawgNode {
        fn unit(&self) -> u32 {
            if self.label == 0 {
                (self.child << 1) | self.has_sibling as u32
            } else {
                (self.child << 2) | ((self.is_state as u32) << 1) | self.has_sibling as u32
            }
        }
    }

    /// Darts-clone's `DawgBuilder`: a trie minimized on the fly (equal sibling groups hashed
    /// and stored once); siblings are consecutive units, labels ascending.
    struct Dawg {
        nodes: Vec<DawgNode>,
        units: Vec<u32>,
        labels: Vec<u8>,
        is_intersection: Vec<bool>,
        /// Ones in `is_intersection[..=id]`, filled by `finish`.
        rank: Vec<u32>,
        table: Vec<u32>,
        node_stack: Vec<u32>,
        recycle_bin: Vec<u32>,
        num_states: usize,
    }

    fn hash(mut key: u32) -> u32 {
        key = (!key).wrapping_add(key << 15);
        key ^= key >> 12;
        key = key.wrapping_add(key << 2);
        key ^= key >> 4;
        key = key.wrapping_mul(2057);
        key ^ (key >> 16)
    }

    impl Dawg {
        fn build(keys: &[&[u8]], values: &[u32]) -> Dawg {
            let mut dawg = Dawg {
                nodes: vec![DawgNode { label: 0xFF, ..Default::default() }],
                units: vec![0],
                labels: vec![0],
                is_intersection: vec![false],
                rank: Vec::new(),
                table: vec![0; 1 << 10],
                node_stack: vec![0],
                recycle_bin: Vec::new(),
                num_states: 1,
            };
            for (key, &value) in keys.iter().zip(values) {
                dawg.insert(key, value);
            }
            dawg.flush(0);
            dawg.units[0] = dawg.nodes[0].unit();
            dawg.labels[0] = dawg.nodes[0].label;
            let mut ones = 0;
            dawg.rank = dawg
                .is_intersection
                .iter()
                .map(|&b| {
                    ones += b as u32;
                    ones
                })
                .collect();
            dawg
        }

        fn child(&self, id: usize) -> usize {
            (self.units[id] >> 2) as usize
        }

        fn sibling(&self, id: usize) -> usize {
            if self.units[id] & 1 == 1 {
                id + 1
            } else {
                0
            }
        }

        fn value(&self, id: usize) -> u32 {
            self.units[id] >> 1
        }

        fn intersection_id(&self, id: usize) -> usize {
            self.rank[id] as usize - 1
        }

        fn num_intersections(&self) -> usize {
            self.rank.last().copied().unwrap_or(0) as usize
        }

        fn insert(&mut self, key: &[u8], value: u32) {
            let mut id = 0usize;
            let mut pos = 0;
            while pos <= key.len() {
                let child = self.nodes[id].child as usize;
                if child == 0 {
                    break;
                }
                let label = key.get(pos).copied().unwrap_or(0);
                if label > self.nodes[child].label {
                    self.nodes[child].has_sibling = true;
                    self.flush(child as u32);
                    break;
                }
                id = child;
                pos += 1;
            }
            if pos > key.len() {
                return;
            }
            while pos <= key.len() {
                let label = key.get(pos).copied().unwrap_or(0);
                let child = self.append_node();
                let parent_child = self.nodes[id].child;
                let node = &mut self.nodes[child as usize];
                node.is_state = parent_child == 0;
                node.sibling = parent_child;
                node.label = label;
                self.nodes[id].child = child;
                self.node_stack.push(child);
                id = child as usize;
                pos += 1;
            }
            self.nodes[id].child = value;
        }

        fn append_node(&mut self) -> u32 {
            match self.recycle_bin.pop() {
                Some(id) => {
                    self.nodes[id as usize] = DawgNode::default();
                    id
                }
                None => {
                    self.nodes.push(DawgNode::default());
                    self.nodes.len() as u32 - 1
                }
            }
        }

        fn append_unit(&mut self) -> usize {
            self.is_intersection.push(false);
            self.units.push(0);
            self.labels.push(0);
            self.units.len() - 1
        }

        fn flush(&mut self, id: u32) {
            while *self.node_stack.last().expect("the root stays on the stack") != id {
                let node_id = self.node_stack.pop().expect("checked above");
                if self.num_states >= self.table.len() - (self.table.len() >> 2) {
                    self.expand_table();
                }
                let mut siblings = 0;
                let mut i = node_id;
                while i != 0 {
                    siblings += 1;
                    i = self.nodes[i as usize].sibling;
                }
                let (found, hash_id) = self.find_node(node_id);
                let match_id = if found != 0 {
                    self.is_intersection[found] = true;
                    found
                } else {
                    let mut unit_id = 0;
                    for _ in 0..siblings {
                        unit_id = self.append_unit();
                    }
                    let mut i = node_id;
                    while i != 0 {
                        let node = self.nodes[i as usize];
                        self.units[unit_id] = node.unit();
                        self.labels[unit_id] = node.label;
                        unit_id -= 1;
                        i = node.sibling;
                    }
                    self.table[hash_id] = unit_id as u32 + 1;
                    self.num_states += 1;
                    unit_id + 1
                };
                let mut i = node_id;
                while i != 0 {
                    let next = self.nodes[i as usize].sibling;
                    self.recycle_bin.push(i);
                    i = next;
                }
                let top = *self.node_stack.last().expect("the root stays on the stack");
                self.nodes[top as usize].child = match_id as u32;
            }
            self.node_stack.pop();
        }

        fn hash_node(&self, mut id: u32) -> u32 {
            let mut value = 0;
            while id != 0 {
                let node = self.nodes[id as usize];
                value ^= hash(((node.label as u32) << 24) ^ node.unit());
                id = node.sibling;
            }
            value
        }

        fn hash_unit(&self, mut id: usize) -> u32 {
            let mut value = 0;
            while id != 0 {
                value ^= hash(((self.labels[id] as u32) << 24) ^ self.units[id]);
                if self.units[id] & 1 == 0 {
                    break;
                }
                id += 1;
            }
            value
        }

        /// The unit of a sibling group equal to `node_id`'s (0 if none), and the table slot.
        fn find_node(&self, node_id: u32) -> (usize, usize) {
            let size = self.table.len();
            let mut hash_id = self.hash_node(node_id) as usize % size;
            loop {
                let unit_id = self.table[hash_id] as usize;
                if unit_id == 0 {
                    return (0, hash_id);
                }
                if self.are_equal(node_id, unit_id) {
                    return (unit_id, hash_id);
                }
                hash_id = (hash_id + 1) % size;
            }
        }

        fn are_equal(&self, node_id: u32, mut unit_id: usize) -> bool {
            let mut i = self.nodes[node_id as usize].sibling;
            while i != 0 {
                if self.units[unit_id] & 1 == 0 {
                    return false;
                }
                unit_id += 1;
                i = self.nodes[i as usize].sibling;
            }
            if self.units[unit_id] & 1 == 1 {
                return false;
            }
            let mut i = node_id;
            while i != 0 {
                let node = self.nodes[i as usize];
                if node.unit() != self.units[unit_id] || node.label != self.labels[unit_id] {
                    return false;
                }
                i = node.sibling;
                unit_id = unit_id.wrapping_sub(1);
            }
            true
        }

        fn expand_table(&mut self) {
            let size = self.table.len() << 1;
            self.table = vec![0; size];
            for id in 1..self.units.len() {
                if self.labels[id] == 0 || self.units[id] & 2 == 2 {
                    let mut hash_id = self.hash_unit(id) as usize % size;
                    while self.table[hash_id] != 0 {
                        hash_id = (hash_id + 1) % size;
                    }
                    self.table[hash_id] = id as u32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_lists_every_key_with_its_value_in_order() {
        let words: Vec<String> = (0..2000)
            .map(|i| format!("{}{}", ["a", "ab", "▁x", "zz", "ü"][i % 5], i * 7919 % 997))
            .collect();
        let mut expected: Vec<(Vec<u8>, u32)> =
            words.iter().enumerate().map(|(i, w)| (w.as_bytes().to_vec(), i as u32)).collect();
        expected.sort();
        expected.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<(&[u8], u32)> = expected.iter().map(|(k, v)| (k.as_slice(), *v)).collect();
        assert_eq!(super::keys(&DoubleArray::build(&keys).unwrap().units), expected);
        assert_eq!(
            super::keys(&DoubleArray::build_sharing_suffixes(&keys).unwrap().units),
            expected
        );
        assert!(super::keys(&[]).is_empty());
        // A malformed array ends the walk instead of looping.
        let garbage: Vec<u32> = (0..4096u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        assert!(super::keys(&garbage).len() <= garbage.len());
    }

    #[test]
    fn finds_every_prefix_and_nothing_else() {
        let words: Vec<String> = (0..3000)
            .map(|i| format!("{}{}", ["a", "ab", "▁x", "zz"][i % 4], i * 7919 % 1000))
            .collect();
        let mut keys: Vec<(&[u8], u32)> =
            words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)).collect();
        keys.sort();
        keys.dedup_by(|a, b| a.0 == b.0);
        let da = DoubleArray::build(&keys).unwrap();
        let lookup: std::collections::HashMap<&[u8], u32> = keys.iter().cloned().collect();
        for probe in words.iter().map(|w| format!("{w}9q")) {
            let mut found = Vec::new();
            da.common_prefix_search(probe.as_bytes(), |v, len| found.push((v, len)));
            let expected: Vec<(u32, usize)> = (1..=probe.len())
                .filter_map(|len| lookup.get(&probe.as_bytes()[..len]).map(|&v| (v, len)))
                .collect();
            assert_eq!(found, expected, "{probe}");
        }
    }

    #[test]
    fn shared_suffixes_find_the_same_keys_in_fewer_units() {
        // Many prefixes in front of the same endings with the same values (as in a charsmap).
        let words: Vec<String> =
            (0..400).flat_map(|i| (0..20).map(move |j| format!("{i}-{j:02}"))).collect();
        let keys: Vec<(&[u8], u32)> = words
            .iter()
            .map(|w| (w.as_bytes(), w[w.len() - 2..].parse::<u32>().unwrap()))
            .collect();
        let plain = DoubleArray::build(&keys).unwrap();
        let shared = DoubleArray::build_sharing_suffixes(&keys).unwrap();
        assert!(
            shared.units.len() * 3 < plain.units.len(),
            "{} vs {}",
            shared.units.len(),
            plain.units.len()
        );
        for probe in
            words.iter().flat_map(|w| [w.clone(), format!("{w}7"), w[..w.len() - 1].to_string()])
        {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            plain.common_prefix_search(probe.as_bytes(), |v, len| a.push((v, len)));
            shared.common_prefix_search(probe.as_bytes(), |v, len| b.push((v, len)));
            assert_eq!(a, b, "{probe}");
        }
    }

    #[test]
    fn darts_clone_tries_hold_every_key_in_whole_blocks() {
        let words: Vec<String> = (0..3000)
            .map(|i| format!("{}{}", ["a", "ab", "▁x", "zz", "ü"][i % 5], i * 7919 % 997))
            .collect();
        let mut keys: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        keys.sort();
        keys.dedup();
        // Values shared by many keys, so that the DAWG merges subtrees.
        let values: Vec<u32> = keys.iter().map(|k| k.len() as u32 % 3).collect();
        let plain = darts_clone::build(&keys, None).unwrap();
        let expected: Vec<(Vec<u8>, u32)> =
            keys.iter().enumerate().map(|(i, k)| (k.to_vec(), i as u32)).collect();
        assert_eq!(super::keys(&plain), expected);
        // (`keys` stops after as many nodes as units, fewer than a DAWG's paths: look up each.)
        let shared = darts_clone::build(&keys, Some(&values)).unwrap();
        assert!(shared.len() < plain.len());
        for (key, &value) in keys.iter().zip(&values) {
            assert_eq!(longest_prefix(&shared, key), Some((value, key.len())), "{key:?}");
        }
        for units in [&plain, &shared] {
            assert_eq!(units.len() % 256, 0);
            assert_eq!(longest_prefix(units, b"q"), None);
        }
        assert!(darts_clone::build(&[&b"b"[..], &b"a"[..]], None).is_err());
        assert!(darts_clone::build(&[&b"a\0"[..]], None).is_err());
        assert_eq!(darts_clone::build(&[], None).unwrap().len(), 256);
    }

    #[test]
    fn a_100_kb_key_builds_without_deep_recursion() {
        // Each builder once walked the trie recursively, one call per key byte: a key of
        // ~28 kB overflowed the stack (a segfault, not a panic).
        let long: Vec<u8> = (0..100_000).map(|i| b'a' + (i % 7) as u8).collect();
        let mut keys: Vec<&[u8]> = vec![&long[..1], &long[..50_000], &long, b"b", b"ba"];
        keys.sort();
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        let pairs: Vec<(&[u8], u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        let arrays = [
            DoubleArray::build(&pairs).unwrap().units,
            DoubleArray::build_sharing_suffixes(&pairs).unwrap().units,
            darts_clone::build(&keys, None).unwrap(),
            darts_clone::build(&keys, Some(&values)).unwrap(),
        ];
        let mut probe = long.clone();
        probe.push(b'z');
        for units in &arrays {
            let mut found = Vec::new();
            common_prefix_search(units, &probe, |value, len| found.push((value, len)));
            // Sorted, the keys are `a`, 50 kB of it, 100 kB of it, `b`, `ba`: values 0-4.
            assert_eq!(found, [(0, 1), (1, 50_000), (2, 100_000)]);
            assert_eq!(longest_prefix(units, b"bab"), Some((4, 2)));
        }
    }

    #[test]
    fn malformed_units_never_panic() {
        let units = vec![0xFFFF_FFFF, 7, 0x8000_0000];
        common_prefix_search(&units, b"abc\xff", |_, _| {});
        common_prefix_search(&[], b"abc", |_, _| {});
    }
}
