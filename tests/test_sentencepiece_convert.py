"""Conversion between SentencePiece BPE `.model` files and tokenizer.json: the converted
tokenizer encodes like `sentencepiece` (checked with tokenmill and with `tokenizers` loading the
saved tokenizer.json), and a tokenizer.json converted back to a `.model` loads in
`sentencepiece` and encodes identically."""

from __future__ import annotations

import pytest
from conftest import (
    MIXED_LANGUAGES,
    assert_spm_round_trip,
    corpus_text,
    non_empty_lines,
    shared_path,
)

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

CASES = [
    "Hello world",
    "  two  spaces ",
    "byte fallback: 漢字 😀 ﬁ",
    "<s> not special",
    "\ttab\nnewline",
    "x" * 300,
    "",
]


def sample_lines() -> list[str]:
    lines = [
        line for rel in MIXED_LANGUAGES for line in non_empty_lines(corpus_text((rel, 30_000)))
    ]
    return lines + CASES


@pytest.mark.parametrize(
    "name", ["mistral/tokenizer.model.v1", "mistral/mistral_instruct_tokenizer_240323.model.v3"]
)
def test_model_to_tokenizer_json_and_back(name, tmp_path):
    path = str(shared_path("pretrained", *name.split("/")))
    ref = spm.SentencePieceProcessor(model_file=path)
    lines = sample_lines()
    assert_spm_round_trip(path, ref, lines, tmp_path)
