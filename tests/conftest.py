"""Shared test fixtures: where ../shared is, and a clear skip when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))


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
