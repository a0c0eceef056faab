//! Word level: rule-based word tokenization for many languages, sentence splitting (rules plus
//! a Punkt learner), and character n-grams.
//!
//! - `tokenizer`: UAX #29 word boundaries as the base for any language, per-language rules from
//!   `rules` on top. Every non-whitespace character of the input is covered by exactly one token.
//! - `punkt`: Kiss & Strunk's unsupervised sentence boundary learner (as NLTK's PunktTrainer)
//!   and the sentence splitter that applies its parameters.
//! - `ngrams`: overlapping character k-grams per word.
//!
//! - `segmenter`: Chinese and Japanese word segmentation (dictionary + maximum-probability path +
//!   HMM for unknown words, jieba's method and dictionary format).
pub mod collocations;
pub mod ngrams;
pub mod punkt;
pub mod rules;
pub mod segmenter;
pub mod tokenizer;

pub use ngrams::char_ngrams;
pub use punkt::{PunktParameters, PunktTrainer, SentenceSplitter};
pub use rules::{LanguageRules, LANGUAGES};
pub use segmenter::{Segmenter, SegmenterLanguage, SegmenterOptions, SegmenterTrainer};
pub use tokenizer::{block_end, CharOffsets, WordToken, WordTokenizer, WordTokenizerOptions};
