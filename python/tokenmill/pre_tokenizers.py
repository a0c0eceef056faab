"""Pre-tokenizers: cut (normalized) text into words before the model sees it.

Same classes, constructor arguments and behaviour as ``tokenizers.pre_tokenizers``. Every
pre-tokenizer has ``pre_tokenize_str(text)``, which returns the pieces with their offsets
(character indexes into ``text``), supports pickling, and reads/writes the ``tokenizer.json``
form of ``tokenizers``.
"""

from tokenmill import _native

_native_module = _native.pre_tokenizers

PreTokenizer = _native_module.PreTokenizer
"""Base class of all pre-tokenizers (build a subclass instead)."""
ByteLevel = _native_module.ByteLevel
"""GPT-2 byte-level pre-tokenizer: GPT-2 regex split, bytes mapped to visible chars."""
Whitespace = _native_module.Whitespace
"""Split into runs of word chars and runs of other non-space chars (``\\w+|[^\\w\\s]+``)."""
WhitespaceSplit = _native_module.WhitespaceSplit
"""Split on whitespace, like ``str.split()``."""
BertPreTokenizer = _native_module.BertPreTokenizer
"""BERT: split on whitespace and isolate each punctuation char."""
Split = _native_module.Split
"""Split on a string or ``tokenmill.Regex`` with a delimiter behavior (and ``invert``)."""
Punctuation = _native_module.Punctuation
"""Split on punctuation chars with a delimiter behavior."""
Digits = _native_module.Digits
"""Split numbers out (runs of digits, or each digit alone)."""
Metaspace = _native_module.Metaspace
"""SentencePiece-style: spaces become ``▁`` and the text is split before each."""
CharDelimiterSplit = _native_module.CharDelimiterSplit
"""Split on one character, dropping it."""
UnicodeScripts = _native_module.UnicodeScripts
"""Split where the Unicode script changes."""
FixedLength = _native_module.FixedLength
"""Cut the text into chunks of ``length`` characters."""
Sequence = _native_module.Sequence
"""Apply several pre-tokenizers in order."""

__all__ = [
    "PreTokenizer",
    "ByteLevel",
    "Whitespace",
    "WhitespaceSplit",
    "BertPreTokenizer",
    "Split",
    "Punctuation",
    "Digits",
    "Metaspace",
    "CharDelimiterSplit",
    "UnicodeScripts",
    "FixedLength",
    "Sequence",
]
