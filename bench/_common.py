"""What the bench scripts share: where the ../shared data is, their command line (the help is
the script's docstring; ``--tokenmill-only --json OUT`` for compare_builds.py), timing, the
versions and ratios their tables print, and the ``--tokenmill-only`` results file.

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
import hashlib
import importlib
import importlib.metadata
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

CACHE_ENV = "TOKENMILL_BENCH_CACHE"

REPO = Path(__file__).resolve().parent.parent
# The corpora and pretrained files: ../shared beside the repository, or $TOKENMILL_SHARED.
SHARED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared"))
if not SHARED.exists() and Path("/work/shared").exists():
    SHARED = Path("/work/shared")


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """A parser whose ``--help`` prints the script's docstring `doc` as written."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def parse_args(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Adds ``--tokenmill-only`` and ``--json OUT`` to the script's parser, parses `argv` (the
    command line by default) and stops with a usage error when one comes without the other."""
    group = parser.add_argument_group("old/new build comparison (used by compare_builds.py)")
    group.add_argument(
        "--tokenmill-only",
        action="store_true",
        help="time tokenmill alone (no peers, no table) and write the timings to --json",
    )
    group.add_argument(
        "--json",
        metavar="OUT",
        help="with --tokenmill-only: the JSON file of {case: wall, cpu, peak_mb, digest}",
    )
    args = parser.parse_args(argv)
    if bool(args.tokenmill_only) != bool(args.json):
        parser.error("--tokenmill-only and --json OUT go together")
    return args


def versions(*names: str) -> str:
    """The version of each library, as "name version" comma-separated: its module's
    ``__version__`` (or "?"), else that of the installed distribution of that name
    (``quicktok-v1``)."""
    parts = []
    for name in names:
        try:
            version = getattr(importlib.import_module(name), "__version__", "?")
        except ImportError:
            try:
                version = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                version = "(not installed)"
        parts.append(f"{name} {version}")
    return ", ".join(parts)


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
        """Writes the file atomically (a crashed run leaves no half-written results)."""
        import tokenmill

        payload = {
            "tokenmill": str(Path(tokenmill.__file__).resolve().parent),
            "version": getattr(tokenmill, "__version__", "?"),
            "cases": self.cases,
        }
        target = Path(path)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(payload, f, indent=1)
        os.replace(tmp, target)


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
