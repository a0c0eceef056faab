"""Costs that must not grow faster than the input: a long WordPiece vocabulary entry, a long
added token, and explicit thread counts (capped and pooled, never threads per call).

The long inputs run in a child process with a generous timeout: a quadratic path takes minutes
or aborts on allocation there (100,000² / 2 pops of 8 bytes is 40 GB), and the test then fails
instead of taking the test run down with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import child_env, shared_path
from tokenmill import tiktoken

LONG = 100_000
# Seconds: the linear paths take well under one; the quadratic ones never finish in this time.
TIMEOUT = 120


def run_isolated(code: str, timeout: float = TIMEOUT) -> str:
    """stdout of `code` run by a fresh Python (this tokenmill); fails on an error or a timeout."""
    env = child_env()
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_a_long_wordpiece_vocabulary_entry_loads_and_encodes():
    out = run_isolated(
        f"""
        from tokenmill import Tokenizer, models, pre_tokenizers
        long = "ab" * ({LONG} // 2)
        vocab = {{"[UNK]": 0, "a": 1, "##a": 2, "b": 3, "##b": 4, long: 5}}
        model = models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=10**6)
        tok = Tokenizer(model)
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        expected = [5, 1, 4] + [1] + [4, 2] * ({LONG} // 2 - 1)
        print(tok.encode(long + " ab " + long[:-1]).ids == expected)
        """
    )
    assert out.split() == ["True"]


def test_a_long_added_token_loads_and_encodes():
    out = run_isolated(
        f"""
        from tokenmill import AddedToken, Tokenizer, models, normalizers, pre_tokenizers
        long = "<" + "xy " * ({LONG} // 3) + ">"
        tok = Tokenizer(models.WordLevel({{"[UNK]": 0, "x": 1}}, unk_token="[UNK]"))
        tok.normalizer = normalizers.Lowercase()
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.add_special_tokens([long])
        tok.add_tokens([AddedToken(long.upper() + "!", normalized=True)])
        tok = Tokenizer.from_str(tok.to_str())
        print(tok.encode("x " + long + " X" + long.upper() + "! x").ids)
        """
    )
    assert out.strip() == "[1, 2, 1, 3, 1]"


def encoding() -> tiktoken.Encoding:
    """Bytes as tokens, plus "ab": enough to check ids without rank files."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    return tiktoken.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})


def threads() -> int:
    """The number of threads of this process (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line in /proc/self/status")


TEXTS = ["ab c", "", "cab ab"]
IDS = [[256, 32, 99], [], [99, 256, 32, 256]]


def test_a_huge_num_threads_is_capped():
    # One OS thread per requested thread would take minutes, or fail, here.
    out = run_isolated(
        """
        import test_complexity as t
        enc = t.encoding()
        print(enc.encode_ordinary_batch(t.TEXTS, num_threads=10**6) == t.IDS)
        print(enc.encode_batch(t.TEXTS, num_threads=10**6) == t.IDS)
        print(enc.encode_ordinary_batch(t.TEXTS, num_threads=1) == t.IDS)
        """
    )
    assert out.split() == ["True"] * 3


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_repeated_batches_start_no_threads():
    enc = encoding()
    texts = TEXTS * 50
    enc.encode_ordinary_batch(texts, num_threads=64)
    enc.encode_batch(texts, num_threads=3)
    before = threads()
    for _ in range(20):
        assert enc.encode_ordinary_batch(texts, num_threads=64) == IDS * 50
        assert enc.encode_batch(texts, num_threads=3) == IDS * 50
    assert threads() == before


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_sentencepiece_num_threads_starts_no_threads():
    from tokenmill import sentencepiece as spm

    sp = spm.SentencePieceProcessor(
        model_file=str(shared_path("pretrained", "sentencepiece_test", "botchan_en_bpe_1000.model"))
    )
    texts = ["I saw a girl with a telescope.", "hello world"] * 20
    expected = [sp.encode(t) for t in texts]
    assert sp.encode(texts, num_threads=10**6) == expected
    # Pools are made once per size: the first call of each size may start them.
    sp.encode(texts, num_threads=64)
    sp.encode(texts, num_threads=3)
    before = threads()
    for _ in range(20):
        assert sp.encode(texts, num_threads=64) == expected
        assert sp.encode(texts, num_threads=3) == expected
    assert threads() == before


# --- Long pieces: one pre-token of a megabyte (the BPE merge kernel's queued path) ---

# Hostile text whose pattern pieces are as long as the text (one piece each for GPT-2's, cl100k's
# and o200k's patterns but where noted): a repeated letter, runs of whitespace, one random word,
# digits (one piece for GPT-2 only), punctuation, CJK without spaces.
LONG_PIECES = {
    "one letter": lambda n, rng: "a" * n,
    "spaces": lambda n, rng: " " * n,
    "random word": lambda n, rng: "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=n)),
    "digits": lambda n, rng: "".join(rng.choices("0123456789", k=n)),
    "punctuation": lambda n, rng: "".join(rng.choices("!#$%&()*+,-./:;<=>?@[]^_{|}~", k=n)),
    "CJK": lambda n, rng: "".join(chr(c) for c in rng.choices(range(0x4E00, 0xA000), k=n // 3)),
}


def long_piece(kind: str, n: int) -> str:
    import random

    return LONG_PIECES[kind](n, random.Random(n))


@pytest.fixture(scope="module")
def tiktoken_pairs(tiktoken_cache):
    """(tokenmill, tiktoken) for each pretrained pattern."""
    reference = pytest.importorskip("tiktoken")
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    try:
        names = ["r50k_base", "cl100k_base", "o200k_base"]
        pretrained = shared_path("pretrained")
        return {
            n: (tiktoken.get_encoding(n, path=pretrained), reference.get_encoding(n)) for n in names
        }
    finally:
        if old is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


# Long enough for the merge kernel's windowed path (65,536 symbols and more; about nine windows).
WINDOWED = 150_000


@pytest.mark.parametrize("kind", sorted(LONG_PIECES))
def test_long_pieces_encode_as_tiktoken_does(tiktoken_pairs, kind):
    # The small-word, queued and windowed merge paths.
    for n in (200, 3_000, 10_000, WINDOWED):
        text = long_piece(kind, n)
        for name, (ours, reference) in tiktoken_pairs.items():
            assert ours.encode_ordinary(text) == reference.encode_ordinary(text), (name, kind, n)


@pytest.mark.parametrize("kind", sorted(LONG_PIECES))
def test_long_words_encode_as_tokenizers_does(kind):
    # A Tokenizer's BPE (merges.txt ranks) on words of the windowed path, byte-level GPT-2.
    reference = pytest.importorskip("tokenizers")
    import tokenmill

    gpt2 = shared_path("pretrained") / "gpt2"
    files = str(gpt2 / "encoder.json"), str(gpt2 / "vocab.bpe")
    pair = []
    for module in (tokenmill, reference):
        tok = module.Tokenizer(module.models.BPE.from_file(*files))
        tok.pre_tokenizer = module.pre_tokenizers.ByteLevel(add_prefix_space=False)
        pair.append(tok)
    text = long_piece(kind, WINDOWED)
    ours, theirs = (tok.encode(text) for tok in pair)
    assert ours.ids == theirs.ids
    assert ours.offsets == theirs.offsets


@pytest.mark.parametrize("kind", sorted(LONG_PIECES))
def test_long_words_encode_as_sentencepiece_does(kind):
    # SentencePiece BPE (scores) on words of the windowed path: the text is one word.
    reference = pytest.importorskip("sentencepiece")
    import tokenmill.sentencepiece as spm

    model = str(shared_path("pretrained") / "mistral" / "tokenizer.model.v1")
    text = long_piece(kind, WINDOWED)
    ours = spm.SentencePieceProcessor(model_file=model).encode(text)
    assert ours == reference.SentencePieceProcessor(model_file=model).encode(text)


def test_long_pieces_encode_in_quasi_linear_time():
    # Half a megabyte per piece: the queued merge path takes a few seconds for all of these
    # together; a quadratic one (or a scanner restarting per character) would take hours.
    pretrained = shared_path("pretrained")
    out = run_isolated(
        f"""
        import test_complexity as t
        from tokenmill import tiktoken
        for name in ["r50k_base", "cl100k_base", "o200k_base"]:
            enc = tiktoken.get_encoding(name, path={str(pretrained)!r})
            for kind in sorted(t.LONG_PIECES):
                text = t.long_piece(kind, 500_000)
                ids = enc.encode_ordinary(text)
                print(enc.decode(ids) == text and len(ids) <= len(text.encode()))
        """
    )
    assert out.split() == ["True"] * 3 * len(LONG_PIECES)


def test_word_tokenizer_on_long_runs_of_spaces_is_linear():
    # The text is tokenized in blocks of 64 kB cut at spaces; skipping the spaces of a block
    # once ran to the end of the text, so 128 MB of spaces scanned ~128 GB (minutes). Linear
    # takes well under a second.
    out = run_isolated(
        """
        from tokenmill.words import WordTokenizer
        tok = WordTokenizer("en")
        n = 128 * 10**6
        for text in [" " * n, "\\n" * n, " \\n" * (n // 2), " " * n + "end"]:
            starts, ends = tok.tokenize_spans(text)
            print(len(starts), ends[-1:].tolist())
        """,
        timeout=30,
    )
    assert out.splitlines() == ["0 []"] * 3 + [f"1 [{128 * 10**6 + 3}]"]


# --- BPE training on one huge word (the shared merge loop's long-word path) ---


def test_bpe_training_on_one_huge_word_is_not_quadratic(tmp_path):
    # One word of 3 M characters from 1,000 letters, 80,000 merges of pairs seen a few times
    # each. Rewriting the word per merge visits 3 M × 80,000 symbols: about four minutes of CPU
    # on a 2-core Xeon. Visiting only where each merged pair is takes seconds (mostly making
    # the text). The pieces are checked against the corpus.
    corpus = tmp_path / "word.txt"
    out = run_isolated(
        f"""
        import random
        import tokenmill.sentencepiece as tsp
        rng = random.Random(0)
        letters = [chr(c) for c in range(0x4E00, 0x4E00 + 1000)]
        text = "".join(rng.choices(letters, k=3_000_000))
        open({str(corpus)!r}, "w", encoding="utf-8").write(text + "\\n")
        prefix = {str(tmp_path / "m")!r}
        tsp.SentencePieceTrainer.train(
            input={str(corpus)!r}, model_prefix=prefix, model_type="bpe", vocab_size=80_000,
            max_sentence_length=10**9, character_coverage=1.0, minloglevel=2,
        )
        pieces = [line.split("\\t")[0] for line in open(prefix + ".vocab", encoding="utf-8")]
        merged = [p for p in pieces[3:] if len(p) > 1 and not p.startswith("\\u2581")]
        print(len(pieces), len(merged) > 70_000, all(p in text for p in merged[:1000]))
        """
    )
    assert out.split() == ["80000", "True", "True"]
