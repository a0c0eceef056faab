"""Conversion between SentencePiece `.model` files and tokenizer.json, for BPE models (Mistral's)
and Unigram models (Precompiled charsmap + dummy prefix + Unigram with byte fallback): the
converted tokenizer encodes like `sentencepiece` in tokenmill and in `tokenizers` (loading the
saved tokenizer.json), the tokenizer.json converted back to a `.model` loads in `sentencepiece`
and encodes identically, and `SentencePieceUnigramTokenizer.from_spm` /
`SentencePieceBPETokenizer.from_spm` agree."""

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

# Odd inputs for every model; the BPE models also get byte fallback and a literal control piece.
# No literal "<s>" / "<0x41>" for Unigram: tokenizer.json cannot keep control and byte pieces out
# of the Unigram lattice (see to_tokenizer's docstring).
COMMON_CASES = ["Hello world", "  two  spaces ", "\ttab\nnewline", "x" * 300, ""]
BPE_CASES = COMMON_CASES + ["byte fallback: 漢字 😀 ﬁ", "<s> not special"]
UNIGRAM_CASES = COMMON_CASES + ["unknown: 漢字 😀 ﬁ ½", "Ｈｅｌｌｏ"]


def sample_lines(max_bytes: int, cases: list[str]) -> list[str]:
    """The non-empty lines of the first `max_bytes` of each MIXED_LANGUAGES sample, then `cases`."""
    lines = [
        line for rel in MIXED_LANGUAGES for line in non_empty_lines(corpus_text((rel, max_bytes)))
    ]
    return lines + cases


@pytest.mark.parametrize(
    "name", ["mistral/tokenizer.model.v1", "mistral/mistral_instruct_tokenizer_240323.model.v3"]
)
def test_bpe_model_to_tokenizer_json_and_back(name, tmp_path):
    path = str(shared_path("pretrained", *name.split("/")))
    ref = spm.SentencePieceProcessor(model_file=path)
    lines = sample_lines(30_000, BPE_CASES)
    assert_spm_round_trip(path, ref, lines, tmp_path)


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
    lines = sample_lines(20_000, UNIGRAM_CASES)
    again = assert_spm_round_trip(data, ref, lines, tmp_path)
    assert again.get_piece_size() == ref.get_piece_size()
    assert [
        again.is_control(i) or again.is_unknown(i) or again.is_byte(i)
        for i in range(ref.get_piece_size())
    ] == [
        ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i)
        for i in range(ref.get_piece_size())
    ]


def test_unigram_tokenizer_strips_spaces_at_the_ends_only():
    # sentencepiece strips spaces at the ends of the text, not after every newline (a `^ +`
    # in the normalizer, a line anchor in tokenizers' Oniguruma, did).
    path = shared_path("pretrained", "sentencepiece_test", "botchan_en_unigram_1000.model")
    ref = spm.SentencePieceProcessor(model_file=str(path))
    tok = tsp.to_tokenizer(str(path))
    texts = ["a\n b", "a \n b \n", "\n\n  x  \n  y  ", " lead\n trail ", "#\n\xa0îï7è"]
    assert [e.ids for e in tok.encode_batch(texts)] == ref.encode(texts)


def test_from_spm_implementations(tmp_path, byte_fallback_model):
    lines = sample_lines(20_000, UNIGRAM_CASES)[:400]
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
