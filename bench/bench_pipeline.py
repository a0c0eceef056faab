"""Full-pipeline benchmark: GPT-2 tokenizer.json, encode_batch of ~1 kB documents with offsets.

tokenmill against Hugging Face `tokenizers` on the same documents (cut from
../shared/corpora/english_large/gutenberg_en_large_part1.txt), each run in its own subprocess
(so thread settings and peak memory are per run), with 1 and 2 threads. The ids of every run
are checked identical to `tokenizers`' before any number is printed.

    python bench/bench_pipeline.py [--mbytes 20] [--threads 1 2] [--repeat 1]

Prints throughput (MB/s of UTF-8 input), time, peak RSS and the ratios.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))
CORPUS = SHARED / "corpora" / "english_large" / "gutenberg_en_large_part1.txt"
GPT2 = SHARED / "pretrained" / "gpt2"


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


def ids_digest(all_ids) -> str:
    h = hashlib.sha256()
    for ids in all_ids:
        h.update(len(ids).to_bytes(4, "little"))
        for i in ids:
            h.update(i.to_bytes(4, "little"))
    return h.hexdigest()


def worker(lib: str, mode: str, tokenizer_json: str, mbytes: float, repeat: int) -> dict:
    docs = load_documents(mbytes)
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    if lib == "tokenizers":
        import tokenizers as module
    else:
        import tokenmill as module
    tok = module.Tokenizer.from_file(tokenizer_json)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        if mode == "ids":
            flat, bounds = tok.encode_batch_ids(docs)
        else:
            encodings = tok.encode_batch(docs)
        best = min(best, time.perf_counter() - start)
    if mode == "ids":
        flat = flat.tolist()
        all_ids = [flat[bounds[i] : bounds[i + 1]] for i in range(len(docs))]
    else:
        all_ids = [e.ids for e in encodings]
        # touch offsets so both libraries are known to have computed them
        assert all(len(e.offsets) == len(e.ids) for e in encodings[:100])
    return {
        "seconds": best,
        "bytes": nbytes,
        "docs": len(docs),
        "tokens": sum(len(i) for i in all_ids),
        "digest": ids_digest(all_ids),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run(lib: str, mode: str, threads: int, tokenizer_json: Path, mbytes: float, repeat: int) -> dict:
    env = dict(os.environ)
    env["RAYON_NUM_THREADS"] = str(threads)
    env["RAYON_RS_NUM_CPUS"] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    cmd = [sys.executable, __file__, "--worker", lib, mode, str(tokenizer_json), str(mbytes), str(repeat)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        lib, mode, path, mbytes, repeat = sys.argv[2:7]
        print(json.dumps(worker(lib, mode, path, float(mbytes), int(repeat))))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mbytes", type=float, default=20.0, help="MB of documents to encode (default 20)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1, help="timed repetitions per run (best is kept)")
    args = parser.parse_args()
    for needed in (CORPUS, GPT2 / "encoder.json", GPT2 / "vocab.bpe"):
        if not needed.exists():
            sys.exit(f"missing {needed} (the ../shared data)")

    import tokenizers
    import tokenmill

    with tempfile.TemporaryDirectory() as tmp:
        tokenizer_json = Path(tmp) / "gpt2_tokenizer.json"
        build_gpt2_json(tokenizer_json)
        rows = []
        for threads in args.threads:
            for lib, mode in (("tokenizers", "encodings"), ("tokenmill", "encodings"), ("tokenmill", "ids")):
                r = run(lib, mode, threads, tokenizer_json, args.mbytes, args.repeat)
                r.update(lib=lib, mode=mode, threads=threads)
                rows.append(r)
                print(f"  ran {lib:10s} {mode:9s} threads={threads}: {r['seconds']:.2f} s", file=sys.stderr)

    reference = {r["threads"]: r for r in rows if r["lib"] == "tokenizers"}
    single = {(r["lib"], r["mode"]): r for r in rows if r["threads"] == min(args.threads)}
    mismatches = [r for r in rows if r["digest"] != reference[r["threads"]]["digest"]]
    print(f"GPT-2 tokenizer.json, encode_batch of {rows[0]['docs']} documents (~1 kB), {rows[0]['bytes'] / 1e6:.1f} MB, "
          f"{rows[0]['tokens']} tokens; tokenizers {tokenizers.__version__}, tokenmill {tokenmill.__version__}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
    header = f"{'library':<12}{'path':<24}{'threads':>8}{'time s':>9}{'MB/s':>9}{'peak MB':>9}{'vs tokenizers':>15}{'vs 1 thread':>13}"
    print(header)
    print("-" * len(header))
    for r in rows:
        mbps = r["bytes"] / 1e6 / r["seconds"]
        ratio = reference[r["threads"]]["seconds"] / r["seconds"]
        scaling = single[(r["lib"], r["mode"])]["seconds"] / r["seconds"]
        path = "encode_batch (offsets)" if r["mode"] == "encodings" else "encode_batch_ids (numpy)"
        print(f"{r['lib']:<12}{path:<24}{r['threads']:>8}{r['seconds']:>9.2f}{mbps:>9.2f}{r['peak_rss_mb']:>9.0f}{ratio:>14.2f}x{scaling:>12.2f}x")
    if mismatches:
        sys.exit(f"ids differ from tokenizers in: {[(r['lib'], r['mode'], r['threads']) for r in mismatches]}")
    print("ids identical to tokenizers in every run")


if __name__ == "__main__":
    main()
