"""The named encodings, as ``tiktoken.registry`` has them, built from local rank files.

``get_encoding(name, path=None)`` looks for the rank file in ``path`` (the file itself or a
folder), then in the folder ``$TOKENMILL_TIKTOKEN_DIR``, then in tiktoken's cache (see
``tokenmill.tiktoken.load``: ``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
``<tempdir>/data-gym-cache``, files named by the sha1 of their URL, checked against tiktoken's
sha256). It never downloads: when no file is found, ``TokenmillIOError`` says which file to
fetch, where to save it, and the ``path=`` alternative.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

from tokenmill._native import TokenmillIOError
from tokenmill.tiktoken import load, openai_public
from tokenmill.tiktoken.core import CoreBPE, Encoding
from tokenmill.tiktoken.openai_public import DataGymFiles, PlusSpaceRuns, RankFile

__all__ = ["ENCODINGS", "ENCODING_CONSTRUCTORS", "get_encoding", "list_encoding_names"]

_lock = threading.RLock()

#: Encodings loaded without an explicit ``path``, by name (as tiktoken's registry).
ENCODINGS: dict[str, Encoding] = {}
_BY_PATH: dict[tuple[str, str], Encoding] = {}


def list_encoding_names() -> list[str]:
    """The names ``get_encoding`` knows, in tiktoken's order."""
    return list(openai_public.ENCODING_PATTERNS)


def _search_dirs(path: str | os.PathLike | None) -> list[Path]:
    dirs = [] if path is None else [Path(path)]
    if os.environ.get("TOKENMILL_TIKTOKEN_DIR"):
        dirs.append(Path(os.environ["TOKENMILL_TIKTOKEN_DIR"]))
    return dirs


def _find_in_dirs(names: tuple[str, ...], dirs: list[Path]) -> Path | None:
    for d in dirs:
        for name in names:
            if (d / name).is_file():
                return d / name
    return None


def _cached(url: str, sha256: str) -> str | None:
    target = load.cache_path(url)
    if target is None or not os.path.exists(target):
        return None
    return load.local_path(url, sha256)


def _find_rank_file(source: RankFile, dirs: list[Path]) -> str | None:
    found = _find_in_dirs(source.names, dirs)
    return os.fspath(found) if found is not None else _cached(source.url, source.sha256)


def _find_data_gym(source: DataGymFiles, dirs: list[Path]) -> tuple[str, str] | None:
    for vocab_bpe, encoder_json in source.names:
        for d in dirs:
            if (d / vocab_bpe).is_file() and (d / encoder_json).is_file():
                return os.fspath(d / vocab_bpe), os.fspath(d / encoder_json)
    cached = (
        _cached(source.vocab_bpe_url, source.vocab_bpe_sha256),
        _cached(source.encoder_json_url, source.encoder_json_sha256),
    )
    return cached if None not in cached else None


def _load_ranks(name: str, path: str | os.PathLike | None):
    """``(kind, found)`` for the first source of ``name`` that is present: ``("file",
    (path, extra_ranks))`` or ``("data_gym", (vocab_bpe, encoder_json))``."""
    dirs = _search_dirs(path)
    explicit_file = path is not None and Path(path).is_file()
    for source in openai_public.ENCODING_SOURCES[name]:
        if isinstance(source, DataGymFiles):
            found = _find_data_gym(source, dirs)
            if found is not None:
                return "data_gym", found
            continue
        base = source.base if isinstance(source, PlusSpaceRuns) else source
        extra = source.extra_ranks() if isinstance(source, PlusSpaceRuns) else None
        # A file given as ``path`` serves the encoding it was asked for.
        found = os.fspath(path) if explicit_file and extra is None else _find_rank_file(base, dirs)
        if found is not None:
            return "file", (found, extra)
    raise TokenmillIOError(_missing_message(name, dirs))


def _missing_message(name: str, dirs: list[Path]) -> str:
    """Where the rank file of ``name`` was looked for, its official URL, and where to put it."""
    source = openai_public.ENCODING_SOURCES[name][0]
    file = source.names[0]
    env = os.environ.get("TOKENMILL_TIKTOKEN_DIR")
    folders = ", ".join(str(d) for d in dirs) or "none given"
    cache = load.cache_dir()
    cache_var = next(
        (v for v in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR") if v in os.environ), None
    )
    cache_origin = f"${cache_var}" if cache_var else "the default <tempdir>/data-gym-cache"
    looked = (
        f"looked for {' or '.join(source.names)} in path= and $TOKENMILL_TIKTOKEN_DIR "
        f"(folders: {folders}{'' if env else '; $TOKENMILL_TIKTOKEN_DIR is unset'})"
    )
    if cache is None:
        looked += " (tiktoken's cache is off: $TIKTOKEN_CACHE_DIR is empty)"
    else:
        cached = load.cache_path(source.url)
        looked += f", and in tiktoken's cache {cache} (from {cache_origin}) as {cached}"
    message = (
        f"no rank file for {name} (tokenmill never downloads): {looked}. Download {source.url} "
        f"and put it in a folder as {file}, then set TOKENMILL_TIKTOKEN_DIR to that folder or "
        f"call get_encoding({name!r}, path='/that/folder/{file}')"
    )
    if name == "gpt2":
        message += ". GPT-2's vocab.bpe and encoder.json (tiktoken's source for gpt2) also work"
    return message


def _construct(name: str, path: str | os.PathLike | None) -> Encoding:
    kind, found = _load_ranks(name, path)
    special_tokens = openai_public.special_tokens(name)
    pat_str = openai_public.ENCODING_PATTERNS[name]
    if kind == "file":
        rank_file, extra = found
        core = CoreBPE.from_file(rank_file, special_tokens, pat_str, extra)
    else:
        core = CoreBPE(load.data_gym_to_mergeable_bpe_ranks(*found), special_tokens, pat_str)
    return Encoding(
        name,
        pat_str=pat_str,
        mergeable_ranks={},
        special_tokens=special_tokens,
        explicit_n_vocab=openai_public.EXPLICIT_N_VOCAB.get(name),
        _core=core,
    )


def get_encoding(encoding_name: str, path: str | os.PathLike | None = None) -> Encoding:
    """The named OpenAI encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    o200k_base, o200k_harmony) with tiktoken's pattern and special tokens, built from a local
    rank file (see the module docstring for where it is looked for). Never downloads.

    In a folder, the names tried are ``<name>.tiktoken`` and ``<name>/<name>.tiktoken`` (r50k
    also ``gpt2.tiktoken`` and ``whisper/gpt2.tiktoken``; gpt2 also ``vocab.bpe`` +
    ``encoder.json``). p50k ranks are derived from r50k's (plus the 24 runs of spaces) when no
    p50k file is found. Encodings are loaded once per name and ``path``.
    """
    if not isinstance(encoding_name, str):
        # ValueError, not TypeError: tiktoken's choice.
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")  # noqa: TRY004
    if encoding_name not in openai_public.ENCODING_PATTERNS:
        raise ValueError(
            f"Unknown encoding {encoding_name}. Known: {', '.join(list_encoding_names())}"
        )
    key = (encoding_name, None if path is None else os.fspath(path))
    table, table_key = (ENCODINGS, encoding_name) if path is None else (_BY_PATH, key)
    cached = table.get(table_key)
    if cached is not None:
        return cached
    with _lock:
        cached = table.get(table_key)
        if cached is None:
            cached = _construct(encoding_name, path)
            cached._registry_key = key
            table[table_key] = cached
        return cached


def _constructor(name: str) -> Callable[[], dict[str, Any]]:
    def construct() -> dict[str, Any]:
        enc = get_encoding(name)
        params = {
            "name": name,
            "pat_str": enc._pat_str,
            "mergeable_ranks": enc._mergeable_ranks,
            "special_tokens": dict(enc._special_tokens),
        }
        if name in openai_public.EXPLICIT_N_VOCAB:
            params["explicit_n_vocab"] = openai_public.EXPLICIT_N_VOCAB[name]
        return params

    construct.__name__ = name
    construct.__doc__ = (
        f"The ``Encoding`` arguments of {name} (as tiktoken_ext.openai_public.{name})."
    )
    return construct


#: name → function returning the ``Encoding(**kwargs)`` arguments of that encoding.
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {
    name: _constructor(name) for name in list_encoding_names()
}
