"""SentencePiece compatibility: tokenmill.sentencepiece vs sentencepiece, one command.

    python bench/bench_sentencepiece.py [--mb 20] [--repeat 5] [--train-mb 10] [--vocab 32000]
                                        [--skip-train]

Encoding: the first `--mb` MB of english_large part 1, as lines, encoded to ids by each library
with one thread (`num_threads=1`) and with two threads, for Mistral v1 (BPE with byte fallback),
sentencepiece's botchan Unigram model (1,000 pieces) and a realistic Unigram model (32,000
pieces, trained by sentencepiece itself with its defaults on the first `--unigram-mb` MB of
english_large part 2, so not on the encoded text; 0 leaves it out); for context also
`tokenizers` on the equivalent tokenizer.json (written by
`tokenmill.sentencepiece.to_tokenizer`; `encode_batch`, threads set by RAYON_RS_NUM_THREADS).
Training: SentencePiece-BPE on the first `--train-mb` MB of the same file, vocab `--vocab`, the
same options for both (`spbpe_setup.py`, shared with `bench_train.py --model spbpe`). Each
library runs in its own subprocess; after one untimed run per thread count (reported as "first
runs"), the thread counts take turns for `--repeat` rounds, so that the drift of a shared
machine falls on both alike; encoding times are the medians of those runs (each run's output is
freed before the next starts, outside the timing, as in `bench_pipeline.py`), and the two-thread
scaling is the median of the rounds' own ratios. Times are CPU time of the process
(`time.process_time`, the fair single-thread measure on a shared machine) and wall time (what
the two-thread case needs); training is timed once. The parent checks that all libraries gave
identical ids and prints throughput and ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import (
    SHARED,
    PeerResults,
    Results,
    bench_parser,
    cache_dir,
    digest_of,
    fail,
    parse_args,
)
from spbpe_setup import run_spbpe_child, training_input

MODELS = {
    "mistral_v1 (BPE)": "pretrained/mistral/tokenizer.model.v1",
    "botchan (Unigram)": "pretrained/sentencepiece_test/botchan_en_unigram_1000.model",
}
CORPUS = "corpora/english_large/gutenberg_en_large_part1.txt"

WORKER = r"""
import hashlib, json, os, resource, statistics, sys, time
lib, model, corpus, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
threads_list = [int(t) for t in sys.argv[5].split(",")]
lines = open(corpus, encoding="utf-8").read().splitlines()
if lib == "tokenizers":
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(model)
    encode = lambda threads: [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
else:
    if lib == "tokenmill":
        import tokenmill.sentencepiece as spm
    else:
        import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    encode = lambda threads: sp.encode(lines, num_threads=threads)
ids = None

def timed(threads):
    global ids
    ids = None  # the previous run's output is freed first, as bench_pipeline.py does
    t, c = time.perf_counter(), time.process_time()
    ids = encode(threads)
    return time.perf_counter() - t, time.process_time() - c

# One untimed run per thread count warms what a long-lived process has warm (word caches, the
# pool's threads). Then the thread counts take turns, one run each per round, so that the
# machine's drift (it is shared) falls on all of them alike; the scaling is the median of the
# rounds' own ratios.
first = {threads: timed(threads)[0] for threads in threads_list}
rounds = [{threads: timed(threads) for threads in threads_list} for _ in range(repeat)]
out = {threads: {"wall": statistics.median(r[threads][0] for r in rounds),
                 "cpu": statistics.median(r[threads][1] for r in rounds),
                 "first_wall": first[threads]}
       for threads in threads_list}
scaling = {threads: [r[threads_list[0]][0] / r[threads][0] for r in rounds]
           for threads in threads_list}
digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"times": out, "scaling": scaling, "digest": digest, "tokens": sum(map(len, ids)),
                  "peak_rss_mb": peak}))
"""

UNIGRAM_TRAIN_CORPUS = "corpora/english_large/gutenberg_en_large_part2.txt"


def train_reference_unigram(tmp: Path, mb: float) -> Path:
    """A 32k Unigram model trained by sentencepiece (its defaults) on the first `mb` MB of part 2
    (kept: an existing model in `tmp` is used as it is)."""
    if (tmp / "english_unigram_32k.model").exists():
        return tmp / "english_unigram_32k.model"
    data = (SHARED / UNIGRAM_TRAIN_CORPUS).read_bytes()[: int(mb * 1e6)]
    (tmp / "unigram_train.txt").write_bytes(data[: data.rfind(b"\n") + 1])
    code = (
        "import sys, sentencepiece as s; s.SentencePieceTrainer.train(input=sys.argv[1], "
        "model_prefix=sys.argv[2], model_type='unigram', vocab_size=32000, minloglevel=2)"
    )
    subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(tmp / "unigram_train.txt"),
            str(tmp / "english_unigram_32k"),
        ],
        check=True,
    )
    return tmp / "english_unigram_32k.model"


def worker(
    lib: str, model: str, corpus: Path, repeat: int, threads: str, env: dict | None = None
) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, lib, model, str(corpus), str(repeat), threads],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(proc.stdout)


def encoding_input(data: bytes, mb: float, tmp: Path) -> Path:
    """The first `mb` MB of `data`, cut at a line end, as tmp/enc.txt."""
    sample = data[: int(mb * 1e6)]
    (tmp / "enc.txt").write_bytes(sample[: sample.rfind(b"\n") + 1])
    return tmp / "enc.txt"


def tokenmill_only(args, data: bytes) -> None:
    """--tokenmill-only: tokenmill's encoding runs (1 and 2 threads) and its SentencePiece-BPE
    training, to --json. The 32k Unigram model sentencepiece trains is kept in the cache."""
    results = Results()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.skip_encode:
            enc = encoding_input(data, args.mb, tmp)
            models = {name: str(SHARED / model) for name, model in MODELS.items()}
            if args.unigram_mb > 0:
                kept = cache_dir() / f"sp_unigram_32k_{args.unigram_mb:g}mb"
                kept.mkdir(exist_ok=True)
                model = train_reference_unigram(kept, args.unigram_mb)
                models["english 32k (Unigram)"] = str(model)
            for name, model_file in models.items():
                try:
                    r = worker("tokenmill", model_file, enc, args.repeat, "1,2")
                except subprocess.CalledProcessError as e:
                    fail(f"{name}: {(e.stderr or '').strip()[-2000:]}")
                for threads, t in r["times"].items():
                    results.add(
                        f"{name} encode {threads} thr",
                        t["wall"],
                        t["cpu"],
                        r["peak_rss_mb"],
                        r["digest"],
                    )
        if not args.skip_train:
            train_path = training_input(SHARED / CORPUS, args.train_mb, tmp)
            r = run_spbpe_child("tokenmill", train_path, tmp / "tokenmill", args.vocab)
            if "error" in r:
                fail(f"SentencePiece-BPE training: {r['error']}")
            results.add(
                "SentencePiece-BPE train",
                r["seconds"],
                r["cpu_seconds"],
                r["peak_rss_mb"],
                digest_of(r["vocab"]),
            )
    results.write(args.json)


def main() -> None:
    ap = bench_parser(__doc__)
    ap.add_argument(
        "--mb",
        type=float,
        default=20.0,
        help="MB of text to encode (default 20: with less, a two-thread run lasts ~0.1 s and its "
        "ratio is noise)",
    )
    ap.add_argument("--train-mb", type=float, default=10.0)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="interleaved rounds (one run per thread count each) per library; medians are reported",
    )
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--skip-encode", action="store_true")
    ap.add_argument(
        "--unigram-mb",
        type=float,
        default=10.0,
        help="MB of english_large part 2 for the 32k Unigram model sentencepiece trains "
        "(0: leave it out)",
    )
    args = parse_args(ap)
    data = (SHARED / CORPUS).read_bytes()
    if args.tokenmill_only:
        tokenmill_only(args, data)
        return
    peer_results = PeerResults("sentencepiece", "tokenizers")
    peer_results.note(
        f"encoding: {args.mb:g} MB of {Path(CORPUS).name} as lines; medians of {args.repeat}"
        " interleaved rounds per library (one process each); tokenizers runs the equivalent"
        " tokenizer.json. Training: timed once."
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.skip_encode:
            encoding_input(data, args.mb, tmp)
            models = {name: str(SHARED / model) for name, model in MODELS.items()}
            if args.unigram_mb > 0:
                models["english 32k (Unigram)"] = str(train_reference_unigram(tmp, args.unigram_mb))
            for name, model_file in models.items():
                json_file = tmp / (Path(model_file).stem + ".json")
                converted = (
                    subprocess.run(
                        [
                            sys.executable,
                            "-c",
                            "import sys, tokenmill.sentencepiece as t; "
                            "t.to_tokenizer(sys.argv[1]).save(sys.argv[2])",
                            model_file,
                            str(json_file),
                        ],
                        capture_output=True,
                        text=True,
                    ).returncode
                    == 0
                )
                results = {}
                for lib in ("tokenmill", "sentencepiece"):
                    results[lib] = worker(lib, model_file, tmp / "enc.txt", args.repeat, "1,2")
                # tokenizers picks its thread count from the environment, once per process.
                for threads in (1, 2) if converted else ():
                    env = dict(
                        os.environ, RAYON_RS_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true"
                    )
                    r = worker(
                        "tokenizers",
                        str(json_file),
                        tmp / "enc.txt",
                        args.repeat,
                        str(threads),
                        env,
                    )
                    results.setdefault("tokenizers", {"times": {}, "digest": r["digest"]})[
                        "times"
                    ].update(r["times"])
                mb = args.mb
                same = {
                    lib: r["digest"] == results["sentencepiece"]["digest"]
                    for lib, r in results.items()
                }
                print(f"{name}: {mb:.1f} MB, ids identical to sentencepiece: {same}")
                times = {lib: r["times"] for lib, r in results.items()}
                for lib, r in results.items():
                    check = f"ids {'identical to' if same[lib] else 'differ from'} sentencepiece's"
                    for threads, t in r["times"].items():
                        case, peak = f"{name} encode {threads} thr", r.get("peak_rss_mb")
                        peer_results.add(case, lib, t["wall"], t["cpu"], peak, mb, check)
                for threads, kind in (("1", "cpu"), ("1", "wall"), ("2", "wall")):
                    t, r = times["tokenmill"][threads][kind], times["sentencepiece"][threads][kind]
                    line = (
                        f"  {threads} thread{'s' if threads == '2' else ' '} ({kind:4}): "
                        f"tokenmill {mb / t:6.2f} MB/s  sentencepiece {mb / r:6.2f} MB/s  "
                        f"×sentencepiece {r / t:5.2f}"
                    )
                    if "tokenizers" in times:
                        h = times["tokenizers"][threads][kind]
                        line += f"  tokenizers {mb / h:6.2f} MB/s  ×tokenizers {h / t:5.2f}"
                    print(line)
                for lib in ("tokenmill", "sentencepiece"):
                    ratios = results[lib]["scaling"]["2"]
                    first = [results[lib]["times"][n]["first_wall"] for n in ("1", "2")]
                    print(
                        f"  {lib} 2 vs 1 threads (wall): {statistics.median(ratios):4.2f}x, "
                        f"median of {len(ratios)} interleaved rounds "
                        f"({', '.join(f'{x:.2f}' for x in ratios)}); first runs "
                        f"{first[0]:.2f} s / {first[1]:.2f} s"
                    )
        if not args.skip_train:
            # The same setup as `bench_train.py --model spbpe` (spbpe_setup.py).
            train_path = training_input(SHARED / CORPUS, args.train_mb, tmp)
            r = {
                lib: run_spbpe_child(lib, train_path, tmp / lib, args.vocab)
                for lib in ("tokenmill", "sentencepiece")
            }
            if any("error" in x for x in r.values()):
                print(
                    "SentencePiece-BPE training failed:",
                    {lib: x.get("error") for lib, x in r.items()},
                )
                peer_results.note(f"SentencePiece-BPE training failed: {r}")
                peer_results.write(args.json)
                return
            t, s = r["tokenmill"], r["sentencepiece"]
            common = len(set(s["vocab"]) & set(t["vocab"]))
            check = f"{100 * common / len(s['vocab']):.2f}% of sentencepiece's pieces learned"
            for lib, x in r.items():
                peer_results.add(
                    f"SentencePiece-BPE train {args.train_mb:g} MB, vocab {args.vocab}",
                    lib,
                    x["seconds"],
                    x["cpu_seconds"],
                    x["peak_rss_mb"],
                    args.train_mb,
                    check if lib == "tokenmill" else None,
                )
            print(
                f"SentencePiece-BPE training, {args.train_mb:g} MB, vocab {args.vocab}: "
                f"tokenmill {t['seconds']:.1f} s ({t['cpu_seconds']:.1f} s CPU, "
                f"{t['peak_rss_mb']:.0f} MB peak), sentencepiece {s['seconds']:.1f} s "
                f"({s['cpu_seconds']:.1f} s CPU, {s['peak_rss_mb']:.0f} MB peak); speed ratio "
                f"{s['seconds'] / t['seconds']:.2f}x wall, "
                f"{s['cpu_seconds'] / t['cpu_seconds']:.2f}x CPU"
            )
    peer_results.write(args.json)


if __name__ == "__main__":
    main()
