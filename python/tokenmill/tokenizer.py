"""The pipeline object and its results: ``Tokenizer``, ``Encoding``, ``AddedToken``.

Same API as ``tokenizers.Tokenizer`` / ``tokenizers.Encoding`` / ``tokenizers.AddedToken``.
Offsets in an :class:`Encoding` are character indexes into the Python string that was encoded.
Decoding skips ids that are in no vocabulary, as ``tokenizers`` does. A str that holds a lone
surrogate (not valid Unicode) raises :class:`tokenmill.InvalidTextError` naming its index: it is
both a ``ValueError`` (:class:`tokenmill.InvalidArgumentError`) and the ``TypeError`` that
``tokenizers`` raises for it.

Also the input type aliases (``TextInputSequence``, ``EncodeInput``, ...) and the enums
(``OffsetReferential``, ``OffsetType``, ``SplitDelimiterBehavior``) that ``tokenizers`` exports
at its top level, for annotations written against ``tokenizers``.
"""

from tokenmill import _native
from tokenmill._input_types import (
    EncodeInput,
    InputSequence,
    OffsetReferential,
    Offsets,
    OffsetType,
    PreTokenizedEncodeInput,
    PreTokenizedInputSequence,
    SplitDelimiterBehavior,
    TextEncodeInput,
    TextInputSequence,
)

Tokenizer = _native.Tokenizer
Encoding = _native.Encoding
AddedToken = _native.AddedToken

__all__ = [
    "Tokenizer",
    "Encoding",
    "AddedToken",
    "Offsets",
    "TextInputSequence",
    "PreTokenizedInputSequence",
    "TextEncodeInput",
    "PreTokenizedEncodeInput",
    "InputSequence",
    "EncodeInput",
    "OffsetReferential",
    "OffsetType",
    "SplitDelimiterBehavior",
]
