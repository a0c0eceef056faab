//! Reading training files: line by line, keeping line ends (like `tokenizers`' `train(files)`,
//! whose pre-tokenizers see the `\n`), streamed, with invalid UTF-8 reported by file, line and
//! byte offset.
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Total size in bytes of `paths` (for progress bars); fails on the first unreadable file.
pub fn total_size(paths: &[PathBuf]) -> Result<u64> {
    paths.iter().try_fold(0u64, |acc, p| {
        let meta = std::fs::metadata(p).map_err(|e| Error::io(p, e))?;
        Ok(acc + meta.len())
    })
}

/// The lines of every file in turn, each with its line end.
pub fn file_lines(paths: Vec<PathBuf>) -> impl Iterator<Item = Result<String>> {
    paths.into_iter().flat_map(|path| -> Box<dyn Iterator<Item = Result<String>>> {
        match FileLines::open(&path) {
            Ok(lines) => Box::new(lines),
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
        })
    }
}

impl Iterator for FileLines {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Result<String>> {
        if self.done {
            return None;
        }
        let mut buf = Vec::new();
        match self.reader.read_until(b'\n', &mut buf) {
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(n) => {
                self.line += 1;
                let start = self.offset;
                self.offset += n;
                match String::from_utf8(buf) {
                    Ok(s) => Some(Ok(s)),
                    Err(e) => {
                        self.done = true;
                        let bad = e.utf8_error().valid_up_to();
                        Some(Err(Error::Utf8 {
                            path: Some(self.path.clone()),
                            line: Some(self.line),
                            byte_offset: start + bad,
                        }))
                    }
                }
            }
            Err(e) => {
                self.done = true;
                Some(Err(Error::io(&self.path, e)))
            }
        }
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
