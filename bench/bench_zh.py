"""Chinese word segmentation: SIGHAN 2005 F1 and speed, tokenmill vs jieba, in one run.

    python bench/bench_zh.py                 # PKU and MSR, F1 + speed (3 timed rounds)
    python bench/bench_zh.py --corpora pku --rounds 5

Closed track: both segmenters learn only from the bakeoff's training word list
(``$TOKENMILL_SHARED/corpora/sighan2005/<corpus>_training_words.utf8``, words without
frequencies). tokenmill: ``ChineseSegmenter().train(word_list, format="words")`` (every word
frequency 1; its HMM is estimated from the list). jieba: ``jieba.Tokenizer(dictionary=...)`` on
a file with every word and frequency ``--jieba-freq`` (jieba needs one), its HMM as it ships.
F1 is word-boundary F1 from ``tokenmill.words.evaluate`` against ``<corpus>_test_gold.utf8``
(the same function scores both). Both are also scored without their HMM.

Speed: one thread, one call per line of ``<corpus>_test.utf8``, words with character offsets
(tokenmill ``cut_with_offsets``; jieba ``tokenize``, which gives offsets, and ``cut``), process
CPU time (``time.process_time``, robust to a loaded machine), median of ``--rounds``.
"""

from __future__ import annotations

import logging
import os
import tempfile

from _common import (
    SHARED,
    PeerResults,
    Results,
    bench_parser,
    digest_of,
    parse_args,
    peak_rss_mb,
    time_runs,
)
from tokenmill.words import ChineseSegmenter, evaluate

SIGHAN = SHARED / "corpora" / "sighan2005"


def over_lines(seg, lines, as_list=False):
    """A call that segments every line (``as_list``: and makes each result a list)."""
    if as_list:
        return lambda: [list(seg(line)) for line in lines]
    return lambda: [seg(line) for line in lines]


def test_lines(corpus):
    with open(SIGHAN / f"{corpus}_test.utf8", encoding="utf-8") as f:
        return [line.rstrip("\r\n") for line in f]


def tokenmill_only(args):
    """--tokenmill-only: tokenmill's training from the word list and its two speed rows per
    corpus, to --json (in this process: each row's peak is the process's peak so far)."""
    results = Results()
    for corpus in args.corpora.split(","):
        lines = test_lines(corpus)
        ours = ChineseSegmenter.empty()
        words = str(SIGHAN / f"{corpus}_training_words.utf8")
        wall, cpu, _ = time_runs(
            lambda ours=ours, words=words: ours.train(words, format="words"), 1
        )
        results.add(f"{corpus} train", wall, cpu, peak_rss_mb())
        for name, seg in (("cut_with_offsets", ours.cut_with_offsets), ("cut", ours.cut)):
            wall, cpu, out = time_runs(over_lines(seg, lines), args.rounds)
            results.add(f"{corpus} {name}", wall, cpu, peak_rss_mb(), digest_of(out))
    results.write(args.json)


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--corpora", default="pku,msr")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--jieba-freq", type=int, default=3, help="frequency of every word in jieba's dictionary"
    )
    args = parse_args(parser)
    if args.tokenmill_only:
        tokenmill_only(args)
        return
    import jieba

    jieba.setLogLevel(logging.WARNING)
    print(f"{'corpus':6} {'segmenter':28} {'F1':>7} {'P':>7} {'R':>7}")
    speed_rows, f1_rows = [], []
    peer_results = PeerResults("jieba")
    for corpus in args.corpora.split(","):
        words_file = SIGHAN / f"{corpus}_training_words.utf8"
        gold = SIGHAN / f"{corpus}_test_gold.utf8"
        lines = test_lines(corpus)
        mb = sum(len(line.encode("utf-8")) for line in lines) / 1e6

        ours = ChineseSegmenter.empty()
        ours.train(str(words_file), format="words")
        with open(words_file, encoding="utf-8") as f:
            words = [w.strip() for w in f if w.strip()]
        with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
            f.write("".join(f"{w} {args.jieba_freq}\n" for w in words))
            jieba_dict = f.name
        theirs = jieba.Tokenizer(dictionary=jieba_dict)
        theirs.initialize()

        rows = [
            ("tokenmill (HMM)", ours),
            ("tokenmill (no HMM)", None),
            ("jieba (HMM, default)", lambda s, theirs=theirs: list(theirs.cut(s))),
            ("jieba (no HMM)", lambda s, theirs=theirs: list(theirs.cut(s, HMM=False))),
        ]
        for name, seg in rows:
            if seg is None:
                ours.hmm = False
                seg = ours
            scores = evaluate(seg, gold)
            print(
                f"{corpus:6} {name:28} {scores.f1:7.4f} {scores.precision:7.4f} "
                f"{scores.recall:7.4f}"
            )
            f1 = (scores.f1, scores.precision, scores.recall)
            f1_rows.append([corpus, name, *(f"{x:.4f}" for x in f1)])
        ours.hmm = True

        timed = [
            ("words with offsets", "tokenmill", over_lines(ours.cut_with_offsets, lines)),
            ("cut", "tokenmill", over_lines(ours.cut, lines)),
            ("words with offsets", "jieba", over_lines(theirs.tokenize, lines, True)),
            ("cut", "jieba", over_lines(theirs.cut, lines, True)),
        ]
        times = []
        for case, library, run in timed:
            wall, cpu, _ = time_runs(run, args.rounds)
            peer_results.add(f"{corpus} {case}", library, wall, cpu, None, mb)
            times.append(cpu)
        speed_rows.append((corpus, mb, *times))
        os.unlink(jieba_dict)

    print()
    print(
        f"{'corpus':6} {'MB':>5} {'tokenmill offsets':>18} {'tokenmill cut':>14} "
        f"{'jieba tokenize':>15} {'jieba cut':>10} {'× (offsets)':>12} {'× (cut)':>8}"
    )
    for corpus, mb, a, b, c, d in speed_rows:
        print(
            f"{corpus:6} {mb:5.2f} {mb / a:13.2f} MB/s {mb / b:9.2f} MB/s {mb / c:10.2f} MB/s "
            f"{mb / d:5.2f} MB/s {c / a:11.1f}× {d / b:7.1f}×"
        )
    title = "SIGHAN 2005 closed-track word-boundary F1"
    peer_results.table(title, ["corpus", "segmenter", "F1", "P", "R"], f1_rows)
    peer_results.note(
        "one call per test line, one thread, all in one process; medians of"
        f" {args.rounds} runs; words with offsets: tokenmill cut_with_offsets, jieba tokenize;"
        " the segmenters differ by design (see the F1 table)"
    )
    peer_results.write(args.json)


if __name__ == "__main__":
    main()
