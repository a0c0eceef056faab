"""N-gram collocations: which word pairs, triples and quadruples belong together.

A drop-in for ``nltk.collocations`` (switching is one import)::

    from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder
    from tokenmill.stopwords import stopwords

    stop = stopwords("en")
    finder = BigramCollocationFinder.from_words(words)
    finder.apply_freq_filter(3)
    finder.apply_word_filter(lambda w: len(w) < 3 or w.lower() in stop)
    finder.nbest(BigramAssocMeasures.likelihood_ratio, 10)

Counting happens in Rust over a stream of words (memory grows with the number of distinct
n-grams, not with the corpus), with NLTK's window semantics and wildcard tables. The measures of
``BigramAssocMeasures``, ``TrigramAssocMeasures`` and ``QuadgramAssocMeasures`` (ours or
NLTK's own) are computed in Rust for all n-grams at once, with CPython's arithmetic, so scores
equal NLTK's bit for bit; any other Python function with NLTK's measure signature also works
(evaluated in Python, as NLTK does).

Words are ``str`` or any other hashable object, as in NLTK (e.g. the ``(word, tag)`` tuples of
a tagged corpus; ``None`` is padding). ``str`` words are counted natively from their bytes;
other objects are interned to ids in Python (by hash and equality, as ``FreqDist`` keys) and
counted natively too.

Order of results (as NLTK's ``score_ngrams``, ``sorted(..., key=lambda t: (-t[1], t[0]))``):
decreasing score, equal scores by the n-gram's words in Python's order (code-point order for
``str``). For other words, that order is found once by sorting the distinct words in Python;
if they are not totally ordered (e.g. ``str`` mixed with tuples), the scored n-grams are
sorted in Python with NLTK's key, from NLTK's input order, so the result — or the TypeError —
is NLTK's. Tables keep NLTK's ``FreqDist`` orders: ``items()`` in first-occurrence order,
iteration and ``most_common()`` by decreasing count (equal counts in first-occurrence order).

Differences from NLTK: ``word_fd`` and ``ngram_fd`` are read-only views that follow the finder
(after a filter, a view taken earlier shows the filtered table); ``apply_word_filter`` calls its
function once per distinct word rather than once per word occurrence in an n-gram (the same
result for any pure function).
"""

from __future__ import annotations

import csv as _csv
import io as _io
import math as _math
import operator as _operator
import sys as _sys
from collections import Counter as _Counter
from collections.abc import Mapping as _Mapping
from functools import reduce as _reduce

from tokenmill._atomic import atomic_open as _atomic_open
from tokenmill._native import collocations as _native

__all__ = [
    "FreqDistView",
    "AbstractCollocationFinder",
    "BigramCollocationFinder",
    "TrigramCollocationFinder",
    "QuadgramCollocationFinder",
    "NgramAssocMeasures",
    "BigramAssocMeasures",
    "TrigramAssocMeasures",
    "QuadgramAssocMeasures",
    "ContingencyMeasures",
    "NgramCounts",
    "to_csv",
    "to_dataframe",
]

NgramCounts = _native.NgramCounts

# CPython 3.12 made sum() of floats compensated (Neumaier); NLTK's measures use sum(), so we
# sum the same way the running interpreter does.
_COMPENSATED_SUM = _sys.version_info >= (3, 12)


# --------------------------------------------------------------------------------------------
# Frequency tables


class FreqDistView(_Mapping):
    """A read-only frequency table of a finder (``word_fd``, ``ngram_fd``, ``bigram_fd``, ...)
    that behaves like NLTK's ``FreqDist`` for reading: ``fd[key]`` (0 when absent), ``len``,
    iteration by decreasing count (as ``FreqDist.__iter__``), ``keys()`` and ``items()`` in
    first-occurrence order, ``N()``, ``B()``, ``freq()``,
    ``most_common()``, ``max()``, ``hapaxes()``, ``Nr()``. Keys are the words (``str`` or the
    other hashable words counted) and tuples of words for n-grams. ``copy()`` gives a mutable
    ``collections.Counter``.
    """

    __slots__ = ("_counts", "_name")

    def __init__(self, counts, name):
        self._counts = counts
        self._name = name

    def __getitem__(self, key):
        return self._counts.table_get(self._name, key)

    def get(self, key, default=None):
        """The count of ``key``, or ``default`` when absent."""
        return self[key] if key in self else default  # noqa: SIM401 (this is get itself)

    def __contains__(self, key):
        try:
            return self._counts.table_contains(self._name, key)
        except TypeError:
            return False

    def __len__(self):
        return self._counts.table_len(self._name)

    def __iter__(self):
        # As NLTK's FreqDist: iteration follows most_common(); keys()/items() follow insertion.
        return (key for key, _ in self.most_common())

    def keys(self):
        """The keys, in first-occurrence order."""
        return self._counts.table_keys(self._name)

    def values(self):
        """The counts, in key order."""
        return self._counts.table_values(self._name)

    def items(self):
        """``(key, count)`` pairs, in first-occurrence order."""
        return self._counts.table_items(self._name)

    def N(self):
        """The total of all counts."""
        return self._counts.table_total(self._name)

    def B(self):
        """The number of distinct keys (bins)."""
        return len(self)

    def freq(self, sample):
        """The relative frequency of ``sample`` (0 when the table is empty)."""
        n = self.N()
        return 0 if n == 0 else self[sample] / n

    def most_common(self, n=None):
        """``(key, count)`` by decreasing count; equal counts keep first-occurrence order."""
        return self._counts.table_items(self._name, True, n)

    def max(self):
        """The most frequent key (the first one seen among equals)."""
        top = self.most_common(1)
        if not top:
            raise ValueError("A FreqDist must have at least one sample before max is defined.")
        return top[0][0]

    def hapaxes(self):
        """The keys that occur once."""
        return [key for key, count in self.items() if count == 1]

    def Nr(self, r, bins=None):
        """The number of keys with count ``r``."""
        return sum(1 for count in self.values() if count == r)

    def copy(self):
        """A mutable ``collections.Counter`` with the same counts."""
        return _Counter(dict(self.items()))

    def to_freqdist(self):
        """The table as an ``nltk.FreqDist`` (needs nltk)."""
        from nltk.probability import FreqDist

        return FreqDist(dict(self.items()))

    def __eq__(self, other):
        if isinstance(other, _Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        shown = ", ".join(f"{key!r}: {count!r}" for key, count in self.most_common(10))
        more = ", ..." if len(self) > 10 else ""
        return f"FreqDist({{{shown}{more}}})"

    def __str__(self):
        return f"<FreqDist with {self.B()} samples and {self.N()} outcomes>"


def _items_of(table):
    """``(key, count)`` pairs of a FreqDist, dict or view."""
    return list(table.items())


# --------------------------------------------------------------------------------------------
# Association measures


def _table_view(table: str, doc: str) -> property:
    """A read-only property: the ``FreqDistView`` of the counts' table ``table``."""
    return property(lambda self: FreqDistView(self._counts, table), doc=doc)


class NgramAssocMeasures:
    """Association measures shared by all n-gram orders, with NLTK's signatures::

        score_fn(count_of_ngram,
                 (count_of_n-1gram_1, ..., count_of_n-1gram_j),
                 ...,
                 (count_of_1gram_1, ..., count_of_1gram_n),
                 count_of_total_words)

    Each is a classmethod callable on marginals (also from NLTK's finders); passed to one of
    our finders, it is computed in Rust for all candidates at once.
    """

    _n = 0


def _define_measure(owner, name, doc):
    """Adds the measure ``name`` to ``owner`` as a classmethod that scores one set of marginals
    in Rust, tagged so the finders recognise it and score all n-grams natively. Marginals the
    native kernel does not take (another layout, floats or Fractions where NLTK's finders give
    ints, integers beyond 127 bits) are scored by ``_python_score``, as NLTK would."""

    def measure(cls, *marginals, **kwargs):
        power = kwargs.get("power", 3)
        if name != "mi_like" or power == 3:
            try:
                return _native.score_marginals(name, cls._n, marginals, _COMPENSATED_SUM)
            except (TypeError, OverflowError):
                pass
        return _python_score(cls, name, marginals, power)

    measure.__name__ = name
    measure.__qualname__ = f"{owner.__name__}.{name}"
    measure.__doc__ = doc
    measure._tokenmill_measure = name
    setattr(owner, name, classmethod(measure))


# NLTK's formulas on Python numbers, for the marginals the native kernel does not take. The
# native kernel (collocations/measures.rs) computes the same formulas with CPython's float
# arithmetic; this is the general case, arbitrary precision included.
_SMALL = 1e-20


def _product(values):
    return _reduce(_operator.mul, values)


def _python_score(cls, name, marginals, power=3):
    """The score NLTK's ``cls.name(*marginals)`` gives (or the exception it raises)."""
    ngram, total = marginals[0], marginals[-1]
    if name == "raw_freq":
        return ngram / total
    if name == "mi_like":
        return ngram**power / _product(marginals[-2])
    if name in ("student_t", "pmi", "poisson_stirling"):
        unigrams = _product(marginals[-2])
        if name == "pmi":
            return _math.log2(ngram * total ** (cls._n - 1)) - _math.log2(unigrams)
        expected = unigrams / (total ** (cls._n - 1))
        if name == "student_t":
            return (ngram - expected) / (ngram + _SMALL) ** 0.5
        return ngram * (_math.log2(ngram / expected) - 1)
    if name == "dice":
        n_ix, n_xi = marginals[1]
        return 2 * ngram / (n_ix + n_xi)
    if name == "fisher":
        # scipy, which NLTK calls, takes the cells as int64: the native test on those.
        n_ix, n_xi = marginals[1]
        exact = (float(ngram), (int(n_ix), int(n_xi)), int(total))
        return _native.score_marginals("fisher", 2, exact, _COMPENSATED_SUM)
    cont = cls._contingency(*marginals)
    if name == "phi_sq" or (name == "chi_sq" and cls._n == 2):
        a, b, c, d = cont
        phi_sq = (a * d - b * c) ** 2 / ((a + b) * (a + c) * (b + d) * (c + d))
        return phi_sq if name == "phi_sq" else total * phi_sq
    if name == "jaccard":
        return cont[0] / sum(cont[:-1])
    expected = cls._expected_values(cont)
    if name == "chi_sq":
        return sum((obs - exp) ** 2 / (exp + _SMALL) for obs, exp in zip(cont, expected))
    if name == "likelihood_ratio":
        return 2 * sum(
            obs * _math.log(obs / (exp + _SMALL) + _SMALL) for obs, exp in zip(cont, expected)
        )
    raise ValueError(f"unknown association measure {name!r}")


_COMMON_MEASURES = {
    "raw_freq": "Scores n-grams by their frequency: count / total.",
    "student_t": "Student's t test against independence of the words (Manning and Schütze 5.3.1).",
    "chi_sq": "Pearson's chi-square (Manning and Schütze 5.3.3).",
    "mi_like": "A variant of mutual information: count ** power / product of word counts "
    "(keyword ``power``, default 3); no logarithm.",
    "pmi": "Pointwise mutual information (Manning and Schütze 5.4).",
    "likelihood_ratio": "Log-likelihood ratio (Manning and Schütze 5.3.4).",
    "poisson_stirling": "The Poisson-Stirling measure.",
    "jaccard": "The Jaccard index.",
}
_BIGRAM_MEASURES = {
    "phi_sq": "Phi-square, the square of the Pearson correlation coefficient.",
    "chi_sq": "Chi-square: phi-square times the number of bigrams (Manning and Schütze 5.3.3).",
    "fisher": "Fisher's exact test, one-sided (less), as a p-value (Pedersen 1996). "
    "Computed exactly, without scipy.",
    "dice": "Dice's coefficient: 2 * n_ii / (n_ix + n_xi).",
}

for _name, _doc in _COMMON_MEASURES.items():
    _define_measure(NgramAssocMeasures, _name, _doc)


class BigramAssocMeasures(NgramAssocMeasures):
    """Bigram association measures: ``score_fn(n_ii, (n_ix, n_xi), n_xx)``, where ``n_ii``
    counts the bigram, ``n_ix`` its first word, ``n_xi`` its second word and ``n_xx`` all
    words (see NLTK's ``BigramAssocMeasures``)."""

    _n = 2

    @staticmethod
    def _contingency(n_ii, n_ix_xi_tuple, n_xx):
        """The contingency table ``(n_ii, n_oi, n_io, n_oo)`` of the marginals."""
        n_ix, n_xi = n_ix_xi_tuple
        n_oi = n_xi - n_ii
        n_io = n_ix - n_ii
        return (n_ii, n_oi, n_io, n_xx - n_ii - n_oi - n_io)

    @staticmethod
    def _marginals(n_ii, n_oi, n_io, n_oo):
        """The marginals ``(n_ii, (n_ix, n_xi), n_xx)`` of a contingency table."""
        return (n_ii, (n_oi + n_ii, n_io + n_ii), n_oo + n_oi + n_io + n_ii)

    @staticmethod
    def _expected_values(cont):
        """Each cell's expected value under independence: row total × column total / N."""
        n_xx = sum(cont)
        for i in range(4):
            yield (cont[i] + cont[i ^ 1]) * (cont[i] + cont[i ^ 2]) / n_xx


for _name, _doc in _BIGRAM_MEASURES.items():
    _define_measure(BigramAssocMeasures, _name, _doc)


def _popcount(x):
    return bin(x).count("1")


class _NgramContingency(NgramAssocMeasures):
    """Contingency tables of trigrams and quadgrams, from and to their marginals, in NLTK's
    layout (``_contingency``, ``_marginals``, ``_expected_values``).

    Cell ``c`` (0 <= c < 2**n) counts the n-grams in which word i is the n-gram's word exactly
    when bit i of ``c`` is clear: cell 0 is the n-gram itself, the last cell has none of its
    words. A marginal such as ``n_ixi`` fixes the positions marked ``i`` and counts the
    n-grams that match there: the sum of the cells whose bits are clear at those positions.
    ``_MARGINALS`` names the marginals between the n-gram count and the total, group by
    group, in NLTK's argument order. (For float marginals, the cells may differ from NLTK's in
    the last bit: the subtractions are not done in NLTK's order.)
    """

    _MARGINALS: tuple = ()

    @classmethod
    def _masks(cls):
        """The bit mask of the fixed positions of each marginal, in argument order."""
        masks = [(2**cls._n - 1,)]
        masks += [
            tuple(sum(1 << i for i, c in enumerate(name) if c == "i") for name in group)
            for group in cls._MARGINALS
        ]
        return masks + [(0,)]

    @classmethod
    def _contingency(cls, *marginals):
        """The contingency cells of the marginals: a cell is the marginal fixing the positions
        its bits leave clear, minus the cells that marginal also sums (those whose set bits
        are a subset of the cell's), solved from the n-gram outward."""
        groups = [marginals[0], *marginals[1:-1], marginals[-1]]
        if len(groups) != len(cls._MARGINALS) + 2:
            raise ValueError(f"expected {len(cls._MARGINALS) + 2} marginals, got {len(groups)}")
        full = 2**cls._n - 1
        by_mask = {}
        for masks, values in zip(cls._masks(), groups):
            values = values if isinstance(values, (tuple, list)) else (values,)
            if len(values) != len(masks):
                raise ValueError(f"expected {len(masks)} values in {values!r}")
            by_mask.update(zip(masks, values))
        cont = [0] * (full + 1)
        for cell in sorted(range(full + 1), key=_popcount):
            inner = [other for other in range(cell) if other & cell == other]
            value = by_mask[full & ~cell]
            for other in inner:
                value = value - cont[other]
            cont[cell] = value
        return tuple(cont)

    @classmethod
    def _marginals(cls, *contingency):
        """The marginals of contingency cells (NLTK's argument layout)."""
        if len(contingency) != 2**cls._n:
            raise ValueError(f"expected {2**cls._n} contingency cells, got {len(contingency)}")

        def marginal(mask):
            return sum(value for cell, value in enumerate(contingency) if cell & mask == 0)

        masks = cls._masks()
        groups = [tuple(marginal(m) for m in group) for group in masks[1:-1]]
        return (contingency[0], *groups, sum(contingency))

    @classmethod
    def _expected_values(cls, cont):
        """Each cell's expected value under independence: the product, over the positions, of
        the total of the cells that agree with it there, over N ** (n - 1)."""
        n_all = sum(cont)
        bits = [1 << i for i in range(cls._n)]
        for i in range(len(cont)):
            totals = (sum(cont[x] for x in range(2**cls._n) if x & j == i & j) for j in bits)
            yield _product(totals) / (n_all ** (cls._n - 1))


class TrigramAssocMeasures(_NgramContingency):
    """Trigram association measures: ``score_fn(n_iii, (n_iix, n_ixi, n_xii), (n_ixx, n_xix,
    n_xxi), n_xxx)`` (i = a word of the trigram, x = any word)."""

    _n = 3
    _MARGINALS = (("iix", "ixi", "xii"), ("ixx", "xix", "xxi"))


class QuadgramAssocMeasures(_NgramContingency):
    """Quadgram association measures: ``score_fn(n_iiii, (n_iiix, n_iixi, n_ixii, n_xiii),
    (n_iixx, n_ixix, n_ixxi, n_xixi, n_xxii, n_xiix), (n_ixxx, n_xixx, n_xxix, n_xxxi),
    n_all)``."""

    _n = 4
    _MARGINALS = (
        ("iiix", "iixi", "ixii", "xiii"),
        ("iixx", "ixix", "ixxi", "xixi", "xxii", "xiix"),
        ("ixxx", "xixx", "xxix", "xxxi"),
    )


class ContingencyMeasures:
    """The measures of an association-measures object (e.g. ``BigramAssocMeasures()``) taking
    contingency cells instead of marginals (NLTK's ``ContingencyMeasures``): for bigrams
    ``measure(n_ii, n_io, n_oi, n_oo)``, for trigrams and quadgrams the 8 or 16 cells in
    NLTK's order. Private attributes are copied as they are.

    As in NLTK, the object's type is named ``"Contingency" + <the measures' type name>``;
    NLTK renames its shared class for that, here each object gets its own subclass.
    """

    def __init__(self, measures):
        self.__class__ = type("Contingency" + type(measures).__name__, (ContingencyMeasures,), {})
        for name in dir(measures):
            if name.startswith("__"):
                continue
            value = getattr(measures, name)
            if not name.startswith("_"):
                value = self._make_contingency_fn(measures, value)
            setattr(self, name, value)

    @staticmethod
    def _make_contingency_fn(measures, old_fn):
        """``old_fn`` taking contingency cells: they are turned into marginals first."""

        def on_contingency(*contingency):
            return old_fn(*measures._marginals(*contingency))

        on_contingency.__doc__ = old_fn.__doc__
        on_contingency.__name__ = old_fn.__name__
        return on_contingency


_MEASURE_CLASSES = {2: BigramAssocMeasures, 3: TrigramAssocMeasures, 4: QuadgramAssocMeasures}


def _measure_names(order):
    names = list(_COMMON_MEASURES)
    if order == 2:
        names += [n for n in _BIGRAM_MEASURES if n not in names]
    return names


def _measure_index(classes):
    """``{order: {(function, owner): name}}`` for the measures of the given classes, keyed the
    way a measure passed as ``Class.name`` arrives (bound classmethod or plain function)."""
    index = {}
    for order, cls in classes.items():
        entries = index.setdefault(order, {})
        for name in _measure_names(order):
            member = getattr(cls, name, None)
            if member is not None:
                entries[
                    (getattr(member, "__func__", member), getattr(member, "__self__", None))
                ] = name
    return index


_OUR_MEASURES = _measure_index(_MEASURE_CLASSES)
_nltk_measures = None


def _native_measure(score_fn, order):
    """The name of the measure ``score_fn`` is, if it is one of ours or NLTK's own for this
    order (then Rust computes it for all n-grams); None for any other function."""
    global _nltk_measures
    key = (getattr(score_fn, "__func__", score_fn), getattr(score_fn, "__self__", None))
    try:
        name = _OUR_MEASURES[order].get(key)
    except TypeError:  # an unhashable callable
        return None
    if name is not None:
        return name
    association = _sys.modules.get("nltk.metrics.association")
    if association is None:
        return None
    if _nltk_measures is None:
        _nltk_measures = _measure_index(
            {
                2: association.BigramAssocMeasures,
                3: association.TrigramAssocMeasures,
                4: association.QuadgramAssocMeasures,
            }
        )
    return _nltk_measures[order].get(key)


# --------------------------------------------------------------------------------------------
# Finders


def _nltk_sorted(scored):
    """NLTK's order of scored n-grams: decreasing score, then the n-gram."""
    return sorted(scored, key=lambda t: (-t[1], t[0]))


class AbstractCollocationFinder:
    """Collects n-gram candidates and their frequencies, filters and ranks them (NLTK's
    ``AbstractCollocationFinder``). Build one with ``from_words`` or ``from_documents``."""

    default_ws = 2
    _order = 2

    @classmethod
    def _from_counts(cls, counts):
        finder = cls.__new__(cls)
        finder._counts = counts
        return finder

    @classmethod
    def _from_tables(cls, window_size, tables):
        counts = NgramCounts.from_tables(
            cls._order, window_size, [(name, _items_of(t)) for name, t in tables]
        )
        return cls._from_counts(counts)

    @classmethod
    def _check_window(cls, window_size):
        if window_size < cls._order:
            raise ValueError(f"Specify window_size at least {cls._order}")

    @classmethod
    def from_words(cls, words, window_size=None):
        """Counts the n-grams of ``words`` (an iterable of ``str`` or other hashable words;
        ``None`` is padding) within windows of ``window_size`` words (default: the n-gram
        order); wider windows count the n-grams of non-adjacent words, as NLTK does."""
        window_size = cls.default_ws if window_size is None else window_size
        cls._check_window(window_size)
        return cls._from_counts(NgramCounts.from_words(cls._order, window_size, words))

    @classmethod
    def from_documents(cls, documents):
        """Counts the n-grams of each document (an iterable of words) separately: no n-gram
        spans two documents."""
        return cls._from_counts(NgramCounts.from_documents(cls._order, cls.default_ws, documents))

    # NLTK sets these as attributes; here they follow the counts.
    @property
    def N(self):
        """The total word count the measures use (``word_fd.N()``)."""
        return self._counts.n

    word_fd = _table_view("word_fd", "Word frequencies (a ``FreqDistView``).")

    ngram_fd = _table_view(
        "ngram_fd", "Frequencies of the candidate n-grams, after filters (a ``FreqDistView``)."
    )

    @property
    def counts(self):
        """The native ``NgramCounts`` behind this finder."""
        return self._counts

    def apply_freq_filter(self, min_freq):
        """Removes candidate n-grams whose frequency is below ``min_freq``."""
        self._counts.apply_freq_filter(float(min_freq))

    def apply_word_filter(self, fn):
        """Removes candidate n-grams containing a word ``w`` for which ``fn(w)`` is true.
        ``fn`` is called once per distinct word of the candidates."""
        ids, words = self._counts.candidate_words()
        self._counts.drop_words([i for i, w in zip(ids, words) if fn(w)])

    def apply_ngram_filter(self, fn):
        """Removes candidate n-grams ``(w1, w2, ...)`` for which ``fn(w1, w2, ...)`` is true."""
        ngrams = self._counts.table_keys("ngram_fd")
        self._counts.drop_mask([bool(fn(*ngram)) for ngram in ngrams])

    def score_ngram(self, score_fn, *words):
        """The score of one candidate n-gram under ``score_fn``; None when it is not a
        candidate."""
        marginals = self._counts.marginals_of(tuple(words))
        if marginals is None:
            return None
        return score_fn(*marginals)

    def score_ngrams(self, score_fn):
        """``[(ngram, score)]`` for all candidates, by decreasing score; equal scores by the
        n-gram's words (Python's order; code-point order for ``str``)."""
        name = _native_measure(score_fn, self._order)
        if name is not None:
            return self._ranked(name)
        scored = []
        for ngram, marginals in self._in_nltk_order(self._counts.marginals_list()):
            score = score_fn(*marginals)
            if score is not None:
                scored.append((ngram, score))
        return _nltk_sorted(scored)

    def nbest(self, score_fn, n):
        """The ``n`` best candidates under ``score_fn``."""
        name = _native_measure(score_fn, self._order)
        if name is not None and isinstance(n, int) and n >= 0:
            return [ngram for ngram, _ in self._ranked(name, n)]
        return [ngram for ngram, _ in self.score_ngrams(score_fn)[:n]]

    def _ranked(self, name, limit=None):
        """The candidates scored natively by the measure ``name``, best first (the ``limit``
        best if given)."""
        counts = self._counts
        if not counts.has_objects:
            return counts.rank(name, _COMPENSATED_SUM, limit)
        ranks = self._word_ranks()
        if ranks is not None:
            return counts.rank(name, _COMPENSATED_SUM, limit, ranks)
        scored = counts.rank(name, _COMPENSATED_SUM, None, None, False)
        return _nltk_sorted(self._in_nltk_order(scored))[:limit]

    def _word_ranks(self):
        """Each word id's position among the words in Python's order, when the words are
        totally ordered (each strictly below the next once sorted); None otherwise (then
        NLTK's sort itself decides, see ``_ranked``)."""
        cached = getattr(self, "_word_ranks_cache", False)
        if cached is not False:
            return cached
        words = self._counts.words()
        ranks = None
        try:
            order = sorted(range(len(words)), key=words.__getitem__)
            if all(words[a] < words[b] for a, b in zip(order, order[1:])):
                ranks = [0] * len(words)
                for position, word_id in enumerate(order):
                    ranks[word_id] = position
        except TypeError:
            pass
        self._word_ranks_cache = ranks
        return ranks

    def _in_nltk_order(self, pairs):
        """``(ngram, value)`` pairs (in table order) in the order NLTK scores the n-grams:
        ``ngram_fd``'s iteration order, by decreasing count. Only words that are not totally
        ordered make that order matter to the sort."""
        if not self._counts.has_objects:
            return pairs
        value_of = dict(pairs)
        return [
            (ngram, value_of[ngram])
            for ngram, _ in self.ngram_fd.most_common()
            if ngram in value_of
        ]

    def above_score(self, score_fn, min_score):
        """Yields the candidates whose score exceeds ``min_score``, best first."""
        for ngram, score in self.score_ngrams(score_fn):
            if score > min_score:
                yield ngram
            else:
                break

    def to_csv(self, score_fn, path=None, n=None):
        """The scored candidates as CSV (see ``to_csv``); only the ``n`` best if given."""
        scored = self.score_ngrams(score_fn) if n is None else self._scored_best(score_fn, n)
        return to_csv(scored, path)

    def to_dataframe(self, score_fn, n=None):
        """The scored candidates as a pandas DataFrame (see ``to_dataframe``)."""
        scored = self.score_ngrams(score_fn) if n is None else self._scored_best(score_fn, n)
        return to_dataframe(scored, self._order)

    def _scored_best(self, score_fn, n):
        name = _native_measure(score_fn, self._order)
        if name is not None:
            return self._ranked(name, n)
        return self.score_ngrams(score_fn)[:n]

    def __repr__(self):
        return (
            f"<{type(self).__name__} with {len(self.ngram_fd)} candidates, "
            f"{self.word_fd.B()} words, N={self.N}>"
        )


class BigramCollocationFinder(AbstractCollocationFinder):
    """Finds and ranks bigram collocations (NLTK's ``BigramCollocationFinder``). With
    ``window_size > 2``, pairs of words up to ``window_size - 1`` apart are counted, and the
    measures see counts scaled by ``1 / (window_size - 1)`` (Church and Hanks 1990)."""

    default_ws = 2
    _order = 2

    def __init__(self, word_fd, bigram_fd, window_size=2):
        """From frequency tables (``FreqDist``s, dicts or views) of words and bigrams."""
        built = self._from_tables(window_size, [("word_fd", word_fd), ("ngram_fd", bigram_fd)])
        self._counts = built._counts

    @property
    def window_size(self):
        """The window the bigrams were counted in."""
        return self._counts.window_size


class TrigramCollocationFinder(AbstractCollocationFinder):
    """Finds and ranks trigram collocations (NLTK's ``TrigramCollocationFinder``); keeps
    ``bigram_fd`` (w1 w2) and ``wildcard_fd`` (w1 _ w3) for the measures."""

    default_ws = 3
    _order = 3

    def __init__(self, word_fd, bigram_fd, wildcard_fd, trigram_fd):
        """From frequency tables of words, bigrams, wildcard pairs and trigrams."""
        built = self._from_tables(
            3,
            [
                ("word_fd", word_fd),
                ("bigram_fd", bigram_fd),
                ("wildcard_fd", wildcard_fd),
                ("ngram_fd", trigram_fd),
            ],
        )
        self._counts = built._counts

    bigram_fd = _table_view("bigram_fd", "Frequencies of (w1, w2) pairs.")

    wildcard_fd = _table_view("wildcard_fd", "Frequencies of (w1, w3) pairs with any word between.")

    def bigram_finder(self):
        """A bigram finder over this finder's words and bigrams (filters are not carried
        over)."""
        return BigramCollocationFinder._from_counts(self._counts.bigram_counts())


class QuadgramCollocationFinder(AbstractCollocationFinder):
    """Finds and ranks quadgram collocations (NLTK's ``QuadgramCollocationFinder``); keeps the
    tables ``ii``, ``iii``, ``ixi``, ``ixxi``, ``iixi``, ``ixii`` (i = word, x = any word)."""

    default_ws = 4
    _order = 4

    ii = _table_view("ii", "Frequencies of (w1, w2).")
    iii = _table_view("iii", "Frequencies of (w1, w2, w3).")
    ixi = _table_view("ixi", "Frequencies of (w1, w3), any word between.")
    ixxi = _table_view("ixxi", "Frequencies of (w1, w4), any two words between.")
    iixi = _table_view("iixi", "Frequencies of (w1, w2, w4).")
    ixii = _table_view("ixii", "Frequencies of (w1, w3, w4).")

    def __init__(self, word_fd, quadgram_fd, ii, iii, ixi, ixxi, iixi, ixii):
        """From frequency tables, in NLTK's argument order."""
        built = self._from_tables(
            4,
            [
                ("word_fd", word_fd),
                ("ngram_fd", quadgram_fd),
                ("ii", ii),
                ("iii", iii),
                ("ixi", ixi),
                ("ixxi", ixxi),
                ("iixi", iixi),
                ("ixii", ixii),
            ],
        )
        self._counts = built._counts


# --------------------------------------------------------------------------------------------
# Output


def _columns(order):
    return [f"w{i + 1}" for i in range(order)] + ["score"]


def _order_of(scored, default=2):
    return len(scored[0][0]) if scored else default


def to_csv(scored, path=None):
    """Writes ``[(ngram, score)]`` as CSV with columns ``w1, ..., wn, score`` (scores in
    Python's shortest round-trip form). Returns the text when ``path`` is None, else writes the
    file (UTF-8) and returns None. ``path`` may also be an open text file."""
    rows = [list(ngram) + [repr(float(score))] for ngram, score in scored]
    header = _columns(_order_of(scored))
    if path is None:
        buffer = _io.StringIO()
        writer = _csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        return buffer.getvalue()
    if hasattr(path, "write"):
        writer = _csv.writer(path, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        return None
    with _atomic_open(path, "w", encoding="utf-8", newline="") as f:
        writer = _csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return None


def to_dataframe(scored, order=None):
    """``[(ngram, score)]`` as a pandas DataFrame with columns ``w1, ..., wn, score`` (needs
    pandas; raises ImportError naming it otherwise)."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - pandas is installed where we test
        raise ImportError("to_dataframe needs pandas (pip install pandas)") from e
    order = order or _order_of(scored)
    columns = _columns(order)
    return pd.DataFrame([list(ngram) + [score] for ngram, score in scored], columns=columns)


del _name, _doc
