"""tokenmill against its peers: every bench, one command, results in bench/RESULTS.md.

    python bench/run.py [--only pipeline,tiktoken,...] [--quick]   # run, then write
    python bench/run.py --render [--readme]                         # re-render, no run

Runs every bench script of this folder (or those named by ``--only``) as the scripts run on
their own -- the same inputs, each library in its own subprocess where the script does so, the
outputs checked -- with the sizes in ``BENCHES`` (``_common.py``), each script with ``--json``
so that its tables come back as data. Then it stores the raw results in ``bench/results.json``
and rewrites the section of ``bench/RESULTS.md`` between ``<!-- peer-run:start -->`` and
``<!-- peer-run:end -->`` with this run only: a header naming the machine (CPU model, cores,
RAM, OS), the date, the load average during the run (the machine may be shared), Python and
rustc, the tokenmill revision and every peer library's version, the exact command lines; then
one table per bench. The old/new build comparison section (``compare_builds.py``) is left as it
is.

Each table row is one library on one case: wall and CPU seconds (each script's own measure:
medians of interleaved rounds where it has rounds, as its ``--help`` says), throughput (MB per
CPU second) where the input size is known, peak RSS, and the ratios of the library's time and
peak memory to tokenmill's on the same case (``time ÷ tokenmill`` above 1: tokenmill is faster).
On a loaded machine read the CPU column: wall time then measures the neighbours too.

``--render`` re-renders RESULTS.md from ``results.json`` without running anything;
``--readme`` also rewrites the summary table of README.md between ``<!-- bench-summary:start
-->`` and ``<!-- bench-summary:end -->`` (one row per headline comparison, its CPU-time ratio and
a link to the full table), and stops with an error if those markers are missing. The exit
status is non-zero when a bench failed (the others still run and are written).

tokenmill must be importable (``PYTHONPATH=python`` after a build, or an installed wheel); the
peers are the ``bench`` extra of pyproject.toml.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from _common import (
    BENCHES,
    PEERS_SECTION,
    REPO,
    RESULTS_MD,
    SHARED,
    LoadSampler,
    bench_parser,
    git_revision,
    load_line,
    machine,
    machine_line,
    markers,
    replace_between,
    selected_benches,
    write_json,
    write_results_section,
    write_text,
)

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_JSON = BENCH_DIR / "results.json"
README = REPO / "README.md"
SUMMARY_SECTION = "bench-summary"

# What each bench compares, as the heading of its table says.
TITLES = {
    "pipeline": "Full encoding pipeline (GPT-2 byte-level BPE, BERT WordPiece) vs tokenizers",
    "tiktoken": "tiktoken encodings (encode_ordinary) vs tiktoken and quicktok",
    "sentencepiece": "SentencePiece encoding and SentencePiece-BPE training vs sentencepiece",
    "unigram": "Unigram training and encoding vs sentencepiece and tokenizers",
    "train": "BPE and WordPiece training vs tokenizers",
    "words": "Word tokenization vs NLTK and spaCy",
    "collocations": "Bigram collocations vs NLTK",
    "zh": "Chinese word segmentation vs jieba",
}

# The README summary: (headline, bench, case, peer library). The case's CPU-time ratio of the
# peer to tokenmill is the row's figure.
HEADLINES = [
    ("tiktoken cl100k_base encode (English)", "tiktoken", "cl100k_base english", "tiktoken"),
    ("tiktoken o200k_base encode (English)", "tiktoken", "o200k_base english", "tiktoken"),
    ("GPT-2 byte-level BPE encode_batch, 1 thread", "pipeline", "gpt2 offsets 1 thr", "tokenizers"),
    ("BERT WordPiece encode_batch, 1 thread", "pipeline", "bert offsets 1 thr", "tokenizers"),
    (
        "SentencePiece encode (Mistral BPE), 1 thread",
        "sentencepiece",
        "mistral_v1 (BPE) encode 1 thr",
        "sentencepiece",
    ),
    ("Byte-level BPE training", "train", "bpe train", "tokenizers"),
    ("Unigram training", "unigram", "train (SentencePieceTrainer", "sentencepiece"),
    ("English word tokenization with offsets", "words", "per paragraph", "nltk-word"),
    ("English word tokenization with offsets", "words", "per paragraph", "spacy"),
    ("Bigram collocations (likelihood ratio)", "collocations", "count + freq filter", "nltk"),
    ("Chinese segmentation with offsets (PKU)", "zh", "pku words with offsets", "jieba"),
]


def run_bench(name: str, quick: bool, work: Path) -> list[dict[str, Any]]:
    """Every invocation of one bench, each script with --json; their results and commands."""
    runs = []
    for index, invocation in enumerate(BENCHES[name]):
        args = invocation.quick if quick else invocation.peers
        out = work / f"{name}-{index}.json"
        command = ["python", f"bench/{invocation.script}", *args]
        print(f"== {name}: {shlex.join(command)}", flush=True)
        start = time.perf_counter()
        cmd = [sys.executable, str(BENCH_DIR / invocation.script), *args, "--json", str(out)]
        code = subprocess.run(cmd).returncode
        run: dict[str, Any] = {
            "command": shlex.join(command),
            "exit": code,
            "seconds": time.perf_counter() - start,
        }
        if out.exists():
            run.update(json.loads(out.read_text()))
        if code != 0 or not out.exists():
            run["error"] = f"exit status {code}" + ("" if out.exists() else ", no results")
            print(f"FAILED: {name}: {run['error']}", file=sys.stderr, flush=True)
        runs.append(run)
    return runs


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    """Runs the benches; the raw results, as results.json stores them."""
    env_note = os.environ.get("PYTHONPATH")
    started = datetime.datetime.now(datetime.timezone.utc)
    benches: dict[str, Any] = {}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, LoadSampler() as load:
        for name in args.benches:
            benches[name] = run_bench(name, args.quick, Path(tmp))
    versions: dict[str, str] = {}
    packages = set()
    for runs in benches.values():
        for run in runs:
            versions.update(run.get("versions", {}))
            if "tokenmill" in run:
                packages.add((run["tokenmill"], run["version"]))
    return {
        "date": f"{started:%Y-%m-%d %H:%M} UTC",
        "minutes": (time.perf_counter() - start) / 60,
        "machine": machine(),
        "load": load.summary(),
        "tokenmill": {
            "revision": git_revision(),
            "imported": sorted(f"{version} from {path}" for path, version in packages),
        },
        "versions": dict(sorted(versions.items())),
        "command": shlex.join(["python", "bench/run.py", *sys.argv[1:]]),
        "pythonpath": env_note,
        "quick": args.quick,
        "benches": benches,
    }


def time_ratio(row: dict, base: dict, field: str) -> Optional[float]:
    """`row`'s time over `base`'s, per MB when both give their input size."""
    a, b = row.get(field), base.get(field)
    if not a or not b:
        return None
    if row.get("mb") and base.get("mb"):
        return (a / row["mb"]) / (b / base["mb"])
    return a / b


def with_ratios(rows: list[dict]) -> list[dict]:
    """The rows, each peer's with its ratios to tokenmill's row of the same case (the script's
    own ratios where it took them)."""
    base = {}
    for row in rows:
        if row["library"].startswith("tokenmill"):
            base.setdefault(row["case"], row)
    # Each case's rows together, in the order the cases came, tokenmill's first.
    order = {case: i for i, case in reversed(list(enumerate(r["case"] for r in rows)))}
    rows = sorted(rows, key=lambda r: (order[r["case"]], not r["library"].startswith("tokenmill")))
    out = []
    for row in rows:
        row = dict(row)
        ours = base.get(row["case"])
        if ours is not None and not row["library"].startswith("tokenmill"):
            given = row.get("ratio") or {}
            row["ratio"] = {
                field: given.get(field) or time_ratio(row, ours, field) for field in ("wall", "cpu")
            }
            if row.get("peak_mb") and ours.get("peak_mb"):
                row["ratio"]["peak"] = row["peak_mb"] / ours["peak_mb"]
        else:
            row["ratio"] = None
        out.append(row)
    return out


def num(value: Optional[float], spec: str) -> str:
    return "–" if value is None else format(value, spec)


def ratio_cell(ratio: Optional[dict], field: str) -> str:
    if not ratio or ratio.get(field) is None:
        return "–"
    return f"{ratio[field]:.2f}"


def bench_table(rows: list[dict]) -> list[str]:
    lines = [
        "| case | library | wall s | CPU s | MB/s (CPU) | peak MB | time ÷ tokenmill (CPU)"
        " | (wall) | peak ÷ tokenmill | output |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in with_ratios(rows):
        speed = row["mb"] / row["cpu"] if row.get("mb") and row.get("cpu") else None
        lines.append(
            f"| {row['case']} | {row['library']} | {num(row['wall'], '.3f')}"
            f" | {num(row['cpu'], '.3f')} | {num(speed, '.2f')} | {num(row['peak_mb'], '.0f')}"
            f" | {ratio_cell(row['ratio'], 'cpu')} | {ratio_cell(row['ratio'], 'wall')}"
            f" | {ratio_cell(row['ratio'], 'peak')} | {row.get('check') or ''} |"
        )
    return lines


def extra_table(table: dict) -> list[str]:
    lines = [
        f"{table['title']}:",
        "",
        "| " + " | ".join(table["header"]) + " |",
        "|" + "---|" * len(table["header"]),
    ]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in table["rows"]]
    return lines


def render_results(results: dict) -> str:
    """The peer-run section of RESULTS.md."""
    host = results["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in results["versions"].items())
    lines = [
        "## tokenmill against its peers",
        "",
        "Written by `python bench/run.py` (bench/README.md), which replaces this section with its"
        " latest run; `python bench/run.py --render` re-renders it from `bench/results.json`."
        " Ratios are the peer's time (or peak memory) over tokenmill's on the same case: above"
        " 1, tokenmill is faster. On a shared machine read the CPU-time ratio.",
        "",
        f"- date: {results['date']}, {results['minutes']:.0f} min"
        + (" (`--quick`: tiny inputs, the figures mean nothing)" if results["quick"] else ""),
        f"- machine: {machine_line(host)}",
        f"- {load_line(results['load'], host['cores'])}",
        f"- tokenmill: revision {results['tokenmill']['revision']}"
        f" ({'; '.join(results['tokenmill']['imported']) or '?'})",
        f"- peers: {versions}",
        f"- command: `{results['command']}`, which ran:",
    ]
    for runs in results["benches"].values():
        lines += [f"  - `{run['command']}`" for run in runs]
    for name, runs in results["benches"].items():
        lines += ["", f"### {name}", "", f"{TITLES.get(name, name)}.", ""]
        for run in runs:
            lines += [f"- {note}" for note in run.get("notes", [])]
            if "error" in run:
                lines.append(f"- `{run['command']}` FAILED: {run['error']}")
        rows = [row for run in runs for row in run.get("rows", [])]
        if rows:
            lines += ["", *bench_table(rows)]
        for run in runs:
            for table in run.get("tables", []):
                lines += ["", *extra_table(table)]
    return "\n".join(lines) + "\n"


def find_row(results: dict, bench: str, case: str, library: str) -> Optional[dict]:
    """The row of `library` on the first case of `bench` that starts with `case`."""
    rows = [row for run in results["benches"].get(bench, []) for row in run.get("rows", [])]
    for row in with_ratios(rows):
        if row["case"].startswith(case) and row["library"] == library:
            return row
    return None


def render_summary(results: dict) -> str:
    """The README summary: one row per headline, its CPU-time ratio, a link to the table."""
    lines = [
        "| benchmark | compared with | tokenmill speed-up (CPU time) | full table |",
        "|---|---|---:|---|",
    ]
    for headline, bench, case, peer in HEADLINES:
        row = find_row(results, bench, case, peer)
        ratio = ratio_cell(row["ratio"] if row else None, "cpu")
        ratio = ratio if ratio == "–" else f"{ratio}×"
        link = f"[{bench}](bench/RESULTS.md#{bench})"
        lines.append(f"| {headline} | {peer} | {ratio} | {link} |")
    lines += [
        "",
        "Peer's CPU time over tokenmill's on the same input (per MB where the inputs differ),"
        " the outputs checked identical, except for word tokenization and Chinese segmentation,"
        " whose tokenizers differ by design and are compared by F1 in the full tables; from the"
        " latest `python bench/run.py`. The machine, versions and every table are in"
        " [bench/RESULTS.md](bench/RESULTS.md).",
    ]
    return "\n".join(lines) + "\n"


def readme_with_summary(results: dict) -> str:
    """README.md with its summary table replaced; stops with an error naming the markers when
    README.md lacks them."""
    text = README.read_text(encoding="utf-8")
    new = replace_between(text, SUMMARY_SECTION, render_summary(results))
    if new is None:
        start, end = markers(SUMMARY_SECTION)
        sys.exit(f"{README} has no summary table markers: add the lines {start} and {end}")
    return new


def main() -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--only", help=f"comma-separated benches among: {', '.join(BENCHES)}")
    parser.add_argument("--quick", action="store_true", help="tiny inputs: a smoke run")
    parser.add_argument(
        "--render",
        action="store_true",
        help="re-render RESULTS.md from results.json without running anything",
    )
    parser.add_argument(
        "--readme", action="store_true", help="also rewrite README.md's summary table"
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS_JSON, help="the raw results (bench/results.json)"
    )
    parser.add_argument(
        "--markdown", type=Path, default=RESULTS_MD, help="the results page (bench/RESULTS.md)"
    )
    args = parser.parse_args()
    args.benches = selected_benches(parser, args.only)
    if args.readme and not args.render:
        readme_with_summary({"benches": {}})  # missing markers stop the command before the run
    if args.render:
        if args.only or args.quick:
            parser.error("--render runs nothing: --only and --quick do not apply")
        if not args.results.exists():
            parser.error(f"no {args.results} to render: run the benches first")
        results = json.loads(args.results.read_text(encoding="utf-8"))
    else:
        if not (SHARED / "corpora").is_dir():
            sys.exit(f"missing {SHARED}/corpora: set TOKENMILL_SHARED")
        results = run_all(args)
        write_json(args.results, results)
        print(f"raw results written to {args.results}")
    readme = readme_with_summary(results) if args.readme else None
    write_results_section(PEERS_SECTION, render_results(results), args.markdown)
    print(f"section {PEERS_SECTION!r} of {args.markdown} rewritten")
    if readme is not None:
        write_text(README, readme)
        print(f"summary table of {README} rewritten")
    failed = [
        f"{name}: {run['error']}"
        for name, runs in results["benches"].items()
        for run in runs
        if "error" in run
    ]
    for failure in failed:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
