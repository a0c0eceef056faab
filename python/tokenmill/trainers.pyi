from collections.abc import Iterable
from typing import List, Optional, Tuple, Union

from tokenmill.tokenizer import AddedToken

class Trainer:
    """Base class of all trainers (see ``Tokenizer.train``)."""
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes) -> None: ...

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
    ) -> None: ...
    initial_alphabet: List[str]
    shrinking_factor: float
    unk_token: Optional[str]
    max_piece_length: int
    n_sub_iterations: int
    seed_size: int
