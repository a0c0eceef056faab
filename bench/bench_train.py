"""Training benchmark: tokenmill vs tokenizers (vs sentencepiece's BPE trainer).

    # english_large part1 (39 MB), vocab 32000, min_frequency 2:
    python bench/bench_train.py
    # medians of 3 interleaved runs:
    python bench/bench_train.py --mb 5 --vocab-size 8000 --repeat 3
    python bench/bench_train.py --file some.txt --skip sentencepiece
    # BERT WordPiece, vocab 30000 (tokenizers only):
    python bench/bench_train.py --model wordpiece
    # SentencePiece BPE, tokenmill.sentencepiece vs sentencepiece:
    python bench/bench_train.py --model spbpe --mb 10

Each trainer runs in its own subprocess (same file, same settings, one after the other) and reports
its training wall time and peak RSS; the table gives the ratios to tokenmill and whether tokenmill's
merges and vocabulary are identical to tokenizers'. tokenmill and tokenizers train the same way:
``Tokenizer(BPE())`` + ``ByteLevel(add_prefix_space=False)`` pre-tokenizer,
``BpeTrainer(initial_alphabet=ByteLevel.alphabet())``, ``train([file])`` (one document per line).
sentencepiece (``model_type=bpe``, its own normalization; merges not comparable) is timed only.

``--model wordpiece`` trains BERT's WordPiece as ``BertWordPieceTokenizer.train`` does in both
libraries (``BertNormalizer(lowercase=True)``, ``BertPreTokenizer``, ``WordPieceTrainer`` with
``[PAD] [UNK] [CLS] [SEP] [MASK]``, ``limit_alphabet=1000``, ``##``). tokenizers gives the ``##x``
tokens ids in hash order, so the vocabularies are compared as sets of tokens.

``--model spbpe`` trains SentencePiece BPE with ``SentencePieceTrainer.train(input=file,
model_type="bpe", vocab_size=32000, num_threads=2)`` in ``tokenmill.sentencepiece`` and in
``sentencepiece`` (every other option at its default; the setup is ``spbpe_setup.py``'s, shared
with ``bench_sentencepiece.py``). sentencepiece picks each merge among an
"active" 5% of the candidates, tokenmill always takes the true best pair, so the pieces are
compared as sets (the share of sentencepiece's pieces that tokenmill learned too).

Every row gives the training wall time, the process's CPU time (user + system, all threads; the
fairer figure on a loaded machine) and its peak RSS.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as common
from spbpe_setup import run_spbpe_child, training_input

DEFAULT_FILE = common.SHARED / "corpora" / "english_large" / "gutenberg_en_large_part1.txt"

CHILD = r"""
import json, resource, sys, time
lib, path, vocab_size, min_frequency, out, kind = sys.argv[1:7]
vocab_size, min_frequency = int(vocab_size), int(min_frequency)
def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
if kind == "wordpiece":
    if lib == "tokenmill":
        from tokenmill import Tokenizer, models, normalizers, pre_tokenizers, trainers
    else:
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                        show_progress=False, limit_alphabet=1000,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                                        "[MASK]"])
    start, cpu_start = time.perf_counter(), cpu_seconds()
    tok.train([path], trainer)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    # training's peak (before reading results)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"vocab": json.loads(tok.to_str())["model"]["vocab"]}
elif lib in ("tokenmill", "tokenizers"):
    if lib == "tokenmill":
        from tokenmill import Tokenizer, models, pre_tokenizers, trainers
    else:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    start, cpu_start = time.perf_counter(), cpu_seconds()
    tok.train([path], trainer)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    # training's peak (before reading results)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model = json.loads(tok.to_str())["model"]
    merges = [m if isinstance(m, list) else m.split(" ") for m in model["merges"]]
    result = {"vocab": model["vocab"], "merges": merges}
else:
    import sentencepiece as spm, tempfile, os
    d = tempfile.mkdtemp()
    start, cpu_start = time.perf_counter(), cpu_seconds()
    spm.SentencePieceTrainer.train(input=path, model_prefix=os.path.join(d, "m"), model_type="bpe",
                                   vocab_size=vocab_size, num_threads=2, minloglevel=2)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    # training's peak (before reading results)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {}
result["seconds"] = seconds
result["cpu_seconds"] = cpu
result["peak_rss_mb"] = peak_mb
json.dump(result, open(out, "w"))
"""


def run_child(
    lib: str, path: Path, vocab_size: int, min_frequency: int, workdir: str, kind: str
) -> dict:
    if kind == "spbpe":
        start = time.perf_counter()
        result = run_spbpe_child(lib, path, Path(workdir) / lib, vocab_size)
        result["process_seconds"] = time.perf_counter() - start
        return result
    out = os.path.join(workdir, f"{lib}.json")
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            lib,
            str(path),
            str(vocab_size),
            str(min_frequency),
            out,
            kind,
        ],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {
            "error": proc.stderr.strip().splitlines()[-1]
            if proc.stderr.strip()
            else f"exit {proc.returncode}"
        }
    with open(out) as f:
        result = json.load(f)
    result["process_seconds"] = wall
    return result


def median_run(runs: list) -> dict:
    """The first successful run's results with each timing / memory figure replaced by its
    median over the successful runs (the first error if every run failed)."""
    good = [r for r in runs if "error" not in r]
    if not good:
        return runs[0]
    out = dict(good[0])
    for key in ("seconds", "cpu_seconds", "process_seconds", "peak_rss_mb"):
        out[key] = statistics.median(r[key] for r in good)
    out["runs"] = len(good)
    return out


def write_tokenmill_only(args, runs: list) -> None:
    """--tokenmill-only: tokenmill's training (medians of --repeat runs) to --json."""
    for r in runs:
        if "error" in r:
            common.fail(f"{args.model} training: {r['error']}")
    r = median_run(runs)
    results = common.Results()
    output = {key: r[key] for key in ("vocab", "merges") if key in r}
    results.add(
        f"{args.model} train",
        r["seconds"],
        r["cpu_seconds"],
        r["peak_rss_mb"],
        common.digest_of(output),
    )
    results.write(args.json)


def main() -> int:
    p = common.bench_parser(__doc__)
    p.add_argument("--file", type=Path, default=DEFAULT_FILE)
    p.add_argument(
        "--mb", type=float, default=None, help="train on the first N MB only (cut at a line end)"
    )
    p.add_argument(
        "--model",
        choices=["bpe", "wordpiece", "spbpe"],
        default="bpe",
        help="byte-level BPE (default), BERT WordPiece, or SentencePiece BPE (vs sentencepiece)",
    )
    p.add_argument(
        "--vocab-size", type=int, default=None, help="default 32000 (bpe) / 30000 (wordpiece)"
    )
    p.add_argument("--min-frequency", type=int, default=2)
    p.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["tokenizers", "sentencepiece"],
        help="leave a peer out",
    )
    p.add_argument(
        "--repeat", type=int, default=1, help="runs per library, interleaved; medians are shown"
    )
    args = common.parse_args(p)
    if args.vocab_size is None:
        args.vocab_size = 30000 if args.model == "wordpiece" else 32000
    if args.model == "wordpiece":
        args.skip = sorted(set(args.skip) | {"sentencepiece"})
    if args.model == "spbpe":
        args.skip = sorted(set(args.skip) | {"tokenizers"})
    if not args.file.exists():
        print(f"missing {args.file} (the ../shared corpora beside the repo)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as workdir:
        path = training_input(args.file, args.mb, Path(workdir))
        size_mb = path.stat().st_size / 1e6
        libs = ["tokenmill"] + [
            lib
            for lib in ("tokenizers", "sentencepiece")
            if lib not in args.skip and not args.tokenmill_only
        ]
        runs: dict = {lib: [] for lib in libs}
        for _ in range(max(1, args.repeat)):
            for lib in libs:
                runs[lib].append(
                    run_child(lib, path, args.vocab_size, args.min_frequency, workdir, args.model)
                )
        results = {lib: median_run(r) for lib, r in runs.items()}
    if args.tokenmill_only:
        write_tokenmill_only(args, runs["tokenmill"])
        return 0
    kind = {"wordpiece": "BERT WordPiece", "spbpe": "SentencePiece BPE"}.get(args.model, "BPE")
    detail = {
        "wordpiece": "BertNormalizer + BertPreTokenizer",
        "spbpe": "SentencePieceTrainer defaults, num_threads=2",
    }.get(args.model, "byte-level")
    print(
        f"# {kind} training: {args.file.name}{f' (first {args.mb} MB)' if args.mb else ''}, "
        f"{size_mb:.1f} MB, {detail}, vocab_size={args.vocab_size}, "
        f"min_frequency={args.min_frequency}; median of {max(1, args.repeat)} run(s)"
    )
    print(
        f"# {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}; "
        f"{common.versions('tokenmill', 'tokenizers', 'sentencepiece')}"
    )
    ours = results["tokenmill"]
    peer_results = common.PeerResults("tokenizers", "sentencepiece")
    peer_results.note(
        f"{kind} training, {size_mb:.1f} MB of {args.file.name}, {detail},"
        f" vocab_size={args.vocab_size}, min_frequency={args.min_frequency}; one process per"
        f" trainer, medians of {max(1, args.repeat)} interleaved run(s)"
    )
    case = f"{args.model} train {size_mb:.1f} MB, vocab {args.vocab_size}"
    print(
        f"{'library':<14} {'train s':>8} {'cpu s':>7} {'process s':>9} {'peak MB':>8} "
        f"{'time vs tokenmill':>17} {'cpu vs tokenmill':>16} {'mem vs tokenmill':>16}  result"
    )
    for lib, r in results.items():
        if "error" in r:
            print(f"{lib:<14} failed: {r['error']}")
            peer_results.add(case, lib, check=f"failed: {r['error']}")
            continue
        same = ""
        if lib == "sentencepiece" and "error" not in ours and args.model == "spbpe":
            shared = len(set(r["vocab"]) & set(ours["vocab"]))
            same = (
                f"{shared} of sentencepiece's {len(r['vocab'])} pieces in tokenmill's "
                f"{len(ours['vocab'])} ({100 * shared / len(r['vocab']):.2f}%)"
            )
        elif lib == "tokenizers" and "error" not in ours and args.model == "wordpiece":
            shared = len(set(r["vocab"]) & set(ours["vocab"]))
            same = (
                f"vocab sizes {len(ours['vocab'])} / {len(r['vocab'])}, {shared} tokens in common "
                f"({100 * shared / len(r['vocab']):.2f}%)"
            )
        elif lib == "tokenizers" and "error" not in ours:
            same = (
                "identical merges and vocab"
                if (r["merges"] == ours["merges"] and r["vocab"] == ours["vocab"])
                else "DIFFERENT"
            )
        t_ratio, c_ratio, m_ratio = common.ratios(r, ours)
        print(
            f"{lib:<14} {r['seconds']:>8.2f} {r['cpu_seconds']:>7.2f} "
            f"{r['process_seconds']:>9.2f} {r['peak_rss_mb']:>8.0f} "
            f"{t_ratio:>16.2f}x {c_ratio:>15.2f}x {m_ratio:>15.2f}x  {same}"
        )
        peak = r["peak_rss_mb"]
        peer_results.add(case, lib, r["seconds"], r["cpu_seconds"], peak, size_mb, same or None)
    peer_results.write(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
