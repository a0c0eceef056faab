"""tokenmill: train and run text tokenizers.

The API mirrors Hugging Face ``tokenizers`` (switching is one import) and offers a
tiktoken-compatible ``tokenmill.tiktoken``. The pipeline stages live in their own modules:
``normalizers`` → ``pre_tokenizers`` → ``models`` → ``processors`` → ``decoders``; ``trainers``
learn models from a corpus.
"""
from tokenmill._native import (
    __version__,
    TokenmillError,
    FormatError,
    TokenmillIOError,
    UnknownIdError,
    InvalidArgumentError,
    InputTypeError,
    InvalidTextError,
    IdOutOfRangeError,
    Regex,
    NormalizedString,
    PreTokenizedString,
)
from tokenmill import normalizers, pre_tokenizers, models, trainers, processors, decoders
from tokenmill import tiktoken
from tokenmill import words
from tokenmill.models import Token
from tokenmill.tokenizer import (
    AddedToken,
    Encoding,
    Tokenizer,
    Offsets,
    TextInputSequence,
    PreTokenizedInputSequence,
    TextEncodeInput,
    PreTokenizedEncodeInput,
    InputSequence,
    EncodeInput,
    OffsetReferential,
    OffsetType,
    SplitDelimiterBehavior,
)
from tokenmill.batch_encoding import BatchEncoding
from tokenmill import implementations
# tokenizers exports its ready-made tokenizers at the top level too.
from tokenmill.implementations import (
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    CharBPETokenizer,
    SentencePieceBPETokenizer,
    SentencePieceUnigramTokenizer,
)
from tokenmill import collocations, stopwords

__all__ = [
    "__version__",
    "TokenmillError",
    "FormatError",
    "TokenmillIOError",
    "UnknownIdError",
    "InvalidArgumentError",
    "InputTypeError",
    "InvalidTextError",
    "IdOutOfRangeError",
    "Regex",
    "NormalizedString",
    "PreTokenizedString",
    "normalizers",
    "pre_tokenizers",
    "models",
    "trainers",
    "processors",
    "decoders",
    "Token",
    "implementations",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
    "tiktoken",
    "words",
    "Tokenizer",
    "Encoding",
    "AddedToken",
    "BatchEncoding",
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
    "collocations",
    "stopwords",
]
