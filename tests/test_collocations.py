"""tokenmill.collocations against NLTK's collocation finders and association measures, on real
books: the same tokens fed to both, every measure, n-gram orders 2-4, window sizes, filters,
from_documents. Scores must agree within 1e-9 relative and in the same order (NLTK sorts by
decreasing score, then by the n-gram)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest
from conftest import COMMON_MEASURES, read_sample, shared_path

nltk_collocations = pytest.importorskip(
    "nltk.collocations", reason="the differential tests need nltk"
)
from nltk.metrics import association as nltk_assoc  # noqa: E402
from tokenmill import collocations as tm  # noqa: E402
from tokenmill.stopwords import StopwordFilter, stopwords  # noqa: E402

ORDERS = {
    2: (
        tm.BigramCollocationFinder,
        nltk_collocations.BigramCollocationFinder,
        tm.BigramAssocMeasures,
        nltk_assoc.BigramAssocMeasures,
    ),
    3: (
        tm.TrigramCollocationFinder,
        nltk_collocations.TrigramCollocationFinder,
        tm.TrigramAssocMeasures,
        nltk_assoc.TrigramAssocMeasures,
    ),
    4: (
        tm.QuadgramCollocationFinder,
        nltk_collocations.QuadgramCollocationFinder,
        tm.QuadgramAssocMeasures,
        nltk_assoc.QuadgramAssocMeasures,
    ),
}
COMMON = COMMON_MEASURES
BIGRAM_ONLY = ["phi_sq", "dice", "fisher"]

try:
    import scipy.stats  # noqa: F401

    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False


def alpha_tokens(text):
    """Alphabetic word tokens, as in the NLTK collocations tutorial."""
    return [w for w in re.findall(r"\w+", text) if w.isalpha()]


_token_cache: dict = {}


def book_tokens(*parts, max_bytes=200_000, limit=None):
    key = (parts, max_bytes, limit)
    if key not in _token_cache:
        tokens = alpha_tokens(read_sample(shared_path("corpora", "gutenberg", *parts), max_bytes))
        _token_cache[key] = tokens[:limit] if limit else tokens
    return _token_cache[key]


def scarlet(limit=None):
    return book_tokens("pg244_en_a_study_in_scarlet.txt", max_bytes=300_000, limit=limit)


def assert_same_ranking(ours, theirs, exact_order=True):
    """Same n-grams in the same order; scores equal within 1e-9 relative."""
    assert len(ours) == len(theirs)
    theirs_by_ngram = dict(theirs)
    for ngram, score in ours:
        want = float(theirs_by_ngram[ngram])
        assert math.isclose(score, want, rel_tol=1e-9, abs_tol=1e-300), (ngram, score, want)
    if exact_order:
        assert [ng for ng, _ in ours] == [ng for ng, _ in theirs]
    else:
        # Scores computed by different algorithms (fisher: ours vs scipy) may differ in the last
        # digits; our order must then be NLTK's order up to such near-ties.
        nltk_scores = [float(theirs_by_ngram[ng]) for ng, _ in ours]
        for a, b in zip(nltk_scores, nltk_scores[1:]):
            assert a >= b or math.isclose(a, b, rel_tol=1e-9)


def assert_same_table(ours, theirs):
    """Same keys with the same counts, in the same (first-occurrence) order."""
    assert list(ours.items()) == list(theirs.items())
    assert ours.N() == theirs.N()


def build_pair(order, tokens, window_size):
    ours_cls, nltk_cls, _, _ = ORDERS[order]
    return ours_cls.from_words(tokens, window_size), nltk_cls.from_words(tokens, window_size)


_finder_cache: dict = {}


def cached_pair(order, window_size, limit, min_freq):
    """A filtered (ours, nltk) pair on a Study in Scarlet prefix, built once per setting."""
    key = (order, window_size, limit, min_freq)
    if key not in _finder_cache:
        ours, theirs = build_pair(order, scarlet(limit), window_size)
        if min_freq > 1:
            ours.apply_freq_filter(min_freq)
            theirs.apply_freq_filter(min_freq)
        _finder_cache[key] = (ours, theirs)
    return _finder_cache[key]


def measure_pair(order, name):
    _, _, ours_measures, nltk_measures = ORDERS[order]
    return getattr(ours_measures, name), getattr(nltk_measures, name)


# ----------------------------------------------------------------------------- counting


@pytest.mark.parametrize(
    "order,window_size", [(2, 2), (2, 3), (2, 5), (3, 3), (3, 4), (3, 5), (4, 4), (4, 5)]
)
def test_tables_equal_nltk(order, window_size):
    tokens = scarlet(8000)
    ours, theirs = build_pair(order, tokens, window_size)
    assert ours.N == theirs.N
    assert_same_table(ours.word_fd, theirs.word_fd)
    assert_same_table(ours.ngram_fd, theirs.ngram_fd)
    aux = {3: ["bigram_fd", "wildcard_fd"], 4: ["ii", "iii", "ixi", "ixxi", "iixi", "ixii"]}.get(
        order, []
    )
    for name in aux:
        assert_same_table(getattr(ours, name), getattr(theirs, name))


def test_freqdist_behaviour_matches_nltk():
    ours, theirs = build_pair(2, scarlet(20000), 2)
    for fd_ours, fd_theirs in [(ours.word_fd, theirs.word_fd), (ours.ngram_fd, theirs.ngram_fd)]:
        assert len(fd_ours) == len(fd_theirs)
        assert fd_ours.B() == fd_theirs.B()
        assert fd_ours.most_common(25) == fd_theirs.most_common(25)
        assert fd_ours.most_common() == fd_theirs.most_common()
        assert fd_ours.max() == fd_theirs.max()
        assert fd_ours.hapaxes() == fd_theirs.hapaxes()
        assert fd_ours.Nr(2) == fd_theirs.Nr(2)
        key = fd_theirs.max()
        assert fd_ours[key] == fd_theirs[key]
        assert fd_ours.freq(key) == fd_theirs.freq(key)
        assert key in fd_ours
        assert list(fd_ours)[:50] == list(fd_theirs)[:50]
        assert fd_ours == fd_theirs
        assert str(fd_ours) == str(fd_theirs)
    assert ours.word_fd["no-such-word"] == theirs.word_fd["no-such-word"] == 0
    assert ours.ngram_fd[("no", "such")] == 0
    assert ("no", "such") not in ours.ngram_fd
    assert ours.word_fd.copy() == theirs.word_fd.copy()


def test_from_documents_equal_nltk():
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 60_000
    )
    documents = [alpha_tokens(p) for p in text.split("\n\n") if p.strip()]
    for order in (2, 3, 4):
        ours_cls, nltk_cls, ours_m, nltk_m = ORDERS[order]
        ours = ours_cls.from_documents(documents)
        theirs = nltk_cls.from_documents(documents)
        assert ours.N == theirs.N
        assert_same_table(ours.ngram_fd, theirs.ngram_fd)
        assert_same_ranking(
            ours.score_ngrams(ours_m.likelihood_ratio), theirs.score_ngrams(nltk_m.likelihood_ratio)
        )


def test_streams_and_generators():
    tokens = scarlet(5000)
    from_list = tm.BigramCollocationFinder.from_words(tokens, 3)
    from_generator = tm.BigramCollocationFinder.from_words((w for w in tokens), 3)
    assert list(from_list.ngram_fd.items()) == list(from_generator.ngram_fd.items())
    generator_docs = tm.TrigramCollocationFinder.from_documents(
        iter([iter(tokens[:100]), tokens[100:]])
    )
    nltk_docs = nltk_collocations.TrigramCollocationFinder.from_documents(
        [tokens[:100], tokens[100:]]
    )
    assert_same_table(generator_docs.ngram_fd, nltk_docs.ngram_fd)


# ----------------------------------------------------------------------------- measures


@pytest.mark.parametrize("window_size", [2, 3, 4, 5])
@pytest.mark.parametrize("name", COMMON + BIGRAM_ONLY)
def test_bigram_measures_equal_nltk(name, window_size):
    if name == "fisher" and not HAVE_SCIPY:
        pytest.skip("NLTK's fisher needs scipy, which is not installed")
    # Unfiltered for adjacent bigrams (all the ties among rare pairs); filtered for wide windows.
    limit, min_freq = (12000, 1) if window_size == 2 else (20000, 2)
    if name == "fisher":
        limit = 6000
    ours, theirs = cached_pair(2, window_size, limit, min_freq)
    ours_fn, nltk_fn = measure_pair(2, name)
    assert_same_ranking(
        ours.score_ngrams(ours_fn), theirs.score_ngrams(nltk_fn), exact_order=name != "fisher"
    )


@pytest.mark.parametrize("order,window_size", [(3, 3), (3, 4), (3, 5), (4, 4), (4, 5)])
@pytest.mark.parametrize("name", COMMON)
def test_ngram_measures_equal_nltk(order, window_size, name):
    limit, min_freq = (10000 if order == 3 else 6000, 1) if window_size == order else (10000, 2)
    ours, theirs = cached_pair(order, window_size, limit, min_freq)
    ours_fn, nltk_fn = measure_pair(order, name)
    assert_same_ranking(ours.score_ngrams(ours_fn), theirs.score_ngrams(nltk_fn))


@pytest.mark.parametrize(
    "book",
    [
        "pg34811_de_buddenbrooks.txt",
        "pg13951_fr_les_trois_mousquetaires.txt",
        "pg27729_pl_mickiewicz_bajki.txt",
    ],
)
def test_non_english_books_tie_order(book):
    """Ties are ordered by code point, which non-ASCII words exercise (ä, é, ł, ...)."""
    tokens = book_tokens(book, max_bytes=150_000)
    ours, theirs = build_pair(2, tokens, 2)
    for name in ["raw_freq", "pmi", "likelihood_ratio", "dice"]:
        ours_fn, nltk_fn = measure_pair(2, name)
        assert_same_ranking(ours.score_ngrams(ours_fn), theirs.score_ngrams(nltk_fn))


def test_nbest_and_above_score_equal_nltk():
    ours, theirs = cached_pair(2, 2, 12000, 1)
    for name in ["pmi", "likelihood_ratio", "student_t"]:
        ours_fn, nltk_fn = measure_pair(2, name)
        for n in [0, 1, 10, 500, 10**9]:
            assert ours.nbest(ours_fn, n) == theirs.nbest(nltk_fn, n)
        threshold = theirs.score_ngrams(nltk_fn)[200][1]
        assert list(ours.above_score(ours_fn, threshold)) == list(
            theirs.above_score(nltk_fn, threshold)
        )


def test_nltk_measures_and_python_functions_work():
    """NLTK's own measure functions are recognised; any Python function works (slow path)."""
    ours, theirs = cached_pair(3, 3, 10000, 1)
    assert_same_ranking(
        ours.score_ngrams(nltk_assoc.TrigramAssocMeasures.pmi),
        theirs.score_ngrams(nltk_assoc.TrigramAssocMeasures.pmi),
    )

    def custom(n_iii, pairs, unigrams, total):
        return n_iii / (sum(pairs) + 1) if n_iii > 1 else None

    assert_same_ranking(ours.score_ngrams(custom), theirs.score_ngrams(custom))
    assert ours.nbest(custom, 20) == theirs.nbest(custom, 20)
    # A partial of NLTK's mi_like with another power goes through the slow path.
    import functools

    power2 = functools.partial(nltk_assoc.TrigramAssocMeasures.mi_like, power=2)
    assert_same_ranking(ours.score_ngrams(power2), theirs.score_ngrams(power2))
    assert ours.score_ngram(
        nltk_assoc.TrigramAssocMeasures.pmi, *ours.nbest(custom, 1)[0]
    ) == theirs.score_ngram(nltk_assoc.TrigramAssocMeasures.pmi, *ours.nbest(custom, 1)[0])
    assert ours.score_ngram(custom, "no", "such", "trigram") is None


def test_our_measures_score_single_marginals_like_nltk():
    """Our measure functions take NLTK's arguments, so they also work inside NLTK's finders."""
    _, theirs = cached_pair(2, 2, 4000, 1)
    for name in COMMON + ["phi_sq", "dice"]:
        ours_fn, nltk_fn = measure_pair(2, name)
        assert_same_ranking(theirs.score_ngrams(ours_fn), theirs.score_ngrams(nltk_fn))
    _, theirs4 = cached_pair(4, 4, 3000, 1)
    for name in COMMON:
        ours_fn, nltk_fn = measure_pair(4, name)
        assert_same_ranking(theirs4.score_ngrams(ours_fn), theirs4.score_ngrams(nltk_fn))
    assert tm.BigramAssocMeasures.mi_like(
        4.0, (10, 20), 1000, power=2
    ) == nltk_assoc.BigramAssocMeasures.mi_like(4.0, (10, 20), 1000, power=2)


# ----------------------------------------------------------------------------- filters


def test_filters_equal_nltk():
    tokens = scarlet(30000)
    stop = StopwordFilter("en")
    for order in (2, 3, 4):
        ours, theirs = build_pair(order, tokens, order + 1)
        for finder in (ours, theirs):
            finder.apply_freq_filter(2)
            finder.apply_word_filter(stop)
        assert_same_table(ours.ngram_fd, theirs.ngram_fd)
        for finder in (ours, theirs):
            finder.apply_ngram_filter(lambda *ngram: ngram[0] == ngram[-1] or "Holmes" in ngram)
        assert_same_table(ours.ngram_fd, theirs.ngram_fd)
        # Filters touch only the candidates, never the word table.
        assert_same_table(ours.word_fd, theirs.word_fd)
        ours_fn, nltk_fn = measure_pair(order, "likelihood_ratio")
        assert_same_ranking(ours.score_ngrams(ours_fn), theirs.score_ngrams(nltk_fn))


def test_trigram_bigram_finder_equal_nltk():
    ours, theirs = build_pair(3, scarlet(10000), 4)
    ours_b, theirs_b = ours.bigram_finder(), theirs.bigram_finder()
    assert_same_table(ours_b.ngram_fd, theirs_b.ngram_fd)
    assert_same_ranking(
        ours_b.score_ngrams(tm.BigramAssocMeasures.pmi),
        theirs_b.score_ngrams(nltk_assoc.BigramAssocMeasures.pmi),
    )


def test_constructors_from_freqdists_equal_nltk():
    _, theirs = build_pair(2, scarlet(5000), 3)
    ours = tm.BigramCollocationFinder(theirs.word_fd, theirs.ngram_fd, window_size=3)
    assert_same_ranking(
        ours.score_ngrams(tm.BigramAssocMeasures.likelihood_ratio),
        theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.likelihood_ratio),
    )
    _, theirs3 = build_pair(3, scarlet(5000), 3)
    ours3 = tm.TrigramCollocationFinder(
        theirs3.word_fd, theirs3.bigram_fd, theirs3.wildcard_fd, theirs3.ngram_fd
    )
    assert_same_ranking(
        ours3.score_ngrams(tm.TrigramAssocMeasures.chi_sq),
        theirs3.score_ngrams(nltk_assoc.TrigramAssocMeasures.chi_sq),
    )


# ----------------------------------------------------------------------------- the tutorial


def test_study_in_scarlet_tutorial():
    tokens = alpha_tokens(
        read_sample(shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 400_000)
    )
    stop = stopwords("en")

    def word_filter(w):
        return len(w) < 3 or w.lower() in stop

    ours = tm.BigramCollocationFinder.from_words(tokens)
    theirs = nltk_collocations.BigramCollocationFinder.from_words(tokens)
    for finder in (ours, theirs):
        finder.apply_freq_filter(3)
        finder.apply_word_filter(word_filter)
    scored = ours.score_ngrams(tm.BigramAssocMeasures.likelihood_ratio)
    assert_same_ranking(
        scored, theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.likelihood_ratio)
    )
    top = [" ".join(ngram) for ngram, _ in scored[:10]]
    for expected in [
        "Sherlock Holmes",
        "Jefferson Hope",
        "John Ferrier",
        "Brixton Road",
        "Salt Lake",
    ]:
        assert expected in top, (expected, top)


# ----------------------------------------------------------------------------- fisher


def exact_fisher_less(a, b, c, d):
    """P(X <= a) for the hypergeometric distribution of the table, in exact rationals."""
    from math import comb

    row1, row2, col1 = a + b, c + d, a + c
    if 0 in (row1, row2, col1, b + d):
        return 1.0
    low = max(0, col1 - row2)
    total = sum(comb(row1, k) * comb(row2, col1 - k) for k in range(low, a + 1))
    return float(min(Fraction(total, comb(row1 + row2, col1)), Fraction(1)))


@pytest.mark.parametrize(
    "n_ii,n_ix,n_xi,n_xx",
    [
        pytest.param(1, 1, 1, 100, id="hapax pair"),
        pytest.param(3, 40, 12, 5000, id="rare pair"),
        pytest.param(20, 42, 20, 14000, id="second word always after the first"),
        pytest.param(5, 900, 700, 60000, id="frequent words, rare pair"),
        pytest.param(1, 2000, 3000, 80000, id="very frequent words, one pair"),
        pytest.param(7, 7, 7, 7000, id="words only ever together"),
    ],
)
def test_fisher_exact_against_rationals(n_ii, n_ix, n_xi, n_xx):
    ours = tm.BigramAssocMeasures.fisher(float(n_ii), (n_ix, n_xi), n_xx)
    # NLTK's table: [[n_ii, n_oi], [n_io, n_oo]] with n_oi = n_xi - n_ii, n_io = n_ix - n_ii.
    n_oi, n_io = n_xi - n_ii, n_ix - n_ii
    want = exact_fisher_less(n_ii, n_oi, n_io, n_xx - n_ii - n_oi - n_io)
    assert math.isclose(ours, want, rel_tol=1e-12), (ours, want)
    if HAVE_SCIPY:
        assert math.isclose(
            ours,
            nltk_assoc.BigramAssocMeasures.fisher(float(n_ii), (n_ix, n_xi), n_xx),
            rel_tol=1e-9,
        )


# ----------------------------------------------------------------------------- output and errors


def test_csv_and_dataframe():
    ours, _ = cached_pair(2, 2, 12000, 1)
    scored = ours.score_ngrams(tm.BigramAssocMeasures.pmi)[:50]
    text = tm.to_csv(scored)
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["w1", "w2", "score"]
    assert [((r[0], r[1]), float(r[2])) for r in rows[1:]] == scored
    assert ours.to_csv(tm.BigramAssocMeasures.pmi, n=50) == text
    pd = pytest.importorskip("pandas", reason="to_dataframe needs pandas")
    frame = tm.to_dataframe(scored)
    assert list(frame.columns) == ["w1", "w2", "score"]
    assert list(frame.itertuples(index=False, name=None)) == [ng + (s,) for ng, s in scored]
    assert isinstance(ours.to_dataframe(tm.BigramAssocMeasures.pmi, n=5), pd.DataFrame)


def test_bad_input():
    with pytest.raises(ValueError, match="window_size at least 3"):
        tm.TrigramCollocationFinder.from_words(["a", "b"], window_size=2)
    with pytest.raises(TypeError, match="unhashable"):
        tm.BigramCollocationFinder.from_words(["a", {5}, "b"])
    with pytest.raises(ValueError, match="not defined for n-grams of order 3"):
        tm.TrigramCollocationFinder.from_words(["a", "b", "c"]).counts.rank("dice", False)
    empty = tm.BigramCollocationFinder.from_words([])
    assert empty.score_ngrams(tm.BigramAssocMeasures.pmi) == [] and empty.N == 0
    # Lone surrogates and other odd strings survive the round trip.
    words = ["a\ud800", "b", "a\ud800", "b", "\x00", "é"]
    ours = tm.BigramCollocationFinder.from_words(words)
    theirs = nltk_collocations.BigramCollocationFinder.from_words(words)
    assert_same_ranking(
        ours.score_ngrams(tm.BigramAssocMeasures.pmi),
        theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.pmi),
    )


def test_math_errors_raise_like_nltk():
    """Where NLTK's Python arithmetic raises, ours raises the same exception type."""
    words = ["a", "a"]  # n_oi + n_oo = 0: phi_sq divides by zero
    ours = tm.BigramCollocationFinder.from_words(words)
    theirs = nltk_collocations.BigramCollocationFinder.from_words(words)
    with pytest.raises(ZeroDivisionError):
        theirs.score_ngrams(nltk_assoc.BigramAssocMeasures.phi_sq)
    with pytest.raises(ZeroDivisionError, match=r"\('a', 'a'\)"):
        ours.score_ngrams(tm.BigramAssocMeasures.phi_sq)
