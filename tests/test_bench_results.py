"""bench/run.py and compare_builds.py share RESULTS.md: each rewrites its own section only, and
run.py renders its tables and the README summary from the stored results."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import _common  # noqa: E402
import run  # noqa: E402

ROWS = [
    {"case": "gpt2 offsets 1 thr", "library": "tokenizers", "wall": 2.0, "cpu": 3.0,
     "peak_mb": 200.0, "mb": 4.0, "check": None, "ratio": None},
    {"case": "gpt2 offsets 1 thr", "library": "tokenmill", "wall": 0.5, "cpu": 1.0,
     "peak_mb": 100.0, "mb": 4.0, "check": "identical", "ratio": None},
    {"case": "per paragraph", "library": "tokenmill", "wall": 1.0, "cpu": 1.0,
     "peak_mb": None, "mb": 8.0, "check": None, "ratio": None},
    {"case": "per paragraph", "library": "spacy", "wall": 4.0, "cpu": 4.0,
     "peak_mb": None, "mb": 1.0, "check": None, "ratio": {"wall": None, "cpu": None}},
]  # fmt: skip


def results() -> dict:
    bench = {"command": "python bench/bench_pipeline.py", "exit": 0, "rows": ROWS[:2]}
    words = {"command": "python bench/bench_words.py", "exit": 0, "rows": ROWS[2:]}
    words["tables"] = [{"title": "F1", "header": ["treebank", "F1"], "rows": [["EWT", "0.99"]]}]
    return {
        "date": "2026-01-01 00:00 UTC",
        "minutes": 3.0,
        "machine": {"cpu": "CPU", "cores": 2, "ram_gb": 8.0, "os": "Linux", "python": "3",
                    "rustc": "rustc 1"},
        "load": {"min": 1.0, "median": 2.0, "max": 3.0, "samples": 5},
        "tokenmill": {"revision": "abc", "imported": ["0.1.0 from /x"]},
        "versions": {"tokenizers": "0.1"},
        "command": "python bench/run.py",
        "quick": False,
        "benches": {"pipeline": [bench], "words": [words]},
    }  # fmt: skip


def test_ratios_are_peer_over_tokenmill_per_mb():
    rows = {(r["case"], r["library"]): r for r in run.with_ratios(ROWS)}
    assert rows[("gpt2 offsets 1 thr", "tokenizers")]["ratio"] == {
        "wall": 4.0,
        "cpu": 3.0,
        "peak": 2.0,
    }
    assert rows[("gpt2 offsets 1 thr", "tokenmill")]["ratio"] is None
    # 1 MB in 4 s against 8 MB in 1 s: 32 times the time per MB
    assert rows[("per paragraph", "spacy")]["ratio"]["cpu"] == 32.0
    # tokenmill's row comes first in its case
    assert [r["library"] for r in run.with_ratios(ROWS)][:2] == ["tokenmill", "tokenizers"]


def test_each_command_rewrites_its_own_section(tmp_path):
    page = tmp_path / "RESULTS.md"
    _common.write_results_section(_common.PEERS_SECTION, "first peers", page)
    _common.write_results_section(_common.COMPARE_SECTION, "first compare", page)
    _common.write_results_section(_common.PEERS_SECTION, run.render_results(results()), page)
    _common.write_results_section(_common.COMPARE_SECTION, "second compare", page)
    text = page.read_text()
    assert text.startswith(_common.RESULTS_TITLE)
    assert "first" not in text and "second compare" in text
    assert text.count("<!-- peer-run:start -->") == 1
    assert text.index("<!-- peer-run:end -->") < text.index("<!-- compare-builds:start -->")
    assert "| gpt2 offsets 1 thr | tokenizers | 2.000 | 3.000 | 1.33 | 200 | 3.00 |" in text
    assert "load average" in text and "F1:" in text


def test_render_and_readme_summary(tmp_path, monkeypatch):
    stored = tmp_path / "results.json"
    stored.write_text(json.dumps(results()))
    page = tmp_path / "RESULTS.md"
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- bench-summary:start -->\nold\n<!-- bench-summary:end -->\nend\n")
    monkeypatch.setattr(run, "README", readme)
    monkeypatch.setattr(sys, "argv", ["run.py", "--render", "--readme", "--results", str(stored),
                                      "--markdown", str(page)])  # fmt: skip
    assert run.main() == 0
    text = readme.read_text()
    assert "old" not in text and text.startswith("intro\n") and text.endswith("end\n")
    assert "| GPT-2 byte-level BPE encode_batch, 1 thread | tokenizers | 3.00× |" in text
    assert "| English word tokenization with offsets | spacy | 32.00× |" in text
    assert "### pipeline" in page.read_text()


def test_readme_without_markers_is_an_error_naming_them(tmp_path):
    stored = tmp_path / "results.json"
    stored.write_text(json.dumps(results()))
    page = tmp_path / "RESULTS.md"
    code = (
        "import sys, run; run.README = run.Path(sys.argv[1]); sys.argv = sys.argv[1:];"
        " sys.argv[0] = 'run.py'; sys.exit(run.main())"
    )
    readme = tmp_path / "README.md"
    readme.write_text("no markers\n")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(readme), "--render", "--readme", "--results", str(stored),
         "--markdown", str(page)],
        cwd=BENCH, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "<!-- bench-summary:start -->" in proc.stderr
    assert "<!-- bench-summary:end -->" in proc.stderr
    assert not page.exists()  # nothing written


@pytest.mark.parametrize("script", sorted(p.name for p in BENCH.glob("bench_*.py")))
def test_run_py_runs_every_bench_script(script):
    assert script in {i.script for invocations in _common.BENCHES.values() for i in invocations}
