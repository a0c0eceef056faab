"""tokenmill.collocations with words that are not ``str`` (tagged ``(word, tag)`` tuples from the
Brown corpus, ints, mixed and partially ordered words), ``ContingencyMeasures`` and the measures
on marginals of other shapes and number types, against NLTK 3.10."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from conftest import COMMON_MEASURES, shared_path

nltk = pytest.importorskip("nltk", reason="the differential tests need nltk")
nltk_collocations = pytest.importorskip("nltk.collocations")
from nltk.metrics import association as nltk_assoc  # noqa: E402 (after importorskip)
from tokenmill import collocations as tm  # noqa: E402 (after importorskip)

FINDERS = {
    2: (tm.BigramCollocationFinder, nltk_collocations.BigramCollocationFinder),
    3: (tm.TrigramCollocationFinder, nltk_collocations.TrigramCollocationFinder),
    4: (tm.QuadgramCollocationFinder, nltk_collocations.QuadgramCollocationFinder),
}
MEASURES = {
    2: (tm.BigramAssocMeasures, nltk_assoc.BigramAssocMeasures),
    3: (tm.TrigramAssocMeasures, nltk_assoc.TrigramAssocMeasures),
    4: (tm.QuadgramAssocMeasures, nltk_assoc.QuadgramAssocMeasures),
}
COMMON = COMMON_MEASURES


@pytest.fixture(scope="module")
def tagged():
    """Tagged words of a few Brown files with the universal tagset (the NLTK data the peer
    suite uses)."""
    data = shared_path("peer-suites", "data", "nltk_data")
    if str(data) not in nltk.data.path:
        nltk.data.path.insert(0, str(data))
    from nltk.corpus import brown

    return list(brown.tagged_words(["ca01", "ca02", "cb01"], tagset="universal"))


def assert_same(ours, theirs):
    """The same n-grams in the same order, scores equal within 1e-12 relative."""
    assert [ng for ng, _ in ours] == [ng for ng, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300), (a, b)


@pytest.mark.parametrize("order,window_size", [(2, 2), (2, 4), (3, 3), (4, 4)])
def test_tagged_words_score_and_order_like_nltk(tagged, order, window_size):
    ours_cls, nltk_cls = FINDERS[order]
    ours, theirs = (
        ours_cls.from_words(tagged, window_size),
        nltk_cls.from_words(tagged, window_size),
    )
    assert list(ours.word_fd.items()) == list(theirs.word_fd.items())
    assert list(ours.ngram_fd.items()) == list(theirs.ngram_fd.items())
    ours_measures, nltk_measures = MEASURES[order]
    names = COMMON + (["phi_sq", "dice"] if order == 2 else [])
    for name in names:
        assert_same(
            ours.score_ngrams(getattr(ours_measures, name)),
            theirs.score_ngrams(getattr(nltk_measures, name)),
        )
    ours.apply_word_filter(lambda w: w[1] == ".")
    theirs.apply_word_filter(lambda w: w[1] == ".")
    ours.apply_freq_filter(2)
    theirs.apply_freq_filter(2)
    assert ours.nbest(ours_measures.pmi, 20) == theirs.nbest(nltk_measures.pmi, 20)
    assert ours.nbest(nltk_measures.likelihood_ratio, 20) == theirs.nbest(
        nltk_measures.likelihood_ratio, 20
    )

    def custom(*marginals):  # a measure NLTK does not have, scored in Python
        return marginals[0]

    assert_same(ours.score_ngrams(custom), theirs.score_ngrams(custom))
    some = theirs.nbest(nltk_measures.raw_freq, 3)
    assert all(ours.ngram_fd[ng] == theirs.ngram_fd[ng] and ng in ours.ngram_fd for ng in some)


def test_tagged_words_of_the_doctest(tagged):
    """collocations.doctest: the best pmi bigrams of tagged Brown ca01."""
    words = [w for w in tagged][:2500]
    ours = tm.BigramCollocationFinder.from_words(words)
    theirs = nltk_collocations.BigramCollocationFinder.from_words(words)
    assert ours.nbest(tm.BigramAssocMeasures.pmi, 5) == theirs.nbest(
        nltk_assoc.BigramAssocMeasures.pmi, 5
    )
    assert ours.nbest(tm.BigramAssocMeasures.pmi, 5)[0] == (("1,119", "NUM"), ("votes", "NOUN"))


def test_constructor_tables_with_tuple_keys(tagged):
    theirs = nltk_collocations.BigramCollocationFinder.from_words(tagged)
    ours = tm.BigramCollocationFinder(theirs.word_fd, theirs.ngram_fd)
    assert_same(
        ours.score_ngrams(tm.BigramAssocMeasures.chi_sq),
        theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.chi_sq),
    )
    assert ours.word_fd[("the", "DET")] == theirs.word_fd[("the", "DET")] > 0


@pytest.mark.parametrize(
    "words",
    [
        [1, 2, 3, 1, 2, 4, 2, 3, 1, 2] * 3,  # ints
        [1, 2.5, True, 1.0, 2.5, 3, 1],  # 1, True and 1.0 are one FreqDist key: the first seen
        [frozenset({1}), frozenset({2}), frozenset({1, 2}), frozenset({2}), frozenset({1})]
        * 2,  # partial order
        ["a", ("b", "X"), "a", ("b", "X"), ("c", "Y"), "a"],  # str and tuples do not compare
        [b"x", b"y", b"x", b"z", b"y", b"x"],
    ],
)
def test_other_hashables_like_nltk(words):
    for order in (2, 3):
        ours = FINDERS[order][0].from_words(words)
        theirs = FINDERS[order][1].from_words(words)
        assert list(ours.word_fd.items()) == list(theirs.word_fd.items())
        assert [type(w) for w, _ in ours.word_fd.items()] == [
            type(w) for w, _ in theirs.word_fd.items()
        ]
        for name in ("raw_freq", "pmi"):
            ours_fn, nltk_fn = getattr(MEASURES[order][0], name), getattr(MEASURES[order][1], name)
            try:
                expected = theirs.score_ngrams(nltk_fn)
            except TypeError as e:
                with pytest.raises(TypeError, match="not supported"):
                    ours.score_ngrams(ours_fn)
                assert "not supported" in str(e)
                continue
            assert_same(ours.score_ngrams(ours_fn), expected)


def test_constructor_rejects_a_str_as_an_ngram_key():
    with pytest.raises(TypeError, match="tuples of words"):
        tm.BigramCollocationFinder({"a": 1, "b": 1}, {"ab": 1})


def test_unhashable_words_raise_like_nltk():
    for finder in (tm.BigramCollocationFinder, nltk_collocations.BigramCollocationFinder):
        with pytest.raises(TypeError, match="unhashable"):
            finder.from_words(["a", ["b"], "c"])


def test_str_words_keep_the_native_order():
    words = ["the", "cat", "sat", "on", "the", "mat", "the", "cat", "ran"]
    ours = tm.BigramCollocationFinder.from_words(words)
    assert not ours.counts.has_objects
    theirs = nltk_collocations.BigramCollocationFinder.from_words(words)
    assert_same(
        ours.score_ngrams(tm.BigramAssocMeasures.pmi),
        theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.pmi),
    )


# ---- measures on contingency tables and on other marginals ----


def test_contingency_measures_like_nltk():
    for order, (ours_cls, nltk_cls) in MEASURES.items():
        ours, theirs = (
            tm.ContingencyMeasures(ours_cls()),
            nltk_assoc.ContingencyMeasures(nltk_cls()),
        )
        assert type(ours).__name__ == "Contingency" + ours_cls.__name__
        rng = random.Random(order)
        for _ in range(40):
            cells = [rng.randint(1, 50) for _ in range(2**order - 1)] + [rng.randint(10_000, 10**7)]
            assert ours_cls._marginals(*cells) == nltk_cls._marginals(*cells)
            marginals = nltk_cls._marginals(*cells)
            assert ours_cls._contingency(*marginals) == nltk_cls._contingency(*marginals)
            assert list(ours_cls._expected_values(cells)) == list(nltk_cls._expected_values(cells))
            for name in COMMON + (["phi_sq", "dice"] if order == 2 else []):
                assert getattr(ours, name)(*cells) == getattr(theirs, name)(*cells), name
    bigram = tm.ContingencyMeasures(tm.BigramAssocMeasures())
    assert f"{bigram.likelihood_ratio(8, 5, 24, 31740):0.2f}" == "95.29"
    assert f"{bigram.chi_sq(8, 15820, 4667, 14287173):0.2f}" == "1.55"


def test_measures_take_the_marginals_nltk_takes():
    """NLTK's generic measures read only some marginals; other shapes and number types work."""
    quad, nltk_quad = tm.QuadgramAssocMeasures, nltk_assoc.QuadgramAssocMeasures
    odd = (5, (35, 60, 40), (20, 10), (100, 200, 300, 400), 14307668)  # metrics_association.doctest
    for name in ["raw_freq", "student_t", "mi_like", "pmi", "poisson_stirling"]:
        assert getattr(quad, name)(*odd) == getattr(nltk_quad, name)(*odd), name
    big = 10**40
    cases = {
        tm.TrigramAssocMeasures: [
            (2.5, (10.0, 12, 9), (30, 40, 50), 1000.0),
            (3, (5, 6, 7), (8, 9, 10), big),
        ],
        tm.BigramAssocMeasures: [(Fraction(7, 2), (20, 30), 1000), (3, (big, big), big * 10)],
    }
    for ours_cls, marginal_sets in cases.items():
        nltk_cls = getattr(nltk_assoc, ours_cls.__name__)
        for marginals in marginal_sets:
            for name in COMMON:
                try:
                    expected = getattr(nltk_cls, name)(*marginals)
                except (ValueError, ZeroDivisionError, OverflowError) as e:
                    with pytest.raises(type(e)):
                        getattr(ours_cls, name)(*marginals)
                    continue
                assert getattr(ours_cls, name)(*marginals) == expected, (name, marginals)
    with pytest.raises((TypeError, ValueError)):
        tm.TrigramAssocMeasures.chi_sq(1, (2, 3), (4, 5, 6), 100)
