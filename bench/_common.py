"""What the bench scripts share: where the ../shared data is, their command line (the help is
the script's docstring; ``--json OUT`` for run.py, ``--tokenmill-only --json OUT`` for
compare_builds.py), timing, the versions and ratios their tables print, the two results files,
and what run.py and compare_builds.py share to write ``RESULTS.md`` (the machine, its sections).

``--json OUT`` alone (run.py): the script runs as usual, tokenmill against its peers, prints its
tables, and also writes them to OUT (``PeerResults``)::

    {"tokenmill": "<path>", "version": "...", "versions": {"<library>": "<version>"},
     "rows": [{"case": str, "library": str, "wall": s, "cpu": s, "peak_mb": MB, "mb": MB,
               "check": str, "ratio": {"wall": x, "cpu": x}}],
     "tables": [{"title": str, "header": [str], "rows": [[str]]}], "notes": [str]}

One row per library and case; ``mb`` is the input the time was measured on (so that rows on
different inputs compare by throughput), ``check`` what the script checked of the output (ids
identical to the peer's, F1...), ``ratio`` (optional) the row's time over tokenmill's on the
same case when the script takes it itself (medians of per-round ratios); run.py computes it
from the medians otherwise. ``tables`` are tables beyond timings (F1, vocabulary quality).

``compare_builds.py`` runs every bench script twice per round, once per build of tokenmill (the
build is whatever ``tokenmill`` imports: PYTHONPATH picks it). In that mode a script times
tokenmill alone -- no peer library runs, nothing is printed as a table -- and writes one JSON
file::

    {"tokenmill": "<path of the imported package>", "version": "...",
     "cases": {"<case>": {"wall": s, "cpu": s, "peak_mb": MB or null, "digest": str or null}}}

``wall``/``cpu`` are the script's own measure of the case (its medians or best-of, as its
docstring says), ``peak_mb`` the peak RSS of the process that ran it, ``digest`` a hash of the
output, so that two builds can be checked to give the same result. A script exits non-zero when
a tokenmill run fails. Setup a script would redo on every call (a model a peer trains, for
instance) may be kept in ``cache_dir()``, which compare_builds.py keeps across rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.metadata
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

CACHE_ENV = "TOKENMILL_BENCH_CACHE"

REPO = Path(__file__).resolve().parent.parent
# The corpora and pretrained files: ../shared beside the repository, or $TOKENMILL_SHARED.
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))
if not SHARED.exists() and Path("/work/shared").exists():
    SHARED = Path("/work/shared")


@dataclass(frozen=True)
class Invocation:
    """One run of a bench script: its arguments for compare_builds.py's full run (tokenmill
    alone, several rounds), for run.py's run against the peers, and for ``--quick`` (tiny
    inputs that check the machinery; the ratios mean nothing)."""

    script: str
    compare: list[str]
    peers: list[str]
    quick: list[str]


# Bench name -> its invocations. compare_builds.py's sizes give each timed call a few tenths of
# a second to a few seconds; run.py's keep the whole run against the (slower) peers, one round
# of every bench, at about 15-20 minutes on a 2-core machine. (sentencepiece's 32k Unigram
# reference model needs at least ~5 MB of text: with 3 it refuses the vocabulary size.)
BENCHES: dict[str, list[Invocation]] = {
    "pipeline": [
        Invocation(
            "bench_pipeline.py",
            ["--mbytes", "8", "--repeat", "3", "--threads", "1,2"],
            ["--mbytes", "4", "--repeat", "3", "--rounds", "3", "--threads", "1,2"],
            ["--mbytes", "0.05", "--repeat", "1", "--rounds", "1", "--threads", "1"],
        )
    ],
    "tiktoken": [
        Invocation(
            "bench_tiktoken.py",
            ["--english-mb", "8", "--code-mb", "8", "--multilingual-mb", "8", "--repeat", "5"],
            ["--english-mb", "4", "--code-mb", "4", "--multilingual-mb", "4", "--repeat", "3"],
            ["--english-mb", "0.05", "--code-mb", "0.05", "--multilingual-mb", "0.05"],
        )
    ],
    "sentencepiece": [
        Invocation(
            "bench_sentencepiece.py",
            ["--mb", "8", "--repeat", "5", "--unigram-mb", "5", "--train-mb", "8"]
            + ["--vocab", "16000"],
            ["--mb", "4", "--repeat", "3", "--unigram-mb", "5", "--train-mb", "4"]
            + ["--vocab", "16000"],
            ["--mb", "0.05", "--repeat", "1", "--unigram-mb", "0", "--train-mb", "0.2"]
            + ["--vocab", "1000"],
        )
    ],
    "unigram": [
        Invocation(
            "bench_unigram.py",
            ["--mb", "5", "--vocab-size", "16000", "--held-out-mb", "3"],
            ["--mb", "3", "--vocab-size", "16000", "--held-out-mb", "2"],
            ["--mb", "0.2", "--vocab-size", "1000", "--held-out-mb", "0.05"],
        )
    ],
    "train": [
        Invocation(
            "bench_train.py",
            ["--model", "bpe", "--mb", "10", "--vocab-size", "32000", "--repeat", "3"],
            ["--model", "bpe", "--mb", "5", "--vocab-size", "32000", "--repeat", "3"]
            + ["--skip", "sentencepiece"],
            ["--model", "bpe", "--mb", "0.2", "--vocab-size", "2000"] + ["--skip", "sentencepiece"],
        ),
        Invocation(
            "bench_train.py",
            ["--model", "wordpiece", "--mb", "10", "--vocab-size", "30000", "--repeat", "3"],
            ["--model", "wordpiece", "--mb", "5", "--vocab-size", "30000", "--repeat", "3"],
            ["--model", "wordpiece", "--mb", "0.2", "--vocab-size", "2000"],
        ),
    ],
    "words": [
        Invocation(
            "bench_words.py",
            ["--skip-f1", "--mb", "8", "--repeat", "3"],
            ["--mb", "4", "--repeat", "3"],
            ["--skip-f1", "--mb", "0.1", "--repeat", "1"],
        )
    ],
    "collocations": [
        Invocation(
            "bench_collocations.py",
            ["--books", "9", "--repeat", "5"],
            ["--books", "9", "--repeat", "3"],
            ["--books", "1", "--repeat", "1"],
        )
    ],
    "zh": [
        Invocation(
            "bench_zh.py",
            ["--rounds", "15"],
            ["--rounds", "5"],
            ["--corpora", "pku", "--rounds", "1"],
        )
    ],
    "encode-dataset": [
        Invocation(
            "bench_encode_dataset.py",
            ["--mb", "50", "--rounds", "3"],
            ["--mb", "20", "--rounds", "1"],
            ["--mb", "1", "--rounds", "1", "--tokenizers", "gpt2"],
        )
    ],
    "adversarial": [
        Invocation(
            "bench_adversarial.py",
            ["--quick", "--rounds", "1", "--skip-loaders"],
            ["--quick", "--rounds", "1", "--timeout", "20"],
            ["--sizes", "0.01,0.02", "--rounds", "1", "--kinds", "one letter,digits"]
            + ["--loader-chars", "1000,2000"],
        )
    ],
}


def selected_benches(parser: argparse.ArgumentParser, only: Optional[str]) -> list[str]:
    """The benches named by ``--only a,b`` (all by default); a usage error names unknown ones."""
    names = [b for b in (only or ",".join(BENCHES)).split(",") if b]
    unknown = [b for b in names if b not in BENCHES]
    if unknown:
        parser.error(f"unknown bench {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    return names


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """A parser whose ``--help`` prints the script's docstring `doc` as written."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def parse_args(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Adds ``--tokenmill-only`` and ``--json OUT`` to the script's parser, parses `argv` (the
    command line by default) and stops with a usage error when one comes without the other."""
    group = parser.add_argument_group("results files (used by run.py and compare_builds.py)")
    group.add_argument(
        "--json",
        metavar="OUT",
        help="also write the results to OUT: the tables of the run against the peers, or with "
        "--tokenmill-only {case: wall, cpu, peak_mb, digest}",
    )
    group.add_argument(
        "--tokenmill-only",
        action="store_true",
        help="time tokenmill alone (no peers, no table) and write the timings to --json",
    )
    args = parser.parse_args(argv)
    if args.tokenmill_only and not args.json:
        parser.error("--tokenmill-only needs --json OUT")
    return args


def library_versions(*names: str) -> dict[str, str]:
    """The version of each library: its module's ``__version__`` (or "?"), else that of the
    installed distribution of that name (``quicktok-v1``)."""
    found = {}
    for name in names:
        try:
            version = getattr(importlib.import_module(name), "__version__", "?")
        except ImportError:
            try:
                version = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                version = "(not installed)"
        found[name] = version
    return found


def versions(*names: str) -> str:
    """The version of each library, as "name version" comma-separated (``library_versions``)."""
    return ", ".join(f"{name} {version}" for name, version in library_versions(*names).items())


def ratios(run: dict, base: dict) -> tuple[float, float, float]:
    """`run` over `base` (each a child's result): wall time, CPU time and peak RSS; NaN where
    `base` lacks the figure (it failed)."""
    keys = ("seconds", "cpu_seconds", "peak_rss_mb")
    wall, cpu, memory = (run[k] / base[k] if k in base else float("nan") for k in keys)
    return wall, cpu, memory


class Results:
    """The cases of one ``--tokenmill-only`` run, written as JSON by ``write``."""

    def __init__(self) -> None:
        self.cases: dict[str, dict[str, Any]] = {}

    def add(
        self,
        case: str,
        wall: float,
        cpu: Optional[float] = None,
        peak_mb: Optional[float] = None,
        digest: Any = None,
    ) -> None:
        if case in self.cases:
            raise ValueError(f"case {case!r} recorded twice")
        self.cases[case] = {
            "wall": wall,
            "cpu": cpu,
            "peak_mb": peak_mb,
            "digest": None if digest is None else str(digest),
        }
        print(f"  {case}: {wall:.3f} s wall", file=sys.stderr, flush=True)

    def write(self, path: str) -> None:
        write_json(path, dict(imported_tokenmill(), cases=self.cases))


class PeerResults:
    """The tables of one run against the peers, written as JSON by ``write`` (``--json OUT``
    without ``--tokenmill-only``; the format is in this module's docstring). `libraries` are
    the peers whose versions the file records."""

    def __init__(self, *libraries: str) -> None:
        self.libraries = libraries
        self.rows: list[dict[str, Any]] = []
        self.tables: list[dict[str, Any]] = []
        self.notes: list[str] = []

    def add(
        self,
        case: str,
        library: str,
        wall: Optional[float] = None,
        cpu: Optional[float] = None,
        peak_mb: Optional[float] = None,
        mb: Optional[float] = None,
        check: Optional[str] = None,
        ratio: Optional[dict[str, Optional[float]]] = None,
    ) -> None:
        if any(r["case"] == case and r["library"] == library for r in self.rows):
            raise ValueError(f"{library} on {case!r} recorded twice")
        row = {"case": case, "library": library, "wall": wall, "cpu": cpu, "peak_mb": peak_mb}
        row.update(mb=mb, check=check, ratio=ratio)
        self.rows.append(row)

    def table(self, title: str, header: list[str], rows: list[list[Any]]) -> None:
        """A table beyond the timings, kept as the script formats it."""
        self.tables.append({"title": title, "header": header, "rows": rows})

    def note(self, text: str) -> None:
        self.notes.append(text)

    def write(self, path: Optional[str]) -> None:
        """Writes the file (nothing when `path` is None: no ``--json`` given)."""
        if path:
            payload = dict(imported_tokenmill(), versions=library_versions(*self.libraries))
            payload.update(rows=self.rows, tables=self.tables, notes=self.notes)
            write_json(path, payload)


def imported_tokenmill() -> dict[str, str]:
    """Which tokenmill this process runs: its package folder and version."""
    import tokenmill

    return {
        "tokenmill": str(Path(tokenmill.__file__).resolve().parent),
        "version": getattr(tokenmill, "__version__", "?"),
    }


def write_json(path: str | Path, payload: Any) -> None:
    """Writes `payload` atomically (a crashed run leaves no half-written file)."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(payload, f, indent=1, ensure_ascii=False)
        f.write("\n")
    replace_honouring_umask(tmp, target)


def replace_honouring_umask(tmp: str | Path, target: Path) -> None:
    """Moves the finished temporary file onto `target` with the mode the umask gives a new
    file (mkstemp makes it owner-only)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, target)


# --- RESULTS.md: the machine, and the two sections (run.py's and compare_builds.py's) ---

RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"
RESULTS_TITLE = "# Benchmark results\n"
PEERS_SECTION = "peer-run"  # run.py's
COMPARE_SECTION = "compare-builds"  # compare_builds.py's


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """The machine a run measures: CPU model, cores, RAM, OS, Python, rustc."""
    ram_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    ram_gb = int(line.split()[1]) / 1024**2
    except OSError:
        pass
    try:
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout
    except OSError:
        rustc = ""
    os_name = platform.platform()
    with contextlib.suppress(OSError, KeyError):
        os_name = f"{platform.freedesktop_os_release()['PRETTY_NAME']} ({os_name})"
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_gb": ram_gb,
        "os": os_name,
        "python": platform.python_version(),
        "rustc": rustc.strip() or "?",
    }


def machine_line(m: dict[str, Any]) -> str:
    ram = f"{m['ram_gb']:.0f} GB RAM" if m.get("ram_gb") else "RAM ?"
    return f"{m['cpu']}, {m['cores']} cores, {ram}; {m['os']}; Python {m['python']}, {m['rustc']}"


class LoadSampler:
    """The machine's 1-minute load average over a ``with`` block, sampled every `every` seconds
    in a thread: what else ran while a benchmark did (the machine may be shared)."""

    def __init__(self, every: float = 15.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict[str, float]:
        values = self.samples or [os.getloadavg()[0]]
        return {
            "min": min(values),
            "median": statistics.median(values),
            "max": max(values),
            "samples": len(values),
        }


def load_line(load: dict[str, float], cores: Optional[int]) -> str:
    return (
        f"load average (1 min, sampled every 15 s) during the run: median {load['median']:.1f},"
        f" min {load['min']:.1f}, max {load['max']:.1f}, on {cores} cores"
    )


def git_revision() -> str:
    """`git describe` of this working tree (-dirty when it has uncommitted changes)."""
    proc = subprocess.run(
        ["git", "describe", "--always", "--tags", "--dirty"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip() or "?"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def replace_between(text: str, name: str, body: str) -> Optional[str]:
    """`text` with what lies between the markers of `name` replaced by `body` (None when a
    marker is missing)."""
    start, end = markers(name)
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        return None
    return text[: i + len(start)] + "\n" + body.rstrip("\n") + "\n" + text[j:]


def write_results_section(name: str, body: str, path: Path = RESULTS_MD) -> None:
    """Rewrites the section `name` of RESULTS.md (between its markers) with `body`, leaving the
    rest of the file as it is; a missing file or section is created (a section at the end)."""
    text = path.read_text(encoding="utf-8") if path.exists() else RESULTS_TITLE
    new = replace_between(text, name, body)
    if new is None:
        start, end = markers(name)
        new = text.rstrip("\n") + f"\n\n{start}\n{body.rstrip()}\n{end}\n"
    write_text(path, new)


def write_text(path: Path, text: str) -> None:
    """Writes a text file atomically, honouring the umask."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    replace_honouring_umask(tmp, path)


def mb_of(texts: Any) -> float:
    """The size of a text, or of a list of texts, in MB of UTF-8."""
    if isinstance(texts, str):
        texts = [texts]
    return sum(len(t.encode("utf-8")) for t in texts) / 1e6


def time_runs(run: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Median wall and CPU (``process_time``) seconds of ``repeat`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(max(1, repeat)):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def peak_rss_mb() -> float:
    """This process's peak resident set so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def digest_of(value: Any) -> str:
    """A short hash of bytes, or of a JSON-able value (tuples hash as lists)."""
    if not isinstance(value, bytes):
        value = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(value).hexdigest()[:16]


def cache_dir() -> Path:
    """The directory for setup kept across calls (compare_builds.py sets it; a temporary
    directory of this process otherwise)."""
    path = os.environ.get(CACHE_ENV)
    if not path:
        path = tempfile.mkdtemp(prefix="tokenmill-bench-")
        os.environ[CACHE_ENV] = path
    Path(path).mkdir(parents=True, exist_ok=True)
    return Path(path)


def fail(message: str):
    """Ends a ``--tokenmill-only`` run with a clear message and a non-zero status."""
    sys.exit(f"tokenmill-only run failed: {message}")
