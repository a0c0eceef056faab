"""Decoders: turn a list of tokens back into text.

Same classes and arguments as ``tokenizers.decoders``; every decoder has
``decode(tokens) -> str`` and pickles:

- :class:`ByteLevel`: GPT-2 byte-level tokens back to text (invalid UTF-8 becomes U+FFFD).
- :class:`BPEDecoder`: the end-of-word ``suffix`` (``</w>``) becomes a space.
- :class:`Metaspace`: ``▁`` back to spaces (SentencePiece style).
- :class:`ByteFallback`: ``<0xNN>`` byte tokens back to text.
- :class:`Fuse`: all tokens into one.
- :class:`Strip`: strips a character from the ends of each token.
- :class:`Replace`: replaces a string or :class:`tokenmill.Regex` in each token.
- :class:`WordPiece`: ``##`` continuation tokens glued, BERT's spaces cleaned up.
- :class:`CTC`: CTC speech-model output (repeats collapsed, padding dropped).
- :class:`Sequence`: decoders chained.
"""

from tokenmill import _native

_native_module = _native.decoders

Decoder = _native_module.Decoder
ByteLevel = _native_module.ByteLevel
BPEDecoder = _native_module.BPEDecoder
Metaspace = _native_module.Metaspace
ByteFallback = _native_module.ByteFallback
Fuse = _native_module.Fuse
Strip = _native_module.Strip
Replace = _native_module.Replace
WordPiece = _native_module.WordPiece
CTC = _native_module.CTC
Sequence = _native_module.Sequence
DecodeStream = _native_module.DecodeStream

__all__ = [
    "Decoder",
    "ByteLevel",
    "BPEDecoder",
    "Metaspace",
    "ByteFallback",
    "Fuse",
    "Strip",
    "Replace",
    "WordPiece",
    "CTC",
    "Sequence",
    "DecodeStream",
]
