//! BertPreTokenizer: split on whitespace (dropped), then isolate every punctuation char.
use super::punctuation::is_punctuation;
use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::utils::type_tag::impl_type_only_serde;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BertPreTokenizer;
impl_type_only_serde!(BertPreTokenizer);

impl PreTokenizer for BertPreTokenizer {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized
            .split(|_, piece| piece.split(char::is_whitespace, SplitDelimiterBehavior::Removed))?;
        pretokenized.split(|_, piece| piece.split(is_punctuation, SplitDelimiterBehavior::Isolated))
    }
}
