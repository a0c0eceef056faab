"""Model inputs the way Hugging Face ``transformers`` builds them: ``tokenizer(text, ...)``.

Calling a :class:`tokenmill.Tokenizer` like a ``transformers`` fast tokenizer returns a
:class:`BatchEncoding` (a mapping with ``input_ids``, ``token_type_ids``, ``attention_mask``,
``offset_mapping``, ``overflow_to_sample_mapping``, ...) whose values equal what
``transformers.PreTrainedTokenizerFast`` gives for the same tokenizer. The semantics follow
``transformers`` 5:

- ``padding``: ``True`` / ``"longest"`` (to the longest of the batch), ``"max_length"`` (to
  ``max_length``), ``False`` / ``"do_not_pad"``; ``truncation``: ``True`` / ``"longest_first"``,
  ``"only_first"``, ``"only_second"``, ``False`` / ``"do_not_truncate"``; ``max_length`` alone
  turns on ``"longest_first"`` truncation. A tokenmill tokenizer has no ``model_max_length``, so
  truncation or ``"max_length"`` padding without a ``max_length`` does nothing (as
  ``transformers`` does for a tokenizer without a known maximum).
- Padding uses the tokenizer's own padding settings for the pad token, id, type id and side
  when :meth:`Tokenizer.enable_padding` was called, else the first of ``[PAD]``, ``<pad>``,
  ``<|pad|>``, ``<PAD>`` that the vocabulary has; truncation cuts on the side of the
  tokenizer's own truncation settings (right by default). The tokenizer itself is not changed.
- With ``return_overflowing_tokens=True`` every overflowing window is an extra row and
  ``overflow_to_sample_mapping`` gives the input each row came from.
- ``token_type_ids`` are returned by default only when the tokenizer uses segments (its
  post-processor gives the second sequence of a pair type id 1, as BERT's does), standing in
  for ``transformers``' ``model_input_names``; ``return_token_type_ids`` decides explicitly.
- ``return_tensors="np"`` stacks the values into int64 NumPy arrays (built natively, without a
  Python object per token).

Errors are tokenmill exceptions: :class:`tokenmill.InvalidArgumentError` for settings that do
not make sense, :class:`tokenmill.InputTypeError` for text that is not a str (or list of str).
"""

from __future__ import annotations

from collections import UserDict
from collections.abc import Sequence
from typing import Any, NamedTuple, Optional, Union

from tokenmill import _native
from tokenmill._input_types import InputSequence

__all__ = ["BatchEncoding", "CharSpan", "TokenSpan", "tokenizer_call"]

PAD_TOKEN_CANDIDATES = ("[PAD]", "<pad>", "<|pad|>", "<PAD>")
TRUNCATION_STRATEGIES = ("longest_first", "only_first", "only_second")


class CharSpan(NamedTuple):
    """A span of characters of the input string: ``start`` and ``end`` (exclusive)."""

    start: int
    end: int


class TokenSpan(NamedTuple):
    """A span of tokens of an encoding: ``start`` and ``end`` (exclusive)."""

    start: int
    end: int


class _Rows(Sequence):
    """The :class:`tokenmill.Encoding` of every row of a native ``EncodingBatch``, each made on
    first access (and then kept, so a row is always the same object)."""

    def __init__(self, batch):
        self._batch = batch
        self._made = [None] * len(batch)

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        encoding = self._made[index]
        if encoding is None:
            encoding = self._made[index] = self._batch[index]
        return encoding


class BatchEncoding(UserDict):
    """The result of calling a :class:`tokenmill.Tokenizer`: a dict of model inputs (lists, or
    NumPy arrays with ``return_tensors="np"``) plus the :class:`tokenmill.Encoding` of every row
    for the alignment methods (``tokens(i)``, ``word_ids(i)``, ``char_to_token(i, c)``, ...),
    as ``transformers.BatchEncoding``."""

    def __init__(
        self,
        data: Optional[dict] = None,
        encodings: Optional[list] = None,
        n_sequences: Optional[int] = None,
    ):
        super().__init__(data)
        self._encodings = encodings
        if n_sequences is None and encodings:
            n_sequences = encodings[0].n_sequences
        self._n_sequences = n_sequences

    def __getitem__(self, item):
        """A key gives its value; an int the :class:`Encoding` of that row; a slice the values
        of those rows."""
        if isinstance(item, str):
            return self.data[item]
        if self._encodings is not None and isinstance(item, int):
            return self._encodings[item]
        if isinstance(item, slice):
            return {key: value[item] for key, value in self.data.items()}
        raise KeyError(
            "BatchEncoding keys are str (the inputs), int (an Encoding) or slices, not "
            f"{type(item).__name__}"
        )

    def __getattr__(self, item: str):
        try:
            return self.__dict__["data"][item]
        except KeyError:
            raise AttributeError(item) from None

    def __getstate__(self):
        return {"data": self.data, "encodings": self.encodings, "n_sequences": self._n_sequences}

    def __setstate__(self, state):
        self.data = state["data"]
        self._encodings = state["encodings"]
        self._n_sequences = state.get("n_sequences")

    @property
    def encodings(self) -> Optional[list]:
        """The :class:`tokenmill.Encoding` of every row."""
        if isinstance(self._encodings, _Rows):
            self._encodings = list(self._encodings)
        return self._encodings

    @property
    def is_fast(self) -> bool:
        """Always True: the alignment methods are available."""
        return self._encodings is not None

    @property
    def n_sequences(self) -> Optional[int]:
        """1 for single inputs, 2 for pairs."""
        return self._n_sequences

    def _encoding(self, batch_index: int):
        if not self._encodings:
            raise _native.InvalidArgumentError("this BatchEncoding holds no encodings")
        return self._encodings[batch_index]

    def _row_length(self) -> int:
        return len(self._encodings[0]) if self._encodings else 0

    def tokens(self, batch_index: int = 0) -> list:
        """The tokens of row ``batch_index``."""
        return self._encoding(batch_index).tokens

    def word_ids(self, batch_index: int = 0) -> list:
        """The word index of each token of row ``batch_index`` (None for special tokens)."""
        return self._encoding(batch_index).word_ids

    def words(self, batch_index: int = 0) -> list:
        """Alias of :meth:`word_ids`."""
        return self.word_ids(batch_index)

    def sequence_ids(self, batch_index: int = 0) -> list:
        """The sequence index of each token of row ``batch_index`` (None for special tokens)."""
        return self._encoding(batch_index).sequence_ids

    def _batch_and_index(self, first: int, second: Optional[int], negative_from_length: bool):
        batch_index, index = (0, first) if second is None else (first, second)
        if batch_index < 0:
            batch_index += len(self._encodings or [])
        if negative_from_length and index < 0:
            index += self._row_length()
        return batch_index, index

    def token_to_sequence(
        self, batch_or_token_index: int, token_index: Optional[int] = None
    ) -> Optional[int]:
        """The sequence of a token: ``(token)`` for row 0, or ``(row, token)``."""
        b, t = self._batch_and_index(batch_or_token_index, token_index, True)
        return self._encoding(b).token_to_sequence(t)

    def token_to_word(
        self, batch_or_token_index: int, token_index: Optional[int] = None
    ) -> Optional[int]:
        """The word of a token: ``(token)`` for row 0, or ``(row, token)``."""
        b, t = self._batch_and_index(batch_or_token_index, token_index, True)
        return self._encoding(b).token_to_word(t)

    def word_to_tokens(
        self, batch_or_word_index: int, word_index: Optional[int] = None, sequence_index: int = 0
    ) -> Optional[TokenSpan]:
        """The tokens of a word as a :class:`TokenSpan`, or None."""
        b, w = self._batch_and_index(batch_or_word_index, word_index, True)
        span = self._encoding(b).word_to_tokens(w, sequence_index)
        return TokenSpan(*span) if span is not None else None

    def token_to_chars(
        self, batch_or_token_index: int, token_index: Optional[int] = None
    ) -> Optional[CharSpan]:
        """The characters of a token as a :class:`CharSpan`, or None."""
        b, t = (
            (0, batch_or_token_index)
            if token_index is None
            else (batch_or_token_index, token_index)
        )
        span = self._encoding(b).token_to_chars(t)
        return CharSpan(*span) if span is not None else None

    def char_to_token(
        self, batch_or_char_index: int, char_index: Optional[int] = None, sequence_index: int = 0
    ) -> Optional[int]:
        """The token holding a character: ``(char)`` for row 0, or ``(row, char)``."""
        b, c = (0, batch_or_char_index) if char_index is None else (batch_or_char_index, char_index)
        return self._encoding(b).char_to_token(c, sequence_index)

    def word_to_chars(
        self, batch_or_word_index: int, word_index: Optional[int] = None, sequence_index: int = 0
    ) -> CharSpan:
        """The characters of a word as a :class:`CharSpan`."""
        b, w = (0, batch_or_word_index) if word_index is None else (batch_or_word_index, word_index)
        span = self._encoding(b).word_to_chars(w, sequence_index)
        if span is None:
            raise _native.InvalidArgumentError(
                f"word {w} of sequence {sequence_index} has no characters in row {b}"
            )
        return CharSpan(*span)

    def char_to_word(
        self, batch_or_char_index: int, char_index: Optional[int] = None, sequence_index: int = 0
    ) -> Optional[int]:
        """The word holding a character: ``(char)`` for row 0, or ``(row, char)``."""
        b, c = (0, batch_or_char_index) if char_index is None else (batch_or_char_index, char_index)
        return self._encoding(b).char_to_word(c, sequence_index)

    def convert_to_tensors(self, tensor_type: Optional[str] = None) -> BatchEncoding:
        """Turns the values into NumPy arrays (``tensor_type="np"``); None leaves them alone."""
        if tensor_type is None:
            return self
        if tensor_type != "np":
            raise _native.InvalidArgumentError(
                f"return_tensors={tensor_type!r} is not supported: use 'np' or None"
            )
        import numpy as np

        for key, value in list(self.data.items()):
            if isinstance(value, np.ndarray):
                continue
            lengths = (
                {len(v) for v in value} if value and isinstance(value[0], (list, tuple)) else set()
            )
            if len(lengths) > 1:
                raise _native.InvalidArgumentError(
                    f"cannot make a tensor of {key!r}: rows have different lengths; use "
                    "padding=True and/or truncation=True"
                )
            self.data[key] = np.asarray(value, dtype=np.int64)
        return self


def _is_text_input(value: Any) -> bool:
    """str, list of str, list of lists of str, list of pairs of lists (transformers' check)."""
    if isinstance(value, str):
        return True
    if isinstance(value, (list, tuple)):
        if len(value) == 0 or isinstance(value[0], str):
            return True
        if isinstance(value[0], (list, tuple)):
            inner = value[0]
            if len(inner) == 0 or isinstance(inner[0], str):
                return True
            if isinstance(inner[0], (list, tuple)):
                return len(inner[0]) == 0 or isinstance(inner[0][0], str)
    return False


def _strategies(padding, truncation, max_length, pad_to_multiple_of):
    """(padding strategy, truncation strategy, max_length) as transformers resolves them, for
    a tokenizer without a model_max_length."""
    if max_length is not None and padding is False and truncation is None:
        truncation = "longest_first"
    if padding is True:
        padding = "longest"
    elif padding is False or padding is None:
        padding = "do_not_pad"
    padding = getattr(padding, "value", padding)
    if padding not in ("longest", "max_length", "do_not_pad"):
        raise _native.InvalidArgumentError(
            f"padding={padding!r}: use True, False, 'longest', 'max_length' or 'do_not_pad'"
        )
    if truncation is True:
        truncation = "longest_first"
    elif truncation is False or truncation is None:
        truncation = "do_not_truncate"
    truncation = getattr(truncation, "value", truncation)
    if truncation not in TRUNCATION_STRATEGIES + ("do_not_truncate",):
        raise _native.InvalidArgumentError(
            f"truncation={truncation!r}: use True, False, 'longest_first', 'only_first', "
            "'only_second' or 'do_not_truncate'"
        )
    if max_length is None:
        # no model_max_length: nothing to truncate or pad to
        if padding == "max_length":
            padding = "do_not_pad"
        truncation = "do_not_truncate"
    elif not isinstance(max_length, int) or max_length < 0:
        raise _native.InvalidArgumentError(
            f"max_length must be a non-negative int, got {max_length!r}"
        )
    if pad_to_multiple_of is not None and (
        not isinstance(pad_to_multiple_of, int) or pad_to_multiple_of < 0
    ):
        raise _native.InvalidArgumentError(
            f"pad_to_multiple_of must be a non-negative int, got {pad_to_multiple_of!r}"
        )
    if (
        truncation != "do_not_truncate"
        and padding != "do_not_pad"
        and pad_to_multiple_of
        and max_length is not None
        and max_length % pad_to_multiple_of != 0
    ):
        raise _native.InvalidArgumentError(
            f"truncation and padding are both on but the truncation length ({max_length}) is not "
            "a multiple of "
            f"pad_to_multiple_of ({pad_to_multiple_of})"
        )
    return padding, truncation, max_length


def _pad_settings(tokenizer) -> dict:
    """Pad token, id, type id and side: the tokenizer's padding settings, else a pad token of
    the vocabulary."""
    own = tokenizer.padding
    if own is not None:
        return {k: own[k] for k in ("pad_id", "pad_token", "pad_type_id", "direction")}
    for token in PAD_TOKEN_CANDIDATES:
        pad_id = tokenizer.token_to_id(token)
        if pad_id is not None:
            return {"pad_id": pad_id, "pad_token": token, "pad_type_id": 0, "direction": "right"}
    raise _native.InvalidArgumentError(
        "asked to pad but the tokenizer has no padding token: call "
        "tokenizer.enable_padding(pad_id=..., pad_token=...) "
        "or add one of " + ", ".join(PAD_TOKEN_CANDIDATES) + " as a special token"
    )


def _uses_segments(tokenizer) -> bool:
    """Whether the post-processor marks a pair's second sequence with type id 1 (BERT-style
    segments): probed on a pair of empty encodings."""
    try:
        probe = tokenizer.post_process(_native.Encoding(), _native.Encoding(), True)
    except _native.TokenmillError:
        return False
    return any(probe.type_ids)


def tokenizer_call(
    tokenizer,
    text: Optional[Union[InputSequence, Sequence[InputSequence]]] = None,
    text_pair: Optional[Union[InputSequence, Sequence[InputSequence]]] = None,
    add_special_tokens: bool = True,
    padding: Union[bool, str] = False,
    truncation: Optional[Union[bool, str]] = None,
    max_length: Optional[int] = None,
    stride: int = 0,
    is_split_into_words: bool = False,
    pad_to_multiple_of: Optional[int] = None,
    padding_side: Optional[str] = None,
    return_tensors: Optional[str] = None,
    return_token_type_ids: Optional[bool] = None,
    return_attention_mask: Optional[bool] = None,
    return_overflowing_tokens: bool = False,
    return_special_tokens_mask: bool = False,
    return_offsets_mapping: bool = False,
    return_length: bool = False,
    verbose: bool = True,
) -> BatchEncoding:
    """``tokenizer(text, text_pair=None, ...)``: see the module documentation. (The stub of
    ``Tokenizer.__call__`` is this function.)"""
    if text is None:
        raise _native.InvalidArgumentError(
            "no text given: pass a str, a list of str, or (with is_split_into_words) lists of words"
        )
    for name, value in (("text", text), ("text_pair", text_pair)):
        if value is not None and not _is_text_input(value):
            raise _native.InputTypeError(
                f"{name} must be a str, a list of str (a batch, or one pre-tokenized input), a "
                "list of lists of str "
                f"(a pre-tokenized batch), got {type(value).__name__}"
            )
    if is_split_into_words:
        is_batched = (
            isinstance(text, (list, tuple)) and bool(text) and isinstance(text[0], (list, tuple))
        )
    else:
        is_batched = isinstance(text, (list, tuple))
    if is_batched:
        if isinstance(text_pair, str):
            raise _native.InputTypeError(
                "when tokenizing a batch, text_pair must be a list of the same length as text"
            )
        if text_pair is not None and len(text) != len(text_pair):
            raise _native.InvalidArgumentError(
                f"text has {len(text)} items but text_pair has {len(text_pair)}"
            )
        batch: list[Any] = list(zip(text, text_pair)) if text_pair is not None else list(text)
    else:
        # as transformers: an empty pair counts as no pair
        batch = [(text, text_pair)] if text_pair else [text]
    if not isinstance(stride, int) or stride < 0:
        raise _native.InvalidArgumentError(f"stride must be a non-negative int, got {stride!r}")

    padding, truncation, max_length = _strategies(
        padding, truncation, max_length, pad_to_multiple_of
    )
    truncation_params = None
    if truncation != "do_not_truncate":
        own = tokenizer.truncation
        direction = own["direction"] if own is not None else "right"
        truncation_params = {
            "max_length": max_length,
            "stride": stride,
            "strategy": truncation,
            "direction": direction,
        }
    padding_params = None
    if padding != "do_not_pad":
        padding_params = _pad_settings(tokenizer)
        if padding_side is not None:
            padding_params["direction"] = padding_side
        padding_params["length"] = max_length if padding == "max_length" else None
        padding_params["pad_to_multiple_of"] = pad_to_multiple_of

    fields = ["input_ids"]
    if return_token_type_ids is None:
        return_token_type_ids = _uses_segments(tokenizer)
    if return_token_type_ids:
        fields.append("token_type_ids")
    if return_attention_mask is None or return_attention_mask:
        fields.append("attention_mask")
    if return_special_tokens_mask:
        fields.append("special_tokens_mask")
    if return_offsets_mapping:
        fields.append("offset_mapping")

    if return_tensors is not None:
        if return_tensors != "np":
            raise _native.InvalidArgumentError(
                f"return_tensors={return_tensors!r} is not supported: use 'np' or None"
            )
        # One native call encodes, pads and fills the arrays in parallel without the GIL; the
        # rows' Encoding objects are only made when asked for.
        data, native_rows, row_sample = tokenizer._encode_to_arrays(
            batch,
            is_split_into_words,
            add_special_tokens,
            truncation_params,
            padding_params,
            fields,
            return_overflowing_tokens,
        )
        if data is None:
            raise _native.InvalidArgumentError(
                "cannot make tensors: rows have different lengths; use padding=True and/or "
                "truncation=True"
            )
        rows = _Rows(native_rows)
        if return_length:
            data["length"] = [data["input_ids"].shape[1]] * len(rows)
        if return_overflowing_tokens:
            data["overflow_to_sample_mapping"] = row_sample
        return BatchEncoding(data, rows).convert_to_tensors(return_tensors)

    encodings = tokenizer.encode_batch_with(
        batch,
        is_pretokenized=is_split_into_words,
        add_special_tokens=add_special_tokens,
        truncation=truncation_params,
        padding=padding_params,
    )
    rows, row_sample = [], []
    for sample, encoding in enumerate(encodings):
        group = [encoding] + (encoding.overflowing if return_overflowing_tokens else [])
        rows += group
        row_sample += [sample] * len(group)
    getters = {
        "input_ids": lambda e: e.ids,
        "token_type_ids": lambda e: e.type_ids,
        "attention_mask": lambda e: e.attention_mask,
        "special_tokens_mask": lambda e: e.special_tokens_mask,
        "offset_mapping": lambda e: e.offsets,
    }
    data = {field: [getters[field](e) for e in rows] for field in fields}
    if return_length:
        data["length"] = [len(e) for e in rows]
    if return_overflowing_tokens:
        data["overflow_to_sample_mapping"] = row_sample
    result = BatchEncoding(data, rows)
    if not is_batched and not return_overflowing_tokens:
        result = BatchEncoding(
            {
                k: (v[0] if len(v) > 0 and isinstance(v[0], list) else v)
                for k, v in result.data.items()
            },
            rows,
        )
    return result
