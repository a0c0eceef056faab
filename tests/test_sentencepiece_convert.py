"""Conversion between SentencePiece BPE `.model` files and tokenizer.json: the converted
tokenizer encodes like `sentencepiece` (checked with tokenmill and with `tokenizers` loading the
saved tokenizer.json), and a tokenizer.json converted back to a `.model` loads in
`sentencepiece` and encodes identically."""

from __future__ import annotations

import pytest
from conftest import MIXED_LANGUAGES, corpus_text, non_empty_lines, shared_path

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
import tokenmill.sentencepiece as tsp  # noqa: E402

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
    want = ref.encode(lines)
    tok = tsp.to_tokenizer(path)
    assert [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)] == want
    tok.save(str(tmp_path / "tokenizer.json"))
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == want
    assert [tok.decode(ids) for ids in want[:200]] == ref.decode(want[:200])
    back = tsp.from_tokenizer(str(tmp_path / "tokenizer.json"))
    again = spm.SentencePieceProcessor(model_proto=back)
    assert again.encode(lines) == want
    assert tsp.SentencePieceProcessor(model_proto=back).encode(lines) == want
