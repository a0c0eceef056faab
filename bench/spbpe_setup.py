"""The SentencePiece-BPE training setup shared by ``bench_train.py --model spbpe`` and
``bench_sentencepiece.py`` (so both time the same thing):

* input: the first ``mb`` MB of a file, cut at a line end, written to a file of its own
  (``training_input``);
* training: ``SentencePieceTrainer.train(input=..., model_type="bpe", vocab_size=...,
  num_threads=2, minloglevel=2)``, every other option at sentencepiece's default, in
  ``tokenmill.sentencepiece`` or ``sentencepiece`` (``train_spbpe``), run in a fresh process
  (``run_spbpe_child``);
* measured in that process around the call only: wall time, CPU time (user + system, all
  threads: the fair figure on a loaded machine) and peak RSS (``ru_maxrss``, taken before the
  model is read back).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def training_input(source: Path, mb: float | None, workdir: Path) -> Path:
    """``source`` itself, or its first ``mb`` MB cut at a line end in ``workdir``."""
    if not mb:
        return source
    data = source.read_bytes()[: int(mb * 1e6)]
    data = data[: data.rfind(b"\n") + 1] or data
    path = Path(workdir) / "spbpe_input.txt"
    path.write_bytes(data)
    return path


def train_spbpe(lib: str, path: str, prefix: str, vocab_size: int) -> dict:
    """Trains in this process; returns seconds, cpu_seconds, peak_rss_mb and the vocabulary."""
    import resource
    import time

    if lib == "tokenmill":
        import tokenmill.sentencepiece as spm
    else:
        import sentencepiece as spm

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    start, cpu_start = time.perf_counter(), cpu()
    spm.SentencePieceTrainer.train(
        input=path,
        model_prefix=prefix,
        model_type="bpe",
        vocab_size=vocab_size,
        num_threads=2,
        minloglevel=2,
    )
    seconds, cpu_seconds = time.perf_counter() - start, cpu() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak_rss_mb": peak,
        "vocab": [sp.id_to_piece(i) for i in range(sp.get_piece_size())],
    }


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from spbpe_setup import train_spbpe
print(json.dumps(train_spbpe(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))))
"""


def run_spbpe_child(lib: str, path: Path, prefix: Path, vocab_size: int) -> dict:
    """``train_spbpe`` in a fresh Python process (``{"error": ...}`` if it failed)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(BENCH_DIR),
            lib,
            str(path),
            str(prefix),
            str(vocab_size),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return {
            "error": proc.stderr.strip().splitlines()[-1]
            if proc.stderr.strip()
            else f"exit {proc.returncode}"
        }
    return json.loads(proc.stdout.strip().splitlines()[-1])
