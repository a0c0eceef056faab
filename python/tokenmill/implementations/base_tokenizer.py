"""What the ready-made tokenizers share: BaseTokenizer (a thin wrapper that forwards everything to
a :class:`tokenmill.Tokenizer`), their model, normalizer and trainer set-ups, their training
methods and the parameters they record."""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import tokenmill
from tokenmill import (
    decoders as _decoders,
    normalizers as _normalizers,
    pre_tokenizers as _pre_tokenizers,
    trainers as _trainers,
)

Offsets = Tuple[int, int]

_UNICODE_NORMALIZERS = ("nfc", "nfd", "nfkc", "nfkd")


def unicode_normalizer_from_str(name: str):
    """The normalizer for ``"nfc"``, ``"nfd"``, ``"nfkc"`` or ``"nfkd"`` (ValueError otherwise)."""
    if name not in _UNICODE_NORMALIZERS:
        raise ValueError(
            f"{name} is not a known unicode normalizer. Available are {_UNICODE_NORMALIZERS}"
        )
    return getattr(_normalizers, name.upper())()


def set_normalizers(tokenizer, unicode_normalizer: Optional[str], lowercase: bool, *others) -> None:
    """Gives ``tokenizer`` the Unicode normalizer named ``unicode_normalizer`` (if any), then
    ``others``, then ``Lowercase`` (if ``lowercase``): none, the single one, or a ``Sequence``."""
    parts = [unicode_normalizer_from_str(unicode_normalizer)] if unicode_normalizer else []
    parts.extend(others)
    if lowercase:
        parts.append(_normalizers.Lowercase())
    if len(parts) == 1:
        tokenizer.normalizer = parts[0]
    elif parts:
        tokenizer.normalizer = _normalizers.Sequence(parts)


def bpe_tokenizer(vocab, merges, unk_token, **options):
    """A tokenizer over a BPE model with ``unk_token`` and ``options``, from ``vocab`` and
    ``merges`` when both are given (else empty, to be trained); ``unk_token`` is made special
    when the vocabulary has it."""
    from tokenmill.models import BPE

    unk = str(unk_token)
    if vocab is not None and merges is not None:
        model = BPE(vocab, merges, unk_token=unk, **options)
    else:
        model = BPE(unk_token=unk, **options)
    tokenizer = tokenmill.Tokenizer(model)
    if tokenizer.token_to_id(unk) is not None:
        tokenizer.add_special_tokens([unk])
    return tokenizer


def set_metaspace(tokenizer, replacement: str, add_prefix_space: bool) -> None:
    """SentencePiece's whitespace handling: Metaspace pre-tokenizer and decoder, with a ▁
    prepended to every text when ``add_prefix_space``."""
    prepend_scheme = "always" if add_prefix_space else "never"
    tokenizer.pre_tokenizer = _pre_tokenizers.Metaspace(
        replacement=replacement, prepend_scheme=prepend_scheme
    )
    tokenizer.decoder = _decoders.Metaspace(replacement=replacement, prepend_scheme=prepend_scheme)


def described(model: str, arguments: Dict[str, Any], *left_out: str) -> Dict[str, Any]:
    """The ``parameters`` a ready-made tokenizer records, as ``tokenizers`` does: the ``model``
    name, then the constructor's ``arguments`` (its ``locals()`` on entry) in their order, but
    for ``self``, the model files (``vocab``, ``merges``) and the ``left_out`` ones."""
    skipped = {"self", "__class__", "vocab", "merges", *left_out}
    return {"model": model, **{k: v for k, v in arguments.items() if k not in skipped}}


def bpe_trainer(
    vocab_size: int = 30000,
    min_frequency: int = 2,
    special_tokens: Sequence[Union[str, tokenmill.AddedToken]] = ("<unk>",),
    limit_alphabet: int = 1000,
    initial_alphabet: Sequence[str] = (),
    suffix: Optional[str] = "</w>",
    show_progress: bool = True,
) -> _trainers.BpeTrainer:
    """The trainer of the character BPE implementations' ``train``: BPE whose words end with
    ``suffix``."""
    return _trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
        limit_alphabet=limit_alphabet,
        initial_alphabet=list(initial_alphabet),
        end_of_word_suffix=suffix,
        show_progress=show_progress,
    )


_ARGUMENT = inspect.Parameter.POSITIONAL_OR_KEYWORD


def training_methods(
    make_trainer: Callable[..., Any],
    length_before: Optional[str] = None,
    fixed: Optional[Dict[str, Any]] = None,
):
    """The ``train`` and ``train_from_iterator`` methods of a ready-made tokenizer whose trainer
    ``make_trainer`` builds from its parameters. Both methods take those parameters, by keyword or
    in order and with ``make_trainer``'s defaults, as ``tokenizers``' methods do;
    ``train_from_iterator`` also takes ``length``, last or just before ``length_before``. The
    ``fixed`` parameters are not taken: ``make_trainer`` always gets their given values. Written
    once here so the training methods of every implementation share one code path, while
    ``help()`` and ``inspect.signature`` still show each one's real parameters."""
    fixed = fixed or {}
    settings = [
        parameter
        for parameter in inspect.signature(make_trainer).parameters.values()
        if parameter.name not in fixed
    ]
    names = [parameter.name for parameter in settings]
    at = len(settings) if length_before is None else names.index(length_before)
    this = inspect.Parameter("self", _ARGUMENT)
    files = inspect.Parameter("files", _ARGUMENT, annotation="Union[str, List[str]]")
    iterator = inspect.Parameter(
        "iterator", _ARGUMENT, annotation="Union[Iterator[str], Iterator[Iterator[str]]]"
    )
    length = inspect.Parameter("length", _ARGUMENT, default=None, annotation="Optional[int]")
    files_signature = inspect.Signature([this, files, *settings])
    iterator_signature = inspect.Signature([this, iterator, *settings[:at], length, *settings[at:]])

    def arguments(signature: inspect.Signature, args, kwargs) -> Dict[str, Any]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def train(*args, **kwargs):
        """Trains the model on the given files."""
        given = arguments(files_signature, args, kwargs)
        self, files = given.pop("self"), given.pop("files")
        self._train_files(files, make_trainer(**given, **fixed))

    def train_from_iterator(*args, **kwargs):
        """Trains the model on strings (or batches of strings) from an iterator."""
        given = arguments(iterator_signature, args, kwargs)
        self, iterator, length = given.pop("self"), given.pop("iterator"), given.pop("length")
        trainer = make_trainer(**given, **fixed)
        self._tokenizer.train_from_iterator(iterator, trainer=trainer, length=length)

    train.__signature__ = files_signature
    train_from_iterator.__signature__ = iterator_signature
    return train, train_from_iterator


class BPEFilesMixin:
    """``from_file`` for the BPE implementations, which all take ``(vocab, merges, **kwargs)``."""

    @classmethod
    def from_file(
        cls,
        vocab_filename: Union[str, os.PathLike],
        merges_filename: Union[str, os.PathLike],
        **kwargs,
    ):
        """A tokenizer of this class from ``vocab.json`` + ``merges.txt`` (GPT-2's
        ``encoder.json`` + ``vocab.bpe`` too); ``kwargs`` go to the constructor."""
        from tokenmill.models import BPE

        vocab, merges = BPE.read_file(str(vocab_filename), str(merges_filename))
        return cls(vocab, merges, **kwargs)


def _forwarded(name: str) -> property:
    """A property that reads and sets the wrapped tokenizer's ``name``."""

    def read(self):
        return getattr(self._tokenizer, name)

    def write(self, value):
        setattr(self._tokenizer, name, value)

    return property(read, write)


class BaseTokenizer:
    """Wraps a :class:`tokenmill.Tokenizer` (``self._tokenizer``) and the parameters it was built
    with; every method forwards to the tokenizer."""

    def __init__(self, tokenizer, parameters: Optional[Dict[str, Any]] = None):
        self._tokenizer = tokenizer
        self._parameters = parameters if parameters is not None else {}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self._parameters.items())
        return f"Tokenizer(vocabulary_size={self._tokenizer.get_vocab_size()}, {params})"

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many special tokens the post-processor adds to a single input or a pair."""
        return self._tokenizer.num_special_tokens_to_add(is_pair)

    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        """The vocabulary (token → id), with the added tokens unless told otherwise."""
        return self._tokenizer.get_vocab(with_added_tokens=with_added_tokens)

    def get_added_tokens_decoder(self) -> Dict[int, tokenmill.AddedToken]:
        """The added tokens by id."""
        return self._tokenizer.get_added_tokens_decoder()

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The size of the vocabulary, with the added tokens unless told otherwise."""
        return self._tokenizer.get_vocab_size(with_added_tokens=with_added_tokens)

    def enable_padding(
        self,
        direction: str = "right",
        pad_to_multiple_of: Optional[int] = None,
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: Optional[int] = None,
    ):
        """Pads every batch (to the longest sequence, or to ``length``)."""
        return self._tokenizer.enable_padding(
            direction=direction,
            pad_to_multiple_of=pad_to_multiple_of,
            pad_id=pad_id,
            pad_type_id=pad_type_id,
            pad_token=pad_token,
            length=length,
        )

    def no_padding(self):
        """Turns padding off."""
        return self._tokenizer.no_padding()

    @property
    def padding(self) -> Optional[dict]:
        """The padding parameters, or None."""
        return self._tokenizer.padding

    def enable_truncation(
        self, max_length: int, stride: Optional[int] = 0, strategy: Optional[str] = "longest_first"
    ):
        """Truncates inputs to ``max_length`` tokens."""
        return self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def no_truncation(self):
        """Turns truncation off."""
        return self._tokenizer.no_truncation()

    @property
    def truncation(self) -> Optional[dict]:
        """The truncation parameters, or None."""
        return self._tokenizer.truncation

    def add_tokens(self, tokens: List[Union[str, tokenmill.AddedToken]]) -> int:
        """Adds tokens matched before the model; returns how many were new."""
        return self._tokenizer.add_tokens(tokens)

    def add_special_tokens(self, special_tokens: List[Union[str, tokenmill.AddedToken]]) -> int:
        """Adds special tokens (skipped by ``decode(skip_special_tokens=True)``)."""
        return self._tokenizer.add_special_tokens(special_tokens)

    def normalize(self, sequence: str) -> str:
        """The normalized form of ``sequence``."""
        return self._tokenizer.normalizer.normalize_str(sequence)

    def encode(
        self, sequence, pair=None, is_pretokenized: bool = False, add_special_tokens: bool = True
    ):
        """Encodes a sequence (and an optional pair) into an ``Encoding``."""
        if sequence is None:
            raise ValueError("encode: `sequence` can't be `None`")
        return self._tokenizer.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, inputs, is_pretokenized: bool = False, add_special_tokens: bool = True):
        """Encodes a batch of sequences (or pairs) in parallel."""
        if inputs is None:
            raise ValueError("encode_batch: `inputs` can't be `None`")
        return self._tokenizer.encode_batch(inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch(
        self, inputs, is_pretokenized: bool = False, add_special_tokens: bool = True
    ):
        """:meth:`encode_batch` awaited: encodes off the event loop (see
        :meth:`tokenmill.Tokenizer.async_encode_batch`)."""
        if inputs is None:
            raise ValueError("async_encode_batch: `inputs` can't be `None`")
        return await self._tokenizer.async_encode_batch(inputs, is_pretokenized, add_special_tokens)

    async def async_encode_batch_fast(
        self, inputs, is_pretokenized: bool = False, add_special_tokens: bool = True
    ):
        """:meth:`tokenmill.Tokenizer.encode_batch_fast` awaited, off the event loop."""
        if inputs is None:
            raise ValueError("async_encode_batch_fast: `inputs` can't be `None`")
        return await self._tokenizer.async_encode_batch_fast(
            inputs, is_pretokenized, add_special_tokens
        )

    def decode(self, ids: List[int], skip_special_tokens: Optional[bool] = True) -> str:
        """Turns ids back into text."""
        if ids is None:
            raise ValueError("None input is not valid. Should be a list of integers.")
        return self._tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def decode_batch(
        self, sequences: List[List[int]], skip_special_tokens: Optional[bool] = True
    ) -> List[str]:
        """Turns lists of ids back into texts."""
        if sequences is None:
            raise ValueError("None input is not valid. Should be list of list of integers.")
        return self._tokenizer.decode_batch(sequences, skip_special_tokens=skip_special_tokens)

    async def async_decode_batch(
        self, sequences: List[List[int]], skip_special_tokens: Optional[bool] = True
    ) -> List[str]:
        """:meth:`decode_batch` awaited, off the event loop."""
        if sequences is None:
            raise ValueError("async_decode_batch: `sequences` can't be `None`")
        return await self._tokenizer.async_decode_batch(sequences, skip_special_tokens)

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of ``token``, or None."""
        return self._tokenizer.token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        """The token of ``id``, or None."""
        return self._tokenizer.id_to_token(id)

    def _train_files(self, files, trainer) -> None:
        """Trains on one path or a list of paths (what every implementation's ``train`` takes)."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        self._tokenizer.train(files, trainer=trainer)

    def save_model(self, directory: str, prefix: Optional[str] = None) -> List[str]:
        """Writes the model's files (``vocab.json`` + ``merges.txt``) into ``directory``."""
        return self._tokenizer.model.save(directory, prefix=prefix)

    def save(self, path: str, pretty: bool = True):
        """Writes the whole tokenizer as tokenizer.json."""
        return self._tokenizer.save(path, pretty)

    def to_str(self, pretty: bool = False) -> str:
        """The tokenizer.json text."""
        return self._tokenizer.to_str(pretty)

    def post_process(self, encoding, pair=None, add_special_tokens: bool = True):
        """Truncation, post-processor and padding applied to encodings."""
        return self._tokenizer.post_process(encoding, pair, add_special_tokens)

    model = _forwarded("model")
    normalizer = _forwarded("normalizer")
    pre_tokenizer = _forwarded("pre_tokenizer")
    post_processor = _forwarded("post_processor")
    decoder = _forwarded("decoder")
