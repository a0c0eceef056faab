//! `StoredEncoding`: a finished `Encoding` as it is held after the batch call returns (the
//! encodings handed to Python), stored compactly and exactly sized where it can be. How it is
//! stored is private to this module; users read it field by field or as an `Encoding`.
//!
//! Why: an `Encoding` is 7 vectors, 64 bytes per token (u32 ids and type ids, a `String` per
//! token even when its text is deferred, `Option<u32>` words, `(usize, usize)` offsets, two u32
//! masks), and the pipeline sizes them for a token every 3 bytes of text, so a batch held that
//! way costs ~20 bytes of memory per byte of text, all faulted in fresh and later freed by
//! another thread. Packed, a token is 22 bytes in two exactly-sized allocations: ids, type ids,
//! words (`None` as `u32::MAX`) and offsets as u32, the masks as bytes; token texts are kept only
//! where they are not empty (special, added and padding tokens when the model's texts are
//! deferred), a run of equal consecutive texts (padding) once.
//!
//! Packing (`PackedEncoding`) is lossless: `unpack` gives back the `Encoding` it was made from.
//! An encoding with a value that does not fit (an offset or word index of 2^32 or more, a mask
//! above 255, fields of different lengths) is not packed: `StoredEncoding` then keeps it whole.
use std::collections::HashMap;
use std::ops::Range;

use either::Either;

use crate::tokenizer::encoding::{n_sequences_of, sequence_ids_of};
use crate::tokenizer::{Encoding, Offsets};
use crate::utils::tokens_by_id::TokensById;

/// The packed form of a word index of `None`.
const NO_WORD: u32 = u32::MAX;

/// An `Encoding` packed (see the module docs).
#[derive(Debug, Clone, PartialEq, Default)]
struct PackedEncoding {
    /// The number of tokens.
    len: u32,
    /// `ids | type_ids | words | (start, end) of each token | text runs`: 5 values per token,
    /// then 4 per `TextRun`.
    numbers: Box<[u32]>,
    /// `special_tokens_mask | attention_mask | text of the runs`: 2 bytes per token, then the
    /// texts one after the other (UTF-8).
    bytes: Box<[u8]>,
    /// The sequence ranges `(sequence, start, end)`, inline: an encoding with more than two
    /// is not packed.
    sequence_ranges: [Option<[u32; 3]>; 2],
    overflowing: Vec<PackedEncoding>,
}

/// Tokens `first..first + count` all have the text `start..end` of the packed texts.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TextRun {
    first: u32,
    count: u32,
    start: u32,
    end: u32,
}

impl TextRun {
    fn from_values(v: &[u32]) -> TextRun {
        TextRun { first: v[0], count: v[1], start: v[2], end: v[3] }
    }
}

/// The non-empty token texts as runs of consecutive tokens with the same text, and the texts
/// of the runs one after the other; None when a position does not fit in u32.
fn text_runs(tokens: &[String]) -> Option<(Vec<TextRun>, String)> {
    let mut runs: Vec<TextRun> = Vec::new();
    let mut text = String::new();
    for (i, token) in tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
        let i = u32::try_from(i).ok()?;
        if let Some(last) = runs.last_mut() {
            if last.first + last.count == i
                && &text[last.start as usize..last.end as usize] == token.as_str()
            {
                last.count += 1;
                continue;
            }
        }
        let start = u32::try_from(text.len()).ok()?;
        text.push_str(token);
        let end = u32::try_from(text.len()).ok()?;
        runs.push(TextRun { first: i, count: 1, start, end });
    }
    Some((runs, text))
}

/// `ranges` inline, None when there are more than two or a value does not fit in u32.
fn inline_ranges(ranges: &HashMap<usize, Range<usize>>) -> Option<[Option<[u32; 3]>; 2]> {
    let mut out = [None; 2];
    if ranges.len() > out.len() {
        return None;
    }
    for (slot, (&seq, range)) in out.iter_mut().zip(ranges) {
        *slot = Some([
            u32::try_from(seq).ok()?,
            u32::try_from(range.start).ok()?,
            u32::try_from(range.end).ok()?,
        ]);
    }
    Some(out)
}

impl PackedEncoding {
    /// `encoding` packed, or None when one of its values (or its windows') does not fit.
    fn pack(encoding: &Encoding) -> Option<PackedEncoding> {
        let e = encoding;
        let n = e.len();
        let lengths = [
            e.type_ids.len(),
            e.tokens.len(),
            e.words.len(),
            e.offsets.len(),
            e.special_tokens_mask.len(),
            e.attention_mask.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return None;
        }
        let (runs, text) = text_runs(&e.tokens)?;
        let mut numbers = Vec::with_capacity(5 * n + 4 * runs.len());
        numbers.extend_from_slice(&e.ids);
        numbers.extend_from_slice(&e.type_ids);
        for word in &e.words {
            numbers.push(match *word {
                None => NO_WORD,
                Some(NO_WORD) => return None,
                Some(w) => w,
            });
        }
        for &(start, end) in &e.offsets {
            numbers.push(u32::try_from(start).ok()?);
            numbers.push(u32::try_from(end).ok()?);
        }
        numbers.extend(runs.iter().flat_map(|r| [r.first, r.count, r.start, r.end]));
        let mut bytes = Vec::with_capacity(2 * n + text.len());
        for &m in e.special_tokens_mask.iter().chain(&e.attention_mask) {
            bytes.push(u8::try_from(m).ok()?);
        }
        bytes.extend_from_slice(text.as_bytes());
        Some(PackedEncoding {
            len: u32::try_from(n).ok()?,
            numbers: numbers.into_boxed_slice(),
            bytes: bytes.into_boxed_slice(),
            sequence_ranges: inline_ranges(&e.sequence_ranges)?,
            overflowing: e.overflowing.iter().map(PackedEncoding::pack).collect::<Option<_>>()?,
        })
    }

    /// The `Encoding` this was packed from.
    fn unpack(&self) -> Encoding {
        Encoding {
            ids: self.ids().to_vec(),
            type_ids: self.type_ids().to_vec(),
            tokens: self.tokens(None),
            words: self.word_ids().collect(),
            offsets: self.offsets().collect(),
            special_tokens_mask: widen(self.special_tokens_mask()).collect(),
            attention_mask: widen(self.attention_mask()).collect(),
            overflowing: self.overflowing.iter().map(PackedEncoding::unpack).collect(),
            sequence_ranges: self.sequence_ranges(),
        }
    }

    fn len(&self) -> usize {
        self.len as usize
    }

    /// The values `field * len..(field + width) * len` of `numbers`.
    fn column(&self, field: usize, width: usize) -> &[u32] {
        let n = self.len();
        &self.numbers[field * n..(field + width) * n]
    }

    fn ids(&self) -> &[u32] {
        self.column(0, 1)
    }
    fn type_ids(&self) -> &[u32] {
        self.column(1, 1)
    }
    fn word_ids(&self) -> impl Iterator<Item = Option<u32>> + '_ {
        self.column(2, 1).iter().map(|&w| (w != NO_WORD).then_some(w))
    }
    /// `start, end` of every token, one after the other.
    fn offset_values(&self) -> &[u32] {
        self.column(3, 2)
    }
    fn offsets(&self) -> impl Iterator<Item = Offsets> + '_ {
        self.offset_values().chunks_exact(2).map(|o| (o[0] as usize, o[1] as usize))
    }
    fn special_tokens_mask(&self) -> &[u8] {
        &self.bytes[..self.len()]
    }
    fn attention_mask(&self) -> &[u8] {
        &self.bytes[self.len()..2 * self.len()]
    }
    /// Sequence index → token range, as `Encoding::sequence_ranges`.
    fn sequence_ranges(&self) -> HashMap<usize, Range<usize>> {
        self.sequence_ranges
            .iter()
            .flatten()
            .map(|&[seq, start, end]| (seq as usize, start as usize..end as usize))
            .collect()
    }
    fn overflowing(&self) -> &[PackedEncoding] {
        &self.overflowing
    }

    /// `(token index, text)` of every token whose text is not empty, in order.
    fn texts(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        let text = &self.bytes[2 * self.len()..];
        self.numbers[5 * self.len()..].chunks_exact(4).map(TextRun::from_values).flat_map(
            move |r| {
                // Written from a `String` split at char boundaries by `pack`.
                let t = std::str::from_utf8(&text[r.start as usize..r.end as usize])
                    .unwrap_or_default();
                (r.first..r.first + r.count).map(move |i| (i as usize, t))
            },
        )
    }

    /// The token texts, those left empty by a deferred encode (see
    /// `Encoding::fill_deferred_tokens`) read from `table` when one is given.
    fn tokens(&self, table: Option<&TokensById>) -> Vec<String> {
        let mut tokens = vec![String::new(); self.len()];
        self.texts().for_each(|(i, text)| tokens[i] = text.to_owned());
        if let Some(table) = table {
            let specials = self.special_tokens_mask();
            for ((token, &id), &special) in tokens.iter_mut().zip(self.ids()).zip(specials) {
                if let Some(text) =
                    crate::tokenizer::encoding::deferred_text(token, id, u32::from(special), table)
                {
                    *token = text.to_owned();
                }
            }
        }
        tokens
    }

    /// Marks every token as belonging to sequence `id` (as `Encoding::set_sequence_id`);
    /// false (and nothing changed) when that would make a third sequence range.
    fn set_sequence_id(&mut self, id: usize) -> bool {
        let (Ok(seq), Ok(len)) = (u32::try_from(id), u32::try_from(self.len())) else {
            return false;
        };
        let slots = &mut self.sequence_ranges;
        let slot = match slots.iter().position(|r| r.is_some_and(|[s, _, _]| s == seq)) {
            Some(i) => &mut slots[i],
            None => match slots.iter_mut().find(|r| r.is_none()) {
                Some(free) => free,
                None => return false,
            },
        };
        *slot = Some([seq, 0, len]);
        true
    }

    /// Bytes held on the heap (the struct itself not included).
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        let windows: usize = self
            .overflowing
            .iter()
            .map(|o| std::mem::size_of::<PackedEncoding>() + o.heap_bytes())
            .sum();
        self.numbers.len() * 4 + self.bytes.len() + windows
    }
}

fn widen(values: &[u8]) -> impl Iterator<Item = u32> + '_ {
    values.iter().map(|&v| u32::from(v))
}

/// The values of one field of a `StoredEncoding`, read in place: an iterator, whose two sides
/// are the two ways an encoding may be held. A loop over many values can dispatch once
/// (`either::for_both!`, or a match) instead of once per value.
pub type Values<L, R> = Either<L, R>;

/// A finished encoding as it is held (the encodings of a batch handed to Python): packed when
/// it fits (see the module docs), else whole. How it is stored is private: it is read through
/// per-field accessors, which read a packed encoding in place, and turned into an `Encoding`
/// (a copy) or unpacked in place (`make_full`) where a whole one is needed.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEncoding(Held);

#[derive(Debug, Clone, PartialEq)]
enum Held {
    Packed(PackedEncoding),
    /// Boxed: the struct stays small (it is moved into a Python object per row).
    Full(Box<Encoding>),
}

impl Default for StoredEncoding {
    fn default() -> Self {
        StoredEncoding::whole(Encoding::default())
    }
}

impl From<Encoding> for StoredEncoding {
    /// Packs `encoding` when it fits (it is then dropped here, by the thread that made it).
    fn from(encoding: Encoding) -> Self {
        match PackedEncoding::pack(&encoding) {
            Some(packed) => StoredEncoding(Held::Packed(packed)),
            None => StoredEncoding::whole(encoding),
        }
    }
}

/// A mask's values (0 or 1 per token), widened where it is packed as bytes.
fn mask<'a>(
    values: Either<&'a [u8], &'a Vec<u32>>,
) -> Values<impl Iterator<Item = u32> + 'a, impl Iterator<Item = u32> + 'a> {
    values.map_left(widen).map_right(|m| m.iter().copied())
}

impl StoredEncoding {
    /// Reads the encoding with `packed` or `full`, whichever fits how it is held.
    fn read<'a, T>(
        &'a self,
        packed: impl FnOnce(&'a PackedEncoding) -> T,
        full: impl FnOnce(&'a Encoding) -> T,
    ) -> T {
        match &self.0 {
            Held::Packed(p) => packed(p),
            Held::Full(e) => full(e),
        }
    }

    /// `encoding` kept whole (not packed).
    pub fn whole(encoding: Encoding) -> Self {
        StoredEncoding(Held::Full(Box::new(encoding)))
    }

    /// The encoding whole (a copy; deferred token texts still empty).
    pub fn to_encoding(&self) -> Encoding {
        self.read(PackedEncoding::unpack, Encoding::clone)
    }

    /// The encoding whole, unpacked in place the first time (for edits and lookups).
    pub fn make_full(&mut self) -> &mut Encoding {
        if let Held::Packed(p) = &self.0 {
            self.0 = Held::Full(Box::new(p.unpack()));
        }
        match &mut self.0 {
            Held::Full(e) => e,
            Held::Packed(_) => unreachable!("unpacked just above"),
        }
    }

    /// Changes the encoding with `edit`, then stores it as before: a packed encoding is unpacked
    /// for the change and packed again after (`make_full` would leave it unpacked).
    pub fn edit(&mut self, edit: impl FnOnce(&mut Encoding)) {
        match &mut self.0 {
            Held::Full(e) => edit(e),
            Held::Packed(p) => {
                let mut encoding = p.unpack();
                edit(&mut encoding);
                *self = StoredEncoding::from(encoding);
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn is_packed(&self) -> bool {
        matches!(self.0, Held::Packed(_))
    }

    pub fn len(&self) -> usize {
        self.read(PackedEncoding::len, Encoding::len)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn ids(&self) -> &[u32] {
        self.read(PackedEncoding::ids, |e| &e.ids)
    }
    pub fn type_ids(&self) -> &[u32] {
        self.read(PackedEncoding::type_ids, |e| &e.type_ids)
    }
    pub fn word_ids(
        &self,
    ) -> Values<impl Iterator<Item = Option<u32>> + '_, impl Iterator<Item = Option<u32>> + '_>
    {
        self.read(|p| Either::Left(p.word_ids()), |e| Either::Right(e.words.iter().copied()))
    }
    /// `start, end` of every token, one after the other.
    pub fn offset_values(
        &self,
    ) -> Values<impl Iterator<Item = usize> + '_, impl Iterator<Item = usize> + '_> {
        self.read(
            |p| Either::Left(p.offset_values().iter().map(|&v| v as usize)),
            |e| Either::Right(e.offsets.iter().flat_map(|&(start, end)| [start, end])),
        )
    }
    pub fn offsets(
        &self,
    ) -> Values<impl Iterator<Item = Offsets> + '_, impl Iterator<Item = Offsets> + '_> {
        self.read(|p| Either::Left(p.offsets()), |e| Either::Right(e.offsets.iter().copied()))
    }
    pub fn special_tokens_mask(
        &self,
    ) -> Values<impl Iterator<Item = u32> + '_, impl Iterator<Item = u32> + '_> {
        mask(self.read(
            |p| Either::Left(p.special_tokens_mask()),
            |e| Either::Right(&e.special_tokens_mask),
        ))
    }
    pub fn attention_mask(
        &self,
    ) -> Values<impl Iterator<Item = u32> + '_, impl Iterator<Item = u32> + '_> {
        mask(self.read(|p| Either::Left(p.attention_mask()), |e| Either::Right(&e.attention_mask)))
    }
    /// The token texts, the deferred ones read from `table` (see `PackedEncoding::tokens`).
    pub fn tokens(&self, table: Option<&TokensById>) -> Vec<String> {
        match (&self.0, table) {
            (Held::Packed(p), _) => p.tokens(table),
            (Held::Full(e), Some(table)) => e.tokens_filled(table),
            (Held::Full(e), None) => e.tokens.clone(),
        }
    }
    pub fn n_sequences(&self) -> usize {
        self.read(|p| n_sequences_of(&p.sequence_ranges()), Encoding::n_sequences)
    }
    pub fn sequence_ids(&self) -> Vec<Option<usize>> {
        self.read(|p| sequence_ids_of(&p.sequence_ranges(), p.len()), Encoding::sequence_ids)
    }
    pub fn set_sequence_id(&mut self, id: usize) {
        if let Held::Packed(p) = &mut self.0 {
            if p.set_sequence_id(id) {
                return;
            }
        }
        self.make_full().set_sequence_id(id)
    }
    /// The overflowing windows (copies).
    pub fn overflowing(&self) -> Vec<StoredEncoding> {
        self.read(
            |p| p.overflowing().iter().map(|o| StoredEncoding(Held::Packed(o.clone()))).collect(),
            |e| e.overflowing.iter().cloned().map(StoredEncoding::whole).collect(),
        )
    }
    /// Lengths of this encoding and of all its overflowing windows (and theirs).
    pub fn lengths(&self) -> Vec<usize> {
        let mut out = vec![self.len()];
        match &self.0 {
            Held::Packed(p) => collect_lengths(
                p.overflowing(),
                PackedEncoding::len,
                PackedEncoding::overflowing,
                &mut out,
            ),
            Held::Full(e) => {
                collect_lengths(&e.overflowing, Encoding::len, |e| &e.overflowing, &mut out)
            }
        }
        out
    }
}

fn collect_lengths<T>(
    windows: &[T],
    len: fn(&T) -> usize,
    children: fn(&T) -> &[T],
    out: &mut Vec<usize>,
) {
    for w in windows {
        out.push(len(w));
        collect_lengths(children(w), len, children, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::encoding::{PaddingDirection, TruncationDirection};

    /// Model tokens with deferred (empty) texts, surrounded by [CLS] / [SEP], as a batch encode
    /// of BERT leaves them.
    fn bert_like(n: usize) -> Encoding {
        let mut e = Encoding::default();
        e.push(101, "[CLS]".into(), (0, 0), None, 0, true);
        for i in 0..n {
            e.push(
                2000 + i as u32,
                String::new(),
                (3 * i, 3 * i + 2),
                Some(i as u32 / 2),
                0,
                false,
            );
        }
        e.push(102, "[SEP]".into(), (0, 0), None, 0, true);
        e.sequence_ranges.insert(0, 1..n + 1);
        e
    }

    fn round_trips(e: &Encoding) {
        let packed = PackedEncoding::pack(e).expect("fits");
        assert_eq!(&packed.unpack(), e);
        assert_eq!(packed.len(), e.len());
        assert_eq!(StoredEncoding::from(e.clone()).to_encoding(), *e);
    }

    #[test]
    fn round_trip_plain_padded_truncated_and_pairs() {
        round_trips(&Encoding::default());
        let e = bert_like(10);
        round_trips(&e);
        let mut padded = e.clone();
        padded.pad(20, 0, 0, "[PAD]", PaddingDirection::Left);
        round_trips(&padded);
        let mut truncated = e.clone();
        truncated.truncate(4, 1, TruncationDirection::Right).unwrap();
        truncated.pad(4, 0, 3, "[PAD]", PaddingDirection::Right);
        assert!(!truncated.overflowing.is_empty());
        round_trips(&truncated);
        let mut pair = e.clone();
        let mut second = bert_like(3);
        second.set_type_ids(1);
        second.tokens[2] = "x".into();
        second.tokens[3] = "x".into();
        second.tokens[4] = "y".into();
        pair.merge_with(second, false);
        round_trips(&pair);
    }

    #[test]
    fn compact_and_runs_of_equal_texts_stored_once() {
        let mut e = bert_like(200);
        e.pad(300, 0, 0, "[PAD]", PaddingDirection::Right);
        let packed = PackedEncoding::pack(&e).unwrap();
        // [CLS], [SEP], then the 98 pads as one run.
        assert_eq!(packed.numbers.len(), 5 * 300 + 4 * 3);
        assert_eq!(&packed.bytes[600..], b"[CLS][SEP][PAD]");
        assert_eq!(packed.heap_bytes(), 22 * 300 + 3 * 16 + 15);
    }

    #[test]
    fn values_that_do_not_fit_keep_the_encoding_whole() {
        let mut big_offset = bert_like(2);
        big_offset.offsets[1] = (0, u32::MAX as usize + 1);
        let mut big_word = bert_like(2);
        big_word.words[1] = Some(u32::MAX);
        let mut big_mask = bert_like(2);
        big_mask.attention_mask[0] = 256;
        let mut uneven = bert_like(2);
        uneven.type_ids.pop();
        let mut bad_window = bert_like(2);
        bad_window.overflowing.push(big_offset.clone());
        let mut three_ranges = bert_like(2);
        three_ranges.sequence_ranges.insert(1, 0..1);
        three_ranges.sequence_ranges.insert(2, 1..2);
        for e in [big_offset, big_word, big_mask, uneven, bad_window, three_ranges] {
            assert!(PackedEncoding::pack(&e).is_none());
            let stored = StoredEncoding::from(e.clone());
            assert!(!stored.is_packed());
            assert_eq!(stored.to_encoding(), e);
        }
    }

    #[test]
    fn accessors_read_what_the_encoding_holds() {
        let mut e = bert_like(5);
        e.truncate(4, 2, TruncationDirection::Right).unwrap();
        e.tokens[1] = "added".into();
        let table = TokensById::new(
            (0..3000u32)
                .map(|id| (if id == 2002 { "x" } else { "tok" }, id))
                .collect::<Vec<_>>()
                .iter()
                .map(|(t, id)| (*t, *id)),
        );
        for stored in [StoredEncoding::from(e.clone()), StoredEncoding::whole(e.clone())] {
            assert_eq!(stored.ids(), &e.ids[..]);
            assert_eq!(stored.type_ids(), &e.type_ids[..]);
            assert_eq!(stored.word_ids().collect::<Vec<_>>(), e.words);
            assert_eq!(stored.offsets().collect::<Vec<_>>(), e.offsets);
            let flat: Vec<usize> = e.offsets.iter().flat_map(|&(s, e)| [s, e]).collect();
            assert_eq!(stored.offset_values().collect::<Vec<_>>(), flat);
            assert_eq!(stored.special_tokens_mask().collect::<Vec<_>>(), e.special_tokens_mask);
            assert_eq!(stored.attention_mask().collect::<Vec<_>>(), e.attention_mask);
            assert_eq!(stored.tokens(None), e.tokens);
            assert_eq!(stored.tokens(Some(&table)), e.tokens_filled(&table));
            assert_eq!(stored.sequence_ids(), e.sequence_ids());
            assert_eq!(stored.n_sequences(), e.n_sequences());
            let windows: Vec<Encoding> =
                stored.overflowing().iter().map(StoredEncoding::to_encoding).collect();
            assert_eq!(windows, e.overflowing);
            assert_eq!(stored.lengths(), vec![4, 4, 3]);
            let mut edited = stored.clone();
            edited.set_sequence_id(1);
            let mut expected = e.clone();
            expected.set_sequence_id(1);
            assert_eq!(edited.to_encoding(), expected);
            // a third sequence range does not fit inline: the encoding is unpacked for it
            for id in [2, 3] {
                edited.set_sequence_id(id);
                expected.set_sequence_id(id);
            }
            assert_eq!(edited.to_encoding(), expected);
            assert!(!edited.is_packed());
            edited.make_full().pad(9, 0, 0, "[PAD]", PaddingDirection::Right);
            expected.pad(9, 0, 0, "[PAD]", PaddingDirection::Right);
            assert_eq!(edited.to_encoding(), expected);
        }
    }
}
