"""The README's CLI quickstart, run as written: each command of its ``bash`` block in a fresh
folder that holds the repository's ``python/`` sources (the corpus the examples train on), with
``tokenmill`` the installed command (or ``python -m tokenmill`` when it is not on PATH)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START = "<!-- cli-quickstart:start"
END = "<!-- cli-quickstart:end -->"


def _quickstart() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(START) : readme.index(END)]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_readme_cli_quickstart_runs(tmp_path):
    os.symlink(ROOT / "python", tmp_path / "python")
    command = shutil.which("tokenmill")
    define = "" if command else f'tokenmill() {{ "{sys.executable}" -m tokenmill "$@"; }}\n'
    script = "set -euo pipefail\n" + define + _quickstart()
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("tokenizer.json", "sp-unigram.model", "sp-unigram.json", "bytelevel.tiktoken"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "Hello world" in done.stdout
    assert "--vocab-size" in done.stdout
