//! The pieces of a SentencePiece model (model_interface.cc) and its char and word segmenters
//! (char_model.cc, word_model.cc), on the normalized text; the Unigram one is `super::unigram`,
//! the BPE one `super::bpe`. Results are byte spans of the normalized text with their ids.
use rustc_hash::FxHashMap;

use super::normalizer::{one_char_len, SPACE_SYMBOL};
use super::proto::{ModelProto, ModelType, PieceType};
use super::unigram_cache;
use crate::error::{Error, Result};
use crate::utils::darts::DoubleArray;

/// A piece of this many bytes or more is refused (sentencepiece's `kMaxPieceSize`).
const MAX_PIECE_BYTES: usize = 8000;

/// One piece of a segmentation: `text[start..end]` of the normalized text, and its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub id: u32,
}

/// The vocabulary with SentencePiece's lookup rules.
#[derive(Debug, Clone)]
pub struct Vocab {
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub types: Vec<PieceType>,
    /// NORMAL, USER_DEFINED and UNUSED pieces (what the segmenters may produce).
    normal: FxHashMap<String, u32>,
    /// CONTROL, UNKNOWN and BYTE pieces (looked up first by `piece_to_id`).
    reserved: FxHashMap<String, u32>,
    pub unk_id: u32,
    /// The id of `<0xNN>` for every byte, when byte_fallback is on.
    pub byte_ids: Option<Box<[u32; 256]>>,
    /// User-defined symbols, for the prefix matcher.
    pub user_defined: Option<DoubleArray>,
    /// No piece holds ▁ right after another character, so no piece can span the start of a
    /// "▁..." word ([`independent_words`]): every Unigram path passes through every word start.
    pub pieces_stay_in_words: bool,
    /// `pieces_stay_in_words` and there are no unused pieces: BPE may then segment each word
    /// on its own (and cache it), with the same result as on the whole text.
    pub words_are_independent: bool,
}

/// `<0xNN>` → NN, for the 256 byte pieces (upper-case hex, as SentencePiece writes them).
pub fn piece_to_byte(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

pub fn byte_to_piece(byte: u8) -> String {
    format!("<0x{byte:02X}>")
}

impl Vocab {
    /// Checks the pieces as SentencePiece's `InitializePieces` does; every problem is an error.
    /// As there, a piece type the enum does not know is NORMAL (protobuf's default), a piece
    /// that is a lone NUL byte is UNUSED when byte fallback is on (anything else holding a NUL
    /// is an error), and only BPE models refuse a piece that is both a reserved piece (control,
    /// unknown, byte) and an ordinary one.
    pub fn from_proto(proto: &ModelProto) -> Result<Self> {
        let byte_fallback = proto.trainer_spec.as_ref().is_some_and(|t| t.byte_fallback());
        let one_map = model_type(proto)? == ModelType::Bpe;
        let n = proto.pieces.len();
        let bad = |i: usize, what: String| {
            Error::format(format!("SentencePiece model: piece {i}: {what}"))
        };
        let mut vocab = Vocab {
            pieces: Vec::with_capacity(n),
            scores: Vec::with_capacity(n),
            types: Vec::with_capacity(n),
            normal: FxHashMap::default(),
            reserved: FxHashMap::default(),
            unk_id: 0,
            byte_ids: None,
            user_defined: None,
            pieces_stay_in_words: false,
            words_are_independent: false,
        };
        if n >= i32::MAX as usize {
            return Err(Error::format("SentencePiece model: too many pieces"));
        }
        let mut unk = None;
        let mut bytes = [u32::MAX; 256];
        for (i, sp) in proto.pieces.iter().enumerate() {
            let piece = sp.piece.clone().unwrap_or_default();
            if piece.is_empty() {
                return Err(bad(i, "piece must not be empty".into()));
            }
            if piece.len() >= MAX_PIECE_BYTES {
                return Err(bad(
                    i,
                    format!(
                        "piece is too long ({} bytes, at most {})",
                        piece.len(),
                        MAX_PIECE_BYTES - 1
                    ),
                ));
            }
            let mut kind =
                sp.r#type.and_then(|t| PieceType::try_from(t).ok()).unwrap_or(PieceType::Normal);
            if piece.contains('\0') {
                if piece != "\0" || !byte_fallback {
                    return Err(bad(i, format!("{piece:?} must not include a NUL character")));
                }
                kind = PieceType::Unused;
            }
            let is_normal =
                matches!(kind, PieceType::Normal | PieceType::UserDefined | PieceType::Unused);
            if one_map {
                let other = if is_normal { &vocab.reserved } else { &vocab.normal };
                if other.contains_key(&piece) {
                    return Err(bad(i, format!("{piece:?} is already defined")));
                }
            }
            let map = if is_normal { &mut vocab.normal } else { &mut vocab.reserved };
            if map.insert(piece.clone(), i as u32).is_some() {
                return Err(bad(i, format!("{piece:?} is already defined")));
            }
            match kind {
                PieceType::Unknown => {
                    if unk.is_some() {
                        return Err(bad(i, "unk is already defined".into()));
                    }
                    unk = Some(i as u32);
                }
                PieceType::Byte => {
                    if !byte_fallback {
                        return Err(bad(
                            i,
                            format!(
                                "byte piece {piece:?} is found although `byte_fallback` is false"
                            ),
                        ));
                    }
                    let byte = piece_to_byte(&piece)
                        .ok_or_else(|| bad(i, format!("byte piece {piece:?} is invalid")))?;
                    bytes[byte as usize] = i as u32;
                }
                _ => {}
            }
            vocab.pieces.push(piece);
            vocab.scores.push(sp.score.unwrap_or(0.0));
            vocab.types.push(kind);
        }
        vocab.unk_id = unk.ok_or_else(|| {
            Error::format("SentencePiece model: unk is not defined (no piece of type UNKNOWN)")
        })?;
        if byte_fallback {
            if bytes.contains(&u32::MAX) {
                return Err(Error::format(
                    "SentencePiece model: there are not 256 byte pieces \
                    although `byte_fallback` is true",
                ));
            }
            vocab.byte_ids = Some(Box::new(bytes));
        }
        let user: Vec<(&[u8], u32)> = (0..n)
            .filter(|&i| vocab.types[i] == PieceType::UserDefined)
            .map(|i| (vocab.pieces[i].as_bytes(), i as u32))
            .filter(|(k, _)| !k.contains(&0))
            .collect();
        if !user.is_empty() {
            vocab.user_defined = Some(DoubleArray::build(&user)?);
        }
        vocab.pieces_stay_in_words = !vocab.normal.keys().any(|p| {
            p.char_indices()
                .any(|(i, c)| i > 0 && c == '\u{2581}' && !p[..i].ends_with(SPACE_SYMBOL))
        });
        // BPE splits merged unused pieces back by the last pair seen in the whole text, which
        // couples the words (Unigram never matches unused pieces).
        vocab.words_are_independent =
            vocab.pieces_stay_in_words && !vocab.types.contains(&PieceType::Unused);
        Ok(vocab)
    }

    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// SentencePiece's `PieceToId`: reserved pieces first, then the others, else unk.
    pub fn piece_to_id(&self, piece: &str) -> u32 {
        self.reserved.get(piece).or_else(|| self.normal.get(piece)).copied().unwrap_or(self.unk_id)
    }

    /// Only NORMAL, USER_DEFINED and UNUSED pieces.
    #[inline]
    pub fn normal_id(&self, piece: &str) -> Option<u32> {
        self.normal.get(piece).copied()
    }

    pub fn kind(&self, id: u32) -> Option<PieceType> {
        self.types.get(id as usize).copied()
    }

    pub fn is(&self, id: u32, kind: PieceType) -> bool {
        self.kind(id) == Some(kind)
    }

    /// The length of the symbol at the start of `text`: a user-defined symbol (`true`) or one
    /// character (SentencePiece's `PrefixMatcher::PrefixMatch`).
    #[inline]
    pub fn prefix_match(&self, text: &[u8]) -> (usize, bool) {
        if let Some((_, len)) = self.user_defined.as_ref().and_then(|m| m.longest_prefix(text)) {
            return (len, true);
        }
        (one_char_len(text[0]).min(text.len()), false)
    }
}

/// char_model.cc: one piece per character (or user-defined symbol).
pub fn encode_char(vocab: &Vocab, text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut pos = 0;
    while pos < bytes.len() {
        let (len, _) = vocab.prefix_match(&bytes[pos..]);
        out.push(Span { start: pos, end: pos + len, id: vocab.piece_to_id(&text[pos..pos + len]) });
        pos += len;
    }
    out
}

/// word_model.cc: one piece per whitespace-delimited word (with its leading ▁).
pub fn encode_word(vocab: &Vocab, text: &str) -> Vec<Span> {
    split_into_words(text, false, false)
        .into_iter()
        .map(|(start, end)| Span { start, end, id: vocab.piece_to_id(&text[start..end]) })
        .collect()
}

/// model_interface.cc's `SplitIntoWords`: byte spans of the words of a normalized text, each
/// starting with ▁ (or, with `treat_ws_as_suffix`, ending with it).
pub fn split_into_words(
    text: &str,
    treat_ws_as_suffix: bool,
    allow_ws_only_pieces: bool,
) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let space = SPACE_SYMBOL.as_bytes();
    let mut result: Vec<(usize, usize)> = Vec::new();
    let mut in_ws_sequence = false;
    let mut pos = 0;
    if treat_ws_as_suffix {
        if !bytes.is_empty() {
            result.push((0, 0));
        }
        while pos < bytes.len() {
            let len = one_char_len(bytes[pos]).min(bytes.len() - pos);
            let is_ws = &bytes[pos..pos + len] == space;
            if is_ws {
                in_ws_sequence = true;
            } else if in_ws_sequence {
                if allow_ws_only_pieces {
                    result.push((pos, pos));
                }
                in_ws_sequence = false;
            }
            if let Some(last) = result.last_mut() {
                last.1 += len;
            }
            pos += len;
            if pos < bytes.len() && is_ws && !allow_ws_only_pieces {
                result.push((pos, pos));
            }
        }
    } else {
        while pos < bytes.len() {
            let len = one_char_len(bytes[pos]).min(bytes.len() - pos);
            let is_ws = &bytes[pos..pos + len] == space;
            if pos == 0 || (is_ws && (!in_ws_sequence || !allow_ws_only_pieces)) {
                result.push((pos, pos));
                in_ws_sequence = true;
            }
            if in_ws_sequence && !is_ws {
                in_ws_sequence = false;
            }
            if let Some(last) = result.last_mut() {
                last.1 += len;
            }
            pos += len;
        }
    }
    result
}

/// Turns a segmentation into ids as SentencePiece's `PopulateSentencePieceText` does: with
/// byte fallback an unknown piece becomes the pieces of its bytes, without it a run of
/// unknown pieces becomes one.
pub struct IdWriter<'a> {
    unk_id: u32,
    byte_ids: Option<&'a [u32; 256]>,
    prev_unk: bool,
}

impl<'a> IdWriter<'a> {
    pub fn new(vocab: &'a Vocab) -> Self {
        IdWriter { unk_id: vocab.unk_id, byte_ids: vocab.byte_ids.as_deref(), prev_unk: false }
    }

    /// Appends the ids of piece `id` covering the normalized bytes `piece`.
    #[inline]
    pub fn push(&mut self, out: &mut Vec<u32>, id: u32, piece: &[u8]) {
        let is_unk = id == self.unk_id;
        match (self.byte_ids, is_unk) {
            (Some(bytes), true) => out.extend(piece.iter().map(|&b| bytes[b as usize])),
            (None, true) if self.prev_unk => {}
            _ => out.push(id),
        }
        self.prev_unk = is_unk;
    }

    /// Appends packed cached tokens ([`unigram_cache`]) of `word`.
    #[inline]
    pub(super) fn push_packed(
        &mut self,
        out: &mut Vec<u32>,
        word: &[u8],
        tokens: &[u32],
        has_unk: bool,
    ) {
        if has_unk {
            let mut at = 0;
            for &token in tokens {
                let len = (token >> unigram_cache::ID_BITS) as usize;
                self.push(out, token & unigram_cache::ID_MASK, &word[at..at + len]);
                at += len;
            }
        } else if !tokens.is_empty() {
            out.extend(tokens.iter().map(|&token| token & unigram_cache::ID_MASK));
            self.prev_unk = false;
        }
    }
}

/// The words of a normalized text that BPE may segment on their own when
/// [`Vocab::words_are_independent`]: each starts at a ▁ that follows another character (the
/// first also at 0). Byte ranges.
pub fn independent_words(bytes: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        // Skip the ▁ run the word starts with, then find the next ▁.
        let mut pos = start;
        while bytes[pos..].starts_with(SPACE_BYTES) {
            pos += SPACE_BYTES.len();
        }
        let end = next_space(bytes, pos);
        let word = (start, end);
        start = end;
        Some(word)
    })
}

/// ▁ in UTF-8.
const SPACE_BYTES: &[u8] = SPACE_SYMBOL.as_bytes();

/// The position of the first ▁ at or after `from` (or the end): a `memchr` for its lead byte,
/// cheaper than a substring searcher on words a few bytes long.
#[inline]
fn next_space(bytes: &[u8], mut from: usize) -> usize {
    while let Some(i) = memchr::memchr(SPACE_BYTES[0], &bytes[from..]) {
        let at = from + i;
        if bytes[at..].starts_with(SPACE_BYTES) {
            return at;
        }
        from = at + 1;
    }
    bytes.len()
}

/// The model type of a proto, as an enum: a value the enum does not know is UNIGRAM, the
/// field's default, as protobuf's parser gives it to sentencepiece.
pub fn model_type(proto: &ModelProto) -> Result<ModelType> {
    let raw = proto.trainer_spec.as_ref().and_then(|t| t.model_type);
    Ok(raw.and_then(|raw| ModelType::try_from(raw).ok()).unwrap_or(ModelType::Unigram))
}
