//! `PreTokenizedString`: the input cut into pieces (words), each a `NormalizedString` that
//! remembers its place in the original, and later each tokenized by the model.
use crate::error::Result;
use crate::tokenizer::encoding::Encoding;
use crate::tokenizer::normalized::{NormalizedString, Offsets};
use crate::tokenizer::Token;
use crate::utils::offsets::ByteToCharOffsets;

/// Whether offsets are counted in bytes (Rust) or chars (Python strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetType {
    Byte,
    Char,
}

/// Whether split offsets refer to the original input or to the normalized text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetReferential {
    Original,
    Normalized,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub normalized: NormalizedString,
    /// Set once the model has tokenized this piece; such pieces are never split again.
    pub tokens: Option<Vec<Token>>,
}

impl From<NormalizedString> for Split {
    fn from(normalized: NormalizedString) -> Self {
        Split { normalized, tokens: None }
    }
}

impl From<(NormalizedString, Option<Vec<Token>>)> for Split {
    fn from((normalized, tokens): (NormalizedString, Option<Vec<Token>>)) -> Self {
        Split { normalized, tokens }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PreTokenizedString {
    original: String,
    splits: Vec<Split>,
}

impl From<NormalizedString> for PreTokenizedString {
    fn from(n: NormalizedString) -> Self {
        PreTokenizedString { original: n.get_original().to_string(), splits: vec![n.into()] }
    }
}

impl From<&str> for PreTokenizedString {
    fn from(s: &str) -> Self {
        NormalizedString::from(s).into()
    }
}

impl PreTokenizedString {
    pub fn original(&self) -> &str {
        &self.original
    }
    pub fn splits(&self) -> &[Split] {
        &self.splits
    }
    pub fn splits_mut(&mut self) -> &mut Vec<Split> {
        &mut self.splits
    }

    /// Splits every piece that has no tokens yet. `f(index, piece)` returns the new pieces.
    pub fn split<F, U, R>(&mut self, mut f: F) -> Result<()>
    where
        F: FnMut(usize, NormalizedString) -> Result<U>,
        U: IntoIterator<Item = R>,
        R: Into<Split>,
    {
        let mut new_splits = Vec::with_capacity(self.splits.len());
        for (i, split) in self.splits.drain(..).enumerate() {
            if split.tokens.is_some() {
                new_splits.push(split);
                continue;
            }
            new_splits.extend(
                f(i, split.normalized)?
                    .into_iter()
                    .map(Into::into)
                    .filter(|s: &Split| !s.normalized.is_empty()),
            );
        }
        self.splits = new_splits;
        Ok(())
    }

    /// Normalizes every piece that has no tokens yet.
    pub fn normalize<F: FnMut(&mut NormalizedString) -> Result<()>>(
        &mut self,
        mut f: F,
    ) -> Result<()> {
        for split in self.splits.iter_mut().filter(|s| s.tokens.is_none()) {
            f(&mut split.normalized)?;
        }
        Ok(())
    }

    /// Tokenizes every piece that has no tokens yet.
    pub fn tokenize<F: FnMut(&NormalizedString) -> Result<Vec<Token>>>(
        &mut self,
        mut f: F,
    ) -> Result<()> {
        for split in self.splits.iter_mut().filter(|s| s.tokens.is_none()) {
            split.tokens = Some(f(&split.normalized)?);
        }
        Ok(())
    }

    /// The pieces with their offsets (see `OffsetReferential`) and tokens if any.
    pub fn get_splits(
        &self,
        referential: OffsetReferential,
        offset_type: OffsetType,
    ) -> Vec<(&str, Offsets, &Option<Vec<Token>>)> {
        let converter =
            (offset_type == OffsetType::Char).then(|| ByteToCharOffsets::new(&self.original));
        let mut normalized_pos = 0;
        self.splits
            .iter()
            .map(|s| {
                let offsets = match referential {
                    OffsetReferential::Original => s.normalized.offsets_original(),
                    OffsetReferential::Normalized => {
                        let o = (normalized_pos, normalized_pos + s.normalized.len());
                        normalized_pos += s.normalized.len();
                        o
                    }
                };
                let offsets = match (&converter, referential) {
                    (Some(c), OffsetReferential::Original) => c.convert_span(offsets),
                    _ => offsets,
                };
                (s.normalized.get(), offsets, &s.tokens)
            })
            .collect()
    }

    /// Builds the `Encoding` of the tokenized pieces. Token offsets are mapped back to the
    /// original input. Each piece is a word (`word_idx` overrides that, e.g. for pre-split input).
    pub fn into_encoding(
        self,
        word_idx: Option<u32>,
        type_id: u32,
        offset_type: OffsetType,
    ) -> Result<Encoding> {
        let converter =
            (offset_type == OffsetType::Char).then(|| ByteToCharOffsets::new(&self.original));
        let capacity = self.splits.iter().map(|s| s.tokens.as_ref().map_or(0, Vec::len)).sum();
        let mut encoding = Encoding::with_capacity(capacity);
        for (i, split) in self.splits.into_iter().enumerate() {
            let Some(tokens) = split.tokens else { continue };
            let word = word_idx.unwrap_or(i as u32);
            for token in tokens {
                let offsets = split
                    .normalized
                    .convert_offsets_to_input(token.offsets.0..token.offsets.1)
                    .unwrap_or_else(|| split.normalized.offsets_original());
                let offsets = match &converter {
                    Some(c) => c.convert_span(offsets),
                    None => offsets,
                };
                encoding.push(token.id, token.value, offsets, Some(word), type_id, false);
            }
        }
        Ok(encoding)
    }
}
