//! `tokenmill._native.pre_tokenizers`: the pre-tokenizer classes, with `tokenizers`' names,
//! constructor signatures and properties. Each concrete class extends `PreTokenizer`, which
//! holds the core `PreTokenizerWrapper` (what the Tokenizer binding takes and gives back).
use pyo3::prelude::*;

use tokenmill_core::pre_tokenizers::{
    BertPreTokenizer, ByteLevel, CharDelimiterSplit, Digits, FixedLength, Metaspace,
    PreTokenizerWrapper, Punctuation, Split, SplitPattern, UnicodeScripts, Whitespace,
    WhitespaceSplit,
};
use tokenmill_core::tokenizer::{
    OffsetReferential, OffsetType, Offsets, PreTokenizedString, PreTokenizer,
};

use crate::errors::ToPyResult;
use crate::normalizers::{extract_pattern, PyRegex};
use crate::properties::{component_classes, PyValue};
use crate::shared::getter;
use crate::stage::stage_classes;

stage_classes! {
    /// Base class of all pre-tokenizers. Not meant to be built directly: build one of its
    /// subclasses (``ByteLevel()``, ``Whitespace()``, ...).
    ///
    /// The component is shared (see `shared.rs`): a pre-tokenizer assigned to a Tokenizer or put
    /// in a Sequence is the same object there, so changing its attributes changes them everywhere.
    base PyPreTokenizer(PreTokenizerWrapper), "tokenmill.pre_tokenizers", "PreTokenizer",
        "pre-tokenizer", restore SameKind;
    /// Applies several pre-tokenizers in order, each to the pieces the previous one made.
    /// Nested sequences are flattened. ``seq[i]`` gives the i-th one (shared: changing it changes
    /// the Sequence); ``seq[i] = pre_tokenizer`` replaces it.
    sequence PySequence(pretokenizers), items Shared,
        set_item PyTypeError("pre_tokenizer should not be a sequence");
    subclasses {
        BertPreTokenizer, ByteLevel, Delimiter, Metaspace, Whitespace, Sequence, Split,
        Punctuation, WhitespaceSplit, Digits, UnicodeScripts, FixedLength
    }
    plain { Custom }
    /// A pre-tokenizer written in Python: ``pre_tokenizer`` is any object with a
    /// ``pre_tokenize(self, pretok: PreTokenizedString)`` method that splits it in place
    /// (``pretok.split(func)``). It runs with the GIL; a tokenizer holding it cannot be saved
    /// or pickled.
    custom(pre_tokenizer) => crate::custom::custom_pre_tokenizer;
    methods {
        /// Pre-tokenizes a ``tokenmill.PreTokenizedString`` in place.
        #[pyo3(text_signature = "(self, pretok)")]
        fn pre_tokenize(
            &self,
            mut pretok: PyRefMut<'_, crate::custom::PyPreTokenizedString>,
        ) -> PyResult<()> {
            let target = &mut pretok.inner;
            self.inner.with(|inner| inner.pre_tokenize(target)).py()
        }

        /// Pre-tokenizes a string: a list of ``(piece, (start, end))`` with offsets as character
        /// indexes into ``sequence``.
        #[pyo3(text_signature = "(self, sequence)")]
        fn pre_tokenize_str(
            &self,
            py: Python<'_>,
            sequence: String,
        ) -> PyResult<Vec<(String, Offsets)>> {
            self.inner
                .with(|inner| py.allow_threads(move || pre_tokenize_str(inner, &sequence)))
                .py()
        }
    }
}

/// What `pre_tokenize_str` returns, computed without the GIL.
fn pre_tokenize_str(
    pre_tokenizer: &PreTokenizerWrapper,
    text: &str,
) -> tokenmill_core::Result<Vec<(String, Offsets)>> {
    let mut pretokenized = PreTokenizedString::from(text);
    pre_tokenizer.pre_tokenize(&mut pretokenized)?;
    Ok(pretokenized
        .get_splits(OffsetReferential::Original, OffsetType::Char)
        .into_iter()
        .map(|(piece, offsets, _)| (piece.to_string(), offsets))
        .collect())
}

component_classes! {
    #[pymethods] PyPreTokenizer("tokenmill.pre_tokenizers"), PreTokenizerWrapper;

    /// ByteLevel pre-tokenizer: optionally adds a space in front, splits with the GPT-2 regex, and
    /// maps every byte to a visible char (``ByteLevel.alphabet()``; a space becomes ``Ġ``).
    ///
    /// Args:
    ///     add_prefix_space (bool, default True): add a space in front if there is none, so that
    ///         ``hello`` is treated like ``say hello``.
    ///     trim_offsets (bool, default True): used by the ByteLevel post-processor.
    ///     use_regex (bool, default True): split with the GPT-2 regex.
    PyByteLevel("ByteLevel"), ByteLevel(|p| p) {
        new(add_prefix_space: bool = true, trim_offsets: bool = true, use_regex: bool = true;
            **_kwargs) => ByteLevel::new(add_prefix_space, trim_offsets, use_regex);
        fields {
            add_prefix_space: bool;
            trim_offsets: bool;
            use_regex: bool;
        }
        methods {
            /// The 256 characters bytes are mapped to (as one-character strings, in byte order).
            #[staticmethod]
            fn alphabet() -> Vec<String> {
                byte_level_alphabet()
            }
        }
    }

    /// Splits on ``\w+|[^\w\s]+``: runs of word characters and runs of other non-space
    /// characters; whitespace is dropped.
    PyWhitespace("Whitespace") = Whitespace;

    /// Splits on whitespace and drops it, like ``str.split()``.
    PyWhitespaceSplit("WhitespaceSplit") = WhitespaceSplit;

    /// BERT's pre-tokenizer: splits on whitespace (dropped) and isolates each punctuation char.
    PyBertPreTokenizer("BertPreTokenizer") = BertPreTokenizer;

    /// Splits on every match of ``pattern``.
    ///
    /// Args:
    ///     pattern (str or tokenmill.Regex): a plain string is matched literally; wrap a regular
    ///         expression in ``tokenmill.Regex`` (Oniguruma-compatible syntax: possessive
    ///         quantifiers, look-around, ``\p{...}``, ``(?i:...)``).
    ///     behavior (str): what to do with the matches: "removed", "isolated",
    ///         "merged_with_previous", "merged_with_next" or "contiguous".
    ///     invert (bool, default False): split on what lies between the matches instead.
    PySplit("Split"), Split(|p| p) {
        new(pattern: &Bound<'_, PyAny>, behavior: String, invert: bool = false) => {
            let pattern = extract_pattern(pattern, SplitPattern::String, SplitPattern::Regex)?;
            Split::new(pattern, PyValue::from_python(behavior)?, invert).py()?
        };
        newargs(py) => [" ", "removed"];
        fields {
            behavior: String;
            invert: bool;
        }
        methods {
            /// The pattern: a str for a literal, a ``tokenmill.Regex`` for a regex.
            #[getter]
            fn get_pattern(self_: PyRef<'_, Self>) -> PyResult<PyObject> {
                let py = self_.py();
                let pattern = getter!(self_, PreTokenizerWrapper::Split, |p| p.pattern.clone())?;
                match pattern {
                    SplitPattern::String(s) => Ok(s.into_pyobject(py)?.into_any().unbind()),
                    // A pattern only our Oniguruma rewriting accepts (`\p{^L}`, `\h`) cannot be
                    // a `Regex` object; it is then returned as its string.
                    SplitPattern::Regex(r) => match PyRegex::new(&r) {
                        Ok(regex) => Ok(Py::new(py, regex)?.into_any()),
                        Err(_) => Ok(r.into_pyobject(py)?.into_any().unbind()),
                    },
                }
            }
        }
    }

    /// Splits on each punctuation character.
    ///
    /// Args:
    ///     behavior (str, default "isolated"): "removed", "isolated", "merged_with_previous",
    ///         "merged_with_next" or "contiguous".
    PyPunctuation("Punctuation"), Punctuation(|p| p) {
        new(behavior: &str = "isolated")
            => Punctuation::new(PyValue::from_python(behavior.to_string())?);
        fields {
            behavior: String;
        }
    }

    /// Splits numbers out: runs of digits ("Call 123 please" → "Call ", "123", " please"), or
    /// each digit alone if ``individual_digits`` is True.
    PyDigits("Digits"), Digits(|p| p) {
        new(individual_digits: bool = false) => Digits::new(individual_digits);
        fields {
            individual_digits: bool;
        }
    }

    /// SentencePiece-style pre-tokenizer: spaces become ``replacement`` and the text is split
    /// before each of them.
    ///
    /// Args:
    ///     replacement (str, default "▁"): one character.
    ///     prepend_scheme (str, default "always"): put a ``replacement`` in front of the text
    ///         "always", "never", or only for the "first" piece of the input.
    ///     split (bool, default True): split before each ``replacement``.
    PyMetaspace("Metaspace"), Metaspace(|p| p) {
        new(replacement: char = '▁', prepend_scheme: &str = "always", split: bool = true) => {
            let scheme = PyValue::from_python(prepend_scheme.to_string())?;
            Metaspace::new(replacement, scheme, split)
        };
        fields {
            prepend_scheme: String;
            split: bool;
        }
        accessors {
            replacement: String => p.replacement().to_string(),
                |replacement: char| p.set_replacement(replacement);
        }
    }

    // (The line as a `#[doc]` attribute: as a comment it would pass 100 columns here.)
    #[doc = " Splits on one character, which is dropped (like ``str.split(delimiter)`` without \
        empty parts)."]
    PyDelimiter("CharDelimiterSplit"), Delimiter(|p| p) {
        new(delimiter: char) => CharDelimiterSplit::new(delimiter);
        newargs(py) => [" "];
        accessors {
            delimiter: String => p.delimiter.to_string(),
                |delimiter: char| p.delimiter = delimiter;
        }
    }

    /// Splits where the Unicode script changes (Hiragana, Katakana and ``ー`` count as Han), as
    /// SentencePiece does; spaces stay with the piece before them.
    ///
    /// Scripts are those of ``tokenizers``, which froze Unicode 9.0's: chars assigned since have
    /// no script (they never cause a split, like spaces), and the few chars Unicode has moved to
    /// another script since keep their 9.0 one (U+0589 ARMENIAN FULL STOP is Common).
    PyUnicodeScripts("UnicodeScripts") = UnicodeScripts;

    /// Cuts the text into chunks of ``length`` characters.
    PyFixedLength("FixedLength"), FixedLength(|p| p) {
        new(length: usize = 5) => FixedLength::new(length);
        fields {
            length: usize;
        }
    }
}

/// The 256 characters bytes are mapped to by the byte-level pre-tokenizer and normalizer (as
/// one-character strings, in byte order).
pub(crate) fn byte_level_alphabet() -> Vec<String> {
    ByteLevel::alphabet().into_iter().map(String::from).collect()
}
