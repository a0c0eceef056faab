//! SentencePiece's normalizer (normalizer.cc): the precompiled character map applied by
//! longest match, user-defined symbols passed through untouched, whitespace handling
//! (remove_extra_whitespaces, add_dummy_prefix, escape_whitespaces, treat_whitespace_as_suffix),
//! and the alignment of every normalized byte to the original byte it came from.
use std::borrow::Cow;

use super::proto::{NormalizerSpec, TrainerSpec};
use crate::error::{Error, Result};
use crate::normalizers::Precompiled;
use crate::utils::darts::DoubleArray;

/// "▁" (U+2581), SentencePiece's visible whitespace.
pub const SPACE_SYMBOL: &str = "\u{2581}";
const REPLACEMENT_CHARACTER: &str = "\u{FFFD}";

#[derive(Debug, Clone)]
pub struct SpNormalizer {
    charsmap: Option<Precompiled>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
    /// User-defined symbols, which are matched (longest first) before any rule and kept as is.
    user_defined: Option<DoubleArray>,
    /// Which ASCII bytes the rules leave alone (see [`PlainAscii`]); `None` when user-defined
    /// symbols make every position need the full lookup.
    plain: Option<Box<PlainAscii>>,
}

/// The ASCII fast path: runs of bytes that no rule touches are copied without a trie lookup
/// each. `pair[b]` has bit `c` set when no rule key is `[b]` and none starts with `[b, c]`
/// (then the longest match at a `b` followed by `c` is "none": the byte stays); `last[b]` when
/// no key is `[b]` (enough at the end of the input).
#[derive(Debug, Clone)]
struct PlainAscii {
    pair: [u128; 128],
    last: [bool; 128],
    /// Bytes plain before any ASCII byte (`pair` all ones), spaces excepted: most letters,
    /// digits and punctuation, scanned with one lookup each.
    always: [bool; 256],
}

impl PlainAscii {
    fn new(charsmap: Option<&Precompiled>) -> Self {
        let mut table =
            PlainAscii { pair: [u128::MAX; 128], last: [true; 128], always: [false; 256] };
        table.fill_pairs(charsmap);
        for b in 0..128u8 {
            table.always[b as usize] = b != b' ' && table.pair[b as usize] == u128::MAX;
        }
        table
    }

    fn fill_pairs(&mut self, charsmap: Option<&Precompiled>) {
        let Some(charsmap) = charsmap else { return };
        for b in 0..128u8 {
            if charsmap.longest_match(&[b]).is_some() {
                self.last[b as usize] = false;
                self.pair[b as usize] = 0;
                continue;
            }
            for c in 0..128u8 {
                if crate::utils::darts::has_key_starting_with(charsmap.trie_units(), &[b, c]) {
                    self.pair[b as usize] &= !(1u128 << c);
                }
            }
        }
    }

    /// Length of the leading run of `input` that normalizes to itself: ASCII, no space (spaces
    /// have their own rules), and no rule matching at any of its bytes.
    #[inline]
    fn run(&self, input: &[u8]) -> usize {
        // Bytes plain whatever ASCII byte follows; the last of them is checked again below
        // with the byte that does follow (a non-ASCII one may complete a rule, e.g. "e" and a
        // combining accent).
        let fast = input.iter().position(|&b| !self.always[b as usize]).unwrap_or(input.len());
        let mut i = fast.saturating_sub(1);
        while let Some(&b) = input.get(i) {
            if b >= 0x80 || b == b' ' {
                break;
            }
            let plain = match input.get(i + 1) {
                None => self.last[b as usize],
                Some(&c) => c < 0x80 && self.pair[b as usize] >> c & 1 == 1,
            };
            if !plain {
                break;
            }
            i += 1;
        }
        i
    }

    /// Whether the ASCII byte at the start of `input` (a space included) is left alone by the
    /// rules: then it is the whole longest match there, and normalizes to itself.
    #[inline]
    fn single(&self, input: &[u8]) -> bool {
        let b = input[0];
        b < 0x80
            && match input.get(1) {
                None => self.last[b as usize],
                Some(&c) => c < 0x80 && self.pair[b as usize] >> c & 1 == 1,
            }
    }
}

/// Where normalized bytes come from: the full alignment ([`Normalized::norm_to_orig`]) or
/// nothing, for callers that only need the text (the ids-only encode path).
trait Alignment {
    /// `n` more normalized bytes come from original byte `at`.
    fn push(&mut self, at: usize, n: usize);
    /// `n` more normalized bytes copy original bytes `from..from + n` one to one.
    fn push_run(&mut self, from: usize, n: usize);
    fn truncate(&mut self, len: usize);
    /// The original offset of normalized byte `i` (0 when not tracked).
    fn at(&self, i: usize) -> usize;
}

impl Alignment for Vec<usize> {
    fn push(&mut self, at: usize, n: usize) {
        self.extend(std::iter::repeat_n(at, n));
    }
    fn push_run(&mut self, from: usize, n: usize) {
        self.extend(from..from + n);
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len)
    }
    fn at(&self, i: usize) -> usize {
        self[i]
    }
}

/// No alignment.
impl Alignment for () {
    fn push(&mut self, _: usize, _: usize) {}
    fn push_run(&mut self, _: usize, _: usize) {}
    fn truncate(&mut self, _: usize) {}
    fn at(&self, _: usize) -> usize {
        0
    }
}

/// Normalized text plus, for each of its bytes (and one past the end), the byte offset in the
/// original text it comes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Normalized {
    pub text: String,
    pub norm_to_orig: Vec<usize>,
}

impl SpNormalizer {
    pub fn new(
        spec: &NormalizerSpec,
        treat_whitespace_as_suffix: bool,
        user_defined: Option<DoubleArray>,
    ) -> Result<Self> {
        let charsmap = match spec.precompiled_charsmap.as_deref() {
            Some(bytes) if !bytes.is_empty() => {
                check_charsmap(bytes)?;
                Some(Precompiled::from_charsmap(bytes)?)
            }
            _ => None,
        };
        let plain = user_defined.is_none().then(|| Box::new(PlainAscii::new(charsmap.as_ref())));
        Ok(SpNormalizer {
            plain,
            charsmap,
            add_dummy_prefix: spec.add_dummy_prefix(),
            remove_extra_whitespaces: spec.remove_extra_whitespaces(),
            escape_whitespaces: spec.escape_whitespaces(),
            treat_whitespace_as_suffix,
            user_defined,
        })
    }

    /// The normalizer of a model (its normalizer spec and the trainer spec's whitespace option).
    pub fn for_model(
        spec: &NormalizerSpec,
        trainer: &TrainerSpec,
        user_defined: Option<DoubleArray>,
    ) -> Result<Self> {
        SpNormalizer::new(spec, trainer.treat_whitespace_as_suffix(), user_defined)
    }

    /// The denormalizer (only the charsmap applies; SentencePiece builds it from the spec alone).
    pub fn denormalizer(spec: &NormalizerSpec) -> Result<Option<Self>> {
        if spec.precompiled_charsmap.as_deref().is_none_or(|c| c.is_empty()) {
            return Ok(None);
        }
        SpNormalizer::new(spec, false, None).map(Some)
    }

    /// Normalizes one prefix of `input`: the replacement text and how many input bytes it uses.
    fn normalize_prefix<'a>(&'a self, input: &'a [u8]) -> (Cow<'a, [u8]>, usize) {
        if let Some(matcher) = &self.user_defined {
            if let Some((_, len)) = matcher.longest_prefix(input) {
                return (Cow::Borrowed(&input[..len]), len);
            }
        }
        if let Some((replacement, len)) =
            self.charsmap.as_ref().and_then(|c| c.longest_match(input))
        {
            return (Cow::Borrowed(replacement.as_bytes()), len);
        }
        match utf8_char_len(input) {
            Some(len) => (Cow::Borrowed(&input[..len]), len),
            // A malformed byte becomes U+FFFD and uses one byte (as SentencePiece).
            None => (Cow::Borrowed(REPLACEMENT_CHARACTER.as_bytes()), 1),
        }
    }

    /// Normalizes `input` (SentencePiece's `Normalizer::Normalize`).
    pub fn normalize(&self, input: &str) -> Normalized {
        self.normalize_bytes(input.as_bytes())
    }

    pub fn normalize_bytes(&self, input: &[u8]) -> Normalized {
        let mut text = Vec::with_capacity(input.len() * 3 / 2 + 4);
        let mut norm_to_orig = Vec::with_capacity(input.len() * 3 / 2 + 4);
        if let Some(end) = self.normalize_with(input, &mut text, &mut norm_to_orig) {
            norm_to_orig.push(end);
        }
        // Replacements are validated UTF-8 and whole characters are copied, so this only
        // fails on input that was not UTF-8 to begin with (which bytes input may be).
        let text = String::from_utf8(text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Normalized { text, norm_to_orig }
    }

    /// The normalized text only (no alignment), into `text` (cleared first): the ids-only
    /// encode path, which reuses one buffer for many texts.
    pub fn normalize_into(&self, input: &str, text: &mut Vec<u8>) {
        text.clear();
        self.normalize_with(input.as_bytes(), text, &mut ());
    }

    /// The normalization itself; returns the original offset the end of the text maps to
    /// (`None` when the text is empty because the input was empty or all spaces).
    fn normalize_with(
        &self,
        input: &[u8],
        text: &mut Vec<u8>,
        align: &mut impl Alignment,
    ) -> Option<usize> {
        let mut input = input;
        let mut consumed = 0usize;
        if self.remove_extra_whitespaces {
            while !input.is_empty() {
                let (piece, len) = self.normalize_prefix(input);
                if &*piece != b" " {
                    break;
                }
                input = &input[len..];
                consumed += len;
            }
        }
        if input.is_empty() {
            return None;
        }
        let space: &[u8] = if self.escape_whitespaces { SPACE_SYMBOL.as_bytes() } else { b" " };
        if !self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            text.extend_from_slice(space);
            align.push(consumed, space.len());
        }
        let mut is_prev_space = self.remove_extra_whitespaces;
        while !input.is_empty() {
            let run = self.plain.as_ref().map_or(0, |p| p.run(input));
            if run > 0 {
                // Bytes no rule touches: copied as they are (and never spaces).
                text.extend_from_slice(&input[..run]);
                align.push_run(consumed, run);
                is_prev_space = false;
                consumed += run;
                input = &input[run..];
                continue;
            }
            let (piece, len) = match &self.plain {
                // Mostly spaces: no lookup for what no rule touches.
                Some(plain) if plain.single(input) => (Cow::Borrowed(&input[..1]), 1),
                _ => self.normalize_prefix(input),
            };
            let mut piece: &[u8] = &piece;
            while is_prev_space && piece.first() == Some(&b' ') {
                piece = &piece[1..];
            }
            if !piece.is_empty() {
                for &byte in piece {
                    if byte == b' ' {
                        text.extend_from_slice(space);
                        align.push(consumed, space.len());
                    } else {
                        text.push(byte);
                        align.push(consumed, 1);
                    }
                }
                is_prev_space = piece.last() == Some(&b' ');
            }
            consumed += len;
            input = &input[len..];
            if !self.remove_extra_whitespaces {
                is_prev_space = false;
            }
        }
        if self.remove_extra_whitespaces {
            while text.ends_with(space) {
                let length = text.len() - space.len();
                consumed = align.at(length);
                text.truncate(length);
                align.truncate(length);
            }
        }
        if self.treat_whitespace_as_suffix && self.add_dummy_prefix {
            text.extend_from_slice(space);
            align.push(consumed, space.len());
        }
        Some(consumed)
    }
}

/// Checks a precompiled charsmap as sentencepiece does on load (normalizer.cc's
/// `DecodePrecompiledCharsMap`, then darts' `validate` in `Normalizer::Init`): a 4-byte trie size
/// that leaves room for the replacement strings and is a positive multiple of 1024 (whole blocks
/// of 256 double-array units), replacement strings ending with a NUL, a root unit that is an
/// inner node whose children lie inside the array, every inner unit's children inside the array,
/// its leaf (when it has one) a value unit, and every value (an offset into the replacement
/// strings) inside the strings. The lookups never
/// read out of bounds anyway; this is so that tokenmill rejects exactly the files sentencepiece
/// rejects, each with what is wrong.
pub(crate) fn check_charsmap(blob: &[u8]) -> Result<()> {
    let bad =
        |what: String| Error::format(format!("SentencePiece model: precompiled_charsmap: {what}"));
    if blob.len() <= 4 {
        return Err(bad(format!("{} bytes, too short to hold a trie", blob.len())));
    }
    let size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    if size >= blob.len() - 4 {
        return Err(bad(format!(
            "the trie size {size} exceeds the {} bytes after it",
            blob.len() - 4
        )));
    }
    if size < 1024 || !size.is_multiple_of(1024) {
        return Err(bad(format!("the trie size {size} is not a positive multiple of 1024")));
    }
    let strings = &blob[4 + size..];
    if strings.last() != Some(&0) {
        return Err(bad("the replacement strings do not end with a NUL byte".into()));
    }
    let units: Vec<u32> = blob[4..4 + size]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    // The fields of a double-array unit (darts-clone's layout).
    let label = |unit: u32| unit & (1 << 31 | 0xFF);
    let offset = |unit: u32| ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize;
    let root = units[0];
    if label(root) != 0
        || (root >> 8) & 1 == 1
        || offset(root) == 0
        || offset(root) | 0xFF >= units.len()
    {
        return Err(bad("the trie's root unit is invalid".into()));
    }
    for (i, &unit) in units.iter().enumerate() {
        if label(unit) > 0xFF {
            // A value unit: an offset into the replacement strings.
            if (unit & !(1 << 31)) as usize >= strings.len() {
                return Err(bad(format!("trie unit {i} points past the replacement strings")));
            }
        } else if offset(unit) != 0 && (i ^ offset(unit)) | 0xFF >= units.len() {
            return Err(bad(format!("trie unit {i} points outside the trie")));
        } else if (unit >> 8) & 1 == 1 && units[i ^ offset(unit)] >> 31 == 0 {
            return Err(bad(format!("trie unit {i} has a leaf that holds no value")));
        }
    }
    Ok(())
}

/// The length of the valid UTF-8 character at the start of `bytes`, or `None`.
pub(crate) fn utf8_char_len(bytes: &[u8]) -> Option<usize> {
    let len = match *bytes.first()? {
        0x00..=0x7F => return Some(1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let chunk = bytes.get(..len)?;
    std::str::from_utf8(chunk).ok().map(|_| len)
}

/// SentencePiece's `OneCharLen`, under its name (the crate's one definition).
pub(crate) use crate::utils::offsets::utf8_len as one_char_len;
