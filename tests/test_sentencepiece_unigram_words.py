"""The Unigram word cache of tokenmill.sentencepiece (a word's best path is reused only when
the score the text reaches that word with cannot change any of the word's decisions) gives
sentencepiece's ids exactly: on a sample of every corpus of ../shared/corpora, as lines and as
long paragraphs (large path scores, so more words fall back to the exact Viterbi), cold and
warm, one and two threads (the threads share one table, filled without locks, and race to
fill it from cold); and on hand-built vocabularies whose pieces score within a few f32
ulps of the sum of their parts, where the prefix score decides the segmentation."""
from __future__ import annotations

import random
import struct

import pytest

from conftest import read_sample, shared_path
from test_sentencepiece import _field, _model

spm = pytest.importorskip("sentencepiece")
import tokenmill.sentencepiece as tsp  # noqa: E402

UNIGRAM_MODELS = ["sentencepiece_test/botchan_en_unigram_1000.model", "sentencepiece_test/kyoto_ja_unigram_8000.model"]


@pytest.fixture(scope="module")
def corpus_lines() -> list[str]:
    root = shared_path("corpora")
    lines: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix not in {".md", ".tsv"}:
            lines.extend(read_sample(path, 40_000).splitlines())
    assert len(lines) > 20_000
    return lines


@pytest.mark.parametrize("model", UNIGRAM_MODELS)
def test_cached_words_match_sentencepiece_on_every_corpus(model, corpus_lines):
    path = str(shared_path("pretrained", *model.split("/")))
    ref, ours = spm.SentencePieceProcessor(model_file=path), tsp.SentencePieceProcessor(model_file=path)
    paragraphs = [" ".join(corpus_lines[i:i + 150]) for i in range(0, len(corpus_lines), 150)]
    for texts in (corpus_lines, paragraphs):
        expected = ref.encode(texts)
        assert ours.encode(texts, num_threads=1) == expected  # cold cache (new processor)
        assert ours.encode(texts[::-1], num_threads=1) == expected[::-1]  # warm
        assert ours.encode(texts, num_threads=2) == expected
        racing = tsp.SentencePieceProcessor(model_file=path)
        assert racing.encode(texts, num_threads=2) == expected  # cold, both threads adding words
        assert racing.encode(texts[::-1], num_threads=2) == expected[::-1]
    assert ours.encode(corpus_lines[:3000], out_type=str) == ref.encode(corpus_lines[:3000], out_type=str)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _ulps(x: float, n: int) -> float:
    """`x` moved by `n` f32 ulps (x < 0)."""
    bits = struct.unpack("<i", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<i", bits + n))[0]


def _near_tie_model(rng: random.Random) -> bytes:
    scores = {u: _f32(-rng.uniform(1.0, 12.0)) for u in ("▁", "a", "b", "c")}
    for piece in ("ab", "bc", "ca", "abc", "▁a", "▁ab", "bca", "aa", "▁▁"):
        parts = _f32(scores.get(piece[:-1], -5.0) + scores[piece[-1]])
        scores[piece] = _ulps(parts, rng.randint(-3, 3))
    pieces = [("<unk>", 0.0, 2)] + [(p, s, 1) for p, s in scores.items()]
    return _model(pieces, trainer=_field(3, 1), normalizer=_field(1, "identity"))


def test_near_ties_decided_by_the_prefix_score_match_sentencepiece():
    rng = random.Random(11)
    for _ in range(25):
        data = _near_tie_model(rng)
        ref, ours = spm.SentencePieceProcessor(model_proto=data), tsp.SentencePieceProcessor(model_proto=data)
        texts = [" ".join("".join(rng.choice("abc") for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(1, 400)))
                 for _ in range(30)]
        texts += [t.replace(" ", "  ") for t in texts[:5]]
        expected = ref.encode(texts)
        assert ours.encode(texts, num_threads=1) == expected
        assert ours.encode(texts, num_threads=1) == expected  # every word cached now
