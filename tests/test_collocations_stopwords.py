"""tokenmill.stopwords: bundled lists for nine languages, extendable, and the common filter."""

from __future__ import annotations

import pytest
from tokenmill import stopwords as sw

# Each language: its ISO 639-1 code, its NLTK-style name and function words its list must hold.
LANGUAGES = [
    ("en", "english", ["the", "and", "of", "which"]),
    ("de", "german", ["der", "und", "nicht", "über"]),
    ("fr", "french", ["le", "et", "être", "qu"]),
    ("pl", "polish", ["się", "nie", "że", "który"]),
    ("es", "spanish", ["el", "que", "también"]),
    ("it", "italian", ["il", "che", "perché"]),
    ("nl", "dutch", ["de", "het", "niet"]),
    ("pt", "portuguese", ["não", "que", "também"]),
    ("ru", "russian", ["и", "не", "что"]),
]


@pytest.mark.parametrize("code,name", sorted((code, name) for code, name, _ in LANGUAGES))
def test_every_language_has_a_list(code, name):
    words = sw.stopwords(code)
    assert len(words) >= 80
    assert words == sw.stopwords(name) == set(sw.words(name))
    assert all(w == w.lower() and w.strip() == w and " " not in w for w in words)
    assert sw.words(code) == sorted(words)


@pytest.mark.parametrize(
    "code,words", [pytest.param(code, words, id=code) for code, _, words in LANGUAGES]
)
def test_core_function_words_present(code, words):
    assert set(words) <= sw.stopwords(code), code


def test_extending_and_new_languages():
    before = sw.stopwords("en")
    assert "holmes" not in before
    returned = sw.stopwords("en")
    returned.add("scratch")  # a new set each call: the caller's additions stay local
    assert "scratch" not in sw.stopwords("en")
    sw.add("english", ["Watson"])
    assert "watson" in sw.stopwords("en")
    sw.add("xx", ["foo", "Bar"])
    assert sw.stopwords("xx") == {"foo", "bar"}
    assert "xx" in sw.languages()
    with pytest.raises(LookupError, match="no stopword list"):
        sw.stopwords("klingon")
    assert set(sw.fileids()) == {name for _, name, _ in LANGUAGES}
    assert set(sw.words()) >= sw.stopwords("de") | sw.stopwords("ru")


def test_load_reads_the_file_format(tmp_path):
    path = tmp_path / "mine.txt"
    path.write_text("# comment\nAlpha beta\n\ngamma  # trailing\n", encoding="utf-8")
    assert sw.load(path) == ["alpha", "beta", "gamma"]


def test_filter_is_the_common_collocation_filter():
    stop = sw.stopwords("en")
    f = sw.StopwordFilter("en")
    for word in ["a", "of", "The", "THE", "Holmes", "Baker", "it", "upon", "Street"]:
        assert f(word) == (len(word) < 3 or word.lower() in stop)
    assert sw.StopwordFilter("en", min_len=1, extra=["Holmes"])("holmes")
    assert not sw.StopwordFilter("en", min_len=1)("x")
