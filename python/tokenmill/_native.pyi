"""Type stubs for the top-level names of the native extension ``tokenmill._native`` that the
package re-exports (``tokenmill.Regex``, the errors, ...). Its submodules (``models``, ...) are
typed by the package's own stubs (``tokenmill/models.pyi``, ...); any other name is ``Any``.

May import only ``typing``."""

from typing import Any, Callable, List, Optional, Tuple, Union

from tokenmill.models import Token
from tokenmill.tokenizer import Encoding

__version__: str

def __getattr__(name: str) -> Any: ...

class TokenmillError(Exception):
    """Base class of all tokenmill errors."""

class FormatError(TokenmillError):
    """A file or string is malformed (tokenizer.json, merges, ranks, vocab, ...)."""

class TokenmillIOError(TokenmillError, OSError):
    """A file could not be read or written; also an OSError (errno, strerror and filename are
    set when the system gave an error code)."""

class UnknownIdError(TokenmillError):
    """An id that the vocabulary does not contain."""

class InvalidArgumentError(TokenmillError, ValueError):
    """Arguments that do not make sense (together); also a ValueError."""

class InputTypeError(TokenmillError, TypeError):
    """An input of the wrong type (e.g. text that is not a str); also a TypeError."""

class InvalidTextError(InvalidArgumentError, InputTypeError):
    """A text that is not valid Unicode (a lone surrogate); an InvalidArgumentError
    (ValueError) and an InputTypeError (TypeError, what tokenizers raises)."""

class IdOutOfRangeError(TokenmillError, OverflowError):
    """A token id outside 0..2**32 (negative or too large); also an OverflowError."""

class Regex:
    """A compiled regular expression, to give ``Replace`` and ``Split`` a regex pattern instead
    of a literal string. Raises ``tokenmill.FormatError`` if the pattern does not compile.

    Args:
        pattern (str): the regular expression.
    """

    def __init__(self, pattern: str) -> None: ...
    @property
    def pattern(self) -> str:
        """The regular expression, as given."""

class NormalizedString:
    """A string being normalized, which keeps, for every normalized character, the span of the
    original string it comes from. Normalizers' ``normalize`` edits it in place.

    Args:
        sequence (str): the original string.

    The one a custom normalizer's ``normalize`` receives is the pipeline's string, lent for the
    call: using it after the call returns raises ``RuntimeError`` (as ``tokenizers``, whose
    ``NormalizedStringRefMut`` does the same), instead of silently editing a detached copy.
    """

    def __init__(self, sequence: str) -> None: ...
    @property
    def normalized(self) -> str:
        """The normalized string."""
    @property
    def original(self) -> str:
        """The original string."""
    @property
    def alignments(self) -> List[Tuple[int, int]]:
        """For each character of the normalized string, the ``(start, end)`` character span of
        the original string it comes from."""
    def slice(self, range: Union[int, Tuple[int, int], slice]) -> Optional[NormalizedString]:
        """A piece of this string by a character range of the normalized string (an int, a
        ``(start, end)`` tuple or a slice), or None if the range is out of bounds."""
    def filter(self, func: Callable[[str], bool]) -> None:
        """Keeps only the characters for which ``func(char)`` is true."""
    def for_each(self, func: Callable[[str], Any]) -> None:
        """Calls ``func(char)`` for each normalized character."""
    def map(self, func: Callable[[str], str]) -> None:
        """Replaces each character by ``func(char)`` (a str of one character)."""
    def split(self, pattern: Union[str, Regex], behavior: str) -> List[NormalizedString]:
        """Splits on ``pattern`` (a str or a ``tokenmill.Regex``); ``behavior`` is one of
        "removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"."""
    def replace(self, pattern: Union[str, Regex], content: str) -> None:
        """Replaces every match of ``pattern`` (a str or a ``tokenmill.Regex``) by
        ``content``."""
    def nfd(self) -> None:
        """Unicode NFD, in place."""
    def nfkd(self) -> None:
        """Unicode NFKD, in place."""
    def nfc(self) -> None:
        """Unicode NFC, in place."""
    def nfkc(self) -> None:
        """Unicode NFKC, in place."""
    def lowercase(self) -> None:
        """Lowercases, in place."""
    def uppercase(self) -> None:
        """Uppercases, in place."""
    def prepend(self, s: str) -> None:
        """Adds ``s`` in front (nothing happens to an empty string)."""
    def append(self, s: str) -> None:
        """Adds ``s`` at the end."""
    def lstrip(self) -> None:
        """Removes leading whitespace."""
    def rstrip(self) -> None:
        """Removes trailing whitespace."""
    def strip(self) -> None:
        """Removes leading and trailing whitespace."""
    def clear(self) -> None:
        """Removes the whole normalized string."""

class PreTokenizedString:
    """A string being pre-tokenized: the original text cut into pieces (each a
    ``NormalizedString`` that keeps its alignment with the original), later each tokenized.
    A custom pre-tokenizer's ``pre_tokenize(pretok)`` receives one and calls its ``split``.

    Args:
        sequence (str): the text.
    """

    def __init__(self, sequence: str) -> None: ...
    def split(self, func: Callable[[int, NormalizedString], List[NormalizedString]]) -> None:
        """Splits every piece not yet tokenized: ``func(index, normalized)`` gets the index of
        the piece and a ``NormalizedString``, and returns the list of its new pieces (e.g.
        ``normalized.split(" ", "removed")`` or slices of it)."""
    def normalize(self, func: Callable[[NormalizedString], None]) -> None:
        """Normalizes every piece not yet tokenized: ``func(normalized)`` edits the
        ``NormalizedString`` in place."""
    def tokenize(self, func: Callable[[str], List[Token]]) -> None:
        """Tokenizes every piece not yet tokenized: ``func(text)`` returns its list of
        ``Token``."""
    def to_encoding(self, type_id: int = 0, word_idx: Optional[int] = None) -> Encoding:
        """The ``Encoding`` of the tokenized pieces (every piece must be tokenized)."""
    def get_splits(
        self, offset_referential: str = "original", offset_type: str = "char"
    ) -> List[Tuple[str, Tuple[int, int], Optional[List[Token]]]]:
        """The pieces as ``(text, (start, end), tokens or None)``; offsets refer to the
        ``"original"`` or ``"normalized"`` text and count ``"char"`` or ``"byte"``."""
