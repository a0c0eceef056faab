"""Full-pipeline benchmark: tokenmill against Hugging Face `tokenizers`, same documents, same run.

Cases (each a tokenizer.json built with `tokenizers` from ../shared/pretrained, then loaded by
both libraries from that file):
  gpt2  GPT-2 byte-level BPE (encoder.json + vocab.bpe, ByteLevel pre-tokenizer and
        post-processor, <|endoftext|> added)
  bert  bert_base_uncased WordPiece (BertWordPieceTokenizer defaults: BertNormalizer,
        BertPreTokenizer, BertProcessing, [CLS] ... [SEP])
Paths:
  offsets  encode_batch -> Encodings with offsets (both libraries)
  ids      tokenmill encode_batch_ids -> NumPy ids + boundaries (tokenizers has no such path;
           its row is encode_batch, the same work it needs to get the ids)
  padded   bert only: truncation (max_length 256) + padding to the longest, as NumPy arrays
           (input_ids, attention_mask, token_type_ids); tokenizers: enable_truncation +
           enable_padding + encode_batch + numpy.array, tokenmill: the same settings through
           its own API (`tok(docs, ..., return_tensors="np")` when available)

Documents: ~1 kB pieces cut at line ends from ../shared/corpora/english_large (part 1).
Every (library, case, path, threads) runs in its own subprocess, so thread settings and peak
memory (ru_maxrss, input and outputs included) are per run. Each subprocess encodes the same
documents once (the cold run, reported on its own) and then `--repeat` times. The whole set of
subprocesses runs `--rounds` times, the thread counts of one library and path back to back
within a round. The table gives, over the rounds, the median of each subprocess's median wall
and CPU time (runs after the cold one) and of its cold run; every ratio is taken within a round,
then the median over the rounds (printed per round for the thread scaling): on a shared
machine, runs minutes apart differ by more than the effects measured. The ids (and padded
arrays) of every tokenmill run are checked identical to
`tokenizers`' before anything is printed as a success.

Ratios are printed against `tokenizers` on the same case and thread count, by wall time and by
CPU time (read the CPU column on a loaded machine: with other processes on the cores, wall time
mostly measures the scheduler). Thread scaling ("x 1 thread") can only be read off wall time on
an otherwise idle machine; "cpu/wall" shows how many cores a run kept busy.

    python bench/bench_pipeline.py [--mbytes 20] [--threads 1,2] [--repeat 3] [--rounds 3]
                                   [--cases gpt2,bert] [--paths offsets,ids,padded]
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import SHARED, PeerResults, Results, bench_parser, fail, parse_args

CORPUS = SHARED / "corpora" / "english_large" / "gutenberg_en_large_part1.txt"
GPT2 = SHARED / "pretrained" / "gpt2"
BERT_VOCAB = SHARED / "pretrained" / "bert_base_uncased" / "vocab.txt"
PADDED_MAX_LENGTH = 256
PATHS = {"gpt2": ("offsets", "ids"), "bert": ("offsets", "ids", "padded")}


def load_documents(mbytes: float, doc_bytes: int = 1000) -> list[str]:
    """~`mbytes` MB of the corpus cut into ~`doc_bytes` documents at line ends."""
    limit = int(mbytes * 1_000_000)
    docs, current, size, total = [], [], 0, 0
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            current.append(line)
            size += len(line)
            if size >= doc_bytes:
                doc = "".join(current)
                docs.append(doc)
                total += len(doc.encode("utf-8"))
                current, size = [], 0
                if total >= limit:
                    break
    return docs


def build_gpt2_json(path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    t = Tokenizer(models.BPE.from_file(str(GPT2 / "encoder.json"), str(GPT2 / "vocab.bpe")))
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.post_processor = processors.ByteLevel(trim_offsets=True)
    t.add_special_tokens(["<|endoftext|>"])
    t.save(str(path))


def build_bert_json(path: Path) -> None:
    from tokenizers.implementations import BertWordPieceTokenizer

    BertWordPieceTokenizer(str(BERT_VOCAB), lowercase=True).save(str(path))


def digest(rows) -> str:
    """sha256 over the rows (each a sequence of ints) with their lengths."""
    h = hashlib.sha256()
    for row in rows:
        h.update(len(row).to_bytes(4, "little"))
        for i in row:
            h.update(int(i).to_bytes(4, "little"))
    return h.hexdigest()


def padded_arrays(tok, lib: str, docs: list[str]):
    """(input_ids, attention_mask, token_type_ids) as NumPy arrays, truncated + padded."""
    import numpy as np

    if lib == "tokenmill" and callable(tok):
        try:
            out = tok(
                docs,
                truncation=True,
                max_length=PADDED_MAX_LENGTH,
                padding="longest",
                return_tensors="np",
            )
            return out["input_ids"], out["attention_mask"], out["token_type_ids"]
        except TypeError:
            pass  # no transformers-style call: use the same API as tokenizers below
    encodings = tok.encode_batch(docs)
    return (
        np.array([e.ids for e in encodings], dtype=np.int64),
        np.array([e.attention_mask for e in encodings], dtype=np.int64),
        np.array([e.type_ids for e in encodings], dtype=np.int64),
    )


def worker(lib: str, path: str, tokenizer_json: str, mbytes: float, repeat: int) -> dict:
    # NumPy is imported before anything is timed, for both libraries: its first import starts
    # OpenBLAS's threads, which spin for a while afterwards and took CPU from the first runs.
    import numpy  # noqa: F401

    docs = load_documents(mbytes)
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    if lib == "tokenizers":
        import tokenizers as module
    else:
        import tokenmill as module
    tok = module.Tokenizer.from_file(tokenizer_json)
    if path == "padded":
        tok.enable_truncation(PADDED_MAX_LENGTH)
        tok.enable_padding()
    walls, cpus = [], []
    result = None
    # The first (cold) run is reported on its own and left out of the medians: it fills the
    # caches and the allocator's memory, which a long-lived process has warm.
    for _ in range(repeat + 1):
        result = None  # the previous run's output is freed first, as a loop over batches would
        wall, cpu = time.perf_counter(), time.process_time()
        if path == "offsets" or (path == "ids" and lib == "tokenizers"):
            result = tok.encode_batch(docs)
        elif path == "ids":
            result = tok.encode_batch_ids(docs)
        else:
            result = padded_arrays(tok, lib, docs)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    if path == "padded":
        rows = [row for array in result for row in array.tolist()]
        tokens = int(result[1].sum())
    elif path == "ids" and lib == "tokenmill":
        flat, bounds = result
        flat = flat.tolist()
        rows = [flat[bounds[i] : bounds[i + 1]] for i in range(len(docs))]
        tokens = len(flat)
    else:
        rows = [e.ids for e in result]
        tokens = sum(len(r) for r in rows)
        # touch the offsets so that both libraries are known to have computed them
        assert all(len(e.offsets) == len(e.ids) for e in result[:100])
    return {
        "wall": statistics.median(walls[1:]),
        "cpu": statistics.median(cpus[1:]),
        "first_wall": walls[0],
        "bytes": nbytes,
        "docs": len(docs),
        "tokens": tokens,
        "digest": digest(rows),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run(
    lib: str, path: str, threads: int, tokenizer_json: Path, mbytes: float, repeat: int
) -> dict:
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(threads)
    env["RAYON_RS_NUM_CPUS"] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        lib,
        path,
        str(tokenizer_json),
        str(mbytes),
        str(repeat),
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last}
    return json.loads(out.stdout.strip().splitlines()[-1])


def tokenmill_only(args, cases: list[str], paths: list[str], threads: list[int]) -> None:
    """--tokenmill-only: every (case, path, threads) run of tokenmill once, written to --json.
    The tokenizer.json files are built by `tokenizers`, as in the full run."""
    results = Results()
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            tokenizer_json = Path(tmp) / f"{case}_tokenizer.json"
            (build_gpt2_json if case == "gpt2" else build_bert_json)(tokenizer_json)
            for path in [p for p in PATHS[case] if p in paths]:
                for n in threads:
                    r = run("tokenmill", path, n, tokenizer_json, args.mbytes, args.repeat)
                    if "error" in r:
                        fail(f"{case} {path} threads={n}: {r['error']}")
                    results.add(
                        f"{case} {path} {n} thr", r["wall"], r["cpu"], r["peak_rss_mb"], r["digest"]
                    )
    results.write(args.json)


def comma_list(text: str) -> list[str]:
    return [t for t in text.replace(" ", ",").split(",") if t]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        lib, path, tokenizer_json, mbytes, repeat = sys.argv[2:7]
        print(json.dumps(worker(lib, path, tokenizer_json, float(mbytes), int(repeat))))
        return
    parser = bench_parser(__doc__)
    parser.add_argument(
        "--mbytes", type=float, default=20.0, help="MB of documents to encode (default 20)"
    )
    parser.add_argument(
        "--threads", default="1,2", help="thread counts, comma-separated (default 1,2)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timed runs per subprocess after the cold one; medians are reported (default 3)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="times the whole set of subprocesses runs, interleaved; ratios are medians over "
        "rounds (default 3)",
    )
    parser.add_argument("--cases", default="gpt2,bert", help="gpt2 and/or bert (default both)")
    parser.add_argument(
        "--paths",
        default="offsets,ids,padded",
        help="offsets, ids, padded (default all that apply)",
    )
    args = parse_args(parser)
    threads = [int(t) for t in comma_list(args.threads)]
    cases, paths = comma_list(args.cases), comma_list(args.paths)
    needed = {"gpt2": [GPT2 / "encoder.json", GPT2 / "vocab.bpe"], "bert": [BERT_VOCAB]}
    for path in [CORPUS] + [p for c in cases for p in needed[c]]:
        if not path.exists():
            sys.exit(f"missing {path} (the ../shared data; set TOKENMILL_SHARED)")
    if args.tokenmill_only:
        tokenmill_only(args, cases, paths, threads)
        return

    import tokenizers
    import tokenmill

    # Runs by key (library, case, path, threads), one per round. Within a round the thread counts
    # of one library and path run back to back, and the rounds repeat the whole set: the drift of
    # a shared machine then falls on the runs that are compared with each other alike, and every
    # ratio is taken within a round and then the median over the rounds.
    runs: dict[tuple, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_number in range(1, args.rounds + 1):
            for case in cases:
                tokenizer_json = Path(tmp) / f"{case}_tokenizer.json"
                if round_number == 1:
                    (build_gpt2_json if case == "gpt2" else build_bert_json)(tokenizer_json)
                for path in [p for p in PATHS[case] if p in paths]:
                    for lib in ("tokenizers", "tokenmill"):
                        if lib == "tokenizers" and path == "ids":
                            continue  # its ids row is its offsets row
                        for n in threads:
                            r = run(lib, path, n, tokenizer_json, args.mbytes, args.repeat)
                            runs.setdefault((lib, case, path, n), []).append(r)
                            status = (
                                r.get("error") or f"{r['wall']:.2f} s wall, {r['cpu']:.2f} s cpu"
                            )
                            print(
                                f"  round {round_number}: ran {case} {lib:10s} {path:7s}"
                                f" threads={n}: {status}",
                                file=sys.stderr,
                            )

    def ratio_of(
        numerators: list[dict] | None, denominators: list[dict], field: str = "wall"
    ) -> float | None:
        """The median over the rounds of numerator / denominator (None if a run is missing)."""
        if not numerators or not denominators:
            return None
        if any("error" in x for x in numerators + denominators):
            return None
        pairs = zip(numerators, denominators)
        return statistics.median(a[field] / b[field] for a, b in pairs)

    def median_ratio(
        numerators: list[dict] | None, denominators: list[dict], field: str = "wall"
    ) -> str:
        """``ratio_of`` printed, or "-" if a run is missing."""
        value = ratio_of(numerators, denominators, field)
        return "-" if value is None else f"{value:.2f}x"

    peer_results = PeerResults("tokenizers", "numpy")
    peer_results.note(
        f"{args.mbytes:g} MB of ~1 kB documents from {CORPUS.name}; median of {args.repeat} runs"
        f" per subprocess after a cold one, {args.rounds} interleaved round(s); ratios are medians"
        " of the rounds' own ratios; the ids row of tokenizers is its encode_batch"
    )

    print(
        f"tokenmill {tokenmill.__version__} vs tokenizers {tokenizers.__version__}; "
        f"{args.mbytes:g} MB of ~1 kB documents from {CORPUS.name}; median of {args.repeat} runs "
        f"per subprocess, {args.rounds} round(s); {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    header = (
        f"{'case':<6}{'library':<12}{'path':<9}{'thr':>4}{'wall s':>8}{'cpu s':>8}{'cold s':>8}"
        f"{'MB/s':>8}{'peak MB':>9}{'x tok (wall)':>13}{'x tok (cpu)':>12}{'x 1 thread':>11}"
        f"{'cpu/wall':>9}"
    )
    print(header)
    print("-" * len(header))
    mismatches, scaling_lines, compared = [], [], 0
    for (lib, case, path, n), rounds in runs.items():
        failed = [x["error"] for x in rounds if "error" in x]
        if failed:
            print(f"{case:<6}{lib:<12}{path:<9}{n:>4}  failed: {failed[0]}")
            peer_results.add(f"{case} {path} {n} thr", lib, check=f"failed: {failed[0]}")
            continue
        reference = runs.get(("tokenizers", case, "offsets" if path == "ids" else path, n))
        one_thread = runs.get((lib, case, path, min(threads)))
        check = None
        if reference and lib == "tokenmill":
            pairs = [(x, r) for x, r in zip(reference, rounds) if "error" not in x]
            compared += len(pairs)
            if any(x["digest"] != r["digest"] for x, r in pairs):
                mismatches.append((case, path, n))
                check = "DIFFERENT from tokenizers"
            else:
                check = f"identical to tokenizers ({len(pairs)} runs)"
        med = {
            field: statistics.median(x[field] for x in rounds)
            for field in ("wall", "cpu", "first_wall")
        }
        scaling = median_ratio(one_thread, rounds)
        if n != min(threads) and args.rounds > 1 and scaling != "-":
            per_round = ", ".join(
                f"{a['wall'] / b['wall']:.2f}" for a, b in zip(one_thread, rounds)
            )
            scaling_lines.append(
                f"  {case} {lib} {path} {n} threads vs {min(threads)}: {scaling}"
                f" (rounds: {per_round})"
            )
        print(
            f"{case:<6}{lib:<12}{path:<9}{n:>4}{med['wall']:>8.2f}{med['cpu']:>8.2f}"
            f"{med['first_wall']:>8.2f}{rounds[0]['bytes'] / 1e6 / med['wall']:>8.2f}"
            f"{max(x['peak_rss_mb'] for x in rounds):>9.0f}{median_ratio(reference, rounds):>13}"
            f"{median_ratio(reference, rounds, 'cpu'):>12}{scaling:>11}"
            f"{med['cpu'] / med['wall']:>9.2f}"
        )
        labels = [path]
        if lib == "tokenizers" and path == "offsets" and "ids" in paths:
            labels.append("ids")  # the ids row of tokenizers is its offsets row
        for label in labels:
            ours = runs.get(("tokenmill", case, label, n))
            peer_results.add(
                f"{case} {label} {n} thr",
                lib,
                med["wall"],
                med["cpu"],
                max(x["peak_rss_mb"] for x in rounds),
                rounds[0]["bytes"] / 1e6,
                check,
                None
                if lib == "tokenmill"
                else {field: ratio_of(rounds, ours, field) for field in ("wall", "cpu")},
            )
    if scaling_lines:
        print("thread scaling, per round:")
        print("\n".join(scaling_lines))
    peer_results.write(args.json)
    if mismatches:
        sys.exit(f"tokenmill output differs from tokenizers in: {mismatches}")
    if compared:
        print(
            "tokenmill ids (padded arrays for 'padded') identical to tokenizers in all "
            f"{compared} compared runs"
        )
    else:
        print(
            "no tokenizers run to compare with (the ids path is compared through --paths offsets)"
        )


if __name__ == "__main__":
    main()
