"""Stopword lists for English, German, French, Polish, Spanish, Italian, Dutch, Portuguese and
Russian, written for tokenmill (nothing to download), and the common collocation filter.

    from tokenmill.stopwords import stopwords, words, StopwordFilter

    stop = stopwords("en")                      # a new set: add to it freely
    words("english")                            # NLTK-style: a sorted list
    finder.apply_word_filter(StopwordFilter("en"))   # len(w) < 3 or w.lower() in stopwords

Languages are named by ISO 639-1 code ("en") or English name ("english"). ``add(language,
words)`` extends a language for the rest of the process (or defines a new one); ``load(path)``
reads a list in the same format as the bundled ones: one or more words per line, ``#`` starts a
comment.
"""

from __future__ import annotations

from pathlib import Path as _Path

__all__ = ["languages", "fileids", "words", "stopwords", "add", "load", "StopwordFilter"]

_DATA = _Path(__file__).resolve().parent / "data" / "stopwords"

_NAMES = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "pl": "polish",
    "es": "spanish",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
    "ru": "russian",
}
_CODES = {name: code for code, name in _NAMES.items()}

_loaded: dict = {}
_extra: dict = {}


def _parse(text):
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        found.extend(word.lower() for word in line.split())
    return found


def load(path):
    """The words of a stopword file (one or more per line, ``#`` comments), lowercased."""
    with open(path, encoding="utf-8") as f:
        return _parse(f.read())


def _code(language):
    key = str(language).lower()
    if key in _NAMES or key in _extra:
        return key
    if key in _CODES:
        return _CODES[key]
    raise LookupError(f"no stopword list for {language!r}; languages: {', '.join(languages())}")


def languages():
    """The language codes with a list (bundled ones and those added with ``add``)."""
    return sorted(set(_NAMES) | set(_extra))


def fileids():
    """The bundled languages by English name, as NLTK's ``stopwords.fileids()``."""
    return sorted(_NAMES.values())


def _base(code):
    if code not in _loaded:
        path = _DATA / f"{code}.txt"
        _loaded[code] = frozenset(load(path)) if path.exists() else frozenset()
    return _loaded[code]


def stopwords(language="en"):
    """A new ``set`` of the stopwords of ``language`` (code or English name), including any
    words added with ``add``."""
    code = _code(language)
    return set(_base(code)) | _extra.get(code, set())


def words(language=None):
    """The stopwords of ``language`` as a sorted list (all languages when None), like NLTK's
    ``stopwords.words(fileid)``."""
    if language is None:
        merged = set()
        for code in languages():
            merged |= stopwords(code)
        return sorted(merged)
    return sorted(stopwords(language))


def add(language, new_words):
    """Adds words (lowercased) to ``language`` for this process; an unknown code defines a new
    language."""
    key = str(language).lower()
    code = _CODES.get(key, key)
    _extra.setdefault(code, set()).update(w.lower() for w in new_words)


class StopwordFilter:
    """The usual collocation word filter: true for a word shorter than ``min_len`` or whose
    lowercase form is a stopword of ``language`` (or in ``extra``)::

        finder.apply_word_filter(StopwordFilter("en"))  # len(w) < 3 or w.lower() in stopwords
    """

    __slots__ = ("words", "min_len")

    def __init__(self, language="en", min_len=3, extra=()):
        self.words = frozenset(stopwords(language) | {w.lower() for w in extra})
        self.min_len = min_len

    def __call__(self, word):
        return len(word) < self.min_len or word.lower() in self.words

    def __repr__(self):
        return f"StopwordFilter({len(self.words)} words, min_len={self.min_len})"
