"""Evaluate and compare tokenizers on corpora and across languages.

::

    from tokenmill.evaluate import evaluate
    result = evaluate(["gpt2.json", "cl100k_base"], corpora=["wiki/*.txt"], parallel="udhr")
    print(result.table())            # compression, fertility, utilization, parity...
    result.save_html("report.html")  # one self-contained file: tables, SVG charts, token view
    result.to_json()

Tokenizers are tokenmill objects (``Tokenizer``, ``tokenmill.tiktoken.Encoding``,
``tokenmill.sentencepiece.SentencePieceProcessor``) or anything ``tokenmill``'s command line
reads: tokenizer.json, ``.model``, ``.tiktoken``, vocab.txt / vocab.json, a model folder, or a
tiktoken encoding name (its rank file found as ``tokenmill.tiktoken.get_encoding`` finds it).

The metrics, per tokenizer and corpus (special tokens are not added):

- compression: UTF-8 bytes per token and characters per token;
- fertility: tokens per word of the running text, words as :func:`word_definition` states per
  language (tokens of ``tokenmill.words.WordTokenizer`` holding a letter or digit);
- split share: the share of word occurrences that take more than one token when encoded on their
  own (after a space when a space precedes them in the text; tokens that are only whitespace do
  not count);
- sequence lengths: tokens per document (a non-empty line of a file, or one text of a list);
- vocabulary utilization: the share of the vocabulary produced at least once, and the
  frequencies by rank;
- Rényi efficiency (Zouhar et al. 2023, "Tokenization and the Noiseless Channel"): the Rényi
  entropy of order ``renyi_power`` (2.5, the paper's) of the token distribution over the log of
  the number of token types seen, as the ``tokenization-scorer`` package computes it;
- under-trained tokens: entries produced at most ``rare`` times on the corpus.

Per tokenizer, from its vocabulary alone: the unreachable tokens (entries that encoding their
own text does not produce: see :func:`unreachable_tokens`) and the longest tokens.

With ``parallel`` (the Universal Declaration of Human Rights in up to 388 languages, or any
folder of translations of one text, one UTF-8 file per language): each language's token count
relative to the reference language's (the "premium"), per tokenizer, with the script of each
text.
"""

from __future__ import annotations

import glob as _glob
import json
import math
import os
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from tokenmill._atomic import atomic_open

__all__ = [
    "evaluate",
    "Evaluation",
    "Corpus",
    "CorpusResult",
    "TokenizerReport",
    "Parity",
    "ParityRow",
    "Sample",
    "LengthStats",
    "Evaluated",
    "as_evaluated",
    "word_definition",
    "unreachable_tokens",
    "renyi_efficiency",
    "find_udhr",
]

# ---- tokenizers -----------------------------------------------------------------------------


class Evaluated:
    """A tokenizer of any kind behind the interface the metrics need: flat batch encoding to
    NumPy arrays, each id's bytes, the special ids and the reachability check."""

    name: str
    kind: str

    def encode_flat(self, texts: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
        """``(ids, offsets)``: the ids of ``texts[i]`` are ``ids[offsets[i]:offsets[i + 1]]``."""
        raise NotImplementedError

    def vocab_size(self) -> int:
        raise NotImplementedError

    def special_ids(self) -> np.ndarray:
        """The ids that are special, added, control or byte-fallback entries (no text of
        their own to check)."""
        raise NotImplementedError

    def surfaces(self) -> List[Optional[bytes]]:
        """Each id's bytes in decoded text (None for an id the vocabulary lacks)."""
        raise NotImplementedError

    def spellings(self) -> List[Optional[str]]:
        """Each id's entry as the vocabulary spells it (byte-level, ``▁``, ``##``...)."""
        raise NotImplementedError

    def check_texts(self) -> Tuple[List[str], List[Optional[str]]]:
        """For the reachability check, each id's text to encode through the whole pipeline
        (None where the entry has no text of its own: then the model alone is given its
        spelling, see :meth:`model_encodes_alone`)."""
        raise NotImplementedError

    def model_encodes_alone(self, ids: Sequence[int]) -> List[List[int]]:
        """What the model alone (no normalizer, no pre-tokenizer) gives for each entry's
        spelling as one word."""
        raise NotImplementedError


def _flat(lists: Sequence[Sequence[int]]) -> Tuple[np.ndarray, np.ndarray]:
    lengths = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = np.fromiter((i for x in lists for i in x), dtype=np.uint32, count=int(offsets[-1]))
    return ids, offsets


def _one_token(ids: np.ndarray, offsets: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per text, whether it encoded as exactly the one id ``expected[i]``."""
    single = np.diff(offsets) == 1
    first = np.zeros(len(expected), dtype=np.int64)
    first[single] = ids[offsets[:-1][single]]
    return single & (first == expected)


def _byte_of_char() -> Dict[str, int]:
    from tokenmill.tiktoken import load

    return load._data_gym_byte_table()


def _model_only(config: dict):
    """A tokenizer of ``config``'s model alone (no normalizer, pre-tokenizer, post-processor,
    decoder or added tokens)."""
    from tokenmill import Tokenizer

    bare = dict(config)
    for key in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        bare[key] = None
    bare["added_tokens"] = []
    bare["truncation"] = bare["padding"] = None
    return Tokenizer.from_str(json.dumps(bare))


def _has_type(component, kind: str) -> bool:
    if not component:
        return False
    if component.get("type") == kind:
        return True
    children = component.get("pretokenizers") or component.get("decoders") or []
    children = children or component.get("normalizers") or []
    return any(_has_type(c, kind) for c in children)


def _prepends_space(config: dict) -> bool:
    """Whether the pipeline puts a space (▁) before the text: a Metaspace pre-tokenizer that
    prepends, or a Prepend normalizer (SentencePiece's dummy prefix)."""
    pre = config.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers") or [pre]
    if any(
        s.get("type") == "Metaspace" and s.get("prepend_scheme", "always") != "never" for s in steps
    ):
        return True
    return _has_type(config.get("normalizer"), "Prepend")


_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class _Hf(Evaluated):
    def __init__(self, name: str, tokenizer) -> None:
        self.name, self.kind, self.tok = name, "tokenizers", tokenizer
        self.config = json.loads(tokenizer.to_str())
        model = self.config.get("model") or {}
        self.model_type = model.get("type", "?")
        self.byte_level = _has_type(self.config.get("pre_tokenizer"), "ByteLevel") or _has_type(
            self.config.get("decoder"), "ByteLevel"
        )
        self.metaspace = (
            _has_type(self.config.get("pre_tokenizer"), "Metaspace")
            or _has_type(self.config.get("decoder"), "Metaspace")
            or _has_type(self.config.get("normalizer"), "Prepend")
        )
        self.prefix = model.get("continuing_subword_prefix") or ""
        self.suffix = model.get("end_of_word_suffix") or ""
        self.byte_fallback = bool(model.get("byte_fallback"))
        self._spellings: Optional[List[Optional[str]]] = None
        self._surfaces: Optional[List[Optional[bytes]]] = None

    def encode_flat(self, texts):
        return self.tok.encode_batch_ids(list(texts), add_special_tokens=False)

    def vocab_size(self):
        return self.tok.get_vocab_size(with_added_tokens=True)

    def special_ids(self):
        special = set(self.tok.get_added_tokens_decoder())
        if self.byte_fallback:
            special |= {i for i, s in enumerate(self.spellings()) if s and _BYTE_PIECE.fullmatch(s)}
        return np.array(sorted(special), dtype=np.int64)

    def spellings(self):
        if self._spellings is None:
            out: List[Optional[str]] = [None] * self.vocab_size()
            for token, i in self.tok.get_vocab(with_added_tokens=True).items():
                if 0 <= i < len(out):
                    out[i] = token
            self._spellings = out
        return self._spellings

    def _surface(self, spelling: str, table: Dict[str, int]) -> bytes:
        if self.byte_level:
            try:
                return bytes(table[c] for c in spelling)
            except KeyError:
                return spelling.encode("utf-8")
        found = _BYTE_PIECE.fullmatch(spelling) if self.byte_fallback else None
        if found:
            return bytes([int(found.group(1), 16)])
        if self.prefix and spelling.startswith(self.prefix) and len(spelling) > len(self.prefix):
            spelling = spelling[len(self.prefix) :]
        if self.suffix and spelling.endswith(self.suffix):
            spelling = spelling[: -len(self.suffix)] + " "
        if self.metaspace:
            spelling = spelling.replace("▁", " ")
        return spelling.encode("utf-8")

    def surfaces(self):
        if self._surfaces is None:
            self._surfaces = self._make_surfaces()
        return self._surfaces

    def _make_surfaces(self) -> List[Optional[bytes]]:
        table = _byte_of_char() if self.byte_level else {}
        added = set(self.tok.get_added_tokens_decoder())
        return [
            None if s is None else s.encode("utf-8") if i in added else self._surface(s, table)
            for i, s in enumerate(self.spellings())
        ]

    def check_texts(self):
        prepends = _prepends_space(self.config)
        texts: List[Optional[str]] = []
        surfaces = self.surfaces()
        for spelling, surface in zip(self.spellings(), surfaces):
            if spelling is None or surface is None:
                texts.append(None)
                continue
            if (
                self.prefix
                and spelling.startswith(self.prefix)
                and len(spelling) > len(self.prefix)
            ):
                texts.append(None)  # a word-internal piece (WordPiece ##): no text of its own
                continue
            if self.metaspace and prepends:
                if not spelling.startswith("▁"):
                    texts.append(None)  # word-internal: the pipeline puts ▁ before any text
                    continue
                surface = surface[1:]
            try:
                text = surface.decode("utf-8")
            except UnicodeDecodeError:
                texts.append(None)  # a part of a character: produced only inside longer text
                continue
            texts.append(text if text else None)
        return self.spellings(), texts

    def model_encodes_alone(self, ids):
        bare = _model_only(self.config)
        spellings = self.spellings()
        words = [spellings[i] or "" for i in ids]
        got, offsets = bare.encode_batch_ids(words, add_special_tokens=False)
        return [got[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])]


class _SentencePiece(_Hf):
    def __init__(self, name: str, processor) -> None:
        from tokenmill import sentencepiece as spm

        super().__init__(name, spm.to_tokenizer(processor))
        self.kind, self.sp = "sentencepiece", processor
        self._special: Optional[np.ndarray] = None
        self.metaspace = True

    def encode_flat(self, texts):
        # sentencepiece's batch encode (in parallel); its lists become one flat array
        return _flat(self.sp.encode(list(texts)))

    def vocab_size(self):
        return self.sp.get_piece_size()

    def special_ids(self):
        if self._special is None:
            # every piece type but NORMAL (1): UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE
            kinds = self.sp._model.piece_type
            n = self.sp.get_piece_size()
            self._special = np.array([i for i in range(n) if kinds(i) != 1], dtype=np.int64)
        return self._special

    def spellings(self):
        if self._spellings is None:
            self._spellings = [self.sp.id_to_piece(i) for i in range(self.sp.get_piece_size())]
        return self._spellings

    def _make_surfaces(self):
        specials = set(self.special_ids().tolist())
        out = []
        for i, s in enumerate(self.spellings()):
            found = _BYTE_PIECE.fullmatch(s) if self.sp.is_byte(i) else None
            if found:
                out.append(bytes([int(found.group(1), 16)]))
            elif i in specials:
                out.append(s.encode("utf-8"))
            else:
                out.append(s.replace("▁", " ").encode("utf-8"))
        return out

    def check_texts(self):
        from tokenmill import sentencepiece as spm

        dummy = spm._native.normalizer_settings(self.sp.serialized_model_proto())[1]
        texts: List[Optional[str]] = []
        for s in self.spellings():
            if dummy and not s.startswith("▁"):
                texts.append(None)  # word-internal: the dummy prefix puts ▁ before any text
                continue
            text = s.replace("▁", " ")
            texts.append((text[1:] if dummy else text) or None)
        return self.spellings(), texts


class _Tiktoken(Evaluated):
    def __init__(self, name: str, encoding) -> None:
        self.name, self.kind, self.enc = name, "tiktoken", encoding
        self._bytes: Optional[List[Optional[bytes]]] = None

    def encode_flat(self, texts):
        return self.enc.encode_ordinary_batch_to_numpy(list(texts))

    def vocab_size(self):
        return self.enc.n_vocab

    def special_ids(self):
        return np.array(sorted(self.enc._special_tokens.values()), dtype=np.int64)

    def surfaces(self):
        if self._bytes is None:
            out: List[Optional[bytes]] = [None] * self.vocab_size()
            for token, i in self.enc._mergeable_ranks.items():
                out[i] = token
            for token, i in self.enc._special_tokens.items():
                out[i] = token.encode("utf-8")
            self._bytes = out
        return self._bytes

    def spellings(self):
        return [
            None if b is None else b.decode("utf-8", errors="backslashreplace")
            for b in self.surfaces()
        ]

    def check_texts(self):
        texts: List[Optional[str]] = []
        for b in self.surfaces():
            try:
                texts.append(None if b is None else b.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(None)  # part of a character: checked as one piece
        return self.spellings(), texts

    def model_encodes_alone(self, ids):
        core, surfaces = self.enc._core_bpe, self.surfaces()
        return [core.encode_single_piece(surfaces[i]) for i in ids]


_GENERIC_NAMES = {"tokenizer.json", "tokenizer.model", "vocab.json", "merges.txt", "vocab.txt"}


def _name_of(x: Any, default: str) -> str:
    """A short name for a tokenizer file: its name, with its folder's for generic names
    (``gpt2/vocab.json``, ``mistral/tokenizer.model``)."""
    if not isinstance(x, (str, os.PathLike)):
        return default
    path = Path(os.path.normpath(os.fspath(x)))
    if path.name in _GENERIC_NAMES and path.parent.name:
        return f"{path.parent.name}/{path.name}"
    return path.name


def as_evaluated(tokenizer: Any, name: Optional[str] = None) -> Evaluated:
    """``tokenizer`` (an object, a file any ``tokenmill`` command reads, or a tiktoken encoding
    name) behind the :class:`Evaluated` interface."""
    from tokenmill import Tokenizer, sentencepiece as spm
    from tokenmill.cli import formats
    from tokenmill.tiktoken import Encoding

    if isinstance(tokenizer, Evaluated):
        return tokenizer
    if isinstance(tokenizer, (str, os.PathLike)):
        path = os.fspath(tokenizer)
        name = name or _name_of(path, path)
        if not os.path.exists(path):
            from tokenmill import tiktoken

            if path in tiktoken.list_encoding_names():
                return _Tiktoken(name, tiktoken.get_encoding(path))
            raise formats.Failure(
                f"{path}: no such file or folder, nor a tiktoken encoding name "
                f"({', '.join(tiktoken.list_encoding_names())})"
            )
        tokenizer = formats.load(path)
    if isinstance(tokenizer, formats.HfLoaded):
        return _Hf(name or _name_of(tokenizer.path, "tokenizer"), tokenizer.tokenizer)
    if isinstance(tokenizer, formats.SentencePieceLoaded):
        return _SentencePiece(name or _name_of(tokenizer.path, "model"), tokenizer.sp)
    if isinstance(tokenizer, formats.TiktokenLoaded):
        return _Tiktoken(name or _name_of(tokenizer.path, tokenizer.enc.name), tokenizer.enc)
    if isinstance(tokenizer, Tokenizer):
        return _Hf(name or "tokenizer", tokenizer)
    if isinstance(tokenizer, spm.SentencePieceProcessor):
        return _SentencePiece(name or "sentencepiece", tokenizer)
    if isinstance(tokenizer, Encoding):
        return _Tiktoken(name or tokenizer.name, tokenizer)
    raise TypeError(
        "expected a tokenmill Tokenizer, tiktoken Encoding, SentencePieceProcessor, or a file "
        f"or encoding name, got {type(tokenizer).__name__}"
    )


# ---- vocabulary checks --------------------------------------------------------------------


@dataclass
class Unreachable:
    """An entry the tokenizer does not produce from its own text."""

    id: int
    token: str
    encodes_as: List[int]


def unreachable_tokens(tokenizer: Any) -> Tuple[List[Unreachable], int]:
    """The entries that encoding their own text does not produce, and the number checked.

    Special, added, control, unused and byte-fallback entries are left out. An entry whose
    decoded text stands alone is checked through the whole pipeline (normalizer, pre-tokenizer,
    model): byte-level entries by their bytes as text (``Ġhello`` is `` hello``), SentencePiece
    and Metaspace entries with their ``▁`` as the space the pipeline adds (``▁hello`` is
    ``hello``). An entry with no text of its own (a part of a UTF-8 character, a word-internal
    piece: SentencePiece pieces without ``▁``, WordPiece ``##`` pieces) is given to the model
    alone, spelled as in the vocabulary, as one word. An entry is unreachable when it does not
    come out as exactly itself."""
    tok = as_evaluated(tokenizer)
    spellings, texts = tok.check_texts()
    n = len(texts)
    excluded = np.zeros(n, dtype=bool)
    special = tok.special_ids()
    excluded[special[special < n]] = True
    excluded |= np.array([s is None for s in spellings], dtype=bool)
    with_text = [i for i in range(n) if not excluded[i] and texts[i] is not None]
    without = [i for i in range(n) if not excluded[i] and texts[i] is None]
    found = []
    if with_text:
        ids, offsets = tok.encode_flat([texts[i] for i in with_text])
        ok = _one_token(ids, offsets, np.array(with_text, dtype=np.int64))
        for k in np.flatnonzero(~ok):
            got = ids[offsets[k] : offsets[k + 1]].tolist()
            found.append(Unreachable(with_text[k], spellings[with_text[k]] or "", got))
    if without:
        for i, got in zip(without, tok.model_encodes_alone(without)):
            if got != [i]:
                found.append(Unreachable(i, spellings[i] or "", got))
    found.sort(key=lambda u: u.id)
    return found, int(n - excluded.sum())


def renyi_efficiency(counts: np.ndarray, power: float = 2.5) -> float:
    """Rényi efficiency of a token distribution given as counts per id (Zouhar et al. 2023):
    ``H_power(p) / log2(types)``, with ``types`` the number of ids seen, as the
    ``tokenization-scorer`` package computes it (its ``renyi`` metric). NaN when fewer than two
    types are seen."""
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if len(c) < 2:
        return float("nan")
    p = c / c.sum()
    if power == 1.0:
        entropy = float(-(p * np.log2(p)).sum())
    else:
        entropy = float(np.log2((p**power).sum()) / (1.0 - power))
    return entropy / math.log2(len(c))


# ---- corpora and words ------------------------------------------------------------------------

_CJK_SEGMENTERS = {"zh": "Chinese", "ja": "Japanese"}
_ISO3 = {
    "eng": "en", "deu": "de", "fra": "fr", "pol": "pl", "spa": "es", "ita": "it",
    "nld": "nl", "por": "pt", "rus": "ru", "cmn": "zh", "zho": "zh", "jpn": "ja",
}  # fmt: skip


def _word_language(language: str) -> str:
    base = language.split("_")[0].split("-")[0].lower()
    return _ISO3.get(base, base)


def word_definition(language: str) -> str:
    """What a word is for ``language`` (a code such as ``en``, ``zh``, or a UDHR file name
    such as ``cmn_hans``) in the fertility and split metrics."""
    from tokenmill.words import LANGUAGES

    code = _word_language(language)
    if code in _CJK_SEGMENTERS:
        return (
            f"words of tokenmill's {_CJK_SEGMENTERS[code]} segmenter (WordTokenizer({code!r})) "
            "holding a letter or digit"
        )
    if code in LANGUAGES:
        return (
            f"tokens of WordTokenizer({code!r}) (UAX #29 word boundaries with {code} rules: "
            "clitics, abbreviations, numbers) holding a letter or digit"
        )
    return (
        "tokens of UAX #29 word boundaries holding a letter or digit; in scripts written "
        "without spaces and without a tokenmill segmenter (Thai, Lao, Khmer, Myanmar...) "
        "these are characters"
    )


_WORDLIKE = re.compile(r"[^\W_]")


@dataclass
class Corpus:
    """Named documents in one language. ``Corpus.read(paths)`` makes one from files or globs
    (each non-empty line a document, without its line end; ``.jsonl``: the ``text`` field of
    each line)."""

    name: str
    documents: List[str]
    language: str = "en"

    @classmethod
    def read(
        cls,
        paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
        name: Optional[str] = None,
        language: str = "en",
    ) -> Corpus:
        from tokenmill.cli.train import documents, expand_inputs

        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        files = expand_inputs([os.fspath(p) for p in paths])
        docs = [d.rstrip("\r\n") for d in documents(files, "text", whole_file=False)]
        if name is None:
            first = os.fspath(paths[0])
            name = first if _glob.has_magic(first) else _name_of(first, first)
            name += f" and {len(paths) - 1} more" if len(paths) > 1 else ""
        return cls(name, [d for d in docs if d.strip()], language)


def _corpora(corpora: Any, language: str) -> List[Corpus]:
    if corpora is None:
        return []
    if isinstance(corpora, (str, os.PathLike, Corpus)):
        corpora = [corpora]
    items: List[Tuple[Optional[str], Any]] = (
        list(corpora.items()) if isinstance(corpora, Mapping) else [(None, c) for c in corpora]
    )
    out = []
    for k, (name, source) in enumerate(items):
        if isinstance(source, Corpus):
            out.append(source)
        elif isinstance(source, (str, os.PathLike)):
            out.append(Corpus.read(source, name, language))
        elif isinstance(source, Iterable):
            texts = list(source)
            if not all(isinstance(t, str) for t in texts):
                raise TypeError(f"corpus {name or k}: a list of texts must hold only str")
            out.append(Corpus(name or f"texts{k + 1}", [t for t in texts if t], language))
        else:
            raise TypeError(
                f"corpus {name or k}: expected a path, a glob, a list of texts or a Corpus, "
                f"got {type(source).__name__}"
            )
    return out


@dataclass
class _Words:
    count: int
    distinct: List[str]  # the distinct words, each after a space when one precedes it
    weights: np.ndarray  # occurrences of each


def _words(corpus: Corpus) -> _Words:
    from tokenmill.words import WordTokenizer

    wt = WordTokenizer(_word_language(corpus.language))
    # One text, cut into spans as NumPy arrays (no Python object per word but its slice).
    # Each word is counted with the character before it when that is whitespace (a line end
    # between documents too); words are never cut across a line end.
    text = "\n".join(corpus.documents)
    starts, ends = wt.tokenize_spans(text)
    if len(starts) == 0:
        return _Words(0, [], np.zeros(0, dtype=np.int64))
    chars = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    before = chars[np.maximum(starts - 1, 0)]
    spaced = (starts > 0) & np.isin(before, _WHITESPACE)
    counts = Counter(map(text.__getitem__, map(slice, starts - spaced, ends)))
    merged: Counter = Counter()
    for key, n in counts.items():  # distinct words only
        word = key.lstrip()
        if _WORDLIKE.search(word):
            merged[" " + word if len(word) < len(key) else word] += n
    distinct = list(merged)
    weights = np.fromiter(merged.values(), dtype=np.int64, count=len(distinct))
    return _Words(int(weights.sum()), distinct, weights)


_WHITESPACE = np.array([ord(c) for c in map(chr, range(0x3001)) if c.isspace()], dtype=np.uint32)


# ---- results -------------------------------------------------------------------------------


@dataclass
class LengthStats:
    """Tokens per document."""

    mean: float
    median: float
    p90: float
    p99: float
    max: int
    histogram: List[Tuple[float, int]] = field(default_factory=list)  # (bin start, documents)

    @classmethod
    def of(cls, lengths: np.ndarray, bins: int = 40) -> LengthStats:
        if len(lengths) == 0:
            return cls(0.0, 0.0, 0.0, 0.0, 0, [])
        top = float(np.percentile(lengths, 99)) or 1.0
        counts, edges = np.histogram(np.minimum(lengths, top), bins=bins, range=(0, top))
        return cls(
            float(lengths.mean()),
            float(np.median(lengths)),
            float(np.percentile(lengths, 90)),
            top,
            int(lengths.max()),
            [(float(e), int(c)) for e, c in zip(edges[:-1], counts)],
        )


@dataclass
class CorpusResult:
    """The metrics of one tokenizer on one corpus."""

    tokenizer: str
    corpus: str
    documents: int
    bytes: int
    characters: int
    words: int
    tokens: int
    bytes_per_token: float
    characters_per_token: float
    fertility: float  # tokens per word
    split_share: float  # share of word occurrences taking more than one token
    lengths: LengthStats
    vocabulary_used: int
    utilization: float  # vocabulary_used / vocabulary size
    renyi_efficiency: float
    under_trained: int  # checkable entries produced at most `rare` times
    under_trained_examples: List[str]
    rank_frequency: List[Tuple[int, int]]  # (rank, count), log-spaced ranks


@dataclass
class TokenizerReport:
    """What a tokenizer's vocabulary alone tells."""

    name: str
    kind: str
    vocab_size: int
    special: int
    checked: int
    unreachable: int
    unreachable_examples: List[Unreachable]
    longest: List[Tuple[int, str, int]]  # (id, token, bytes)


@dataclass
class ParityRow:
    language: str  # the file's name without .txt (an ISO 639-3 code with a variety)
    script: str
    bytes: int
    tokens: Dict[str, int]
    premium: Dict[str, float]  # tokens over the reference language's, per tokenizer


@dataclass
class Parity:
    source: str
    reference: str
    tokenizers: List[str]
    rows: List[ParityRow]  # sorted by the first tokenizer's premium, highest first
    # fragments left out: files with under a tenth of the reference's non-empty lines
    partial: List[str] = field(default_factory=list)


@dataclass
class Sample:
    """A sentence and its tokens, per tokenizer: (ids, text) pieces, one per token, except
    that tokens holding parts of one character (byte-level BPE, byte fallback) are one piece
    with all their ids and the character."""

    label: str
    text: str
    tokens: Dict[str, List[Tuple[List[int], str]]]


def _plain(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


@dataclass
class Evaluation:
    """The result of :func:`evaluate`: ``table()`` for a terminal, ``to_json()`` for scripts,
    ``to_html()`` / ``save_html(path)`` for a self-contained report."""

    tokenizers: List[TokenizerReport]
    corpora: List[Dict[str, Any]]  # name, language, word definition, documents, bytes
    results: List[CorpusResult]
    parity: Optional[Parity]
    samples: List[Sample]
    renyi_power: float
    rare: int

    def to_dict(self) -> Dict[str, Any]:
        return _plain(asdict(self))

    def to_json(self, indent: Optional[int] = 1) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def table(self, parity_rows: int = 10) -> str:
        from tokenmill._evaluate_report import console

        return console(self, parity_rows)

    __str__ = table

    def to_html(self) -> str:
        from tokenmill._evaluate_report import to_html

        return to_html(self)

    def save_html(self, path: Union[str, os.PathLike]) -> None:
        """Writes the report (atomically; one file, no network needed to open it)."""
        text = self.to_html()
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def save_json(self, path: Union[str, os.PathLike]) -> None:
        text = self.to_json()
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


# ---- the parallel text -------------------------------------------------------------------------

_SCRIPT_NAMES = {"CJK": "Han", "CANADIAN": "Canadian Syllabics", "OL": "Ol Chiki", "NKO": "NKo"}


def script_of(text: str, sample: int = 4000) -> str:
    """The script most letters of ``text`` are written in (from the Unicode character names;
    Japanese when kana make a tenth of the letters)."""
    counts: Counter = Counter()
    seen = 0
    for ch in text:
        if not ch.isalpha():
            continue
        counts[unicodedata.name(ch, "UNKNOWN ?").split(" ")[0]] += 1
        seen += 1
        if seen >= sample:
            break
    if not counts:
        return "none"
    if counts["HIRAGANA"] + counts["KATAKANA"] >= seen / 10:
        return "Japanese"
    top = counts.most_common(1)[0][0]
    return _SCRIPT_NAMES.get(top, top.title())


def find_udhr(path: Optional[Union[str, os.PathLike]] = None) -> Path:
    """The folder of the Universal Declaration of Human Rights (one ``<code>.txt`` per
    language, as NLTK's ``udhr2`` data package): ``path``, else ``$TOKENMILL_UDHR``, else
    ``corpora/udhr2`` in NLTK's data folders (``$NLTK_DATA``, ``~/nltk_data``,
    ``/usr/share/nltk_data``, ...)."""
    candidates = [Path(path)] if path is not None else []
    if path is None:
        if os.environ.get("TOKENMILL_UDHR"):
            candidates.append(Path(os.environ["TOKENMILL_UDHR"]))
        roots = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
        roots += [
            os.path.expanduser("~/nltk_data"),
            "/usr/share/nltk_data",
            "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data",
        ]
        candidates += [Path(r) / "corpora" / "udhr2" for r in roots]
    for c in candidates:
        if (c / "eng.txt").is_file():
            return c
    where = ", ".join(str(c) for c in candidates) or "nowhere"
    raise FileNotFoundError(
        f"no UDHR folder (with eng.txt) found in {where}: give its path, or set $TOKENMILL_UDHR"
    )


def _parallel_texts(folder: Path, languages: Optional[Sequence[str]]) -> Dict[str, List[str]]:
    files = sorted(folder.glob("*.txt"))
    if languages is not None:
        wanted = set(languages)
        missing = wanted - {f.stem for f in files}
        if missing:
            raise FileNotFoundError(f"{folder}: no {', '.join(sorted(missing))}.txt")
        files = [f for f in files if f.stem in wanted]
    out = {}
    for f in files:
        text = f.read_text(encoding="utf-8")
        out[f.stem] = [line.strip() for line in text.splitlines() if line.strip()]
    return out


# ---- evaluate -----------------------------------------------------------------------------


def _rank_frequency(counts: np.ndarray, points: int = 120) -> List[Tuple[int, int]]:
    ordered = np.sort(counts[counts > 0])[::-1]
    if len(ordered) == 0:
        return []
    ranks = np.unique(np.geomspace(1, len(ordered), num=min(points, len(ordered))).astype(int))
    return [(int(r), int(ordered[r - 1])) for r in ranks]


def _pieces(surfaces: List[Optional[bytes]], ids: Sequence[int]) -> List[Tuple[List[int], str]]:
    """``ids`` as (ids, text) pieces: a token alone when its bytes are text, else with the
    tokens after it until their bytes are (at most 4 tokens: then shown escaped)."""
    out: List[Tuple[List[int], str]] = []
    group: List[int] = []
    data = b""
    for i in ids:
        group.append(i)
        data += (surfaces[i] or b"") if 0 <= i < len(surfaces) else b"?"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if len(group) < 4:
                continue
            text = data.decode("utf-8", errors="backslashreplace")
        out.append((group, text))
        group, data = [], b""
    if group:
        out.append((group, data.decode("utf-8", errors="backslashreplace")))
    return out


def _token_texts(surfaces: List[Optional[bytes]], ids: Sequence[int]) -> List[str]:
    return [
        (surfaces[i] or b"").decode("utf-8", errors="backslashreplace")
        if 0 <= i < len(surfaces)
        else "?"
        for i in ids
    ]


def evaluate(
    tokenizers: Union[Mapping[str, Any], Sequence[Any], Any],
    corpora: Any = None,
    *,
    parallel: Optional[Union[str, os.PathLike]] = None,
    languages: Optional[Sequence[str]] = None,
    reference: str = "eng",
    language: str = "en",
    samples: Optional[Sequence[str]] = None,
    renyi_power: float = 2.5,
    rare: int = 1,
    examples: int = 20,
) -> Evaluation:
    """Evaluates and compares ``tokenizers`` (a dict name → tokenizer, a list, or one; each an
    object or a file, see the module docstring) on ``corpora`` (a path or glob, a list of them
    or of lists of texts, a dict name → those, or :class:`Corpus` objects; files in
    ``language``) and, with ``parallel`` (``"udhr"`` for the UDHR found by :func:`find_udhr`,
    or a folder of ``<language>.txt`` translations), across languages, relative to
    ``reference``; ``languages`` limits the parallel files read. ``samples``: sentences for
    the token view (default: the first lines of the corpora and of a few parallel
    languages). ``rare``: entries produced at most this often count as under-trained;
    ``examples``: how many unreachable, under-trained and longest tokens to list."""
    if isinstance(tokenizers, Mapping):
        named = [as_evaluated(t, str(n)) for n, t in tokenizers.items()]
    elif isinstance(tokenizers, (str, os.PathLike)) or not isinstance(tokenizers, Sequence):
        named = [as_evaluated(tokenizers)]
    else:
        named = [as_evaluated(t) for t in tokenizers]
    if not named:
        raise ValueError("no tokenizer to evaluate")
    seen: Counter = Counter()
    for t in named:  # the same file name twice (a/tokenizer.json, b/tokenizer.json)
        seen[t.name] += 1
        if seen[t.name] > 1:
            t.name = f"{t.name} ({seen[t.name]})"
    sets = _corpora(corpora, language)
    parallel_texts: Dict[str, List[str]] = {}
    source = ""
    if parallel is not None:
        folder = find_udhr() if str(parallel) == "udhr" else find_udhr(parallel)
        chosen = None if languages is None else sorted(set(languages) | {reference})
        parallel_texts = _parallel_texts(folder, chosen)
        if reference not in parallel_texts:
            raise FileNotFoundError(f"{folder}: no {reference}.txt (the reference language)")
        source = str(folder)
    if not sets and not parallel_texts:
        raise ValueError("nothing to evaluate on: give corpora, parallel, or both")

    reports = [_tokenizer_report(t, examples) for t in named]
    corpus_info, results = [], []
    for corpus in sets:
        words = _words(corpus)
        n_bytes = sum(len(d.encode("utf-8")) for d in corpus.documents)
        n_chars = sum(len(d) for d in corpus.documents)
        corpus_info.append(
            {
                "name": corpus.name,
                "language": corpus.language,
                "words": word_definition(corpus.language),
                "documents": len(corpus.documents),
                "bytes": n_bytes,
            }
        )
        for t, report in zip(named, reports):
            results.append(
                _corpus_result(
                    t, report, corpus, words, n_bytes, n_chars, renyi_power, rare, examples
                )
            )
    parity = _parity(named, parallel_texts, reference, source) if parallel_texts else None
    chosen_samples = _samples(named, sets, parallel_texts, samples)
    return Evaluation(reports, corpus_info, results, parity, chosen_samples, renyi_power, rare)


def _tokenizer_report(t: Evaluated, examples: int) -> TokenizerReport:
    bad, checked = unreachable_tokens(t)
    surfaces = t.surfaces()
    special = set(t.special_ids().tolist())
    lengths = np.array(
        [-1 if s is None or i in special else len(s) for i, s in enumerate(surfaces)],
        dtype=np.int64,
    )
    order = np.argsort(-lengths, kind="stable")[:examples]
    longest = [
        (int(i), _token_texts(surfaces, [int(i)])[0], int(lengths[i]))
        for i in order
        if lengths[i] > 0
    ]
    return TokenizerReport(
        t.name, t.kind, t.vocab_size(), len(special), checked, len(bad), bad[:examples], longest
    )


def _corpus_result(t, report, corpus, words, n_bytes, n_chars, power, rare, examples):
    ids, offsets = t.encode_flat(corpus.documents)
    n_tokens = len(ids)
    size = max(t.vocab_size(), int(ids.max()) + 1 if n_tokens else 0)
    counts = np.bincount(ids.astype(np.int64), minlength=size)
    surfaces = t.surfaces()
    blank = np.array(
        [s is not None and s.decode("utf-8", "replace").isspace() for s in surfaces]
        + [False] * (size - len(surfaces)),
        dtype=bool,
    )
    split_share = 0.0
    if words.count:
        wids, woffsets = t.encode_flat(words.distinct)
        kept = (~blank[wids.astype(np.int64)]).astype(np.int64)
        per_word = np.add.reduceat(kept, woffsets[:-1]) if len(kept) else np.zeros(0, np.int64)
        per_word[np.diff(woffsets) == 0] = 0  # reduceat repeats a value for empty ranges
        split_share = float(words.weights[per_word > 1].sum() / words.count)
    special = t.special_ids()
    checkable = np.ones(size, dtype=bool)
    checkable[special[special < size]] = False
    checkable[[i for i, s in enumerate(surfaces) if s is None]] = False
    rare_ids = np.flatnonzero(checkable & (counts <= rare))
    unreachable = {u.id for u in report.unreachable_examples}
    by_length = sorted(
        (int(i) for i in rare_ids if int(i) not in unreachable),
        key=lambda i: -len(surfaces[i] or b""),
    )[:examples]
    used = int((counts > 0).sum())
    return CorpusResult(
        tokenizer=t.name,
        corpus=corpus.name,
        documents=len(corpus.documents),
        bytes=n_bytes,
        characters=n_chars,
        words=words.count,
        tokens=n_tokens,
        bytes_per_token=n_bytes / n_tokens if n_tokens else float("nan"),
        characters_per_token=n_chars / n_tokens if n_tokens else float("nan"),
        fertility=n_tokens / words.count if words.count else float("nan"),
        split_share=split_share,
        lengths=LengthStats.of(np.diff(offsets)),
        vocabulary_used=used,
        utilization=used / t.vocab_size() if t.vocab_size() else float("nan"),
        renyi_efficiency=renyi_efficiency(counts, power),
        under_trained=len(rare_ids),
        under_trained_examples=_token_texts(surfaces, by_length),
        rank_frequency=_rank_frequency(counts),
    )


def _parity(named, texts: Dict[str, List[str]], reference: str, source: str) -> Parity:
    enough = len(texts[reference]) / 10
    partial = sorted(lang for lang, lines in texts.items() if len(lines) < enough)
    texts = {lang: lines for lang, lines in texts.items() if len(lines) >= enough}
    rows = []
    totals = {}
    for t in named:
        # one batch for every language: the offsets of the lines give each language's count
        langs = list(texts)
        flat = [line for lang in langs for line in texts[lang]]
        ids, offsets = t.encode_flat(flat)
        bounds = np.cumsum([0] + [len(texts[lang]) for lang in langs])
        totals[t.name] = {
            lang: int(offsets[bounds[k + 1]] - offsets[bounds[k]]) for k, lang in enumerate(langs)
        }
    for lang, lines in texts.items():
        tokens = {t.name: totals[t.name][lang] for t in named}
        premium = {
            n: tokens[n] / totals[n][reference] if totals[n][reference] else float("nan")
            for n in tokens
        }
        rows.append(
            ParityRow(
                lang,
                script_of("\n".join(lines)),
                sum(len(line.encode("utf-8")) for line in lines),
                tokens,
                premium,
            )
        )
    first = named[0].name
    rows.sort(key=lambda r: (-r.premium[first], r.language))
    return Parity(source, reference, [t.name for t in named], rows, partial)


DEFAULT_SAMPLE_LANGUAGES = ("eng", "deu", "rus", "arb", "hin", "cmn_hans", "jpn", "kor", "amh")


def _samples(named, sets, parallel_texts, samples) -> List[Sample]:
    chosen: List[Tuple[str, str]] = []
    if samples is not None:
        chosen = [(f"sample {k + 1}", s) for k, s in enumerate(samples)]
    else:
        for corpus in sets:
            chosen += [(corpus.name, d) for d in corpus.documents[:2]]
        for lang in DEFAULT_SAMPLE_LANGUAGES:
            lines = parallel_texts.get(lang)
            if lines:
                body = [x for x in lines if len(x) > 40]
                chosen.append((lang, (body or lines)[0]))
    chosen = [(label, text[:400]) for label, text in chosen]
    out = []
    for label, text in chosen:
        tokens = {}
        for t in named:
            tokens[t.name] = _pieces(t.surfaces(), t.encode_flat([text])[0].tolist())
        out.append(Sample(label, text, tokens))
    return out
