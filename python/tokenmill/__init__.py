"""tokenmill: train and run text tokenizers.

The API mirrors Hugging Face ``tokenizers`` (switching is one import) and offers a
tiktoken-compatible ``tokenmill.tiktoken``. The pipeline stages live in their own modules:
``normalizers`` → ``pre_tokenizers`` → ``models`` → ``processors`` → ``decoders``; ``trainers``
learn models from a corpus.

Threads and processes: batch calls (``encode_batch``, ``decode_batch``, tiktoken's and
SentencePiece's batches, ``words`` batches, training) run on one pool of threads, and release
the GIL.

- ``TOKENIZERS_PARALLELISM`` is honoured as ``tokenizers`` does: unset or any other value means
  on; ``""``, ``off``, ``false``, ``f``, ``no``, ``n`` or ``0`` (any case) means off, and every
  batch then runs on the calling thread. It is read at every batch call.
- ``TOKENMILL_NUM_THREADS`` sets the number of threads of the pool (else ``RAYON_NUM_THREADS``,
  else one per core); it is read once, when the first parallel batch of a process makes the
  pool. ``1`` makes every batch run on the calling thread.
- Fork: a child forked after a parallel batch works (it makes its own pool). As in
  ``tokenizers``, when ``TOKENIZERS_PARALLELISM`` is unset, such a child prints
  "huggingface/tokenizers: The current process just got forked, after parallelism has already
  been used. Disabling parallelism to avoid deadlocks..." and runs its batches on one thread;
  set the variable to ``true`` to keep parallelism in the child (``tokenizers`` deadlocks
  there; tokenmill does not) or to ``false`` to silence the warning.
- Threads: any method may run while another thread changes the object (``enable_truncation``,
  ``add_tokens``, ``tok.normalizer = ...``, ``train``, a segmenter's ``add_word``, a finder's
  filters): a call sees the object entirely before or entirely after the change, never a mix,
  and never raises "Already borrowed".

What lives here: this file re-exports the public API. The stage modules (``normalizers``, ...,
``decoders``, ``trainers``) and ``tokenizer`` re-export classes of the native extension
``tokenmill._native`` (built from ``crates/tokenmill-py``) and add Python-only helpers;
``batch_encoding``, ``pretrained``, ``transformers`` and ``cli`` are written in Python on top of
them; ``sentencepiece``, ``words``, ``collocations`` and the ``tiktoken`` and
``implementations`` packages are front ends in other libraries' styles. The ``.pyi`` files are
their type stubs (``_stage.pyi`` is a stub-only base of the stage stubs); ``words`` and
``tiktoken.core`` have none: they carry their own annotations, and the native classes they
re-export are typed by stub-only modules (``_native_words.pyi``, ``tiktoken/_native_bpe.pyi``).

May import: the standard library, ``tokenmill._native`` and the package's own modules;
third-party packages only inside the functions that need them, and optionally (NumPy for
arrays, ``regex``, ``transformers``, ``huggingface_hub``, ``protobuf``).
"""

# The order of these imports matters (submodules import the native names bound first).
# ruff: noqa: I001
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

# `X as X`: re-exported (listed in __all__ through tokenizer.__all__).
from tokenmill.tokenizer import (
    AddedToken as AddedToken,
    Encoding as Encoding,
    Tokenizer as Tokenizer,
    Offsets as Offsets,
    TextInputSequence as TextInputSequence,
    PreTokenizedInputSequence as PreTokenizedInputSequence,
    TextEncodeInput as TextEncodeInput,
    PreTokenizedEncodeInput as PreTokenizedEncodeInput,
    InputSequence as InputSequence,
    EncodeInput as EncodeInput,
    OffsetReferential as OffsetReferential,
    OffsetType as OffsetType,
    SplitDelimiterBehavior as SplitDelimiterBehavior,
)
from tokenmill import tokenizer as _tokenizer_module
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
    *_tokenizer_module.__all__,
    "BatchEncoding",
    "collocations",
    "stopwords",
]
