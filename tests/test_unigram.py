"""Unigram model: differential tests against `tokenizers` (best path, whole pipelines from
tokenizer.json) and `sentencepiece` (n-best), on every corpus and on adversarial strings; exact
enumeration for n-best; a chi-square test of sampling; reproducibility with a seed."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import pytest
import sentencepiece as spm
import tokenizers
import tokenmill
from conftest import read_sample, shared_path
from tokenizers import (
    decoders as tk_decoders,
    models as tk_models,
    normalizers as tk_normalizers,
    pre_tokenizers as tk_pre,
)
from tokenmill.models import Unigram

SPM_MODELS = ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model"]

ADVERSARIAL = [
    "",
    "▁",
    "▁▁▁▁",
    "a" * 5000,
    "▁the" * 2000,
    "\u0000▁x\u0000",
    "▁日本語のテキスト▁と▁English▁mixed",
    "▁🙂🙃👍🏽▁emoji",
    "▁e\u0301\u0301\u0301",  # combining marks
    "▁\ufffd\ufffe\U0010ffff",
    "▁" + "".join(chr(c) for c in range(0x2000, 0x2100)),
    "▁<unk>▁<s>▁</s>",
    "▁" + "ab" * 3000 + "ÿ" * 100,
]


def spm_model(name: str) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(
        model_file=str(shared_path("pretrained", "sentencepiece_test", name))
    )


def spm_vocab(sp: spm.SentencePieceProcessor) -> list[tuple[str, float]]:
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


def corpus_files() -> list:
    root = shared_path("corpora")
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in {".txt", ".conllu", ".utf8"}
    )
    assert files, "no corpus files found"
    return files


def token_triples(tokens) -> list[tuple[int, str, tuple[int, int]]]:
    return [(t.id, t.value, tuple(t.offsets)) for t in tokens]


@pytest.fixture(scope="module", params=SPM_MODELS)
def models(request):
    sp = spm_model(request.param)
    vocab = spm_vocab(sp)
    return sp, tk_models.Unigram(vocab, sp.unk_id(), False), Unigram(vocab, sp.unk_id(), False)


def test_words_and_lines_match_tokenizers(models):
    _, reference, ours = models
    sample = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 150_000
    )
    sample += read_sample(
        shared_path("corpora", "ud", "UD_Japanese-GSD", "ja_gsd-ud-test.conllu"), 100_000
    )
    words = ["▁" + w for w in sample.split()]
    for w in words:
        assert token_triples(ours.tokenize(w)) == token_triples(reference.tokenize(w)), w
    for line in sample.splitlines()[:300]:
        text = "▁" + line.replace(" ", "▁")
        assert token_triples(ours.tokenize(text)) == token_triples(reference.tokenize(text)), text


def test_adversarial_strings_match_tokenizers(models):
    _, reference, ours = models
    for text in ADVERSARIAL:
        assert token_triples(ours.tokenize(text)) == token_triples(reference.tokenize(text)), text[
            :50
        ]


def test_byte_fallback_matches_tokenizers():
    sp = spm_model("botchan_en_unigram_1000.model")
    vocab = spm_vocab(sp) + [(f"<0x{b:02X}>", -20.0) for b in range(256)]
    reference = tk_models.Unigram(vocab, sp.unk_id(), True)
    ours = Unigram(vocab, sp.unk_id(), True)
    for text in ADVERSARIAL + ["▁日本▁çà▁ÿ", "▁x€y"]:
        assert token_triples(ours.tokenize(text)) == token_triples(reference.tokenize(text)), text[
            :50
        ]


def pipeline_json(vocab, unk_id) -> str:
    tok = tokenizers.Tokenizer(tk_models.Unigram(vocab, unk_id, False))
    tok.normalizer = tk_normalizers.NFKC()
    tok.pre_tokenizer = tk_pre.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = tk_decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tok.to_str()


@pytest.mark.parametrize("name", SPM_MODELS)
def test_every_corpus_through_tokenizer_json(name):
    sp = spm_model(name)
    spec = pipeline_json(spm_vocab(sp), sp.unk_id())
    reference = tokenizers.Tokenizer.from_str(spec)
    ours = tokenmill.Tokenizer.from_str(spec)
    # Both parse floats the same way (serde_json without float_roundtrip): the same model.
    assert json.loads(ours.to_str())["model"] == json.loads(reference.to_str())["model"]
    for path in corpus_files():
        lines = [line for line in read_sample(path, 25_000).splitlines() if line.strip()]
        want = reference.encode_batch(lines)
        got = ours.encode_batch(lines)
        for line, w, g in zip(lines, want, got):
            assert g.ids == w.ids, (path.name, line)
            assert g.offsets == w.offsets, (path.name, line)


def test_serialization_and_pickle(tmp_path):
    vocab = [("<unk>", 0.0), ("▁a", -1.5), ("b", -2.25), ("▁ab", -3.0)]
    ours = Unigram(vocab, 0, True)
    reference = tk_models.Unigram(vocab, 0, True)
    want = tokenizers.Tokenizer(reference).to_str()
    assert json.loads(tokenmill.Tokenizer(ours).to_str())["model"] == json.loads(want)["model"]
    back = pickle.loads(pickle.dumps(ours))
    assert isinstance(back, Unigram) and back.get_pieces() == vocab and back.byte_fallback
    [path] = ours.save(str(tmp_path))
    assert json.loads(Path(path).read_text())["vocab"] == [list(v) for v in vocab]
    assert ours.get_trainer().__class__.__name__ == "UnigramTrainer"


def test_bad_input_raises_clear_errors():
    with pytest.raises(Exception, match="unk_id"):
        Unigram([("a", 0.0)], 5)
    with pytest.raises(ValueError):
        Unigram(None, 0)
    no_unk = Unigram([("a", 0.0)], None)
    with pytest.raises(Exception) as excinfo:  # tokenizers' message, which its tests compare
        no_unk.tokenize("ab")
    assert str(excinfo.value) == "Encountered an unknown token but `unk_id` is missing"
    with pytest.raises(tokenmill.FormatError):
        tokenmill.Tokenizer.from_str(
            json.dumps({"model": {"type": "Unigram", "unk_id": 3, "vocab": [["a", 0.0]]}})
        )


def all_segmentations(vocab: dict[str, float], text: str):
    """Every segmentation of `text` into pieces of `vocab`, with its score (brute force)."""
    if not text:
        yield [], 0.0
        return
    for end in range(1, len(text) + 1):
        piece = text[:end]
        if piece in vocab:
            for rest, score in all_segmentations(vocab, text[end:]):
                yield [piece] + rest, vocab[piece] + score


def test_nbest_is_the_exact_ranking():
    sp = spm_model("botchan_en_unigram_1000.model")
    vocab = spm_vocab(sp)
    ours = Unigram(vocab, sp.unk_id(), False)
    scores = {p: s for p, s in vocab if s != 0.0}
    for text in ["▁the", "▁there", "▁another", "▁fellow", "▁something"]:
        exact = sorted(all_segmentations(scores, text), key=lambda x: -x[1])
        got = ours.nbest(text, 20)
        assert len(got) == min(20, len(exact))
        for (tokens, score), (_, want) in zip(got, exact):
            assert score == pytest.approx(want, abs=1e-9)
            assert sum(scores[t.value] for t in tokens) == pytest.approx(score, abs=1e-9)
            assert "".join(t.value for t in tokens) == text


def spm_piece_type(sp: spm.SentencePieceProcessor, i: int) -> int:
    """The piece's type as in sentencepiece's model proto (NORMAL=1 ... BYTE=6)."""
    if sp.is_unknown(i):
        return 2
    if sp.is_control(i):
        return 3
    if sp.is_unused(i):
        return 5
    if sp.is_byte(i):
        return 6
    return 1


@pytest.mark.parametrize("name", SPM_MODELS)
def test_nbest_matches_sentencepiece(name):
    """With sentencepiece's rules (f32 scores, piece types), n-best lists are identical, ties
    between equal-score segmentations included."""
    sp = spm_model(name)
    pieces = [
        (sp.id_to_piece(i), sp.get_score(i), spm_piece_type(sp, i))
        for i in range(sp.get_piece_size())
    ]
    ours = Unigram._from_sentencepiece(pieces, sp.unk_id(), False)
    sample = read_sample(
        shared_path("corpora", "gutenberg", "en_novels", "pg11_en_alice_in_wonderland.txt"), 20_000
    )
    sample += read_sample(
        shared_path("corpora", "ud", "UD_Japanese-GSD", "ja_gsd-ud-test.conllu"), 20_000
    )
    words = list(dict.fromkeys(w for w in sample.split() if "\t" not in w))[:400]
    compared = 0
    for word in words:
        # sentencepiece normalizes (NFKC) and adds the dummy prefix; compare on what it normalized.
        normalized = "".join(sp.encode(word, out_type=str))
        if sp.unk_id() in sp.encode(word):
            continue
        want = sp.nbest_encode(word, nbest_size=5)
        got = [[t.id for t in tokens] for tokens, _ in ours.nbest(normalized, 5)]
        assert got == want, word
        compared += 1
    assert compared > 300


def segmentation_distribution(
    vocab: dict[str, float], text: str, alpha: float
) -> dict[tuple, float]:
    segs = list(all_segmentations(vocab, text))
    weights = [math.exp(alpha * s) for _, s in segs]
    total = sum(weights)
    return {tuple(seg): w / total for (seg, _), w in zip(segs, weights)}


def chi_square_ok(observed: dict, expected: dict, n: int) -> bool:
    """Chi-square goodness of fit at the 0.1% level (Wilson–Hilferty approximation)."""
    assert set(observed) <= set(expected)
    stat = sum((observed.get(k, 0) - n * p) ** 2 / (n * p) for k, p in expected.items())
    dof = len(expected) - 1
    z = 3.09  # one-sided 0.999 quantile
    critical = dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3
    return stat < critical


# A toy vocabulary for the sampling tests (the n-best test uses its first seven pieces).
SAMPLING_VOCAB = [
    ("<unk>", 0.0),
    ("▁", -2.0),
    ("a", -1.2),
    ("b", -1.7),
    ("▁a", -2.5),
    ("ab", -2.2),
    ("ba", -3.0),
    ("▁ab", -3.1),
    ("aba", -4.0),
]


@pytest.mark.parametrize("alpha", [0.3, 1.0])
def test_lattice_sampling_matches_the_exact_distribution(alpha):
    vocab = SAMPLING_VOCAB
    model = Unigram(vocab, 0, False)
    scores = {p: s for p, s in vocab[1:]}
    text = "▁abab"
    expected = segmentation_distribution(scores, text, alpha)
    n = 20000
    rng_seed = 1234
    model.set_seed(rng_seed)
    counts: dict[tuple, int] = {}
    for _ in range(n):
        seg = tuple(t.value for t in model.sample(text, alpha, -1))
        counts[seg] = counts.get(seg, 0) + 1
    assert chi_square_ok(counts, expected, n)


def test_nbest_sampling_matches_the_restricted_distribution():
    vocab = SAMPLING_VOCAB[:7]
    model = Unigram(vocab, 0, False)
    scores = {p: s for p, s in vocab[1:]}
    text = "▁abab"
    ranked = sorted(all_segmentations(scores, text), key=lambda x: -x[1])[:3]
    weights = [math.exp(0.5 * s) for _, s in ranked]
    expected = {tuple(seg): w / sum(weights) for (seg, _), w in zip(ranked, weights)}
    model.set_seed(99)
    n = 10000
    counts: dict[tuple, int] = {}
    for _ in range(n):
        seg = tuple(t.value for t in model.sample(text, 0.5, 3))
        counts[seg] = counts.get(seg, 0) + 1
    assert chi_square_ok(counts, expected, n)


def test_sampling_is_reproducible_with_a_seed():
    sp = spm_model("botchan_en_unigram_1000.model")
    model = Unigram(spm_vocab(sp), sp.unk_id(), False)
    text = "▁I▁have▁been▁thinking▁about▁it▁for▁a▁long▁time"

    def draw(seed):
        return [[t.id for t in model.sample(text, 0.2, -1, seed=seed + i)] for i in range(30)]

    assert draw(5) == draw(5)
    assert len({tuple(s) for s in draw(5)}) > 1
    model.set_seed(11)
    first = [[t.id for t in model.sample(text, 0.2, 4)] for _ in range(20)]
    model.set_seed(11)
    assert first == [[t.id for t in model.sample(text, 0.2, 4)] for _ in range(20)]
    # alpha / nbest_size on the model make tokenize sample, as in tokenizers.
    model.alpha, model.nbest_size = 0.2, None
    model.set_seed(3)
    a = [[t.id for t in model.tokenize(text)] for _ in range(10)]
    model.set_seed(3)
    assert a == [[t.id for t in model.tokenize(text)] for _ in range(10)]
    # A tokenizer holding the model is re-seeded with it.
    tok = tokenmill.Tokenizer(model)
    model.set_seed(3)
    b = [tok.encode(text).ids for _ in range(10)]
    model.set_seed(3)
    assert b == [tok.encode(text).ids for _ in range(10)]
    assert len({tuple(ids) for ids in b}) > 1
    model.alpha = None
    best = [t.id for t in model.tokenize(text)]
    assert all(best == [t.id for t in model.tokenize(text)] for _ in range(3))


def test_entropy_and_likelihood_match_enumeration():
    vocab = [("<unk>", 0.0), ("▁", -2.0), ("a", -1.2), ("b", -1.7), ("▁a", -2.5), ("ab", -2.2)]
    model = Unigram(vocab, 0, False)
    scores = {p: s for p, s in vocab[1:]}
    segs = list(all_segmentations(scores, "▁abab"))
    assert model.log_likelihood("▁abab") == pytest.approx(
        math.log(sum(math.exp(s) for _, s in segs))
    )
    dist = segmentation_distribution(scores, "▁abab", 0.7)
    assert model.entropy("▁abab", 0.7) == pytest.approx(
        -sum(p * math.log(p) for p in dist.values()), rel=1e-5
    )
