"""Token files for language-model training: a whole corpus tokenized into shards of token ids.

:func:`encode_dataset` (the command ``tokenmill encode-dataset``) streams documents out of text
files, JSON lines, Parquet files or a Hugging Face ``datasets.Dataset``, encodes them in
batches with the native encoders (all cores, no Python object per token) and writes shards
with deterministic names beside a manifest. :func:`datasets_map_function` is the fast path for
``Dataset.map(batched=True)``.

**Documents.** A text file gives one document per line (the line end removed; empty lines are
skipped), or one per file with ``document_per_file``; a JSON-lines file one per object (its
``field``, a string; blank lines are skipped); a Parquet file or a ``Dataset`` one per row of
the column ``field``. ``.gz`` and ``.zst`` files are decompressed on the fly (``.zst`` needs the
``zstandard`` package). Inputs are read in the order given, each glob's matches sorted.

**Ids.** Each document's ids are exactly ``tokenizer.encode(doc, add_special_tokens=False).ids``
(a tiktoken ``Encoding``: ``encode_ordinary(doc)``; a SentencePiece model: ``encode(doc)``):
by default the post-processor's special tokens (``[CLS]``, ``<s>``, ...) are *not* added, since
pretraining corpora mark documents with ``eos`` / ``bos`` instead; pass
``add_special_tokens=True`` to add them. With ``bos`` and/or ``eos`` every document is stored
as ``[bos] + ids + [eos]``.

**Files.** For ``output="out/train"``, shard ``k`` is ``out/train-{k:05d}.EXT`` and the
manifest ``out/train.manifest.json``. The ids are ``uint16`` when every id of the vocabulary
fits (vocabulary size ≤ 65536), else ``uint32``; a shard ends at the first document boundary
at or past ``shard_tokens`` tokens (a document never spans two shards). Formats:

- ``bin`` (nanoGPT's layout): ``train-00000.bin`` holds the raw little-endian ids of the
  documents one after the other, no header; ``train-00000.idx.npy`` is an ``int64`` NumPy array
  of ``documents + 1`` offsets: document ``i`` is ``ids[idx[i]:idx[i + 1]]`` (its BOS and EOS
  included), ``idx[0] == 0`` and ``idx[-1] == len(ids)``. Load with
  ``numpy.memmap(path, dtype=manifest["dtype"], mode="r")``.
- ``npy``: the same ids as a 1-D NumPy array ``train-00000.npy`` (``numpy.load(path,
  mmap_mode="r")``) with the same ``train-00000.idx.npy``.
- ``parquet`` / ``arrow``: ``train-00000.parquet`` (or an Arrow IPC file ``.arrow``), one row
  per document, an ``input_ids`` column of lists of the id type (needs ``pyarrow``).

**Manifest** (JSON): ``settings`` (format, dtype, tokenizer identity with a sha256 of its
definition, the inputs with their sizes and modification times, field, eos/bos ids, shard
size, ...), ``shards`` (for each: its files, ``documents``, ``tokens`` and the ``sha256`` of
each file) and ``complete``. Shards and manifest are written atomically (a temporary file in
the same folder, flushed to disk, renamed; permissions from the umask): a killed run leaves
whole shards only. A rerun with the same settings verifies the shards the manifest lists (file
checksums) and writes only those missing or damaged; a rerun with other settings raises
:class:`DatasetError` unless ``overwrite=True``.
"""

from __future__ import annotations

import contextlib
import glob as _glob
import gzip
import hashlib
import io
import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from tokenmill._atomic import TEMPORARY_MARK, atomic_open, remove_stale_temporaries

__all__ = ["DatasetError", "FORMATS", "datasets_map_function", "encode_dataset", "load_shard"]

#: Output formats: name → file extension of the ids file.
FORMATS = {"bin": ".bin", "npy": ".npy", "parquet": ".parquet", "arrow": ".arrow"}
INDEX_SUFFIX = ".idx.npy"
MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_VERSION = 1
DEFAULT_SHARD_TOKENS = 2**28  # 512 MiB of uint16 ids, 1 GiB of uint32
BATCH_BYTES = 4 << 20  # text encoded per native call: enough documents to keep every core busy
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")


class DatasetError(ValueError):
    """A corpus or an output that cannot be tokenized as asked; the message names the file
    (and line) and what is wrong."""


# ---- the tokenizer ------------------------------------------------------------------------


class _Encoder:
    """Any supported tokenizer behind one call: texts → ``(ids uint32, offsets int64)``."""

    def __init__(self, tokenizer: Any, add_special_tokens: bool, encoding: Optional[str]) -> None:
        from tokenmill import Tokenizer
        from tokenmill.tiktoken.core import Encoding

        self.source = None
        if isinstance(tokenizer, (str, os.PathLike)):
            name = os.fspath(tokenizer)
            self.source = os.path.abspath(name) if os.path.exists(name) else name
            tokenizer = _load_tokenizer(name, encoding)
        self.add_special_tokens = add_special_tokens
        self.tokenizer = tokenizer
        if isinstance(tokenizer, Tokenizer):
            self.kind = "tokenizer"
            self.vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
            definition = tokenizer.to_str().encode()
        elif isinstance(tokenizer, Encoding):
            self.kind = "tiktoken"
            self.vocab_size = tokenizer.max_token_value + 1
            ranks = sorted(tokenizer._mergeable_ranks.items(), key=lambda kv: kv[1])
            definition = repr(
                (tokenizer._pat_str, ranks, sorted(tokenizer._special_tokens.items()))
            ).encode()
        elif hasattr(tokenizer, "serialized_model_proto"):
            self.kind = "sentencepiece"
            self.vocab_size = tokenizer.get_piece_size()
            definition = tokenizer.serialized_model_proto()
        else:
            raise TypeError(
                "tokenizer: expected a path or name, a tokenmill Tokenizer, a tokenmill.tiktoken "
                f"Encoding or a SentencePieceProcessor, got {type(tokenizer).__name__}"
            )
        self.sha256 = hashlib.sha256(definition).hexdigest()

    def encode(self, texts: List[str]) -> Tuple[np.ndarray, np.ndarray]:
        if self.kind == "tokenizer":
            return self.tokenizer.encode_batch_ids(texts, self.add_special_tokens)
        if self.kind == "tiktoken":
            return self.tokenizer.encode_ordinary_batch_to_numpy(texts)
        # SentencePiece has no flat batch call: its per-document lists, flattened.
        lists = self.tokenizer.encode(texts)
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in lists], out=offsets[1:])
        ids = np.fromiter((i for x in lists for i in x), dtype=np.uint32, count=int(offsets[-1]))
        return ids, offsets

    def token_id(self, token: Union[str, int, None], what: str) -> Optional[int]:
        """The id of ``token`` (a token string, or an id as an int or a decimal string)."""
        if token is None:
            return None
        if isinstance(token, str) and token.isdigit():
            token = int(token)
        if isinstance(token, int):
            if not 0 <= token < self.vocab_size:
                raise DatasetError(
                    f"{what}: id {token} is not in the vocabulary (0..{self.vocab_size - 1})"
                )
            return token
        found: Optional[int]
        if self.kind == "tokenizer":
            found = self.tokenizer.token_to_id(token)
        elif self.kind == "tiktoken":
            try:
                found = self.tokenizer.encode_single_token(token)
            except KeyError:
                found = None
        else:
            found = self.tokenizer.piece_to_id(token)
            found = found if self.tokenizer.id_to_piece(found) == token else None
        if found is None:
            raise DatasetError(f"{what}: {token!r} is not a token of the vocabulary")
        return found

    def identity(self) -> Dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "vocab_size": self.vocab_size,
            "sha256": self.sha256,
        }


def _load_tokenizer(path: str, encoding: Optional[str]) -> Any:
    """A tokenizer file the CLI reads, or a tiktoken encoding name (``cl100k_base``)."""
    from tokenmill.cli import formats
    from tokenmill.tiktoken import get_encoding, list_encoding_names

    if not os.path.exists(path) and path in list_encoding_names():
        return get_encoding(path)
    loaded = formats.load(path, encoding)
    for attribute in ("tokenizer", "enc", "sp"):  # HfLoaded, TiktokenLoaded, SentencePieceLoaded
        if hasattr(loaded, attribute):
            return getattr(loaded, attribute)
    raise DatasetError(f"{path}: not a tokenizer encode-dataset can use")  # pragma: no cover


# ---- the inputs ---------------------------------------------------------------------------


def _expand(inputs: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]) -> List[str]:
    """The files of ``inputs`` (paths and globs, each glob's matches sorted), duplicates
    dropped."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    files: List[str] = []
    for pattern in map(os.fspath, inputs):
        if _glob.has_magic(pattern):
            matches = sorted(p for p in _glob.glob(pattern, recursive=True) if os.path.isfile(p))
            if not matches:
                raise DatasetError(f"{pattern}: no file matches")
        elif os.path.isdir(pattern):
            raise DatasetError(f"{pattern}: is a folder (give files or a glob such as dir/*.jsonl)")
        elif not os.path.exists(pattern):
            raise DatasetError(f"{pattern}: no such file")
        else:
            matches = [pattern]
        files.extend(m for m in matches if m not in files)
    if not files:
        raise DatasetError("no input files")
    return files


def _kind(path: str, input_format: str) -> str:
    if input_format != "auto":
        return input_format
    name = path.lower()
    for compression in (".gz", ".zst"):
        if name.endswith(compression):
            name = name[: -len(compression)]
    if name.endswith(".parquet"):
        return "parquet"
    return "jsonl" if name.endswith(JSONL_SUFFIXES) else "text"


class _Counted(io.RawIOBase):
    """A raw file whose bytes read so far are counted (the progress of compressed inputs)."""

    def __init__(self, raw: Any, progress: _Progress) -> None:
        self.raw, self.progress = raw, progress

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)
        self.progress.read(n or 0)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


def _open_binary(path: str, progress: _Progress) -> Any:
    """``path`` opened for reading bytes, decompressed if it is ``.gz`` / ``.zst``."""
    raw = _Counted(open(path, "rb", buffering=0), progress)  # noqa: SIM115 (closed by caller)
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.GzipFile(fileobj=io.BufferedReader(raw, 1 << 20), mode="rb")
    if lower.endswith(".zst"):
        try:
            import zstandard
        except ImportError:
            raw.close()
            raise DatasetError(
                f"{path}: .zst files need the zstandard package (pip install tokenmill[data])"
            ) from None
        return io.BufferedReader(
            zstandard.ZstdDecompressor().stream_reader(raw, closefd=True), 1 << 20
        )
    return io.BufferedReader(raw, 1 << 20)


def _line_documents(path: str, kind: str, field: str, progress: _Progress) -> Iterator[str]:
    with _open_binary(path, progress) as f:
        try:
            for n, line in enumerate(f, 1):
                if kind == "text":
                    text = line.rstrip(b"\r\n")
                    if text:
                        yield _utf8(text, path, n)
                    continue
                if not line.strip():
                    continue
                try:
                    value = json.loads(line.rstrip())
                except ValueError as e:
                    what = f"{e.msg} at column {e.colno}" if hasattr(e, "colno") else str(e)
                    raise DatasetError(f"{path}:{n}: not a JSON line ({what})") from None
                text = value.get(field) if isinstance(value, dict) else None
                if not isinstance(text, str):
                    what = (
                        "no"
                        if not isinstance(value, dict) or field not in value
                        else "a non-string"
                    )
                    raise DatasetError(
                        f"{path}:{n}: {what} {field!r} field "
                        f"(a JSON object with a string {field!r} is expected)"
                    )
                yield text
        except DatasetError:
            raise
        except Exception as e:  # a damaged .gz / .zst, a read error: named with the file
            raise DatasetError(f"{path}: cannot be read ({type(e).__name__}: {e})") from None


def _utf8(data: bytes, path: str, line: Optional[int] = None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = f"{path}:{line}" if line is not None else path
        raise DatasetError(f"{where}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def _parquet_documents(path: str, field: str, progress: _Progress) -> Iterator[str]:
    pq = _pyarrow("parquet", path)
    try:
        parquet = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own classes
        raise DatasetError(f"{path}: not a Parquet file ({e})") from None
    names = parquet.schema_arrow.names
    if field not in names:
        raise DatasetError(f"{path}: no column {field!r} (columns: {', '.join(names)})")
    rows = max(parquet.metadata.num_rows, 1)
    size = os.path.getsize(path)
    row = 0
    for batch in parquet.iter_batches(columns=[field], batch_size=4096):
        column = batch.column(0)
        if not (column.type.equals("string") or column.type.equals("large_string")):
            raise DatasetError(f"{path}: column {field!r} holds {column.type}, not strings")
        for n, text in enumerate(column.to_pylist(), row + 1):
            if text is None:
                raise DatasetError(f"{path}: row {n}: {field!r} is null")
            yield text
        progress.read(size * (row + len(column)) // rows - size * row // rows)
        row += len(column)


def _pyarrow(module: str, what: str) -> Any:
    try:
        import importlib

        return importlib.import_module(f"pyarrow.{module}" if module else "pyarrow")
    except ImportError:
        raise DatasetError(
            f"{what}: needs the pyarrow package (pip install tokenmill[data])"
        ) from None


def _file_documents(
    files: List[str], options: Dict[str, Any], progress: _Progress
) -> Iterator[str]:
    for path in files:
        kind = _kind(path, options["input_format"])
        if kind == "parquet":
            yield from _parquet_documents(path, options["field"], progress)
        elif options["document_per_file"] and kind == "text":
            with _open_binary(path, progress) as f:
                yield _utf8(f.read(), path)
        else:
            yield from _line_documents(path, kind, options["field"], progress)


def _dataset_documents(dataset: Any, field: str, progress: _Progress) -> Iterator[str]:
    if field not in dataset.column_names:
        raise DatasetError(
            f"the dataset has no column {field!r} (columns: {', '.join(dataset.column_names)})"
        )
    for n, batch in enumerate(dataset.select_columns([field]).with_format("arrow").iter(4096)):
        texts = batch.column(0).to_pylist()
        if any(t is None or not isinstance(t, str) for t in texts):
            raise DatasetError(
                f"the dataset's column {field!r} holds a value that is not a string "
                f"(in rows {n * 4096 + 1} to {n * 4096 + len(texts)})"
            )
        progress.read(sum(map(len, texts)))
        yield from texts


def _batches(documents: Iterator[str], batch_bytes: int) -> Iterator[List[str]]:
    batch: List[str] = []
    size = 0
    for text in documents:
        batch.append(text)
        size += len(text)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _prefetched(items: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """``items``, produced by a background thread up to ``depth`` ahead (reading and parsing
    overlap with encoding, which releases the GIL); the producer's error is raised here."""
    q: queue.Queue[Tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                q.put(("item", item))
            q.put(("end", None))
        except BaseException as e:  # handed to the consumer, which raises it
            q.put(("error", e))

    thread = threading.Thread(target=produce, name="tokenmill-data-reader", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while thread.is_alive():  # let the producer see `stop` (it may wait on a full queue)
            with contextlib.suppress(queue.Empty):
                q.get(timeout=0.05)
        thread.join()


# ---- progress -----------------------------------------------------------------------------


class _Progress:
    """A tqdm bar of input bytes (MB/s, ETA) with tokens/s, when enabled and tqdm is there."""

    def __init__(self, total: Optional[int], enabled: Optional[bool]) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        self.tokens = 0
        self.start = time.monotonic()
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self.bar = tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                unit_divisor=1000,
                desc="encode-dataset",
                dynamic_ncols=True,
            )

    def read(self, n: int) -> None:
        if self.bar is not None and n:
            self.bar.update(n)

    def encoded(self, tokens: int) -> None:
        self.tokens += tokens
        if self.bar is not None:
            rate = self.tokens / max(time.monotonic() - self.start, 1e-9)
            self.bar.set_postfix_str(
                f"{self.tokens:,} tokens, {rate / 1e6:.2f}M tokens/s", refresh=False
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---- the shards ---------------------------------------------------------------------------


def _shard_files(prefix: str, k: int, format: str) -> List[str]:
    base = f"{prefix}-{k:05d}"
    files = [base + FORMATS[format]]
    if format in ("bin", "npy"):
        files.append(base + INDEX_SUFFIX)
    return files


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _is_finished(entry: Dict[str, Any], folder: str) -> bool:
    """Whether the shard files of a manifest entry are there with their checksums."""
    try:
        return all(
            _sha256(os.path.join(folder, name)) == digest
            for name, digest in entry["sha256"].items()
        )
    except (OSError, KeyError, TypeError, AttributeError):
        return False


class _ShardWriter:
    """One shard being written: ids streamed into a temporary file, renamed when complete."""

    def __init__(self, path: str, format: str, dtype: np.dtype) -> None:
        self.path, self.format, self.dtype = path, format, dtype
        self.tokens = 0
        self.offsets: List[np.ndarray] = [np.zeros(1, dtype=np.int64)]
        self._context = atomic_open(path, "wb")
        self.file = self._context.__enter__()
        if format == "npy":
            self.header = self._npy_header(0)
            self.file.write(self.header)
        elif format in ("parquet", "arrow"):
            pa = _pyarrow("", path)
            self.list_type = pa.list_(pa.from_numpy_dtype(dtype))
            schema = pa.schema([("input_ids", self.list_type)])
            if format == "parquet":
                self.table_writer = _pyarrow("parquet", path).ParquetWriter(self.file, schema)
            else:
                self.table_writer = pa.ipc.new_file(self.file, schema)

    def _npy_header(self, length: int) -> bytes:
        # The header of a 1-D array; its padded size does not depend on ``length`` (checked).
        buffer = io.BytesIO()
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": (length,),
        }
        np.lib.format.write_array_header_1_0(buffer, header)
        return buffer.getvalue()

    def write(self, ids: np.ndarray, offsets: np.ndarray) -> None:
        """Appends documents: ``ids`` (of the shard's dtype) cut by ``offsets`` (from 0)."""
        if self.format in ("bin", "npy"):
            self.file.write(
                memoryview(np.ascontiguousarray(ids, dtype=self.dtype.newbyteorder("<"))).cast("B")
            )
        else:
            import pyarrow as pa

            column = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(ids))
            self.table_writer.write_batch(
                pa.record_batch([column.cast(self.list_type)], names=["input_ids"])
            )
        self.offsets.append(offsets[1:] + self.tokens)
        self.tokens += int(offsets[-1])

    def finish(self, index_path: Optional[str]) -> int:
        """Completes the shard (and writes its index); the number of documents."""
        if self.format == "npy":
            header = self._npy_header(self.tokens)
            if len(header) != len(self.header):  # pragma: no cover (lengths are fixed)
                raise AssertionError("NumPy header length changed")
            self.file.seek(0)
            self.file.write(header)
        elif self.format in ("parquet", "arrow"):
            self.table_writer.close()
        self._context.__exit__(None, None, None)
        offsets = np.concatenate(self.offsets)
        if index_path is not None:
            with atomic_open(index_path, "wb") as f:
                np.save(f, offsets)
        return len(offsets) - 1

    def abort(self) -> None:
        """Removes the temporary file (nothing of the shard is left)."""
        error = RuntimeError("shard aborted")
        with contextlib.suppress(RuntimeError):
            self._context.__exit__(RuntimeError, error, None)


def _with_markers(
    ids: np.ndarray, offsets: np.ndarray, bos: Optional[int], eos: Optional[int], dtype: np.dtype
) -> Tuple[np.ndarray, np.ndarray]:
    """``ids`` (of documents cut by ``offsets``) as ``dtype``, each document between ``bos`` and
    ``eos`` when given; the new ids and offsets."""
    if ids.size and int(ids.max()) > np.iinfo(dtype).max:  # pragma: no cover (vocab-sized)
        raise DatasetError(f"id {int(ids.max())} does not fit in {dtype}")
    extra = (bos is not None) + (eos is not None)
    if not extra:
        return ids.astype(dtype, copy=False), offsets
    new_offsets = offsets + np.arange(len(offsets), dtype=np.int64) * extra
    out = np.empty(int(new_offsets[-1]), dtype=dtype)
    # One byte per id to mark where BOS / EOS go, the ids into the rest (no int64 positions).
    marker = np.zeros(len(out), dtype=bool)
    if bos is not None:
        out[new_offsets[:-1]] = bos
        marker[new_offsets[:-1]] = True
    if eos is not None:
        out[new_offsets[1:] - 1] = eos
        marker[new_offsets[1:] - 1] = True
    out[~marker] = ids
    return out, new_offsets


# ---- the run ------------------------------------------------------------------------------


def _input_identity(source: Any, files: Optional[List[str]]) -> List[Dict[str, Any]]:
    if files is None:
        return [{"dataset": getattr(source, "_fingerprint", None), "rows": len(source)}]
    out = []
    for path in files:
        st = os.stat(path)
        out.append({"path": os.path.abspath(path), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns})
    return out


def _read_manifest(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise DatasetError(
            f"{path}: not a readable manifest ({e}); pass overwrite to replace it"
        ) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("shards"), list):
        raise DatasetError(
            f"{path}: not a manifest of encode-dataset; pass overwrite to replace it"
        )
    return manifest


def _write_manifest(path: str, manifest: Dict[str, Any]) -> None:
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")


def _shard_names(prefix: str) -> re.Pattern[str]:
    base = re.escape(os.path.basename(prefix))
    return re.compile(base + r"-\d{5}(\.bin|\.npy|\.parquet|\.arrow|\.idx\.npy)\Z")


def _clean_folder(prefix: str) -> List[str]:
    """Removes what killed runs left (unlocked temporary files of shards); the shard files in
    the folder."""
    folder = os.path.dirname(os.path.abspath(prefix))
    pattern = _shard_names(prefix)
    names = os.listdir(folder)
    shards = [n for n in names if pattern.match(n)]
    for name in names:
        if TEMPORARY_MARK in name and name.startswith("."):
            target = name[1:].split("." + TEMPORARY_MARK, 1)[0]
            if pattern.match(target) or target == os.path.basename(prefix) + MANIFEST_SUFFIX:
                remove_stale_temporaries(folder, target)
    return shards


def encode_dataset(
    inputs: Any,
    tokenizer: Any,
    output: Union[str, os.PathLike[str]],
    *,
    format: str = "bin",
    field: str = "text",
    input_format: str = "auto",
    document_per_file: bool = False,
    add_special_tokens: bool = False,
    bos: Union[str, int, None] = None,
    eos: Union[str, int, None] = None,
    shard_tokens: Optional[int] = None,
    shard_bytes: Optional[int] = None,
    dtype: Optional[str] = None,
    encoding: Optional[str] = None,
    overwrite: bool = False,
    progress: Optional[bool] = None,
    batch_bytes: int = BATCH_BYTES,
) -> Dict[str, Any]:
    """Tokenizes a corpus into shards of token ids and a manifest (see the module docstring
    for the documents, ids and file layouts); the manifest, as a dict.

    Args:
        inputs: a path or glob, a list of them (text, JSON lines, Parquet; ``.gz`` / ``.zst``
            compressed), or a Hugging Face ``datasets.Dataset``.
        tokenizer: a tokenizer file any ``tokenmill`` command reads (tokenizer.json, ``.model``,
            ``.tiktoken``, vocab files, a model folder), a tiktoken encoding name
            (``cl100k_base``), or a :class:`tokenmill.Tokenizer`, tiktoken ``Encoding`` or
            ``SentencePieceProcessor``.
        output: the prefix of the files: ``out/train`` writes ``out/train-00000.bin``, ...
            and ``out/train.manifest.json`` (the folder is created).
        format: ``bin``, ``npy``, ``parquet`` or ``arrow``.
        field: the JSON field, Parquet column or dataset column holding the text.
        input_format: ``auto`` (from the file name: ``.jsonl`` / ``.json`` / ``.ndjson`` are
            JSON lines, ``.parquet`` Parquet, anything else text), ``text``, ``jsonl`` or
            ``parquet``.
        document_per_file: each text file is one document (not one per line).
        add_special_tokens: add the post-processor's special tokens (tokenmill ``Tokenizer``
            only).
        bos: token (or id) stored before each document; ``eos``: after each document.
        shard_tokens: tokens per shard (default 2**28); or ``shard_bytes``: bytes of ids.
        dtype: ``uint16`` or ``uint32`` for the ids (default: ``uint16`` when the vocabulary
            fits, else ``uint32``).
        encoding: with a ``.tiktoken`` file, the encoding whose pattern and specials it uses.
        overwrite: replace output written with other settings instead of refusing.
        progress: show a progress bar (default: when stderr is a terminal; needs tqdm).
        batch_bytes: text per native encoding call.
    """
    if format not in FORMATS:
        raise DatasetError(f"unknown format {format!r} (one of {', '.join(FORMATS)})")
    if input_format not in ("auto", "text", "jsonl", "parquet"):
        raise DatasetError(f"unknown input format {input_format!r} (auto, text, jsonl or parquet)")
    if shard_tokens is not None and shard_bytes is not None:
        raise DatasetError("give shard_tokens or shard_bytes, not both")
    enc = _Encoder(tokenizer, add_special_tokens, encoding)
    if add_special_tokens and enc.kind != "tokenizer":
        raise DatasetError("add_special_tokens applies to tokenmill Tokenizer files only")
    bos_id, eos_id = enc.token_id(bos, "bos"), enc.token_id(eos, "eos")
    if dtype not in (None, "auto", "uint16", "uint32"):
        raise DatasetError(f"unknown dtype {dtype!r} (uint16 or uint32)")
    if dtype == "uint16" and enc.vocab_size > 2**16:
        raise DatasetError(f"uint16 cannot hold the ids of a vocabulary of {enc.vocab_size}")
    auto = "uint16" if enc.vocab_size <= 2**16 else "uint32"
    dtype = np.dtype(auto if dtype in (None, "auto") else dtype)
    if shard_bytes is not None:
        shard_tokens = max(1, shard_bytes // dtype.itemsize)
    shard_tokens = DEFAULT_SHARD_TOKENS if shard_tokens is None else shard_tokens
    if shard_tokens <= 0:
        raise DatasetError(f"shard size must be positive, got {shard_tokens}")
    if format in ("parquet", "arrow"):
        _pyarrow("parquet" if format == "parquet" else "", f"format {format}")

    is_dataset = hasattr(inputs, "column_names") and hasattr(inputs, "select_columns")
    files = (
        None
        if is_dataset
        else _expand(inputs if isinstance(inputs, (str, os.PathLike)) else list(inputs))
    )
    prefix = os.fspath(output)
    settings = {
        "format": format,
        "dtype": dtype.name,
        "tokenizer": enc.identity(),
        "add_special_tokens": add_special_tokens,
        "bos": bos_id,
        "eos": eos_id,
        "shard_tokens": shard_tokens,
        "field": field,
        "input_format": input_format,
        "document_per_file": document_per_file,
        "inputs": _input_identity(inputs, files),
    }
    folder = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(folder, exist_ok=True)
    manifest_path = prefix + MANIFEST_SUFFIX
    previous = None if overwrite else _read_manifest(manifest_path)
    existing = _clean_folder(prefix)
    if previous is not None and previous["shards"] and previous.get("settings") != settings:
        changed = sorted(k for k in settings if previous.get("settings", {}).get(k) != settings[k])
        raise DatasetError(
            f"{manifest_path} was written with other settings ({', '.join(changed)} differ); "
            "pass overwrite (--overwrite) to replace that output"
        )
    if previous is None and existing and not overwrite:
        raise DatasetError(
            f"{os.path.join(folder, existing[0])} exists and no manifest {manifest_path} "
            "describes it; pass overwrite (--overwrite) to replace it"
        )
    if previous is not None and previous.get("settings") != settings:
        previous = None  # a run of other settings killed before its first shard: replaced
        overwrite = True
    if overwrite:
        for name in [*existing, os.path.basename(manifest_path)]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(folder, name))
    done = {}
    if previous is not None and previous.get("settings") == settings:
        done = {e["index"]: e for e in previous["shards"] if _is_finished(e, folder)}
    manifest: Dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "complete": False,
        "settings": settings,
        "shards": [],
    }
    # Written first (with the finished shards only), so that a run killed before its first
    # shard is complete still leaves a manifest: the shard files are its own to replace.
    _write_manifest(manifest_path, {**manifest, "shards": [done[k] for k in sorted(done)]})

    if files is None:  # the text column's Arrow size, for the progress bar's estimate
        try:
            total = int(inputs.data.column(field).nbytes)
        except Exception:  # not an in-memory Arrow table, or no such column (named below)
            total = None
    else:
        total = sum(os.path.getsize(p) for p in files)
    bar = _Progress(total, progress)
    options = {"field": field, "input_format": input_format, "document_per_file": document_per_file}
    documents = (
        _dataset_documents(inputs, field, bar)
        if files is None
        else _file_documents(files, options, bar)
    )
    batches = _prefetched(_batches(documents, batch_bytes))
    try:
        _run(
            manifest,
            manifest_path,
            done,
            _Documents(batches),
            enc,
            prefix,
            dtype,
            bos_id,
            eos_id,
            shard_tokens,
            bar,
        )
    finally:
        batches.close()
        bar.close()
    manifest["complete"] = True
    _write_manifest(manifest_path, manifest)
    return manifest


class _Documents:
    """Batches of documents with two extra moves: skip ``n`` documents, push texts back."""

    def __init__(self, batches: Iterator[List[str]]) -> None:
        self.batches, self.pending = batches, []  # type: Tuple[Iterator[List[str]], List[str]]

    def next_batch(self) -> Optional[List[str]]:
        if self.pending:
            batch, self.pending = self.pending, []
            return batch
        return next(self.batches, None)

    def push_back(self, texts: List[str]) -> None:
        self.pending = texts + self.pending

    def skip(self, n: int, what: str) -> None:
        while n:
            if not self.pending:
                batch = next(self.batches, None)
                if batch is None:
                    raise DatasetError(f"the inputs end before {what}: they changed")
                self.pending = batch
            take = min(n, len(self.pending))
            self.pending = self.pending[take:]
            n -= take


def _run(manifest, manifest_path, done, docs, enc, prefix, dtype, bos, eos, shard_tokens, bar):
    """Encodes the documents of ``docs`` into shards, skipping the finished shards of ``done``
    (their documents are read, not encoded)."""
    format = manifest["settings"]["format"]
    shards: List[Dict[str, Any]] = manifest["shards"]
    k = 0
    writer: Optional[_ShardWriter] = None
    # Encoded documents not written yet: (their texts, ids, offsets).
    carry: Optional[Tuple[List[str], np.ndarray, np.ndarray]] = None
    try:
        while True:
            while k in done:
                if carry is not None:
                    docs.push_back(carry[0])
                    carry = None
                docs.skip(done[k]["documents"], f"shard {k} of {manifest_path}")
                shards.append(done[k])
                bar.encoded(done[k]["tokens"])
                k += 1
            if carry is None:
                batch = docs.next_batch()
                if batch is None:
                    break
                ids, offsets = _with_markers(*enc.encode(batch), bos, eos, dtype)
                bar.encoded(int(offsets[-1]))
                carry = (batch, ids, offsets)
            texts, ids, offsets = carry
            if writer is None:
                writer = _ShardWriter(_shard_files(prefix, k, format)[0], format, dtype)
            # The first document whose end reaches the shard size ends the shard.
            last = int(np.searchsorted(offsets[1:], shard_tokens - writer.tokens, side="left"))
            if last >= len(texts):
                writer.write(ids, offsets)
                carry = None
                continue
            end = int(offsets[last + 1])
            writer.write(ids[:end], offsets[: last + 2])
            shards.append(_finish_shard(writer, prefix, k, format))
            writer, k = None, k + 1
            # With the finished shards further on, which a rerun can still skip.
            later = [done[j] for j in sorted(done) if j >= k]
            _write_manifest(manifest_path, {**manifest, "shards": shards + later})
            rest = texts[last + 1 :]
            carry = (rest, ids[end:], offsets[last + 1 :] - end) if rest else None
        if writer is not None:
            shards.append(_finish_shard(writer, prefix, k, format))
            writer = None
    except BaseException:
        if writer is not None:
            writer.abort()
        raise


def _finish_shard(writer: _ShardWriter, prefix: str, k: int, format: str) -> Dict[str, Any]:
    """Completes shard ``k``; its manifest entry."""
    files = _shard_files(prefix, k, format)
    n_documents = writer.finish(files[1] if len(files) > 1 else None)
    names = [os.path.basename(f) for f in files]
    return {
        "index": k,
        "files": names,
        "documents": n_documents,
        "tokens": writer.tokens,
        "sha256": {n: _sha256(f) for n, f in zip(names, files)},
    }


# ---- reading shards and the datasets fast path --------------------------------------------


def load_shard(path: Union[str, os.PathLike]) -> Tuple[np.ndarray, np.ndarray]:
    """The ids (memory-mapped, read-only) and the document offsets of a ``bin`` or ``npy``
    shard: document ``i`` is ``ids[offsets[i]:offsets[i + 1]]``. The id type of a ``.bin``
    comes from the manifest beside it."""
    path = os.fspath(path)
    found = re.match(r"(.*)-\d{5}(\.bin|\.npy)\Z", path)
    if not found:
        raise DatasetError(f"{path}: not a shard name (PREFIX-NNNNN.bin or .npy)")
    offsets = np.load(path[: -len(found.group(2))] + INDEX_SUFFIX)
    if found.group(2) == ".npy":
        return np.load(path, mmap_mode="r"), offsets
    manifest = _read_manifest(found.group(1) + MANIFEST_SUFFIX)
    if manifest is None:
        raise DatasetError(f"{found.group(1) + MANIFEST_SUFFIX}: no such manifest (the id type)")
    return np.memmap(path, dtype=manifest["settings"]["dtype"], mode="r"), offsets


def datasets_map_function(
    tokenizer: Any,
    field: str = "text",
    *,
    column: str = "input_ids",
    remove_columns: Sequence[str] = (),
    add_special_tokens: bool = False,
    bos: Union[str, int, None] = None,
    eos: Union[str, int, None] = None,
    encoding: Optional[str] = None,
) -> Any:
    """A function for ``datasets.Dataset.map(function, batched=True)`` that adds the column
    ``column`` (``input_ids``): each row's ids as an Arrow list of ``int32``, built straight from
    the native flat arrays (no Python object per token).

    The ids are those of :func:`encode_dataset` (same ``tokenizer``, ``add_special_tokens``,
    ``bos`` and ``eos``), of the text in the dataset's column ``field``::

        dataset = dataset.map(datasets_map_function("tokenizer.json"), batched=True)

    The function returns an Arrow table (the batch's columns and the new one), which ``map``
    stores as it is: ``map``'s own ``remove_columns`` does not apply to it, so columns to drop
    are named here (``remove_columns=["text"]``). It pickles with its tokenizer, so ``num_proc``
    works; the native batch call already uses every core.
    """
    _pyarrow("", "datasets_map_function")
    encoder = _Encoder(tokenizer, add_special_tokens, encoding)
    return _MapFunction(
        encoder,
        field,
        column,
        tuple(remove_columns),
        encoder.token_id(bos, "bos"),
        encoder.token_id(eos, "eos"),
    )


class _MapFunction:
    """The function :func:`datasets_map_function` returns (a class, so that it pickles)."""

    def __init__(self, encoder: _Encoder, field: str, column: str, remove, bos, eos) -> None:
        self.encoder, self.field, self.column, self.remove = encoder, field, column, remove
        self.bos, self.eos = bos, eos

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        # The batch: a pyarrow Table (an "arrow"-formatted dataset), datasets' LazyBatch (which
        # holds its Arrow table), or a dict of lists.
        table = batch if isinstance(batch, pa.Table) else getattr(batch, "pa_table", None)
        if table is None:
            table = pa.table(dict(batch))
        if self.field not in table.column_names:
            raise DatasetError(
                f"the batch has no column {self.field!r} (columns: {', '.join(table.column_names)})"
            )
        texts = table.column(self.field).to_pylist()
        ids, offsets = _with_markers(
            *self.encoder.encode(texts), self.bos, self.eos, np.dtype(np.int32)
        )
        if offsets[-1] < 2**31:
            values = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(ids))
        else:
            values = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(ids))
        drop = [c for c in table.column_names if c in self.remove or c == self.column]
        return table.drop_columns(drop).append_column(self.column, values)
