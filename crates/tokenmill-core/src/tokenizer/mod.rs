//! The generic pipeline: its contracts, its alignment carriers and the `Tokenizer`.
//!
//! A tokenizer runs: `Normalizer` (rewrites text, keeping alignments in a `NormalizedString`)
//! → `PreTokenizer` (cuts it into words, a `PreTokenizedString`) → `Model` (words to tokens)
//! → `PostProcessor` (adds special tokens, joins pairs, into an `Encoding`) and, the other way,
//! `Decoder` (tokens back to text).
//!
//! Here: the stage traits (this file), `pipeline.rs` (`TokenizerImpl`: the stages tied
//! together, its encode entry, decode and training), `plan/` (how encode walks a text, chosen
//! when the components change), `output.rs` (the output kinds of the encode entry),
//! `encoding.rs` (the `Encoding` users get) and `packed.rs` (`StoredEncoding`: an `Encoding` as
//! a batch holds it, packed where it fits),
//! the carriers (`normalized.rs`, `pretokenized.rs`), `added_vocabulary.rs`,
//! `serialization.rs` (tokenizer.json), `decode_stream.rs` and `memory.rs` (what a text needs in
//! memory, checked before it is built).
//! May import: the component wrappers (`models`, `normalizers`, `pre_tokenizers`, `processors`,
//! `decoders`), `trainers` (for `train`) and `utils`. The components import only the contracts
//! and carriers from here.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub(crate) mod added_vocabulary;
pub(crate) mod decode_stream;
pub mod encoding;
pub(crate) mod memory;
pub(crate) mod normalized;
pub(crate) mod output;
mod packed;
pub(crate) mod pipeline;
pub(crate) mod plan;
pub(crate) mod pretokenized;
pub(crate) mod serialization;
#[cfg(test)]
pub(crate) mod test_support;

pub use added_vocabulary::{AddedToken, AddedTokenWithId, AddedVocabulary};
pub use output::{EncodeOptions, Ids, Output, StoredBatch};
pub use pipeline::{EncodeInput, InputSequence, Tokenizer, TokenizerImpl, Trainer};
pub use plan::{Capabilities, Capability, EncodePlan};

pub use decode_stream::DecodeStream;
pub use encoding::Encoding;
pub use normalized::{NormalizedString, Offsets, Pattern, SplitDelimiterBehavior};
pub use packed::{StoredEncoding, Values};
pub use pretokenized::{OffsetReferential, OffsetType, PreTokenizedString, Split};

/// One token produced by a model: its id, its text, and its byte span in the piece it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub id: u32,
    pub value: String,
    pub offsets: Offsets,
}

impl Token {
    pub fn new(id: u32, value: String, offsets: Offsets) -> Self {
        Token { id, value, offsets }
    }
}

/// Where a model emits the tokens of a word: `emit(id, (start, end))`, byte offsets in the word.
pub trait TokenSink: FnMut(u32, Offsets) {}

impl<F: FnMut(u32, Offsets)> TokenSink for F {}

pub trait Normalizer {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()>;
}

pub trait PreTokenizer {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> Result<()>;
}

pub trait Model {
    /// Tokenizes one piece of text (a word, after pre-tokenization).
    fn tokenize(&self, sequence: &str) -> Result<Vec<Token>>;
    /// `tokenize` as `(id, byte offsets)` per token, without building token strings.
    fn tokenize_ids_offsets(&self, word: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        self.tokenize(word)?.into_iter().for_each(|t| emit(t.id, t.offsets));
        Ok(())
    }
    /// Tokenizes `raw` with each byte replaced by its GPT-2 byte-level char; offsets are bytes
    /// of `raw` (a token may end inside one of its multi-byte chars).
    fn tokenize_byte_level(&self, raw: &str, emit: &mut dyn FnMut(u32, Offsets)) -> Result<()> {
        plan::tokenize_mapped_bytes(self, raw, emit)
    }
    fn token_to_id(&self, token: &str) -> Option<u32>;
    fn id_to_token(&self, id: u32) -> Option<String>;
    fn get_vocab(&self) -> HashMap<String, u32>;
    fn get_vocab_size(&self) -> usize;
    /// Writes the model's own files (e.g. vocab.json + merges.txt) into `folder`.
    fn save(&self, folder: &Path, prefix: Option<&str>) -> Result<Vec<PathBuf>>;
}

pub trait PostProcessor {
    /// How many tokens `process` adds for a single input or a pair.
    fn added_tokens(&self, is_pair: bool) -> usize;
    /// Joins the encodings of the inputs (one, or two for a pair) and adds special tokens.
    fn process(
        &self,
        encoding: Encoding,
        pair: Option<Encoding>,
        add_special_tokens: bool,
    ) -> Result<Encoding>;
}

pub trait Decoder {
    /// Turns tokens into text pieces; `decode` joins them.
    fn decode_chain(&self, tokens: Vec<String>) -> Result<Vec<String>>;
    fn decode(&self, tokens: Vec<String>) -> Result<String> {
        Ok(self.decode_chain(tokens)?.concat())
    }
}
