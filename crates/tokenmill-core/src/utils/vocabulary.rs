//! A token ↔ id vocabulary held both ways: what the models whose vocabulary is a plain
//! token → id map (WordPiece, WordLevel) look tokens up in.
use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::tokens_by_id::TokensById;

/// token → id, and id → token text (see [`TokensById`]: where two tokens share an id, the
/// smaller text is that id's text). Debug-formatted as its size.
#[derive(Clone, Default)]
pub struct Vocabulary {
    ids: FxHashMap<String, u32>,
    /// Shared (an `Arc`) so that encodings can take their token texts from it later (see
    /// [`Vocabulary::table`]).
    tokens: Arc<TokensById>,
}

/// Formats a table (a model's vocabulary, merges, ...) as its number of entries: a model's
/// `Debug` output stays short.
pub(crate) fn debug_size<'a, T>(table: &'a T, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result
where
    &'a T: IntoIterator,
    <&'a T as IntoIterator>::IntoIter: ExactSizeIterator,
{
    std::fmt::Debug::fmt(&table.into_iter().len(), f)
}

impl std::fmt::Debug for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_size(&self.ids, f)
    }
}

impl Vocabulary {
    pub fn new(vocab: HashMap<String, u32>) -> Self {
        let ids: FxHashMap<String, u32> = vocab.into_iter().collect();
        let tokens = Arc::new(TokensById::new(ids.iter().map(|(t, &id)| (t.as_str(), id))));
        Vocabulary { ids, tokens }
    }

    /// The id of `token`.
    #[inline]
    pub fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    /// The text of `id`.
    #[inline]
    pub fn token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id)
    }

    /// The number of tokens (ids shared by several tokens count once per token).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// (token, id) in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        self.ids.iter().map(|(t, &id)| (t.as_str(), id))
    }

    /// A copy as a token → id map.
    pub fn to_map(&self) -> HashMap<String, u32> {
        self.ids.iter().map(|(t, &id)| (t.clone(), id)).collect()
    }

    /// (token, id) in increasing id order, one token per id (what files and tokenizer.json
    /// list).
    pub fn in_id_order(&self) -> Vec<(&str, u32)> {
        self.tokens.in_id_order()
    }

    /// The id → token text table (shared, cheap to clone): what encodings whose token texts
    /// were deferred fill them from (see `EncodePlan::deferred_texts`).
    pub fn table(&self) -> Arc<TokensById> {
        Arc::clone(&self.tokens)
    }
}

/// Equal when the token → id maps are.
impl PartialEq for Vocabulary {
    fn eq(&self, other: &Self) -> bool {
        self.ids == other.ids
    }
}

/// The `Model` lookups (`token_to_id`, `id_to_token`, `get_vocab`, `get_vocab_size`) of a model
/// whose vocabulary is the `Vocabulary` in its field `vocab`, for its `impl Model` block.
macro_rules! vocabulary_lookups {
    () => {
        fn token_to_id(&self, token: &str) -> Option<u32> {
            self.vocab.id(token)
        }
        fn id_to_token(&self, id: u32) -> Option<String> {
            self.vocab.token(id).map(str::to_owned)
        }
        fn get_vocab(&self) -> std::collections::HashMap<String, u32> {
            self.vocab.to_map()
        }
        fn get_vocab_size(&self) -> usize {
            self.vocab.len()
        }
    };
}
pub(crate) use vocabulary_lookups;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_directions_and_holes() {
        let vocab = Vocabulary::new(
            [("a", 0), ("b", 2), ("c", 2)].iter().map(|&(t, i)| (t.to_string(), i)).collect(),
        );
        assert_eq!((vocab.id("a"), vocab.id("c"), vocab.id("z")), (Some(0), Some(2), None));
        assert_eq!((vocab.token(0), vocab.token(1), vocab.token(2)), (Some("a"), None, Some("b")));
        assert_eq!(vocab.len(), 3);
        assert_eq!(vocab.in_id_order(), vec![("a", 0), ("b", 2)]);
        assert_eq!(vocab.to_map().len(), 3);
        assert_eq!(Vocabulary::default().len(), 0);
    }
}
