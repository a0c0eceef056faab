"""Fixtures for the code examples of README.md and docs/, which pytest-markdown-docs runs as
tests. Loaded as a plugin by the test command (scripts/test):

    python3 -m pytest -p tests.markdown_examples --markdown-docs \
        --markdown-docs-syntax=superfences README.md docs

Every ```python block is a test; ```python fixture:pretrained (in docs/:
```{.python fixture:pretrained}) also gets the pretrained files below; a docs block marked
``continuation`` (```{.python continuation}) runs after the blocks before it on its page;
``notest`` keeps a block from running. Each example runs in a fresh temporary directory, so the
files it writes go nowhere else.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRETRAINED = Path(os.environ.get("TOKENMILL_SHARED", REPO.parent / "shared")) / "pretrained"

# The names the examples use (as in the models' Hugging Face repositories) → files of
# ../shared/pretrained (see its MANIFEST.md).
PRETRAINED_FILES = {
    "gpt2/vocab.json": "gpt2/encoder.json",
    "gpt2/merges.txt": "gpt2/vocab.bpe",
    "bert-base-uncased/vocab.txt": "bert_base_uncased/vocab.txt",
    "mistral/tokenizer.model": "mistral/tokenizer.model.v1",
    "cl100k_base.tiktoken": "cl100k_base/cl100k_base.tiktoken",
    "o200k_base.tiktoken": "o200k_base/o200k_base.tiktoken",
}


# A docs/ fence with options in the plain syntax (```python continuation): MkDocs would render it
# as inline text, so the options must be written in braces there.
PLAIN_OPTIONS = re.compile(r"^[ \t]*```[ \t]*(?:python|py|python3)[ \t]+\S", re.M)


def pytest_collection_finish(session):
    """Fails the run when a page of docs/ writes fence options MkDocs cannot render."""
    for page in sorted((REPO / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in PLAIN_OPTIONS.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            raise pytest.UsageError(
                f"{page}:{line}: write fence options as ```{{.python OPTION}} in docs/ "
                "(MkDocs renders ```python OPTION as text)"
            )


@pytest.fixture(autouse=True)
def example_dir(tmp_path, monkeypatch):
    """Each example runs in its own empty directory, offline."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return tmp_path


@pytest.fixture
def pretrained(example_dir):
    """Links the pretrained files into the example's directory under the names it uses; skips
    when ../shared is absent."""
    for name, source in PRETRAINED_FILES.items():
        path = PRETRAINED / source
        if not path.exists():
            pytest.skip(f"needs {path} (the ../shared data beside the repo), which is absent")
        link = example_dir / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)
