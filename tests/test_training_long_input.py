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

# The child: warms up (threads, allocator) on a tiny corpus, then limits its address space to
# what it maps plus HEADROOM_MB and trains on the long line.
CHILD = textwrap.dedent(
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
    if int(headroom_mb) > 0:
        status = open("/proc/self/status").read()
        vm_kb = int(status.split("VmSize:")[1].split()[0])
        limit = vm_kb * 1024 + (int(headroom_mb) << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
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
