"""The `tokenmill` command line, run in a subprocess on small real corpora: the saved tokenizer
loads in `tokenizers.Tokenizer.from_file` and gives the same ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

# The subprocess must import the same tokenmill as this process (an installed wheel in CI, a
# `maturin develop` tree in development), so put that package's parent first on its path.
TOKENMILL_ROOT = Path(tokenmill.__file__).resolve().parent.parent


def cli(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, PYTHONPATH=str(TOKENMILL_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tokenmill", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 300_000
    )
    path = tmp_path_factory.mktemp("corpus") / "scarlet.txt"
    path.write_text(text, encoding="utf-8")
    return path


def reference_train(files, **options):
    tk = tokenizers.Tokenizer(tokenizers.models.BPE())
    tk.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.train(
        [str(f) for f in files],
        tokenizers.trainers.BpeTrainer(
            show_progress=False,
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
            **options,
        ),
    )
    return tk


def test_train_bytelevel_matches_tokenizers_and_loads_there(english, tmp_path):
    out = tmp_path / "tok.json"
    proc = cli(
        "train",
        str(english),
        "-o",
        str(out),
        "--vocab-size",
        "2000",
        "--min-frequency",
        "2",
        "--special-tokens",
        "<|endoftext|>",
        "--no-progress",
    )
    assert "vocabulary size: 2000" in proc.stdout
    loaded = tokenizers.Tokenizer.from_file(str(out))
    reference = reference_train(
        [english], vocab_size=2000, min_frequency=2, special_tokens=["<|endoftext|>"]
    )
    assert json.loads(loaded.to_str())["model"] == json.loads(reference.to_str())["model"]
    text = english.read_text(encoding="utf-8")[:20_000]
    assert loaded.encode(text).ids == reference.encode(text).ids
    assert loaded.decode(loaded.encode(text).ids) == text


def test_encode_and_decode_commands(english, tmp_path):
    out = tmp_path / "tok.json"
    cli("train", str(english), "-o", str(out), "--vocab-size", "1000", "--no-progress")
    reference = tokenizers.Tokenizer.from_file(str(out))
    line = "It was a bright and cloudy morning, said Holmes."
    ids = reference.encode(line).ids
    assert cli("encode", "-t", str(out), line).stdout.split() == [str(i) for i in ids]
    record = json.loads(cli("encode", "-t", str(out), line, "--json").stdout)
    assert record == {"ids": ids, "tokens": reference.encode(line).tokens}
    assert cli("decode", "-t", str(out), *map(str, ids)).stdout.rstrip("\n") == line
    lines_file = tmp_path / "lines.txt"
    lines_file.write_text("first line\nsecond one\n", encoding="utf-8")
    got = cli("encode", "-t", str(out), "--file", str(lines_file)).stdout.splitlines()
    assert got == [
        " ".join(map(str, reference.encode(t).ids)) for t in ("first line", "second one")
    ]


def test_jsonl_stdin_and_classic_bpe(english, tmp_path):
    docs = [line for line in english.read_text(encoding="utf-8").splitlines() if line.strip()][
        :3000
    ]
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(json.dumps({"body": d}) + "\n" for d in docs), encoding="utf-8")
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    cli(
        "train",
        str(jsonl),
        "--field",
        "body",
        "-o",
        str(out1),
        "--vocab-size",
        "800",
        "--no-progress",
    )
    cli(
        "train",
        "-",
        "-o",
        str(out2),
        "--vocab-size",
        "800",
        "--no-progress",
        stdin="".join(d + "\n" for d in docs),
    )
    reference = tokenizers.Tokenizer(tokenizers.models.BPE())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    reference.train_from_iterator(
        docs,
        tokenizers.trainers.BpeTrainer(
            vocab_size=800,
            min_frequency=2,
            show_progress=False,
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    assert (
        json.loads(tokenizers.Tokenizer.from_file(str(out1)).to_str())["model"]
        == json.loads(reference.to_str())["model"]
    )
    # stdin lines keep their "\n", which ByteLevel turns into "Ċ" tokens: same vocab size, loads
    # fine
    assert tokenizers.Tokenizer.from_file(str(out2)).get_vocab_size() == 800
    out3 = tmp_path / "c.json"
    cli(
        "train",
        str(english),
        "--model",
        "bpe",
        "--suffix",
        "</w>",
        "-o",
        str(out3),
        "--vocab-size",
        "900",
        "--no-progress",
    )
    classic = tokenizers.Tokenizer.from_file(str(out3))
    assert classic.token_to_id("<unk>") == 0
    assert (
        classic.encode("Holmes said nothing").tokens
        == tokenmill.Tokenizer.from_file(str(out3)).encode("Holmes said nothing").tokens
    )


def test_bad_inputs_fail_with_a_clear_message(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nbad \xff byte\n")
    proc = cli("train", str(bad), "-o", str(tmp_path / "x.json"), "--no-progress", check=False)
    assert proc.returncode == 1
    assert "FormatError" in proc.stderr and "bad.txt" in proc.stderr and "line 2" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = cli("train", str(tmp_path / "nothing*.txt"), check=False)
    assert proc.returncode != 0 and "no file matches" in proc.stderr
