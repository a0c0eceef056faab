from os import PathLike
from typing import Dict, List, Optional, Tuple, Union

from tokenmill.trainers import Trainer

class Token:
    """A token produced by a model: its id, its text, and its byte offsets in the piece."""
    def __init__(self, id: int, value: str, offsets: Tuple[int, int]) -> None: ...
    @property
    def id(self) -> int: ...
    @property
    def value(self) -> str: ...
    @property
    def offsets(self) -> Tuple[int, int]: ...
    def as_tuple(self) -> Tuple[int, str, Tuple[int, int]]: ...

class Model:
    """Base class of all models."""
    def __init__(self) -> None: ...
    def tokenize(self, sequence: str) -> List[Token]: ...
    def token_to_id(self, token: str) -> Optional[int]: ...
    def id_to_token(self, id: int) -> Optional[str]: ...
    def get_vocab(self) -> Dict[str, int]: ...
    def get_vocab_size(self) -> int: ...
    def get_trainer(self) -> Trainer:
        """A trainer for this kind of model with default settings (BPE: ``BpeTrainer``)."""
        ...
    def save(
        self, folder: Union[str, PathLike], prefix: Optional[str] = None, name: Optional[str] = None
    ) -> List[str]:
        """Writes the model's files into ``folder`` and returns their paths. Each file is saved
        atomically; a save killed between two files (BPE's ``vocab.json``, then ``merges.txt``)
        leaves the first new and the second old."""
        ...
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes) -> None: ...

class BPE(Model):
    """Byte-pair-encoding model (classic or byte-level), as ``tokenizers.models.BPE``."""
    def __init__(
        self,
        vocab: Optional[Union[Dict[str, int], str, PathLike]] = None,
        merges: Optional[Union[List[Tuple[str, str]], str, PathLike]] = None,
        cache_capacity: Optional[int] = None,
        dropout: Optional[float] = None,
        unk_token: Optional[str] = None,
        continuing_subword_prefix: Optional[str] = None,
        end_of_word_suffix: Optional[str] = None,
        fuse_unk: Optional[bool] = None,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        dropout_seed: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def read_file(
        vocab: Union[str, PathLike], merges: Union[str, PathLike]
    ) -> Tuple[Dict[str, int], List[Tuple[str, str]]]: ...
    @classmethod
    def from_file(
        cls, vocab: Union[str, PathLike], merges: Union[str, PathLike], **kwargs
    ) -> BPE: ...
    dropout: Optional[float]
    dropout_seed: Optional[int]
    unk_token: Optional[str]
    continuing_subword_prefix: Optional[str]
    end_of_word_suffix: Optional[str]
    fuse_unk: bool
    byte_fallback: bool
    ignore_merges: bool
    def _clear_cache(self) -> None: ...
    def _resize_cache(self, capacity: int) -> None: ...

class WordPiece(Model):
    """WordPiece model (BERT), as ``tokenizers.models.WordPiece``: greedy longest match first,
    linear in the word length; a word over ``max_input_chars_per_word`` characters or with an
    unmatched part becomes ``unk_token``."""
    def __init__(
        self,
        vocab: Optional[Union[Dict[str, int], str, PathLike]] = None,
        unk_token: Optional[str] = None,
        max_input_chars_per_word: Optional[int] = None,
        continuing_subword_prefix: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def read_file(vocab: Union[str, PathLike]) -> Dict[str, int]:
        """``vocab.txt`` as token → id; ``FormatError`` on duplicates / invalid UTF-8 (file,
        line)."""
        ...
    @classmethod
    def from_file(cls, vocab: Union[str, PathLike], **kwargs) -> WordPiece:
        """A model from ``vocab.txt``; the unk token must be in it (``FormatError`` otherwise)."""
        ...
    unk_token: str
    continuing_subword_prefix: str
    max_input_chars_per_word: int

class WordLevel(Model):
    """WordLevel model, as ``tokenizers.models.WordLevel``: a word in the vocabulary is its own
    token; another word is ``unk_token`` (default ``"<unk>"``), or an error when the vocabulary
    lacks ``unk_token`` too."""
    def __init__(
        self,
        vocab: Optional[Union[Dict[str, int], str, PathLike]] = None,
        unk_token: Optional[str] = None,
    ) -> None: ...
    @staticmethod
    def read_file(vocab: Union[str, PathLike]) -> Dict[str, int]:
        """``vocab.json`` as token → id; ``FormatError`` naming the file and line if malformed."""
        ...
    @classmethod
    def from_file(cls, vocab: Union[str, PathLike], unk_token: Optional[str] = None) -> WordLevel:
        """A model from ``vocab.json`` (the unk token need not be in it)."""
        ...
    unk_token: str

class Unigram(Model):
    """SentencePiece's unigram model, as ``tokenizers.models.Unigram``."""
    def __init__(
        self,
        vocab: Optional[List[Tuple[str, float]]] = None,
        unk_id: Optional[int] = None,
        byte_fallback: Optional[bool] = None,
        alpha: Optional[float] = None,
        nbest_size: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def _from_sentencepiece(
        pieces: List[Tuple[str, float, int]], unk_id: int, byte_fallback: bool = False
    ) -> Unigram:
        """A model with sentencepiece's scoring rules from (piece, score, type) triples."""
    alpha: Optional[float]
    nbest_size: Optional[int]
    @property
    def byte_fallback(self) -> bool: ...
    @property
    def unk_id(self) -> Optional[int]: ...
    def get_pieces(self) -> List[Tuple[str, float]]:
        """The vocabulary as (piece, score) by id."""
    def get_score(self, id: int) -> float:
        """The score of piece ``id``."""
    def set_seed(self, seed: int) -> None:
        """Re-seeds the sampling generator."""
    def nbest(self, sequence: str, nbest_size: int) -> List[Tuple[List[Token], float]]:
        """The n best segmentations with their scores (sentencepiece's nbest_encode)."""
    def sample(
        self, sequence: str, alpha: float = 0.1, nbest_size: int = -1, seed: Optional[int] = None
    ) -> List[Token]:
        """A sampled segmentation (sentencepiece's sampling rule)."""
    def entropy(self, sequence: str, alpha: float = 1.0) -> float:
        """Entropy of the segmentation distribution."""
    def log_likelihood(self, sequence: str) -> float:
        """log P(sequence) summed over all segmentations."""
    def _clear_cache(self) -> None: ...
    def _resize_cache(self, capacity: int) -> None: ...
