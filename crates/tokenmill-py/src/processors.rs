//! `tokenmill.processors`: the `PostProcessor` base class and its components, with the
//! constructors, attributes and methods of `tokenizers.processors`.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokenmill_core::processors::{
    BertProcessing, ByteLevel, PostProcessorWrapper, RobertaProcessing, SpecialToken, Template,
    TemplateProcessing, Tokens,
};
use tokenmill_core::tokenizer::PostProcessor;

use crate::encoding::PyEncoding;
use crate::errors::ToPyResult;
use crate::properties::component_classes;
use crate::shared::{getter, setter};
use crate::stage::stage_classes;

stage_classes! {
    /// Base class of all post-processors. A post-processor adds the special tokens a model
    /// expects (e.g. ``[CLS]``/``[SEP]``) and joins the encodings of a pair of inputs into one.
    ///
    /// Not built directly: use one of the subclasses.
    ///
    /// The component is shared (see `shared.rs`): a post-processor assigned to a Tokenizer or put
    /// in a Sequence is the same object there, so changing its attributes changes them everywhere.
    base PyPostProcessor(PostProcessorWrapper), "tokenmill.processors", "PostProcessor",
        "post-processor", restore AnyKind;
    /// Post-processors applied in order, each on the output of the previous one.
    ///
    /// Args:
    ///     processors (List[PostProcessor]): the post-processors (nested Sequences are flattened).
    sequence PySequence(processors), items Shared,
        set_item PyValueError("processor should not be a sequence");
    subclasses { Roberta, Bert, ByteLevel, Template, Sequence }
    plain {}
    methods {
        /// The number of special tokens this post-processor adds to a single input
        /// (``is_pair=False``) or to a pair.
        #[pyo3(signature = (is_pair))]
        fn num_special_tokens_to_add(&self, is_pair: bool) -> usize {
            self.inner.with(|p| p.added_tokens(is_pair))
        }

        /// Adds the special tokens to ``encoding`` (and joins ``pair`` after it), returning a new
        /// :class:`~tokenmill.Encoding`; overflowing windows are processed too. Without
        /// ``add_special_tokens`` only the joining (and offset trimming) happens.
        #[pyo3(signature = (encoding, pair = None, add_special_tokens = true))]
        fn process(
            &self,
            encoding: PyRef<'_, PyEncoding>,
            pair: Option<PyRef<'_, PyEncoding>>,
            add_special_tokens: bool,
        ) -> PyResult<PyEncoding> {
            let pair = pair.map(|p| p.to_encoding());
            Ok(self
                .inner
                .with(|p| p.process(encoding.to_encoding(), pair, add_special_tokens))
                .py()?
                .into())
        }
    }
}

component_classes! {
    #[pymethods] PyPostProcessor("tokenmill.processors"), PostProcessorWrapper;

    /// Adds ``[CLS]`` before and ``[SEP]`` after the first input, and ``[SEP]`` after the second:
    /// ``[CLS] A [SEP] B [SEP]``, type ids 0 for the first part, 1 for the second.
    ///
    /// Args:
    ///     sep (Tuple[str, int]): the separator token and its id.
    ///     cls (Tuple[str, int]): the classifier token and its id.
    PyBert("BertProcessing"), Bert(|p| p) {
        new(sep: (String, u32), cls: (String, u32)) => BertProcessing::new(sep, cls);
        newargs(py) => [("", 0), ("", 0)];
        fields {
            /// The separator token and its id.
            sep: (String, u32);
            /// The classifier token and its id.
            cls: (String, u32);
        }
    }

    /// RoBERTa's layout: ``<s> A </s>`` and ``<s> A </s> </s> B </s>``, all type ids 0. With
    /// ``trim_offsets``, token offsets exclude the leading/trailing spaces of byte-level tokens
    /// (as the ``ByteLevel`` post-processor does).
    ///
    /// Args:
    ///     sep (Tuple[str, int]): the separator token and its id.
    ///     cls (Tuple[str, int]): the classifier token and its id.
    ///     trim_offsets (bool, default True): trim whitespace out of the offsets.
    ///     add_prefix_space (bool, default True): whether the pre-tokenizer added a space in
    ///         front of the input (that space is then not trimmed off the first token).
    PyRoberta("RobertaProcessing"), Roberta(|p| p) {
        new(
            sep: (String, u32),
            cls: (String, u32),
            trim_offsets: bool = true,
            add_prefix_space: bool = true,
        ) => RobertaProcessing { sep, cls, trim_offsets, add_prefix_space };
        newargs(py) => [("", 0), ("", 0)];
        fields {
            /// The separator token and its id.
            sep: (String, u32);
            /// The classifier token and its id.
            cls: (String, u32);
            /// Whether offsets are trimmed of whitespace.
            trim_offsets: bool;
            /// Whether the pre-tokenizer added a space in front of the input.
            add_prefix_space: bool;
        }
    }

    /// Post-processing of byte-level BPE: trims the leading/trailing spaces (``Ġ``) of each
    /// token out of its offsets. Adds no tokens.
    ///
    /// Args:
    ///     add_prefix_space (bool, default True): whether the pre-tokenizer added a space in front
    ///         of the input (that space is then not trimmed off the first token).
    ///     trim_offsets (bool, default True): trim whitespace out of the offsets.
    ///     use_regex (bool, default True): kept for tokenizer.json compatibility (the
    ///         pre-tokenizer's setting); no effect here.
    PyByteLevel("ByteLevel"), ByteLevel(|p| p) {
        new(
            add_prefix_space: Option<bool> = None,
            trim_offsets: Option<bool> = None,
            use_regex: Option<bool> = None;
            **_kwargs
        ) => {
            let d = ByteLevel::default();
            ByteLevel::new(
                add_prefix_space.unwrap_or(d.add_prefix_space),
                trim_offsets.unwrap_or(d.trim_offsets),
                use_regex.unwrap_or(d.use_regex),
            )
        };
        fields {
            /// Whether the pre-tokenizer added a space in front of the input.
            add_prefix_space: bool;
            /// Whether offsets are trimmed of whitespace.
            trim_offsets: bool;
            /// The pre-tokenizer's ``use_regex`` setting (stored, unused here).
            use_regex: bool;
        }
    }
}

/// A template from Python: a string of space-separated pieces or a list of pieces.
fn extract_template(template: &Bound<'_, PyAny>) -> PyResult<Template> {
    if let Ok(s) = template.extract::<String>() {
        return Template::parse(&s).py();
    }
    if let Ok(pieces) = template.extract::<Vec<String>>() {
        return Template::from_pieces(pieces).py();
    }
    Err(PyTypeError::new_err("a template must be a str or a list of str"))
}

/// A special token from Python: ``(token, id)``, ``(id, token)``, or
/// ``{"id": str, "ids": List[int], "tokens": List[str]}``.
fn extract_special_token(item: &Bound<'_, PyAny>) -> PyResult<SpecialToken> {
    if let Ok((token, id)) = item.extract::<(String, u32)>() {
        return Ok(SpecialToken::single(token, id));
    }
    if let Ok((id, token)) = item.extract::<(u32, String)>() {
        return Ok(SpecialToken::single(token, id));
    }
    if let Ok(d) = item.downcast::<PyDict>() {
        let required = |key: &str| -> PyResult<Bound<'_, PyAny>> {
            d.get_item(key)?.ok_or_else(|| {
                PyValueError::new_err(format!("special token dict: `{key}` must be specified"))
            })
        };
        let id: String = required("id")?.extract()?;
        let ids: Vec<u32> = required("ids")?.extract()?;
        let tokens: Vec<String> = required("tokens")?.extract()?;
        return SpecialToken::new(id, ids, tokens).py();
    }
    Err(PyTypeError::new_err(
        "a special token must be a (str, int) or (int, str) tuple, or a dict with id, ids, tokens",
    ))
}

/// Places special tokens with templates. Each template is a string of space-separated pieces
/// (or a list of pieces): ``$A`` / ``$B`` are the first / second input (``$`` alone is ``$A``,
/// ``$1`` is ``$A`` with type id 1), anything else names a special token; ``:<n>`` gives a piece
/// type id ``n`` (default 0). For BERT::
///
///     TemplateProcessing(
///         single="[CLS] $A [SEP]",
///         pair="[CLS] $A [SEP] $B:1 [SEP]:1",
///         special_tokens=[("[CLS]", 101), ("[SEP]", 102)],
///     )
///
/// Args:
///     single (str or List[str], default ``"$0"``): the template for one input.
///     pair (str or List[str], default ``"$A:0 $B:1"``): the template for a pair; must use
///         both ``$A`` and ``$B``.
///     special_tokens (list): each a ``(token, id)`` or ``(id, token)`` tuple, or a dict
///         ``{"id": name, "ids": [...], "tokens": [...]}`` for a special that stands for
///         several tokens. Every special token named by a template must be given.
///
/// Raises ``tokenmill.InvalidArgumentError`` for a malformed piece, a pair template that does
/// not use both inputs, or a missing special token.
#[pyclass(extends = PyPostProcessor, module = "tokenmill.processors", name = "TemplateProcessing")]
pub struct PyTemplate;

#[pymethods]
impl PyTemplate {
    #[new]
    #[pyo3(signature = (single = None, pair = None, special_tokens = None))]
    fn new(
        single: Option<&Bound<'_, PyAny>>,
        pair: Option<&Bound<'_, PyAny>>,
        special_tokens: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(Self, PyPostProcessor)> {
        let single = single.map(extract_template).transpose()?;
        let pair = pair.map(extract_template).transpose()?;
        let special_tokens: Tokens = match special_tokens {
            None => Tokens::default(),
            Some(list) => list
                .try_iter()?
                .map(|item| extract_special_token(&item?))
                .collect::<PyResult<_>>()?,
        };
        let p = TemplateProcessing::new(single, pair, special_tokens).py()?;
        Ok((PyTemplate, PyPostProcessor::new(p)))
    }

    /// The single-input template, as ``tokenizers`` shows it (a debug string); assign a str or
    /// a list of pieces to change it.
    #[getter]
    fn get_single(self_: PyRef<'_, Self>) -> PyResult<String> {
        getter!(self_, PostProcessorWrapper::Template, |p| format!("{:?}", p.single))
    }
    #[setter]
    fn set_single(self_: PyRef<'_, Self>, single: &Bound<'_, PyAny>) -> PyResult<()> {
        let template = extract_template(single)?;
        setter!(self_, PostProcessorWrapper::Template, |p| p.set_single(template))
    }
}
