"""Shared test fixtures and helpers: where ../shared is (a clear skip when it is absent), samples
of its corpora, pipelines and data built the same way in either library (GPT-2, BERT, tiktoken's
cache), a hand-written protobuf reader, and split patterns and measures several tests share."""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child Python that imports the same tokenmill as this process (a
    wheel in CI, a development tree here) and these tests' helpers, with `extra` set."""
    import tokenmill

    package_root = Path(tokenmill.__file__).resolve().parent.parent
    path = os.pathsep.join([str(package_root), str(Path(__file__).resolve().parent)])
    return {**os.environ, "PYTHONPATH": path, **extra}


def shared_path(*parts: str) -> Path:
    """Path of a file under ../shared; skips the test (with the reason) if it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the ../shared data beside the repo), which is absent")
    return path


def read_sample(path: Path, max_bytes: int = 2_000_000) -> str:
    """The first `max_bytes` of a UTF-8 text file, cut at a line end."""
    with open(path, "rb") as f:
        data = f.read(max_bytes)
    if len(data) == max_bytes:
        cut = data.rfind(b"\n")
        if cut > 0:
            data = data[: cut + 1]
    return data.decode("utf-8", errors="replace")


def corpus_text(*samples: tuple[str, int]) -> str:
    """The starts of corpus files, concatenated: each sample is (path under corpora/ with "/"
    separators, max bytes), and a folder stands for its first file."""
    text = ""
    for rel, max_bytes in samples:
        path = shared_path("corpora", *rel.split("/"))
        if path.is_dir():
            path = sorted(p for p in path.rglob("*") if p.is_file())[0]
        text += read_sample(path, max_bytes)
    return text


def random_strings(rng, count: int, max_len: int, ranges: list[tuple[int, int]]):
    """`count` strings of 1..`max_len` code points; each code point is drawn from one of the
    (low, high) `ranges`, picked at random (one draw per range first, as a list, then a choice)."""
    for _ in range(count):
        n = rng.randint(1, max_len)
        yield "".join(
            chr(rng.choice([rng.randint(low, high) for low, high in ranges])) for _ in range(n)
        )


def corpus_files() -> list[Path]:
    """Every non-empty text file of ../shared/corpora (no licences or manifests), sorted; empty
    when ../shared is absent."""
    root = SHARED / "corpora"
    if not root.exists():
        return []
    skip = {"LICENSE.txt", "README.md", "MANIFEST.md", "README"}
    return sorted(
        p for p in root.rglob("*") if p.is_file() and p.name not in skip and p.stat().st_size > 0
    )


def documents(text: str, size: int = 1_000) -> list[str]:
    """Cuts text into ~`size`-character documents at line ends (the last may be shorter)."""
    docs, current, length = [], [], 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        length += len(line)
        if length >= size:
            docs.append("".join(current))
            current, length = [], 0
    if current:
        docs.append("".join(current))
    return docs


def non_empty_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


# English novels that many tests sample for real prose (paragraphs, quotes, dialogue).
SHERLOCK = "gutenberg/en_novels/pg1661_en_adventures_of_sherlock_holmes.txt"
STUDY_IN_SCARLET = "gutenberg/pg244_en_a_study_in_scarlet.txt"

# English, German, Japanese, Russian and Chinese: the conversion tests' sample.
MIXED_LANGUAGES = (
    STUDY_IN_SCARLET,
    "gutenberg/pg34811_de_buddenbrooks.txt",
    "multilingual/ja",
    "multilingual/ru",
    "multilingual/zh",
)


def write_spm_training_corpus(
    path: Path, sizes: tuple[int, int, int], french_held_out: int
) -> tuple[Path, list[str]]:
    """Writes the starts of A Study in Scarlet, Alice in Wonderland and Buddenbrooks (`sizes`
    bytes each) to `path`; returns it and the held-out lines (60 kB of Frankenstein and
    `french_held_out` bytes of Les Trois Mousquetaires), for the sentencepiece trainer tests."""
    english, alice, german = sizes
    text = corpus_text(
        ("gutenberg/pg244_en_a_study_in_scarlet.txt", english),
        ("gutenberg/en_novels/pg11_en_alice_in_wonderland.txt", alice),
        ("gutenberg/pg34811_de_buddenbrooks.txt", german),
    )
    held_out = corpus_text(
        ("gutenberg/en_novels/pg84_en_frankenstein.txt", 60_000),
        ("gutenberg/pg13951_fr_les_trois_mousquetaires.txt", french_held_out),
    )
    path.write_text(text, encoding="utf-8")
    return path, non_empty_lines(held_out)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character map (as CLIP's simple_tokenizer builds it)."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def clip_merges() -> list[tuple[str, ...]]:
    """CLIP's merges, as the pretrained MANIFEST describes (lines 1 to 48895 of the file)."""
    path = shared_path("pretrained", "clip", "bpe_simple_vocab_16e6.txt.gz")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").split("\n")
    return [tuple(line.split()) for line in lines[1 : 49152 - 256 - 2 + 1]]


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The protobuf varint at `pos` of `data`, and the position after it."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def protobuf_raw_fields(data: bytes):
    """(field number, wire type, value) of each field of a serialized protobuf message, read by
    hand (the tests do not need the protobuf package): varints as ints, every other field as
    its bytes."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(data, pos)
        else:
            if wire == 2:
                size, pos = read_varint(data, pos)
            elif wire in (1, 5):
                size = 8 if wire == 1 else 4
            else:
                raise ValueError(f"unexpected protobuf wire type {wire}")
            value, pos = data[pos : pos + size], pos + size
        yield number, wire, value


def protobuf_fields(data: bytes):
    """(field number, value) of each field of a serialized protobuf message: varints as ints,
    fixed64 / fixed32 as double / float, length-delimited fields as bytes (a nested message:
    read it with this again)."""
    for number, wire, value in protobuf_raw_fields(data):
        if wire in (1, 5):
            value = struct.unpack("<d" if wire == 1 else "<f", value)[0]
        yield number, value


# The association measures nltk defines for bigrams, trigrams and quadgrams alike.
COMMON_MEASURES = [
    "raw_freq",
    "student_t",
    "chi_sq",
    "mi_like",
    "pmi",
    "likelihood_ratio",
    "poisson_stirling",
    "jaccard",
]


def assert_spm_round_trip(model, ref, lines: list[str], tmp_path: Path):
    """Checks the conversion of the sentencepiece `model` (a path or serialized bytes; `ref` is
    sentencepiece's processor for it) to tokenizer.json and back: tokenmill's and tokenizers'
    tokenizer, and the `.model` converted back, all encode `lines` as `ref` does. Returns
    sentencepiece's processor for the converted-back model."""
    import sentencepiece as spm
    import tokenizers
    import tokenmill.sentencepiece as tsp

    want = ref.encode(lines)
    tok = tsp.to_tokenizer(model)
    assert [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)] == want
    tok.save(str(tmp_path / "tokenizer.json"))
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == want
    assert [tok.decode(ids) for ids in want[:200]] == ref.decode(want[:200])
    back = tsp.from_tokenizer(str(tmp_path / "tokenizer.json"))
    again = spm.SentencePieceProcessor(model_proto=back)
    assert again.encode(lines) == want
    assert tsp.SentencePieceProcessor(model_proto=back).encode(lines) == want
    return again


def gpt2_model(lib, **options):
    """GPT-2's BPE model in `lib` (tokenizers or tokenmill), from encoder.json / vocab.bpe;
    `options` go to ``BPE.from_file``."""
    return lib.models.BPE.from_file(
        str(shared_path("pretrained", "gpt2", "encoder.json")),
        str(shared_path("pretrained", "gpt2", "vocab.bpe")),
        **options,
    )


def gpt2(lib, add_prefix_space: bool = False):
    """GPT-2 as a pipeline of `lib` (tokenizers or tokenmill): its BPE model, ByteLevel
    pre-tokenizer and decoder."""
    tok = lib.Tokenizer(gpt2_model(lib))
    tok.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = lib.decoders.ByteLevel()
    return tok


@pytest.fixture
def shared():
    return shared_path


@pytest.fixture(scope="session")
def bert_json(tmp_path_factory):
    """tokenizer.json of bert-base-uncased as `tokenizers`' BertWordPieceTokenizer builds it (the
    MANIFEST's settings), written once per test session."""
    from tokenizers.implementations import BertWordPieceTokenizer

    vocab = shared_path("pretrained", "bert_base_uncased", "vocab.txt")
    path = tmp_path_factory.mktemp("bert") / "tokenizer.json"
    BertWordPieceTokenizer(str(vocab), lowercase=True).save(str(path))
    return str(path)


# The URL of each rank file tiktoken downloads → its copy under ../shared/pretrained.
_BLOB = "https://openaipublic.blob.core.windows.net/"
TIKTOKEN_FILES = {
    _BLOB + "encodings/r50k_base.tiktoken": "whisper/gpt2.tiktoken",
    _BLOB + "encodings/p50k_base.tiktoken": "p50k_base/p50k_base.tiktoken",
    _BLOB + "encodings/cl100k_base.tiktoken": "cl100k_base/cl100k_base.tiktoken",
    _BLOB + "encodings/o200k_base.tiktoken": "o200k_base/o200k_base.tiktoken",
    _BLOB + "gpt-2/encodings/main/vocab.bpe": "gpt2/vocab.bpe",
    _BLOB + "gpt-2/encodings/main/encoder.json": "gpt2/encoder.json",
}

# Split patterns of well-known models that tiktoken's encodings do not carry (shared by the
# pre-tokenizer and scanner tests).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN2_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)


def make_tiktoken_cache(folder: Path, urls=tuple(TIKTOKEN_FILES)) -> Path:
    """Lays out ``folder`` as tiktoken's cache: links named by the sha1 of each URL."""
    import hashlib

    folder.mkdir(parents=True, exist_ok=True)
    for url in urls:
        os.symlink(
            shared_path("pretrained", TIKTOKEN_FILES[url]),
            folder / hashlib.sha1(url.encode()).hexdigest(),
        )
    return folder


@pytest.fixture(scope="session")
def tiktoken_cache(tmp_path_factory) -> Path:
    """A folder laid out as tiktoken's cache (``TIKTOKEN_CACHE_DIR``) with every rank file."""
    return make_tiktoken_cache(tmp_path_factory.mktemp("tiktoken_cache"))
