"""Word level: word tokenization for many languages, sentence splitting, character n-grams.

::

    from tokenmill.words import WordTokenizer, SentenceSplitter, char_ngrams, evaluate
    WordTokenizer("en").tokenize("Dr. Watson's car can't go.")
    # ['Dr.', 'Watson', "'s", 'car', 'ca', "n't", 'go', '.']
    WordTokenizer("fr").tokenize_with_offsets("l'hôtel")      # [("l'", 0, 2), ('hôtel', 2, 7)]
    SentenceSplitter("en").split("Mr. Smith left. He was late.")
    char_ngrams("teach multtimedia", 3)  # ['#tea', 'eac', 'ach', '#mul', ...]

``WordTokenizer`` cuts text at Unicode word boundaries (UAX #29) and applies per-language rules
on top (built in for ``LANGUAGES``; any other code gets the plain UAX #29 base): abbreviations,
numbers, times and dates, clitics and elision, hyphenated words, quotes of every language,
ellipses, URLs, e-mail addresses, hashtags and emoji sequences. Offsets are character offsets
into the given ``str``; every non-whitespace character is covered by exactly one token.

``SentenceSplitter`` applies Punkt parameters (Kiss & Strunk): a language's abbreviation list
by default; ``train`` learns abbreviations, collocations and sentence starters from raw text the
way NLTK's ``PunktTrainer`` does, and ``save`` / ``load`` keep them as JSON.

``ChineseSegmenter`` segments Chinese (and, as ``JapaneseSegmenter``, Japanese) text, which has
no spaces between words: a dictionary with frequencies, the maximum-probability path through the
graph of dictionary words, and a character-level HMM for unknown words — jieba's method, reading
jieba's dictionary format. ``WordTokenizer("zh")`` and ``WordTokenizer("ja")`` use it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple, Union

from tokenmill._native import (
    FormatError,
    InvalidArgumentError,
    TokenmillIOError,
    words as _native_module,
)

if TYPE_CHECKING:
    from tokenmill._native_words import (
        ChineseSegmenter,
        SentenceSplitter,
        WordTokenizer,
        char_ngrams,
    )
else:
    WordTokenizer = _native_module.WordTokenizer
    SentenceSplitter = _native_module.SentenceSplitter
    ChineseSegmenter = _native_module.ChineseSegmenter
    char_ngrams = _native_module.char_ngrams

WordTokenizer.__doc__ = """\
WordTokenizer(language="en", penn_treebank=False, split_clitics=True, abbreviations=None,
rules=None)

Rule-based word tokenizer with offsets.

- ``language``: a code such as "en", "de", "fr", "pl", "es", "it", "nl", "pt", "ru" (built-in
  rules); any other code tokenizes by Unicode word boundaries (UAX #29) only.
- ``penn_treebank``: Penn Treebank conventions as NLTK's tokenizers: straight double quotes
  become `` and '', "cannot" → "can" "not", "gonna" → "gon" "na"; offsets still point at the text.
- ``split_clitics``: split clitics and elisions ("ca" "n't", "Watson" "'s", "l'" "hôtel");
  False keeps "can't" and "l'hôtel" whole.
- ``abbreviations``: more abbreviations (without the final period). A lowercase entry matches in
  any case; an entry with an uppercase letter matches exactly.
- ``rules``: a JSON string of rules (as ``rules_json()`` returns) instead of the built-in ones.

Methods: ``tokenize(text) -> list[str]``, ``tokenize_with_offsets(text) -> list[(token, start,
end)]`` (character offsets), ``tokenize_batch(texts)``, ``tokenize_with_offsets_batch(texts)``
(parallel, GIL released), ``add_abbreviations(list)``, ``rules_json()``. Calling the object is
``tokenize``.

``tokenize_spans(text) -> (starts, ends)``: the same tokens as two NumPy int64 arrays of
character offsets, with no Python object per token — several times faster than the list of
tuples on long texts (``text[starts[i]:ends[i]]`` is token i as written in the text; the Penn
Treebank spellings `` and '' are not applied). A long text given to any single-text method is
tokenized in blocks of about 64 kB cut at spaces, with results identical to one pass.
"""

SentenceSplitter.__doc__ = """SentenceSplitter(language="en")

Punkt sentence splitter. ``language`` seeds the abbreviation list (``None``: start empty, as a
fresh NLTK ``PunktTrainer``).

- ``split(text) -> list[str]``, ``spans(text) -> list[(start, end)]`` (character offsets, from a
  sentence's first to its last non-space character), ``split_batch``, ``spans_batch``.
- ``train(text_or_texts, finalize=True)``: learn abbreviations, collocations and sentence
  starters from raw text (counts accumulate over calls); ``finalize_training()`` after
  ``train(..., finalize=False)``.
- ``abbreviations``, ``sentence_starters``, ``collocations``: what it knows (sorted).
- ``save(path)`` / ``SentenceSplitter.load(path)``, ``to_json()`` / ``from_json(s)``.
"""

ChineseSegmenter.__doc__ = """\
ChineseSegmenter(dictionary=None, hmm=None, numbers=True, language="zh")

Word segmentation for Chinese (and Japanese) text: a dictionary of words with frequencies, the
maximum-probability path through the graph of the dictionary words found in the text, and a
character-level BMES hidden Markov model that re-cuts runs of characters the dictionary leaves
as single characters (jieba's method). Numbers (ASCII and fullwidth, with decimal points and
percent), Latin words, runs of dashes and ellipses are kept whole by rule; whitespace separates.

- ``dictionary``: ``None`` for the built-in word list (Chinese: the headwords of CC-CEDICT,
  CC BY-SA 4.0; Japanese: IPADIC's surface forms with frequencies from its word costs, NAIST /
  ICOT licence; both shipped with tokenmill — nothing to download), or the path of
  a main dictionary in jieba's format (``word [freq] [tag]`` per line, a missing frequency
  counts as 1); the HMM is then trained from that dictionary's words, weighted by frequency.
- ``hmm``: re-cut unknown words with the HMM (default: True for Chinese, False for Japanese).
- ``numbers``: number + suffix words (１９９８年, ２０５．１万) where the dictionary has such
  words, and runs of Chinese numerals (二○○一年).
- ``language``: "zh" or "ja" (Japanese: runs of one character type — kanji, hiragana,
  katakana — are candidate words besides the dictionary's, and there is no HMM by default).

Scoring, as jieba: a dictionary word scores ``ln(freq) - ln(total)``, any other piece
``-ln(total)``; the path with the highest sum wins, and among equal scores the path whose first
word is longer (jieba's tie rule). On the same dictionary, with ``hmm=False`` and
``numbers=False``, runs of Han characters come out exactly as ``jieba.cut(HMM=False)``.

Methods: ``cut(text) -> list[str]``, ``cut_with_offsets(text) -> list[(word, start, end)]``
(character offsets), ``cut_batch(texts)``, ``cut_with_offsets_batch(texts)`` (parallel, GIL
released); ``load_dictionary(path)`` adds a user dictionary in jieba's format (as
``jieba.load_userdict``: a word without frequency gets ``suggest_freq(word)``, the frequency
that makes it win over its current cut; malformed lines raise ``FormatError`` naming file and
line); ``add_word(word, freq=None)``, ``del_word(word)``, ``suggest_freq(word)``, ``freq(word)``,
``word in segmenter``, ``len(segmenter)``;
``train(files, format="segmented")`` replaces words and HMM with those learned from files —
``"segmented"``: one sentence per line, words separated by spaces (word counts and HMM
statistics); ``"words"``: a word list in jieba's format (a missing frequency counts as 1);
``train_from_iterator(lines, format=...)``; ``save(path)`` / ``ChineseSegmenter.load(path)``,
``to_json()`` / ``from_json(s)`` (pickling works too; a Japanese segmenter loads as a
``JapaneseSegmenter``); ``ChineseSegmenter.empty(language)``.
"""


class JapaneseSegmenter(ChineseSegmenter):
    """JapaneseSegmenter(dictionary=None, hmm=False, numbers=True)

    ``ChineseSegmenter`` with ``language="ja"``: candidate words are the dictionary's plus runs
    of one character type (katakana always; kanji or hiragana where no dictionary word starts);
    numbers and Latin words by rule. ``dictionary=None`` uses the built-in IPADIC word list
    (325,855 surface forms, each with the frequency ``exp(-cost / 800)`` of its cheapest IPADIC
    entry, scaled); a jieba-format file, ``load_dictionary`` / ``add_word`` / ``train`` add or
    replace words. ``ChineseSegmenter.empty("ja")`` has no words: text is cut at changes of
    character type.
    """

    def __new__(
        cls,
        dictionary: Optional[Union[str, os.PathLike]] = None,
        hmm: bool = False,
        numbers: bool = True,
    ) -> JapaneseSegmenter:
        return super().__new__(cls, dictionary, hmm, numbers, "ja")


_DEFAULT_WORD_LISTS = {"zh": "cc_cedict_words.txt.gz", "ja": "ipadic_words.txt.gz"}


def _default_word_list(language: str) -> Optional[str]:
    """The built-in word list of a language (one word per line), or None (called by the native
    module once per process)."""
    name = _DEFAULT_WORD_LISTS.get(language)
    if name is None:
        return None
    import gzip

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", language, name)
    with open(path, "rb") as f:
        return gzip.decompress(f.read()).decode("utf-8")


LANGUAGES: Tuple[str, ...] = tuple(_native_module.LANGUAGES)

__all__ = [
    "WordTokenizer",
    "SentenceSplitter",
    "ChineseSegmenter",
    "JapaneseSegmenter",
    "char_ngrams",
    "evaluate",
    "Scores",
    "LANGUAGES",
]


@dataclass(frozen=True)
class Scores:
    """Word-boundary scores: a token counts as correct when its start and end both match gold."""

    precision: float
    recall: float
    f1: float
    correct: int
    predicted: int
    gold: int
    sentences: int


Span = Tuple[int, int]

# Gold unit: the surface token's span and, for a multi-word token whose words spell it out
# ("don't" = "do" + "n't"), the words' spans as an equally acceptable segmentation.
_GoldUnit = Tuple[Span, Optional[List[Span]]]


def _format_error(path: str, line: int, message: str) -> FormatError:
    return FormatError(f"{path}:line {line}: {message}")


def _read_lines(path: str) -> Iterator[Tuple[int, str]]:
    try:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    yield number, raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as e:
                    raise _format_error(
                        path, number, f"invalid UTF-8 at byte {e.start} of the line"
                    ) from None
    except OSError as e:
        raise TokenmillIOError(f"{path}: {e.strerror or e}") from None


def _conllu_sentences(path: str) -> Iterator[Tuple[str, List[_GoldUnit]]]:
    """(text, gold units) per sentence of a CoNLL-U file."""
    text: Optional[str] = None
    rows: List[Tuple[int, List[str]]] = []
    first_line = 0

    def finish() -> Optional[Tuple[str, List[_GoldUnit]]]:
        if not rows:
            return None
        if text is None:
            raise _format_error(path, first_line, "sentence without a '# text = ...' line")
        return text, _align_conllu(path, text, rows)

    for number, line in _read_lines(path):
        if not line.strip():
            done = finish()
            if done:
                yield done
            text, rows, first_line = None, [], 0
            continue
        if not first_line:
            first_line = number
        if line.startswith("#"):
            if line.startswith("# text =") or line.startswith("# text="):
                text = line.split("=", 1)[1].strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise _format_error(
                path, number, f"expected 10 tab-separated columns, found {len(cols)}"
            )
        rows.append((number, cols))
    done = finish()
    if done:
        yield done


def _align_conllu(path: str, text: str, rows: List[Tuple[int, List[str]]]) -> List[_GoldUnit]:
    units: List[_GoldUnit] = []
    pos = 0
    i = 0
    while i < len(rows):
        number, cols = rows[i]
        ident, form = cols[0], cols[1]
        if "." in ident:  # empty node: no surface text
            i += 1
            continue
        if "-" in ident:
            try:
                first, last = (int(x) for x in ident.split("-"))
            except ValueError:
                raise _format_error(path, number, f"bad multi-word token id {ident!r}") from None
            words: List[str] = []
            j = i + 1
            while (
                j < len(rows)
                and "." not in rows[j][1][0]
                and "-" not in rows[j][1][0]
                and first <= _int_id(path, rows[j]) <= last
            ):
                words.append(rows[j][1][1])
                j += 1
            span = _find_form(path, number, text, form, pos)
            alt = None
            if "".join(words) == form and len(words) > 1:
                alt, p = [], span[0]
                for w in words:
                    alt.append((p, p + len(w)))
                    p += len(w)
            units.append((span, alt))
            pos = span[1]
            i = j
            continue
        _int_id(path, rows[i])
        span = _find_form(path, number, text, form, pos)
        units.append((span, None))
        pos = span[1]
        i += 1
    return units


def _int_id(path: str, row: Tuple[int, List[str]]) -> int:
    try:
        return int(row[1][0])
    except ValueError:
        raise _format_error(path, row[0], f"bad token id {row[1][0]!r}") from None


def _find_form(path: str, number: int, text: str, form: str, pos: int) -> Span:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if text.startswith(form, pos):
        return pos, pos + len(form)
    # Some treebanks drop spaces inside a form's text ("10 000" as "10000"): match ignoring them.
    end, k = pos, 0
    while end < len(text) and k < len(form):
        if text[end] == form[k]:
            k += 1
        elif not text[end].isspace():
            break
        end += 1
    if k == len(form) and form:
        return pos, end
    raise _format_error(
        path, number, f"token {form!r} does not match the '# text' line at character {pos}"
    )


def _sighan_sentences(path: str) -> Iterator[Tuple[str, List[_GoldUnit]]]:
    """SIGHAN-style segmented files: one sentence per line, words separated by whitespace."""
    for _number, line in _read_lines(path):
        words = line.split()
        if not words:
            continue
        units: List[_GoldUnit] = []
        pos = 0
        for w in words:
            units.append(((pos, pos + len(w)), None))
            pos += len(w)
        yield "".join(words), units


_PTB_SPELLINGS = {
    "``": ('"', "\u201c", "\u201e", "\u00ab", "`"),
    "''": ('"', "\u201d", "\u00bb", "'"),
    "-LRB-": ("(",),
    "-RRB-": (")",),
    "-LSB-": ("[",),
    "-RSB-": ("]",),
    "-LCB-": ("{",),
    "-RCB-": ("}",),
}


def _spans_of(text: str, tokens: Sequence) -> List[Span]:
    """Spans of a tokenizer's output: (token, start, end) tuples as given, strings located in
    text."""
    spans: List[Span] = []
    pos = 0
    for tok in tokens:
        if isinstance(tok, tuple):
            spans.append((int(tok[1]), int(tok[2])))
            continue
        tok = str(tok)
        if not tok.strip():
            continue
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if text.startswith(tok, pos):
            spans.append((pos, pos + len(tok)))
            pos += len(tok)
            continue
        matched = False
        for alternative in _PTB_SPELLINGS.get(tok, ()):
            if text.startswith(alternative, pos):
                spans.append((pos, pos + len(alternative)))
                pos += len(alternative)
                matched = True
                break
        if matched:
            continue
        found = text.find(tok, pos, pos + len(tok) + 20)
        if found >= 0:
            spans.append((found, found + len(tok)))
            pos = found + len(tok)
        else:
            spans.append((-1, -1))  # a token the text does not contain: never correct
    return spans


def _gold_sentences(path: str, format: str) -> Iterator[Tuple[str, List[_GoldUnit]]]:
    if format == "auto":
        format = "conllu" if str(path).endswith(".conllu") else "sighan"
    if format == "conllu":
        return _conllu_sentences(path)
    if format == "sighan":
        return _sighan_sentences(path)
    raise InvalidArgumentError(f"format must be 'conllu', 'sighan' or 'auto', not {format!r}")


def evaluate(
    tokenizer: Union[Callable[[str], Sequence], WordTokenizer, ChineseSegmenter],
    gold: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
    format: str = "auto",
    max_sentences: Optional[int] = None,
) -> Scores:
    """Precision / recall / F1 of word boundaries against gold data, for any tokenizer.

    ``tokenizer``: a ``WordTokenizer``, a ``ChineseSegmenter`` or any callable taking a sentence and
    returning tokens —
    strings (located in the text left to right; PTB spellings `` '' -LRB- are understood) or
    ``(token, start, end)`` tuples with character offsets.
    ``gold``: one path or several. ``format``: "conllu" (Universal Dependencies: the ``# text``
    line of each sentence against its tokens), "sighan" (one sentence per line, words separated
    by spaces) or "auto" (by the file extension: ``.conllu`` or else SIGHAN).

    A predicted token is correct when its start and end both match a gold token. A multi-word
    token whose words spell it out ("don't" = "do" + "n't") counts as matched either whole or as
    its words, whichever the tokenizer produced; others ("du" = "de" + "le") count whole.
    Malformed gold files raise ``FormatError`` naming the file and line.
    """
    paths = [gold] if isinstance(gold, (str, os.PathLike)) else list(gold)
    sentences: List[Tuple[str, List[_GoldUnit]]] = []
    for p in paths:
        for sentence in _gold_sentences(os.fspath(p), format):
            if max_sentences is not None and len(sentences) >= max_sentences:
                break
            sentences.append(sentence)
    texts = [s[0] for s in sentences]
    if isinstance(tokenizer, WordTokenizer):
        predictions: Sequence[Sequence] = tokenizer.tokenize_with_offsets_batch(texts)
    elif isinstance(tokenizer, ChineseSegmenter):
        predictions = tokenizer.cut_with_offsets_batch(texts)
    else:
        predictions = [tokenizer(t) for t in texts]
    correct = predicted = gold_count = 0
    for (text, units), tokens in zip(sentences, predictions):
        spans = _spans_of(text, tokens)
        predicted += len(spans)
        pred = set(spans)
        pred.discard((-1, -1))
        for span, alt in units:
            if alt is not None and all(a in pred for a in alt):
                gold_count += len(alt)
                correct += len(alt)
            else:
                gold_count += 1
                correct += span in pred
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold_count if gold_count else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, correct, predicted, gold_count, len(sentences))
