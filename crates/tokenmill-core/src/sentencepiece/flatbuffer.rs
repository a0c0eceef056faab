//! SentencePiece's FlatBuffers model (`.spm.fb`, read by SentencePiece Lite): the conversion
//! `sentencepiece.convert_to_flatbuffer` does, byte for byte.
//!
//! The file is a `sentencepiece.lite.ModelProto` table (schema `lite/sentencepiece_lite.fbs`):
//! the pieces, their scores (BPE: as integers), types and special ids, the normalizer spec,
//! and three Darts-clone tries built at conversion time — every piece, the USER_DEFINED pieces,
//! and every two-character window of every piece (its leaves patched to point at the node of
//! the window's second character). The tries come from [`darts_clone`], which places units as
//! Darts-clone does, since a byte-identical file needs identical tries.
//!
//! The FlatBuffers writer below is hand-written: the `flatbuffers` crate cannot force the 8-byte
//! alignment the schema asks for on the trie and charsmap vectors (`force_align`), and byte
//! identity needs the C++ `FlatBufferBuilder`'s exact layout — the buffer grows downwards,
//! objects are written in the order the generated `Pack` writes them, table fields by size
//! (largest first) then in reverse schema order, defaults left out, equal vtables shared.
use super::bpe::encode_bpe;
use super::model::Vocab;
use super::normalizer::one_char_len;
use super::proto::{ModelProto, ModelType, PieceType};
use crate::error::{Error, Result};
use crate::utils::darts::darts_clone;

/// What `convert_to_flatbuffer` may be asked besides the model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConvertOptions {
    /// Leave out the character-bigram trie (Unigram only; BPE always has it).
    pub skip_char_bigrams: bool,
    /// A one-byte "\0" piece of a byte-fallback model becomes UNUSED `<unused_ID>` instead of
    /// an error.
    pub treat_null_byte_as_unused: bool,
    /// Accept WORD and CHAR models (SentencePiece Lite runs them as Unigram).
    pub allow_unsupported_model_type: bool,
}

const MAX_VOCAB: usize = 16_000_000;
const MAX_PIECE_LENGTH: usize = 4096;
/// BPE pieces longer than this are never checked as direct mappings.
const MAX_DIRECT_MAPPING_LENGTH: usize = 128;
/// Largest |score| a BPE piece may have (the largest f32 below 2^31).
const MAX_BPE_SCORE: f32 = 2_147_483_520.0;

fn invalid(message: String) -> Error {
    Error::InvalidArgument(message)
}

/// The fields of the FlatBuffers model, as the converter fills them.
struct LiteModel {
    pieces: Vec<String>,
    scores: Vec<f32>,
    int_scores: Vec<i32>,
    types: Vec<u8>,
    unk_id: i32,
    unk_surface: String,
    model_type: i32,
    normalizer: Option<LiteNormalizer>,
    pieces_trie: Vec<u8>,
    prefix_matcher_trie: Vec<u8>,
    char_bigram_trie: Vec<u8>,
    has_direct_mappings: bool,
    is_direct_mapping: Vec<u8>,
    bos_id: i32,
    eos_id: i32,
    pad_id: i32,
}

struct LiteNormalizer {
    name: String,
    precompiled_charsmap: Vec<u8>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
}

/// Converts a model to SentencePiece's FlatBuffers format, with SentencePiece's checks and
/// error messages.
pub fn convert_to_flatbuffer(proto: &ModelProto, options: &ConvertOptions) -> Result<Vec<u8>> {
    let model = lite_model(proto, options)?;
    // sentencepiece then loads the result in its Lite processor, which rejects (among other
    // things it checks) a Unigram score that is not finite.
    if model.scores.iter().any(|s| !s.is_finite()) {
        return Err(invalid(
            "Model verification failed: Converted FlatBuffers model is invalid.".into(),
        ));
    }
    Ok(write_model(&model))
}

fn model_type_name(raw: i32) -> String {
    match ModelType::try_from(raw) {
        Ok(ModelType::Unigram) => "UNIGRAM".into(),
        Ok(ModelType::Bpe) => "BPE".into(),
        Ok(ModelType::Word) => "WORD".into(),
        Ok(ModelType::Char) => "CHAR".into(),
        Err(_) => String::new(),
    }
}

fn lite_model(proto: &ModelProto, options: &ConvertOptions) -> Result<LiteModel> {
    let n = proto.pieces.len();
    if n == 0 || n > MAX_VOCAB {
        return Err(invalid(format!(
            "Model vocabulary size ({n}) is out of safe bounds [1, 16,000,000]."
        )));
    }
    let mut model = LiteModel {
        pieces: Vec::with_capacity(n),
        scores: Vec::new(),
        int_scores: Vec::new(),
        types: Vec::with_capacity(n),
        unk_id: 0,
        unk_surface: String::new(),
        model_type: ModelType::Unigram as i32,
        normalizer: None,
        pieces_trie: Vec::new(),
        prefix_matcher_trie: Vec::new(),
        char_bigram_trie: Vec::new(),
        has_direct_mappings: false,
        is_direct_mapping: Vec::new(),
        bos_id: -1,
        eos_id: -1,
        pad_id: -1,
    };
    let mut byte_fallback = false;
    let (mut bos_piece, mut eos_piece, mut pad_piece) = ("<s>", "</s>", "<pad>");
    if let Some(ts) = &proto.trainer_spec {
        let raw = ts.model_type.unwrap_or(ModelType::Unigram as i32);
        let supported = raw == ModelType::Unigram as i32
            || raw == ModelType::Bpe as i32
            || (options.allow_unsupported_model_type
                && (raw == ModelType::Word as i32 || raw == ModelType::Char as i32));
        if !supported {
            return Err(invalid(format!("Unsupported model type: {}", model_type_name(raw))));
        }
        model.model_type = raw;
        byte_fallback = ts.byte_fallback();
        model.unk_id = ts.unk_id();
        model.unk_surface = ts.unk_surface().to_string();
        for (name, piece) in [
            (ts.bos_piece(), &mut bos_piece),
            (ts.eos_piece(), &mut eos_piece),
            (ts.pad_piece(), &mut pad_piece),
        ] {
            if !name.is_empty() {
                *piece = name;
            }
        }
    }
    let is_bpe = model.model_type == ModelType::Bpe as i32;

    let mut user_defined: Vec<(String, u32)> = Vec::new();
    for (i, sp) in proto.pieces.iter().enumerate() {
        let text = sp.piece();
        let mut kind = sp.r#type() as u8;
        if text.is_empty() || text.len() > MAX_PIECE_LENGTH {
            return Err(invalid(format!("Piece at index {i} is invalid (empty or too long).")));
        }
        if text.contains('\0') {
            if !(options.treat_null_byte_as_unused && byte_fallback && text.len() == 1) {
                return Err(invalid(format!(
                    "Piece at index {i} is invalid (contains null byte)."
                )));
            }
            model.pieces.push(format!("<unused_{i}>"));
            kind = PieceType::Unused as u8;
        } else {
            model.pieces.push(text.to_string());
        }
        let piece = model.pieces.last().expect("just pushed");
        if kind == PieceType::UserDefined as u8 {
            user_defined.push((piece.clone(), i as u32));
        }
        if kind == PieceType::Control as u8 {
            let id = i as i32;
            if piece == bos_piece {
                model.bos_id = id;
            }
            if piece == eos_piece {
                model.eos_id = id;
            }
            if piece == pad_piece {
                model.pad_id = id;
            }
        }
        let score = sp.score();
        if is_bpe {
            if score.is_nan() || score.abs() > MAX_BPE_SCORE {
                return Err(invalid(format!("Piece at index {i} has an invalid BPE score.")));
            }
            model.int_scores.push(score as i32);
        } else {
            model.scores.push(score);
        }
        model.types.push(kind);
    }

    if let Some(ns) = &proto.normalizer_spec {
        model.normalizer = Some(LiteNormalizer {
            name: ns.name().to_string(),
            // Stored little-endian, as in the .model file; the FlatBuffers reader maps it as is.
            precompiled_charsmap: ns.precompiled_charsmap().to_vec(),
            add_dummy_prefix: ns.add_dummy_prefix(),
            remove_extra_whitespaces: ns.remove_extra_whitespaces(),
            escape_whitespaces: ns.escape_whitespaces(),
            treat_whitespace_as_suffix: proto
                .trainer_spec
                .as_ref()
                .is_some_and(|t| t.treat_whitespace_as_suffix()),
        });
    }

    let all: Vec<(String, u32)> =
        model.pieces.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
    model.pieces_trie = valued_trie(all)?;
    model.prefix_matcher_trie = valued_trie(user_defined)?;
    if is_bpe || !options.skip_char_bigrams {
        model.char_bigram_trie = bigram_trie(&model.pieces)?;
    }
    if is_bpe {
        mark_direct_mappings(proto, &mut model)?;
    }
    Ok(model)
}

fn units_to_bytes(units: &[u32]) -> Vec<u8> {
    units.iter().flat_map(|u| u.to_le_bytes()).collect()
}

/// A Darts-clone trie of `keys` with their values (empty when there are none).
fn valued_trie(mut keys: Vec<(String, u32)>) -> Result<Vec<u8>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    keys.sort();
    if let Some(pair) = keys.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(invalid(format!("Duplicate key for trie building: {}", pair[0].0)));
    }
    let bytes: Vec<&[u8]> = keys.iter().map(|(k, _)| k.as_bytes()).collect();
    let values: Vec<u32> = keys.iter().map(|&(_, v)| v).collect();
    Ok(units_to_bytes(&darts_clone::build(&bytes, Some(&values))?))
}

/// The trie of every two-character window of every piece; each window's leaf holds the node
/// of its second character (0 when that character alone is not a key), with the value bit.
fn bigram_trie(pieces: &[String]) -> Result<Vec<u8>> {
    let mut bigrams: Vec<&[u8]> = Vec::new();
    for piece in pieces {
        let bytes = piece.as_bytes();
        let (mut start, mut prev_len) = (0, 0);
        while start < bytes.len() {
            let len = one_char_len(bytes[start]).min(bytes.len() - start);
            if prev_len > 0 {
                bigrams.push(&bytes[start - prev_len..start + len]);
            }
            prev_len = len;
            start += len;
        }
    }
    if bigrams.is_empty() {
        return Ok(Vec::new());
    }
    bigrams.sort_unstable();
    bigrams.dedup();
    let mut units = darts_clone::build(&bigrams, None)?;
    let node_of = |units: &[u32], key: &[u8]| -> Option<usize> {
        let mut pos = 0usize;
        for &byte in key {
            let next = pos ^ unit_offset(*units.get(pos)?) ^ byte as usize;
            if units.get(next)? & 0x8000_00FF != byte as u32 {
                return None;
            }
            pos = next;
        }
        Some(pos)
    };
    for bigram in &bigrams {
        let first_len = one_char_len(bigram[0]).min(bigram.len());
        let second = node_of(&units, &bigram[first_len..]).unwrap_or(0);
        let node = node_of(&units, bigram).ok_or_else(|| {
            invalid("Out-of-bounds leaf position in bigram trie patching.".into())
        })?;
        let leaf = node ^ unit_offset(units[node]);
        let slot = units.get_mut(leaf).ok_or_else(|| {
            invalid("Out-of-bounds leaf position in bigram trie patching.".into())
        })?;
        *slot = second as u32 | (1 << 31);
    }
    Ok(units_to_bytes(&units))
}

fn unit_offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

fn is_invisible(kind: u8) -> bool {
    [PieceType::Unknown, PieceType::Control, PieceType::Unused, PieceType::Byte]
        .iter()
        .any(|&k| kind == k as u8)
}

/// A vocabulary on which our BPE segments pieces as the Lite runtime's does: the converted
/// pieces, where UNUSED pieces are never merged into (so they stand as CONTROL pieces here:
/// never produced, never matched; so do the BYTE pieces, as byte fallback is off), and, when
/// the model has no UNKNOWN piece, an invisible piece at `unk_id` stands for it (only
/// invisible pieces change, and those are direct mappings whatever the encoder says).
fn lite_bpe_vocab(proto: &ModelProto, model: &LiteModel) -> Result<Vocab> {
    let mut lite = proto.clone();
    // Byte fallback off: a character outside the vocabulary then gives UNK instead of byte
    // pieces (not the piece itself either way), and a model whose "\0" byte piece became
    // UNUSED (so fewer than 256 byte pieces) still loads.
    if let Some(ts) = lite.trainer_spec.as_mut() {
        ts.byte_fallback = Some(false);
    }
    for (i, sp) in lite.pieces.iter_mut().enumerate() {
        sp.piece = Some(model.pieces[i].clone());
        let kind = match model.types[i] {
            k if k == PieceType::Unused as u8 || k == PieceType::Byte as u8 => {
                PieceType::Control as i32
            }
            k => k as i32,
        };
        sp.r#type = Some(kind);
    }
    let has_unknown = model.types.contains(&(PieceType::Unknown as u8));
    let unk = usize::try_from(model.unk_id).ok().filter(|&u| u < model.types.len());
    if let Some(unk) = unk.filter(|&u| !has_unknown && is_invisible(model.types[u])) {
        lite.pieces[unk].r#type = Some(PieceType::Unknown as i32);
    }
    Vocab::from_proto(&lite)
}

/// BPE: a piece is a direct mapping when encoding its text alone gives just that piece (as
/// the Lite runtime checks with its BPE on each piece); pieces the runtime never shows
/// (unknown, control, unused, byte) count as direct. All direct: the flag without the vector.
fn mark_direct_mappings(proto: &ModelProto, model: &mut LiteModel) -> Result<()> {
    let vocab = lite_bpe_vocab(proto, model)?;
    let mut flags = vec![0u8; model.pieces.len()];
    let (mut all, mut any) = (true, false);
    let mut no_dropout = || 0.0;
    for (i, piece) in model.pieces.iter().enumerate() {
        if is_invisible(model.types[i]) {
            flags[i] = 1;
            continue;
        }
        if piece.len() > MAX_DIRECT_MAPPING_LENGTH {
            all = false;
            continue;
        }
        let spans = encode_bpe(&vocab, piece, 0.0, &mut no_dropout);
        if spans.len() == 1 && spans[0].id as usize == i {
            flags[i] = 1;
            any = true;
        } else {
            all = false;
        }
    }
    if any {
        model.has_direct_mappings = true;
        if !all {
            model.is_direct_mapping = flags;
        }
    }
    Ok(())
}

/// A FlatBuffers writer with the C++ `FlatBufferBuilder`'s layout rules (see the module doc).
/// Offsets are counted from the end of the buffer, which grows towards the front.
#[derive(Default)]
struct Builder {
    /// The bytes written so far, last-written first (reversed at the end).
    reversed: Vec<u8>,
    min_align: usize,
    /// (vtable slot offset, field position) of the table being written.
    fields: Vec<(usize, usize)>,
    table_start: usize,
    /// Positions of the vtables written so far, for sharing.
    vtables: Vec<usize>,
}

impl Builder {
    fn size(&self) -> usize {
        self.reversed.len()
    }

    /// Writes `bytes` in front of everything written so far.
    fn push(&mut self, bytes: &[u8]) {
        self.reversed.extend(bytes.iter().rev());
    }

    fn pad(&mut self, count: usize) {
        self.reversed.resize(self.reversed.len() + count, 0);
    }

    fn align(&mut self, alignment: usize) {
        self.min_align = self.min_align.max(alignment);
        self.pad(self.size().wrapping_neg() & (alignment - 1));
    }

    /// Pads so that `len` more bytes end aligned.
    fn pre_align(&mut self, len: usize, alignment: usize) {
        self.min_align = self.min_align.max(alignment);
        self.pad((self.size() + len).wrapping_neg() & (alignment - 1));
    }

    fn push_scalar<const N: usize>(&mut self, bytes: [u8; N]) -> usize {
        self.align(N);
        self.push(&bytes);
        self.size()
    }

    fn push_offset(&mut self, target: usize) {
        self.align(4);
        let relative = (self.size() - target + 4) as u32;
        self.push(&relative.to_le_bytes());
    }

    fn string(&mut self, text: &str) -> usize {
        self.pre_align(text.len() + 1, 4);
        self.push(&[0]);
        self.push(text.as_bytes());
        self.push_scalar((text.len() as u32).to_le_bytes())
    }

    /// A vector of `count` elements of `element_size` bytes, given as little-endian bytes;
    /// 0 (absent) when empty.
    fn vector(&mut self, bytes: &[u8], count: usize, element_size: usize) -> usize {
        if count == 0 {
            return 0;
        }
        self.pre_align(bytes.len(), 4);
        self.pre_align(bytes.len(), element_size);
        self.push(bytes);
        self.push_scalar((count as u32).to_le_bytes())
    }

    /// A byte vector the schema marks `force_align: 8` (an empty one is absent and, as in the
    /// C++ builder, adds no padding either).
    fn aligned_bytes(&mut self, bytes: &[u8]) -> usize {
        if bytes.is_empty() {
            return 0;
        }
        self.pre_align(bytes.len(), 8);
        self.vector(bytes, bytes.len(), 1)
    }

    fn strings(&mut self, texts: &[String]) -> usize {
        let offsets: Vec<usize> = texts.iter().map(|t| self.string(t)).collect();
        self.pre_align(offsets.len() * 4, 4);
        for &offset in offsets.iter().rev() {
            self.push_offset(offset);
        }
        self.push_scalar((offsets.len() as u32).to_le_bytes())
    }

    fn start_table(&mut self) {
        self.fields.clear();
        self.table_start = self.size();
    }

    fn field<const N: usize>(&mut self, index: usize, bytes: [u8; N], default: [u8; N]) {
        if bytes != default {
            let at = self.push_scalar(bytes);
            self.fields.push((4 + 2 * index, at));
        }
    }

    fn field_offset(&mut self, index: usize, target: usize) {
        if target != 0 {
            self.push_offset(target);
            self.fields.push((4 + 2 * index, self.size()));
        }
    }

    fn end_table(&mut self) -> usize {
        let table = self.push_scalar(0i32.to_le_bytes());
        let max_slot = self.fields.iter().map(|&(slot, _)| slot).max().unwrap_or(0);
        let vtable_len = (max_slot + 2).max(4);
        let mut vtable = vec![0u16; vtable_len / 2];
        vtable[0] = vtable_len as u16;
        vtable[1] = (table - self.table_start) as u16;
        for &(slot, at) in &self.fields {
            vtable[slot / 2] = (table - at) as u16;
        }
        let vtable_bytes: Vec<u8> = vtable.iter().flat_map(|v| v.to_le_bytes()).collect();
        let shared =
            self.vtables.iter().copied().find(|&at| self.bytes_at(at, vtable_len) == vtable_bytes);
        let vtable_at = match shared {
            Some(at) => at,
            None => {
                self.push(&vtable_bytes);
                self.vtables.push(self.size());
                self.size()
            }
        };
        let relative = (vtable_at as i64 - table as i64) as i32;
        // The table's first word (written as 0 above) ends at `table`: patch it in place.
        self.reversed[table - 4..table].copy_from_slice(&reversed4(relative.to_le_bytes()));
        table
    }

    /// `len` bytes starting at the object at `at` (in file order).
    fn bytes_at(&self, at: usize, len: usize) -> Vec<u8> {
        if at < len {
            return Vec::new();
        }
        self.reversed[at - len..at].iter().rev().copied().collect()
    }

    fn finish(mut self, root: usize) -> Vec<u8> {
        let min_align = self.min_align.max(4);
        self.pre_align(4, min_align);
        self.push_offset(root);
        self.reversed.reverse();
        self.reversed
    }
}

fn reversed4(bytes: [u8; 4]) -> [u8; 4] {
    [bytes[3], bytes[2], bytes[1], bytes[0]]
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], to_le: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to_le(v)).collect()
}

/// Writes the objects in the order the generated `Pack` does, then the root table.
fn write_model(model: &LiteModel) -> Vec<u8> {
    let mut b = Builder::default();
    let pieces = b.strings(&model.pieces);
    let scores = b.vector(&le_bytes(&model.scores, f32::to_le_bytes), model.scores.len(), 4);
    let int_scores =
        b.vector(&le_bytes(&model.int_scores, i32::to_le_bytes), model.int_scores.len(), 4);
    let types = b.vector(&model.types, model.types.len(), 1);
    let unk_surface = if model.unk_surface.is_empty() { 0 } else { b.string(&model.unk_surface) };
    let normalizer = model.normalizer.as_ref().map_or(0, |ns| write_normalizer(&mut b, ns));
    let pieces_trie = b.aligned_bytes(&model.pieces_trie);
    let prefix_trie = b.aligned_bytes(&model.prefix_matcher_trie);
    let bigram_trie = b.aligned_bytes(&model.char_bigram_trie);
    let direct = b.vector(&model.is_direct_mapping, model.is_direct_mapping.len(), 1);
    b.start_table();
    b.field(15, model.pad_id.to_le_bytes(), (-1i32).to_le_bytes());
    b.field(14, model.eos_id.to_le_bytes(), (-1i32).to_le_bytes());
    b.field(13, model.bos_id.to_le_bytes(), (-1i32).to_le_bytes());
    b.field_offset(12, direct);
    b.field_offset(10, bigram_trie);
    b.field_offset(9, prefix_trie);
    b.field_offset(8, pieces_trie);
    b.field_offset(7, normalizer);
    b.field_offset(5, unk_surface);
    b.field(4, model.unk_id.to_le_bytes(), 0i32.to_le_bytes());
    b.field_offset(3, types);
    b.field_offset(2, int_scores);
    b.field_offset(1, scores);
    b.field_offset(0, pieces);
    b.field(11, [model.has_direct_mappings as u8], [0]);
    b.field(6, [model.model_type as u8], [ModelType::Unigram as u8]);
    let root = b.end_table();
    b.finish(root)
}

fn write_normalizer(b: &mut Builder, ns: &LiteNormalizer) -> usize {
    let name = if ns.name.is_empty() { 0 } else { b.string(&ns.name) };
    let charsmap = b.aligned_bytes(&ns.precompiled_charsmap);
    b.start_table();
    b.field_offset(1, charsmap);
    b.field_offset(0, name);
    b.field(5, [ns.treat_whitespace_as_suffix as u8], [0]);
    b.field(4, [ns.escape_whitespaces as u8], [1]);
    b.field(3, [ns.remove_extra_whitespaces as u8], [1]);
    b.field(2, [ns.add_dummy_prefix as u8], [1]);
    b.end_table()
}
