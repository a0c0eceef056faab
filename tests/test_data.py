"""tokenmill.data: a corpus into token files. Every format loads back (numpy.memmap / numpy.load
/ pyarrow) to exactly each document's ``encode`` ids, with GPT-2 (uint16) and cl100k (uint32) on
real text from ../shared/corpora; EOS/BOS placement; shard cuts that do not depend on batching;
resume after a deleted shard and after a SIGKILL; globs, .gz / .zst JSON lines, Parquet and
``datasets`` inputs; the ``Dataset.map`` fast path; errors that name the file and line."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tokenmill
from conftest import child_env, gpt2, read_sample, shared_path
from tokenmill import data
from tokenmill.tiktoken import get_encoding

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

GPT2_EOT = 50256


@pytest.fixture(scope="module")
def gpt2_tok():
    return gpt2(tokenmill)


@pytest.fixture(scope="module")
def cl100k():
    return get_encoding("cl100k_base", str(shared_path("pretrained")))


@pytest.fixture(scope="module")
def docs() -> list:
    """About 400 kB of real documents: English paragraphs and lines of several languages."""
    english = read_sample(shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"))
    paragraphs = [p.strip() for p in english[:300_000].split("\n\n") if p.strip()]
    other = []
    for lang in ("de", "ru", "zh", "ar"):
        folder = shared_path("corpora", "multilingual", lang)
        path = sorted(p for p in folder.rglob("*") if p.is_file())[0]
        other += [line for line in read_sample(path, 30_000).splitlines() if line.strip()][:100]
    out = paragraphs + other
    out[5] = ""  # an empty document (JSON lines keep it)
    out[7] = "Hello\r\nworld, \u00e9 \U0001f600 <|endoftext|> <s>"  # special-looking text
    return out


def write_jsonl(path: Path, docs: list, field: str = "text", opener=open) -> Path:
    with opener(path, "wt", encoding="utf-8") as f:
        for i, doc in enumerate(docs):
            f.write(json.dumps({"id": i, field: doc}, ensure_ascii=False) + "\n")
    return path


@pytest.fixture(scope="module")
def jsonl(docs, tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("corpus") / "docs.jsonl", docs)


def expected(tok, docs, bos=None, eos=None):
    if isinstance(tok, tokenmill.Tokenizer):
        ids = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
    else:
        ids = [tok.encode_ordinary(d) for d in docs]
    return [
        ([bos] if bos is not None else []) + x + ([eos] if eos is not None else []) for x in ids
    ]


def read_documents(manifest: dict, folder: Path) -> list:
    """Every document's ids, read back from the shards as a user would."""
    fmt, dtype = manifest["settings"]["format"], manifest["settings"]["dtype"]
    out = []
    for shard in manifest["shards"]:
        path = folder / shard["files"][0]
        if fmt == "bin":
            ids = np.memmap(path, dtype=dtype, mode="r")
        elif fmt == "npy":
            ids = np.load(path, mmap_mode="r")
            assert ids.dtype == np.dtype(dtype)
        else:
            if fmt == "parquet":
                table = pq.read_table(path)
            else:
                table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
            assert table.schema.field("input_ids").type == pa.list_(pa.from_numpy_dtype(dtype))
            rows = table.column("input_ids").to_pylist()
            assert len(rows) == shard["documents"]
            assert sum(map(len, rows)) == shard["tokens"]
            out += rows
            continue
        index = np.load(folder / shard["files"][1])
        assert index.dtype == np.int64 and index[0] == 0 and index[-1] == len(ids)
        assert len(index) == shard["documents"] + 1 and len(ids) == shard["tokens"]
        out += [ids[index[i] : index[i + 1]].tolist() for i in range(len(index) - 1)]
    return out


@pytest.mark.parametrize("fmt", list(data.FORMATS))
@pytest.mark.parametrize("which", ["gpt2", "cl100k"])
def test_every_format_loads_back_to_the_encode_ids(which, fmt, request, jsonl, docs, tmp_path):
    tok = request.getfixturevalue("gpt2_tok" if which == "gpt2" else "cl100k")
    manifest = data.encode_dataset(
        jsonl, tok, tmp_path / "out" / "train", format=fmt, shard_tokens=30_000
    )
    assert manifest["settings"]["dtype"] == ("uint16" if which == "gpt2" else "uint32")
    assert manifest["complete"] and len(manifest["shards"]) > 2
    assert read_documents(manifest, tmp_path / "out") == expected(tok, docs)
    names = sorted(os.listdir(tmp_path / "out"))
    ext = data.FORMATS[fmt]
    assert f"train-00000{ext}" in names and "train.manifest.json" in names
    on_disk = json.loads((tmp_path / "out" / "train.manifest.json").read_text())
    assert on_disk == manifest


def test_eos_and_bos_surround_every_document(gpt2_tok, cl100k, jsonl, docs, tmp_path):
    m = data.encode_dataset(jsonl, gpt2_tok, tmp_path / "g", eos="<|endoftext|>")
    assert read_documents(m, tmp_path) == expected(gpt2_tok, docs, eos=GPT2_EOT)
    m = data.encode_dataset(
        jsonl, cl100k, tmp_path / "c", bos=100257, eos="<|endoftext|>", format="parquet"
    )
    assert read_documents(m, tmp_path) == expected(cl100k, docs, bos=100257, eos=100257)
    ids = np.memmap(tmp_path / "g-00000.bin", dtype=np.uint16, mode="r")
    # nanoGPT's view: one stream with an EOT after each document.
    assert ids[-1] == GPT2_EOT and (ids == GPT2_EOT).sum() >= len(docs)


def test_shards_cut_at_the_same_documents_whatever_the_batches(gpt2_tok, jsonl, tmp_path):
    small = data.encode_dataset(
        jsonl, gpt2_tok, tmp_path / "a", shard_tokens=20_000, batch_bytes=3_000
    )
    large = data.encode_dataset(
        jsonl, gpt2_tok, tmp_path / "b", shard_tokens=20_000, batch_bytes=10**9
    )

    def digests(m):
        return [list(s["sha256"].values()) for s in m["shards"]]

    assert digests(small) == digests(large) and len(small["shards"]) > 3
    for shard in small["shards"][:-1]:
        index = np.load(tmp_path / shard["files"][1])
        assert shard["tokens"] >= 20_000 and index[-2] < 20_000  # the first boundary past it
    by_bytes = data.encode_dataset(jsonl, gpt2_tok, tmp_path / "c", shard_bytes=40_000)
    assert by_bytes["settings"]["shard_tokens"] == 20_000  # uint16: 2 bytes per id
    wide = data.encode_dataset(jsonl, gpt2_tok, tmp_path / "d", shard_bytes=40_000, dtype="uint32")
    assert wide["settings"]["shard_tokens"] == 10_000 and wide["settings"]["dtype"] == "uint32"
    assert read_documents(wide, tmp_path) == read_documents(small, tmp_path)


def test_resume_rewrites_only_missing_or_damaged_shards(gpt2_tok, jsonl, tmp_path):
    out = tmp_path / "t"
    first = data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=25_000, eos=GPT2_EOT)
    files = [tmp_path / f for s in first["shards"] for f in s["files"]]
    assert len(first["shards"]) >= 4
    stamps = {f: f.stat().st_mtime_ns for f in files}
    (tmp_path / "t-00001.bin").unlink()
    with open(tmp_path / "t-00002.idx.npy", "r+b") as f:  # damaged: checksum differs
        f.seek(-1, os.SEEK_END)
        f.write(b"\xff")
    time.sleep(0.01)
    again = data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=25_000, eos=GPT2_EOT)
    assert again == first
    rewritten = {f.name for f in files if f.stat().st_mtime_ns != stamps[f]}
    assert rewritten == {"t-00001.bin", "t-00001.idx.npy", "t-00002.bin", "t-00002.idx.npy"}
    for shard in again["shards"]:
        for name, digest in shard["sha256"].items():
            assert data._sha256(str(tmp_path / name)) == digest
    # A rerun of finished output writes no shard.
    stamps = {f: f.stat().st_mtime_ns for f in files}
    assert data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=25_000, eos=GPT2_EOT) == first
    assert all(f.stat().st_mtime_ns == stamps[f] for f in files)


def test_other_settings_refuse_unless_overwrite(gpt2_tok, jsonl, tmp_path):
    out = tmp_path / "t"
    data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=25_000)
    with pytest.raises(data.DatasetError, match=r"other settings \(eos differ\).*overwrite"):
        data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=25_000, eos=GPT2_EOT)
    m = data.encode_dataset(jsonl, gpt2_tok, out, shard_tokens=50_000, overwrite=True)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*(f for s in m["shards"] for f in s["files"]), "t.manifest.json"])
    # A run of other settings killed before its first shard left a manifest and a stray
    # shard file: both replaced.
    stale = {"settings": {"format": "npy"}, "shards": [], "complete": False}
    (tmp_path / "v.manifest.json").write_text(json.dumps(stale))
    (tmp_path / "v-00003.bin").write_bytes(b"\0\0")
    m = data.encode_dataset(iter([jsonl]), gpt2_tok, tmp_path / "v")
    assert m["settings"]["format"] == "bin" and not (tmp_path / "v-00003.bin").exists()
    (tmp_path / "u-00000.bin").write_bytes(b"\0\0")  # someone else's file, no manifest
    with pytest.raises(data.DatasetError, match="u-00000.bin exists and no manifest"):
        data.encode_dataset(jsonl, gpt2_tok, tmp_path / "u")


KILLED = r"""
import sys, time
from tokenmill import data
from tokenmill.tiktoken import get_encoding

encode = data._Encoder.encode
def slow(self, texts):  # slowed so that the kill lands while a shard is being written
    time.sleep(0.05)
    return encode(self, texts)
data._Encoder.encode = slow
enc = get_encoding("cl100k_base", sys.argv[3])
data.encode_dataset(sys.argv[1], enc, sys.argv[2], shard_tokens=20_000, batch_bytes=4_000)
"""


def test_a_killed_run_leaves_whole_shards_and_a_rerun_completes(cl100k, jsonl, tmp_path):
    reference = data.encode_dataset(jsonl, cl100k, tmp_path / "ref" / "t", shard_tokens=20_000)
    out = tmp_path / "run"
    out.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(jsonl), str(out / "t"), str(shared_path("pretrained"))],
        env=child_env(),
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            try:
                listed = json.loads((out / "t.manifest.json").read_text())["shards"]
            except (OSError, ValueError):
                listed = []
            writing = any(".tokenmill-tmp-" in n for n in os.listdir(out))
            if len(listed) >= 2 and writing:  # while it writes its third shard
                break
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    assert child.returncode == -signal.SIGKILL
    names = sorted(os.listdir(out))
    assert any(".tokenmill-tmp-" in n for n in names), names  # the shard it was writing
    ref_files = {f for s in reference["shards"] for f in s["files"]}
    visible = [n for n in names if not n.startswith(".") and not n.endswith(".json")]
    assert visible and len(visible) < len(ref_files)
    for name in visible:  # whole shards only, each equal to the reference's
        assert (out / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()
    again = data.encode_dataset(jsonl, cl100k, out / "t", shard_tokens=20_000)
    assert again["shards"] == reference["shards"]
    assert sorted(os.listdir(out)) == sorted([*ref_files, "t.manifest.json"])  # no temporary


def test_globs_gz_zst_text_and_whole_files(gpt2_tok, docs, tmp_path):
    zstandard = pytest.importorskip("zstandard")
    half = len(docs) // 2
    write_jsonl(tmp_path / "b.jsonl.gz", docs[half:], opener=gzip.open)
    with (
        open(tmp_path / "a.jsonl.zst", "wb") as raw,
        zstandard.ZstdCompressor().stream_writer(raw) as z,
    ):
        for doc in docs[:half]:
            z.write((json.dumps({"text": doc}) + "\n").encode())
    m = data.encode_dataset(str(tmp_path / "*.jsonl.*"), gpt2_tok, tmp_path / "o" / "g")
    assert [Path(i["path"]).name for i in m["settings"]["inputs"]] == ["a.jsonl.zst", "b.jsonl.gz"]
    assert read_documents(m, tmp_path / "o") == expected(gpt2_tok, docs)
    # Text: one document per non-empty line (line ends removed), or one per file.
    lines = [d.replace("\r", " ").replace("\n", " ") for d in docs if d]
    (tmp_path / "t1.txt").write_text("\n".join(lines[:50]) + "\n\n", encoding="utf-8")
    (tmp_path / "t2.txt").write_text("\r\n".join(lines[50:]), encoding="utf-8")
    m = data.encode_dataset([tmp_path / "t1.txt", tmp_path / "t2.txt"], gpt2_tok, tmp_path / "x")
    assert read_documents(m, tmp_path) == expected(gpt2_tok, lines)
    m = data.encode_dataset(
        str(tmp_path / "t?.txt"), gpt2_tok, tmp_path / "w", document_per_file=True
    )
    whole = [(tmp_path / n).read_bytes().decode() for n in ("t1.txt", "t2.txt")]
    assert read_documents(m, tmp_path) == expected(gpt2_tok, whole)


def test_parquet_and_datasets_inputs(cl100k, docs, tmp_path):
    datasets = pytest.importorskip("datasets")
    pq.write_table(
        pa.table({"body": docs, "n": list(range(len(docs)))}),
        tmp_path / "d.parquet",
        row_group_size=100,
    )
    m = data.encode_dataset(tmp_path / "d.parquet", cl100k, tmp_path / "p", field="body")
    assert read_documents(m, tmp_path) == expected(cl100k, docs)
    ds = datasets.Dataset.from_dict({"text": docs})
    m = data.encode_dataset(ds, cl100k, tmp_path / "h", format="npy", eos=100257)
    assert read_documents(m, tmp_path) == expected(cl100k, docs, eos=100257)


def test_datasets_map_function_equals_encode(gpt2_tok, cl100k, docs):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_dict({"text": docs, "n": list(range(len(docs)))})
    mapped = ds.map(data.datasets_map_function(gpt2_tok), batched=True, batch_size=64)
    assert mapped["input_ids"] == expected(gpt2_tok, docs)
    assert mapped["n"] == list(range(len(docs)))
    fn = data.datasets_map_function(
        cl100k, column="ids", eos="<|endoftext|>", remove_columns=["text"]
    )
    mapped = ds.map(fn, batched=True)
    assert mapped.column_names == ["n", "ids"]
    assert mapped["ids"] == expected(cl100k, docs, eos=100257)
    arrow = ds.with_format("arrow").map(fn, batched=True, batch_size=100, num_proc=2)
    assert arrow.with_format(None)["ids"] == expected(cl100k, docs, eos=100257)
    assert fn({"text": docs[:3]}).column("ids").type == pa.list_(pa.int32())


def test_errors_name_the_file_and_line(gpt2_tok, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a"}\n\n{"text": "b"\n', encoding="utf-8")
    with pytest.raises(data.DatasetError, match=r"bad.jsonl:3: not a JSON line"):
        data.encode_dataset(bad, gpt2_tok, tmp_path / "o")
    bad.write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    with pytest.raises(data.DatasetError, match=r"bad.jsonl:2: no 'text' field"):
        data.encode_dataset(bad, gpt2_tok, tmp_path / "o")
    bad.write_text('{"text": 3}\n', encoding="utf-8")
    with pytest.raises(data.DatasetError, match=r"bad.jsonl:1: a non-string 'text' field"):
        data.encode_dataset(bad, gpt2_tok, tmp_path / "o")
    (tmp_path / "bad.txt").write_bytes(b"fine\nnot \xff utf-8\n")
    with pytest.raises(data.DatasetError, match=r"bad.txt:2: not UTF-8"):
        data.encode_dataset(tmp_path / "bad.txt", gpt2_tok, tmp_path / "o")
    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "p.parquet")
    with pytest.raises(data.DatasetError, match=r"p.parquet: no column 'text' \(columns: body\)"):
        data.encode_dataset(tmp_path / "p.parquet", gpt2_tok, tmp_path / "o")
    with pytest.raises(data.DatasetError, match=r"nothing\*.jsonl: no file matches"):
        data.encode_dataset(str(tmp_path / "nothing*.jsonl"), gpt2_tok, tmp_path / "o")
    with pytest.raises(data.DatasetError, match="'<nope>' is not a token"):
        data.encode_dataset(tmp_path / "bad.txt", gpt2_tok, tmp_path / "o", eos="<nope>")
    whole = gzip.compress(b'{"text": "a"}\n' * 1000)
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(data.DatasetError, match=r"cut.jsonl.gz: cannot be read \(EOFError"):
        data.encode_dataset(tmp_path / "cut.jsonl.gz", gpt2_tok, tmp_path / "o")
    assert not any(".tokenmill-tmp-" in n for n in os.listdir(tmp_path))


def test_progress_bar_shows_bytes_and_tokens_per_second(gpt2_tok, jsonl, tmp_path, capsys):
    pytest.importorskip("tqdm")
    data.encode_dataset(jsonl, gpt2_tok, tmp_path / "p", progress=True)
    err = capsys.readouterr().err
    assert "B/s" in err and "M tokens/s" in err and "100%" in err
    data.encode_dataset(jsonl, gpt2_tok, tmp_path / "q", progress=False)
    assert capsys.readouterr().err == ""


def test_sentencepiece_model_file(docs, jsonl, tmp_path):
    from tokenmill.sentencepiece import SentencePieceProcessor

    model = shared_path("pretrained", "mistral", "tokenizer.model.v1")
    m = data.encode_dataset(jsonl, str(model), tmp_path / "s", bos="<s>", eos="</s>")
    sp = SentencePieceProcessor(model_file=str(model))
    assert m["settings"]["tokenizer"]["kind"] == "sentencepiece"
    assert read_documents(m, tmp_path) == [[1, *ids, 2] for ids in sp.encode(docs)]
