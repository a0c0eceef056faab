"""Thread safety of the objects whose batches release the GIL (issue 15 §2).

Eight reader threads run a batch over and over while one thread keeps changing the object
between two states A and B. Every result must equal a single-threaded run on A or on B (a whole
batch sees one state, never a mix), and no call may raise (before, `RuntimeError: Already
borrowed`). The readers run for a fixed number of rounds, so the test ends however the threads
are scheduled; the timeout marker catches a deadlock.
"""

from __future__ import annotations

import threading

import pytest
from conftest import read_sample, shared_path
from tokenmill import Tokenizer
from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder
from tokenmill.models import BPE
from tokenmill.normalizers import Lowercase
from tokenmill.pre_tokenizers import Whitespace
from tokenmill.processors import BertProcessing
from tokenmill.trainers import BpeTrainer
from tokenmill.words import ChineseSegmenter, SentenceSplitter, WordTokenizer

pytestmark = pytest.mark.timeout(300)

READERS = 8
ROUNDS = 12


def race(read, to_a, to_b, rounds: int = ROUNDS) -> list:
    """Results of `read()` from READERS threads, `rounds` each, while one thread alternates
    `to_a()` / `to_b()` until they are done. Re-raises the first exception of any thread."""
    done = threading.Event()
    errors: list[BaseException] = []
    results: list = []
    lock = threading.Lock()

    def reader():
        try:
            for _ in range(rounds):
                result = read()
                with lock:
                    results.append(result)
        except BaseException as e:
            errors.append(e)

    def mutator():
        try:
            while not done.is_set():
                to_b()
                to_a()
        except BaseException as e:
            errors.append(e)

    readers = [threading.Thread(target=reader) for _ in range(READERS)]
    writer = threading.Thread(target=mutator)
    writer.start()
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    done.set()
    writer.join()
    if errors:
        raise errors[0]
    assert len(results) == READERS * rounds
    return results


def check(read, to_a, to_b):
    """Races `read` against the mutator and checks every result against the two states."""
    to_a()
    expected_a = read()
    to_b()
    expected_b = read()
    to_a()
    assert expected_a != expected_b, "the two states must give different results"
    results = race(read, to_a, to_b)
    mixed = [r for r in results if r != expected_a and r != expected_b]
    assert not mixed, f"{len(mixed)} of {len(results)} results match neither state"


def check_one_change(read, change):
    """Races `read` against a mutator that keeps applying `change` (which cannot be undone, and
    changes nothing the second time): every result is the one before the change or after it."""
    before = read()
    results = race(read, lambda: None, change)
    after = read()
    assert before != after, "the change must change the results"
    mixed = [r for r in results if r != before and r != after]
    assert not mixed, f"{len(mixed)} of {len(results)} results match neither state"


@pytest.fixture(scope="module")
def english() -> list[str]:
    text = read_sample(
        shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"), 40_000
    )
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture()
def bert(bert_json):
    return Tokenizer.from_file(bert_json)


def ids_of(tok, texts):
    return [e.ids for e in tok.encode_batch(texts)]


def test_truncation_changes_while_encoding(bert, english):
    check(
        lambda: ids_of(bert, english),
        bert.no_truncation,
        lambda: bert.enable_truncation(max_length=8),
    )


def test_padding_changes_while_encoding(bert, english):
    check(lambda: ids_of(bert, english), bert.no_padding, lambda: bert.enable_padding(length=64))


def test_post_processor_swaps_while_encoding(bert, english):
    original = bert.post_processor

    def to_a():
        bert.post_processor = original

    def to_b():
        bert.post_processor = (
            BertProcessing(("[SEP]", 102), ("[CLS]", 101)) if original is None else None
        )

    check(lambda: ids_of(bert, english), to_a, to_b)


def test_normalizer_swaps_while_encoding(english):
    tok = Tokenizer(BPE())
    tok.pre_tokenizer = Whitespace()
    tok.add_tokens(["the", "The"])

    def to_a():
        tok.normalizer = None

    def to_b():
        tok.normalizer = Lowercase()

    check(lambda: ids_of(tok, english), to_a, to_b)


def test_added_tokens_while_encoding(bert, english):
    """`add_tokens` cannot be undone: the states are before the first add and after it."""
    check_one_change(lambda: ids_of(bert, english), lambda: bert.add_tokens(["the"]))


def test_shared_component_changes_while_encoding(bert, english):
    """A change made through a component object (`tok.normalizer.lowercase = ...`) reaches the
    tokenizer as a whole, between batches."""
    normalizer = bert.normalizer

    def to_a():
        normalizer.lowercase = True

    def to_b():
        normalizer.lowercase = False

    check(lambda: ids_of(bert, english), to_a, to_b)


def test_training_while_encoding(english):
    """Encoders go on with the old model while another thread trains, then get the new one."""
    tok = Tokenizer(BPE())
    tok.pre_tokenizer = Whitespace()
    before = ids_of(tok, english[:50])
    trainer = BpeTrainer(vocab_size=300, show_progress=False)
    errors: list[BaseException] = []
    results: list = []

    def encoder():
        try:
            for _ in range(20):
                results.append(ids_of(tok, english[:50]))
        except BaseException as e:
            errors.append(e)

    def trainer_thread():
        try:
            tok.train_from_iterator(english, trainer=trainer)
            trainer.vocab_size = 301
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=encoder) for _ in range(4)] + [
        threading.Thread(target=trainer_thread)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    after = ids_of(tok, english[:50])
    assert before != after
    assert all(r in (before, after) for r in results)


def test_word_tokenizer_abbreviations_while_tokenizing(english):
    words = WordTokenizer("en")
    texts = [line + " Xyzq. Next" for line in english]
    check_one_change(lambda: words.tokenize_batch(texts), lambda: words.add_abbreviations(["xyzq"]))


def test_sentence_splitter_abbreviations_while_splitting(english):
    splitter = SentenceSplitter("en")
    texts = [line + " Then Xyzq. Next one." for line in english]
    check_one_change(
        lambda: splitter.split_batch(texts), lambda: splitter.add_abbreviations(["xyzq"])
    )


def test_chinese_segmenter_words_added_and_deleted_while_cutting():
    lines = ["他来到了网易杭研大厦", "小明硕士毕业于中国科学院计算所，后在日本京都大学深造"] * 200
    segmenter = ChineseSegmenter()
    check(
        lambda: segmenter.cut_batch(lines),
        lambda: segmenter.del_word("杭研大厦"),
        lambda: segmenter.add_word("杭研大厦", 100000),
    )


def test_collocation_filters_while_ranking(english):
    words = " ".join(english).split()
    finder = BigramCollocationFinder.from_words(words)
    measure = BigramAssocMeasures.likelihood_ratio
    check_one_change(lambda: finder.nbest(measure, 50), lambda: finder.apply_freq_filter(3))


def test_concurrent_ranking_of_one_finder(english):
    """Two threads ranking the same finder (the str cache is shared) get the same answer."""
    finder = BigramCollocationFinder.from_words(" ".join(english).split())
    measure = BigramAssocMeasures.pmi
    expected = finder.nbest(measure, 100)
    results = race(lambda: finder.nbest(measure, 100), lambda: None, lambda: None)
    assert all(r == expected for r in results)
