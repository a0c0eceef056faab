"""`tokenmill encode-dataset`: JSON lines of real text into token files with tokenizer files as
the other commands read them (tokenizer.json of GPT-2, cl100k_base.tiktoken), ids equal to
`encode`; a rerun resumes; every error is one line with the right exit status."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tokenmill
from conftest import gpt2, read_sample, shared_path
from test_cli import run
from tokenmill.tiktoken import get_encoding


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    text = read_sample(shared_path("corpora", "english_large", "gutenberg_en_large_part2.txt"))
    docs = [p.strip() for p in text[:150_000].split("\n\n") if p.strip()]
    folder = tmp_path_factory.mktemp("cli_data")
    with open(folder / "docs.jsonl", "w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps({"content": doc}) + "\n")
    tok = gpt2(tokenmill)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "cl100k_base.tiktoken").symlink_to(
        shared_path("pretrained", "cl100k_base", "cl100k_base.tiktoken")
    )
    return folder, docs


def read_bin(prefix: str) -> list:
    manifest = json.loads(Path(prefix + ".manifest.json").read_text())
    out = []
    for shard in manifest["shards"]:
        folder = prefix.rsplit("/", 1)[0]
        ids = np.memmap(f"{folder}/{shard['files'][0]}", dtype=manifest["settings"]["dtype"])
        index = np.load(f"{folder}/{shard['files'][1]}")
        out += [ids[index[i] : index[i + 1]].tolist() for i in range(len(index) - 1)]
    return out


def test_encode_dataset_writes_the_encode_ids_and_resumes(corpus, tmp_path, capsys):
    folder, docs = corpus
    out = str(tmp_path / "g")
    argv = ["encode-dataset", folder / "docs.jsonl", "-t", folder / "tokenizer.json", "-o", out]
    argv += ["--field", "content", "--eos", "<|endoftext|>", "--shard-size", "20KB"]
    code, stdout, err = run(capsys, *argv)
    assert code == 0, err
    tok = tokenmill.Tokenizer.from_file(str(folder / "tokenizer.json"))
    want = [e.ids + [50256] for e in tok.encode_batch(docs, add_special_tokens=False)]
    assert read_bin(out) == want
    shards = json.loads(Path(out + ".manifest.json").read_text())["shards"]
    assert len(shards) > 2 and all(s["tokens"] >= 10_000 for s in shards[:-1])
    assert stdout == f"{len(docs)} documents, {sum(map(len, want))} tokens (uint16) in " + (
        f"{len(shards)} shards: {out}-* and {out}.manifest.json\n"
    )
    (tmp_path / "g-00001.bin").unlink()
    assert run(capsys, *argv)[0] == 0
    assert read_bin(out) == want
    # tiktoken: uint32, Parquet.
    argv = ["encode-dataset", str(folder / "*.jsonl"), "-t", folder / "cl100k_base.tiktoken"]
    code, _, err = run(
        capsys,
        *argv,
        "-o",
        tmp_path / "c",
        "--field",
        "content",
        "--format",
        "parquet",
        "--bos",
        "100257",
    )
    assert code == 0, err
    pq = pytest.importorskip("pyarrow.parquet")
    rows = pq.read_table(tmp_path / "c-00000.parquet").column("input_ids").to_pylist()
    enc = get_encoding("cl100k_base", str(shared_path("pretrained")))
    assert rows == [[100257, *enc.encode_ordinary(d)] for d in docs]


@pytest.mark.parametrize(
    "options, status, message",
    [
        (["--field", "text"], 1, "docs.jsonl:1: no 'text' field"),
        (["--eos", "<|nope|>"], 1, "eos: '<|nope|>' is not a token of the vocabulary"),
        (["--shard-size", "big"], 2, "argument --shard-size: expected a size such as 100M"),
        (["--shard-size", "1GB", "--shard-tokens", "5"], 2, "not allowed with argument"),
        (["--format", "csv"], 2, "argument --format: invalid choice: 'csv'"),
    ],
)
def test_errors_are_one_line(corpus, tmp_path, capsys, options, status, message):
    folder, _ = corpus
    argv = ["encode-dataset", folder / "docs.jsonl", "-t", folder / "tokenizer.json"]
    code, _, err = run(capsys, *argv, "-o", tmp_path / "o", *options)
    assert code == status
    last = err.strip().splitlines()[-1]
    assert last.startswith("tokenmill encode-dataset: error: ") and message in last, err
    assert "Traceback" not in err


def test_other_settings_and_missing_inputs(corpus, tmp_path, capsys):
    folder, _ = corpus
    argv = ["encode-dataset", folder / "docs.jsonl", "-t", folder / "tokenizer.json"]
    argv += ["-o", tmp_path / "o", "--field", "content"]
    assert run(capsys, *argv)[0] == 0
    code, _, err = run(capsys, *argv, "--eos", "0")
    assert code == 1 and "written with other settings (eos differ)" in err
    assert "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert run(capsys, *argv, "--eos", "0", "--overwrite")[0] == 0
    code, _, err = run(
        capsys,
        "encode-dataset",
        tmp_path / "none.jsonl",
        "-o",
        tmp_path / "x",
        "-t",
        folder / "tokenizer.json",
    )
    assert code == 1 and err.strip().endswith("none.jsonl: no such file")
