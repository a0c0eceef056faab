"""The hand-written split scanners against fancy-regex (the engine tiktoken uses) and the Python
`regex` module, on corpus samples, adversarial strings and random Unicode."""

from __future__ import annotations

import random
import sys
import unicodedata

import pytest
from conftest import GPT2_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN, read_sample, shared_path
from tokenmill import tiktoken as tm
from tokenmill._native import tiktoken as native

regex = pytest.importorskip("regex")

PATTERNS = {
    "gpt2": GPT2_PATTERN,
    "r50k": tm.R50K_PAT_STR,
    "cl100k": tm.CL100K_PAT_STR,
    "o200k": tm.O200K_PAT_STR,
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
}

TRICKY = list(
    "aZsStTdDmMlLvVrReEkſK'’ \t\n\r\x0b\x0c\x85\xa0\u1680\u2003\u2028\u3000\x1c\x00\x7f\u200b\u200d"
    '07²½Ⅻ٣.,!?/\\-_("#$€😀👩\U0001f3fd\ufe0f\u0301\u0308\u093f\u20ddéÉǅʰー中のア한ابשΩωßİıⓐ𝐀'
)


def pieces(pattern: str, text: str, backtracking: bool = False) -> list[str]:
    data = text.encode("utf-8")
    return [data[s:e].decode("utf-8") for s, e in native.split_spans(pattern, text, backtracking)]


def random_texts(seed: int, count: int, max_len: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randrange(max_len)):
            r = rng.random()
            if r < 0.1:
                cp = rng.randrange(sys.maxunicode + 1)
                chars.append(chr(cp) if not 0xD800 <= cp < 0xE000 else "x")
            else:
                chars.append(rng.choice(TRICKY))
        out.append("".join(chars))
    return out


def texts_for_python_regex() -> list[str]:
    """Random texts restricted to what both engines agree on: `regex` may carry a newer Unicode
    version than fancy-regex (the reference, since tiktoken uses it), so only code points
    assigned in this Python's `unicodedata` are kept; and `regex` counts U+001C..U+001F as
    whitespace, which Unicode White_Space (fancy-regex) does not."""

    def stable(c: str) -> str:
        if unicodedata.category(c) == "Cn" or 0x1C <= ord(c) < 0x20:
            return "x"
        return c

    return ["".join(map(stable, t)) for t in random_texts(11, 150, 30)]


@pytest.mark.parametrize("name", PATTERNS)
def test_scanner_matches_fancy_regex_on_random_unicode(name):
    pattern = PATTERNS[name]
    for text in random_texts(7, 120, 40) + random_texts(8, 2, 5000):
        assert pieces(pattern, text) == pieces(pattern, text, backtracking=True), repr(text)


@pytest.mark.parametrize("name", PATTERNS)
def test_scanner_matches_python_regex(name):
    pattern = PATTERNS[name]
    compiled = regex.compile(pattern)
    for text in texts_for_python_regex():
        assert pieces(pattern, text) == compiled.findall(text), repr(text)


@pytest.mark.parametrize("name", PATTERNS)
def test_scanner_matches_both_engines_on_corpora(name):
    pattern = PATTERNS[name]
    compiled = regex.compile(pattern)
    root = shared_path("corpora")
    for path in [
        root / "english_large" / "gutenberg_en_large_part1.txt",
        *sorted((root / "multilingual").rglob("*.txt")),
    ]:
        text = read_sample(path, 60_000)
        got = pieces(pattern, text)
        assert got == pieces(pattern, text, backtracking=True), path.name
        assert got == compiled.findall(text), path.name
