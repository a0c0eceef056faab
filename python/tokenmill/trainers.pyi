import os
from collections.abc import Iterable, Iterator
from typing import Any, List, Mapping, Optional, Tuple, Union

from tokenmill.models import Model
from tokenmill.tokenizer import AddedToken, Tokenizer

_Path = Union[str, os.PathLike[str]]
_Size = Union[int, str]

class WordCounts:
    """Words and their counts (exact), compact and sorted by the words' bytes.

    Iteration and ``items()`` go in increasing byte order of the words; ``counts[word]`` is 0
    for an unseen word; ``a + b`` adds counts exactly."""

    def __init__(self, counts: Optional[Mapping[str, int]] = None) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, word: str) -> int: ...
    def __contains__(self, word: object) -> bool: ...
    def __iter__(self) -> Iterator[str]: ...
    def __add__(self, other: WordCounts) -> WordCounts: ...
    def __eq__(self, other: object) -> bool: ...
    def items(self) -> List[Tuple[str, int]]:
        """``(word, count)`` in increasing byte order of the words."""
        ...
    def most_common(self, n: Optional[int] = None) -> List[Tuple[str, int]]:
        """The ``n`` most frequent (all when None): decreasing count, then increasing bytes."""
        ...
    def total(self) -> int:
        """The sum of the counts."""
        ...
    def save(self, path: _Path) -> None:
        """Saves atomically (the umask's permissions) in tokenmill's word-counts format."""
        ...
    @staticmethod
    def load(path: _Path) -> WordCounts:
        """Loads saved counts; raises ``FormatError`` naming a corrupt or foreign file."""
        ...
    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]: ...

def count_words(
    files_or_iterator: Union[_Path, List[_Path], Tuple[_Path, ...], Iterable[Any]],
    tokenizer: Optional[Tokenizer] = None,
    *,
    max_memory: Optional[_Size] = None,
    spill_dir: Optional[_Path] = None,
) -> WordCounts:
    """Counts the words training would count (the tokenizer's normalizer, pre-tokenizer and
    added tokens), exactly, spilling to disk beyond ``max_memory``."""
    ...

class Trainer:
    """Base class of all trainers (see ``Tokenizer.train``)."""
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes) -> None: ...
    @property
    def max_memory(self) -> Optional[int]:
        """The memory budget in bytes (None: half of the RAM)."""
        ...
    @max_memory.setter
    def max_memory(self, value: Optional[_Size]) -> None: ...
    @property
    def spill_dir(self) -> Optional[str]:
        """Where counting spills sorted runs (None: the system's temporary folder)."""
        ...
    @spill_dir.setter
    def spill_dir(self, value: Optional[_Path]) -> None: ...
    def train_from_counts(self, counts: WordCounts) -> Model:
        """A model of this trainer's kind (default options) trained on ``counts``."""
        ...

class _TrainerOptions(Trainer):
    """Stub-only base (no such class at run time): the options of every concrete trainer."""

    vocab_size: int
    show_progress: bool
    @property
    def special_tokens(self) -> List[AddedToken]:
        """The special tokens as ``AddedToken`` objects (marked special)."""
        ...
    @special_tokens.setter
    def special_tokens(self, value: Iterable[Union[str, AddedToken]]) -> None: ...

class _BpeOptions(_TrainerOptions):
    """Stub-only base: the options BpeTrainer and WordPieceTrainer share."""

    min_frequency: int
    limit_alphabet: Optional[int]
    initial_alphabet: List[str]
    continuing_subword_prefix: Optional[str]
    end_of_word_suffix: Optional[str]

class BpeTrainer(_BpeOptions):
    """Trainer of a BPE model (tokenizers' options; deterministic tie-breaking)."""
    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Optional[Iterable[Union[str, AddedToken]]] = None,
        limit_alphabet: Optional[int] = None,
        initial_alphabet: Optional[List[str]] = None,
        continuing_subword_prefix: Optional[str] = None,
        end_of_word_suffix: Optional[str] = None,
        max_token_length: Optional[int] = None,
        *,
        max_memory: Optional[_Size] = None,
        spill_dir: Optional[_Path] = None,
    ) -> None: ...
    max_token_length: Optional[int]
    @property
    def merge_history(self) -> List[Tuple[str, str, int]]:
        """Merges of the last training run, in order, as (left, right, count)."""
        ...

class WordPieceTrainer(_BpeOptions):
    """Trainer of a WordPiece model (tokenizers' options). ``algorithm``: ``"bpe"`` (default,
    the same vocabulary as tokenizers) or ``"likelihood"`` (classic WordPiece score
    ``count(ab) / (count(a) * count(b))``; ties to the lowest pair of ids)."""
    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Optional[Iterable[Union[str, AddedToken]]] = None,
        limit_alphabet: Optional[int] = None,
        initial_alphabet: Optional[List[str]] = None,
        continuing_subword_prefix: Optional[str] = "##",
        end_of_word_suffix: Optional[str] = None,
        algorithm: str = "bpe",
        *,
        max_memory: Optional[_Size] = None,
        spill_dir: Optional[_Path] = None,
    ) -> None: ...
    algorithm: str
    @property
    def merge_history(self) -> List[Tuple[str, str, Union[int, float]]]:
        """Merges of the last training run, in order: (left, right, count) with ``"bpe"``,
        (left, right, score) with ``"likelihood"``."""
        ...

class WordLevelTrainer(_TrainerOptions):
    """Trainer of a WordLevel model (tokenizers' options and vocabulary): the special tokens,
    then the words by decreasing count, equal counts in increasing byte (code-point) order, cut
    at ``vocab_size``; words seen fewer than ``min_frequency`` times are left out."""
    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: Optional[Iterable[Union[str, AddedToken]]] = None,
        *,
        max_memory: Optional[_Size] = None,
        spill_dir: Optional[_Path] = None,
    ) -> None: ...
    min_frequency: int

class UnigramTrainer(_TrainerOptions):
    """Trainer of a Unigram model: tokenizers' options and vocabulary (its port of SentencePiece's
    algorithm), deterministic; trains only a Unigram model."""
    def __init__(
        self,
        vocab_size: int = 8000,
        show_progress: bool = True,
        special_tokens: Optional[Iterable[Union[str, AddedToken]]] = None,
        initial_alphabet: Optional[List[str]] = None,
        shrinking_factor: float = 0.75,
        unk_token: Optional[str] = None,
        max_piece_length: int = 16,
        n_sub_iterations: int = 2,
        seed_size: int = 1000000,
        *,
        max_memory: Optional[_Size] = None,
        spill_dir: Optional[_Path] = None,
    ) -> None: ...
    initial_alphabet: List[str]
    shrinking_factor: float
    unk_token: Optional[str]
    max_piece_length: int
    n_sub_iterations: int
    seed_size: int
