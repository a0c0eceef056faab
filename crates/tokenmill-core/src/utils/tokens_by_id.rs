//! id → token text, for models whose vocabulary is a token → id map.
//!
//! The pipeline looks up the text of every token it emits, so this is on the hot path: a table
//! indexed by id answers with one load where a hash map needs a hash and a probe. Vocabularies
//! whose ids are sparse (a few huge ids) would make the table large, so they keep a sorted list
//! searched by binary search instead.

/// Token texts by id. Where two tokens share an id, the smaller text wins (deterministic).
#[derive(Debug, Clone, Default)]
pub struct TokensById {
    /// `dense[id]` when ids are dense enough (see `new`).
    dense: Vec<Option<Box<str>>>,
    /// `(id, text)` sorted by id, when they are not.
    sparse: Vec<(u32, Box<str>)>,
}

/// Ids up to this factor times the vocabulary size (plus a margin) are stored densely.
const MAX_SPARSENESS: usize = 4;

impl TokensById {
    pub(crate) fn new<'a>(vocab: impl Iterator<Item = (&'a str, u32)>) -> Self {
        let mut entries: Vec<(u32, &str)> = vocab.map(|(token, id)| (id, token)).collect();
        // By id, then text: the first entry of each id is its smallest text.
        entries.sort_unstable();
        entries.dedup_by_key(|&mut (id, _)| id);
        let max_id = entries.last().map_or(0, |&(id, _)| id as usize);
        if max_id <= MAX_SPARSENESS * entries.len() + 1024 {
            let mut dense = vec![None; if entries.is_empty() { 0 } else { max_id + 1 }];
            for (id, token) in entries {
                dense[id as usize] = Some(token.into());
            }
            TokensById { dense, sparse: Vec::new() }
        } else {
            TokensById {
                dense: Vec::new(),
                sparse: entries.into_iter().map(|(id, t)| (id, t.into())).collect(),
            }
        }
    }

    /// The text of `id`, if the vocabulary has it.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&str> {
        if self.sparse.is_empty() {
            return self.dense.get(id as usize)?.as_deref();
        }
        let i = self.sparse.binary_search_by_key(&id, |&(k, _)| k).ok()?;
        Some(&self.sparse[i].1)
    }

    /// (text, id) in increasing id order.
    pub(crate) fn in_id_order(&self) -> Vec<(&str, u32)> {
        if self.sparse.is_empty() {
            self.dense
                .iter()
                .enumerate()
                .filter_map(|(id, t)| Some((t.as_deref()?, id as u32)))
                .collect()
        } else {
            self.sparse.iter().map(|(id, t)| (&**t, *id)).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_give_the_same_answers() {
        let dense = TokensById::new([("a", 0), ("b", 2), ("c", 2)].into_iter());
        assert_eq!(
            (dense.get(0), dense.get(1), dense.get(2), dense.get(3)),
            (Some("a"), None, Some("b"), None)
        );
        let sparse =
            TokensById::new([("a", 0), ("z", 4_000_000_000), ("y", 4_000_000_000)].into_iter());
        assert_eq!(
            (sparse.get(0), sparse.get(1), sparse.get(4_000_000_000)),
            (Some("a"), None, Some("y"))
        );
        assert_eq!(sparse.in_id_order(), vec![("a", 0), ("y", 4_000_000_000)]);
        assert_eq!(dense.in_id_order(), vec![("a", 0), ("b", 2)]);
        assert_eq!(TokensById::new(std::iter::empty()).get(0), None);
    }
}
