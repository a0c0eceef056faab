//! Whitespace (`\w+|[^\w\s]+`: runs of word chars, runs of other non-space chars) and
//! WhitespaceSplit (cut on whitespace only, like `str.split()`).
use std::sync::LazyLock;

use super::Invert;
use crate::tokenizer::{PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
use crate::utils::regex::Regex;
use crate::utils::type_tag::impl_type_only_serde;

/// Splits into runs of word chars and runs of punctuation/symbols; whitespace is dropped.
/// `\w` and `\s` are Unicode (`tokenizers` runs this pattern with the `regex` crate, as we do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Whitespace;
impl_type_only_serde!(Whitespace);

static WORDS_OR_SYMBOLS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\w+|[^\w\s]+").expect("a valid pattern"));

impl PreTokenizer for Whitespace {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        let regex: &Regex = &WORDS_OR_SYMBOLS;
        pretokenized.split(|_, piece| piece.split(Invert(regex), SplitDelimiterBehavior::Removed))
    }
}

/// Splits on Unicode whitespace (`char::is_whitespace`) and drops it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WhitespaceSplit;
impl_type_only_serde!(WhitespaceSplit);

impl PreTokenizer for WhitespaceSplit {
    fn pre_tokenize(&self, pretokenized: &mut PreTokenizedString) -> crate::Result<()> {
        pretokenized
            .split(|_, piece| piece.split(char::is_whitespace, SplitDelimiterBehavior::Removed))
    }
}
