"""SentencePiece compatibility: the ``sentencepiece`` package's API on tokenmill's engine.

``import tokenmill.sentencepiece as spm`` and use ``spm.SentencePieceProcessor(model_file=...)``
as with ``sentencepiece``: the same ids, pieces, offsets and decoded text for BPE, Unigram, char
and word models (``.model`` files are read and written as SentencePiece's protobuf). Lists of
texts are encoded in parallel with the GIL released.

Errors are tokenmill exceptions that are also the builtins ``sentencepiece`` raises, never
crashes: ``sentencepiece`` raises ``RuntimeError`` for every error of its native side, so a
malformed ``.model`` is a ``ModelFormatError`` (``tokenmill.FormatError`` and
``RuntimeError``), an unreadable file a ``ModelFileError`` (``tokenmill.TokenmillIOError``,
``OSError`` — ``FileNotFoundError`` for a missing file — and ``RuntimeError``), bad arguments an
``ArgumentError`` (``tokenmill.InvalidArgumentError``, ``ValueError`` and ``RuntimeError``) and an
id out of range an ``OutOfRangeError`` (``IndexError``). A str with a lone surrogate is an
``ArgumentError``, not a ``UnicodeEncodeError``.

``sentencepiece_pb2`` and ``sentencepiece_model_pb2`` (``from tokenmill.sentencepiece import
sentencepiece_pb2``) and ``return_type='proto'`` need the ``protobuf`` package; they are built
on first use (see ``tokenmill._sentencepiece_pb2``).
"""

from __future__ import annotations

import errno as _errno
import os
import random as _random
import re as _re
from typing import Optional

from tokenmill import (
    FormatError,
    InvalidArgumentError,
    TokenmillIOError,
    UnknownIdError,
)
from tokenmill._atomic import atomic_open as _atomic_open
from tokenmill._native import sentencepiece as _native

#: The ``sentencepiece`` release whose API this module reproduces (code that checks
#: ``spm.__version__`` sees the version it was written for); tokenmill's own version is
#: ``tokenmill.__version__``.
__version__ = "0.2.3"


class OutOfRangeError(UnknownIdError, IndexError):
    """A piece id outside ``0 .. piece_size()-1`` (an ``IndexError``, as in ``sentencepiece``)."""


class ArgumentError(InvalidArgumentError, ValueError, RuntimeError):
    """Bad arguments: a ``ValueError`` (what ``sentencepiece``'s Python layer raises) and a
    ``RuntimeError`` (what its native layer raises)."""


class ModelFormatError(FormatError, RuntimeError):
    """A malformed model or spec (``sentencepiece`` raises ``RuntimeError``)."""


class ModelFileError(TokenmillIOError, OSError, RuntimeError):
    """A file that cannot be read: an ``OSError`` and, as in ``sentencepiece``, a
    ``RuntimeError``."""


class ModelFileNotFoundError(ModelFileError, FileNotFoundError):
    """A file that does not exist (``FileNotFoundError``)."""


__all__ = [
    "ArgumentError",
    "ConvertToFlatbuffer",
    "ModelFileError",
    "ModelFileNotFoundError",
    "ModelFormatError",
    "OutOfRangeError",
    "SentencePieceNormalizer",
    "SentencePieceProcessor",
    "SentencePieceTrainer",
    "SetDataDir",
    "SetMinLogLevel",
    "SetNBestTimeout",
    "SetRandomGeneratorSeed",
    "ThreadPool",
    "__version__",
    "convert_to_flatbuffer",
    "from_tokenizer",
    "set_data_dir",
    "set_min_log_level",
    "set_nbest_timeout",
    "set_random_generator_seed",
    "to_tokenizer",
]

# Piece types of ModelProto.SentencePiece.Type.
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6

_seed_source: Optional[_random.Random] = None


def set_random_generator_seed(seed: int) -> None:
    """Makes sampling (``enable_sampling``, ``sample_encode_and_score``) of every processor
    reproducible, as ``sentencepiece.set_random_generator_seed``: after this call, the same
    sequence of calls gives the same samples. A processor's own seed
    (``SentencePieceProcessor.set_random_generator_seed``) takes precedence."""
    global _seed_source
    _seed_source = _random.Random(seed)


def _next_seed(source: Optional[_random.Random] = None) -> Optional[int]:
    source = source if source is not None else _seed_source
    return None if source is None else source.getrandbits(64)


def set_min_log_level(level: int) -> None:
    """``sentencepiece.set_min_log_level``: accepted for compatibility; tokenmill's
    sentencepiece module writes no log, so there is nothing to filter."""
    int(level)


def set_nbest_timeout(timeout_ms: int) -> None:
    """Sets the process-wide time limit of ``nbest_encode`` in milliseconds (as
    ``sentencepiece.set_nbest_timeout``; the default is 30000, 0 or less means none): a search
    still running after it returns only the best segmentation."""
    _native.set_nbest_timeout(int(timeout_ms))


def set_data_dir(data_dir) -> None:
    """``sentencepiece.set_data_dir``: accepted for compatibility. sentencepiece reads its
    normalization rule files from that folder; tokenmill's rules are built into the package."""
    os.fspath(data_dir)


SetRandomGeneratorSeed = set_random_generator_seed
SetMinLogLevel = set_min_log_level
SetNBestTimeout = set_nbest_timeout
SetDataDir = set_data_dir


class ThreadPool:
    """``sentencepiece.ThreadPool``: a thread count to pass as ``thread_pool=`` to ``encode``,
    ``decode`` and ``parallel_encode``. tokenmill runs all its batch work on one shared pool of
    worker threads, so this object creates no threads: a pool of one thread makes a call run
    on the calling thread, a larger one lets it use the shared pool."""

    def __init__(self, num_threads: int):
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ArgumentError("ThreadPool: num_threads must be a positive int")
        self._num_threads = num_threads

    def num_threads(self) -> int:
        """The number of threads given to the constructor."""
        return self._num_threads


def _threads(num_threads, thread_pool) -> int:
    """The thread count of a call: the pool's when one is given."""
    return thread_pool.num_threads() if thread_pool is not None else num_threads


def _load_pb2():
    from tokenmill import _sentencepiece_pb2

    return _sentencepiece_pb2


def __getattr__(name: str):
    # sentencepiece_pb2 / sentencepiece_model_pb2 are built on first use (they need protobuf).
    if name in ("sentencepiece_pb2", "sentencepiece_model_pb2"):
        return getattr(_load_pb2(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _to_proto(serialized: bytes):
    message = _load_pb2().sentencepiece_pb2.SentencePieceText()
    message.ParseFromString(serialized)
    return message


def _to_nbest_proto(serialized: bytes):
    message = _load_pb2().sentencepiece_pb2.NBestSentencePieceText()
    message.ParseFromString(serialized)
    return message


def _read_only_int32(ids):
    import numpy as np

    array = np.array(ids, dtype=np.int32)
    array.flags.writeable = False  # as sentencepiece's arrays, which view its own buffers
    return array


_VALID_RETURN_TYPES = (int, str, bytes, "proto", "serialized_proto", "numpy", "offset_mapping")


# What the native encode returns for each return type ("full": tuples with offsets).
_ENCODE_KINDS = {
    int: "ids",
    "numpy": "ids",
    str: "pieces",
    bytes: "pieces",
    "serialized_proto": "serialized",
    "proto": "serialized",
}


def _is_sequence(x) -> bool:
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes))


def _as_text(x) -> str:
    return x.decode("utf-8") if isinstance(x, bytes) else x


def _for_each_text(fn, input):
    """``fn`` of a text, or the list of ``fn`` of each text of a list."""
    return [fn(t) for t in input] if isinstance(input, list) else fn(input)


def _native_call(fn, *args, **kwargs):
    """Calls the native core, turning its errors into this module's (see the module
    docstring): out-of-range ids into ``OutOfRangeError`` (IndexError) and so on."""
    try:
        return fn(*args, **kwargs)
    except UnknownIdError as e:
        raise OutOfRangeError(f"OUT_OF_RANGE: piece id is out of range. ({e})") from None
    except InvalidArgumentError as e:
        if isinstance(e, ArgumentError):
            raise
        if "out of range" in str(e):
            raise OutOfRangeError(f"OUT_OF_RANGE: piece id is out of range. ({e})") from None
        raise ArgumentError(str(e)) from None
    except UnicodeEncodeError as e:
        # a str with a lone surrogate (UTF-8 cannot carry it)
        raise ArgumentError(
            f"text contains a lone surrogate {e.object[e.start : e.end]!r} at index {e.start}: "
            "encode it with errors='replace' or fix the text"
        ) from None
    except FormatError as e:
        if isinstance(e, ModelFormatError):
            raise
        raise ModelFormatError(str(e)) from None
    except TokenmillIOError as e:
        if isinstance(e, ModelFileError):
            raise
        missing = isinstance(e.__cause__, FileNotFoundError) or "No such file" in str(e)
        raise (ModelFileNotFoundError if missing else ModelFileError)(
            _errno.ENOENT if missing else _errno.EIO, str(e)
        ) from None


def _refuse_flags_in_proto(flags) -> None:
    """As sentencepiece, a proto result takes none of the four encode flags."""
    if any(flags.values()):
        raise NotImplementedError(
            "add_bos, add_eos, reverse, and emit_unk_piece is not supported in proto API"
        )


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _offset_mapping(result, return_bytes: bool, include_text: bool):
    text, pieces, _score = result
    out = {}
    if include_text:
        out["text"] = text.encode("utf-8") if return_bytes else text
    out["ids"] = [p[1] for p in pieces]
    out["pieces"] = (
        [p[0].encode("utf-8") for p in pieces] if return_bytes else [p[0] for p in pieces]
    )
    out["offsets"] = [(p[3], p[4]) for p in pieces]
    return out


def _alias(name: str, doc: str, method):
    method.__name__ = name
    method.__qualname__ = f"SentencePieceProcessor.{name}"
    method.__doc__ = doc
    return method


def _encode_as(name: str, return_type, encoder: str = "Encode"):
    """``SentencePieceProcessor.<name>``: the method ``encoder`` (``Encode`` or
    ``ParallelEncode``) with ``return_type`` fixed."""

    def encode_as(self, input, **kwargs):
        return getattr(self, encoder)(input=input, return_type=return_type, **kwargs)

    snake = _re.sub(r"(?<!^)(?=[A-Z])", "_", encoder).lower()
    shown = getattr(return_type, "__name__", repr(return_type))
    return _alias(name, f"``{snake}(input, return_type={shown})``.", encode_as)


def _sample_encode_as(name: str, return_type, doc: str):
    """``SentencePieceProcessor.<name>``: sampled ``Encode`` with ``return_type`` fixed."""

    def sample_encode_as(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.Encode(
            input=input,
            nbest_size=nbest_size,
            alpha=alpha,
            return_type=return_type,
            enable_sampling=True,
            **kwargs,
        )

    return _alias(name, doc, sample_encode_as)


def _nbest_encode_as(name: str, return_type, doc: str):
    """``SentencePieceProcessor.<name>``: ``NBestEncode`` with ``return_type`` fixed."""

    def nbest_encode_as(self, input, nbest_size=None, **kwargs):
        return self.NBestEncode(
            input=input, nbest_size=nbest_size, return_type=return_type, **kwargs
        )

    return _alias(name, doc, nbest_encode_as)


class SentencePieceProcessor:
    """Loads a SentencePiece ``.model`` and encodes/decodes text exactly as ``sentencepiece``'s
    ``SentencePieceProcessor`` (0.2.3) does. The constructor's keyword arguments become the
    defaults of ``encode``. Lists of texts are processed in parallel with the GIL released."""

    def __init__(
        self,
        model_file=None,
        model_proto=None,
        out_type=None,
        add_bos=False,
        add_eos=False,
        reverse=False,
        emit_unk_piece=False,
        enable_sampling=False,
        nbest_size=-1,
        alpha=0.1,
        num_threads=-1,
        return_type=None,
    ):
        self._core = None
        self._return_type = int
        self._return_type = self._resolve_return_type(return_type, out_type, default=int)
        self._add_bos = add_bos
        self._add_eos = add_eos
        self._reverse = reverse
        self._emit_unk_piece = emit_unk_piece
        self._enable_sampling = enable_sampling
        self._nbest_size = nbest_size
        self._alpha = alpha
        self._num_threads = num_threads
        self._seed_source: Optional[_random.Random] = None
        if model_file or model_proto:
            self.Load(model_file=model_file, model_proto=model_proto)

    def _resolve_return_type(self, return_type, out_type, default=None):
        if out_type is not None:
            if return_type is not None:
                raise ArgumentError(
                    "Cannot specify both out_type and return_type. Use return_type instead."
                )
            return_type = out_type
        if return_type is None:
            return_type = default if default is not None else self._return_type
        if return_type not in _VALID_RETURN_TYPES:
            raise ArgumentError(
                f"Invalid return_type: {return_type}. Must be one of {_VALID_RETURN_TYPES}"
            )
        return return_type

    def _encode_flags(self, add_bos, add_eos, reverse, emit_unk_piece):
        """The four encode flags, each None one replaced by the processor's own setting, as the
        one dict the native encoders take."""
        return {
            "add_bos": bool(self._add_bos if add_bos is None else add_bos),
            "add_eos": bool(self._add_eos if add_eos is None else add_eos),
            "reverse": bool(self._reverse if reverse is None else reverse),
            "emit_unk_piece": bool(
                self._emit_unk_piece if emit_unk_piece is None else emit_unk_piece
            ),
        }

    # ----------------------------------------------------------------------------- loading
    @classmethod
    def from_file(cls, model_file, **kwargs):
        """Creates a processor by loading a ``.model`` file."""
        processor = cls._from_kwargs("from_file", kwargs)
        processor.LoadFromFile(model_file)
        return processor

    @classmethod
    def from_proto(cls, model_proto, **kwargs):
        """Creates a processor from a serialized model."""
        processor = cls._from_kwargs("from_proto", kwargs)
        processor.LoadFromSerializedProto(model_proto)
        return processor

    @classmethod
    def _from_kwargs(cls, method: str, kwargs):
        """A processor built from ``kwargs``, checked as sentencepiece's ``from_*`` check them."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise ArgumentError(
                "model_file and model_proto cannot be passed via kwargs when using "
                f"{method} classmethod."
            )
        return cls(**kwargs)

    def Load(self, model_file=None, model_proto=None):
        """Loads a model from a file path or from its serialized bytes (exactly one of them)."""
        if model_file and model_proto:
            raise ArgumentError("model_file and model_proto must be exclusive.")
        if model_proto:
            return self.LoadFromSerializedProto(model_proto)
        if model_file:
            return self.LoadFromFile(model_file)
        raise ArgumentError("Either model_file or model_proto must be specified.")

    def LoadFromFile(self, filename) -> bool:
        """Loads a ``.model`` file."""
        self._core = _native_call(_native.Processor.from_file, os.fsdecode(os.fspath(filename)))
        self._after_load()
        return True

    def LoadFromSerializedProto(self, serialized) -> bool:
        """Loads a model from its serialized protobuf bytes."""
        if hasattr(serialized, "SerializeToString"):
            serialized = serialized.SerializeToString()
        self._core = _native_call(_native.Processor.from_bytes, bytes(serialized))
        self._after_load()
        return True

    def _after_load(self) -> None:
        self._unk, self._bos, self._eos, self._pad = self._core.special_ids()

    @property
    def _model(self):
        if self._core is None:
            raise RuntimeError("Model is not initialized.")
        return self._core

    @property
    def _processor(self) -> _BatchDecoders:
        """The batch decoders of ``sentencepiece``'s private native object, which some code
        calls directly (``sp._processor._DecodePiecesBatch(batch, num_threads, pool)``)."""
        return _BatchDecoders(self)

    def SetRandomGeneratorSeed(self, seed: Optional[int]) -> None:
        """Seeds this processor's sampling (``enable_sampling``, ``sample_encode_and_score``):
        the same sequence of calls then gives the same samples, whatever other processors or
        the module-wide ``set_random_generator_seed`` do. ``None`` goes back to the module-wide
        generator (a tokenmill extension; ``sentencepiece`` only has the global seed)."""
        self._seed_source = None if seed is None else _random.Random(seed)

    # ----------------------------------------------------------------------------- encoding
    def Encode(
        self,
        input,
        add_bos=None,
        add_eos=None,
        reverse=None,
        emit_unk_piece=None,
        enable_sampling=None,
        nbest_size=None,
        alpha=None,
        num_threads=None,
        thread_pool=None,
        return_type=None,
        out_type=None,
        return_bytes=None,
    ):
        """Encodes a text (or a list of texts, in parallel) as ids (``return_type=int``), pieces
        (``str``, or ``bytes``), ``'numpy'`` int32 arrays, ``'offset_mapping'`` dicts (ids, pieces,
        character offsets), ``'serialized_proto'`` (``SentencePieceText`` bytes), ``'proto'`` or
        objects (``sentencepiece_pb2.SentencePieceText``, needs protobuf) with surfaces and byte
        offsets; ``thread_pool`` (a ``ThreadPool``) sets the thread count. ``add_bos`` /
        ``add_eos`` are added after ``reverse``. With ``enable_sampling``, BPE applies BPE-dropout
        with probability ``alpha``; Unigram samples with smoothing ``alpha`` from the
        ``nbest_size`` best segmentations (or the whole lattice for ``nbest_size=-1``)."""
        return_type = self._resolve_return_type(return_type, out_type)
        if return_bytes is not None and return_type != "offset_mapping":
            raise ArgumentError("return_bytes is only supported when return_type='offset_mapping'")
        flags = self._encode_flags(add_bos, add_eos, reverse, emit_unk_piece)
        enable_sampling = self._enable_sampling if enable_sampling is None else enable_sampling
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        alpha = self._alpha if alpha is None else alpha
        num_threads = self._num_threads if num_threads is None else num_threads
        if thread_pool is not None:
            num_threads = thread_pool.num_threads()
        if enable_sampling is True and (
            nbest_size is None or nbest_size == 0 or nbest_size == 1 or alpha is None
        ):
            raise ArgumentError(
                'When enable_sampling is True, We must specify "nbest_size > 1" or '
                '"nbest_size = -1", and "alpha". "nbest_size" is enabled only on unigram mode '
                "ignored in BPE-dropout. "
                'when "nbest_size = -1" , this method samples from all candidates on the lattice '
                "instead of nbest segmentations."
            )
        if num_threads is None or not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        is_batch = isinstance(input, list)
        texts = input if is_batch else [input]  # the native side decodes bytes
        if return_type in ("proto", "serialized_proto", "offset_mapping"):
            _refuse_flags_in_proto(flags)
        kind = _ENCODE_KINDS.get(return_type, "full")
        if return_type == "offset_mapping" and return_bytes is None:
            # sentencepiece: byte offsets and pieces for bytes input, characters for str
            first = input[0] if is_batch and input else input
            return_bytes = isinstance(first, bytes)
        char_offsets = return_type == "offset_mapping" and not return_bytes
        results = _native_call(
            self._model.encode,
            texts,
            kind,
            flags,
            enable_sampling=bool(enable_sampling),
            nbest_size=int(nbest_size),
            alpha=float(alpha),
            seed=_next_seed(self._seed_source) if enable_sampling else None,
            num_threads=num_threads,
            char_offsets=char_offsets,
        )
        if return_type is bytes:
            results = [[p.encode("utf-8") for p in r] for r in results]
        elif return_type == "numpy":
            results = [_read_only_int32(r) for r in results]
        elif return_type == "offset_mapping":
            results = [_offset_mapping(r, bool(return_bytes), include_text=False) for r in results]
        elif return_type == "proto":
            results = [_to_proto(r) for r in results]
        return results if is_batch else results[0]

    EncodeAsPieces = _encode_as("EncodeAsPieces", str)
    EncodeAsIds = _encode_as("EncodeAsIds", int)
    EncodeAsNumpy = _encode_as("EncodeAsNumpy", "numpy")
    EncodeAsProto = _encode_as("EncodeAsProto", "proto")
    EncodeAsOffsetMapping = _encode_as("EncodeAsOffsetMapping", "offset_mapping")

    SampleEncodeAsPieces = _sample_encode_as(
        "SampleEncodeAsPieces", str, "A sampled segmentation as pieces."
    )
    SampleEncodeAsIds = _sample_encode_as(
        "SampleEncodeAsIds", int, "A sampled segmentation as ids."
    )
    SampleEncodeAsNumpy = _sample_encode_as(
        "SampleEncodeAsNumpy", "numpy", "A sampled segmentation as a NumPy array."
    )
    SampleEncodeAsProto = _sample_encode_as(
        "SampleEncodeAsProto", "proto", "A sampled segmentation with surfaces and offsets."
    )

    def NBestEncode(
        self,
        input,
        add_bos=None,
        add_eos=None,
        reverse=None,
        emit_unk_piece=None,
        nbest_size=None,
        return_type=None,
        out_type=None,
    ):
        """The ``nbest_size`` best segmentations of a text (Unigram models), best first."""
        return_type = self._resolve_return_type(return_type, out_type)
        flags = self._encode_flags(add_bos, add_eos, reverse, emit_unk_piece)
        nbest_size = self._nbest_size if nbest_size is None else nbest_size
        if nbest_size <= 0:
            nbest_size = 1
        kind = _ENCODE_KINDS.get(return_type, "full")
        if kind == "serialized":
            _refuse_flags_in_proto(flags)
        if return_type == "offset_mapping":
            raise ArgumentError("unknown return_type=offset_mapping")

        def _encode(text):
            results = _native_call(self._model.nbest, _as_text(text), int(nbest_size), kind, flags)
            if return_type is bytes:
                return [[p.encode("utf-8") for p in r] for r in results]
            if return_type == "numpy":
                return [_read_only_int32(r) for r in results]
            if kind == "serialized":
                # NBestSentencePieceText: field 1 (nbests), length-delimited, per result
                serialized = b"".join(b"\x0a" + _varint(len(r)) + r for r in results)
                return (
                    serialized if return_type == "serialized_proto" else _to_nbest_proto(serialized)
                )
            return results

        return _for_each_text(_encode, input)

    NBestEncodeAsPieces = _nbest_encode_as(
        "NBestEncodeAsPieces", str, "n-best segmentations as pieces."
    )
    NBestEncodeAsIds = _nbest_encode_as("NBestEncodeAsIds", int, "n-best segmentations as ids.")
    NBestEncodeAsNumpy = _nbest_encode_as(
        "NBestEncodeAsNumpy", "numpy", "n-best segmentations as NumPy arrays."
    )
    NBestEncodeAsProto = _nbest_encode_as(
        "NBestEncodeAsProto", "proto", "n-best segmentations with surfaces, offsets and scores."
    )

    def SampleEncodeAndScore(
        self,
        input,
        add_bos=None,
        add_eos=None,
        reverse=None,
        emit_unk_piece=None,
        num_samples=None,
        alpha=None,
        wor=None,
        include_best=None,
        return_type=None,
        out_type=None,
    ):
        """``num_samples`` sampled segmentations (Unigram models), each with its score: a list of
        ``(ids or pieces, score)``. ``wor`` samples without replacement; ``include_best`` (needs
        ``wor``) puts the best segmentation first. (``sentencepiece`` 0.2.0's API.)"""
        return_type = self._resolve_return_type(return_type, out_type)
        flags = self._encode_flags(add_bos, add_eos, reverse, emit_unk_piece)
        num_samples = 1 if num_samples is None else num_samples
        alpha = 1.0 if alpha is None else alpha
        wor = False if wor is None else wor
        include_best = False if include_best is None else include_best
        if num_samples <= 0:
            raise ArgumentError("num_examples must be positive")
        if include_best and not wor:
            raise ArgumentError('When include_best is True, We must specify "wor = True".')
        kind = {int: "ids", str: "pieces"}.get(return_type)
        if kind is None:
            raise ArgumentError(
                f"sample_encode_and_score returns ids or pieces, not return_type={return_type!r}"
            )

        def _encode(text):
            results = _native_call(
                self._model.sample_and_score,
                _as_text(text),
                int(num_samples),
                float(alpha),
                bool(wor),
                bool(include_best),
                kind,
                flags,
                seed=_next_seed(self._seed_source),
            )
            return results

        return _for_each_text(_encode, input)

    def CalculateEntropy(self, input, alpha, num_threads=None):
        """The entropy of the segmentation distribution of a text (or of each text of a list)
        under smoothing ``alpha`` (Unigram models; ``sentencepiece`` 0.2.0's API)."""
        if isinstance(input, list):
            num_threads = self._num_threads if num_threads is None else num_threads
            if num_threads is None or not isinstance(num_threads, int):
                raise TypeError("num_threads must be int")
            return _native_call(
                self._model.calculate_entropy,
                [_as_text(t) for t in input],
                float(alpha),
                num_threads,
            )
        return _native_call(self._model.calculate_entropy, [_as_text(input)], float(alpha))[0]

    def ParallelEncode(
        self,
        input,
        add_bos=None,
        add_eos=None,
        reverse=None,
        emit_unk_piece=None,
        chunk_len=None,
        num_threads=None,
        thread_pool=None,
        return_type=None,
        out_type=None,
    ):
        """Encodes one long text (or each text of a list, one after the other) on several
        threads, cutting it into chunks of about ``chunk_len`` bytes (``sentencepiece``'s
        ``ParallelEncode``). The result is always ``encode``'s: the text is cut only where the
        model's segmentation cannot cross (the word starts of a BPE vocabulary whose pieces
        stay within words); Unigram, char and word models, and BPE vocabularies with pieces
        across words, are encoded on the calling thread (a Unigram segmentation depends on the
        whole text's path score, so chunks could change it). ``return_type`` int, str, bytes,
        ``'numpy'``, ``'serialized_proto'`` or ``'proto'``."""
        return_type = self._resolve_return_type(return_type, out_type)
        flags = self._encode_flags(add_bos, add_eos, reverse, emit_unk_piece)
        num_threads = _threads(
            self._num_threads if num_threads is None else num_threads, thread_pool
        )
        if num_threads is None or not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        if chunk_len is None or not isinstance(chunk_len, int) or chunk_len <= 0:
            raise ArgumentError("chunk_len must be positive.")
        kind = _ENCODE_KINDS.get(return_type)
        if kind is None:
            raise ArgumentError(f"unknown return_type={return_type}")
        if kind == "serialized":
            _refuse_flags_in_proto(flags)

        def _encode(text):
            result = _native_call(
                self._model.parallel_encode, text, kind, chunk_len, num_threads, flags
            )
            if return_type is bytes:
                return [p.encode("utf-8") for p in result]
            if return_type == "numpy":
                return _read_only_int32(result)
            if return_type == "proto":
                return _to_proto(result)
            return result

        return _for_each_text(_encode, input)

    ParallelEncodeAsPieces = _encode_as("ParallelEncodeAsPieces", str, "ParallelEncode")
    ParallelEncodeAsIds = _encode_as("ParallelEncodeAsIds", int, "ParallelEncode")
    ParallelEncodeAsNumpy = _encode_as("ParallelEncodeAsNumpy", "numpy", "ParallelEncode")
    ParallelEncodeAsProto = _encode_as("ParallelEncodeAsProto", "proto", "ParallelEncode")

    # ----------------------------------------------------------------------------- decoding
    def Decode(
        self,
        input,
        return_type=None,
        out_type=None,
        num_threads=None,
        thread_pool=None,
        return_bytes=None,
    ):
        """Decodes ids or pieces (or a list of such sequences, in parallel) back to text:
        control pieces vanish, ``<unk>`` becomes " ⁇ ", byte pieces are decoded as UTF-8 (invalid
        bytes become U+FFFD) and ▁ becomes a space (the dummy prefix's is dropped).
        ``return_type=bytes`` (or pieces given as bytes, as in sentencepiece) gives UTF-8
        bytes; ``'proto'`` / ``'serialized_proto'`` /
        ``'offset_mapping'`` the pieces with their surfaces and offsets in the decoded text."""
        return_type = self._resolve_return_type(return_type, out_type, default=str)
        if return_bytes is not None and return_type != "offset_mapping":
            raise ArgumentError("return_bytes is only supported when return_type='offset_mapping'")
        num_threads = _threads(
            self._num_threads if num_threads is None else num_threads, thread_pool
        )
        if num_threads is None or not isinstance(num_threads, int):
            raise TypeError("num_threads must be int")
        if input is None or (isinstance(input, (str, bytes)) and len(input) == 0):
            input = []
        if hasattr(input, "tolist"):
            input = input.tolist()
        if not _is_sequence(input):
            input = [input]
            is_batch = False
        else:
            is_batch = len(input) > 0 and _is_sequence(input[0])
        seqs = [list(s) for s in input] if is_batch else [list(input)]
        first = next((s[0] for s in seqs if s), None)
        if isinstance(first, bytes):
            # pieces given as bytes decode to bytes, as in sentencepiece (whose bindings
            # return the input's type): text, and with offset_mapping pieces and byte offsets
            if return_type is str:
                return_type = bytes
            elif return_type == "offset_mapping" and return_bytes is None:
                return_bytes = True
        # bytes pieces are decoded as text pieces
        seqs = [[_as_text(p) for p in s] for s in seqs]
        if return_type in (str, bytes):
            kind = "text"
        elif return_type in ("serialized_proto", "proto"):
            kind = "serialized"
        elif return_type == "int" or return_type is int or return_type == "numpy":
            raise ArgumentError(f"unknown return_type={return_type} or input type")
        else:
            kind = "full"
        char_offsets = return_type == "offset_mapping" and not return_bytes
        try:
            results = _native_call(self._model.decode, seqs, kind, num_threads, char_offsets)
        except TypeError:
            raise TypeError(
                "decode: input must be ids (int), pieces (str or bytes), a sequence of them, "
                "or a batch of such sequences (NumPy integer arrays included)"
            ) from None
        if kind == "text":
            results = [r[0] for r in results]
            if return_type is bytes:
                results = [r.encode("utf-8") for r in results]
        elif return_type == "offset_mapping":
            results = [_offset_mapping(r, bool(return_bytes), include_text=True) for r in results]
        elif return_type == "proto":
            results = [_to_proto(r) for r in results]
        return results if is_batch else results[0]

    def DecodePieces(self, input, return_type=None, **kwargs):
        """Decodes pieces."""
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def DecodeIds(self, input, return_type=None, **kwargs):
        """Decodes ids."""
        return self.Decode(input=input, return_type=return_type, **kwargs)

    def DecodePiecesAsProto(self, input, **kwargs):
        """Decodes pieces into a result with surfaces and offsets."""
        return self.Decode(input=input, return_type="proto", **kwargs)

    def DecodeIdsAsProto(self, input, **kwargs):
        """Decodes ids into a result with surfaces and offsets."""
        return self.Decode(input=input, return_type="proto", **kwargs)

    def Normalize(self, input, with_offsets=None):
        """The text (or each text of a list) as the model normalizes it before segmenting; see
        ``_normalize`` for ``with_offsets``."""
        return _normalize(self._model, input, with_offsets)

    # ----------------------------------------------------------------------------- vocabulary
    def GetPieceSize(self) -> int:
        """The number of pieces."""
        return self._model.piece_size()

    piece_size = GetPieceSize
    vocab_size = GetPieceSize

    def __len__(self) -> int:
        return self.GetPieceSize()

    def __getitem__(self, piece: str) -> int:
        return self.PieceToId(piece)

    def _each(self, fn, arg):
        if _is_sequence(arg):
            return [_native_call(fn, a) for a in arg]
        return _native_call(fn, arg)

    def PieceToId(self, piece):
        """The id of a piece (or of each piece of a list); the unk id for unknown pieces."""
        return self._each(lambda p: self._model.piece_to_id(_as_text(p)), piece)

    def IdToPiece(self, id):
        """The piece of an id (or of each id of a list)."""
        return self._each(self._model.id_to_piece, id)

    def GetScore(self, id):
        """The score of a piece id (or of each id of a list)."""
        return self._each(self._model.get_score, id)

    def IsUnknown(self, id):
        """Whether the id is the unknown piece."""
        return self._each(lambda i: self._model.piece_type(i) == _UNKNOWN, id)

    def IsControl(self, id):
        """Whether the id is a control piece (``<s>``, ``</s>``, ...)."""
        return self._each(lambda i: self._model.piece_type(i) == _CONTROL, id)

    def IsUnused(self, id):
        """Whether the id is an unused piece."""
        return self._each(lambda i: self._model.piece_type(i) == _UNUSED, id)

    def IsByte(self, id):
        """Whether the id is a byte piece (``<0xNN>``)."""
        return self._each(lambda i: self._model.piece_type(i) == _BYTE, id)

    def unk_id(self) -> int:
        """The id of the unknown piece (-1 if none)."""
        return self._unk

    def bos_id(self) -> int:
        """The id of ``<s>`` (-1 if the model has none)."""
        return self._bos

    def eos_id(self) -> int:
        """The id of ``</s>`` (-1 if the model has none)."""
        return self._eos

    def pad_id(self) -> int:
        """The id of ``<pad>`` (-1 if the model has none)."""
        return self._pad

    def serialized_model_proto(self) -> bytes:
        """The model as serialized protobuf bytes (what a ``.model`` file holds)."""
        return self._model.serialized_model_proto()

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_core", None)
        state["model_proto"] = self.serialized_model_proto()
        return state

    def __setstate__(self, state):
        state = state.copy() if isinstance(state, dict) else {"model_proto": state}
        SentencePieceProcessor.__init__(self)
        self.LoadFromSerializedProto(state.pop("model_proto"))
        self.__dict__.update(state)


class _BatchDecoders:
    """``sentencepiece``'s private batch decoders (``_DecodePiecesBatch``, ``_DecodeIdsBatch``,
    their ``AsBytes`` / ``AsSerializedProto`` forms, ``_DecodeAsOffsetMappingBatch``) on
    ``Decode``. The batch and each sequence are read once, by iteration, so a ``__len__``
    that changes between calls cannot make them read past the end."""

    def __init__(self, owner: SentencePieceProcessor):
        self._owner = owner

    def _decode(self, batch, num_threads, thread_pool, return_type, return_bytes=None):
        sequences = [list(sequence) for sequence in batch]
        return (
            self._owner.Decode(
                sequences,
                return_type=return_type,
                num_threads=num_threads,
                thread_pool=thread_pool,
                return_bytes=return_bytes,
            )
            if sequences
            else []
        )

    def _DecodePiecesBatch(self, batch, num_threads, thread_pool):
        return self._decode(batch, num_threads, thread_pool, str)

    def _DecodePiecesAsBytesBatch(self, batch, num_threads, thread_pool):
        return self._decode(batch, num_threads, thread_pool, bytes)

    def _DecodePiecesAsSerializedProtoBatch(self, batch, num_threads, thread_pool):
        return self._decode(batch, num_threads, thread_pool, "serialized_proto")

    _DecodeIdsBatch = _DecodePiecesBatch
    _DecodeIdsAsBytesBatch = _DecodePiecesAsBytesBatch
    _DecodeIdsAsSerializedProtoBatch = _DecodePiecesAsSerializedProtoBatch

    def _DecodeAsOffsetMappingBatch(self, batch, num_threads, thread_pool, return_bytes):
        return self._decode(batch, num_threads, thread_pool, "offset_mapping", bool(return_bytes))


def _normalize(native, input, with_offsets):
    """Normalizes a text or a list of texts with ``native.normalize``. A ``str`` gives a
    ``str`` (with ``with_offsets``: the character offset in the input of each normalized
    character, then the input's length); UTF-8 ``bytes`` give ``bytes`` (with byte offsets of
    each normalized byte, then the end), as ``sentencepiece``'s ``Normalize``."""

    def one(text):
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"Input must be str or bytes, not {type(text).__name__}")
        normalized, offsets = _native_call(native.normalize, text)
        return (normalized, offsets) if with_offsets else normalized

    return _for_each_text(one, input)


class SentencePieceNormalizer:
    """``sentencepiece.SentencePieceNormalizer``: SentencePiece's text normalization on its
    own. The rules come from exactly one of ``model_file`` / ``model_proto`` (a ``.model``'s
    normalizer), ``normalizer_spec`` (a serialized ``NormalizerSpec`` or the message),
    ``rule_tsv`` (a TSV of hexadecimal code points, sentencepiece's format), ``rule_name``
    (nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf, identity) or ``norm_map`` (pairs ``(source,
    target)``, str or UTF-8 bytes). ``add_dummy_prefix``, ``escape_whitespaces`` and
    ``remove_extra_whitespaces`` override the loaded spec's flags when given (a spec built from
    rules starts with all three true, the proto defaults)."""

    def __init__(
        self,
        model_file=None,
        model_proto=None,
        normalizer_spec=None,
        rule_tsv=None,
        rule_name=None,
        norm_map=None,
        add_dummy_prefix=None,
        escape_whitespaces=None,
        remove_extra_whitespaces=None,
    ):
        N = _native.Normalizer
        if model_file:
            with _open_model_file(model_file) as f:
                native = _native_call(N.from_model, f.read())
        elif model_proto:
            native = _native_call(N.from_model, _serialized(model_proto))
        elif normalizer_spec:
            native = _native_call(N.from_spec, _serialized(normalizer_spec))
        elif rule_tsv:
            native = _native_call(N.from_rule_tsv, os.fsdecode(os.fspath(rule_tsv)))
        elif rule_name:
            native = _native_call(N.from_rule_name, rule_name)
        elif norm_map:
            native = _native_call(N.from_map, [(_rule_text(a), _rule_text(b)) for a, b in norm_map])
        else:
            raise ArgumentError("no model is specified")
        for flag, value in (
            ("add_dummy_prefix", add_dummy_prefix),
            ("escape_whitespaces", escape_whitespaces),
            ("remove_extra_whitespaces", remove_extra_whitespaces),
        ):
            if value is not None:
                native = native.with_flag(flag, bool(value))
        self._normalizer = native

    def Normalize(self, input, with_offsets=None):
        """The normalized text (or texts); see ``SentencePieceProcessor.normalize`` for
        ``with_offsets`` and bytes input."""
        return _normalize(self._normalizer, input, with_offsets)

    def Decompile(self):
        """The rules ``(source, target)`` of the charsmap, sorted by source."""
        return self._normalizer.decompile()

    def serialized_normalizer_spec(self) -> bytes:
        """The ``NormalizerSpec`` (flags and compiled rules) as protobuf bytes."""
        return self._normalizer.serialized_normalizer_spec()

    def serialized_model_proto(self) -> bytes:
        """The model it was loaded from (with the flags given here), or a ``ModelProto`` that
        holds only this spec."""
        return self._normalizer.serialized_model_proto()

    def __getstate__(self):
        return self.serialized_model_proto()

    def __setstate__(self, serialized_model_proto):
        self._normalizer = _native_call(_native.Normalizer.from_model, serialized_model_proto)


def _serialized(message) -> bytes:
    """A protobuf message's bytes (a message object or bytes already)."""
    return message.SerializeToString() if hasattr(message, "SerializeToString") else bytes(message)


def _rule_text(value) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise ArgumentError(f"norm_map: {value!r} is not valid UTF-8") from None
    return value


def _open_model_file(path):
    try:
        return open(path, "rb")
    except FileNotFoundError as e:
        raise ModelFileNotFoundError(e.errno, f"NOT_FOUND: {e.filename!r}: {e.strerror}") from None
    except OSError as e:
        raise ModelFileError(e.errno, f"{e.filename!r}: {e.strerror}") from None


def _save(path: str, data: bytes) -> None:
    """Saves ``data`` to ``path`` atomically; an ``OSError`` as ``sentencepiece`` gives it: a
    :class:`ModelFileError` (also a ``RuntimeError``) naming ``path``, never a temporary file."""
    try:
        with _atomic_open(path, "wb") as f:
            f.write(data)
    except FileNotFoundError as e:
        raise ModelFileNotFoundError(e.errno, f"NOT_FOUND: {path!r}: {e.strerror}") from None
    except OSError as e:
        raise ModelFileError(e.errno, f"{path!r}: {e.strerror}") from None


def _add_snake_case(cls) -> None:
    """``EncodeAsIds`` → ``encode_as_ids`` etc., as ``sentencepiece`` names them."""
    snake = {}
    for name, value in list(cls.__dict__.items()):
        if _re.match(r"^[A-Z]+", name):
            snake[_re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower().replace("n_best", "nbest")] = value
    for name, value in snake.items():
        setattr(cls, name, value)


SentencePieceProcessor.Tokenize = SentencePieceProcessor.Encode
SentencePieceProcessor.Detokenize = SentencePieceProcessor.Decode
_add_snake_case(SentencePieceProcessor)


class SentencePieceTrainer:
    """Trains SentencePiece models (``model_type`` unigram, the default, bpe, char or word;
    ``sentencepiece``'s options and defaults) and writes ``<model_prefix>.model`` / ``.vocab``
    files that both ``sentencepiece`` and tokenmill load. Options come as keyword arguments
    (``Train(input='corpus.txt', model_prefix='m', vocab_size=8000)``) or as the
    ``"--input=corpus.txt --model_prefix=m"`` string; the corpus is ``input`` files or a
    ``sentence_iterator``; with ``model_writer`` the model bytes go to ``model_writer.write``
    instead of files. Each file is saved atomically, the ``.model`` first: a training killed
    between the two leaves the new ``.model`` beside the old ``.vocab``. A failed save raises a
    ``ModelFileError`` (``OSError`` and ``RuntimeError``) naming the file.

    As in sentencepiece 0.2.3: ``pretokenizer`` is a callable that gets each normalized
    sentence (whitespace already ``▁``) and returns its chunks; no piece is learnt across two
    chunks. The chunks must join back to the sentence unless
    ``allow_inconsistent_pretokenization=True``; an exception the pretokenizer raises stops
    training as the ``RuntimeError`` "Pretokenizer failed: ..." (chained to it). It excludes
    ``pretokenization_delimiter`` (the same boundaries from a delimiter string).
    ``normalizer`` (a ``SentencePieceNormalizer``) gives the normalization to train with and
    store in the model; it excludes the normalization options. ``logstream`` is accepted and
    unused (tokenmill's trainer writes no log), so are ``minloglevel``, ``random_seed``,
    ``mining_sentence_size``, ``training_sentence_size`` and the differential-privacy options;
    ``auto_character_coverage`` only in its default (false)."""

    @staticmethod
    def _encode(value) -> str:
        if isinstance(value, (list, tuple)):
            import csv
            import io

            f = io.StringIO()
            csv.writer(f, lineterminator="").writerow([str(v) for v in value])
            return f.getvalue()
        return str(value)

    @staticmethod
    def Train(arg=None, logstream=None, **kwargs) -> None:
        """Trains a model (see the class docstring)."""
        sentence_iterator = model_writer = pretokenizer = normalizer_spec = None
        allow_inconsistent = False
        if arg is not None and isinstance(arg, str):
            options = _native.parse_flags(arg)
        else:
            options = []
            for key, value in kwargs.items():
                if key in ("sentence_iterator", "sentence_reader"):
                    sentence_iterator = value
                elif key == "model_writer":
                    model_writer = value
                elif key == "pretokenizer":
                    pretokenizer = value
                elif key == "allow_inconsistent_pretokenization":
                    allow_inconsistent = bool(value)
                elif key == "normalizer":
                    normalizer_spec = value.serialized_normalizer_spec() if value else None
                else:
                    options.append((key, SentencePieceTrainer._encode(value)))
        if pretokenizer is not None and not callable(pretokenizer):
            raise TypeError("pretokenizer must be a callable (str -> list of str)")
        sentences = None
        if sentence_iterator is not None:
            sentences = [
                s.decode("utf-8") if isinstance(s, bytes) else str(s) for s in sentence_iterator
            ]
        prefix = dict(options).get("model_prefix", "")
        if model_writer is None and not prefix:
            raise ArgumentError("model_prefix must not be empty (or pass model_writer=...)")
        model, vocab = _native_call(
            _native.train, options, sentences, pretokenizer, allow_inconsistent, normalizer_spec
        )
        if model_writer is not None:
            model_writer.write(model)
            return None
        # Each file is saved atomically; a kill between the two leaves a new .model beside the
        # old .vocab (docs/design/saving.md). The .model goes first: it is what loads.
        _save(prefix + ".model", model)
        _save(prefix + ".vocab", vocab.encode("utf-8"))
        return None

    train = Train


_add_snake_case(SentencePieceTrainer)
_add_snake_case(SentencePieceNormalizer)


# --------------------------------------------------------------------------------- conversion
def _as_processor(model) -> SentencePieceProcessor:
    if isinstance(model, SentencePieceProcessor):
        return model
    if isinstance(model, (bytes, bytearray)):
        return SentencePieceProcessor(model_proto=bytes(model))
    return SentencePieceProcessor(model_file=model)


def to_tokenizer(model):
    """A ``tokenmill.Tokenizer`` (savable as tokenizer.json, loadable by ``tokenizers``) that
    encodes like the SentencePiece BPE or Unigram model ``model`` (a path, serialized bytes or a
    ``SentencePieceProcessor``). Avoids the usual conversion bugs: byte fallback is kept
    (``byte_fallback=True`` + ``ByteFallback`` decoder), the dummy prefix is a ``Prepend``
    applied once to the whole text (as SentencePiece does, not per word), extra whitespace is
    removed only where the model does, the precompiled charsmap is used as is, and user-defined
    symbols become added tokens so they are never split. BPE merges are ranked by the score of
    the piece they make (SentencePiece's merge order); Unigram keeps the piece scores, its
    unknown characters fuse into one ``<unk>`` as sentencepiece's do.

    Not expressible in tokenizer.json: control and byte pieces stay ordinary vocabulary entries,
    so a text that literally contains ``<s>`` or ``<0x41>`` can encode differently; the Unigram
    score of an unknown character is the lowest score minus 10 in double precision there
    (sentencepiece rounds it to a float), which can flip exact ties."""
    from tokenmill import AddedToken, Regex, Tokenizer, decoders, models, normalizers

    sp = _as_processor(model)
    core = sp._model
    kind = core.model_type()
    if kind not in (1, 2):
        raise ArgumentError(
            "to_tokenizer converts SentencePiece Unigram and BPE models (model_type UNIGRAM or BPE)"
        )
    n = sp.get_piece_size()
    pieces = [sp.id_to_piece(i) for i in range(n)]
    types = [core.piece_type(i) for i in range(n)]
    scores = [sp.get_score(i) for i in range(n)]
    byte_fallback = any(t == _BYTE for t in types)
    if kind == 1:
        tok = Tokenizer(
            models.Unigram(
                list(zip(pieces, scores)), sp.unk_id() if sp.unk_id() >= 0 else None, byte_fallback
            )
        )
    else:
        vocab = {p: i for i, p in enumerate(pieces)}
        mergeable = {
            p: i for i, p in enumerate(pieces) if types[i] in (_NORMAL, _USER_DEFINED, _UNUSED)
        }
        merges = []
        for piece, i in mergeable.items():
            if types[i] != _NORMAL or len(piece) < 2:
                continue
            for k in range(1, len(piece)):
                left, right = piece[:k], piece[k:]
                if left in mergeable and right in mergeable:
                    merges.append((-scores[i], i, vocab[left], vocab[right], left, right))
        merges.sort()
        unk = pieces[sp.unk_id()] if sp.unk_id() >= 0 else None
        tok = Tokenizer(
            models.BPE(
                vocab,
                [(m[4], m[5]) for m in merges],
                unk_token=unk,
                fuse_unk=True,
                byte_fallback=byte_fallback,
            )
        )
    charsmap, dummy_prefix, remove_extra, ws_suffix = _native.normalizer_settings(
        sp.serialized_model_proto()
    )
    if ws_suffix:
        raise ArgumentError(
            "to_tokenizer: treat_whitespace_as_suffix models have no tokenizer.json equivalent"
        )
    steps = []
    if charsmap:
        steps.append(normalizers.Precompiled(charsmap))
    if remove_extra:
        # sentencepiece strips and collapses spaces only (after the charsmap), not other
        # whitespace, and strips at the ends of the text only: `^`/`$` would match at every line
        # (tokenizers' Oniguruma reads them as line anchors).
        steps += [
            normalizers.Replace(Regex(r"\A +| +\z"), ""),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    if dummy_prefix:
        steps.append(normalizers.Prepend("▁"))
    steps.append(normalizers.Replace(" ", "▁"))
    tok.normalizer = normalizers.Sequence(steps)
    dec = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if dummy_prefix:
        dec.append(decoders.Strip(content=" ", left=1, right=0))
    if sp.unk_id() >= 0:
        # After Fuse and Strip: sentencepiece decodes <unk> as " ⁇ " wherever it stands.
        dec.append(decoders.Replace(pieces[sp.unk_id()], " \u2047 "))
    tok.decoder = decoders.Sequence(dec)
    tok.add_tokens(
        [
            AddedToken(p, special=False, normalized=False)
            for p, t in zip(pieces, types)
            if t == _USER_DEFINED
        ]
    )
    # Control pieces stay plain vocabulary entries: SentencePiece never matches them in text.
    return tok


def _find_precompiled_charsmap(normalizer) -> Optional[bytes]:
    """The charsmap of the first ``Precompiled`` normalizer in a tokenizer.json normalizer."""
    import base64

    if isinstance(normalizer, dict):
        if normalizer.get("type") == "Precompiled" and normalizer.get("precompiled_charsmap"):
            return base64.b64decode(normalizer["precompiled_charsmap"])
        for child in normalizer.get("normalizers") or []:
            found = _find_precompiled_charsmap(child)
            if found is not None:
                return found
    return None


def from_tokenizer(tokenizer) -> bytes:
    """A serialized SentencePiece ``.model`` equivalent to a tokenizer.json BPE or Unigram
    tokenizer of the SentencePiece kind (a ``tokenmill.Tokenizer``/``tokenizers.Tokenizer`` or
    the path of its tokenizer.json): "▁"-escaped text with an optional dummy prefix, the
    ``Precompiled`` charsmap when there is one, byte fallback when set. BPE merge ranks become
    piece scores (rank r → -r); Unigram keeps its scores. The unknown token becomes UNKNOWN,
    special added tokens (and ``<s>``, ``</s>``, ``<pad>``) CONTROL, other added tokens
    USER_DEFINED and ``<0xNN>`` pieces BYTE."""
    import json

    if isinstance(tokenizer, (str, os.PathLike)):
        with open(tokenizer, encoding="utf-8") as f:
            config = json.load(f)
    else:
        config = json.loads(tokenizer.to_str())
    model = config.get("model") or {}
    kind_name = model.get("type")
    if kind_name not in ("BPE", "Unigram"):
        raise ArgumentError("from_tokenizer converts BPE and Unigram tokenizers")
    added = {t["content"]: t for t in config.get("added_tokens", [])}
    byte_fallback = bool(model.get("byte_fallback"))
    if kind_name == "BPE":
        merges = [m.split(" ", 1) if isinstance(m, str) else m for m in model.get("merges", [])]
        rank = {}
        for r, (left, right) in enumerate(merges):
            rank.setdefault(left + right, r)
        vocab_items = set(model["vocab"].items())
        unk = model.get("unk_token")

        def learned(piece: str, i: int) -> bool:
            return piece in rank

        def score_of(piece: str, i: int) -> float:
            return -float(rank[piece]) if piece in rank else -float(len(merges) + i)

    else:
        unigram_vocab = [(p, float(sc)) for p, sc in model.get("vocab", [])]
        vocab_items = {(p, i) for i, (p, _) in enumerate(unigram_vocab)}
        unk_id = model.get("unk_id")
        unk = (
            unigram_vocab[unk_id][0]
            if unk_id is not None and 0 <= unk_id < len(unigram_vocab)
            else None
        )

        def learned(piece: str, i: int) -> bool:
            return i < len(unigram_vocab) and unigram_vocab[i][1] != 0.0

        def score_of(piece: str, i: int) -> float:
            return unigram_vocab[i][1] if i < len(unigram_vocab) else 0.0

    by_id = sorted(
        vocab_items | {(t["content"], t["id"]) for t in added.values()}, key=lambda x: x[1]
    )
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise ArgumentError("from_tokenizer: token ids must be 0..n-1 without gaps")
    pieces = []
    for piece, i in by_id:
        if piece == unk:
            kind = _UNKNOWN
        elif piece in added:
            kind = _CONTROL if added[piece].get("special") else _USER_DEFINED
        elif piece in ("<s>", "</s>", "<pad>") or (
            not learned(piece, i) and _re.fullmatch(r"\[/?[A-Z_]+\]|<[a-z_/]+>", piece)
        ):
            kind = _CONTROL
        elif byte_fallback and _re.fullmatch(r"<0x[0-9A-F]{2}>", piece):
            kind = _BYTE
        else:
            kind = _NORMAL
        pieces.append((piece, score_of(piece, i) if kind == _NORMAL else 0.0, kind))
    normalizer_json = json.dumps(config.get("normalizer"))
    text = normalizer_json + json.dumps(config.get("pre_tokenizer"))
    dummy_prefix = '"Prepend"' in text or ('"Metaspace"' in text and '"never"' not in text)
    remove_extra = '" {2,}"' in normalizer_json
    charsmap = _find_precompiled_charsmap(config.get("normalizer"))
    ids = {p: i for i, (p, _, _) in enumerate(pieces)}
    options = [
        ("model_type", "bpe" if kind_name == "BPE" else "unigram"),
        ("vocab_size", str(len(pieces))),
        ("byte_fallback", str(byte_fallback).lower()),
        ("unk_id", str(ids.get(unk, -1))),
        ("bos_id", str(ids.get("<s>", -1))),
        ("eos_id", str(ids.get("</s>", -1))),
        ("pad_id", str(ids.get("<pad>", -1))),
        ("normalization_rule_name", "identity"),
        ("add_dummy_prefix", str(dummy_prefix).lower()),
        ("remove_extra_whitespaces", str(remove_extra).lower()),
    ]
    return _native_call(_native.build_model, pieces, options, charsmap)


def convert_to_flatbuffer(
    model_file=None,
    model_proto=None,
    serialized_model_proto=None,
    output_file=None,
    skip_char_bigrams=False,
    treat_null_byte_as_unused=False,
    allow_unsupported_model_type=False,
):
    """Converts a model to SentencePiece Lite's FlatBuffers format (``.spm.fb``), byte for byte
    what ``sentencepiece.convert_to_flatbuffer`` writes.

    Give exactly one of ``model_file`` (a path), ``model_proto`` (a ``ModelProto`` message or its
    bytes) or ``serialized_model_proto`` (bytes). Returns the bytes, or writes them atomically to
    ``output_file`` and returns ``None``.

    ``skip_char_bigrams`` leaves out the character-bigram trie of a Unigram model (BPE models
    always keep it); ``treat_null_byte_as_unused`` turns a one-byte ``"\\0"`` piece of a
    byte-fallback model into an UNUSED ``<unused_ID>`` piece instead of an error. WORD and CHAR
    models raise ``ValueError`` unless ``allow_unsupported_model_type`` is true (SentencePiece
    Lite then runs them as Unigram). As in ``sentencepiece``: no or several models and empty
    paths are a ``ValueError``, a ``str`` where bytes are expected a ``TypeError``, a model that
    cannot be converted (unparsable, duplicate or empty pieces, NUL bytes, bad BPE scores) an
    ``ArgumentError`` (``ValueError``) whose message starts with ``INVALID_ARGUMENT:``, and an
    unreadable file a ``ModelFileError`` (``RuntimeError``).
    """
    if sum(x is not None for x in (model_file, model_proto, serialized_model_proto)) != 1:
        raise ArgumentError(
            "Exactly one of model_file, model_proto, or serialized_model_proto must be specified."
        )
    out_path = None
    if output_file is not None:
        out_path = os.fsdecode(os.fspath(output_file))
        if not out_path:
            raise ArgumentError("output_file must not be empty.")
    if model_file is not None:
        path = os.fsdecode(os.fspath(model_file))
        if not path:
            raise ArgumentError("model_file must not be empty.")
        with _open_model_file(path) as f:
            serialized = f.read()
    elif model_proto is not None:
        if hasattr(model_proto, "SerializeToString"):
            serialized = model_proto.SerializeToString()
        elif isinstance(model_proto, bytes):
            serialized = model_proto
        else:
            raise TypeError("model_proto must be a ModelProto object or bytes.")
    else:
        if not isinstance(serialized_model_proto, bytes):
            raise TypeError("serialized_model_proto must be bytes.")
        serialized = serialized_model_proto
    try:
        flatbuffer = _native.convert_to_flatbuffer(
            serialized,
            bool(skip_char_bigrams),
            bool(treat_null_byte_as_unused),
            bool(allow_unsupported_model_type),
        )
    except InvalidArgumentError as e:
        raise ArgumentError(f"INVALID_ARGUMENT: {e}") from None
    if out_path is None:
        return flatbuffer
    _save(out_path, flatbuffer)
    return None


ConvertToFlatbuffer = convert_to_flatbuffer
