"""The input type aliases and enums that ``tokenizers`` exports at its top level, for
annotations written against ``tokenizers``. Pure Python, so both ``tokenizer.py`` and its stub
``tokenizer.pyi`` import them from here (one definition); may import only the standard library.
"""

from enum import Enum
from typing import List, Tuple, Union

Offsets = Tuple[int, int]
"""A ``(start, end)`` span."""

TextInputSequence = str
"""One text to encode."""

PreTokenizedInputSequence = Union[List[str], Tuple[str]]
"""One text already split into words (``is_pretokenized=True``)."""

TextEncodeInput = Union[
    TextInputSequence, Tuple[TextInputSequence, TextInputSequence], List[TextInputSequence]
]
"""One input of ``encode_batch``: a text, or a pair of texts as a 2-tuple or a 2-list."""

PreTokenizedEncodeInput = Union[
    PreTokenizedInputSequence,
    Tuple[PreTokenizedInputSequence, PreTokenizedInputSequence],
    List[PreTokenizedInputSequence],
]
"""One pre-tokenized input of ``encode_batch``: a word list, or a pair of them."""

InputSequence = Union[TextInputSequence, PreTokenizedInputSequence]
"""A sequence for ``encode``: a text, or (``is_pretokenized=True``) a word list."""

EncodeInput = Union[TextEncodeInput, PreTokenizedEncodeInput]
"""Any one input of ``encode_batch``."""


class OffsetReferential(Enum):
    """Which text offsets refer to: the original input or its normalized form."""

    ORIGINAL = "original"
    NORMALIZED = "normalized"


class OffsetType(Enum):
    """The unit of offsets: bytes of the UTF-8 text or characters."""

    BYTE = "byte"
    CHAR = "char"


class SplitDelimiterBehavior(Enum):
    """What a split does with the delimiter it matched (the ``behavior`` of ``Split`` & co.)."""

    REMOVED = "removed"
    ISOLATED = "isolated"
    MERGED_WITH_PREVIOUS = "merged_with_previous"
    MERGED_WITH_NEXT = "merged_with_next"
    CONTIGUOUS = "contiguous"
