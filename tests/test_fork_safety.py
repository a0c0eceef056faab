"""Fork safety of every batch path (issue 15 §2).

A process that ran a batch on tokenmill's thread pool forks; the child runs the same batch. The
child must finish with the parent's results: its pool's threads stayed in the parent, so it
makes its own (or, with ``TOKENIZERS_PARALLELISM`` unset, runs on one thread after
``tokenizers``' warning). Every child is waited for with a timeout, so a regression fails
instead of hanging. ``TOKENIZERS_PARALLELISM`` and ``TOKENMILL_NUM_THREADS`` are checked
against ``tokenizers``' behaviour where it has one (with parallelism on, ``tokenizers`` itself
deadlocks in such a child, so that case is only run on tokenmill).
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap

import pytest
import tokenmill
import tokenmill.sentencepiece as tsp
import tokenmill.tiktoken as ttk
from conftest import read_sample, shared_path
from tokenmill import Tokenizer, _native
from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder
from tokenmill.implementations import ByteLevelBPETokenizer
from tokenmill.models import BPE, Unigram
from tokenmill.pre_tokenizers import Whitespace
from tokenmill.trainers import BpeTrainer, UnigramTrainer
from tokenmill.words import ChineseSegmenter, SentenceSplitter, WordTokenizer

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
]

FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
CHILD_TIMEOUT = 60
WARNING = (
    "huggingface/tokenizers: The current process just got forked, after parallelism has already "
    "been used. "
    "Disabling parallelism to avoid deadlocks..."
)

#: name → zero-argument function running one batch path (set by the `paths` fixture; forked
#: children and pool workers find it here).
PATHS: dict = {}


def _lines(*parts: str, max_bytes: int = 60_000) -> list[str]:
    text = read_sample(shared_path("corpora", *parts), max_bytes)
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def paths(bert_json):
    """Every batch path of tokenmill, each run once here (so that the pool has been used)."""
    english = _lines("english_large", "gutenberg_en_large_part1.txt")
    chinese = _lines("gutenberg", "pg23585_zh_fo_shuo_sishierzhang_jing.txt", max_bytes=20_000)
    pretrained = shared_path("pretrained")
    bert = Tokenizer.from_file(bert_json)
    gpt2 = ByteLevelBPETokenizer(
        str(pretrained / "gpt2" / "encoder.json"), str(pretrained / "gpt2" / "vocab.bpe")
    )
    cl100k = ttk.get_encoding("cl100k_base", path=pretrained)
    sp = tsp.SentencePieceProcessor(
        model_file=str(pretrained / "sentencepiece_test" / "botchan_en_unigram_1000.model")
    )
    words, splitter, segmenter = WordTokenizer("en"), SentenceSplitter("en"), ChineseSegmenter()
    corpus_words = " ".join(english).split()

    def train(model, trainer):
        tok = Tokenizer(model)
        tok.pre_tokenizer = Whitespace()
        tok.train_from_iterator(english, trainer=trainer)
        return sorted(tok.get_vocab().items())

    found = {
        "Tokenizer.encode_batch (bert)": lambda: [e.ids for e in bert.encode_batch(english)],
        "Tokenizer.encode_batch_fast (bert)": lambda: [
            e.offsets for e in bert.encode_batch_fast(english)
        ],
        "Tokenizer.encode_batch (gpt2)": lambda: [e.ids for e in gpt2.encode_batch(english)],
        "Tokenizer.decode_batch (gpt2)": lambda: gpt2.decode_batch(
            [e.ids for e in gpt2.encode_batch(english)]
        ),
        "Tokenizer.encode_batch_ids (bert)": lambda: [
            a.tolist() for a in bert.encode_batch_ids(english)
        ],
        "tiktoken.encode_ordinary_batch": lambda: cl100k.encode_ordinary_batch(english),
        "tiktoken.encode_ordinary_batch_to_numpy": lambda: [
            a.tolist() for a in cl100k.encode_ordinary_batch_to_numpy(english)
        ],
        "sentencepiece.encode(num_threads=2)": lambda: sp.encode(english, num_threads=2),
        "sentencepiece.encode(pieces, num_threads=2)": lambda: sp.encode(
            english, out_type=str, num_threads=2
        ),
        "words.WordTokenizer.tokenize_batch": lambda: words.tokenize_batch(english),
        "words.SentenceSplitter.split_batch": lambda: splitter.split_batch(english),
        "words.ChineseSegmenter.cut_batch": lambda: segmenter.cut_batch(chinese),
        "collocations.nbest": lambda: BigramCollocationFinder.from_words(corpus_words).nbest(
            BigramAssocMeasures.likelihood_ratio, 20
        ),
        "trainers.BpeTrainer": lambda: train(
            BPE(), BpeTrainer(vocab_size=400, show_progress=False)
        ),
        "trainers.UnigramTrainer": lambda: train(
            Unigram(), UnigramTrainer(vocab_size=300, show_progress=False)
        ),
    }
    PATHS.clear()
    PATHS.update(found)
    expected = {name: run() for name, run in found.items()}
    assert _native._parallelism()[1], "the batches above ran on the pool"
    return expected


def _run_path(name: str):
    return PATHS[name]()


def _child(target, queue):
    try:
        queue.put(("ok", target()))
    except BaseException as e:  # reported to the parent, which fails the test
        queue.put(("error", repr(e)))


def run_in_fork(target):
    """`target()` in a forked child, its result sent back; fails (never hangs) if the child does
    not finish within CHILD_TIMEOUT seconds."""
    queue = FORK.Queue()
    process = FORK.Process(target=_child, args=(target, queue))
    process.start()
    try:
        status, value = queue.get(timeout=CHILD_TIMEOUT)
    except Exception:
        process.terminate()
        process.join()
        pytest.fail(f"the forked child did not finish within {CHILD_TIMEOUT} s (deadlock?)")
    process.join(CHILD_TIMEOUT)
    assert not process.is_alive()
    assert status == "ok", value
    return value


@pytest.mark.parametrize("parallelism", ["true", None, "false"])
def test_every_batch_path_works_in_a_child_forked_after_a_parallel_batch(
    paths, parallelism, monkeypatch
):
    """The fork-server pattern: fork after a parallel batch, the child runs the batch."""
    if parallelism is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", parallelism)
    for name, expected in paths.items():
        assert run_in_fork(lambda name=name: _run_path(name)) == expected, name


def test_a_multiprocessing_fork_pool_after_parallel_batches(paths, monkeypatch):
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    names = list(paths)
    with FORK.Pool(2) as pool:
        results = pool.map_async(_run_path, names).get(timeout=300)
    assert dict(zip(names, results)) == paths


def _child_state(encode):
    encode()
    return _native._parallelism()


@pytest.mark.parametrize(
    "value, in_child, warns",
    [
        (None, False, True),  # unset: tokenizers' warning, then one thread
        ("true", True, False),  # explicitly on: a new pool in the child
        ("1", True, False),
        ("false", False, False),
        ("FALSE", False, False),
        ("off", False, False),
        ("0", False, False),
        ("", False, False),
    ],
)
def test_tokenizers_parallelism_in_a_forked_child(
    paths, value, in_child, warns, monkeypatch, capfd
):
    if value is None:
        monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    else:
        monkeypatch.setenv("TOKENIZERS_PARALLELISM", value)
    capfd.readouterr()
    parallelism, used, threads = run_in_fork(
        lambda: _child_state(PATHS["Tokenizer.encode_batch (bert)"])
    )
    err = capfd.readouterr().err
    assert parallelism is in_child
    assert used, "the child knows its parent used the pool"
    assert (threads > 1) is (in_child and (os.cpu_count() or 1) > 1)
    assert (WARNING in err) is warns, err


@pytest.mark.parametrize("value", [None, "false"])
def test_forked_child_like_tokenizers(value, monkeypatch, capfd):
    """Unset or false: a child forked after `encode_batch` completes in both libraries, and
    prints the same warning (unset) or none (false). tokenizers deadlocks with "true"."""
    tokenizers = pytest.importorskip("tokenizers")
    outputs = {}
    for library in (tokenizers, tokenmill):
        if value is None:
            monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
        else:
            monkeypatch.setenv("TOKENIZERS_PARALLELISM", value)
        tok = library.Tokenizer(library.models.BPE())
        tok.add_tokens(["my", "name"])
        tok.encode_batch(["my name", "name my"] * 500)
        capfd.readouterr()
        ids = run_in_fork(
            lambda tok=tok: [e.ids for e in tok.encode_batch(["my name", "name my"] * 500)]
        )
        outputs[library.__name__] = (ids, WARNING in capfd.readouterr().err)
    assert outputs["tokenmill"] == outputs["tokenizers"]


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TOKENMILL_NUM_THREADS", "RAYON_NUM_THREADS")
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


COUNT_THREADS = """
    from tokenmill import Tokenizer, _native
    from tokenmill.models import BPE
    tok = Tokenizer(BPE())
    tok.add_tokens(["a", "b"])
    ids = [e.ids for e in tok.encode_batch(["a b"] * 1000)]
    assert ids == [[0, 1]] * 1000, ids[:3]
    print(_native._parallelism()[2])
"""


@pytest.mark.parametrize("value, threads", [("3", 3), ("1", 1)])
def test_tokenmill_num_threads_sets_the_pool_size(value, threads):
    done = _python(COUNT_THREADS, TOKENMILL_NUM_THREADS=value)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == threads


def test_an_invalid_tokenmill_num_threads_is_reported_and_ignored():
    done = _python(COUNT_THREADS, TOKENMILL_NUM_THREADS="many")
    assert done.returncode == 0, done.stderr
    assert "TOKENMILL_NUM_THREADS" in done.stderr
    assert int(done.stdout) == (os.cpu_count() or 1)


def test_tokenizers_parallelism_false_runs_batches_on_the_calling_thread():
    done = _python(COUNT_THREADS, TOKENIZERS_PARALLELISM="false")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == 1
