"""Bigram collocations end to end — tokens in, n best out — tokenmill vs NLTK, same tokens,
same run.

    python bench/bench_collocations.py [--books N] [--measure likelihood_ratio] [--top 100]
                                       [--repeat 3]

Tokens: alphabetic word tokens (``\\w+`` runs that are all letters) of the English Gutenberg
novels in ../shared/corpora/gutenberg/en_novels (the first N books, about 1.9 M tokens for all).
Each library runs in its own child process (one thread), so peak memory is measured apart:
``peak`` is the child's high-water RSS minus its RSS after loading the tokens. Both pipelines:
``from_words(tokens)`` → ``apply_freq_filter(3)`` → ``nbest(measure, top)``, and a second one
without the filter (every bigram scored). The results are checked to be identical. Wall time and
CPU time are both printed (medians of ``--repeat`` runs): on a busy shared machine the CPU-time
ratio is the fairer one.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time

from _common import SHARED, PeerResults, Results, bench_parser, digest_of, fail, parse_args

BOOKS = SHARED / "corpora" / "gutenberg" / "en_novels"
PIPELINES = [("filtered", "count + freq filter 3 + nbest"), ("all", "count + nbest (all bigrams)")]


def load_tokens(n_books):
    paths = sorted(BOOKS.glob("*.txt"))[:n_books]
    tokens = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        tokens.extend(w for w in re.findall(r"\w+", text) if w.isalpha())
    return tokens


def rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def run_side(side, n_books, measure, top, repeat):
    tokens = load_tokens(n_books)
    if side == "nltk":
        from nltk.collocations import BigramCollocationFinder
        from nltk.metrics.association import BigramAssocMeasures
    else:
        from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder
    score_fn = getattr(BigramAssocMeasures, measure)
    baseline = rss_kib("VmRSS")
    results = {"tokens": len(tokens)}
    for label, min_freq in [("filtered", 3), ("all", None)]:
        runs = []
        for _ in range(repeat):
            start, cpu_start = time.perf_counter(), time.process_time()
            finder = BigramCollocationFinder.from_words(tokens)
            counted = time.perf_counter()
            if min_freq:
                finder.apply_freq_filter(min_freq)
            best = finder.nbest(score_fn, top)
            done, cpu_done = time.perf_counter(), time.process_time()
            runs.append(
                {
                    "cpu_s": cpu_done - cpu_start,
                    "count_s": counted - start,
                    "total_s": done - start,
                    "candidates": len(finder.ngram_fd),
                    "best": [list(b) for b in best],
                }
            )
            del finder
        # Median of the runs, field by field (they give the same results).
        median = {
            key: sorted(r[key] for r in runs)[len(runs) // 2]
            for key in ("cpu_s", "count_s", "total_s")
        }
        results[label] = dict(runs[-1], **median)
    results["peak_mib"] = (rss_kib("VmHWM") - baseline) / 1024
    print(json.dumps(results))


def child(side, args):
    cmd = [
        sys.executable,
        __file__,
        "--side",
        side,
        "--books",
        str(args.books),
        "--measure",
        args.measure,
        "--top",
        str(args.top),
        "--repeat",
        str(args.repeat),
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def tokenmill_only(args):
    """--tokenmill-only: tokenmill's two pipelines (medians of --repeat runs) to --json; peak_mb
    is the child's peak above its tokens, as in the table."""
    try:
        ours = child("tokenmill", args)
    except subprocess.CalledProcessError as e:
        fail(f"tokenmill child: {(e.stderr or '').strip()[-2000:]}")
    results = Results()
    for label, title in PIPELINES:
        r = ours[label]
        digest = digest_of([r["candidates"], r["best"]])
        results.add(title, r["total_s"], r["cpu_s"], ours["peak_mib"], digest)
    results.write(args.json)


def main():
    parser = bench_parser(__doc__)
    parser.add_argument("--books", type=int, default=9)
    parser.add_argument("--measure", default="likelihood_ratio")
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per pipeline in each child; times are medians"
    )
    parser.add_argument("--side", choices=["nltk", "tokenmill"], help=argparse.SUPPRESS)
    args = parse_args(parser)
    if args.side:
        run_side(args.side, args.books, args.measure, args.top, args.repeat)
        return
    if args.tokenmill_only:
        tokenmill_only(args)
        return
    ours = child("tokenmill", args)
    theirs = child("nltk", args)
    print(
        f"bigram collocations, {ours['tokens']:,} tokens, measure {args.measure}, nbest {args.top}"
    )
    print(f"{'pipeline':<34}{'NLTK s':>9}{'tokenmill s':>13}{'speed-up':>10}")
    peer_results = PeerResults("nltk")
    peer_results.note(
        f"{ours['tokens']:,} tokens ({args.books} books), measure {args.measure}, nbest"
        f" {args.top}; medians of {args.repeat} runs in one process per library; peak memory is"
        " the process's peak above its tokens"
    )
    for label, title in PIPELINES:
        t, o = theirs[label], ours[label]
        assert t["best"] == o["best"], f"{label}: different results"
        assert t["candidates"] == o["candidates"]
        for lib, r in (("tokenmill", ours), ("nltk", theirs)):
            peak, check = r["peak_mib"], "n best and candidates identical"
            peer_results.add(title, lib, r[label]["total_s"], r[label]["cpu_s"], peak, None, check)
        for name, key in (
            (title, "total_s"),
            ("  of which counting", "count_s"),
            ("  CPU time (process_time)", "cpu_s"),
        ):
            print(f"{name:<34}{t[key]:>9.2f}{o[key]:>13.3f}{t[key] / o[key]:>9.1f}x")
    print(
        f"{'peak memory above tokens (MiB)':<34}{theirs['peak_mib']:>9.0f}{ours['peak_mib']:>13.0f}"
        f"{theirs['peak_mib'] / max(ours['peak_mib'], 1e-9):>9.1f}x"
    )
    print("results identical: yes")
    peer_results.write(args.json)


if __name__ == "__main__":
    main()
