"""Unigram on long inputs in one call: tokenmill.sentencepiece gives sentencepiece 0.2.3's ids
(its float path sums are rebased to 0 wherever the best score passes ±1e5, mid-word or not:
summed along the whole text, the segmentation drifts from sentencepiece's after some 10^5
characters), the
``tokenizers``-compatible ``models.Unigram`` gives ``tokenizers``' ids, and ``calculate_entropy``
stays finite and exact however long the text (it grew to 1e36 and ``inf`` past ~100 kB).

Inputs: an 18,000-letter word (random letters, seeded, and the letters of a novel run together),
a 100,000-letter random word (alone and between words), and 104 kB / 300 kB of English in one
call, with the pretrained Unigram ``.model`` files of ``../shared/pretrained`` and text from
``../shared/corpora``."""

import math
import random
from pathlib import Path

import pytest
from tokenmill import sentencepiece as tm

spm = pytest.importorskip("sentencepiece")

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
MODELS = {
    "botchan": SHARED / "pretrained/sentencepiece_test/botchan_en_unigram_1000.model",
    "kyoto": SHARED / "pretrained/sentencepiece_test/kyoto_ja_unigram_8000.model",
}
NOVEL = SHARED / "corpora/gutenberg/en_novels/pg1342_en_pride_and_prejudice.txt"

if not all(path.is_file() for path in [*MODELS.values(), NOVEL]):
    pytest.skip(f"{SHARED} (pretrained models and corpora) is absent", allow_module_level=True)


@pytest.fixture(scope="module")
def texts() -> dict:
    novel = NOVEL.read_text(encoding="utf-8")
    rng = random.Random(18)
    return {
        "random word": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(18_000)),
        "novel word": "".join(c for c in novel.lower() if c.isalpha())[:18_000],
        "104 kB": novel[:104_000],
        "300 kB": novel[:300_000],
    }


def _pair(name):
    path = str(MODELS[name])
    return spm.SentencePieceProcessor(model_file=path), tm.SentencePieceProcessor(model_file=path)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_long_inputs_encode_as_sentencepiece(name, texts):
    ref, ours = _pair(name)
    for label, text in texts.items():
        assert ours.encode(text) == ref.encode(text), label
        # the same through the path with surfaces and offsets
        assert ours.encode(text, out_type=str) == ref.encode(text, out_type=str), label


@pytest.mark.parametrize("name", sorted(MODELS))
def test_scores_rebase_mid_word_as_sentencepiece(name):
    """sentencepiece rebases its float path scores to 0 at the first character whose best score
    is beyond ±1e5, inside a word too: a 100,000-letter word crosses that several times (and
    its ids differed from token 27,276 on when the sums were only restarted at word starts), as
    does the same word between ordinary words (the word-cache path, and the chunked spans
    path of ``out_type=str``)."""
    ref, ours = _pair(name)
    rng = random.Random(18)
    word = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=100_000))
    inputs = {"word": word, "words": f"The {word} end. {word[:50_000]} and so on"}
    for label, text in inputs.items():
        assert ours.encode(text) == ref.encode(text), label
        assert ours.encode(text, out_type=str) == ref.encode(text, out_type=str), label


@pytest.mark.parametrize("name", sorted(MODELS))
def test_long_inputs_nbest_as_sentencepiece(name, texts):
    ref, ours = _pair(name)
    for label in ("random word", "novel word"):
        text = texts[label][:6_000]
        assert ours.nbest_encode(text, nbest_size=2) == ref.nbest_encode(text, nbest_size=2), label


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_entropy_of_long_inputs_is_finite_and_adds_up_over_words(alpha, texts):
    """No botchan piece crosses the start of a ▁word, so every segmentation passes through every
    word start and the words segment independently: the entropy of a text is the sum of its
    words' entropies, each computed on a short input."""
    _, ours = _pair("botchan")
    words = texts["300 kB"].split()
    for size in (10_000, 104_000, 300_000):
        text, total = [], 0
        for word in words:
            if total >= size:
                break
            text.append(word)
            total += len(word) + 1
        whole = ours.calculate_entropy(" ".join(text), alpha)
        parts = math.fsum(ours.calculate_entropy(text, alpha))
        assert math.isfinite(whole) and whole > 0, size
        assert whole == pytest.approx(parts, rel=1e-5), size


def test_tokenizers_unigram_matches_tokenizers_on_long_inputs(texts):
    tokenizers = pytest.importorskip("tokenizers")
    import tokenmill

    ref, _ = _pair("botchan")
    vocab = [(ref.id_to_piece(i), ref.get_score(i)) for i in range(ref.get_piece_size())]
    theirs = tokenizers.Tokenizer(tokenizers.models.Unigram(vocab, 0, False))
    ours = tokenmill.Tokenizer(tokenmill.models.Unigram(vocab, 0, False))
    for label, text in texts.items():
        text = text.replace(" ", "▁")
        assert ours.encode(text).ids == theirs.encode(text).ids, label
