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

from tokenmill._native.decoders import (
    CTC,
    BPEDecoder,
    ByteFallback,
    ByteLevel,
    Decoder,
    DecodeStream,
    Fuse,
    Metaspace,
    Replace,
    Sequence,
    Strip,
    WordPiece,
)

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
