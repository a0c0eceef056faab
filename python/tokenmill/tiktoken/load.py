"""Rank files, as ``tiktoken.load`` reads them, from local files only.

tiktoken downloads a rank file the first time it is needed and keeps it in a cache folder,
named by the sha1 of its URL: ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
``<tempdir>/data-gym-cache``. tokenmill reads that same cache (so a machine where tiktoken ran
once works offline), and never downloads: a URL that is not in the cache raises
``TokenmillIOError`` naming the file to fetch and where to put it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from tokenmill._native import InvalidArgumentError, TokenmillIOError, tiktoken as _native_module

__all__ = [
    "cache_dir",
    "cache_path",
    "check_hash",
    "read_file",
    "read_file_cached",
    "load_tiktoken_bpe",
    "dump_tiktoken_bpe",
    "data_gym_to_mergeable_bpe_ranks",
]


def cache_dir() -> str | None:
    """tiktoken's cache folder: ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
    ``<tempdir>/data-gym-cache``; None when the variable is set to ``""`` (tiktoken's way of
    turning the cache off)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return folder or None


def cache_path(url: str) -> str | None:
    """Where tiktoken caches the file of ``url``: ``<cache_dir>/<sha1 of the url>``."""
    folder = cache_dir()
    return None if folder is None else os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether the sha256 of ``data`` is ``expected_hash`` (hex)."""
    return hashlib.sha256(data).hexdigest() == expected_hash


def missing_file_message(what: str, url: str, alternative: str) -> str:
    """The error text for a file tiktoken would download: the URL, the cache file to save it
    as, and the local-path alternative."""
    target = cache_path(url)
    if target is None:
        where = (
            "the tiktoken cache is turned off (TIKTOKEN_CACHE_DIR is empty); set it to a folder "
            "and save it there as " + hashlib.sha1(url.encode()).hexdigest()
        )
    else:
        where = f"save it as {target} (tiktoken's cache layout: the sha1 of the URL)"
    return f"{what}: tokenmill never downloads. Download {url} and {where}, or {alternative}"


def read_file(blobpath: str | os.PathLike) -> bytes:
    """The bytes of a local file. URLs are looked up in tiktoken's cache (see
    ``read_file_cached``); tokenmill never downloads."""
    path = os.fspath(blobpath)
    if "://" in path:
        return read_file_cached(path)
    with open(path, "rb") as f:
        return f.read()


def _cached_url(url: str, expected_hash: str | None) -> str:
    """The cache file of ``url``, checked against ``expected_hash``; TokenmillIOError when it
    is absent, InvalidArgumentError when its hash differs."""
    target = cache_path(url)
    if target is None or not os.path.exists(target):
        raise TokenmillIOError(
            missing_file_message(
                f"{url} is not in the tiktoken cache", url, "pass a local path instead of the URL"
            )
        )
    if expected_hash is not None:
        with open(target, "rb") as f:
            if not check_hash(f.read(), expected_hash):
                raise InvalidArgumentError(
                    f"{target} (the cached copy of {url}) does not have sha256 {expected_hash}; "
                    f"tiktoken would download it again: replace it with the file from {url}"
                )
    return target


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """The bytes of a URL from tiktoken's cache folder, or of a local file. With
    ``expected_hash``, the sha256 must match (InvalidArgumentError, a ValueError, otherwise)."""
    path = _cached_url(blobpath, expected_hash) if "://" in blobpath else blobpath
    with open(path, "rb") as f:
        data = f.read()
    if expected_hash is not None and not check_hash(data, expected_hash):
        raise InvalidArgumentError(
            f"{blobpath}: sha256 is {hashlib.sha256(data).hexdigest()}, expected {expected_hash}"
        )
    return data


def local_path(tiktoken_bpe_file: str | os.PathLike, expected_hash: str | None = None) -> str:
    """The local file to read for a path or URL (a URL resolves to its cache file), with its
    hash checked when ``expected_hash`` is given."""
    path = os.fspath(tiktoken_bpe_file)
    if "://" in path:
        return _cached_url(path, expected_hash)
    if expected_hash is not None:
        read_file_cached(path, expected_hash)
    return path


def load_tiktoken_bpe(
    tiktoken_bpe_file: str | os.PathLike, expected_hash: str | None = None
) -> dict[bytes, int]:
    """Reads a ``.tiktoken`` file (``base64(token) rank`` per line) into ``{bytes: rank}``.

    ``tiktoken_bpe_file`` is a local path, or a URL that tiktoken has cached (see the module
    docstring). Malformed lines raise ``tokenmill.FormatError`` naming the file and line; a
    token or rank given twice is an error (tiktoken keeps the last token, then fails or loses
    a rank when it builds the encoding). If ``expected_hash`` is given, the file's sha256 must
    match.
    """
    return _native_module.load_tiktoken_bpe(local_path(tiktoken_bpe_file, expected_hash))


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str | os.PathLike) -> None:
    """Writes ``{bytes: rank}`` as a ``.tiktoken`` file in rank order (atomically: temp file +
    rename). Local paths only (tiktoken's needs ``blobfile``)."""
    _native_module.dump_tiktoken_bpe(dict(bpe_ranks), os.fspath(tiktoken_bpe_file))


def _data_gym_byte_table() -> dict[str, int]:
    """GPT-2's "data gym" alphabet: character → byte. Printable bytes other than the space
    stand for themselves; the other 68 bytes are shifted to U+0100 and up, in byte order."""
    printable = [b for b in range(256) if chr(b).isprintable() and b != ord(" ")]
    table = {chr(b): b for b in printable}
    others = [b for b in range(256) if b not in table.values()]
    table.update({chr(256 + i): b for i, b in enumerate(others)})
    return table


def data_gym_byte_order() -> list[int]:
    """The bytes in the order GPT-2 ranks them (ranks 0-255)."""
    return list(_data_gym_byte_table().values())


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Mergeable ranks from GPT-2's original files (``vocab.bpe`` merges and ``encoder.json``),
    as tiktoken builds them: the 256 bytes first (in GPT-2's byte order), then one rank per
    merge in file order. ``encoder.json`` must agree with the merges (else ValueError);
    ``clobber_one_byte_tokens`` takes the single-byte ranks from it instead. Paths or cached
    URLs, as ``load_tiktoken_bpe``."""
    to_byte = _data_gym_byte_table()

    def decode(token: str) -> bytes:
        return bytes(to_byte[c] for c in token)

    ranks = {bytes([b]): rank for rank, b in enumerate(to_byte.values())}
    merges = read_file_cached(os.fspath(vocab_bpe_file), vocab_bpe_hash).decode().split("\n")[1:-1]
    for line in merges:
        first, second = line.split()
        ranks[decode(first) + decode(second)] = len(ranks)
    encoder = json.loads(read_file_cached(os.fspath(encoder_json_file), encoder_json_hash))
    from_json = {decode(token): rank for token, rank in encoder.items()}
    for special in (b"<|endoftext|>", b"<|startoftext|>"):
        from_json.pop(special, None)
    if clobber_one_byte_tokens:
        ranks.update({token: rank for token, rank in from_json.items() if len(token) == 1})
    if ranks != from_json:
        raise InvalidArgumentError(
            f"{encoder_json_file} does not match the merges of {vocab_bpe_file}: tiktoken needs "
            "the ranks in merge order"
        )
    return ranks
