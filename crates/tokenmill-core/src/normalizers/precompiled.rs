//! Precompiled: SentencePiece's compiled normalization rules (`precompiled_charsmap`), as used
//! by T5, ALBERT, XLM-R, mBART, ... tokenizer.json files.
//!
//! The charsmap is: a little-endian u32 byte size of the trie, the trie (a Darts double array
//! of u32 units), then NUL-terminated replacement strings. Hand-written rather than using the
//! `spm_precompiled` crate because that crate indexes without bounds checks and panics on a
//! malformed charsmap; here a bad charsmap is a `Format` error and lookups never panic.
//! Behaviour (grapheme-wise lookup, shortest-prefix match, alignment changes) follows
//! `tokenizers` exactly, quirks included, so that outputs and offsets agree.
use base64::Engine;
use serde::{Deserialize, Serialize, Serializer};
use unicode_segmentation::UnicodeSegmentation;

use crate::error::{Error, Result};
use crate::tokenizer::{NormalizedString, Normalizer};

#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "PrecompiledFields")]
pub struct Precompiled {
    precompiled_charsmap: Vec<u8>,
    trie: Vec<u32>,
    /// The replacement strings, NUL separated (validated UTF-8).
    replacements: String,
}

#[derive(Deserialize)]
struct PrecompiledFields {
    /// Base64 of the charsmap; `null` (seen in some files) means no rules.
    precompiled_charsmap: Option<String>,
}

impl TryFrom<PrecompiledFields> for Precompiled {
    type Error = Error;
    fn try_from(fields: PrecompiledFields) -> Result<Self> {
        let Some(encoded) = fields.precompiled_charsmap else { return Ok(Precompiled::empty()) };
        let bytes =
            base64::engine::general_purpose::STANDARD.decode(encoded.as_bytes()).map_err(|e| {
                Error::format(format!("Precompiled: precompiled_charsmap is not valid base64: {e}"))
            })?;
        Precompiled::from_charsmap(&bytes)
    }
}

impl Serialize for Precompiled {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Precompiled", 2)?;
        s.serialize_field("type", "Precompiled")?;
        s.serialize_field(
            "precompiled_charsmap",
            &base64::engine::general_purpose::STANDARD.encode(&self.precompiled_charsmap),
        )?;
        s.end()
    }
}

impl PartialEq for Precompiled {
    fn eq(&self, other: &Self) -> bool {
        self.precompiled_charsmap == other.precompiled_charsmap
    }
}

// Fields of one double-array unit (Darts-clone layout).
fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}
fn value(unit: u32) -> u32 {
    unit & ((1 << 31) - 1)
}
fn label(unit: u32) -> u32 {
    unit & ((1 << 31) | 0xFF)
}
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

impl Precompiled {
    fn empty() -> Self {
        Precompiled {
            precompiled_charsmap: Vec::new(),
            trie: Vec::new(),
            replacements: String::new(),
        }
    }

    /// Parses a charsmap (the raw bytes, as in SentencePiece's model proto).
    pub fn from_charsmap(charsmap: &[u8]) -> Result<Self> {
        let bad = |what: &str| {
            Error::format(format!("Precompiled: cannot parse precompiled_charsmap: {what}"))
        };
        if charsmap.is_empty() {
            return Ok(Precompiled::empty());
        }
        let size_bytes: [u8; 4] = charsmap
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("shorter than 4 bytes"))?;
        let trie_size = u32::from_le_bytes(size_bytes) as usize;
        let trie_end = 4usize
            .checked_add(trie_size)
            .filter(|&end| end <= charsmap.len() && trie_size.is_multiple_of(4));
        let trie_end = trie_end.ok_or_else(|| {
            bad(&format!("trie size {trie_size} does not fit in {} bytes", charsmap.len()))
        })?;
        let trie = charsmap[4..trie_end]
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let replacements = std::str::from_utf8(&charsmap[trie_end..])
            .map_err(|e| {
                bad(&format!(
                    "replacement strings are not UTF-8 (byte {})",
                    trie_end + e.valid_up_to()
                ))
            })?
            .to_string();
        Ok(Precompiled { precompiled_charsmap: charsmap.to_vec(), trie, replacements })
    }

    pub fn charsmap(&self) -> &[u8] {
        &self.precompiled_charsmap
    }

    /// The double-array units of the rule keys (sentencepiece's fast paths inspect them).
    pub(crate) fn trie_units(&self) -> &[u32] {
        &self.trie
    }

    /// SentencePiece's own lookup (normalizer.cc): the replacement of the *longest* prefix of
    /// `bytes` that has a rule, with that prefix's length. The replacement ends at its NUL.
    pub fn longest_match(&self, bytes: &[u8]) -> Option<(&str, usize)> {
        let (start, len) = crate::utils::darts::longest_prefix(&self.trie, bytes)?;
        let rest = self.replacements.get(start as usize..)?;
        Some((rest.split('\0').next().unwrap_or(rest), len))
    }

    /// Every rule `(source, replacement)`, sorted by source (sentencepiece's `Decompile`).
    /// Rules that are not UTF-8 (a malformed charsmap) are left out.
    pub fn rules(&self) -> Vec<(String, String)> {
        crate::utils::darts::keys(&self.trie)
            .into_iter()
            .filter_map(|(source, start)| {
                let source = String::from_utf8(source).ok()?;
                let rest = self.replacements.get(start as usize..)?;
                Some((source, rest.split('\0').next().unwrap_or(rest).to_string()))
            })
            .collect()
    }

    /// Whether there are no rules (an empty or absent charsmap).
    pub fn is_empty(&self) -> bool {
        self.trie.is_empty()
    }

    /// The replacement of the shortest prefix of `chunk` that has a rule (what `tokenizers`
    /// uses), or `None`.
    pub fn transform(&self, chunk: &str) -> Option<&str> {
        let mut node = offset(*self.trie.first()?);
        for &byte in chunk.as_bytes() {
            if byte == 0 {
                break;
            }
            node ^= byte as usize;
            let unit = *self.trie.get(node)?;
            if label(unit) != byte as u32 {
                return None;
            }
            node ^= offset(unit);
            if has_leaf(unit) {
                let start = value(*self.trie.get(node)?) as usize;
                let rest = self.replacements.get(start..)?;
                return Some(rest.split('\0').next().unwrap_or(rest));
            }
        }
        None
    }
}

/// Appends the `(char, change)` steps that turn `old` into `new` (the convention of
/// `NormalizedString::transform`): chars replace one to one, extra chars are insertions at the
/// end, and missing chars are removed by the last step written so far.
fn push_replacement(steps: &mut Vec<(char, isize)>, old: &str, new: &str) {
    let diff = new.chars().count() as isize - old.chars().count() as isize;
    steps.extend(new.chars().map(|c| (c, 0)));
    if diff > 0 {
        steps.iter_mut().rev().take(diff as usize).for_each(|step| step.1 = 1);
    } else if diff < 0 {
        if let Some(last) = steps.last_mut() {
            last.1 += diff;
        }
    }
}

impl Normalizer for Precompiled {
    fn normalize(&self, normalized: &mut NormalizedString) -> Result<()> {
        if self.trie.is_empty() {
            return Ok(());
        }
        let mut steps = Vec::with_capacity(normalized.len());
        let mut modified = false;
        for grapheme in normalized.get().graphemes(true) {
            // Short graphemes are looked up whole first (SentencePiece's behaviour).
            if grapheme.len() < 6 {
                if let Some(replacement) = self.transform(grapheme) {
                    modified = true;
                    push_replacement(&mut steps, grapheme, replacement);
                    continue;
                }
            }
            for (i, c) in grapheme.char_indices() {
                let part = &grapheme[i..i + c.len_utf8()];
                match self.transform(part) {
                    Some(replacement) => {
                        modified = true;
                        push_replacement(&mut steps, part, replacement);
                    }
                    None => steps.push((c, 0)),
                }
            }
        }
        if modified {
            normalized.transform(steps, 0);
        }
        Ok(())
    }
}
