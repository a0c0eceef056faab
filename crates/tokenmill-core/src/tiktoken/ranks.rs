//! `.tiktoken` rank files: one token per line, `base64(token bytes) rank`, in rank order.
use std::io::Write;
use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use rustc_hash::FxHashMap;

use super::bpe::Rank;
use crate::error::{Error, Result};
use crate::utils::atomic::write_atomic_with;

/// Token bytes → rank.
pub type Ranks = FxHashMap<Vec<u8>, Rank>;

/// Reads a `.tiktoken` file. Malformed lines raise `Error::Format` naming the file and line.
pub fn load_tiktoken_bpe(path: impl AsRef<Path>) -> Result<Ranks> {
    let path = path.as_ref();
    let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse_tiktoken_bpe(&data).map_err(|e| e.in_file(path))
}

/// Parses the content of a `.tiktoken` file. Lines are split on `\n` (a trailing `\r` is
/// dropped); blank lines are skipped, as tiktoken does. A token or rank that appears twice is
/// an error, since it would make encoding or decoding ambiguous.
pub fn parse_tiktoken_bpe(data: &[u8]) -> Result<Ranks> {
    let mut ranks = Ranks::default();
    ranks.reserve(data.len() / 12);
    let mut seen_ranks: FxHashMap<Rank, usize> = FxHashMap::default();
    let mut offset = 0;
    for (index, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line_start = offset;
        offset += raw.len() + 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |message: String| Error::Format {
            path: None,
            line: Some(index + 1),
            byte_offset: Some(line_start),
            message,
        };
        let mut fields = line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty());
        let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(format!(
                "expected `<base64 token> <rank>`, got {:?}",
                String::from_utf8_lossy(line)
            )));
        };
        let token = BASE64.decode(token).map_err(|e| {
            bad(format!("token {:?} is not valid base64: {e}", String::from_utf8_lossy(token)))
        })?;
        let rank: Rank =
            std::str::from_utf8(rank).ok().and_then(|r| r.parse().ok()).ok_or_else(|| {
                bad(format!(
                    "rank {:?} is not an integer in 0..{}",
                    String::from_utf8_lossy(rank),
                    Rank::MAX
                ))
            })?;
        if let Some(first) = seen_ranks.insert(rank, index + 1) {
            return Err(bad(format!("rank {rank} was already given on line {first}")));
        }
        if ranks.insert(token.clone(), rank).is_some() {
            return Err(bad(format!("token {:?} appears twice", String::from_utf8_lossy(&token))));
        }
    }
    Ok(ranks)
}

/// Writes `ranks` in `.tiktoken` format, in rank order.
pub fn write_tiktoken_bpe(ranks: &Ranks, out: &mut impl Write) -> std::io::Result<()> {
    let mut sorted: Vec<(&Vec<u8>, &Rank)> = ranks.iter().collect();
    sorted.sort_unstable_by_key(|&(_, &rank)| rank);
    let mut w = std::io::BufWriter::new(out);
    for (token, rank) in sorted {
        writeln!(w, "{} {rank}", BASE64.encode(token))?;
    }
    w.flush()
}

/// Writes a `.tiktoken` file atomically, with the umask's permissions ([`write_atomic_with`]).
pub fn dump_tiktoken_bpe(ranks: &Ranks, path: impl AsRef<Path>) -> Result<()> {
    write_atomic_with(path.as_ref(), |f| write_tiktoken_bpe(ranks, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_a_file() {
        let ranks: Ranks =
            [(b"a".to_vec(), 0), (b"b".to_vec(), 1), (b" ab\n".to_vec(), 2)].into_iter().collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.tiktoken");
        dump_tiktoken_bpe(&ranks, &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "YQ== 0\nYg== 1\nIGFiCg== 2\n");
        assert_eq!(load_tiktoken_bpe(&path).unwrap(), ranks);
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        for (content, needle) in [
            ("YQ== 0\nYg==\n", "line 2"),
            ("YQ== 0\n\n!!! 1\n", "line 3"),
            ("YQ== zero\n", "line 1"),
            ("YQ== 0\nYg== 0\n", "already given on line 1"),
            ("YQ== 0\nYQ== 1\n", "appears twice"),
            ("YQ== 0 extra\n", "line 1"),
        ] {
            let path = dir.path().join("bad.tiktoken");
            std::fs::write(&path, content).unwrap();
            let err = load_tiktoken_bpe(&path).unwrap_err().to_string();
            assert!(err.contains("bad.tiktoken") && err.contains(needle), "{err}");
        }
        let missing = load_tiktoken_bpe(dir.path().join("missing.tiktoken")).unwrap_err();
        assert!(matches!(missing, Error::Io { .. }));
    }
}
