"""tiktoken-compatible encoding: tokenmill vs tiktoken vs quicktok, one command.

    python bench/bench_tiktoken.py [--english-mb 20] [--code-mb 20]
                                   [--encodings cl100k_base o200k_base]

For each encoding and each input (English prose: the start of english_large part 1; code: the
Python standard library sources; multilingual: every file of corpora/multilingual concatenated),
each library runs in its own subprocess (so peak RSS is its own): it loads the encoding (timed),
then runs `encode_ordinary` on the whole input, one thread, timed as the best of `--repeat` runs.
Times are the worker's CPU time (`time.process_time`), which other processes on a shared machine
do not inflate; for these single-threaded calls it equals wall time on an idle machine.
The parent checks that all libraries produced identical ids and prints MB/s, ratios and peak RSS.

Rank files come from ../shared/pretrained (tiktoken is fed them offline via TIKTOKEN_CACHE_DIR;
quicktok ships its own copies of cl100k/o200k).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    SHARED,
    PeerResults,
    Results,
    bench_parser,
    digest_of,
    fail,
    parse_args,
    versions,
)

BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
RANK_FILES = {
    "cl100k_base": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base": "o200k_base/o200k_base.tiktoken",
    "r50k_base": "whisper/gpt2.tiktoken",
    "p50k_base": "p50k_base/p50k_base.tiktoken",
}
LIBRARIES = ["tokenmill", "tiktoken", "quicktok"]


def build_inputs(
    workdir: Path, english_mb: float, code_mb: float, multilingual_mb: float
) -> dict[str, Path]:
    """Writes the three inputs as UTF-8 files and returns their paths."""
    corpora = SHARED / "corpora"
    inputs = {}
    english = (corpora / "english_large" / "gutenberg_en_large_part1.txt").read_bytes()[
        : int(english_mb * 1e6)
    ]
    inputs["english"] = english[: english.rfind(b"\n") + 1]
    # The code input is the corpus `tokenmill train` trains on by default (its stdlib_files).
    from tokenmill.cli import stdlib_files

    code, limit = [], int(code_mb * 1e6)
    for p in stdlib_files():
        data = Path(p).read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # the 4 encoding-declaration test files
        code.append(data)
        limit -= len(data)
        if limit <= 0:
            break
    inputs["code"] = b"".join(code)
    inputs["multilingual"] = b"".join(
        p.read_bytes() for p in sorted((corpora / "multilingual").rglob("*.txt"))
    )[: int(multilingual_mb * 1e6)]
    inputs["multilingual"] = (
        inputs["multilingual"].decode("utf-8", "ignore").encode("utf-8")
    )  # cut at a character
    paths = {}
    for name, data in inputs.items():
        path = workdir / f"{name}.txt"
        path.write_bytes(data)
        paths[name] = path
    return paths


WORKER = r"""
import json, resource, sys, time
import numpy as np
lib, encoding, repeat, out_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
inputs = json.loads(sys.argv[5])
t0 = time.process_time()
if lib == "tokenmill":
    from tokenmill import tiktoken as m
    enc = m.get_encoding(encoding, path=sys.argv[6])
elif lib == "tiktoken":
    import tiktoken as m
    enc = m.get_encoding(encoding)
else:
    import quicktok as m
    enc = m.get_encoding(encoding)
enc.encode_ordinary("warm up")
load = time.process_time() - t0
result = {"load_s": load, "runs": {}}
for name, path in inputs.items():
    text = open(path, encoding="utf-8").read()
    best = best_wall = float("inf")
    for _ in range(repeat):
        w0, t0 = time.perf_counter(), time.process_time()
        ids = enc.encode_ordinary(text)
        best = min(best, time.process_time() - t0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    np.save(f"{out_dir}/{lib}_{encoding}_{name}.npy", np.asarray(ids, dtype=np.uint32))
    result["runs"][name] = {"seconds": best, "wall_seconds": best_wall,
                            "bytes": len(text.encode("utf-8")), "tokens": len(ids)}
    del ids, text
result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(result))
"""


def run_library(
    lib: str, encoding: str, inputs: dict[str, Path], repeat: int, out_dir: Path, cache_dir: Path
) -> dict:
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(cache_dir), RAYON_NUM_THREADS="1")
    cmd = [
        sys.executable,
        "-c",
        WORKER,
        lib,
        encoding,
        str(repeat),
        str(out_dir),
        json.dumps({k: str(v) for k, v in inputs.items()}),
        str(SHARED / "pretrained"),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{lib} {encoding} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tokenmill_only(args, inputs: dict[str, Path], tmp: Path, cache: Path) -> None:
    """--tokenmill-only: the load and every input of every encoding, tokenmill alone, to --json.
    Both times of an input are its best of --repeat (CPU and wall, taken apart); the load is
    timed once, in CPU time (which stands for its wall time too)."""
    import numpy as np

    results = Results()
    for encoding in args.encodings:
        try:
            r = run_library("tokenmill", encoding, inputs, args.repeat, tmp, cache)
        except RuntimeError as e:
            fail(str(e))
        results.add(f"{encoding} load", r["load_s"], r["load_s"], r["peak_rss_mb"])
        for name, run in r["runs"].items():
            ids = np.load(tmp / f"tokenmill_{encoding}_{name}.npy")
            results.add(
                f"{encoding} {name}",
                run["wall_seconds"],
                run["seconds"],
                r["peak_rss_mb"],
                digest_of(ids.astype(np.uint32).tobytes()),
            )
    results.write(args.json)


def main() -> None:
    ap = bench_parser(__doc__)
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    ap.add_argument("--english-mb", type=float, default=20)
    ap.add_argument("--code-mb", type=float, default=20)
    ap.add_argument(
        "--multilingual-mb", type=float, default=100, help="cap (the folder holds ~25 MB)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per input; the best time counts")
    ap.add_argument("--libraries", nargs="+", default=LIBRARIES)
    args = parse_args(ap)
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = tmp / "tiktoken_cache"
        cache.mkdir()
        for name, rel in RANK_FILES.items():
            os.symlink(
                SHARED / "pretrained" / rel,
                cache / hashlib.sha1(f"{BLOB}{name}.tiktoken".encode()).hexdigest(),
            )
        inputs = build_inputs(tmp, args.english_mb, args.code_mb, args.multilingual_mb)
        if args.tokenmill_only:
            tokenmill_only(args, inputs, tmp, cache)
            return
        print(
            f"machine: {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} cpus, "
            f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}; "
            f"{versions('tokenmill', 'tiktoken', 'quicktok-v1')}"
        )
        print(
            "inputs: "
            + ", ".join(f"{k} {v.stat().st_size / 1e6:.1f} MB" for k, v in inputs.items())
        )
        print(
            f"encode_ordinary, one thread, best of {args.repeat}; times are CPU time of the worker "
            "process (the machine is shared, so wall time would measure the neighbours too)"
        )
        header = f"{'encoding':<12} {'input':<13} " + " ".join(
            f"{lib + ' MB/s':>15}" for lib in args.libraries
        )
        header += "  " + " ".join(f"{'vs ' + lib:>12}" for lib in args.libraries[1:]) + "  ids"
        rows, loads, rss = [], {}, {}
        peer_results = PeerResults("tiktoken", "quicktok-v1", "numpy")
        peer_results.note(
            "encode_ordinary, one thread, in one process per library and encoding; times are the"
            f" best of {args.repeat} runs (CPU and wall taken apart); the load is CPU time;"
            " inputs: "
            + ", ".join(f"{k} {v.stat().st_size / 1e6:.1f} MB" for k, v in inputs.items())
        )
        for encoding in args.encodings:
            results = {
                lib: run_library(lib, encoding, inputs, args.repeat, tmp, cache)
                for lib in args.libraries
            }
            for lib, r in results.items():
                loads[(encoding, lib)] = r["load_s"]
                rss[(encoding, lib)] = r["peak_rss_mb"]
                peer_results.add(f"{encoding} load", lib, None, r["load_s"], r["peak_rss_mb"])
            for name in inputs:
                speeds = {
                    lib: results[lib]["runs"][name]["bytes"]
                    / 1e6
                    / results[lib]["runs"][name]["seconds"]
                    for lib in args.libraries
                }
                ids = {lib: np.load(tmp / f"{lib}_{encoding}_{name}.npy") for lib in args.libraries}
                first = ids[args.libraries[0]]
                same = all(np.array_equal(first, other) for other in ids.values())
                row = f"{encoding:<12} {name:<13} " + " ".join(
                    f"{speeds[lib]:>15.1f}" for lib in args.libraries
                )
                row += "  " + " ".join(
                    f"{speeds[args.libraries[0]] / speeds[lib]:>11.2f}x"
                    for lib in args.libraries[1:]
                )
                row += "  " + ("identical" if same else "DIFFERENT")
                rows.append(row)
                for lib in args.libraries:
                    run = results[lib]["runs"][name]
                    peer_results.add(
                        f"{encoding} {name}",
                        lib,
                        run["wall_seconds"],
                        run["seconds"],
                        results[lib]["peak_rss_mb"],
                        run["bytes"] / 1e6,
                        "ids identical in all libraries" if same else "ids DIFFERENT",
                    )
        print(header)
        print("\n".join(rows))
        print()
        print(
            f"{'encoding':<12} "
            + " ".join(f"{lib + ' load s':>16}" for lib in args.libraries)
            + "   "
            + " ".join(f"{lib + ' peak RSS MB':>22}" for lib in args.libraries)
        )
        for encoding in args.encodings:
            print(
                f"{encoding:<12} "
                + " ".join(f"{loads[(encoding, lib)]:>16.3f}" for lib in args.libraries)
                + "   "
                + " ".join(f"{rss[(encoding, lib)]:>22.0f}" for lib in args.libraries)
            )
        print("(peak RSS includes reading the inputs and the Python list of ids)")
        peer_results.note("peak RSS includes reading the inputs and the Python list of ids")
        peer_results.write(args.json)


if __name__ == "__main__":
    main()
