"""The pipeline object and its results: ``Tokenizer``, ``Encoding``, ``AddedToken``.

Same API as ``tokenizers.Tokenizer`` / ``tokenizers.Encoding`` / ``tokenizers.AddedToken``.
Offsets in an :class:`Encoding` are character indexes into the Python string that was encoded.
Decoding skips ids that are in no vocabulary, as ``tokenizers`` does. A str that holds a lone
surrogate (not valid Unicode) raises :class:`tokenmill.InvalidArgumentError` naming its index.
"""
from tokenmill import _native

Tokenizer = _native.Tokenizer
Encoding = _native.Encoding
AddedToken = _native.AddedToken

__all__ = ["Tokenizer", "Encoding", "AddedToken"]
