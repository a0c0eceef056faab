//! tokenmill-words: the word level of tokenmill. Rule-based word tokenization for many languages,
//! sentence splitting (rules plus a Punkt learner), Chinese and Japanese word segmentation,
//! character n-grams, and n-gram collocations.
//!
//! - `tokenizer`: UAX #29 word boundaries as the base for any language, per-language rules from
//!   `rules` on top. Every non-whitespace character of the input is covered by exactly one token.
//! - `punkt`: Kiss & Strunk's unsupervised sentence boundary learner (as NLTK's PunktTrainer)
//!   and the sentence splitter that applies its parameters.
//! - `ngrams`: overlapping character k-grams per word.
//! - `segmenter`: Chinese and Japanese word segmentation (dictionary + maximum-probability path +
//!   HMM for unknown words, jieba's method and dictionary format).
//! - [`collocations`]: which word pairs, triples and quadruples belong together (NLTK's finders
//!   and association measures); a public module of its own.
//!
//! The API is what this file re-exports (the modules are private; `unreachable_pub` keeps every
//! other item `pub(crate)`). It works on words, not subword vocabularies: from tokenmill-core it
//! imports only `Error` and `Result` (one error type, which the bindings map to Python
//! exceptions in one place). No Python types: tokenmill-py binds this API.
#![warn(unreachable_pub)]

pub mod collocations;
mod ngrams;
mod punkt;
mod rules;
mod segmenter;
mod tokenizer;

pub use ngrams::char_ngrams;
pub use punkt::{PunktParameters, PunktTrainer, SentenceSplitter};
pub use rules::{Agglutination, LanguageRules, LANGUAGES};
pub use segmenter::dictionary::parse_numbered_line as parse_dictionary_line;
pub use segmenter::{
    Dictionary, DictionaryEntry, Hmm, Segmenter, SegmenterLanguage, SegmenterOptions,
    SegmenterTrainer,
};
pub use tokenizer::{block_end, CharOffsets, WordToken, WordTokenizer, WordTokenizerOptions};
