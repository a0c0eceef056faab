"""What the atheris differential targets share: where the shared data is, text generated from
the fuzzer's bytes, and the reference encodings.

Each target compares tokenmill with a reference library on generated text and raises (so that
atheris saves the input as a crash) on the first difference. Run them through ``scripts/fuzz
--python`` (see fuzz/README.md), or directly: ``python3 fuzz/python/diff_tiktoken.py CORPUS_DIR
-max_total_time=60``.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))
PRETRAINED = SHARED / "pretrained"
if not PRETRAINED.is_dir():
    sys.exit(f"{PRETRAINED} is missing: set TOKENMILL_SHARED to the shared data folder")

# Fragments the generated texts are made of, beyond the fuzzer's raw code points: the classes
# the split patterns and normalizers treat apart.
FRAGMENTS = [
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    "\u3000",
    "\u00a0",
    "\u2028",
    "\x0b",
    "a",
    "Z",
    "hello",
    "World",
    "'s",
    "'LL",
    "don't",
    "ça",
    "Ärger",
    "straße",
    "İ",
    "ǅ",
    "7",
    "42",
    "12345",
    "٣",
    "½",
    "Ⅻ",
    ".",
    ",",
    "!?",
    "...",
    "--",
    "/",
    "()",
    "<",
    ">",
    "|",
    "_",
    "@#$",
    "e\u0301",
    "\u0301",
    "\u0308\u0308",
    "\u200d",
    "\ufe0f",
    "\ufeff",
    "你好",
    "世界",
    "日本語",
    "한국어",
    "Привет",
    "مرحبا",
    "नमस्ते",
    "ไทย",
    "Ελλάδα",
    "🙂",
    "👍🏽",
    "👩\u200d👩\u200d👧",
    "🇫🇷",
    "𝔘",
    "\U0010fffd",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "[CLS]",
    "[MASK]",
    "##ing",
    "▁",
    "<unk>",
    "<s>",
    "\x00",
    "\x7f",
    "\x1c",
]


def generated_text(data: bytes) -> str:
    """A text from the fuzzer's bytes; the first byte picks how the rest is read: as UTF-8
    (invalid bytes replaced; what the seed corpus holds), as a string of fragments (a byte
    each), as Latin-1, or as the fuzzed data provider's code points."""
    if not data:
        return ""
    mode, rest = data[0] % 4, data[1:]
    if mode == 0:
        return rest.decode("utf-8", errors="replace")
    if mode == 1:
        return "".join(FRAGMENTS[b % len(FRAGMENTS)] for b in rest)
    if mode == 2:
        return rest.decode("latin-1")
    import atheris

    return atheris.FuzzedDataProvider(rest).ConsumeUnicodeNoSurrogates(len(rest))


# The URL of each rank file tiktoken downloads → its copy under shared/pretrained.
_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
TIKTOKEN_FILES = {
    "r50k_base": "whisper/gpt2.tiktoken",
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
}


def tiktoken_cache() -> Path:
    """A temporary folder laid out as tiktoken's cache, for tiktoken and tokenmill alike."""
    folder = Path(tempfile.mkdtemp(prefix="tokenmill-fuzz-tiktoken-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for name, path in TIKTOKEN_FILES.items():
        url = f"{_BLOB}{name}.tiktoken"
        os.symlink(PRETRAINED / path, folder / hashlib.sha1(url.encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    os.environ.pop("TOKENMILL_TIKTOKEN_DIR", None)
    return folder


# One function per shape of input and output: atheris counts the first call of each as new
# coverage (see `observe`).
SHAPES = [lambda: 0, lambda: 1, lambda: 2, lambda: 3, lambda: 4, lambda: 5, lambda: 6]
SHAPES += [lambda: 7, lambda: 8, lambda: 9, lambda: 10, lambda: 11, lambda: 12, lambda: 13]
SHAPES += [lambda: 14, lambda: 15, lambda: 16, lambda: 17, lambda: 18, lambda: 19]
CATEGORIES = "LMNPSZC"


def observe(text: str, ids: list) -> None:
    """Calls the functions of the shape of the input and output, so that atheris (which sees
    only the Python code's coverage, not the native libraries') keeps inputs of new kinds in its
    corpus: the Unicode categories present, the number of tokens and their ratio to characters."""
    for category in {unicodedata.category(c)[0] for c in text[:256]}:
        SHAPES[CATEGORIES.index(category)]()
    SHAPES[7 + min(len(ids).bit_length(), 7)]()
    SHAPES[15 + min(int(4 * len(ids) / max(len(text), 1)), 4)]()


def check_equal(what: str, text: str, ours, theirs) -> None:
    if ours != theirs:
        raise AssertionError(f"{what} differs on {text!r}:\n tokenmill {ours}\n reference {theirs}")
