//! Greedy longest-match-first WordPiece in time linear in the word: the LinMaxMatch automaton of
//! Song et al., "Fast WordPiece Tokenization" (EMNLP 2021).
//!
//! Two byte tries share one node arena: the *start* trie holds every vocabulary token (matched at
//! the start of a word, literally) and the *continuation* trie holds the tokens that begin with
//! the continuing-subword prefix, without the prefix (matched anywhere else). Keeping them apart
//! matters: `##a` read literally at a word start and `a` read as a continuation are different
//! states.
//!
//! Each node `v` (the text `s` read since the current token started) has a failure link `f(v)`
//! and failure pops `F(v)`: when the next byte cannot extend `s`, the greedy algorithm would emit
//! the tokens `F(v)` (the longest token prefix of `s`, then of the rest, ...) and continue with
//! the rest of `s` as a continuation, which is the node `f(v)`. No failure link means the greedy
//! algorithm gets stuck (the whole word becomes the unknown token). Every byte of the word is
//! read once and each failure emits at least one token, so matching is linear in the word.
//!
//! `F(v)` extends the pops of `v`'s parent, so written out in full the pops of a long token's
//! path would take memory quadratic in its length. They are kept as *ropes* instead: a node's
//! pops are its parent's rope followed by the ropes of the failure chain walked to reach `f(v)`
//! (the same walk as Aho-Corasick's, linear in the vocabulary size overall). Pops of at most
//! `FLAT_MAX` tokens, nearly all of them, are also written out flat for the matching loop.
//!
//! Hand-written rather than taken from a crate: the automata crates (aho-corasick, daachorse)
//! find all or leftmost matches, not the greedy tokenization with its "stuck" state.
use std::collections::VecDeque;

#[cfg(test)]
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;
pub(crate) const START_ROOT: u32 = 0;
const CONTINUATION_ROOT: u32 = 1;
/// Nodes with more children than this are searched by binary search instead of a linear scan.
const LINEAR_SCAN_MAX: usize = 8;

/// Pops of at most this many tokens are stored flat; longer ones are read from their rope.
const FLAT_MAX: u32 = 32;
/// `Node::pops_len` of a node whose pops are read from the rope `pops_start`.
const IN_ROPE: u32 = u32::MAX;

/// One token emitted by a failure: its id and how many bytes of the word it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pop {
    pub id: u32,
    pub len: u32,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    /// Children are `edges[edges_start .. edges_start + edges_len]`, sorted by byte.
    edges_start: u32,
    edges_len: u32,
    fail: u32,
    /// `F(v)` is `pops[pops_start .. pops_start + pops_len]`, or the rope `pops_start` when
    /// `pops_len` is `IN_ROPE`.
    pops_start: u32,
    pops_len: u32,
}

/// A node of the pops' rope: one pop, or the concatenation of the ropes
/// `rope_children[start .. start + count]` (at least two, none empty).
#[derive(Debug, Clone, Copy)]
enum Rope {
    Leaf(Pop),
    Concat { start: u32, count: u32 },
}

/// The ropes while the automaton is built, with the number of pops of each.
#[derive(Default)]
struct Ropes {
    nodes: Vec<Rope>,
    children: Vec<u32>,
    /// Pops per rope, saturating (only compared with `FLAT_MAX`).
    lens: Vec<u32>,
}

impl Ropes {
    fn leaf(&mut self, pop: Pop) -> u32 {
        self.nodes.push(Rope::Leaf(pop));
        self.lens.push(1);
        (self.nodes.len() - 1) as u32
    }

    /// The rope of `parts` one after the other (`NONE` parts are empty): `NONE`, the only
    /// part, or a new concatenation.
    fn concat(&mut self, parts: &[u32]) -> u32 {
        let start = self.children.len();
        self.children.extend(parts.iter().copied().filter(|&p| p != NONE));
        match self.children.len() - start {
            0 => NONE,
            1 => self.children.pop().unwrap_or(NONE),
            count => {
                let len = self.children[start..]
                    .iter()
                    .fold(0u32, |sum, &c| sum.saturating_add(self.lens[c as usize]));
                self.nodes.push(Rope::Concat { start: start as u32, count: count as u32 });
                self.lens.push(len);
                (self.nodes.len() - 1) as u32
            }
        }
    }
}

/// Appends the pops of `rope` to `out` (time linear in the pops: every concatenation has two
/// parts or more, none empty).
fn expand(nodes: &[Rope], children: &[u32], rope: u32, out: &mut Vec<Pop>) {
    let mut stack = vec![rope];
    while let Some(r) = stack.pop() {
        match nodes[r as usize] {
            Rope::Leaf(pop) => out.push(pop),
            Rope::Concat { start, count } => {
                stack.extend(children[start as usize..(start + count) as usize].iter().rev())
            }
        }
    }
}

/// The compiled automaton of one vocabulary and prefix.
#[derive(Debug, Clone)]
pub(crate) struct Automaton {
    nodes: Vec<Node>,
    edge_bytes: Vec<u8>,
    edge_targets: Vec<u32>,
    pops: Vec<Pop>,
    /// The ropes of the pops longer than `FLAT_MAX` (see `Rope`).
    ropes: Vec<Rope>,
    rope_children: Vec<u32>,
    /// Direct child tables of the two roots (they have the most children).
    start_table: Box<[u32; 256]>,
    continuation_table: Box<[u32; 256]>,
}

/// The trie while it is built: children in maps, a token per node.
struct Builder {
    children: Vec<Vec<(u8, u32)>>,
    token: Vec<Option<Pop>>,
}

impl Builder {
    fn new() -> Self {
        Builder { children: vec![Vec::new(), Vec::new()], token: vec![None, None] }
    }

    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        self.children[node as usize].iter().find(|&&(b, _)| b == byte).map(|&(_, t)| t)
    }

    fn insert(&mut self, root: u32, text: &[u8], pop: Pop) {
        let mut node = root;
        for &byte in text {
            node = match self.child(node, byte) {
                Some(next) => next,
                None => {
                    let next = self.children.len() as u32;
                    self.children.push(Vec::new());
                    self.token.push(None);
                    self.children[node as usize].push((byte, next));
                    next
                }
            };
        }
        self.token[node as usize] = Some(pop);
    }
}

impl Automaton {
    /// Compiles the automaton for `vocab` (token → id) with continuation tokens marked by
    /// `prefix`. The empty token and the bare prefix are never matched (a match is never empty).
    pub(crate) fn new<'a>(vocab: impl Iterator<Item = (&'a str, u32)>, prefix: &str) -> Self {
        let mut builder = Builder::new();
        // Sorted insertion keeps the construction deterministic whatever the map order.
        let mut entries: Vec<(&str, u32)> = vocab.filter(|(t, _)| !t.is_empty()).collect();
        entries.sort_unstable();
        for &(token, id) in &entries {
            builder.insert(START_ROOT, token.as_bytes(), Pop { id, len: token.len() as u32 });
            if let Some(rest) = token.strip_prefix(prefix).filter(|r| !r.is_empty()) {
                builder.insert(
                    CONTINUATION_ROOT,
                    rest.as_bytes(),
                    Pop { id, len: rest.len() as u32 },
                );
            }
        }
        for children in &mut builder.children {
            children.sort_unstable();
        }
        Self::link(builder)
    }

    /// Computes failure links and pops breadth-first (a failure target is always shallower
    /// than its node, so it is done before), then freezes the trie into flat arrays.
    fn link(builder: Builder) -> Self {
        let n = builder.children.len();
        let mut fail = vec![NONE; n];
        let mut rope = vec![NONE; n];
        let mut ropes = Ropes::default();
        let mut pops_range = vec![(0u32, 0u32); n];
        let mut pops: Vec<Pop> = Vec::new();
        let mut queue: VecDeque<u32> = VecDeque::from([START_ROOT, CONTINUATION_ROOT]);
        let mut parts: Vec<u32> = Vec::new();
        let mut scratch: Vec<Pop> = Vec::new();
        while let Some(u) = queue.pop_front() {
            for &(byte, v) in &builder.children[u as usize] {
                queue.push_back(v);
                let (target, r) = match builder.token[v as usize] {
                    Some(pop) => (CONTINUATION_ROOT, ropes.leaf(pop)),
                    None => {
                        parts.clear();
                        parts.push(rope[u as usize]);
                        let mut z = fail[u as usize];
                        loop {
                            if z == NONE {
                                break (NONE, NONE);
                            }
                            if let Some(next) = builder.child(z, byte) {
                                break (next, ropes.concat(&parts));
                            }
                            parts.push(rope[z as usize]);
                            z = fail[z as usize];
                        }
                    }
                };
                fail[v as usize] = target;
                rope[v as usize] = r;
                if r != NONE {
                    pops_range[v as usize] = if ropes.lens[r as usize] <= FLAT_MAX {
                        scratch.clear();
                        expand(&ropes.nodes, &ropes.children, r, &mut scratch);
                        let start = pops.len() as u32;
                        pops.extend_from_slice(&scratch);
                        (start, scratch.len() as u32)
                    } else {
                        (r, IN_ROPE)
                    };
                }
            }
        }
        let mut nodes = Vec::with_capacity(n);
        let mut edge_bytes = Vec::new();
        let mut edge_targets = Vec::new();
        for (i, children) in builder.children.iter().enumerate() {
            nodes.push(Node {
                edges_start: edge_bytes.len() as u32,
                edges_len: children.len() as u32,
                fail: fail[i],
                pops_start: pops_range[i].0,
                pops_len: pops_range[i].1,
            });
            for &(byte, target) in children {
                edge_bytes.push(byte);
                edge_targets.push(target);
            }
        }
        let table = |root: u32| {
            let mut t = Box::new([NONE; 256]);
            for &(byte, target) in &builder.children[root as usize] {
                t[byte as usize] = target;
            }
            t
        };
        Automaton {
            nodes,
            edge_bytes,
            edge_targets,
            pops,
            ropes: ropes.nodes,
            rope_children: ropes.children,
            start_table: table(START_ROOT),
            continuation_table: table(CONTINUATION_ROOT),
        }
    }

    #[inline]
    fn goto(&self, node: u32, byte: u8) -> u32 {
        match node {
            START_ROOT => self.start_table[byte as usize],
            CONTINUATION_ROOT => self.continuation_table[byte as usize],
            _ => {
                let n = &self.nodes[node as usize];
                let start = n.edges_start as usize;
                let bytes = &self.edge_bytes[start..start + n.edges_len as usize];
                let found = if bytes.len() <= LINEAR_SCAN_MAX {
                    bytes.iter().position(|&b| b == byte)
                } else {
                    bytes.binary_search(&byte).ok()
                };
                found.map_or(NONE, |i| self.edge_targets[start + i])
            }
        }
    }

    /// Appends `F(node)` to `out`.
    #[inline]
    fn push_pops(&self, node: u32, out: &mut Vec<Pop>) {
        let n = &self.nodes[node as usize];
        if n.pops_len == IN_ROPE {
            expand(&self.ropes, &self.rope_children, n.pops_start, out);
        } else {
            out.extend_from_slice(
                &self.pops[n.pops_start as usize..(n.pops_start + n.pops_len) as usize],
            );
        }
    }

    /// Appends the greedy longest-match-first tokens of `word` to `out`; false when the
    /// greedy algorithm gets stuck (some part of the word matches no token). `out` may then
    /// hold a partial result.
    pub(crate) fn tokenize(&self, word: &[u8], out: &mut Vec<Pop>) -> bool {
        let mut node = START_ROOT;
        let mut i = 0;
        while i < word.len() {
            let next = self.goto(node, word[i]);
            if next != NONE {
                node = next;
                i += 1;
                continue;
            }
            if !self.fail_once(&mut node, out) {
                return false;
            }
        }
        while node != CONTINUATION_ROOT && node != START_ROOT {
            if !self.fail_once(&mut node, out) {
                return false;
            }
        }
        true
    }

    #[inline]
    fn fail_once(&self, node: &mut u32, out: &mut Vec<Pop>) -> bool {
        let fail = self.nodes[*node as usize].fail;
        if fail == NONE {
            return false;
        }
        self.push_pops(*node, out);
        *node = fail;
        true
    }

    /// Bytes used by the automaton (for memory reports).
    #[allow(dead_code)]
    pub(crate) fn heap_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + self.edge_bytes.len() * 5
            + self.pops.len() * 8
            + self.ropes.len() * std::mem::size_of::<Rope>()
            + self.rope_children.len() * 4
            + 2 * 256 * 4
    }
}

/// The reference greedy algorithm (repeated substring probes, quadratic): used by tests to
/// check the automaton on random vocabularies.
#[cfg(test)]
pub(crate) fn greedy_reference(
    vocab: &FxHashMap<String, u32>,
    prefix: &str,
    word: &str,
) -> Option<Vec<Pop>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < word.len() {
        let mut end = word.len();
        let mut found = None;
        while start < end {
            if word.is_char_boundary(end) {
                let piece = if start > 0 {
                    format!("{prefix}{}", &word[start..end])
                } else {
                    word[start..end].to_string()
                };
                if let Some(&id) = vocab.get(&piece) {
                    found = Some(Pop { id, len: (end - start) as u32 });
                    break;
                }
            }
            end -= 1;
        }
        let pop = found?;
        start += pop.len as usize;
        out.push(pop);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn automaton(tokens: &[&str], prefix: &str) -> (Automaton, FxHashMap<String, u32>) {
        let vocab: FxHashMap<String, u32> =
            tokens.iter().enumerate().map(|(i, t)| (t.to_string(), i as u32)).collect();
        (Automaton::new(vocab.iter().map(|(t, &i)| (t.as_str(), i)), prefix), vocab)
    }

    fn run(a: &Automaton, word: &str) -> Option<Vec<Pop>> {
        let mut out = Vec::new();
        a.tokenize(word.as_bytes(), &mut out).then_some(out)
    }

    #[test]
    fn matches_the_greedy_reference_on_random_vocabularies() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let alphabet = ['a', 'b', 'c', '#', 'é'];
        let random_string = |rng: &mut rand_chacha::ChaCha8Rng, max: usize| -> String {
            let n = rng.gen_range(1..=max);
            (0..n).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect()
        };
        for round in 0..300 {
            let prefix = ["##", "#", "", "a#"][round % 4];
            let mut tokens: Vec<String> =
                (0..rng.gen_range(1..20)).map(|_| random_string(&mut rng, 4)).collect();
            for _ in 0..rng.gen_range(0..10) {
                let t = random_string(&mut rng, 3);
                tokens.push(format!("{prefix}{t}"));
            }
            tokens.sort();
            tokens.dedup();
            let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
            let (a, vocab) = automaton(&refs, prefix);
            for _ in 0..40 {
                let word = random_string(&mut rng, 9);
                assert_eq!(
                    run(&a, &word),
                    greedy_reference(&vocab, prefix, &word),
                    "prefix {prefix:?} tokens {tokens:?} word {word:?}"
                );
            }
        }
    }

    #[test]
    fn literal_prefix_at_word_start_is_not_a_continuation() {
        let (a, _) = automaton(&["#", "##", "##a", "x"], "##");
        // At the start "##a" is read literally; after "x" the rest "##a" would have to be the
        // token "####a" (prefix + rest), which does not exist: stuck.
        assert_eq!(run(&a, "##a"), Some(vec![Pop { id: 2, len: 3 }]));
        assert_eq!(run(&a, "x##a"), None);
        assert_eq!(run(&a, "#"), Some(vec![Pop { id: 0, len: 1 }]));
    }

    /// A token of `n` letters ("abab…"), with the single letters as the other tokens.
    fn long_token(n: usize) -> (Automaton, FxHashMap<String, u32>, String) {
        let long: String = "ab".repeat(n / 2 + 1)[..n].to_string();
        let (a, vocab) = automaton(&["a", "b", "##a", "##b", &long], "##");
        (a, vocab, long)
    }

    #[test]
    fn long_tokens_take_linear_memory() {
        // Written out, the pops of the long token's path would be n²/2 tokens (80 GB here).
        let n = 100_000;
        let (a, _, long) = long_token(n);
        assert!(a.heap_bytes() < 200 * n, "{} bytes", a.heap_bytes());
        assert_eq!(run(&a, &long), Some(vec![Pop { id: 4, len: n as u32 }]));
        // Stopping one letter short pops the whole path: "a", then "##b", "##a", ... .
        let tokens = run(&a, &long[..n - 1]).unwrap();
        assert_eq!(tokens.len(), n - 1);
        assert_eq!(
            tokens[..3],
            [Pop { id: 0, len: 1 }, Pop { id: 3, len: 1 }, Pop { id: 2, len: 1 }]
        );
    }

    #[test]
    fn long_token_paths_match_the_greedy_reference() {
        let (a, vocab, long) = long_token(150);
        for end in 1..long.len() {
            for tail in ["", "a", "b", "x"] {
                let word = format!("{}{tail}", &long[..end]);
                assert_eq!(run(&a, &word), greedy_reference(&vocab, "##", &word), "{word}");
            }
        }
    }

    #[test]
    fn long_words_are_linear() {
        let (a, _) = automaton(&["a", "##a", "aaaa", "##aaaaaaab"], "##");
        let word = "a".repeat(1 << 20);
        let tokens = run(&a, &word).unwrap();
        assert_eq!(tokens.iter().map(|p| p.len as usize).sum::<usize>(), word.len());
    }
}
