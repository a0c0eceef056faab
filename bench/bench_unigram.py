"""Unigram benchmark: training (tokenmill vs sentencepiece vs tokenizers) and encoding (one
thread).

    python bench/bench_unigram.py      # first 10 MB of english_large part1, vocab 32000
    python bench/bench_unigram.py --mb 2 --vocab-size 8000 --skip tokenizers
    python bench/bench_unigram.py --long-input   # one long line: time and peak memory
    python bench/bench_unigram.py --long-input --long-models bpe --long-chars 1000000,10000000

Training: each trainer runs in its own subprocess, one after the other, on the same file with the
same options (vocab_size, character_coverage 1.0, max piece length 16, shrinking factor 0.75, two EM
sub-iterations, seed size 1M). tokenmill is timed twice: ``tokenmill.sentencepiece`` is
``SentencePieceTrainer.train(model_type="unigram", ...)`` with exactly sentencepiece's options
(normalization ``identity``, ``num_threads=2``; sentencepiece's piece rules: no piece mixes
scripts or holds digits with letters), the like-for-like comparison; ``tokenmill`` is
``Tokenizer.train`` with ``trainers.UnigramTrainer`` on Metaspace words (``tokenizers``' rules:
any substring may be a piece), compared with ``tokenizers``. Reported: wall and CPU time and
peak RSS of the training process, and the quality of each vocabulary on held-out text (the
first 2 MB of english_large part2), scored the same way for all by tokenmill's Unigram model:
log-likelihood per word (all segmentations) and bytes per token (best segmentation).

Long input (``--long-input``): ``SentencePieceTrainer.train`` (tokenmill and sentencepiece,
``max_sentence_length`` 10**9) on a file of one line — a run of one letter, or random letters —
for Unigram and BPE at the sizes of ``--long-chars`` (sentencepiece's Unigram on one long run
takes minutes from 100,000 characters on: its rows stop at ``--long-spm-unigram-max``;
``--long-models`` picks the model types); prints wall time and peak RSS per character of each,
and whether the two vocabularies are the same.

Encoding: sentencepiece's model (trained above) against tokenmill running the same vocabulary
(Metaspace + Unigram with sentencepiece's piece types), one thread each, on the held-out lines;
the ids are checked to be identical.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import _common as common

TRAIN_FILE = common.SHARED / "corpora" / "english_large" / "gutenberg_en_large_part1.txt"
HELD_OUT_FILE = common.SHARED / "corpora" / "english_large" / "gutenberg_en_large_part2.txt"

TRAIN_CHILD = r"""
import json, resource, sys, time
lib, path, vocab_size, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if lib in ("tokenmill", "tokenizers"):
    if lib == "tokenmill":
        from tokenmill import Tokenizer, models, pre_tokenizers, trainers
    else:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, show_progress=False, unk_token="<unk>",
                                      special_tokens=["<unk>"], shrinking_factor=0.75,
                                      max_piece_length=16, n_sub_iterations=2)
    start, cpu = time.perf_counter(), time.process_time()
    tok.train([path], trainer)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    vocab = [tuple(v) for v in json.loads(tok.to_str())["model"]["vocab"]]
    result = {"pieces": [(p, s, 2 if p == "<unk>" else 1) for p, s in vocab]}
else:
    import tempfile, os
    if lib == "tokenmill.sentencepiece":
        import tokenmill.sentencepiece as spm
    else:
        import sentencepiece as spm
    d = tempfile.mkdtemp()
    start, cpu = time.perf_counter(), time.process_time()
    spm.SentencePieceTrainer.train(input=path, model_prefix=os.path.join(d, "m"),
                                   model_type="unigram", vocab_size=vocab_size,
                                   character_coverage=1.0, normalization_rule_name="identity",
                                   shrinking_factor=0.75, max_sentencepiece_length=16,
                                   num_sub_iterations=2, num_threads=2, minloglevel=2)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    sp = spm.SentencePieceProcessor(model_file=os.path.join(d, "m.model"))
    kind = lambda i: (2 if sp.is_unknown(i) else 3 if sp.is_control(i) else 5 if sp.is_unused(i)
                      else 6 if sp.is_byte(i) else 1)
    result = {"pieces": [(sp.id_to_piece(i), sp.get_score(i), kind(i))
                         for i in range(sp.get_piece_size())],
              "model_file": os.path.join(d, "m.model")}
result["seconds"] = seconds
result["cpu_seconds"] = cpu
result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump(result, open(out, "w"))
"""

ENCODE_CHILD = r"""
import json, sys, time
lib, model_file, pieces_file, lines_file, out = sys.argv[1:6]
lines = open(lines_file, encoding="utf-8").read().split("\n")
if lib == "sentencepiece":
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model_file)
    sp.encode(lines[:100], num_threads=1)
    start, cpu = time.perf_counter(), time.process_time()
    ids = sp.encode(lines, num_threads=1)
else:
    from tokenmill import Tokenizer, pre_tokenizers
    from tokenmill.models import Unigram
    pieces = [tuple(p) for p in json.load(open(pieces_file))]
    unk = [i for i, p in enumerate(pieces) if p[2] == 2][0]
    tok = Tokenizer(Unigram._from_sentencepiece(pieces, unk, False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.encode_batch(lines[:100], add_special_tokens=False)
    start, cpu = time.perf_counter(), time.process_time()
    ids = [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
import resource
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
json.dump({"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mb": peak, "ids": ids}, open(out, "w"))
"""


def run(code: str, args: list[str], out: str, env: dict | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args, out], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        tail = (
            proc.stderr.strip().splitlines()[-1]
            if proc.stderr.strip()
            else f"exit {proc.returncode}"
        )
        return {"error": tail}
    return json.load(open(out))


def head(path: Path, max_bytes: int) -> str:
    with open(path, "rb") as f:
        data = f.read(max_bytes)
    cut = data.rfind(b"\n")
    return data[: cut + 1].decode("utf-8", errors="ignore")


def quality(pieces: list, held_out: Counter) -> tuple[float, float]:
    """Log-likelihood per word and bytes per token of the held-out words, by tokenmill's Unigram."""
    from tokenmill.models import Unigram

    normal = [(p, s) for p, s, kind in pieces if kind == 1] + [("<unk>", 0.0)]
    model = Unigram(normal, len(normal) - 1, False)
    ll = tokens = size = total = 0
    for word, n in held_out.items():
        ll += n * model.log_likelihood(word)
        tokens += n * len(model.tokenize(word))
        size += n * len(word.encode())
        total += n
    return ll / total, size / tokens


def write_training_file(work: str, mb: float) -> str:
    """The first `mb` MB of the training file, runs of spaces collapsed (sentencepiece's
    remove_extra_whitespaces) so that all three trainers see the same words."""
    train_path = os.path.join(work, "train.txt")
    with open(train_path, "w", encoding="utf-8") as f:
        f.write(
            "".join(
                " ".join(line.split()) + "\n"
                for line in head(TRAIN_FILE, int(mb * 1e6)).splitlines()
                if line.strip()
            )
        )
    return train_path


def write_held_out_lines(work: str, held_text: str) -> tuple[str, list[str]]:
    """The held-out text's non-empty lines, spaces collapsed, as a file (and the lines)."""
    lines_path = os.path.join(work, "lines.txt")
    lines = [" ".join(line.split()) for line in held_text.splitlines()]
    lines = [line for line in lines if line]
    with open(lines_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return lines_path, lines


def tokenmill_only(args, work: str) -> None:
    """--tokenmill-only: both tokenmill trainers and the encoding of the held-out lines with
    sentencepiece's vocabulary (trained once, kept in the cache), to --json."""
    results = common.Results()
    train_path = write_training_file(work, args.mb)
    for lib, case in (
        ("tokenmill.sentencepiece", "train SentencePieceTrainer"),
        ("tokenmill", "train UnigramTrainer"),
    ):
        r = run(TRAIN_CHILD, [lib, train_path, str(args.vocab_size)], f"{work}/{lib}.json")
        if "error" in r:
            common.fail(f"{case}: {r['error']}")
        results.add(
            case, r["seconds"], r["cpu_seconds"], r["peak_rss_mb"], common.digest_of(r["pieces"])
        )
    pieces_path = common.cache_dir() / f"unigram_sp_pieces_{args.mb:g}mb_{args.vocab_size}.json"
    if not pieces_path.exists():
        r = run(TRAIN_CHILD, ["sentencepiece", train_path, str(args.vocab_size)], f"{work}/sp.json")
        if "error" in r:
            common.fail(f"sentencepiece's training (the encoding's vocabulary): {r['error']}")
        with open(f"{pieces_path}.tmp", "w") as f:
            json.dump(r["pieces"], f)
        os.replace(f"{pieces_path}.tmp", pieces_path)
    lines_path, _ = write_held_out_lines(work, head(HELD_OUT_FILE, int(args.held_out_mb * 1e6)))
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    r = run(ENCODE_CHILD, ["tokenmill", "-", str(pieces_path), lines_path], f"{work}/enc.json", env)
    if "error" in r:
        common.fail(f"encoding: {r['error']}")
    results.add(
        "encode 1 thr", r["seconds"], r["cpu_seconds"], r["peak_rss_mb"], common.digest_of(r["ids"])
    )
    results.write(args.json)


LONG_CHILD = r"""
import json, resource, sys, time
lib, model_type, path, vocab_size, prefix = sys.argv[1:6]
if lib == "sentencepiece":
    import sentencepiece as spm
    extra = {"minloglevel": 2}
else:
    import tokenmill.sentencepiece as spm
    extra = {}
start = time.perf_counter()
spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, vocab_size=int(vocab_size),
                               model_type=model_type, max_sentence_length=10**9,
                               hard_vocab_limit=False, **extra)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
json.dump({"seconds": seconds, "peak_bytes": peak, "vocab": open(prefix + ".vocab").read()},
          open(sys.argv[6], "w"))
"""


def long_input(args, work: str) -> None:
    """--long-input: one-line corpora, tokenmill against sentencepiece (see the docstring)."""
    import random

    print("# SentencePieceTrainer on one long line: seconds, peak RSS bytes per character")
    print(f"{'model':8} {'input':8} {'chars':>10}  {'tokenmill':>18}  {'sentencepiece':>18}  same")
    vocab_size = 1000
    for model_type in args.long_models:
        for kind in ("repeated", "random"):
            for chars in args.long_chars:
                rng = random.Random(0)
                text = (
                    "a" * chars
                    if kind == "repeated"
                    else "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(chars))
                )
                path = os.path.join(work, "line.txt")
                with open(path, "w") as f:
                    f.write(text + "\n")
                cells, vocabs = [], []
                for lib in ("tokenmill", "sentencepiece"):
                    if (
                        lib == "sentencepiece"
                        and model_type == "unigram"
                        and chars > args.long_spm_unigram_max
                    ):
                        cells.append(f"{'(skipped)':>18}")
                        continue
                    out = os.path.join(work, f"{lib}.json")
                    args_ = [lib, model_type, path, str(vocab_size), os.path.join(work, lib)]
                    r = run(LONG_CHILD, args_, out)
                    if "error" in r:
                        cells.append(f"{'error':>18}")
                        continue
                    vocabs.append(r["vocab"])
                    cells.append(f"{r['seconds']:7.2f} s {r['peak_bytes'] / chars:6.0f} B/c")
                same = "-" if len(vocabs) < 2 else "yes" if vocabs[0] == vocabs[1] else "no"
                print(f"{model_type:8} {kind:8} {chars:>10}  {cells[0]}  {cells[1]}  {same}")


def main() -> None:
    ap = common.bench_parser(__doc__)
    ap.add_argument(
        "--mb", type=float, default=10.0, help="training megabytes (first MB of the file)"
    )
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--held-out-mb", type=float, default=2.0)
    ap.add_argument(
        "--skip",
        action="append",
        default=[],
        help="tokenmill.sentencepiece, tokenmill, sentencepiece or tokenizers",
    )
    ap.add_argument(
        "--long-input", action="store_true", help="only the one-long-line rows (see above)"
    )
    ap.add_argument(
        "--long-chars",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[100_000, 1_000_000],
        help="comma-separated line lengths for --long-input (default 100000,1000000)",
    )
    ap.add_argument("--long-spm-unigram-max", type=int, default=100_000)
    ap.add_argument(
        "--long-models",
        type=lambda v: v.split(","),
        default=["unigram", "bpe"],
        help="comma-separated model types for --long-input (default unigram,bpe)",
    )
    args = common.parse_args(ap)
    if args.long_input:
        with tempfile.TemporaryDirectory() as work:
            long_input(args, work)
        return
    if args.tokenmill_only:
        with tempfile.TemporaryDirectory() as work:
            tokenmill_only(args, work)
        return
    work = tempfile.mkdtemp()
    train_path = write_training_file(work, args.mb)
    held_text = head(HELD_OUT_FILE, int(args.held_out_mb * 1e6))
    held_out = Counter("\u2581" + w for w in held_text.split())
    print(
        f"# Unigram training: {args.mb:g} MB of {TRAIN_FILE.name}, vocab {args.vocab_size}; "
        f"held out: {args.held_out_mb:g} MB of {HELD_OUT_FILE.name}"
    )
    print(f"# {platform.platform()}, {os.cpu_count()} cpus, python {platform.python_version()}")
    peer_results = common.PeerResults("sentencepiece", "tokenizers")
    peer_results.note(
        f"training: {args.mb:g} MB of {TRAIN_FILE.name}, vocab {args.vocab_size}, one process per"
        f" trainer, timed once; held out: {args.held_out_mb:g} MB of {HELD_OUT_FILE.name}"
    )
    results = {}
    for lib in ("tokenmill.sentencepiece", "sentencepiece", "tokenmill", "tokenizers"):
        if lib in args.skip:
            continue
        r = run(
            TRAIN_CHILD, [lib, train_path, str(args.vocab_size)], os.path.join(work, f"{lib}.json")
        )
        if "error" not in r:
            r["ll"], r["bpt"] = quality(r["pieces"], held_out)
        results[lib] = r
        print(
            f"{lib}: "
            + (
                r["error"]
                if "error" in r
                else f"{r['seconds']:.1f} s ({r['cpu_seconds']:.1f} s CPU), "
                f"{r['peak_rss_mb']:.0f} MB, ll/word {r['ll']:.4f}, bytes/token {r['bpt']:.4f}"
            ),
            flush=True,
        )
    # Ratios: sentencepiece against the like-for-like SentencePieceTrainer run, tokenizers
    # against Tokenizer.train (each peer against the tokenmill run with its own options).
    baseline = {"sentencepiece": "tokenmill.sentencepiece", "tokenizers": "tokenmill"}
    print(
        "\n| trainer | time (s) | CPU (s) | peak RSS (MB) | held-out ll/word | bytes/token "
        "| time ÷ tokenmill | CPU ÷ tokenmill | memory ÷ tokenmill |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    cases = {
        "tokenmill.sentencepiece": "train (SentencePieceTrainer, its options)",
        "sentencepiece": "train (SentencePieceTrainer, its options)",
        "tokenmill": "train (UnigramTrainer, tokenizers' options)",
        "tokenizers": "train (UnigramTrainer, tokenizers' options)",
    }
    quality_rows = []
    for lib, r in results.items():
        if "error" in r:
            print(f"| {lib} | error: {r['error']} |||||")
            peer_results.add(cases[lib], lib, check=f"failed: {r['error']}")
            continue
        ours = results.get(baseline.get(lib, lib), {})
        peak = r["peak_rss_mb"]
        peer_results.add(cases[lib], lib, r["seconds"], r["cpu_seconds"], peak, args.mb)
        quality_rows.append([lib, f"{r['ll']:.4f}", f"{r['bpt']:.4f}"])
        t_ratio, c_ratio, m_ratio = common.ratios(r, ours)
        print(
            f"| {lib} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['peak_rss_mb']:.0f} "
            f"| {r['ll']:.4f} | {r['bpt']:.4f} | {t_ratio:.2f} | {c_ratio:.2f} | {m_ratio:.2f} |"
        )

    peer_results.table(
        "Vocabulary quality on the held-out text (scored by tokenmill's Unigram model)",
        ["trainer", "log-likelihood per word", "bytes per token"],
        quality_rows,
    )
    sp = results.get("sentencepiece", {})
    if "model_file" not in sp or "tokenmill" in args.skip:
        peer_results.write(args.json)
        return
    lines_path, lines = write_held_out_lines(work, held_text)
    pieces_path = os.path.join(work, "pieces.json")
    with open(pieces_path, "w") as f:
        json.dump(sp["pieces"], f)
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    enc = {
        lib: run(
            ENCODE_CHILD,
            [lib, sp["model_file"], pieces_path, lines_path],
            os.path.join(work, f"enc_{lib}.json"),
            env,
        )
        for lib in ("sentencepiece", "tokenmill")
    }
    if any("error" in r for r in enc.values()):
        print("encoding:", {k: v.get("error") for k, v in enc.items()})
        peer_results.note(f"encoding failed: { ({k: v.get('error') for k, v in enc.items()}) }")
        peer_results.write(args.json)
        return
    same = sum(a == b for a, b in zip(enc["sentencepiece"]["ids"], enc["tokenmill"]["ids"]))
    mb = len(held_text.encode()) / 1e6
    for lib, r in enc.items():
        check = f"identical ids on {same}/{len(lines)} lines" if lib == "tokenmill" else None
        case = "encode 1 thr (sentencepiece's vocabulary, held-out lines)"
        peer_results.add(case, lib, r["seconds"], r["cpu_seconds"], r["peak_rss_mb"], mb, check)
    peer_results.note(
        "encoding: the lines that differ are where sentencepiece's NFKC normalization or its"
        " whole-line float sums break a tie differently"
    )
    peer_results.write(args.json)
    s, t = enc["sentencepiece"]["seconds"], enc["tokenmill"]["seconds"]
    print(f"\n| encoding, 1 thread ({mb:.1f} MB, {len(lines)} lines) | seconds | MB/s |")
    print("|---|---:|---:|")
    print(f"| sentencepiece | {s:.2f} | {mb / s:.1f} |")
    print(f"| tokenmill | {t:.2f} | {mb / t:.1f} |")
    print(f"\nspeed-up {s / t:.2f}x; identical ids on {same}/{len(lines)} lines")
    # Not a bug: this tokenmill pipeline is a Tokenizer (Metaspace-split words, each Viterbi
    # started from score 0, no NFKC normalizer), not sentencepiece's; `tokenizers` loading the
    # same tokenizer.json gives the ids tokenmill gives for it on every line (README,
    # SentencePiece encoding).
    print(
        "(lines differ where sentencepiece's NFKC normalization or its whole-line float sums "
        "break a tie differently)"
    )


if __name__ == "__main__":
    main()
