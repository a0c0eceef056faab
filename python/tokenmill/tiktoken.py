"""A drop-in for OpenAI's ``tiktoken`` API, running on tokenmill's native byte-level BPE.

::

    from tokenmill import tiktoken
    enc = tiktoken.get_encoding("cl100k_base", path="/data/tiktoken")   # never downloads
    enc.encode("hello world")                                            # [15339, 1917]

``Encoding`` has tiktoken's constructor and methods, with the same results (ids, errors for
disallowed special tokens, the lone-surrogate fix-up). Rank files are read from local files only:
``get_encoding(name, path)`` looks in ``path`` (a file or a directory), then in the directory named
by ``$TOKENMILL_TIKTOKEN_DIR``, then in ``$TIKTOKEN_CACHE_DIR`` (tiktoken's cache layout).

One difference, by design: when several allowed special tokens start at the same position, the
longest wins (tiktoken's choice there depends on hash order).
"""
from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import AbstractSet, Collection, Literal, Sequence

from tokenmill._native import TokenmillIOError, UnknownIdError, InvalidArgumentError
from tokenmill._native import tiktoken as _native_module

CoreBPE = _native_module.CoreBPE

__all__ = [
    "Encoding",
    "CoreBPE",
    "get_encoding",
    "list_encoding_names",
    "load_tiktoken_bpe",
    "dump_tiktoken_bpe",
    "UnknownTokenError",
    "ENCODING_PATTERNS",
]


class UnknownTokenError(UnknownIdError, KeyError):
    """An id that is neither a mergeable rank nor a special token (a ``KeyError``, as in tiktoken)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _unknown_ids(call):
    """Runs ``call()``, turning the native unknown-id error into ``UnknownTokenError``."""
    try:
        return call()
    except UnknownIdError as e:
        raise UnknownTokenError(str(e)) from None


def _without_surrogates(text: str) -> str:
    """tiktoken's fix-up for strings that are not valid Unicode scalar sequences: surrogate pairs
    are joined and lone surrogates become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Encoding:
    """A tiktoken encoding: split pattern, mergeable ranks and special tokens."""

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
        _core: CoreBPE | None = None,
    ):
        """Creates an Encoding, as ``tiktoken.Encoding`` does.

        Args:
            name: the encoding's name.
            pat_str: the regex that splits text into pieces before BPE.
            mergeable_ranks: token bytes → rank (lower ranks merge first); ranks are token ids.
            special_tokens: special token text → id.
            explicit_n_vocab: if given, the number of ranks plus special tokens must equal it and
                the largest id must be ``explicit_n_vocab - 1``.
        """
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = dict(special_tokens)
        self._core_bpe = _core if _core is not None else CoreBPE(mergeable_ranks, self._special_tokens, pat_str)
        self._ranks_cache = mergeable_ranks if _core is None else None
        max_value = self._core_bpe.max_token_value()
        if max_value is None:
            raise InvalidArgumentError(f"encoding {name!r} has no tokens")
        self.max_token_value = max_value
        if explicit_n_vocab:
            n_tokens = self._core_bpe.n_ranks() + len(self._special_tokens)
            if n_tokens != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise InvalidArgumentError(
                    f"encoding {name!r}: explicit_n_vocab={explicit_n_vocab} but there are {n_tokens} tokens "
                    f"and the largest id is {self.max_token_value}"
                )
        self._special_token_values = set(self._special_tokens.values())
        self._registry_key: tuple[str, str | None] | None = None

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """The mergeable ranks (built from the native core on first use)."""
        if self._ranks_cache is None:
            self._ranks_cache = self._core_bpe.mergeable_ranks()
        return self._ranks_cache

    # ---- encoding ----

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes ``text`` ignoring special tokens (their text is encoded as ordinary text)."""
        try:
            return self._core_bpe.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core_bpe.encode_ordinary(_without_surrogates(text))

    def _allowed_special(self, text_or_texts, allowed_special, disallowed_special, many: bool) -> AbstractSet[str]:
        """Resolves the ``allowed_special`` / ``disallowed_special`` arguments as tiktoken does and
        raises ValueError if disallowed special-token text occurs."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed_special
        if disallowed_special:
            if not isinstance(disallowed_special, frozenset):
                disallowed_special = frozenset(disallowed_special)
            regex = _special_token_regex(disallowed_special)
            for text in text_or_texts if many else (text_or_texts,):
                if match := regex.search(text):
                    raise_disallowed_special_token(match.group())
        return allowed_special

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[int]:
        """Encodes ``text``. Special tokens in ``allowed_special`` become their ids; text of a
        special token in ``disallowed_special`` (by default: every special token not allowed)
        raises ValueError; other special-token text is encoded as ordinary text."""
        allowed = self._allowed_special(text, allowed_special, disallowed_special, many=False)
        try:
            return self._core_bpe.encode(text, set(allowed))
        except UnicodeEncodeError:
            return self._core_bpe.encode(_without_surrogates(text), set(allowed))

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ):
        """``encode`` returning a NumPy uint32 array."""
        allowed = self._allowed_special(text, allowed_special, disallowed_special, many=False)
        try:
            return self._core_bpe.encode_to_numpy(text, set(allowed))
        except UnicodeEncodeError:
            return self._core_bpe.encode_to_numpy(_without_surrogates(text), set(allowed))

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """``encode_ordinary`` of every text, in parallel on ``num_threads`` threads."""
        try:
            return self._core_bpe.encode_ordinary_batch(text, num_threads)
        except UnicodeEncodeError:
            return self._core_bpe.encode_ordinary_batch([_without_surrogates(t) for t in text], num_threads)

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """``encode`` of every text, in parallel on ``num_threads`` threads."""
        allowed = self._allowed_special(text, allowed_special, disallowed_special, many=True)
        try:
            return self._core_bpe.encode_batch(text, set(allowed), num_threads)
        except UnicodeEncodeError:
            return self._core_bpe.encode_batch([_without_surrogates(t) for t in text], set(allowed), num_threads)

    def encode_ordinary_batch_to_numpy(self, texts: Sequence[str], *, num_threads: int | None = None):
        """The lean path: ``(ids, offsets)`` as NumPy arrays (uint32, int64) with no Python object
        per token; the ids of ``texts[i]`` are ``ids[offsets[i]:offsets[i + 1]]``. Uses all cores
        unless ``num_threads`` is given."""
        try:
            return self._core_bpe.encode_ordinary_batch_to_numpy(texts, num_threads)
        except UnicodeEncodeError:
            return self._core_bpe.encode_ordinary_batch_to_numpy([_without_surrogates(t) for t in texts], num_threads)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text or bytes that are exactly one token (special tokens included); KeyError otherwise."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_token(text_or_bytes)

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of text or bytes as one piece, without the split pattern and special tokens."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_piece(text_or_bytes)

    # ---- decoding ----

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of ``tokens``; an unknown id raises UnknownTokenError (a KeyError)."""
        return _unknown_ids(lambda: self._core_bpe.decode_bytes(tokens))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of ``tokens``; bytes that are not UTF-8 are handled by ``errors``."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included)."""
        return _unknown_ids(lambda: self._core_bpe.decode_single_token_bytes(token))

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        return _unknown_ids(lambda: self._core_bpe.decode_tokens_bytes(tokens))

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and, per token, the index of the first character holding bytes of that token.
        Raises UnicodeDecodeError if the tokens do not decode to valid UTF-8 (as tiktoken)."""
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len = 0
        offsets = []
        for token in token_bytes:
            # A token starting with a continuation byte belongs to the previous character.
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        text = b"".join(token_bytes).decode("utf-8", errors="strict")
        return text, offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        """``decode`` of every token list."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        """``decode_bytes`` of every token list."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # ---- vocabulary ----

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted."""
        return self._core_bpe.token_byte_values()

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        return self._special_tokens["<|endoftext|>"]

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts."""
        return set(self._special_tokens.keys())

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is a special token's id."""
        return token in self._special_token_values

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1``."""
        return self.max_token_value + 1

    # ---- pickling ----

    def __getstate__(self) -> object:
        if self._registry_key is not None:
            return {"registry_key": self._registry_key}
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: dict) -> None:
        if "registry_key" in value:
            name, path = value["registry_key"]
            self.__dict__ = get_encoding(name, path).__dict__
            return
        self.__init__(**value)


@functools.lru_cache(maxsize=128)
def _special_token_regex(tokens: frozenset[str]):
    try:
        import regex as re
    except ImportError:
        import re
    inner = "|".join(re.escape(token) for token in tokens)
    return re.compile(f"({inner})")


def raise_disallowed_special_token(token: str):
    """Raises tiktoken's ValueError for disallowed special-token text."""
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )


def load_tiktoken_bpe(tiktoken_bpe_file: str | os.PathLike, expected_hash: str | None = None) -> dict[bytes, int]:
    """Reads a local ``.tiktoken`` file (``base64(token) rank`` per line) into ``{bytes: rank}``.

    Malformed lines raise ``tokenmill.FormatError`` naming the file and line. URLs are refused
    (tokenmill never downloads). If ``expected_hash`` is given, the file's sha256 must match.
    """
    path = os.fspath(tiktoken_bpe_file)
    if "://" in path:
        raise InvalidArgumentError(f"{path}: tokenmill does not download rank files; pass a local path")
    if expected_hash is not None:
        _check_hash(path, expected_hash)
    return _native_module.load_tiktoken_bpe(path)


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str | os.PathLike) -> None:
    """Writes ``{bytes: rank}`` as a ``.tiktoken`` file in rank order (atomically: temp file + rename)."""
    _native_module.dump_tiktoken_bpe(dict(bpe_ranks), os.fspath(tiktoken_bpe_file))


def _check_hash(path: str, expected_hash: str) -> None:
    with open(path, "rb") as f:
        actual = hashlib.sha256(f.read()).hexdigest()
    if actual != expected_hash:
        raise InvalidArgumentError(f"{path}: sha256 is {actual}, expected {expected_hash}")


# ---- the OpenAI encodings, from local files ----

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

R50K_PAT_STR = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
CL100K_PAT_STR = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: name → split pattern of the built-in encodings.
ENCODING_PATTERNS = {
    "gpt2": R50K_PAT_STR,
    "r50k_base": R50K_PAT_STR,
    "p50k_base": R50K_PAT_STR,
    "p50k_edit": R50K_PAT_STR,
    "cl100k_base": CL100K_PAT_STR,
    "o200k_base": O200K_PAT_STR,
    "o200k_harmony": O200K_PAT_STR,
}

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
# Rank file of each encoding: the file names to look for, and its URL (tiktoken caches files
# under sha1(url), so a $TIKTOKEN_CACHE_DIR works too). p50k can also be derived from r50k.
_RANK_FILES = {
    "r50k": (["r50k_base.tiktoken", "gpt2.tiktoken", "whisper/gpt2.tiktoken", "r50k_base/r50k_base.tiktoken"], _BLOB + "r50k_base.tiktoken"),
    "p50k": (["p50k_base.tiktoken", "p50k_base/p50k_base.tiktoken"], _BLOB + "p50k_base.tiktoken"),
    "cl100k": (["cl100k_base.tiktoken", "cl100k_base/cl100k_base.tiktoken"], _BLOB + "cl100k_base.tiktoken"),
    "o200k": (["o200k_base.tiktoken", "o200k_base/o200k_base.tiktoken"], _BLOB + "o200k_base.tiktoken"),
}
_ENCODING_FILES = {
    "gpt2": "r50k",
    "r50k_base": "r50k",
    "p50k_base": "p50k",
    "p50k_edit": "p50k",
    "cl100k_base": "cl100k",
    "o200k_base": "o200k",
    "o200k_harmony": "o200k",
}


def _special_tokens(name: str) -> dict[str, int]:
    if name in ("gpt2", "r50k_base", "p50k_base"):
        return {ENDOFTEXT: 50256}
    if name == "p50k_edit":
        return {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}
    if name == "cl100k_base":
        return {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276}
    if name == "o200k_base":
        return {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    if name == "o200k_harmony":
        # As tiktoken_ext.openai_public: id 200018 is both <|endofprompt|> and <|reserved_200018|>.
        named = {
            ENDOFTEXT: 199999, ENDOFPROMPT: 200018, "<|startoftext|>": 199998, "<|reserved_200000|>": 200000,
            "<|reserved_200001|>": 200001, "<|return|>": 200002, "<|constrain|>": 200003,
            "<|reserved_200004|>": 200004, "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007,
            "<|message|>": 200008, "<|reserved_200009|>": 200009, "<|reserved_200010|>": 200010,
            "<|reserved_200011|>": 200011, "<|call|>": 200012,
        }
        return {**named, **{f"<|reserved_{i}|>": i for i in range(200013, 201088)}}
    raise ValueError(f"Unknown encoding {name}")


_EXPLICIT_N_VOCAB = {"gpt2": 50257, "r50k_base": 50257, "p50k_base": 50281}


def list_encoding_names() -> list[str]:
    """Names ``get_encoding`` knows."""
    return list(ENCODING_PATTERNS)


def _search_dirs(path: str | os.PathLike | None) -> list[Path]:
    dirs = []
    if path is not None:
        dirs.append(Path(path))
    if os.environ.get("TOKENMILL_TIKTOKEN_DIR"):
        dirs.append(Path(os.environ["TOKENMILL_TIKTOKEN_DIR"]))
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        dirs.append(Path(os.environ["TIKTOKEN_CACHE_DIR"]))
    return dirs


def _find_rank_file(kind: str, dirs: list[Path]) -> Path | None:
    names, url = _RANK_FILES[kind]
    cache_name = hashlib.sha1(url.encode()).hexdigest()
    for d in dirs:
        if d.is_file():
            # An explicit file serves the encoding it was asked for.
            return d
        for name in [*names, cache_name]:
            candidate = d / name
            if candidate.is_file():
                return candidate
    return None


_ENCODINGS: dict[tuple[str, str | None], Encoding] = {}


def get_encoding(encoding_name: str, path: str | os.PathLike | None = None) -> Encoding:
    """The named OpenAI encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    o200k_base, o200k_harmony) built from a local rank file, with its exact pattern and special
    tokens. Never downloads.

    The rank file is looked for in ``path`` (the ``.tiktoken`` file itself or a directory), then
    in ``$TOKENMILL_TIKTOKEN_DIR``, then in ``$TIKTOKEN_CACHE_DIR``. In a directory, the names
    tried are ``<name>.tiktoken``, ``<name>/<name>.tiktoken`` (r50k also ``gpt2.tiktoken`` and
    ``whisper/gpt2.tiktoken``) and tiktoken's cache name. p50k ranks are derived from r50k ranks
    (plus the 24 multi-space tokens) when no p50k file is found.
    """
    if encoding_name not in ENCODING_PATTERNS:
        raise ValueError(f"Unknown encoding {encoding_name}. Known: {', '.join(list_encoding_names())}")
    key = (encoding_name, None if path is None else os.fspath(path))
    cached = _ENCODINGS.get(key)
    if cached is not None:
        return cached
    dirs = _search_dirs(path)
    kind = _ENCODING_FILES[encoding_name]
    extra = None
    rank_file = _find_rank_file(kind, dirs)
    if rank_file is None and kind == "p50k":
        rank_file = _find_rank_file("r50k", dirs)
        extra = {b" " * n: 50255 + n for n in range(2, 26)}
    if rank_file is None:
        searched = ", ".join(str(d) for d in dirs) or "(no directory: pass path= or set TOKENMILL_TIKTOKEN_DIR)"
        raise TokenmillIOError(
            f"no rank file for {encoding_name} (looked for {', '.join(_RANK_FILES[kind][0])} in {searched}); "
            "tokenmill never downloads"
        )
    special_tokens = _special_tokens(encoding_name)
    pat_str = ENCODING_PATTERNS[encoding_name]
    core = CoreBPE.from_file(os.fspath(rank_file), special_tokens, pat_str, extra)
    enc = Encoding(
        encoding_name,
        pat_str=pat_str,
        mergeable_ranks={},
        special_tokens=special_tokens,
        explicit_n_vocab=_EXPLICIT_N_VOCAB.get(encoding_name),
        _core=core,
    )
    enc._registry_key = key
    _ENCODINGS[key] = enc
    return enc
