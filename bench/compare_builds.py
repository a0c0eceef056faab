"""Old build against new build: every tokenmill bench, interleaved rounds, new/old ratios.

    python bench/compare_builds.py --old REV [--new REV|DIR] [--rounds 5] [--profile release]
                                   [--only pipeline,train,...] [--quick] [--markdown FILE]

Builds the extension of both sides with ``cargo build --profile PROFILE -p tokenmill-py``: a
revision is exported with ``git archive`` into ``--build-dir`` (kept across runs, one folder per
commit, so a second run rebuilds nothing), a directory is built where it is (the new side
defaults to the working tree this script belongs to, uncommitted changes included). Each side
has its own CARGO_TARGET_DIR in ``--build-dir``; a new one starts as a copy of ``--seed-target
DIR`` if given, else (new side) of the old side's, so the dependencies are compiled once, while
tokenmill's own crates are always rebuilt from the side's sources. Each side's importable
package is that side's ``python/tokenmill`` plus its built library as
``tokenmill/_native.abi3.so``.

Then every bench script of this folder runs in its ``--tokenmill-only --json OUT`` mode (no peer
library; ``_common.py``), once per side per round, in a fresh process whose PYTHONPATH is that
side's package only; the bench scripts are this tree's for both sides. Within a round the two
sides of one bench run back to back, and the side that goes first alternates from round to
round, so the drift of the machine falls on both alike. The table gives, per case, the median
over the rounds of each side's time, new/old of those medians (wall time, or CPU time with
``--metric cpu``; the other ratio is printed beside it), the peak RSS of both, and flags a case
whose ratio is above 1.03 or whose output (a digest the script reports) differs between the
builds. The command reports and does not judge: it exits 0 when everything ran, and non-zero
with a message when a build fails or a bench crashes (the other benches still run and print).
``--markdown FILE`` rewrites the old/new comparison section of FILE (``bench/RESULTS.md``) with
this run, leaving the rest of the file (run.py's section against the peers) as it is.

Input sizes (``BENCHES`` in ``_common.py``) are chosen so that ``--rounds 5`` benchmarks for
about 15 minutes on a 2-core machine with a release build; ``--quick`` uses tiny inputs (a smoke
run of the machinery, its ratios mean nothing).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from _common import (
    BENCHES,
    COMPARE_SECTION,
    REPO,
    SHARED,
    LoadSampler,
    load_line,
    machine,
    machine_line,
    selected_benches,
    write_results_section,
)

BENCH_DIR = Path(__file__).resolve().parent
SLOWER = 1.03


class Failure(Exception):
    """A build that failed or a bench that crashed: the message says which and why."""


@dataclass
class Side:
    """One build to compare: where its sources are and, once built, its package."""

    label: str
    spec: str
    source: Path
    revision: str
    describe: str
    key: str  # names the side's target dir: one per (side, source tree)
    package: Optional[Path] = None
    runs: dict = field(default_factory=dict)  # (bench, case) -> list of per-round results


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def describe(cwd: Path, rev: Optional[str] = None) -> str:
    """`git describe` of a revision, or of a working tree (marked -dirty when it is)."""
    try:
        return git("describe", "--always", "--tags", *([rev] if rev else ["--dirty"]), cwd=cwd)
    except subprocess.CalledProcessError:
        return "?"


def resolve_side(label: str, spec: str, build_dir: Path) -> Side:
    """A directory is built in place; anything else is a revision of this repository,
    exported once into build_dir/src/<commit>."""
    if Path(spec).is_dir():
        source = Path(spec).resolve()
        if not (source / "crates" / "tokenmill-py").is_dir():
            raise Failure(f"{label}: {source} is not a tokenmill tree (no crates/tokenmill-py)")
        try:
            head = git("rev-parse", "--short", "HEAD", cwd=source)
        except subprocess.CalledProcessError:
            head = "?"
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=source,
            capture_output=True,
            text=True,
        ).stdout.strip()
        revision = f"{head} (working tree{', uncommitted changes' if dirty else ''})"
        key = "tree-" + hashlib.sha1(str(source).encode()).hexdigest()[:10]
        return Side(label, spec, source, revision, describe(source), key)
    try:
        commit = git("rev-parse", "--verify", f"{spec}^{{commit}}")
    except subprocess.CalledProcessError as e:
        raise Failure(f"{label}: {spec!r} is neither a directory nor a revision: {e.stderr}") from e
    source = build_dir / "src" / commit
    if not (source / ".exported").exists():
        shutil.rmtree(source, ignore_errors=True)
        source.mkdir(parents=True)
        # `tar -m`: the files get the time of the export, so cargo never takes an older build
        # in this folder for a fresh one.
        archive = subprocess.Popen(["git", "archive", commit], cwd=REPO, stdout=subprocess.PIPE)
        untar = subprocess.run(["tar", "-x", "-m", "-C", str(source)], stdin=archive.stdout)
        archive.stdout.close()
        if archive.wait() != 0 or untar.returncode != 0:
            raise Failure(f"{label}: exporting {commit} with git archive failed")
        (source / ".exported").touch()
    return Side(label, spec, source, commit[:12], describe(REPO, commit), commit[:12])


def build(side: Side, profile: str, build_dir: Path, seed_target: Optional[Path]) -> Path:
    """cargo build of the extension, then the side's package in build_dir/pkg-<label>;
    returns the target dir."""
    # One target dir per side and source tree. Cargo tells a stale build of a path package by
    # file times alone (its hashes see the package relative to the workspace), so artefacts of
    # tokenmill's own crates that another tree built (a seeded target dir) are removed once:
    # the marker file names the tree the target dir builds.
    target = build_dir / f"target-{side.label}-{side.key}"
    if not target.exists() and seed_target:
        print(f"seeding {target} from {seed_target}", flush=True)
        shutil.copytree(seed_target, target, symlinks=True)
    env = dict(os.environ, CARGO_TARGET_DIR=str(target), PYO3_PYTHON=sys.executable)
    log = build_dir / f"build-{side.label}.log"
    marker = target / f".compare-builds-{profile}"
    workspace_crates = ["-p", "tokenmill-core", "-p", "tokenmill-py"]
    with open(log, "w") as f:
        if target.exists() and not (marker.exists() and marker.read_text() == str(side.source)):
            clean = ["cargo", "clean", "--profile", profile, *workspace_crates]
            subprocess.run(clean, cwd=side.source, env=env, stdout=f, stderr=f)
        cmd = ["cargo", "build", "--profile", profile, "-p", "tokenmill-py"]
        print(f"building {side.label} ({side.revision}) in {side.source}", flush=True)
        start = time.perf_counter()
        code = subprocess.run(cmd, cwd=side.source, env=env, stdout=f, stderr=f).returncode
    if code != 0:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-30:])
        raise Failure(f"building {side.label} ({side.revision}) failed; {log}:\n{tail}")
    marker.write_text(str(side.source))
    print(f"  built in {time.perf_counter() - start:.0f} s", flush=True)
    library = target / ("debug" if profile in ("dev", "test") else profile) / "lib_native.so"
    package = build_dir / f"pkg-{side.label}"
    shutil.rmtree(package, ignore_errors=True)
    ignore = shutil.ignore_patterns("*.so", "*.pyd", "__pycache__")
    shutil.copytree(side.source / "python" / "tokenmill", package / "tokenmill", ignore=ignore)
    shutil.copy2(library, package / "tokenmill" / "_native.abi3.so")
    side.package = package
    return target


def run_bench(
    side: Side, bench: str, script: str, args: list[str], out: Path, env: dict
) -> dict[str, dict]:
    """One bench script in --tokenmill-only mode with the side's package; its cases."""
    cmd = [sys.executable, str(BENCH_DIR / script), "--tokenmill-only", "--json", str(out), *args]
    env = dict(env, PYTHONPATH=str(side.package))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:]) or f"exit {proc.returncode}"
        raise Failure(
            f"{bench} crashed with the {side.label} build (exit {proc.returncode}):\n"
            f"  {shlex.join(cmd)}\n{tail}"
        )
    result = json.loads(out.read_text())
    expected = (side.package / "tokenmill").resolve()
    if Path(result["tokenmill"]) != expected:
        raise Failure(f"{bench} imported {result['tokenmill']}, not the {side.label} build")
    return result["cases"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_rounds(
    sides: list[Side], benches: list[str], rounds: int, quick: bool, work: Path, env: dict
) -> list[str]:
    """All rounds; returns the failures (a bench that failed once is left out afterwards)."""
    failures: list[str] = []
    failed: set[str] = set()
    for round_number in range(1, rounds + 1):
        order = sides if round_number % 2 else sides[::-1]
        for bench in benches:
            for index, invocation in enumerate(BENCHES[bench]):
                script = invocation.script
                full, small = invocation.compare, invocation.quick
                for side in order:
                    if bench in failed:
                        continue
                    out = work / f"{bench}-{index}-{side.label}-{round_number}.json"
                    start, cpu = time.perf_counter(), children_cpu()
                    try:
                        cases = run_bench(side, bench, script, small if quick else full, out, env)
                    except Failure as e:
                        failed.add(bench)
                        failures.append(str(e))
                        print(f"FAILED: {e}", file=sys.stderr, flush=True)
                        continue
                    for case, r in cases.items():
                        side.runs.setdefault((bench, case), []).append(r)
                    print(
                        f"round {round_number}/{rounds} {bench:13} {side.label}: "
                        f"{len(cases)} cases, {time.perf_counter() - start:.1f} s"
                        f" ({children_cpu() - cpu:.1f} s CPU)",
                        flush=True,
                    )
    return failures


@dataclass
class Row:
    bench: str
    case: str
    old: Optional[float]
    new: Optional[float]
    ratio: Optional[float]
    other_ratio: Optional[float]
    peak: str
    flags: str


def median_of(runs: list[dict], key: str) -> Optional[float]:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def ratio(new: Optional[float], old: Optional[float]) -> Optional[float]:
    return new / old if new is not None and old else None


def table_rows(old: Side, new: Side, metric: str) -> list[Row]:
    other = "cpu" if metric == "wall" else "wall"
    rows = []
    for key in list(dict.fromkeys([*old.runs, *new.runs])):
        a, b = old.runs.get(key, []), new.runs.get(key, [])
        r = ratio(median_of(b, metric), median_of(a, metric))
        o = ratio(median_of(b, other), median_of(a, other))
        pa, pb = median_of(a, "peak_mb"), median_of(b, "peak_mb")
        peak = f"{pa:.0f} → {pb:.0f}" if pa is not None and pb is not None else "-"
        flags = []
        if r is not None and r > SLOWER:
            flags.append(f"SLOWER ({metric})")
        elif o is not None and o > SLOWER:
            flags.append(f"slower by {other} time")
        if not a or not b:
            flags.append("missing")
        digests = {x["digest"] for x in a + b if x.get("digest") is not None}
        if len(digests) > 1:
            flags.append("OUTPUT DIFFERS")
        rows.append(
            Row(*key, median_of(a, metric), median_of(b, metric), r, o, peak, ", ".join(flags))
        )
    return rows


def fmt(value: Optional[float], spec: str) -> str:
    """`value` formatted by `spec`; a missing one is "-" in the same width."""
    return format("-", ">" + spec.split(".")[0]) if value is None else format(value, spec)


def print_table(rows: list[Row], metric: str) -> None:
    other = "cpu" if metric == "wall" else "wall"
    width = max([len(r.case) for r in rows] + [4])
    header = (
        f"{'bench':<13} {'case':<{width}} {'old s':>8} {'new s':>8} {'new/old':>8}"
        f" {other + ' n/o':>8}  {'peak MB old → new':<18} flags"
    )
    print(f"times: median over the rounds of {metric} seconds")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r.bench:<13} {r.case:<{width}} {fmt(r.old, '8.3f')} {fmt(r.new, '8.3f')}"
            f" {fmt(r.ratio, '8.3f')} {fmt(r.other_ratio, '8.3f')}  {r.peak:<18} {r.flags}"
        )


def markdown(rows: list[Row], old: Side, new: Side, args, seconds: float, load: dict) -> str:
    """The compare-builds section of RESULTS.md: how it is made, then this run."""
    other = "cpu" if args.metric == "wall" else "wall"
    command = shlex.join(["python", *sys.argv])
    now = datetime.datetime.now(datetime.timezone.utc)
    host = machine()
    lines = [
        "## Old/new build comparison",
        "",
        "Written by `compare_builds.py --markdown bench/RESULTS.md` (bench/README.md), which"
        " replaces this section with its latest run. The bar for a change that should not cost"
        " speed: every row within 3% of the old build, or faster, medians of at least 5 rounds.",
        "",
        f"- date: {now:%Y-%m-%d %H:%M} UTC",
        f"- machine: {machine_line(host)}; profile `{args.profile}`",
        f"- {load_line(load, host['cores'])}",
        f"- old: `{old.spec}` = {old.revision} (`{old.describe}`)",
        f"- new: `{new.spec}` = {new.revision} (`{new.describe}`)",
        f"- {args.rounds} interleaved rounds{' (--quick)' if args.quick else ''},"
        f" {seconds / 60:.1f} min of benchmarks; times are medians over the rounds of"
        f" {args.metric} seconds; flagged: new/old > {SLOWER}",
        f"- command: `{command}`",
        "",
        f"| bench | case | old s | new s | new/old | {other} new/old | peak MB old → new | flags |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.bench} | {r.case} | {fmt(r.old, '.3f')} | {fmt(r.new, '.3f')} |"
            f" {fmt(r.ratio, '.3f')} | {fmt(r.other_ratio, '.3f')} | {r.peak} | {r.flags} |"
        )
    return "\n".join(lines) + "\n"


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--old", required=True, help="revision (or tree directory) of the old build")
    ap.add_argument(
        "--new", default=str(REPO), help="revision or tree directory (default: this working tree)"
    )
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--profile", default="release", help="cargo profile (default release)")
    ap.add_argument("--only", help=f"comma-separated benches among: {', '.join(BENCHES)}")
    ap.add_argument("--quick", action="store_true", help="tiny inputs: a smoke run")
    ap.add_argument(
        "--metric", choices=["wall", "cpu"], default="wall", help="the ratio flagged (default wall)"
    )
    ap.add_argument(
        "--markdown",
        type=Path,
        help="rewrite the old/new comparison section of FILE (bench/RESULTS.md) with this run",
    )
    ap.add_argument(
        "--build-dir",
        type=Path,
        default=Path("/tmp/tokenmill-compare-builds"),
        help="sources, targets, packages and bench cache, kept across runs",
    )
    ap.add_argument(
        "--seed-target", type=Path, help="a cargo target dir copied into a side's on first use"
    )
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    args.benches = selected_benches(ap, args.only)
    return args


def main() -> int:
    args = parse_args()
    if not (SHARED / "corpora").is_dir():
        print(f"missing {SHARED}/corpora: set TOKENMILL_SHARED", file=sys.stderr)
        return 2
    build_dir = args.build_dir.resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    try:
        old = resolve_side("old", args.old, build_dir)
        new = resolve_side("new", args.new, build_dir)
        # The new side's target dir, on first use, starts as a copy of the old side's: the
        # dependencies are compiled once.
        seed = args.seed_target
        for side in (old, new):
            target = build(side, args.profile, build_dir, seed)
            seed = seed or target
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    work = build_dir / "runs"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    env = dict(
        os.environ,
        TOKENMILL_SHARED=str(SHARED),
        TOKENMILL_BENCH_CACHE=str(build_dir / "bench-cache"),
    )
    start = time.perf_counter()
    with LoadSampler() as load:
        failures = run_rounds([old, new], args.benches, args.rounds, args.quick, work, env)
    seconds = time.perf_counter() - start
    rows = table_rows(old, new, args.metric)
    print()
    print(f"old: {old.spec} = {old.revision} ({old.describe})")
    print(f"new: {new.spec} = {new.revision} ({new.describe})")
    print(f"{args.rounds} rounds, {seconds / 60:.1f} min of benchmarks, profile {args.profile}")
    print_table(rows, args.metric)
    flagged = [r for r in rows if r.flags]
    print(f"{len(flagged)} of {len(rows)} rows flagged (new/old > {SLOWER} or output differs)")
    if args.markdown:
        section = markdown(rows, old, new, args, seconds, load.summary())
        write_results_section(COMPARE_SECTION, section, args.markdown)
        print(f"section {COMPARE_SECTION!r} of {args.markdown} rewritten")
    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
