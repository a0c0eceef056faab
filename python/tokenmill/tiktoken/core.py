"""``Encoding``, as ``tiktoken.core`` has it, on tokenmill's native byte-level BPE.

``Encoding`` has tiktoken's constructor and methods, with the same results (ids, errors for
disallowed special tokens, the lone-surrogate fix-up, ``encode_with_unstable``,
``_encode_bytes``). Differences, by design: when several allowed special tokens start at the
same position, the longest wins (tiktoken's choice there depends on hash order), and the
completions of ``encode_with_unstable`` come sorted (tiktoken's come in hash order).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, AbstractSet, Literal, NoReturn

from tokenmill._native import InvalidArgumentError, UnknownIdError, tiktoken as _native_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from tokenmill.tiktoken._native_bpe import CoreBPE
else:
    CoreBPE = _native_module.CoreBPE

__all__ = ["Encoding", "CoreBPE", "UnknownTokenError", "raise_disallowed_special_token"]


class UnknownTokenError(UnknownIdError, KeyError):
    """An id that is neither a mergeable rank nor a special token (a ``KeyError``, as in
    tiktoken)."""

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


def _batch_without_surrogates(native, texts, *args):
    """``native(texts, *args)``, retried with tiktoken's surrogate fix-up of every text when one
    of them is not valid Unicode."""
    try:
        return native(texts, *args)
    except UnicodeEncodeError:
        return native([_without_surrogates(t) for t in texts], *args)


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
        self._core_bpe = (
            _core if _core is not None else CoreBPE(mergeable_ranks, self._special_tokens, pat_str)
        )
        self._ranks_cache = mergeable_ranks if _core is None else None
        max_value = self._core_bpe.max_token_value()
        if max_value is None:
            raise InvalidArgumentError(f"encoding {name!r} has no tokens")
        self.max_token_value = max_value
        if explicit_n_vocab:
            n_tokens = self._core_bpe.n_ranks() + len(self._special_tokens)
            if n_tokens != explicit_n_vocab or self.max_token_value != explicit_n_vocab - 1:
                raise InvalidArgumentError(
                    f"encoding {name!r}: explicit_n_vocab={explicit_n_vocab} but there are "
                    f"{n_tokens} tokens "
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

    def _allowed_special(
        self, text_or_texts, allowed_special, disallowed_special, many: bool
    ) -> AbstractSet[str]:
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

    def _encode_allowing(self, native, text, allowed_special, disallowed_special):
        """``native(text, allowed)`` after the special-token check, with tiktoken's surrogate
        fix-up when ``text`` is not valid Unicode."""
        allowed = set(self._allowed_special(text, allowed_special, disallowed_special, many=False))
        try:
            return native(text, allowed)
        except UnicodeEncodeError:
            return native(_without_surrogates(text), allowed)

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
        return self._encode_allowing(
            self._core_bpe.encode, text, allowed_special, disallowed_special
        )

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """Encodes ``text`` into stable ids and the id sequences that may complete them.

        The stable ids cover a prefix of ``text``: the tokens of its last piece (which more
        text could merge differently) are left out. Each completion, appended to the stable
        ids, decodes to bytes that start with ``text``. Special tokens are handled as in
        ``encode``. As tiktoken says of it, this API should itself be considered unstable.
        The completions are sorted (tiktoken lists them in hash order).
        """
        return self._encode_allowing(
            self._core_bpe.encode_with_unstable, text, allowed_special, disallowed_special
        )

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> npt.NDArray[np.uint32]:
        """``encode`` returning a NumPy uint32 array."""
        return self._encode_allowing(
            self._core_bpe.encode_to_numpy, text, allowed_special, disallowed_special
        )

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """``encode_ordinary`` of every text, in parallel on at most ``num_threads`` threads
        (capped at the number of texts and of cores, from pools kept for the process)."""
        return _batch_without_surrogates(self._core_bpe.encode_batch, text, None, num_threads)

    def encode_batch(
        self,
        text: list[str],
        *,
        num_threads: int = 8,
        allowed_special: Literal["all"] | AbstractSet[str] = set(),  # noqa: B006
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> list[list[int]]:
        """``encode`` of every text, in parallel on at most ``num_threads`` threads (capped at
        the number of texts and of cores, from pools kept for the process)."""
        allowed = self._allowed_special(text, allowed_special, disallowed_special, many=True)
        return _batch_without_surrogates(
            self._core_bpe.encode_batch, text, set(allowed), num_threads
        )

    def encode_ordinary_batch_to_numpy(
        self, texts: Sequence[str], *, num_threads: int | None = None
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """The lean path: ``(ids, offsets)`` as NumPy arrays (uint32, int64) with no Python object
        per token; the ids of ``texts[i]`` are ``ids[offsets[i]:offsets[i + 1]]``. Uses all cores
        unless ``num_threads`` is given."""
        return _batch_without_surrogates(
            self._core_bpe.encode_ordinary_batch_to_numpy, texts, num_threads
        )

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text or bytes that are exactly one token (special tokens included);
        KeyError otherwise."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_token(text_or_bytes)

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of text or bytes as one piece, without the split pattern and special tokens."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        return self._core_bpe.encode_single_piece(text_or_bytes)

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """Encodes ``text`` with the split done by the ``regex`` module in Python (tiktoken's
        cross-check of the native split); special tokens are not recognised."""
        import regex

        ids: list[int] = []
        for piece in regex.findall(self._pat_str, text):
            ids.extend(self._encode_single_piece(piece))
        return ids

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encodes bytes that need not be valid UTF-8, as tiktoken does: the valid prefix is
        encoded as text, then the tokens of its last piece are joined with the invalid rest and
        encoded as one piece. ``decode_bytes`` gives ``text`` back."""
        return self._core_bpe._encode_bytes(bytes(text))

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

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """``decode`` of every token list."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
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
        # As tiktoken: an encoding from the registry pickles as its name (plus the ``path`` it
        # was loaded from, if one was given).
        if self._registry_key is not None:
            name, path = self._registry_key
            return name if path is None else {"registry_key": self._registry_key}
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        from tokenmill.tiktoken.registry import get_encoding

        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
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


def raise_disallowed_special_token(token: str) -> NoReturn:
    """Raises tiktoken's ValueError for disallowed special-token text."""
    raise ValueError(
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
