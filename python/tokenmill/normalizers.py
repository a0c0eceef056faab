"""Normalizers: the first stage of a tokenizer, rewriting the text before it is split.

Same classes, constructor arguments and behaviour as ``tokenizers.normalizers``. Every
normalizer keeps the alignment between the normalized text and the original, so token offsets
always point into the user's string (try ``tokenmill.NormalizedString`` to see them).

>>> from tokenmill import normalizers
>>> pipeline = [normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()]
>>> normalizers.Sequence(pipeline).normalize_str("Héllo")
'hello'
"""

from tokenmill import _native

_native_module = _native.normalizers

Normalizer = _native_module.Normalizer
BertNormalizer = _native_module.BertNormalizer
NFD = _native_module.NFD
NFKD = _native_module.NFKD
NFC = _native_module.NFC
NFKC = _native_module.NFKC
Sequence = _native_module.Sequence
Lowercase = _native_module.Lowercase
Prepend = _native_module.Prepend
Strip = _native_module.Strip
StripAccents = _native_module.StripAccents
Nmt = _native_module.Nmt
Precompiled = _native_module.Precompiled
Replace = _native_module.Replace
ByteLevel = _native_module.ByteLevel

#: The Unicode normalization forms by their lowercase names.
NORMALIZERS = {"nfc": NFC, "nfd": NFD, "nfkc": NFKC, "nfkd": NFKD}


def unicode_normalizer_from_str(normalizer: str) -> Normalizer:
    """The Unicode normalizer named ``"nfc"``, ``"nfd"``, ``"nfkc"`` or ``"nfkd"``."""
    if normalizer not in NORMALIZERS:
        raise ValueError(
            f"{normalizer} is not a known unicode normalizer. Available are {NORMALIZERS.keys()}"
        )
    return NORMALIZERS[normalizer]()


__all__ = [
    "Normalizer",
    "BertNormalizer",
    "NFD",
    "NFKD",
    "NFC",
    "NFKC",
    "Sequence",
    "Lowercase",
    "Prepend",
    "Strip",
    "StripAccents",
    "Nmt",
    "Precompiled",
    "Replace",
    "ByteLevel",
    "NORMALIZERS",
    "unicode_normalizer_from_str",
]
