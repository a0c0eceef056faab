"""SentencePiece compatibility: tokenmill.sentencepiece vs sentencepiece, one command.

    python bench/bench_sentencepiece.py [--mb 5] [--train-mb 10] [--vocab 32000] [--skip-train]

Encoding: the first `--mb` MB of english_large part 1, as lines, encoded to ids by each library
with one thread (`num_threads=1`) and with two threads, for Mistral v1 (BPE with byte
fallback) and sentencepiece's botchan Unigram model. Training: SentencePiece-BPE on the first
`--train-mb` MB of the same file, vocab `--vocab`, the same options for both. Each library runs
in its own subprocess; encoding times are the best of `--repeat` runs (wall time: the
two-thread case needs it), training is timed once. The parent checks that both libraries gave
identical ids and prints throughput and ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))
if not SHARED.exists() and Path("/work/shared").exists():
    SHARED = Path("/work/shared")
MODELS = {"mistral_v1 (BPE)": "pretrained/mistral/tokenizer.model.v1",
          "botchan (Unigram)": "pretrained/sentencepiece_test/botchan_en_unigram_1000.model"}
CORPUS = "corpora/english_large/gutenberg_en_large_part1.txt"

WORKER = r"""
import hashlib, json, sys, time
lib, model, corpus, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if lib == "tokenmill":
    import tokenmill.sentencepiece as spm
else:
    import sentencepiece as spm
lines = open(corpus, encoding="utf-8").read().splitlines()
sp = spm.SentencePieceProcessor(model_file=model)
out = {}
for threads in (1, 2):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        ids = sp.encode(lines, num_threads=threads)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    out[threads] = best
digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
print(json.dumps({"times": out, "digest": digest, "tokens": sum(map(len, ids))}))
"""

TRAIN_WORKER = r"""
import sys, time, resource
lib, corpus, prefix, vocab = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if lib == "tokenmill":
    import tokenmill.sentencepiece as spm
else:
    import sentencepiece as spm
t = time.perf_counter()
kwargs = dict(input=corpus, model_prefix=prefix, model_type="bpe", vocab_size=vocab, num_threads=2)
if lib != "tokenmill":
    kwargs["minloglevel"] = 2
spm.SentencePieceTrainer.train(**kwargs)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--train-mb", type=float, default=10.0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--skip-encode", action="store_true")
    args = ap.parse_args()
    data = (SHARED / CORPUS).read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.skip_encode:
            sample = data[: int(args.mb * 1e6)]
            (tmp / "enc.txt").write_bytes(sample[: sample.rfind(b"\n") + 1])
            for name, model in MODELS.items():
                results = {}
                for lib in ("tokenmill", "sentencepiece"):
                    proc = subprocess.run([sys.executable, "-c", WORKER, lib, str(SHARED / model), str(tmp / "enc.txt"),
                                           str(args.repeat)], capture_output=True, text=True, check=True)
                    results[lib] = json.loads(proc.stdout)
                same = results["tokenmill"]["digest"] == results["sentencepiece"]["digest"]
                mb = args.mb
                t1, t2 = (results["tokenmill"]["times"][k] for k in ("1", "2"))
                r1, r2 = (results["sentencepiece"]["times"][k] for k in ("1", "2"))
                print(f"{name}: {mb:.1f} MB, identical ids: {same}")
                print(f"  1 thread : tokenmill {mb / t1:6.2f} MB/s  sentencepiece {mb / r1:6.2f} MB/s  ratio {r1 / t1:5.2f}x")
                print(f"  2 threads: tokenmill {mb / t2:6.2f} MB/s  sentencepiece {mb / r2:6.2f} MB/s  "
                      f"ratio {r2 / t2:5.2f}x; tokenmill 2 vs 1 threads {t1 / t2:4.2f}x")
        if not args.skip_train:
            sample = data[: int(args.train_mb * 1e6)]
            (tmp / "train.txt").write_bytes(sample[: sample.rfind(b"\n") + 1])
            timings = {}
            for lib in ("tokenmill", "sentencepiece"):
                proc = subprocess.run([sys.executable, "-c", TRAIN_WORKER, lib, str(tmp / "train.txt"), str(tmp / lib),
                                       str(args.vocab)], capture_output=True, text=True, check=True)
                timings[lib] = [float(x) for x in proc.stdout.split()]
            (t, tm), (r, rm) = timings["tokenmill"], timings["sentencepiece"]
            print(f"SentencePiece-BPE training, {args.train_mb:.0f} MB, vocab {args.vocab}: tokenmill {t:.1f} s "
                  f"({tm:.0f} MB peak), sentencepiece {r:.1f} s ({rm:.0f} MB peak), speed ratio {r / t:.2f}x")


if __name__ == "__main__":
    main()
