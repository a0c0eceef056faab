//! Word counts within a memory budget, and their compact, mergeable form.
//!
//! * [`SpillingCounter`] counts words in a hash map whose size it tracks (an honest estimate of
//!   the bytes it holds: the map's slots at its real capacity plus each key's allocation). When
//!   the map would exceed its share of the budget, its entries are sorted by word bytes and
//!   written to a *run* (a temporary file) and the map is dropped. At the end the runs (the last
//!   map spilled too) are merged k-way ([`BinaryHeap`] over run readers) into exact totals. No
//!   word is dropped and nothing is sampled: the result equals counting without a budget.
//! * [`CountTable`] holds counts compactly and sorted by word bytes: one text buffer, one end
//!   offset and one count per word (word length + 16 bytes, where a hash-map entry takes about
//!   60–100 bytes). Trainers read it; it is cheap to clone (shared), merges exactly with `+`,
//!   and saves to a documented binary file ([`CountTable::save`]).
//!
//! Counts are `u64` and **saturate** at `u64::MAX` when added (never wrap, never panic).
//!
//! Runs live in a temporary folder (the `tempfile` crate) inside the `spill_dir` given, or the
//! system's temporary folder; it is removed with everything in it when counting ends, succeeds
//! or fails (also when the counter is dropped).
//!
//! Run records and the saved file body share one encoding: the word's length (LEB128 varint),
//! its UTF-8 bytes, its count (LEB128 varint); records are in strictly increasing byte order.
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tempfile::TempDir;

use super::word_counts::WordCounts;
use crate::error::{Error, Result};

/// The share of the budget the counting map may take (the rest: the chunk of text being
/// counted, its per-thread maps, and the compact table the map turns into at the end).
const TABLE_SHARE: u64 = 2;
/// Runs merged at once; more are first merged into one run (bounds open files).
const MAX_RUNS: usize = 64;
/// Buffer of each run reader and writer.
const RUN_BUFFER: usize = 64 << 10;
/// The default budget when the RAM size is unknown.
const FALLBACK_MEMORY: u64 = 8 << 30;

/// Where counting may spill and how much memory it may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of memory counting and training may use.
    pub max_memory: u64,
    /// Folder of the temporary runs (None: the system's temporary folder).
    pub spill_dir: Option<PathBuf>,
}

impl Budget {
    /// The budget of `max_memory` bytes, or [`default_max_memory`] when None.
    pub fn new(max_memory: Option<u64>, spill_dir: Option<PathBuf>) -> Self {
        Budget { max_memory: max_memory.unwrap_or_else(default_max_memory), spill_dir }
    }
}

/// The default memory budget: half of the physical memory (`/proc/meminfo`; 4 GiB where it
/// cannot be read). Half leaves room for the operating system, the caller's own data and the
/// page cache that streaming the corpus relies on, while counting rarely spills on corpora whose
/// table fits comfortably in memory.
pub fn default_max_memory() -> u64 {
    physical_memory().unwrap_or(FALLBACK_MEMORY) / 2
}

fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Parses a memory size: a number of bytes (`"1000000"`), or a number with a unit, decimal
/// (`kB`, `MB`, `GB`, `TB`: powers of 1000) or binary (`KiB`, `MiB`, `GiB`, `TiB`: powers of
/// 1024), case-insensitive, fractions allowed (`"1.5GB"`), space allowed before the unit.
pub fn parse_memory(text: &str) -> Result<u64> {
    let bad = || {
        Error::InvalidArgument(format!(
            "max_memory: cannot read {text:?} as a size (e.g. 2GB, 512MiB, or bytes)"
        ))
    };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = (&t[..split], t[split..].trim());
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "m" | "mb" => 1000_u64.pow(2),
        "g" | "gb" => 1000_u64.pow(3),
        "t" | "tb" => 1000_u64.pow(4),
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = (value * scale as f64).round();
    if !bytes.is_finite() || bytes < 1.0 || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// The heap bytes of a `String` of `len` bytes: the allocators' size classes round small
/// requests up to 8 bytes and larger ones by up to a quarter (mimalloc, glibc).
fn string_bytes(len: usize) -> usize {
    match len {
        0 => 0,
        1..=64 => len.next_multiple_of(8),
        _ => len + len / 4,
    }
}

/// The bytes of a `WordCounts` map's slots at `capacity` (hashbrown: a power of two of buckets,
/// 7/8 of them usable, each an entry plus one control byte).
fn map_bytes(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = (capacity * 8).div_ceil(7).next_power_of_two();
    buckets * (std::mem::size_of::<(String, u64)>() + 1)
}

/// Counts words within a memory budget, spilling sorted runs to disk (see the module docs).
pub struct SpillingCounter {
    table: WordCounts,
    /// Estimated heap bytes of the map's keys.
    key_bytes: usize,
    /// The map's share of the budget.
    limit: usize,
    spill_dir: Option<PathBuf>,
    dir: Option<TempDir>,
    runs: Vec<PathBuf>,
    next_run: usize,
}

impl SpillingCounter {
    pub fn new(budget: &Budget) -> Self {
        SpillingCounter {
            table: WordCounts::default(),
            key_bytes: 0,
            limit: usize::try_from(budget.max_memory / TABLE_SHARE).unwrap_or(usize::MAX),
            spill_dir: budget.spill_dir.clone(),
            dir: None,
            runs: Vec::new(),
            next_run: 0,
        }
    }

    /// The estimated bytes the counting map holds now.
    pub fn estimated_bytes(&self) -> usize {
        map_bytes(self.table.capacity()) + self.key_bytes
    }

    /// How many runs were written so far (merges of runs included).
    pub fn runs_written(&self) -> usize {
        self.next_run
    }

    /// Adds `n` occurrences of `word`.
    pub fn add(&mut self, word: &str, n: u64) -> Result<()> {
        match self.table.get_mut(word) {
            Some(c) => *c = c.saturating_add(n),
            None => return self.insert(word.to_owned(), n),
        }
        Ok(())
    }

    /// Adds every count of `counts` (moving the words).
    pub fn add_counts(&mut self, counts: WordCounts) -> Result<()> {
        for (word, n) in counts {
            match self.table.get_mut(&word) {
                Some(c) => *c = c.saturating_add(n),
                None => self.insert(word, n)?,
            }
        }
        Ok(())
    }

    fn insert(&mut self, word: String, n: u64) -> Result<()> {
        self.key_bytes += string_bytes(word.len());
        self.table.insert(word, n);
        if self.estimated_bytes() > self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the map's entries, sorted by word bytes, to a new run and drops the map.
    fn spill(&mut self) -> Result<()> {
        let table = std::mem::take(&mut self.table);
        self.key_bytes = 0;
        if table.is_empty() {
            return Ok(());
        }
        let mut entries: Vec<(&String, &u64)> = table.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let (path, mut out) = self.new_run()?;
        for (word, &n) in entries {
            write_record(&mut out, word.as_bytes(), n).map_err(|e| Error::io(&path, e))?;
        }
        out.flush().map_err(|e| Error::io(&path, e))?;
        self.runs.push(path);
        if self.runs.len() >= MAX_RUNS {
            self.merge_runs_to_one()?;
        }
        Ok(())
    }

    fn new_run(&mut self) -> Result<(PathBuf, BufWriter<File>)> {
        if self.dir.is_none() {
            let mut builder = tempfile::Builder::new();
            builder.prefix("tokenmill-counts-");
            let dir = match &self.spill_dir {
                Some(folder) => builder.tempdir_in(folder).map_err(|e| Error::io(folder, e))?,
                None => builder.tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?,
            };
            self.dir = Some(dir);
        }
        let folder = self.dir.as_ref().map(|d| d.path()).unwrap_or(Path::new("."));
        let path = folder.join(format!("run-{:06}", self.next_run));
        self.next_run += 1;
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok((path, BufWriter::with_capacity(RUN_BUFFER, file)))
    }

    /// Merges every run into one new run (and removes them).
    fn merge_runs_to_one(&mut self) -> Result<()> {
        let runs = std::mem::take(&mut self.runs);
        let (path, mut out) = self.new_run()?;
        merge_runs(&runs, |word, n| {
            write_record(&mut out, word.as_bytes(), n).map_err(|e| Error::io(&path, e))
        })?;
        out.flush().map_err(|e| Error::io(&path, e))?;
        for run in &runs {
            std::fs::remove_file(run).map_err(|e| Error::io(run, e))?;
        }
        self.runs.push(path);
        Ok(())
    }

    /// The exact totals. Removes the runs.
    pub fn finish(mut self) -> Result<CountTable> {
        if self.runs.is_empty() {
            return Ok(CountTable::from_map(std::mem::take(&mut self.table)));
        }
        self.spill()?;
        // Two passes over the runs: the first sizes the table exactly, so that the second fills
        // it without growing vectors by doubling (up to three times the table's size at once).
        let (mut words, mut text) = (0usize, 0usize);
        merge_runs(&self.runs, |word, _| {
            words += 1;
            text += word.len();
            Ok(())
        })?;
        let mut table = TableBuilder::with_capacity(words, text);
        merge_runs(&self.runs, |word, n| {
            table.push(word, n);
            Ok(())
        })?;
        Ok(table.finish())
    }
}

/// Merges sorted runs k-way, handing each distinct word and its total to `emit` in byte order.
fn merge_runs(runs: &[PathBuf], mut emit: impl FnMut(&str, u64) -> Result<()>) -> Result<()> {
    let mut readers = runs.iter().map(|p| RunReader::open(p)).collect::<Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, reader) in readers.iter_mut().enumerate() {
        if let Some((word, n)) = reader.next()? {
            heap.push(Reverse((word, i, n)));
        }
    }
    let mut current: Option<(String, u64)> = None;
    while let Some(Reverse((word, i, n))) = heap.pop() {
        if let Some(next) = readers[i].next()? {
            heap.push(Reverse((next.0, i, next.1)));
        }
        match &mut current {
            Some((w, total)) if *w == word => *total = total.saturating_add(n),
            _ => {
                if let Some((w, total)) = current.replace((word, n)) {
                    emit(&w, total)?;
                }
            }
        }
    }
    if let Some((w, total)) = current {
        emit(&w, total)?;
    }
    Ok(())
}

fn write_varint(out: &mut impl Write, mut v: u64) -> std::io::Result<()> {
    let mut buf = [0u8; 10];
    let mut i = 0;
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            buf[i] = byte;
            i += 1;
            break;
        }
        buf[i] = byte | 0x80;
        i += 1;
    }
    out.write_all(&buf[..i])
}

fn write_record(out: &mut impl Write, word: &[u8], n: u64) -> std::io::Result<()> {
    write_varint(out, word.len() as u64)?;
    out.write_all(word)?;
    write_varint(out, n)
}

/// Reads a varint from `next_byte`; None at a clean end (no byte at all).
fn read_varint(mut next_byte: impl FnMut() -> std::io::Result<Option<u8>>) -> Result<Option<u64>> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(byte) = next_byte().map_err(|e| Error::Other(e.to_string()))? else {
            return if shift == 0 {
                Ok(None)
            } else {
                Err(Error::Other("truncated number".into()))
            };
        };
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err(Error::Other("number longer than 64 bits".into()))
}

/// Reads the records of one run.
struct RunReader {
    path: PathBuf,
    input: BufReader<File>,
}

impl RunReader {
    fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(RunReader { path: path.to_owned(), input: BufReader::with_capacity(RUN_BUFFER, file) })
    }

    fn next(&mut self) -> Result<Option<(String, u64)>> {
        let located = |e: Error| Error::Other(format!("{}: {e}", self.path.display()));
        let input = &mut self.input;
        let byte = |input: &mut BufReader<File>| -> std::io::Result<Option<u8>> {
            let mut b = [0u8];
            Ok((input.read(&mut b)? == 1).then_some(b[0]))
        };
        let Some(len) = read_varint(|| byte(input)).map_err(located)? else { return Ok(None) };
        let mut word = vec![0u8; len as usize];
        input.read_exact(&mut word).map_err(|e| Error::io(&self.path, e))?;
        let n = read_varint(|| byte(input))
            .map_err(located)?
            .ok_or_else(|| Error::Other(format!("{}: truncated run", self.path.display())))?;
        let word = String::from_utf8(word)
            .map_err(|_| Error::Other(format!("{}: invalid UTF-8", self.path.display())))?;
        Ok(Some((word, n)))
    }
}

/// The first `n` bytes of `rest` (None if it has fewer), which then starts after them.
fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if rest.len() < n {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

/// FNV-1a, 64 bits: the saved file's checksum. Hand-written (a few lines) rather than a
/// dependency: it only has to catch truncation and corruption, not resist tampering.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Words, their end offsets in `text` and their counts, sorted by word bytes, distinct.
#[derive(Default, PartialEq, Eq)]
struct Flat {
    text: String,
    ends: Vec<u64>,
    counts: Vec<u64>,
}

/// Builds a [`CountTable`] from words pushed in increasing byte order (an equal word adds to
/// the last one).
#[derive(Default)]
struct TableBuilder(Flat);

impl TableBuilder {
    fn with_capacity(words: usize, text: usize) -> Self {
        let mut table = TableBuilder::default();
        table.0.text.reserve_exact(text);
        table.0.ends.reserve_exact(words);
        table.0.counts.reserve_exact(words);
        table
    }

    fn last_word(&self) -> Option<&str> {
        let flat = &self.0;
        let n = flat.ends.len();
        let start = match n {
            0 => return None,
            1 => 0,
            _ => flat.ends[n - 2] as usize,
        };
        Some(&flat.text[start..])
    }

    fn push(&mut self, word: &str, n: u64) {
        if self.last_word() == Some(word) {
            let last = self.0.counts.last_mut().expect("a last word");
            *last = last.saturating_add(n);
            return;
        }
        debug_assert!(self.last_word().is_none_or(|last| last.as_bytes() < word.as_bytes()));
        let flat = &mut self.0;
        flat.text.push_str(word);
        flat.ends.push(flat.text.len() as u64);
        flat.counts.push(n);
    }

    fn finish(mut self) -> CountTable {
        self.0.text.shrink_to_fit();
        self.0.ends.shrink_to_fit();
        self.0.counts.shrink_to_fit();
        CountTable(Arc::new(self.0))
    }
}

/// Word counts, compact and sorted by word bytes (see the module docs). Cloning shares them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CountTable(Arc<Flat>);

/// What a saved counts file starts with.
pub const FILE_MAGIC: &[u8; 8] = b"TMWCOUNT";
/// The version of the saved format [`CountTable::save`] writes.
pub const FILE_VERSION: u32 = 1;

impl CountTable {
    /// The number of distinct words.
    pub fn len(&self) -> usize {
        self.0.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.counts.is_empty()
    }

    /// The `i`-th word in byte order.
    pub fn word(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.0.ends[i - 1] as usize };
        &self.0.text[start..self.0.ends[i] as usize]
    }

    /// The `i`-th word's count.
    pub fn count(&self, i: usize) -> u64 {
        self.0.counts[i]
    }

    /// Every word and its count, in byte order of the words.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, u64)> + Clone + '_ {
        (0..self.len()).map(|i| (self.word(i), self.count(i)))
    }

    /// The words in byte order.
    pub fn words(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        (0..self.len()).map(|i| self.word(i))
    }

    /// The count of `word` (None when it was not seen).
    pub fn get(&self, word: &str) -> Option<u64> {
        let i = self.position(word).ok()?;
        Some(self.count(i))
    }

    fn position(&self, word: &str) -> std::result::Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.word(mid).as_bytes().cmp(word.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The sum of the counts (saturating).
    pub fn total(&self) -> u64 {
        self.0.counts.iter().fold(0u64, |a, &n| a.saturating_add(n))
    }

    /// The bytes of the words' text.
    pub fn text_bytes(&self) -> usize {
        self.0.text.len()
    }

    /// The heap bytes the table holds.
    pub fn heap_bytes(&self) -> usize {
        self.0.text.capacity() + 8 * (self.0.ends.capacity() + self.0.counts.capacity())
    }

    /// The table of a hash map's counts.
    pub fn from_map(map: WordCounts) -> Self {
        let mut entries: Vec<(&String, &u64)> = map.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let text = entries.iter().map(|e| e.0.len()).sum();
        let mut table = TableBuilder::with_capacity(entries.len(), text);
        for (word, &n) in entries {
            table.push(word, n);
        }
        table.finish()
    }

    /// The exact sum of two tables (counts of equal words added, saturating).
    pub fn merge(&self, other: &CountTable) -> CountTable {
        let mut table = TableBuilder::default();
        let (mut a, mut b) = (self.iter().peekable(), other.iter().peekable());
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x.0.as_bytes() <= y.0.as_bytes(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (word, n) = if take_a { a.next() } else { b.next() }.expect("peeked");
            table.push(word, n);
        }
        table.finish()
    }

    /// The table in the saved format: [`FILE_MAGIC`], the version (u32 little-endian), the
    /// number of words (u64 LE), the records (varint length, UTF-8 bytes, varint count) in
    /// strictly increasing byte order, and the FNV-1a 64-bit hash of everything before it (u64
    /// LE).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text_bytes() + 4 * self.len() + 32);
        out.extend_from_slice(FILE_MAGIC);
        out.extend_from_slice(&FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        for (word, n) in self.iter() {
            write_record(&mut out, word.as_bytes(), n).expect("writing to memory");
        }
        let hash = fnv1a(&out);
        out.extend_from_slice(&hash.to_le_bytes());
        out
    }

    /// Reads the saved format; errors name `source` (a file, or "pickled counts").
    pub fn from_bytes(bytes: &[u8], source: &Path) -> Result<Self> {
        let bad = |message: String| Error::Format {
            path: Some(source.to_owned()),
            line: None,
            byte_offset: None,
            message: format!("not a valid tokenmill word-counts file: {message}"),
        };
        let header = FILE_MAGIC.len() + 12;
        if bytes.len() < header + 8 || &bytes[..FILE_MAGIC.len()] != FILE_MAGIC {
            return Err(bad("it does not start with the TMWCOUNT header".into()));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if version != FILE_VERSION {
            return Err(bad(format!("version {version}, this tokenmill reads {FILE_VERSION}")));
        }
        let (body, hash) = bytes.split_at(bytes.len() - 8);
        if fnv1a(body).to_le_bytes() != hash {
            return Err(bad("the checksum does not match (truncated or corrupt)".into()));
        }
        let words = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let mut rest = &body[header..];
        let mut table = TableBuilder::default();
        for i in 0..words {
            let varint = |rest: &mut &[u8], what: &str| {
                read_varint(|| Ok(take(rest, 1).map(|b| b[0])))
                    .map_err(|e| bad(format!("word {i}: {what}: {e}")))?
                    .ok_or_else(|| bad(format!("word {i}: {what} missing")))
            };
            let len = varint(&mut rest, "length")?;
            let word = usize::try_from(len)
                .ok()
                .and_then(|len| take(&mut rest, len))
                .ok_or_else(|| bad(format!("word {i} runs past the end")))?;
            let word =
                std::str::from_utf8(word).map_err(|_| bad(format!("word {i} is not UTF-8")))?;
            let n = varint(&mut rest, "count")?;
            if table.last_word().is_some_and(|last| last.as_bytes() >= word.as_bytes()) {
                return Err(bad(format!("word {i} is out of order")));
            }
            table.push(word, n);
        }
        if !rest.is_empty() {
            return Err(bad(format!("{} bytes after the last word", rest.len())));
        }
        Ok(table.finish())
    }

    /// Saves the table atomically, with the umask's permissions (see [`to_bytes`](Self::to_bytes)
    /// for the format).
    pub fn save(&self, path: &Path) -> Result<()> {
        crate::utils::atomic::write_atomic(path, &self.to_bytes())
    }

    /// Loads a table [`save`](Self::save)d; a file of another kind, corrupt or truncated, is an
    /// error naming it.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes, path)
    }
}

impl std::fmt::Debug for CountTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter().take(20)).finish()
    }
}

impl FromIterator<(String, u64)> for CountTable {
    /// Counts of equal words are added.
    fn from_iter<T: IntoIterator<Item = (String, u64)>>(iter: T) -> Self {
        let mut map = WordCounts::default();
        for (word, n) in iter {
            let c = map.entry(word).or_insert(0);
            *c = c.saturating_add(n);
        }
        CountTable::from_map(map)
    }
}

impl<'a> FromIterator<(&'a str, u64)> for CountTable {
    fn from_iter<T: IntoIterator<Item = (&'a str, u64)>>(iter: T) -> Self {
        iter.into_iter().map(|(w, n)| (w.to_owned(), n)).collect()
    }
}

/// Serialized as a map word → count (what `tokenizers` writes for a trainer's `words`), in byte
/// order of the words.
impl Serialize for CountTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (word, n) in self.iter() {
            map.serialize_entry(word, &n)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for CountTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Counts;
        impl<'de> Visitor<'de> for Counts {
            type Value = CountTable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of words to counts")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> std::result::Result<CountTable, A::Error> {
                let mut map = WordCounts::default();
                while let Some((word, n)) = access.next_entry::<String, u64>()? {
                    let c = map.entry(word).or_insert(0);
                    *c = c.saturating_add(n);
                }
                Ok(CountTable::from_map(map))
            }
        }
        deserializer.deserialize_map(Counts)
    }
}

#[cfg(test)]
mod tests {
    use super::super::word_counts::{count_words, count_words_within};
    use super::*;

    /// Words of many kinds: repeated, unique, multi-byte, empty-adjacent.
    fn corpus() -> Vec<Result<String>> {
        (0..20_000u64)
            .map(|i| Ok(format!("w{} é{} common {} 中{}", i % 997, i % 13, i * 7919 % 5003, i)))
            .collect()
    }

    fn split(s: &str, emit: &mut dyn FnMut(&str)) -> Result<()> {
        s.split(' ').for_each(emit);
        Ok(())
    }

    #[test]
    fn a_tiny_budget_spills_many_runs_and_counts_exactly() {
        let plain = CountTable::from_map(count_words(corpus().into_iter(), split, |_| {}).unwrap());
        let folder = tempfile::tempdir().unwrap();
        let budget = Budget { max_memory: 64 << 10, spill_dir: Some(folder.path().into()) };
        let mut counter = SpillingCounter::new(&budget);
        for item in corpus() {
            split(&item.unwrap(), &mut |w| counter.add(w, 1).unwrap()).unwrap();
        }
        assert!(counter.runs_written() > MAX_RUNS, "{} runs", counter.runs_written());
        assert_eq!(counter.finish().unwrap(), plain);
        let spilled = count_words_within(corpus().into_iter(), split, |_| {}, &budget).unwrap();
        assert_eq!(spilled, plain);
        assert_eq!(plain.get("common"), Some(20_000));
        // Runs are removed on success.
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0);
        // ... and when counting fails.
        let mut failing = corpus();
        failing.push(Err(Error::Other("boom".into())));
        assert!(count_words_within(failing.into_iter(), split, |_| {}, &budget).is_err());
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0);
    }

    #[test]
    fn merge_saves_loads_and_rejects_corrupt_files() {
        let a: CountTable = [("b", 2), ("a", 1), ("é", u64::MAX)].into_iter().collect();
        let b: CountTable = [("c", 5), ("a", 4), ("é", 1)].into_iter().collect();
        let sum = a.merge(&b);
        let words: Vec<_> = sum.iter().collect();
        assert_eq!(words, [("a", 5), ("b", 2), ("c", 5), ("é", u64::MAX)]);
        assert_eq!(sum.total(), u64::MAX);
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("counts.bin");
        sum.save(&path).unwrap();
        assert_eq!(CountTable::load(&path).unwrap(), sum);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[22] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let err = CountTable::load(&path).unwrap_err().to_string();
        assert!(err.contains("counts.bin") && err.contains("checksum"), "{err}");
        std::fs::write(&path, b"not counts").unwrap();
        assert!(CountTable::load(&path).unwrap_err().to_string().contains("header"));
    }

    #[test]
    fn memory_sizes_parse() {
        assert_eq!(parse_memory("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_memory("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_memory("1.5 gb").unwrap(), 1_500_000_000);
        assert_eq!(parse_memory("4096").unwrap(), 4096);
        for bad in ["", "GB", "-1GB", "2XB", "0"] {
            assert!(parse_memory(bad).is_err(), "{bad}");
        }
    }
}
