//! The fast feed: when a Tokenizer's words can be cut straight from the raw text, training skips
//! the alignment bookkeeping of `encode` (training needs the words, not their offsets).
//!
//! Applies to the byte-level setup (no normalizer, a `ByteLevel` pre-tokenizer, no added tokens):
//! raw GPT-2 regex pieces are counted, and only the distinct pieces are mapped to the byte-level
//! alphabet afterwards (the mapping is one-to-one, so the counts are the same as mapping every
//! occurrence first). Anything else goes through the full pipeline.
use super::word_counts::WordCounts;
use crate::error::Result;
use crate::pre_tokenizers::byte_level::{gpt2_regex, ByteLevel};
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::tokenizer::Tokenizer;
use crate::utils::byte_level::BYTES_TO_CHARS;

/// A way to cut raw text into training words equivalent to the Tokenizer's pipeline.
#[derive(Debug, Clone, Copy)]
pub enum DirectWords {
    ByteLevel(ByteLevel),
}

impl DirectWords {
    /// The direct cutter equivalent to `tokenizer`'s normalizer + pre-tokenizer, if there is one.
    pub fn for_tokenizer(tokenizer: &Tokenizer) -> Option<Self> {
        if tokenizer.get_normalizer().is_some() || !tokenizer.get_added_vocabulary().is_empty() {
            return None;
        }
        match tokenizer.get_pre_tokenizer()? {
            PreTokenizerWrapper::ByteLevel(b) => Some(DirectWords::ByteLevel(*b)),
            _ => None,
        }
    }

    /// Calls `emit` with each raw word of `sequence` (before the byte-level mapping).
    pub fn split(&self, sequence: &str, emit: &mut dyn FnMut(&str)) -> Result<()> {
        let DirectWords::ByteLevel(b) = self;
        if sequence.is_empty() {
            return Ok(());
        }
        let prefixed;
        let text = if b.add_prefix_space && !sequence.starts_with(' ') {
            prefixed = format!(" {sequence}");
            prefixed.as_str()
        } else {
            sequence
        };
        if !b.use_regex {
            emit(text);
            return Ok(());
        }
        // Isolated splitting: matches and the text between them are all words.
        let mut last = 0;
        gpt2_regex().for_each_match(text, |start, end| {
            if start > last {
                emit(&text[last..start]);
            }
            if end > start {
                emit(&text[start..end]);
            }
            last = end;
        })?;
        if last < text.len() {
            emit(&text[last..]);
        }
        Ok(())
    }

    /// Turns counts of raw words into counts of the words the pipeline would give.
    pub fn finish(&self, raw: WordCounts) -> WordCounts {
        raw.into_iter().map(|(word, n)| (to_byte_level(&word), n)).collect()
    }
}

fn to_byte_level(word: &str) -> String {
    word.bytes().map(|b| BYTES_TO_CHARS[b as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{ModelWrapper, BPE};
    use crate::tokenizer::{OffsetReferential, OffsetType};

    #[test]
    fn same_words_as_the_pipeline() {
        let texts = ["Hello my friend, how's it going?\n", "  spaces   and\ttabs\r\n", "", "é中文 123 !!", "x"];
        for prefix in [false, true] {
            let mut tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
            tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(prefix, true, true))));
            let direct = DirectWords::for_tokenizer(&tokenizer).unwrap();
            for t in texts {
                let expected: Vec<String> = tokenizer
                    .normalize_and_pre_tokenize(t)
                    .unwrap()
                    .get_splits(OffsetReferential::Original, OffsetType::Byte)
                    .into_iter()
                    .map(|(s, _, _)| s.to_string())
                    .collect();
                let mut got = Vec::new();
                direct.split(t, &mut |w| got.push(to_byte_level(w))).unwrap();
                assert_eq!(got, expected, "{t:?} prefix={prefix}");
            }
        }
    }
}
