//! What the pipeline needs in memory for one text, checked before it is built: the sizes of a
//! text's `NormalizedString`, of its `Encoding` and of a model's working tables grow with the
//! text (or the word), so an input too long for the memory there is would abort the process on
//! a refused allocation. One check per text (and per word before the model), with
//! `utils::can_allocate` (free below 64 MB), turns that into an error naming the size.

use crate::error::{Error, Result};

// The sizes below are what the address space grows by, measured (`VmPeak`) on the costliest
// input: one long word of one letter, about one token in two bytes with a small vocabulary.
// Address space, not resident memory, is what a limit (`RLIMIT_AS`) refuses: vectors grow by
// doubling and copying, and the allocator keeps freed address space for reuse; it is 1.5–2.5
// times the resident peak.

/// Bytes per byte of text that normalizing and pre-tokenizing take (measured: 60 bytes a byte;
/// the text twice and a 16-byte alignment per byte in the `NormalizedString`, then the
/// pre-tokenizer's pieces of it).
pub(crate) const PIPELINE_BYTES_PER_BYTE: usize = 80;

/// Bytes per byte of text of an `Encoding` and the tokens it is built from, beyond the pipeline
/// (measured: encode takes 253–269 bytes a byte in all; each token has an id, type id, text,
/// word, offsets and masks).
pub(crate) const ENCODING_BYTES_PER_BYTE: usize = 224;

/// Bytes per byte of text that ids without an `Encoding` take beyond the pipeline (measured:
/// 127 bytes a byte in all).
pub(crate) const IDS_BYTES_PER_BYTE: usize = 64;

/// Bytes per byte of one word that a model takes to tokenize it (BPE's symbols: 40 bytes a
/// byte, Unigram's lattice: 24), with the tokens it returns.
pub(crate) const MODEL_BYTES_PER_BYTE: usize = 64;

/// Bytes per byte of text that training's direct cut (`trainers::direct`) holds: copies of the
/// words (measured: 4 bytes a byte resident, less new address space).
pub(crate) const DIRECT_FEED_BYTES_PER_BYTE: usize = 8;

/// Fails (an error saying so) unless `bytes` bytes of text, taking `per_byte` bytes of memory
/// a byte, can be had to `doing`.
pub(crate) fn check_text(bytes: usize, per_byte: usize, doing: &str) -> Result<()> {
    let need = bytes.saturating_mul(per_byte);
    if crate::utils::can_allocate(need) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "a text of {bytes} bytes needs about {need} bytes of memory to {doing}, more than can be \
            allocated: split it into shorter texts"
    )))
}

/// [`check_text`] for one word before the model tokenizes it.
#[inline]
pub(crate) fn check_word(word: &str) -> Result<()> {
    check_text(word.len(), MODEL_BYTES_PER_BYTE, "tokenize it as one word")
}

/// `error` with `location` (a file and line, an input's index) in front of its message.
pub(crate) fn locate(error: Error, location: impl std::fmt::Display) -> Error {
    match error {
        Error::InvalidArgument(message) => Error::InvalidArgument(format!("{location}: {message}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_sizes_are_errors_naming_the_text() {
        assert!(check_text(1 << 20, PIPELINE_BYTES_PER_BYTE, "encode it").is_ok());
        let e = check_text(usize::MAX / 2, 4, "encode it").unwrap_err();
        let message = locate(e, "line 3").to_string();
        assert!(message.starts_with("line 3: a text of "), "{message}");
        assert!(message.contains("more than can be allocated"), "{message}");
    }
}
