//! WordPiece: greedy longest-match-first subwords (BERT).
//!
//! - `model`: the [`WordPiece`] model and [`WordPieceBuilder`];
//! - `trie`: the matching automaton (linear in the word length, LinMaxMatch);
//! - `files`: `vocab.txt`;
//! - `serialization`: the tokenizer.json "model" section.
//!
//! May import `tokenizer`'s model contracts, `models::bpe` (vocabulary-file helpers, the BPE it
//! converts from), `utils` and `error`.
pub mod files;
mod model;
mod serialization;
mod trie;

pub use model::{
    Vocab, WordPiece, WordPieceBuilder, DEFAULT_CONTINUING_SUBWORD_PREFIX,
    DEFAULT_MAX_INPUT_CHARS_PER_WORD, DEFAULT_UNK_TOKEN,
};
