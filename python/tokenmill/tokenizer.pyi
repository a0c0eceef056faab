"""Type stubs for tokenmill.Tokenizer, tokenmill.Encoding and tokenmill.AddedToken."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

# The input type aliases and enums (one definition, shared with tokenizer.py), re-exported.
from tokenmill._input_types import (
    EncodeInput as EncodeInput,
    InputSequence as InputSequence,
    OffsetReferential as OffsetReferential,
    Offsets as Offsets,
    OffsetType as OffsetType,
    PreTokenizedEncodeInput as PreTokenizedEncodeInput,
    PreTokenizedInputSequence as PreTokenizedInputSequence,
    SplitDelimiterBehavior as SplitDelimiterBehavior,
    TextEncodeInput as TextEncodeInput,
    TextInputSequence as TextInputSequence,
)
from tokenmill.batch_encoding import tokenizer_call
from tokenmill.decoders import Decoder
from tokenmill.models import Model
from tokenmill.normalizers import Normalizer
from tokenmill.pre_tokenizers import PreTokenizer
from tokenmill.processors import PostProcessor
from tokenmill.trainers import Trainer, WordCounts

class AddedToken:
    """A token added on top of a model's vocabulary (see ``tokenizers.AddedToken``)."""

    def __init__(
        self,
        content: Optional[str] = None,
        single_word: Optional[bool] = None,
        lstrip: Optional[bool] = None,
        rstrip: Optional[bool] = None,
        normalized: Optional[bool] = None,
        special: Optional[bool] = None,
    ) -> None: ...
    content: str
    special: bool
    @property
    def single_word(self) -> bool: ...
    @property
    def lstrip(self) -> bool: ...
    @property
    def rstrip(self) -> bool: ...
    @property
    def normalized(self) -> bool: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class EncodingBatch:
    """The encodings of a batch, kept natively; indexing gives a copy of a row's
    :class:`Encoding`."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Encoding: ...

class Encoding:
    """The output of :meth:`Tokenizer.encode`; all lists have one item per token."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    @staticmethod
    def merge(encodings: Sequence[Encoding], growing_offsets: bool = True) -> Encoding: ...
    @property
    def n_sequences(self) -> int: ...
    def set_sequence_id(self, sequence_id: int) -> None: ...
    @property
    def ids(self) -> list[int]: ...
    @property
    def tokens(self) -> list[str]: ...
    @property
    def words(self) -> list[Optional[int]]: ...
    @property
    def word_ids(self) -> list[Optional[int]]: ...
    @property
    def sequence_ids(self) -> list[Optional[int]]: ...
    @property
    def type_ids(self) -> list[int]: ...
    @property
    def offsets(self) -> list[Tuple[int, int]]: ...
    @property
    def special_tokens_mask(self) -> list[int]: ...
    @property
    def attention_mask(self) -> list[int]: ...
    @property
    def overflowing(self) -> list[Encoding]: ...
    def word_to_tokens(
        self, word_index: int, sequence_index: int = 0
    ) -> Optional[Tuple[int, int]]: ...
    def word_to_chars(
        self, word_index: int, sequence_index: int = 0
    ) -> Optional[Tuple[int, int]]: ...
    def token_to_sequence(self, token_index: int) -> Optional[int]: ...
    def token_to_chars(self, token_index: int) -> Optional[Tuple[int, int]]: ...
    def token_to_word(self, token_index: int) -> Optional[int]: ...
    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> Optional[int]: ...
    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> Optional[int]: ...
    def pad(
        self,
        length: int,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
    ) -> None: ...
    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None: ...
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: bytes) -> None: ...

class Tokenizer:
    """normalizer → pre_tokenizer → model → post_processor, and decoder back.

    The component setters, ``Tokenizer(model)``, ``add_tokens`` / ``add_special_tokens`` and the
    ``trainer`` arguments also take the equivalent Hugging Face ``tokenizers`` objects, converted
    through their JSON state (a copy; see ``tokenmill._foreign``)."""

    def __init__(self, model: Model) -> None: ...
    @staticmethod
    def from_str(json: str) -> Tokenizer: ...
    @staticmethod
    def from_file(path: Union[str, os.PathLike[str]]) -> Tokenizer: ...
    @staticmethod
    def from_buffer(buffer: bytes) -> Tokenizer: ...
    @staticmethod
    def from_pretrained(
        identifier: Union[str, os.PathLike[str]],
        revision: Optional[str] = None,
        cache_dir: Optional[Union[str, os.PathLike[str]]] = None,
        download: bool = False,
        token: Optional[str] = None,
    ) -> Tokenizer:
        """A Hugging Face model folder, hub-cache folder or cached hub id, from disk (no network
        unless download=True); tokenizer.json, or vocab.json + merges.txt, or vocab.txt."""
    def save_pretrained(
        self,
        save_directory: Union[str, os.PathLike[str]],
        special_tokens_map: Optional[dict[str, str]] = None,
        model_max_length: Optional[int] = None,
    ) -> tuple[str, str, str]:
        """tokenizer.json, tokenizer_config.json, special_tokens_map.json for
        transformers.AutoTokenizer."""
    def train_new_from_iterator(
        self,
        text_iterator: Iterable[Union[str, Sequence[str]]],
        vocab_size: int,
        length: Optional[int] = None,
        new_special_tokens: Optional[Sequence[Union[str, AddedToken]]] = None,
        special_tokens_map: Optional[dict[str, str]] = None,
        **kwargs: Any,
    ) -> Tokenizer:
        """This pipeline retrained on a new corpus (as transformers' train_new_from_iterator)."""
    def to_str(self, pretty: bool = False) -> str: ...
    def save(self, path: Union[str, os.PathLike[str]], pretty: bool = True) -> None: ...
    model: Model
    normalizer: Optional[Normalizer]
    pre_tokenizer: Optional[PreTokenizer]
    post_processor: Optional[PostProcessor]
    decoder: Optional[Decoder]
    encode_special_tokens: bool
    @property
    def truncation(self) -> Optional[dict[str, Any]]: ...
    @property
    def padding(self) -> Optional[dict[str, Any]]: ...
    def enable_truncation(
        self,
        max_length: int,
        stride: int = 0,
        strategy: str = "longest_first",
        direction: str = "right",
    ) -> None: ...
    def no_truncation(self) -> None: ...
    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: Optional[int] = None,
        pad_to_multiple_of: Optional[int] = None,
        max_length: Optional[int] = None,
    ) -> None: ...
    def no_padding(self) -> None: ...
    __call__ = tokenizer_call
    def encode_batch_with(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
        truncation: Optional[dict[str, Any]] = None,
        padding: Optional[dict[str, Any]] = None,
    ) -> list[Encoding]: ...
    def encode_batch_arrays(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> dict[str, npt.NDArray[np.int64]]: ...
    @staticmethod
    def _stack_encodings(
        encodings: Sequence[Encoding], fields: Sequence[str]
    ) -> Optional[dict[str, npt.NDArray[np.int64]]]: ...
    def _encode_to_arrays(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool,
        add_special_tokens: bool,
        truncation: Optional[dict[str, Any]],
        padding: Optional[dict[str, Any]],
        fields: Sequence[str],
        with_overflowing: bool,
    ) -> Tuple[Optional[dict[str, npt.NDArray[np.int64]]], EncodingBatch, list[int]]: ...
    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]: ...
    def get_vocab_size(self, with_added_tokens: bool = True) -> int: ...
    def get_added_tokens_decoder(self) -> dict[int, AddedToken]: ...
    def token_to_id(self, token: str) -> Optional[int]: ...
    def id_to_token(self, id: int) -> Optional[str]: ...
    def add_tokens(self, tokens: Sequence[Union[str, AddedToken]]) -> int: ...
    def add_special_tokens(self, tokens: Sequence[Union[str, AddedToken]]) -> int: ...
    def num_special_tokens_to_add(self, is_pair: bool) -> int: ...
    def encode(
        self,
        sequence: InputSequence,
        pair: Optional[InputSequence] = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding: ...
    def encode_batch(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> list[Encoding]: ...
    # encode_batch with offsets in bytes of the UTF-8 input (tokenizers' name); the same call.
    encode_batch_fast = encode_batch
    def encode_batch_ids(
        self, texts: Iterable[str], add_special_tokens: bool = True
    ) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]: ...
    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str: ...
    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True
    ) -> list[str]: ...
    def async_encode(
        self,
        sequence: InputSequence,
        pair: Optional[InputSequence] = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> asyncio.Future[Encoding]: ...
    def async_encode_batch(
        self,
        input: Iterable[EncodeInput],
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> asyncio.Future[list[Encoding]]: ...
    async_encode_batch_fast = async_encode_batch  # encode_batch_fast as an awaitable
    def async_decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True
    ) -> asyncio.Future[list[str]]: ...
    def post_process(
        self, encoding: Encoding, pair: Optional[Encoding] = None, add_special_tokens: bool = True
    ) -> Encoding: ...
    def train(self, files: Sequence[str], trainer: Optional[Trainer] = None) -> None: ...
    def train_from_iterator(
        self,
        iterator: Union[Iterable[str], Iterable[Iterable[str]], Iterator[str]],
        trainer: Optional[Trainer] = None,
        length: Optional[int] = None,
    ) -> None: ...
    def train_from_counts(self, counts: WordCounts, trainer: Optional[Trainer] = None) -> None:
        """Trains on counts from ``tokenmill.trainers.count_words`` (possibly merged with
        ``+``): the same model as ``train`` on the corpus they were counted from."""
        ...
    def _count_words(
        self,
        files: Optional[List[str]],
        iterator: Optional[Iterable[Any]],
        max_memory: Optional[Union[int, str]] = None,
        spill_dir: Optional[Union[str, os.PathLike[str]]] = None,
    ) -> WordCounts: ...
