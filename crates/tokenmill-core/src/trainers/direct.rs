//! The fast feed: when a Tokenizer's words can be cut straight from the raw text, training skips
//! the alignment bookkeeping of `encode` (training needs the words, not their offsets).
//!
//! Applies to the byte-level setup (no normalizer, a `ByteLevel` pre-tokenizer, no added tokens):
//! raw GPT-2 regex pieces are counted, and only the distinct pieces are mapped to the byte-level
//! alphabet afterwards (the mapping is one-to-one, so the counts are the same as mapping every
//! occurrence first). Anything else goes through the full pipeline.
//!
//! Applies also to the BERT setup (a `BertNormalizer` or none, a `BertPreTokenizer`, no added
//! tokens): raw text is cut at the whitespace the pipeline turns into word boundaries, the
//! distinct raw pieces are counted, and each distinct piece then goes through the real
//! normalizer and pre-tokenizer once. This is exact because BERT normalization works char by
//! char (NFD only reorders marks between two chars of combining class 0, and whitespace is
//! one), so a piece between two boundaries normalizes the same alone as inside its text.
use super::spill::{Budget, CountTable, SpillingCounter};
use crate::error::Result;
use crate::normalizers::bert::cleaned_to_space;
use crate::normalizers::NormalizerWrapper;
use crate::pre_tokenizers::byte_level::{gpt2_regex, ByteLevel};
use crate::pre_tokenizers::PreTokenizerWrapper;
use crate::tokenizer::Tokenizer;
use crate::utils::byte_level::BYTES_TO_CHARS;

/// A way to cut raw text into training words equivalent to the Tokenizer's pipeline.
#[derive(Debug, Clone, Copy)]
pub enum DirectWords {
    ByteLevel(ByteLevel),
    /// Raw pieces between whitespace (as `BertNormalizer` with / without `clean_text` sees it).
    Bert {
        clean_text: bool,
    },
}

impl DirectWords {
    /// The direct cutter equivalent to `tokenizer`'s normalizer + pre-tokenizer, if there is one.
    pub fn for_tokenizer(tokenizer: &Tokenizer) -> Option<Self> {
        if !tokenizer.get_added_vocabulary().is_empty() {
            return None;
        }
        match (tokenizer.get_normalizer(), tokenizer.get_pre_tokenizer()?) {
            (None, PreTokenizerWrapper::ByteLevel(b)) => Some(DirectWords::ByteLevel(*b)),
            (None, PreTokenizerWrapper::BertPreTokenizer(_)) => {
                Some(DirectWords::Bert { clean_text: false })
            }
            (
                Some(NormalizerWrapper::BertNormalizer(n)),
                PreTokenizerWrapper::BertPreTokenizer(_),
            ) => Some(DirectWords::Bert { clean_text: n.clean_text }),
            _ => None,
        }
    }

    /// Calls `emit` with each raw word of `sequence` (before the byte-level mapping, or the
    /// BERT normalization).
    pub fn split(&self, sequence: &str, emit: &mut dyn FnMut(&str)) -> Result<()> {
        let b = match self {
            DirectWords::ByteLevel(b) => b,
            DirectWords::Bert { clean_text } => {
                split_at_boundaries(sequence, *clean_text, emit);
                return Ok(());
            }
        };
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

    /// Turns counts of raw words into counts of the words `tokenizer`'s pipeline would give,
    /// within `budget` (one pass over the distinct words, sequential, so that no copy of the
    /// table is made).
    pub fn finish(
        &self,
        tokenizer: &Tokenizer,
        raw: &CountTable,
        budget: &Budget,
    ) -> Result<CountTable> {
        let mut counts = SpillingCounter::new(budget);
        for (word, n) in raw.iter() {
            match self {
                DirectWords::ByteLevel(_) => counts.add(&to_byte_level(word), n)?,
                DirectWords::Bert { .. } => {
                    let pre = tokenizer.normalize_and_pre_tokenize(word)?;
                    for split in pre.splits() {
                        counts.add(split.normalized.get(), n)?;
                    }
                }
            }
        }
        counts.finish()
    }
}

/// Cuts `text` at the chars the BERT pipeline makes word boundaries: whitespace that
/// `clean_text` keeps (as a space), or any whitespace without `clean_text` (dropped); and ASCII
/// punctuation, which every BERT normalization step leaves alone and the pre-tokenizer
/// isolates (emitted as its own piece). Cutting at punctuation too keeps the distinct pieces
/// few ("word," and "word." are "word" and a mark), which keeps the counting memory small.
fn split_at_boundaries(text: &str, clean_text: bool, emit: &mut dyn FnMut(&str)) {
    let is_space = |c: char| if clean_text { cleaned_to_space(c) } else { c.is_whitespace() };
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (space, punctuation, len) = if b.is_ascii() {
            (is_space(b as char), b.is_ascii_punctuation(), 1)
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            (is_space(c), false, c.len_utf8())
        };
        if space || punctuation {
            if i > start {
                emit(&text[start..i]);
            }
            if punctuation {
                emit(&text[i..i + 1]);
            }
            start = i + len;
        }
        i += len;
    }
    if start < bytes.len() {
        emit(&text[start..]);
    }
}

fn to_byte_level(word: &str) -> String {
    word.bytes().map(|b| BYTES_TO_CHARS[b as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::super::word_counts::{add_word, WordCounts};
    use super::*;
    use crate::models::{ModelWrapper, BPE};
    use crate::tokenizer::{OffsetReferential, OffsetType};

    #[test]
    fn bert_pieces_give_the_pipeline_words() {
        use crate::normalizers::bert::BertNormalizer;
        use crate::pre_tokenizers::bert::BertPreTokenizer;
        let text = "Héllo, WORLD!\u{0b}x\u{85}y\u{a0}z\u{2028}中文字 Ｆｕｌｌ naïve\u{300}\u{301} \
            ΣΑΣ\ttab\u{200b}zw \u{0}nul\u{fffd}\r\n";
        for normalizer in [
            None,
            Some(BertNormalizer::default()),
            Some(BertNormalizer::new(false, true, Some(true), true)),
            Some(BertNormalizer::new(true, false, Some(false), false)),
        ] {
            let mut tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
            tokenizer
                .with_pre_tokenizer(Some(PreTokenizerWrapper::BertPreTokenizer(BertPreTokenizer)));
            tokenizer.with_normalizer(normalizer.map(NormalizerWrapper::BertNormalizer)).unwrap();
            let direct = DirectWords::for_tokenizer(&tokenizer).unwrap();
            let mut expected = WordCounts::default();
            for (w, _, _) in tokenizer
                .normalize_and_pre_tokenize(text)
                .unwrap()
                .get_splits(OffsetReferential::Original, OffsetType::Byte)
            {
                add_word(&mut expected, w, 1);
            }
            let mut raw = WordCounts::default();
            direct.split(text, &mut |w| add_word(&mut raw, w, 1)).unwrap();
            let raw = CountTable::from_map(raw);
            let words = direct.finish(&tokenizer, &raw, &Budget::new(None, None)).unwrap();
            assert_eq!(words, CountTable::from_map(expected), "{normalizer:?}");
        }
    }

    #[test]
    fn same_words_as_the_pipeline() {
        let texts = [
            "Hello my friend, how's it going?\n",
            "  spaces   and\ttabs\r\n",
            "",
            "é中文 123 !!",
            "x",
        ];
        for prefix in [false, true] {
            let mut tokenizer = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
            tokenizer.with_pre_tokenizer(Some(PreTokenizerWrapper::ByteLevel(ByteLevel::new(
                prefix, true, true,
            ))));
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
