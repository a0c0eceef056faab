"""Subword regularization in tokenmill.sentencepiece against the real `sentencepiece` 0.2.3:
n-best encoding (pieces, ids, order, scores, surfaces and offsets byte for byte), sampling from
the n best and from the whole lattice, sample_encode_and_score, calculate_entropy and seeding,
on the Unigram test models of ../shared/pretrained and corpus samples.

sentencepiece 0.2.3's Python package has no `sample_encode_and_score` / `calculate_entropy`, so
those are checked against exact values computed from sentencepiece's own n-best lists (the
complete list of segmentations of short words, with their scores)."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from conftest import protobuf_fields, read_sample, shared_path

spm = pytest.importorskip("sentencepiece")
import tokenmill  # noqa: E402
import tokenmill.sentencepiece as tsp  # noqa: E402

UNIGRAM_MODELS = {
    "botchan_unigram": "sentencepiece_test/botchan_en_unigram_1000.model",
    "kyoto_unigram": "sentencepiece_test/kyoto_ja_unigram_8000.model",
}
ODD = [
    "",
    " ",
    "▁",
    "x日本y",
    "Ｈｅｌｌｏ　ｗｏｒｌｄ",
    "ﬁ ½ ①",
    "emoji 😀🎉",
    "a" + "\u0301" * 5,
    "  many   spaces  ",
    "<unk> <s>",
    "東京都に住んでいます",
    "Привет, мир!",
]


def pair(name: str):
    path = str(shared_path("pretrained", UNIGRAM_MODELS[name]))
    return spm.SentencePieceProcessor(model_file=path), tsp.SentencePieceProcessor(model_file=path)


def sample_texts(limit_words: int = 150, limit_lines: int = 40) -> list[str]:
    """Words and short lines from an English novel and the Japanese UD treebank."""
    en = read_sample(
        shared_path("corpora", "gutenberg", "en_novels", "pg11_en_alice_in_wonderland.txt"), 30_000
    )
    ja = read_sample(
        shared_path("corpora", "ud", "UD_Japanese-GSD", "ja_gsd-ud-test.conllu"), 30_000
    )
    ja_lines = [
        line[len("# text = ") :] for line in ja.splitlines() if line.startswith("# text = ")
    ]
    words = list(dict.fromkeys(w for w in en.split()))[:limit_words]
    lines = [line for line in en.splitlines() if 0 < len(line) < 80][:limit_lines] + ja_lines[
        :limit_lines
    ]
    return words + lines + ODD


def nbest_with_scores(sp, text: str, n: int) -> list[tuple[tuple[str, ...], float]]:
    """(pieces, score) of each n-best result, from the serialized NBestSentencePieceText."""
    out = []
    serialized = sp.nbest_encode(text, nbest_size=n, out_type="serialized_proto")
    for tag, spt in protobuf_fields(serialized):
        assert tag == 1
        pieces, score = [], 0.0
        for t, v in protobuf_fields(spt):
            if t == 2:
                pieces.append(dict(protobuf_fields(v))[1].decode())
            elif t == 3:
                score = v
        out.append((tuple(pieces), score))
    return out


def all_segmentations(ref, text: str) -> dict[tuple[str, ...], float]:
    """Every segmentation of `text` with its score: sentencepiece's n-best list when it is
    complete (fewer results than asked for)."""
    results = nbest_with_scores(ref, text, 512)
    assert 1 < len(results) < 512, (
        f"{text!r}: {len(results)} segmentations, not a complete short list"
    )
    return dict(results)


def distribution(segmentations: dict, alpha: float) -> dict:
    log_z = math.log(sum(math.exp(alpha * s) for s in segmentations.values()))
    return {seg: math.exp(alpha * s - log_z) for seg, s in segmentations.items()}


SHORT_WORDS = ["hello", "world", "Alice", "rabbit", "curious", "東京都", "住んで"]


# ----------------------------------------------------------------------------- n-best
@pytest.mark.parametrize("name", sorted(UNIGRAM_MODELS))
def test_nbest_encode_matches_exactly(name):
    ref, ours = pair(name)
    texts = sample_texts()
    for n in (1, 2, 5, 17):
        for text in texts:
            want = ref.nbest_encode(text, nbest_size=n, out_type=str)
            assert ours.nbest_encode(text, nbest_size=n, out_type=str) == want, (n, text)
            assert ours.nbest_encode(text, nbest_size=n) == ref.nbest_encode(text, nbest_size=n), (
                n,
                text,
            )
    # scores, surfaces and offsets: the serialized NBestSentencePieceText, byte for byte
    for text in texts[:120]:
        assert ours.nbest_encode(
            text, nbest_size=8, out_type="serialized_proto"
        ) == ref.nbest_encode(text, nbest_size=8, out_type="serialized_proto"), text
    # list input, nbest_size <= 0 (one result), and the constructor defaults, as sentencepiece
    assert ours.nbest_encode(texts[:20], nbest_size=3) == ref.nbest_encode(texts[:20], nbest_size=3)
    assert ours.nbest_encode("hello world", nbest_size=0) == ref.nbest_encode(
        "hello world", nbest_size=0
    )
    assert ours.nbest_encode_as_pieces("hello world", 4) == ref.nbest_encode_as_pieces(
        "hello world", 4
    )


def test_nbest_options_and_bpe_models():
    ref, ours = pair("botchan_unigram")
    kwargs = dict(nbest_size=4, add_bos=True, add_eos=True, reverse=True)
    assert ours.nbest_encode("hello world", **kwargs) == ref.nbest_encode("hello world", **kwargs)
    assert ours.nbest_encode(
        "hello world", out_type=str, emit_unk_piece=True, **kwargs
    ) == ref.nbest_encode("hello world", out_type=str, emit_unk_piece=True, **kwargs)
    with pytest.raises(RuntimeError, match="512"):
        ref.nbest_encode("hello", nbest_size=513)
    with pytest.raises(tokenmill.InvalidArgumentError, match="512"):
        ours.nbest_encode("hello", nbest_size=513)
    bpe = shared_path("pretrained", "sentencepiece_test", "botchan_en_bpe_1000.model")
    with pytest.raises(Exception):  # noqa: B017 (the peer raises a plain Exception)
        spm.SentencePieceProcessor(model_file=str(bpe)).nbest_encode("hello", nbest_size=3)
    with pytest.raises(tokenmill.InvalidArgumentError, match="NBestEncode is not available"):
        tsp.SentencePieceProcessor(model_file=str(bpe)).nbest_encode("hello", nbest_size=3)


# ----------------------------------------------------------------------------- entropy and scores
@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.0])
def test_calculate_entropy_equals_the_exact_entropy(alpha):
    ref, ours = pair("botchan_unigram")
    for word in SHORT_WORDS[:5]:
        p = distribution(all_segmentations(ref, word), alpha)
        exact = -sum(q * math.log(q) for q in p.values() if q > 0)
        assert ours.calculate_entropy(word, alpha) == pytest.approx(exact, rel=2e-6, abs=2e-6), word
    ref, ours = pair("kyoto_unigram")
    for word in SHORT_WORDS[5:]:
        p = distribution(all_segmentations(ref, word), alpha)
        exact = -sum(q * math.log(q) for q in p.values() if q > 0)
        assert ours.calculate_entropy(word, alpha) == pytest.approx(exact, rel=2e-6, abs=2e-6), word
    # batch form, and a text with a single segmentation has entropy 0
    assert ours.calculate_entropy(SHORT_WORDS, alpha) == [
        ours.calculate_entropy(w, alpha) for w in SHORT_WORDS
    ]
    assert ours.calculate_entropy("", alpha) == 0.0


def test_sample_encode_and_score_with_replacement_scores_are_log_probabilities():
    ref, ours = pair("botchan_unigram")
    alpha = 0.3
    for word in SHORT_WORDS[:5]:
        p = distribution(all_segmentations(ref, word), alpha)
        samples = ours.sample_encode_and_score(word, num_samples=40, alpha=alpha, out_type=str)
        assert len(samples) == 40
        for pieces, score in samples:
            assert tuple(pieces) in p
            assert score == pytest.approx(math.log(p[tuple(pieces)]), abs=2e-4)
        ids = ours.sample_encode_and_score(word, num_samples=5, alpha=alpha, out_type=int)
        assert all(ref.decode(i) == ref.decode(ref.encode(word)) for i, _ in ids)


def test_sample_encode_and_score_without_replacement():
    ref, ours = pair("botchan_unigram")
    alpha = 0.5
    for word in SHORT_WORDS[:5]:
        segs = all_segmentations(ref, word)
        k = min(6, len(segs) - 2)
        samples = ours.sample_encode_and_score(
            word, num_samples=k, alpha=alpha, wor=True, out_type=str
        )
        pieces = [tuple(p) for p, _ in samples]
        assert len(pieces) == k and len(set(pieces)) == k and set(pieces) <= set(segs)
        assert all(score <= 0.0 for _, score in samples)  # log inclusion probabilities
        best = ours.sample_encode_and_score(
            word, num_samples=k, alpha=alpha, wor=True, include_best=True, out_type=str
        )
        assert best[0] == (ref.encode(word, out_type=str), 0.0)
        assert len({tuple(p) for p, _ in best}) == len(best) == k
    with pytest.raises(ValueError):
        ours.sample_encode_and_score("hello", num_samples=2, include_best=True)
    with pytest.raises(ValueError):
        ours.sample_encode_and_score("hello", num_samples=0)


# ----------------------------------------------------------------------------- distributions
def total_variation(counts: Counter, p: dict) -> float:
    n = sum(counts.values())
    keys = set(counts) | set(p)
    return 0.5 * sum(abs(counts.get(k, 0) / n - p.get(k, 0.0)) for k in keys)


@pytest.mark.parametrize("alpha", [0.2, 1.0])
def test_lattice_sampling_follows_the_model_distribution(alpha):
    ref, ours = pair("botchan_unigram")
    word, n = "rabbit", 6000
    p = distribution(all_segmentations(ref, word), alpha)
    ours.set_random_generator_seed(1234)
    draws = ours.encode([word] * n, out_type=str, enable_sampling=True, alpha=alpha, nbest_size=-1)
    counts = Counter(tuple(d) for d in draws)
    # With 6000 draws the expected total variation distance is about 0.02; a wrong
    # temperature or normalization gives far more (see the nbest case below).
    assert total_variation(counts, p) < 0.04
    chi2 = sum((counts.get(k, 0) - n * q) ** 2 / (n * q) for k, q in p.items() if n * q >= 5)
    dof = sum(1 for q in p.values() if n * q >= 5) - 1
    assert chi2 < dof + 5 * math.sqrt(2 * dof)  # ~5 sigma above the chi-square mean
    # sentencepiece's own sampler is as close to the same distribution
    spm.set_random_generator_seed(1234)
    theirs = Counter(
        tuple(d)
        for d in ref.encode(
            [word] * n, out_type=str, enable_sampling=True, alpha=alpha, nbest_size=-1
        )
    )
    assert total_variation(theirs, p) < 0.04


def test_nbest_sampling_follows_the_restricted_distribution():
    ref, ours = pair("botchan_unigram")
    word, alpha, k, n = "curious", 0.5, 4, 6000
    nbest = dict(nbest_with_scores(ref, word, k))
    p = distribution(nbest, alpha)
    ours.set_random_generator_seed(99)
    counts = Counter(
        tuple(d)
        for d in ours.encode(
            [word] * n, out_type=str, enable_sampling=True, alpha=alpha, nbest_size=k
        )
    )
    assert set(counts) <= set(nbest)
    assert total_variation(counts, p) < 0.03
    # the whole-lattice distribution is a different one
    full = distribution(all_segmentations(ref, word), alpha)
    assert total_variation(counts, full) > 0.05


def test_sampling_keeps_encode_rules():
    """Sampled segmentations go through the same normalization, unknown fusion and surfaces as
    encode: they always spell the normalized text, and agree with encode at alpha -> infinity."""
    ref, ours = pair("kyoto_unigram")
    for text in sample_texts(limit_words=30, limit_lines=10):
        plain = ref.encode(text, out_type=str)
        for nbest_size in (-1, 3):
            sampled = ours.encode(
                text, out_type=str, enable_sampling=True, alpha=0.5, nbest_size=nbest_size
            )
            assert "".join(sampled) == "".join(plain), text
        assert ours.encode(text, enable_sampling=True, alpha=1000.0, nbest_size=-1) == ref.encode(
            text
        ), text
        full = ours.encode(text, out_type="proto", enable_sampling=True, alpha=0.5, nbest_size=-1)
        assert (
            "".join(p.surface for p in full.pieces) == text.strip()
            or not full.pieces
            or ref.decode(ref.encode(text)) == ours.decode([p.id for p in full.pieces])
        )


def test_seeded_sampling_is_reproducible():
    _, ours = pair("botchan_unigram")
    text = ["the quick brown fox jumps over the lazy dog"] * 20
    args = dict(enable_sampling=True, alpha=0.1, nbest_size=-1)
    tsp.set_random_generator_seed(7)
    first = ours.encode(text, **args)
    tsp.set_random_generator_seed(7)
    assert ours.encode(text, **args) == first
    assert len({tuple(x) for x in first}) > 1
    tsp.set_random_generator_seed(7)
    one_thread = ours.encode(text, num_threads=1, **args)
    assert one_thread == first  # the same samples whatever the thread count
    # a processor's own seed wins over the global one and is independent of other calls
    other = tsp.SentencePieceProcessor(model_proto=ours.serialized_model_proto())
    ours.set_random_generator_seed(5)
    a = ours.encode(text, **args)
    other.encode(text, **args)
    tsp.set_random_generator_seed(123)
    ours.set_random_generator_seed(5)
    assert ours.encode(text, **args) == a
    ours.set_random_generator_seed(5)
    s1 = ours.sample_encode_and_score("hello world", num_samples=5, alpha=0.5, wor=True)
    ours.set_random_generator_seed(5)
    assert ours.sample_encode_and_score("hello world", num_samples=5, alpha=0.5, wor=True) == s1
    ours.set_random_generator_seed(5)
    n1 = ours.encode(text, nbest_size=5, alpha=0.5, enable_sampling=True)
    ours.set_random_generator_seed(5)
    assert ours.encode(text, nbest_size=5, alpha=0.5, enable_sampling=True) == n1


def test_bpe_dropout_rate_follows_alpha():
    """BPE models: enable_sampling is BPE-dropout with alpha the probability of skipping a merge
    (nbest_size is ignored), as sentencepiece; more dropout gives more pieces."""
    bpe = str(shared_path("pretrained", "sentencepiece_test", "botchan_en_bpe_1000.model"))
    ref, ours = (
        spm.SentencePieceProcessor(model_file=bpe),
        tsp.SentencePieceProcessor(model_file=bpe),
    )
    text = "the quick brown fox jumps over the lazy dog " * 4
    ours.set_random_generator_seed(3)
    spm.set_random_generator_seed(3)
    mean_len = {}
    for alpha in (0.0, 0.1, 0.3, 1.0):
        ours_runs = ours.encode([text] * 300, enable_sampling=True, alpha=alpha, nbest_size=-1)
        ref_runs = ref.encode([text] * 300, enable_sampling=True, alpha=alpha, nbest_size=-1)
        mean_len[alpha] = sum(map(len, ours_runs)) / 300
        ref_mean = sum(map(len, ref_runs)) / 300
        assert mean_len[alpha] == pytest.approx(ref_mean, rel=0.03), alpha
    assert mean_len[0.0] < mean_len[0.1] < mean_len[0.3] < mean_len[1.0]
