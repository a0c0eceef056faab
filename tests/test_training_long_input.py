"""Training on one long line: bounded memory per character, and a clean error — never an
abort — when the memory it needs cannot be had.

Each training runs in a child process (its peak RSS is its own; an abort cannot take the test
run down). The memory limit is an address-space limit (`RLIMIT_AS`) set just above what the
child already maps, so any large allocation fails; the child's allocator (mimalloc) is told to
reserve address space in small steps, or its reservations would leave room under the limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import child_env

resource = pytest.importorskip("resource")  # POSIX only

# Both children's limit: what the process maps now plus `headroom_mb` (none when 0).
LIMIT_ADDRESS_SPACE = textwrap.dedent(
    """
    import resource

    def limit_address_space(headroom_mb):
        if headroom_mb > 0:
            status = open("/proc/self/status").read()
            limit = int(status.split("VmSize:")[1].split()[0]) * 1024 + (headroom_mb << 20)
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    """
)

# The child: warms up (threads, allocator) on a tiny corpus, then limits its address space to
# what it maps plus HEADROOM_MB and trains on the long line.
CHILD = LIMIT_ADDRESS_SPACE + textwrap.dedent(
    """
    import json, resource, sys
    kind, path, small, prefix, headroom_mb = sys.argv[1:6]
    import tokenmill.sentencepiece as tsp
    from tokenmill import Tokenizer, models, trainers

    def train(corpus):
        if kind == "unigram_trainer":
            tok = Tokenizer(models.Unigram())
            tok.train([corpus], trainers.UnigramTrainer(vocab_size=8, show_progress=False))
        else:
            tsp.SentencePieceTrainer.train(
                input=corpus, model_prefix=prefix, vocab_size=8, model_type=kind,
                max_sentence_length=10**9, hard_vocab_limit=False,
            )

    train(small)
    limit_address_space(int(headroom_mb))
    try:
        train(path)
    except (MemoryError, ValueError) as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    else:
        # This process's peak (ru_maxrss would carry over the parent's peak through exec).
        status = open("/proc/self/status").read()
        print(json.dumps({"rss": int(status.split("VmHWM:")[1].split()[0]) * 1024}))
    """
)


def run_child(kind: str, corpus: Path, tmp_path: Path, headroom_mb: int = 0) -> dict:
    small = tmp_path / "small.txt"
    small.write_text("aab abab aaab\n" * 20)
    env = child_env(MIMALLOC_ARENA_RESERVE="4MiB")
    args = [kind, str(corpus), str(small), str(tmp_path / "m"), str(headroom_mb)]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    # No abort ("memory allocation of N bytes failed"), no panic, no signal.
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "memory allocation" not in done.stderr and "panicked" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_line(tmp_path: Path, name: str, chars: int) -> Path:
    path = tmp_path / name
    path.write_text("a" * chars + "\n")
    return path


LINE_BYTES = 32 << 20


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_too_long_a_sentence_for_the_memory_is_an_error_naming_the_file(tmp_path, kind):
    """The reproducer (issue 18): one 50 MB line with max_sentence_length=10**8 aborted with
    "memory allocation of 1610612736 bytes failed". Here a 32 MB line under a 256 MB headroom:
    reading the line fits in it with room to spare, training on it (about 24 bytes a byte)
    does not."""
    corpus = one_line(tmp_path, "one_line.txt", LINE_BYTES)
    result = run_child(kind, corpus, tmp_path, headroom_mb=256)
    assert result.get("error") == "ArgumentError", result
    message = result["message"]
    assert str(corpus) in message and "line 1" in message, message
    assert f"{LINE_BYTES + 1}" not in message  # the line, not the line with its end
    assert f"sentence of {LINE_BYTES} bytes" in message and "more than can be allocated" in message


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)")
@pytest.mark.parametrize("kind", ["unigram", "unigram_trainer"])
def test_unigram_training_memory_per_character_is_bounded(tmp_path, kind):
    """Unigram training on one 2 M-character run of one letter: its EM lattice listed every
    piece occurrence (16 edges of 12 bytes a character, ~260 bytes a character in all); long
    words now keep only per-position tables. Generous bound: 100 bytes a character, the Python
    interpreter and the library included."""
    chars = 2_000_000
    result = run_child(kind, one_line(tmp_path, "run.txt", chars), tmp_path)
    assert "rss" in result, result
    assert result["rss"] / chars < 100, result


# The Tokenizer pipeline's child: builds a tokenizer (model, pre-tokenizer), warms it up on a
# tiny corpus, limits its address space as above, then trains on the long text (a file of one
# line, or an iterator of one str) or encodes it.
PIPELINE_CHILD = LIMIT_ADDRESS_SPACE + textwrap.dedent(
    """
    import json, resource, sys
    import numpy  # before the limit: it maps its libraries when first imported
    from tokenmill import Tokenizer, models, normalizers, pre_tokenizers, trainers
    op, model, stages, path, headroom_mb = sys.argv[1:6]

    def tokenizer():
        trainer = {"unigram": trainers.UnigramTrainer, "bpe": trainers.BpeTrainer,
                   "wordpiece": trainers.WordPieceTrainer,
                   "wordlevel": trainers.WordLevelTrainer}[model]
        tok = Tokenizer({"unigram": models.Unigram(), "bpe": models.BPE(),
                         "wordpiece": models.WordPiece(unk_token="[UNK]"),
                         "wordlevel": models.WordLevel(unk_token="[UNK]")}[model])
        if stages == "whitespace":
            tok.pre_tokenizer = pre_tokenizers.Whitespace()
        elif stages == "byte_level":
            tok.pre_tokenizer = pre_tokenizers.ByteLevel()
        elif stages == "bert":
            tok.normalizer = normalizers.BertNormalizer()
            tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        return tok, trainer(vocab_size=30, special_tokens=["[UNK]"], show_progress=False)

    def run(op, text, path):
        tok, trainer = tokenizer()
        if op == "file":
            tok.train([path], trainer)
        elif op == "iterator":
            tok.train_from_iterator([text], trainer)
        else:
            tok.train_from_iterator(["aab abab aaab"] * 20, trainer)
            {"encode": tok.encode, "encode_batch": lambda t: tok.encode_batch([t, "ab"]),
             "encode_batch_ids": lambda t: tok.encode_batch_ids(["ab", t])}[op](text)
        return tok

    run("iterator", "aab abab aaab\\n" * 20, None)
    run("encode_batch_ids", "aab abab aaab\\n" * 20, None)
    text = open(path).read() if op != "file" else None
    limit_address_space(int(headroom_mb))
    try:
        tok = run(op, text, path)
    except (MemoryError, ValueError) as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    else:
        print(json.dumps({"vocab": tok.get_vocab()}))
    """
)


def run_pipeline_child(
    op: str, model: str, stages: str, corpus: Path, headroom_mb: int = 0
) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PIPELINE_CHILD, op, model, stages, str(corpus), str(headroom_mb)],
        capture_output=True,
        text=True,
        env=child_env(MIMALLOC_ARENA_RESERVE="4MiB"),
        timeout=300,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "memory allocation" not in done.stderr and "panicked" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# 8 MB in one line: the pipeline's alignments alone take ~60 bytes a byte of address space, so
# under a 128 MB headroom any of these aborted ("memory allocation of 134217728 bytes failed" in
# `NormalizedString::from`, or in `Encoding::with_capacity`, `BPE::merge_word`, ...).
PIPELINE_LINE_BYTES = 8 << 20
needs_proc = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="needs /proc (Linux)"
)


@needs_proc
@pytest.mark.parametrize("op", ["file", "iterator"])
@pytest.mark.parametrize("model", ["unigram", "bpe", "wordpiece", "wordlevel"])
def test_tokenizer_training_on_a_line_too_long_for_the_memory_names_it(tmp_path, op, model):
    """Issue 18: `Tokenizer.train` / `train_from_iterator` on one line too long for the memory
    there is aborted the process in the normalizer / pre-tokenizer stage; now an error names the
    file and line (or the iterator's text) and its size, before anything is built from it."""
    corpus = tmp_path / "one_line.txt"
    corpus.write_text("a" * PIPELINE_LINE_BYTES)
    result = run_pipeline_child(op, model, "whitespace", corpus, headroom_mb=128)
    assert result.get("error") == "InvalidArgumentError", result
    where = f"{corpus}, line 1" if op == "file" else "text 1 of the iterator"
    assert result["message"].startswith(f"{where}: a text of {PIPELINE_LINE_BYTES} bytes")
    assert "more than can be allocated" in result["message"], result


@needs_proc
@pytest.mark.parametrize("model", ["bpe", "wordpiece"])
def test_byte_level_training_on_a_word_too_long_for_the_memory_is_an_error(tmp_path, model):
    """The byte-level setup cuts words straight from the raw text (a few bytes a byte), then
    the merge trainers build tables of ~120 bytes a byte of the longest word: checked first."""
    corpus = tmp_path / "one_line.txt"
    corpus.write_text("a" * PIPELINE_LINE_BYTES)
    result = run_pipeline_child("iterator", model, "byte_level", corpus, headroom_mb=256)
    assert result.get("error") == "InvalidArgumentError", result
    message = result["message"]
    assert message.startswith(f"{'WordPiece' if model == 'wordpiece' else 'BPE'} training: 1 ")
    # The word is the line with the prefix space, "Ġ" (two bytes) in the byte-level alphabet.
    assert f"the longest {PIPELINE_LINE_BYTES + 2} bytes" in message, message


@needs_proc
@pytest.mark.parametrize("op", ["encode", "encode_batch", "encode_batch_ids"])
@pytest.mark.parametrize("stages", ["none", "byte_level", "bert"])
def test_encoding_a_text_too_long_for_the_memory_is_an_error(tmp_path, op, stages):
    """encode / encode_batch / encode_batch_ids of one huge text aborted (the general path's
    alignments, the BERT path's `Encoding::with_capacity`, BPE's `merge_word`): now an error
    giving the text's size, on every encode plan (general, byte-level, BERT)."""
    corpus = tmp_path / "text.txt"
    corpus.write_text("a" * PIPELINE_LINE_BYTES)
    result = run_pipeline_child(op, "bpe", stages, corpus, headroom_mb=128)
    assert result.get("error") == "InvalidArgumentError", result
    assert f"a text of {PIPELINE_LINE_BYTES} bytes needs about" in result["message"], result
    assert "to encode it, more than can be allocated" in result["message"], result


@needs_proc
@pytest.mark.parametrize("model", ["unigram", "bpe", "wordpiece", "wordlevel"])
def test_a_long_line_that_fits_trains_as_before(tmp_path, model):
    """A 1 MB line (big enough for the memory check to probe) of varied words trains under a
    limit that leaves it room, and to the same vocabulary from a file as from an iterator."""
    words = ["".join("abcdefgh"[(i * 7 + k * 3) % 8] for k in range(1 + i % 9)) for i in range(97)]
    line = " ".join(words[i % 97] for i in range(200_000))[: 1 << 20].strip()
    corpus = tmp_path / "long_line.txt"
    corpus.write_text(line)  # no line end: the file and the iterator give the same text
    from_file = run_pipeline_child("file", model, "whitespace", corpus, headroom_mb=512)
    from_iterator = run_pipeline_child("iterator", model, "whitespace", corpus)
    assert "vocab" in from_file, from_file
    assert from_file == from_iterator
