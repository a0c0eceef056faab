//! The input files of a training (`spec.input`): text one sentence per line, or tsv
//! `sentence<TAB>count`, read as a stream of sentences.
//!
//! May import the trainer interface (`super`), `sentencepiece::proto` and `error`.
use std::io::BufRead;

use super::check_sentence_memory;
use crate::error::{Error, Result};
use crate::sentencepiece::proto::TrainerSpec;

/// The training sentences of `spec.input`, read one line at a time (line ends and a `\r`
/// before them removed; invalid UTF-8 becomes U+FFFD, as in sentencepiece's reading). The `tsv`
/// format gives `sentence<TAB>count` and repeats the sentence count times.
pub fn read_inputs(spec: &TrainerSpec) -> impl Iterator<Item = Result<String>> + '_ {
    let tsv = spec.input_format.as_deref() == Some("tsv");
    spec.input.iter().flat_map(move |path| -> Box<dyn Iterator<Item = Result<String>>> {
        let file = match std::fs::File::open(path) {
            Ok(f) => std::io::BufReader::with_capacity(1 << 20, f),
            Err(e) => return Box::new(std::iter::once(Err(Error::io(path, e)))),
        };
        let lines = file.split(b'\n').enumerate().map(move |(n, line)| {
            let mut line = line.map_err(|e| Error::io(path, e))?;
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8(line)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            check_sentence_memory(spec, line.len())
                .map_err(|e| Error::InvalidArgument(format!("{path}, line {}: {e}", n + 1)))?;
            Ok((n + 1, line))
        });
        if !tsv {
            return Box::new(lines.map(|l| l.map(|(_, line)| line)));
        }
        Box::new(lines.flat_map(move |item| -> Box<dyn Iterator<Item = Result<String>>> {
            match item.and_then(|(n, line)| tsv_entry(path, n, &line)) {
                Ok((sentence, count)) => {
                    Box::new(std::iter::repeat_n(sentence, count.min(1 << 20) as usize).map(Ok))
                }
                Err(e) => Box::new(std::iter::once(Err(e))),
            }
        }))
    })
}

/// One `sentence<TAB>count` line of a tsv input.
fn tsv_entry(path: &str, line_number: usize, line: &str) -> Result<(String, u64)> {
    let format = |message: &str| Error::Format {
        path: Some(path.into()),
        line: Some(line_number),
        byte_offset: None,
        message: message.into(),
    };
    let (sentence, count) =
        line.split_once('\t').ok_or_else(|| format("Input format must be: word <tab> freq."))?;
    let count: u64 = count.trim().parse().map_err(|_| format("Could not parse the frequency"))?;
    Ok((sentence.to_string(), count))
}

#[cfg(test)]
mod input_tests {
    use super::*;
    use std::io::Write;

    fn read(bytes: &[u8], format: Option<&str>) -> Vec<Result<String>> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        let spec = TrainerSpec {
            input: vec![f.path().to_string_lossy().into_owned()],
            input_format: format.map(String::from),
            ..Default::default()
        };
        read_inputs(&spec).collect()
    }

    #[test]
    fn lines_stream_without_ends_and_bad_utf8_becomes_replacement_characters() {
        let lines: Vec<String> =
            read(b"one\r\ntwo\nth\xffree\n\nlast", None).into_iter().map(|l| l.unwrap()).collect();
        assert_eq!(lines, ["one", "two", "th\u{FFFD}ree", "", "last"]);
    }

    #[test]
    fn tsv_repeats_sentences_and_bad_lines_are_located() {
        let lines: Vec<String> =
            read(b"ab\t2\ncd\t1\n", Some("tsv")).into_iter().map(|l| l.unwrap()).collect();
        assert_eq!(lines, ["ab", "ab", "cd"]);
        let bad = read(b"ab\t2\ncd\tx\n", Some("tsv"));
        assert!(matches!(bad.last(), Some(Err(Error::Format { line: Some(2), .. }))), "{bad:?}");
        let spec =
            TrainerSpec { input: vec!["/nonexistent/corpus.txt".into()], ..Default::default() };
        assert!(matches!(read_inputs(&spec).next(), Some(Err(Error::Io { .. }))));
    }
}
