//! One error type for the whole core. Bindings map each variant to a Python exception.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is malformed; `line` is 1-based, `byte_offset` 0-based, where known.
    #[error("{}", format_location(path, *line, *byte_offset, message))]
    Format {
        path: Option<PathBuf>,
        line: Option<usize>,
        byte_offset: Option<usize>,
        message: String,
    },
    /// Bytes that must be UTF-8 are not.
    #[error("{}", format_location(path, *line, Some(*byte_offset), "invalid UTF-8"))]
    Utf8 { path: Option<PathBuf>, line: Option<usize>, byte_offset: usize },
    /// A regular expression failed to compile.
    #[error("invalid regex {pattern:?}: {message}")]
    Regex { pattern: String, message: String },
    /// An id that the vocabulary does not have.
    #[error("unknown id {0}")]
    UnknownId(u32),
    /// A token that the vocabulary does not have (and no unk token to fall back to).
    #[error("unknown token {0:?}")]
    UnknownToken(String),
    /// Arguments that do not make sense together.
    #[error("{0}")]
    InvalidArgument(String),
    /// Anything else, with a message that says what went wrong.
    #[error("{0}")]
    Other(String),
}

pub type Result<T> = std::result::Result<T, Error>;

fn format_location(
    path: &Option<PathBuf>,
    line: Option<usize>,
    byte_offset: Option<usize>,
    message: &str,
) -> String {
    let mut s = String::new();
    if let Some(p) = path {
        s.push_str(&p.display().to_string());
    }
    if let Some(l) = line {
        s.push_str(&format!("{}line {}", if s.is_empty() { "" } else { ":" }, l));
    }
    if let Some(b) = byte_offset {
        s.push_str(&format!("{}byte offset {}", if s.is_empty() { "" } else { ", " }, b));
    }
    if s.is_empty() {
        message.to_string()
    } else {
        format!("{s}: {message}")
    }
}

impl Error {
    pub fn format(message: impl Into<String>) -> Self {
        Error::Format { path: None, line: None, byte_offset: None, message: message.into() }
    }
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    /// Attach a file path to a format error that does not name one yet.
    pub fn in_file(self, file: impl Into<PathBuf>) -> Self {
        match self {
            Error::Format { path: None, line, byte_offset, message } => {
                Error::Format { path: Some(file.into()), line, byte_offset, message }
            }
            Error::Utf8 { path: None, line, byte_offset } => {
                Error::Utf8 { path: Some(file.into()), line, byte_offset }
            }
            other => other,
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Format {
            path: None,
            line: Some(e.line()),
            byte_offset: None,
            message: format!("JSON: {e}"),
        }
    }
}
