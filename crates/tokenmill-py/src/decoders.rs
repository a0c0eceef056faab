//! `tokenmill.decoders`: the `Decoder` base class and its components, with the constructors,
//! attributes and `decode` of `tokenizers.decoders`.
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use tokenmill_core::decoders::{
    BPEDecoder, ByteFallback, ByteLevel, DecoderWrapper, Fuse, Metaspace, Replace, Strip,
    WordPiece, CTC,
};
use tokenmill_core::tokenizer::{DecodeStream, Decoder};

use crate::errors::ToPyResult;
use crate::normalizers::extract_replace_pattern;
use crate::properties::{component_classes, PyValue};
use crate::stage::stage_classes;
use crate::tokenizer::PyTokenizer;

/// Token lists at least this long are decoded with the GIL released.
const RELEASE_GIL_TOKENS: usize = 1024;

stage_classes! {
    /// Base class of all decoders. A decoder turns a list of tokens back into text.
    ///
    /// Not built directly: use one of the subclasses.
    ///
    /// The component is shared (see `shared.rs`): a decoder assigned to a Tokenizer is the same
    /// object there, so changing its attributes changes the tokenizer's decoder.
    base PyDecoder(DecoderWrapper), "tokenmill.decoders", "Decoder", "decoder",
        restore AnyKind;
    /// Decoders applied in order, each on the pieces the previous one produced.
    ///
    /// Args:
    ///     decoders (List[Decoder]): the decoders (copied, as in tokenizers).
    sequence PySequence(decoders), items Copied;
    subclasses {
        BPE, ByteLevel, WordPiece, Metaspace, CTC, Sequence, Replace, Fuse, Strip, ByteFallback
    }
    plain { Custom }
    also { PyDecodeStream }
    /// A decoder written in Python: ``decoder`` is any object with ``decode_chain(self,
    /// tokens) -> list[str]``; decoding joins its pieces. It runs with the GIL; a tokenizer
    /// holding it cannot be saved or pickled.
    custom(decoder) => crate::custom::custom_decoder;
    methods {
        /// Decodes a list of tokens into the final string.
        #[pyo3(signature = (tokens))]
        fn decode(&self, py: Python<'_>, tokens: Vec<String>) -> PyResult<String> {
            self.inner
                .with(|inner| {
                    if tokens.len() >= RELEASE_GIL_TOKENS {
                        py.allow_threads(|| inner.decode(tokens))
                    } else {
                        inner.decode(tokens)
                    }
                })
                .py()
        }
    }
}

component_classes! {
    #[pymethods] PyDecoder("tokenmill.decoders"), DecoderWrapper;

    /// Decodes byte-level BPE tokens (GPT-2's alphabet, ``Ġ`` for a space) back to text; byte
    /// sequences that are not valid UTF-8 become U+FFFD. To be used with the ``ByteLevel``
    /// pre-tokenizer. Takes no arguments (keyword arguments are accepted and ignored).
    PyByteLevel("ByteLevel"), ByteLevel(|d| d) {
        new(; **_kwargs) => ByteLevel::default();
    }

    /// Replaces every match of ``pattern`` in each token by ``content``.
    ///
    /// Args:
    ///     pattern (str or tokenmill.Regex): a str is matched literally.
    ///     content (str): the replacement.
    PyReplace("Replace"), Replace(|d| d) {
        new(pattern: &Bound<'_, PyAny>, content: String)
            => Replace::new(extract_replace_pattern(pattern)?, content).py()?;
        newargs(py) => ["", ""];
    }

    /// Decodes WordPiece tokens: tokens starting with ``prefix`` are glued to the previous one,
    /// others are separated by a space; ``cleanup`` removes the spaces BERT's tokenization puts
    /// before punctuation and in contractions (`` .`` → ``.``, `` n't`` → ``n't``, ...).
    ///
    /// Args:
    ///     prefix (str, default ``"##"``): the continuing-subword prefix.
    ///     cleanup (bool, default True): undo the tokenization spaces.
    PyWordPiece("WordPiece"), WordPiece(|d| d) {
        new(prefix: String = { String::from("##") }, cleanup: bool = true)
            => WordPiece::new(prefix, cleanup);
        fields {
            /// The continuing-subword prefix.
            prefix: String;
            /// Whether tokenization spaces are cleaned up.
            cleanup: bool;
        }
    }

    /// Turns runs of byte tokens ``<0x00>``..``<0xFF>`` (BPE ``byte_fallback``) back into the
    /// text they encode; a run that is not valid UTF-8 gives one U+FFFD per byte token.
    PyByteFallback("ByteFallback"), ByteFallback(|d| d) { new() => ByteFallback::new(); }

    /// Joins all tokens into one (useful before ``Strip`` in a ``Sequence``).
    PyFuse("Fuse"), Fuse(|d| d) { new() => Fuse::new(); }

    // (The line as a `#[doc]` attribute: as a comment it would pass 100 columns here.)
    #[doc = " Removes up to ``left`` leading and ``right`` trailing ``content`` characters from \
        each token."]
    ///
    /// Args:
    ///     content (str, default ``" "``): the character to strip (one character).
    ///     left (int, default 0): at most this many from the start.
    ///     right (int, default 0): at most this many from the end.
    PyStrip("Strip"), Strip(|d| d) {
        new(content: char = ' ', left: usize = 0, right: usize = 0)
            => Strip::new(content, left, right);
        fields {
            /// The character stripped.
            content: char;
            /// How many characters at most are stripped from the start.
            start: usize;
            /// How many characters at most are stripped from the end.
            stop: usize;
        }
    }

    /// Decodes SentencePiece-style tokens: ``replacement`` (``▁``) becomes a space; in the first
    /// token it is dropped instead unless ``prepend_scheme`` is ``"never"``.
    ///
    /// Args:
    ///     replacement (str, default ``"▁"``): the space stand-in (one character).
    ///     prepend_scheme (str, default ``"always"``): ``"always"``, ``"first"`` or ``"never"``,
    ///         as given to the Metaspace pre-tokenizer.
    ///     split (bool, default True): the pre-tokenizer's setting (stored, unused here).
    PyMetaspace("Metaspace"), Metaspace(|d| d) {
        new(
            replacement: char = '▁',
            prepend_scheme: String = { String::from("always") },
            split: bool = true,
        ) => Metaspace::new(replacement, PyValue::from_python(prepend_scheme)?, split);
        fields {
            /// ``"always"``, ``"first"`` or ``"never"``.
            prepend_scheme: String;
            /// The pre-tokenizer's ``split`` setting.
            split: bool;
        }
        accessors {
            /// The space stand-in.
            replacement: String => d.replacement().to_string(),
                |replacement: char| d.set_replacement(replacement);
        }
    }

    /// Decodes classic BPE tokens: the end-of-word ``suffix`` becomes a space (nothing at the end).
    ///
    /// Args:
    ///     suffix (str, default ``"</w>"``): the end-of-word suffix of the model.
    PyBPE("BPEDecoder"), BPE(|d| d) {
        new(suffix: String = { String::from("</w>") }) => BPEDecoder::new(suffix);
        fields {
            /// The end-of-word suffix.
            suffix: String;
        }
    }

    /// Decodes CTC (speech model) output: repeated tokens collapse to one, ``pad_token`` is
    /// dropped, ``word_delimiter_token`` becomes a space (with ``cleanup``, which also undoes the
    /// WordPiece-style tokenization spaces).
    ///
    /// Args:
    ///     pad_token (str, default ``"<pad>"``), word_delimiter_token (str, default ``"|"``),
    ///     cleanup (bool, default True).
    PyCTC("CTC"), CTC(|d| d) {
        new(
            pad_token: String = { String::from("<pad>") },
            word_delimiter_token: String = { String::from("|") },
            cleanup: bool = true,
        ) => CTC::new(pad_token, word_delimiter_token, cleanup);
        fields {
            /// The padding token (dropped).
            pad_token: String;
            /// The word delimiter token (becomes a space).
            word_delimiter_token: String;
            /// Whether tokenization spaces are cleaned up.
            cleanup: bool;
        }
    }
}

/// Incremental decoding for generation, as ``tokenizers.decoders.DecodeStream``: feed ids one
/// at a time (or a few) with :meth:`step`; it returns the text they complete as soon as it is
/// complete, or None while a character (a multi-byte UTF-8 character, a byte-fallback
/// ``<0xNN>`` run) is unfinished. The returned pieces concatenate to
/// ``tokenizer.decode(all_ids, skip_special_tokens)``.
///
/// Args:
///     ids (List[int], optional): ids generated before (the prompt); used as context only,
///         their text is not returned.
///     skip_special_tokens (bool, default False): leave special tokens out of the text.
#[pyclass(module = "tokenmill.decoders", name = "DecodeStream")]
#[derive(Clone)]
pub struct PyDecodeStream {
    stream: DecodeStream,
    skip_special_tokens: bool,
}

#[pymethods]
impl PyDecodeStream {
    #[new]
    #[pyo3(signature = (ids = None, skip_special_tokens = false))]
    fn new(ids: Option<Vec<u32>>, skip_special_tokens: bool) -> Self {
        PyDecodeStream { stream: DecodeStream::new(ids.unwrap_or_default()), skip_special_tokens }
    }

    /// Adds the next id (an int) or ids (a list of int) decoded by ``tokenizer`` and returns
    /// the text they complete, or None if more ids are needed.
    #[pyo3(signature = (tokenizer, id))]
    fn step(
        &mut self,
        py: Python<'_>,
        tokenizer: PyRef<'_, PyTokenizer>,
        id: &Bound<'_, PyAny>,
    ) -> PyResult<Option<String>> {
        let ids: Vec<u32> = match id.extract::<u32>() {
            Ok(single) => vec![single],
            Err(_) => id.extract::<Vec<u32>>().map_err(|_| {
                PyTypeError::new_err("id must be an int or a list of int (token ids)")
            })?,
        };
        let pipeline = tokenizer.pipeline(py)?;
        let skip = self.skip_special_tokens;
        self.stream.step(&ids, |window| pipeline.decode(window, skip)).py()
    }

    fn __repr__(&self) -> String {
        format!(
            "DecodeStream(skip_special_tokens={})",
            if self.skip_special_tokens { "True" } else { "False" }
        )
    }

    /// A stream in the same state that goes on independently (as ``tokenizers``).
    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Pickled state: ``(ids, prefix, prefix_ids, skip_special_tokens)``.
    fn __getstate__(&self) -> (Vec<u32>, String, usize, bool) {
        let (ids, prefix, prefix_ids) = self.stream.to_parts();
        (ids, prefix, prefix_ids, self.skip_special_tokens)
    }

    fn __setstate__(&mut self, state: (Vec<u32>, String, usize, bool)) -> PyResult<()> {
        let (ids, prefix, prefix_ids, skip_special_tokens) = state;
        self.stream = DecodeStream::from_parts(ids, prefix, prefix_ids).py()?;
        self.skip_special_tokens = skip_special_tokens;
        Ok(())
    }
}
