"""Runs transformers' own tokenizer test mixins twice, with the stock `tokenizers` backend and
with tokenmill behind every fast tokenizer, offline, and prints both outcome counts and every
test whose outcome differs.

    python tools/transformers_mixins.py WORKDIR [--shared ../shared] [-k EXPR]

What it does, all under WORKDIR (nothing is written into the repository):

1. `pip download` the sdist of the installed transformers version and unpack its `tests/`
   (the sdist carries test_tokenization_common.py and the backend mixins, not the per-model
   test files nor the fixtures);
2. `pip install --target` the two test-only packages the mixins import (parameterized, jinja2);
3. builds a hub cache of tokenizer-only repos from ../shared/pretrained (HF_HUB_CACHE, with
   HF_HUB_OFFLINE=1): google-bert/bert-base-uncased and openai-community/gpt2 are the real
   vocabularies; FacebookAI/roberta-base (GPT-2's vocab), hf-internal-testing/llama-tokenizer
   (Mistral 7B v0.1's model) and google-t5/t5-base (sentencepiece's botchan unigram model) are
   stand-ins of the same kind, so tests with hard-coded ids of the real ones are not expected
   to pass, with either backend;
4. writes per-model test classes over the mixins (BERT, GPT-2, RoBERTa, Llama, T5) and a
   conftest that, with TM_BACKEND=1, accelerates every fast tokenizer at the end of
   TokenizersBackend.__init__ (so subclasses' own backend edits go through tokenmill too);
5. runs pytest once per backend (RUN_SLOW=1) and compares the JUnit reports.

Needs network access for step 1 and 2 only; takes about 10 minutes per run on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = "0" * 40

# hub id -> (transformers class, {file name in the repo: file under shared/pretrained}, kwargs,
#            model_type for config.json)
GPT2_FILES = {"vocab.json": "gpt2/encoder.json", "merges.txt": "gpt2/vocab.bpe"}
HUB_REPOS = {
    "google-bert/bert-base-uncased": (
        "BertTokenizer",
        {"vocab.txt": "bert_base_uncased/vocab.txt"},
        {"model_max_length": 512},
        "bert",
    ),
    "openai-community/gpt2": ("GPT2Tokenizer", GPT2_FILES, {"model_max_length": 1024}, "gpt2"),
    "FacebookAI/roberta-base": (
        "RobertaTokenizer",
        GPT2_FILES,
        {"model_max_length": 512},
        "roberta",
    ),
    "hf-internal-testing/llama-tokenizer": (
        "LlamaTokenizer",
        {"tokenizer.model": "mistral/tokenizer.model.v1"},
        {"add_bos_token": True},
        "llama",
    ),
    "google-t5/t5-base": (
        "T5Tokenizer",
        {"spiece.model": "sentencepiece_test/botchan_en_unigram_1000.model"},
        {"model_max_length": 512},
        "t5",
    ),
}

TEST_CLASSES = '''"""Per-model test classes over transformers' mixins (written by tokenmill's
tools/transformers_mixins.py)."""
import unittest

import transformers

from ..test_tokenization_common import TokenizerTesterMixin
from ..test_tokenizers_backend_mixin import TokenizersBackendTesterMixin

for _name, _hub_id, _backend_tests in [
    ("Bert", "google-bert/bert-base-uncased", True),
    ("GPT2", "openai-community/gpt2", True),
    ("Roberta", "FacebookAI/roberta-base", True),
    ("Llama", "hf-internal-testing/llama-tokenizer", True),
    ("T5", "google-t5/t5-base", False),
]:
    _cls = getattr(transformers, _name + "Tokenizer")
    _attrs = {"tokenizer_class": _cls, "from_pretrained_id": _hub_id}
    _bases = (TokenizerTesterMixin, unittest.TestCase)
    globals()[_name + "LocalTest"] = type(_name + "LocalTest", _bases, _attrs)
    if _backend_tests:
        _attrs = dict(_attrs, rust_tokenizer_class=_cls)
        globals()[_name + "BackendLocalTest"] = type(
            _name + "BackendLocalTest", (TokenizersBackendTesterMixin, unittest.TestCase), _attrs
        )
'''

CONFTEST = '''"""TM_BACKEND=1: every transformers fast tokenizer runs on tokenmill (written by
tokenmill's tools/transformers_mixins.py)."""
import os

if os.environ.get("TM_BACKEND") == "1":
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    import tokenmill.transformers

    _original_init = TokenizersBackend.__init__

    def _init_then_accelerate(self, *args, **kwargs):
        _original_init(self, *args, **kwargs)
        tokenmill.transformers.accelerate(self)

    TokenizersBackend.__init__ = _init_then_accelerate
'''


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "-q", *args], check=True)


def unpack_tests(work: Path) -> Path:
    import transformers

    version = transformers.__version__
    root = work / f"transformers-{version}"
    if not (root / "tests" / "test_tokenization_common.py").exists():
        pip(
            "download",
            f"transformers=={version}",
            "--no-deps",
            "--no-binary",
            ":all:",
            "-d",
            str(work),
        )
        with tarfile.open(work / f"transformers-{version}.tar.gz") as sdist:
            members = [m for m in sdist.getmembers() if m.name.startswith(f"{root.name}/tests/")]
            members.append(sdist.getmember(f"{root.name}/pyproject.toml"))
            sdist.extractall(work, members=members, filter="data")
    tests = root / "tests"
    (tests / "__init__.py").touch()
    (tests / "models_local").mkdir(exist_ok=True)
    (tests / "models_local" / "__init__.py").touch()
    (tests / "models_local" / "test_tokenization_local.py").write_text(TEST_CLASSES)
    (root / "conftest.py").write_text(CONFTEST)
    return root


def write_fixture(tests: Path, shared: Path) -> None:
    """tests/fixtures/sample_text.txt (absent from the sdist): paragraphs of a shared novel."""
    novel = (shared / "corpora" / "gutenberg" / "pg244_en_a_study_in_scarlet.txt").read_text(
        encoding="utf-8"
    )
    paragraphs = [p.strip() for p in novel.split("\n\n") if len(p.split()) > 10][30:60]
    (tests / "fixtures").mkdir(exist_ok=True)
    (tests / "fixtures" / "sample_text.txt").write_text(
        "\n\n".join(paragraphs) + "\n", encoding="utf-8"
    )


def build_hub(hub: Path, shared: Path) -> None:
    import transformers

    for repo, (class_name, files, kwargs, model_type) in HUB_REPOS.items():
        source = Path(tempfile.mkdtemp())
        for target, name in files.items():
            shutil.copyfile(shared / "pretrained" / name, source / target)
        tokenizer = getattr(transformers, class_name).from_pretrained(str(source), **kwargs)
        base = hub / ("models--" + repo.replace("/", "--"))
        shutil.rmtree(base, ignore_errors=True)
        snapshot = base / "snapshots" / SNAPSHOT
        snapshot.mkdir(parents=True)
        tokenizer.save_pretrained(snapshot)
        for target in files:  # the vocabulary files too, as on the hub
            shutil.copyfile(source / target, snapshot / target)
        (snapshot / "config.json").write_text(f'{{"model_type": "{model_type}"}}')
        (base / "refs").mkdir()
        (base / "refs" / "main").write_text(SNAPSHOT)
        shutil.rmtree(source)


def outcomes(report: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = case.get("classname").split(".")[-1] + "::" + case.get("name")
        kind, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = "skipped" if child.tag == "skipped" else "failed"
                message = (child.get("message") or "")[:300]
                if kind == "failed":
                    break
        out[name] = (kind, message)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    parser.add_argument("-k", default=None, help="pytest -k expression")
    args = parser.parse_args()
    work = args.workdir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    site = work / "site"
    if not (site / "parameterized").exists():
        pip("install", "--target", str(site), "parameterized", "jinja2")
    root = unpack_tests(work)
    write_fixture(root / "tests", args.shared.resolve())
    hub = work / "hub"
    os.environ["HF_HUB_OFFLINE"] = "1"
    build_hub(hub, args.shared.resolve())
    env = dict(os.environ, HF_HUB_CACHE=str(hub), RUN_SLOW="1")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python"), str(site), env.get("PYTHONPATH", "")]
    )
    results = {}
    for label, flag in (("stock", "0"), ("tokenmill", "1")):
        report = work / f"{label}.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
        ]
        command += [
            "tests/models_local/test_tokenization_local.py",
            "tests/test_tokenization_common.py",
        ]
        if args.k:
            command += ["-k", args.k]
        with open(work / f"{label}.log", "w") as log:
            backend_env = dict(env, TM_BACKEND=flag)
            subprocess.run(command, check=False, cwd=root, env=backend_env, stdout=log, stderr=log)
        results[label] = outcomes(report)
        print(label, dict(Counter(kind for kind, _ in results[label].values())))
    stock, ours = results["stock"], results["tokenmill"]
    differing = [
        name for name in sorted(stock) if stock[name][0] != ours.get(name, ("missing", ""))[0]
    ]
    for name in differing:
        print(
            f"{name}: {stock[name][0]} -> {ours.get(name, ('missing', ''))[0]} "
            f"{ours.get(name, ('', ''))[1]}"
        )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
