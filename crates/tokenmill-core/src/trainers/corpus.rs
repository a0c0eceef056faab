//! Reading training files: line by line, keeping line ends (like `tokenizers`' `train(files)`,
//! whose pre-tokenizers see the `\n`), streamed, with invalid UTF-8 reported by file, line and
//! byte offset, and a line too long for the memory there is by file and line (never an abort).
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::tokenizer::memory;

/// Total size in bytes of `paths` (for progress bars); fails on the first unreadable file.
pub fn total_size(paths: &[PathBuf]) -> Result<u64> {
    paths.iter().try_fold(0u64, |acc, p| {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        Ok(acc + meta.len())
    })
}

/// The lines of every file in turn, each with its line end.
pub fn file_lines(paths: Vec<PathBuf>) -> impl Iterator<Item = Result<String>> {
    file_lines_within(paths, 1)
}

/// [`file_lines`] for a use that takes `per_byte` bytes of memory a byte of a line: a line for
/// which that memory cannot be had is an error naming its file and line (see
/// `tokenizer::memory`).
pub fn file_lines_within(
    paths: Vec<PathBuf>,
    per_byte: usize,
) -> impl Iterator<Item = Result<String>> {
    paths.into_iter().flat_map(move |path| -> Box<dyn Iterator<Item = Result<String>>> {
        match FileLines::open(&path) {
            Ok(lines) => Box::new(FileLines { per_byte, ..lines }),
            Err(e) => Box::new(std::iter::once(Err(e))),
        }
    })
}

/// Lines of one file, each with its line end; stops after the first error.
pub struct FileLines {
    path: PathBuf,
    reader: BufReader<File>,
    line: usize,
    offset: usize,
    done: bool,
    /// Bytes of memory a byte of a line will take (checked before a line is handed out).
    per_byte: usize,
}

impl FileLines {
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(FileLines {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 20, file),
            line: 0,
            offset: 0,
            done: false,
            per_byte: 1,
        })
    }
}

/// Reads through the next `\n` (included) into `buf`, growing it fallibly: `Ok(false)` when the
/// line does not fit in memory (what `BufRead::read_until` would abort on).
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (take, end) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), available.is_empty()),
        };
        if buf.try_reserve(take).is_err() {
            return Ok(false);
        }
        buf.extend_from_slice(&available[..take]);
        reader.consume(take);
        if end {
            return Ok(true);
        }
    }
}

impl Iterator for FileLines {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Result<String>> {
        if self.done {
            return None;
        }
        let mut buf = Vec::new();
        let read = read_line(&mut self.reader, &mut buf);
        if matches!(read, Ok(true)) && buf.is_empty() {
            self.done = true;
            return None;
        }
        self.line += 1;
        let start = self.offset;
        self.offset += buf.len();
        let item = match read {
            Ok(true) => String::from_utf8(buf).map_err(|e| Error::Utf8 {
                path: Some(self.path.clone()),
                line: Some(self.line),
                byte_offset: start + e.utf8_error().valid_up_to(),
            }),
            Ok(false) => Err(Error::InvalidArgument(format!(
                "a line of more than {} bytes, more than can be allocated: split it into \
                    shorter lines",
                buf.len()
            ))),
            Err(e) => Err(Error::io(&self.path, e)),
        };
        let item = item.and_then(|line| {
            let check = memory::check_text(line.len(), self.per_byte, "cut it into words");
            check.map(|()| line)
        });
        if item.is_err() {
            self.done = true;
        }
        let location = format!("{}, line {}", self.path.display(), self.line);
        Some(item.map_err(|e| memory::locate(e, location)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn lines_keep_ends_and_bad_utf8_is_located() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"one\ntwo\r\nth\xffree\nfour").unwrap();
        let lines: Vec<_> = file_lines(vec![f.path().to_path_buf()]).collect();
        assert_eq!(lines[0].as_ref().unwrap(), "one\n");
        assert_eq!(lines[1].as_ref().unwrap(), "two\r\n");
        match &lines[2] {
            Err(Error::Utf8 { line, byte_offset, .. }) => {
                assert_eq!(*line, Some(3));
                assert_eq!(*byte_offset, 11);
            }
            other => panic!("expected a UTF-8 error, got {other:?}"),
        }
        assert_eq!(lines.len(), 3);
    }
}
