//! tiktoken: rank-based byte-level BPE, as OpenAI's tiktoken defines it.
//!
//! - `bpe`: encode one piece (the bytes of one regex match) by repeatedly merging the adjacent
//!   pair whose concatenation has the lowest rank (leftmost pair on ties, as tiktoken does).
//! - `ranks`: read and write `.tiktoken` rank files (`base64(token) rank` per line).
//! - `core`: `CoreBpe` = split pattern + ranks + special tokens; encode (ordinary, with allowed
//!   special tokens, batches in parallel) and decode.
//! - `unstable`: tiktoken's `_encode_bytes` (bytes that may not be UTF-8) and
//!   `encode_with_unstable` (the tokens that more text could still change).
//!
//! The split pattern runs through `utils::regex::Regex`, which uses a hand-written scanner for
//! the known patterns (r50k, cl100k, o200k, ...), where most of the time goes.
//!
//! May import `models::bpe` (the merge kernel its ranker drives), `pre_tokenizers::scanners`
//! (the hand-compiled splitters), `utils` and `error`; nothing imports it but the bindings.
pub(crate) mod bpe;
pub(crate) mod core;
pub(crate) mod ranks;
pub(crate) mod token_map;
pub(crate) mod unstable;

pub use self::bpe::{encode_piece, Rank};
pub use self::core::CoreBpe;
pub use self::ranks::{
    dump_tiktoken_bpe, load_tiktoken_bpe, parse_tiktoken_bpe, write_tiktoken_bpe, Ranks,
};
