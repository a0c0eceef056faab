"""Conversion between SentencePiece Unigram `.model` files and tokenizer.json (Precompiled
charsmap + dummy prefix + Unigram with byte fallback): the converted tokenizer encodes like
`sentencepiece` in tokenmill and in `tokenizers` (loading the saved tokenizer.json), the
tokenizer.json converted back loads in `sentencepiece` and encodes identically, and
`SentencePieceUnigramTokenizer.from_spm` / `SentencePieceBPETokenizer.from_spm` agree."""

from __future__ import annotations

import io

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
import tokenmill.sentencepiece as tsp  # noqa: E402
from tokenmill.implementations import SentencePieceBPETokenizer, SentencePieceUnigramTokenizer  # noqa: E402

# No literal "<s>" / "<0x41>" here: tokenizer.json cannot keep control and byte pieces out of
# the Unigram lattice (see to_tokenizer's docstring).
CASES = [
    "Hello world",
    "  two  spaces ",
    "unknown: 漢字 😀 ﬁ ½",
    "\ttab\nnewline",
    "x" * 300,
    "Ｈｅｌｌｏ",
    "",
]


def sample_lines() -> list[str]:
    lines = [
        line for rel in MIXED_LANGUAGES for line in non_empty_lines(corpus_text((rel, 20_000)))
    ]
    return lines + CASES


@pytest.fixture(scope="module")
def byte_fallback_model() -> bytes:
    """A Unigram model with byte fallback, trained by tokenmill on English text."""
    text = corpus_text(("gutenberg/en_novels/pg11_en_alice_in_wonderland.txt", 120_000))
    buffer = io.BytesIO()
    tsp.SentencePieceTrainer.train(
        sentence_iterator=iter(text.splitlines()),
        model_writer=buffer,
        vocab_size=1000,
        byte_fallback=True,
    )
    return buffer.getvalue()


def model_bytes(name, byte_fallback_model) -> bytes:
    if name == "byte_fallback":
        return byte_fallback_model
    return shared_path("pretrained", "sentencepiece_test", name).read_bytes()


@pytest.mark.parametrize(
    "name", ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model", "byte_fallback"]
)
def test_unigram_model_to_tokenizer_json_and_back(name, byte_fallback_model, tmp_path):
    data = model_bytes(name, byte_fallback_model)
    ref = spm.SentencePieceProcessor(model_proto=data)
    lines = sample_lines()
    again = assert_spm_round_trip(data, ref, lines, tmp_path)
    assert again.get_piece_size() == ref.get_piece_size()
    assert [
        again.is_control(i) or again.is_unknown(i) or again.is_byte(i)
        for i in range(ref.get_piece_size())
    ] == [
        ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i)
        for i in range(ref.get_piece_size())
    ]


def test_from_spm_implementations(tmp_path, byte_fallback_model):
    lines = sample_lines()[:400]
    path = shared_path("pretrained", "sentencepiece_test", "botchan_en_unigram_1000.model")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    uni = SentencePieceUnigramTokenizer.from_spm(str(path))
    assert [e.ids for e in uni.encode_batch(lines)] == ref.encode(lines)
    assert uni.decode(ref.encode("Hello world")) == ref.decode(ref.encode("Hello world"))
    mistral = shared_path("pretrained", "mistral", "tokenizer.model.v1")
    ref_bpe = spm.SentencePieceProcessor(model_file=str(mistral))
    bpe = SentencePieceBPETokenizer.from_spm(str(mistral))
    assert [e.ids for e in bpe.encode_batch(lines)] == ref_bpe.encode(lines)
    # the core Unigram with sentencepiece's rules fuses unknown characters like the processor
    tok = tsp.to_tokenizer(byte_fallback_model)
    assert [e.ids for e in tok.encode_batch(lines)] == spm.SentencePieceProcessor(
        model_proto=byte_fallback_model
    ).encode(lines)


def test_implementations_train_like_tokenizers():
    """The tokenizers-style constructors and trainers work (same pipeline as tokenizers')."""
    text = corpus_text(("gutenberg/en_novels/pg11_en_alice_in_wonderland.txt", 60_000))
    settings = dict(
        vocab_size=500, show_progress=False, unk_token="<unk>", special_tokens=["<unk>"]
    )
    ours = SentencePieceUnigramTokenizer()
    ours.train_from_iterator(text.splitlines(), **settings)
    theirs = tokenizers.implementations.SentencePieceUnigramTokenizer()
    theirs.train_from_iterator(text.splitlines(), **settings)
    assert ours.get_vocab_size() == theirs.get_vocab_size()
    assert ours.normalize("Ｈｅｌｌｏ  world") == theirs.normalize("Ｈｅｌｌｏ  world")
    bpe = SentencePieceBPETokenizer()
    bpe.train_from_iterator(text.splitlines(), vocab_size=400, show_progress=False)
    hf_bpe = tokenizers.implementations.SentencePieceBPETokenizer()
    hf_bpe.train_from_iterator(text.splitlines(), vocab_size=400, show_progress=False)
    sample = text.splitlines()[:200]
    assert [e.ids for e in bpe.encode_batch(sample)] == [e.ids for e in hf_bpe.encode_batch(sample)]
