"""Dataset tokenization: JSON lines into uint32 token files with a document index, by
``tokenmill encode-dataset`` (``tokenmill.data.encode_dataset``), by ``datasets.map(batched=True,
num_proc=2)`` with ``tokenizers`` (then written as nanoGPT's ``prepare.py`` does) and by
datatrove's ``DocumentTokenizer`` step (when datatrove is installed), with GPT-2 and cl100k.

Input: ``--mb`` MB of JSON lines (``{"text": ...}``, documents of up to ~4 kB of paragraphs),
built reproducibly from ../shared/corpora (the English, Gutenberg and multilingual files, the
documents of each pass shuffled with a fixed seed) in ``--files`` files, into the cache folder
(``$TOKENMILL_BENCH_CACHE`` or a temporary one; never the repository). Every case runs in its
own process (a fresh ``datasets`` cache each time, so nothing is reused between rounds), in
``--rounds`` interleaved rounds; the table shows medians: wall and CPU seconds (the process and
its children), input MB/s by wall time, peak RSS (the largest process of the run: ``datasets``
and datatrove run two), and each peer's time over tokenmill's.

Every document is stored as its ids and ``<|endoftext|>``. Checked: the ``datasets`` output
equals tokenmill's token for token (sha256 of all ids and of the document ends); datatrove
splits the files between its two tasks, so its output is checked by token count and the sum of
all ids. datatrove picks the id width itself (uint16 for GPT-2).

    PYTHONPATH=python python bench/bench_encode_dataset.py --mb 1024 --rounds 3 \\
        [--markdown bench/RESULTS.md]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    SHARED,
    LoadSampler,
    PeerResults,
    Results,
    bench_parser,
    cache_dir,
    fail,
    git_revision,
    load_line,
    machine,
    machine_line,
    parse_args,
    write_results_section,
)

SECTION = "encode-dataset"
TOKENIZERS = ("gpt2", "cl100k")
EOS = "<|endoftext|>"
EOS_IDS = {"gpt2": 50256, "cl100k": 100257}
DOC_BYTES = 4000
SOURCES = ("english_large", "gutenberg", "multilingual")


def corpus_documents() -> list[str]:
    """Documents of up to ~DOC_BYTES of paragraphs from every text file of SOURCES."""
    docs = []
    for source in SOURCES:
        for path in sorted((SHARED / "corpora" / source).rglob("*.txt")):
            text = path.read_text(encoding="utf-8", errors="replace")
            current: list[str] = []
            size = 0
            for paragraph in text.split("\n\n"):
                current.append(paragraph)
                size += len(paragraph)
                if size >= DOC_BYTES:
                    docs.append("\n\n".join(current))
                    current, size = [], 0
            if current:
                docs.append("\n\n".join(current))
    return docs


def build_input(mb: int, files: int) -> list[Path]:
    """``files`` JSON-lines files of ``mb`` MB in all, in the cache folder (built once)."""
    folder = cache_dir() / f"encode-dataset-{mb}MB-{files}"
    paths = [folder / f"part-{i:03d}.jsonl" for i in range(files)]
    done = folder / "complete"
    if done.exists():
        return paths
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    docs = corpus_documents()
    target = mb * 10**6
    per_file = target // files
    written = 0
    outs = [open(p, "w", encoding="utf-8") for p in paths]  # noqa: SIM115 (closed below)
    try:
        rounds = 0
        while written < target:
            order = list(range(len(docs)))
            random.Random(rounds).shuffle(order)
            rounds += 1
            for i in order:
                line = json.dumps({"text": docs[i]}, ensure_ascii=False) + "\n"
                outs[min(written // per_file, files - 1)].write(line)
                written += len(line.encode("utf-8"))
                if written >= target:
                    break
    finally:
        for f in outs:
            f.close()
    done.write_text("")
    return paths


def tokenizer_files(folder: Path) -> dict[str, dict[str, str]]:
    """For each tokenizer: a tokenizer.json that ``tokenizers`` loads and gives the same ids
    (GPT-2 from its vocab files, cl100k converted by tokenmill) and what tokenmill loads."""
    import tokenizers
    from tokenmill.cli import formats

    out = {}
    gpt2 = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(
            str(SHARED / "pretrained/gpt2/encoder.json"), str(SHARED / "pretrained/gpt2/vocab.bpe")
        )
    )
    gpt2.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    gpt2.decoder = tokenizers.decoders.ByteLevel()
    gpt2.add_special_tokens([EOS])
    gpt2.save(str(folder / "gpt2.json"))
    out["gpt2"] = {"json": str(folder / "gpt2.json"), "tokenmill": str(folder / "gpt2.json")}
    link = folder / "cl100k_base.tiktoken"
    if not link.exists():
        link.symlink_to(SHARED / "pretrained/cl100k_base/cl100k_base.tiktoken")
    loaded = formats.load(str(link))
    config = json.loads(loaded.to_tokenizer().to_str())
    # In tokenizer.json an added token absent from the model's vocabulary takes the next free
    # id whatever its "id" says, so cl100k's specials (100257 on, after the unused 100256)
    # would move down. The specials go into the vocabulary at their ids, and unused ids get
    # unreachable placeholders.
    vocab = config["model"]["vocab"]
    by_id = {i: t for t, i in loaded.enc._special_tokens.items()}
    for i in sorted(set(range(max(by_id) + 1)) - set(vocab.values())):
        vocab[by_id.get(i, f"<|unused {i}|>")] = i
    (folder / "cl100k.json").write_text(json.dumps(config), encoding="utf-8")
    out["cl100k"] = {"json": str(folder / "cl100k.json"), "tokenmill": str(link)}
    return out


# ---- the cases, each run in a child process ------------------------------------------------


def run_tokenmill(inputs: list[str], tokenizer: str, out: Path) -> dict:
    from tokenmill.data import encode_dataset

    m = encode_dataset(inputs, tokenizer, out / "t", eos=EOS, dtype="uint32", progress=False)
    h, ends = hashlib.sha256(), hashlib.sha256()
    import numpy as np

    base = 0
    for shard in m["shards"]:
        h.update((out / shard["files"][0]).read_bytes())
        index = np.load(out / shard["files"][1])
        ends.update((index[1:] + base).tobytes())
        base += int(index[-1])
    return {"tokens": base, "sha256": h.hexdigest(), "ends": ends.hexdigest()}


def run_datasets(inputs: list[str], tokenizer_json: str, out: Path) -> dict:
    """``load_dataset("json")`` + ``map(batched=True, num_proc=2)`` with ``tokenizers``, then
    the ids written as one uint32 .bin and its index, as nanoGPT's prepare.py does."""
    import datasets
    import numpy as np
    import tokenizers

    datasets.disable_progress_bars()
    tok = tokenizers.Tokenizer.from_file(tokenizer_json)
    eos = tok.token_to_id(EOS)

    def encode(batch):
        ids = [e.ids + [eos] for e in tok.encode_batch(batch["text"], add_special_tokens=False)]
        return {"ids": ids, "len": [len(x) for x in ids]}

    ds = datasets.load_dataset("json", data_files=inputs, split="train", cache_dir=str(out / "c"))
    ds = ds.map(encode, batched=True, num_proc=2, remove_columns=["text"])
    lengths = np.asarray(ds["len"], dtype=np.int64)
    index = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=index[1:])
    ids = np.memmap(out / "t.bin", dtype=np.uint32, mode="w+", shape=(int(index[-1]),))
    at = 0
    shards = max(1, min(1024, len(ds)))
    for k in range(shards):  # prepare.py's loop: contiguous shards, concatenated
        batch = ds.shard(num_shards=shards, index=k, contiguous=True).with_format("numpy")
        chunk = np.concatenate(batch["ids"]) if len(batch) else np.zeros(0, dtype=np.uint32)
        ids[at : at + len(chunk)] = chunk
        at += len(chunk)
    ids.flush()
    np.save(out / "t.idx.npy", index)
    return {
        "tokens": int(index[-1]),
        "sha256": hashlib.sha256((out / "t.bin").read_bytes()).hexdigest(),
        "ends": hashlib.sha256(index[1:].tobytes()).hexdigest(),
    }


def run_datatrove(inputs: list[str], tokenizer_json: str, out: Path) -> dict:
    import numpy as np
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer

    folder = str(Path(inputs[0]).parent)
    executor = LocalPipelineExecutor(
        pipeline=[
            JsonlReader(folder, glob_pattern="part-*.jsonl", compression=None),
            DocumentTokenizer(
                output_folder=str(out / "dt"),
                tokenizer_name_or_path=tokenizer_json,
                eos_token=EOS,
                shuffle_documents=False,
            ),
        ],
        tasks=2,
        workers=2,
        logging_dir=str(out / "logs"),
    )
    executor.run()
    tokens, total = 0, 0
    width = None
    for path in sorted((out / "dt").glob("*.ds")):
        raw = path.read_bytes()
        if width is None:
            width = np.uint32 if "cl100k" in tokenizer_json else np.uint16
        ids = np.frombuffer(raw, dtype=width)
        tokens += len(ids)
        total += int(ids.sum(dtype=np.int64))
    return {"tokens": tokens, "id_sum": total}


def child(args) -> None:
    out = Path(args.out)
    inputs = args.inputs.split(os.pathsep)
    start = time.perf_counter()
    if args.child == "tokenmill":
        result = run_tokenmill(inputs, args.tokenizer, out)
    elif args.child == "datasets":
        result = run_datasets(inputs, args.tokenizer, out)
    else:
        result = run_datatrove(inputs, args.tokenizer, out)
    result["seconds"] = time.perf_counter() - start
    if "id_sum" not in result and args.child != "datatrove":
        import numpy as np

        total = 0
        for path in sorted(out.glob("t*.bin")):
            total += int(np.memmap(path, dtype=np.uint32, mode="r").sum(dtype=np.int64))
        result["id_sum"] = total
    print("RESULT " + json.dumps(result), flush=True)


def measure(library: str, inputs: list[Path], tokenizer: str) -> dict:
    """One case in a fresh process: its result, wall and CPU seconds, peak RSS."""
    out = Path(tempfile.mkdtemp(prefix=f"bench-encode-{library}-", dir=cache_dir()))
    env = dict(os.environ, HF_DATASETS_CACHE=str(out / "hf"), TOKENIZERS_PARALLELISM="true")
    command = [sys.executable, __file__, "--child", library, "--tokenizer", tokenizer]
    command += ["--out", str(out), "--inputs", os.pathsep.join(map(str, inputs))]
    with open(out / "stdout", "w+") as stdout, open(out / "stderr", "w+") as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
        # wait4: this child's own usage, with that of the processes it waited for (its pool):
        # CPU seconds summed, ru_maxrss the largest of them.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        lines = [x for x in stdout.read().splitlines() if x.startswith("RESULT ")]
        error = (stderr.read().strip().splitlines() or ["?"])[-1][:200]
    shutil.rmtree(out, ignore_errors=True)
    if proc.returncode != 0 or not lines:
        return {"error": error}
    result = json.loads(lines[-1][len("RESULT ") :])
    result.update(wall=wall, cpu=usage.ru_utime + usage.ru_stime, peak_mb=usage.ru_maxrss / 1024)
    return result


def main() -> None:
    ap = bench_parser(__doc__)
    ap.add_argument("--mb", type=int, default=1024, help="MB of JSON lines (default 1024)")
    ap.add_argument("--files", type=int, default=8, help="input files (default 8)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--tokenizers", default=",".join(TOKENIZERS), help="gpt2,cl100k")
    ap.add_argument("--markdown", metavar="FILE", help="rewrite FILE's encode-dataset section")
    for internal in ("--child", "--tokenizer", "--out", "--inputs"):  # a case's own process
        ap.add_argument(internal, help=argparse.SUPPRESS)
    ap.add_argument("--prepare", type=int, help=argparse.SUPPRESS)
    args = parse_args(ap)
    if args.prepare:
        folder = cache_dir() / "encode-dataset-tokenizers"
        folder.mkdir(exist_ok=True)
        paths = [str(p) for p in build_input(args.prepare, args.files)]
        print(json.dumps([paths, tokenizer_files(folder)]))
        return
    if args.child:
        child(args)
        return
    try:
        import datatrove  # noqa: F401

        libraries = ["tokenmill", "datasets", "datatrove"]
        note = ""
    except ImportError:
        libraries = ["tokenmill", "datasets"]
        note = "datatrove is not installed (pip install datatrove): its rows are left out."
    if args.tokenmill_only:
        libraries, note = ["tokenmill"], ""
    # Prepared in a process of its own: this one stays small, and each case's peak RSS is its
    # own (a child starts from the size of its parent at the fork).
    prepared = subprocess.run(
        [sys.executable, __file__, "--prepare", str(args.mb), "--files", str(args.files)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    inputs, files = json.loads(prepared.splitlines()[-1])
    inputs = [Path(p) for p in inputs]
    mb = sum(p.stat().st_size for p in inputs) / 1e6
    peer_versions = ", ".join(
        f"{name} {_version(name)}" for name in ("tokenizers", "datasets", "datatrove", "pyarrow")
    )
    names = [t for t in args.tokenizers.split(",") if t]
    runs: dict[tuple[str, str], list[dict]] = {}
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with LoadSampler() as load:
        for r in range(args.rounds):
            for name in names:
                for library in libraries:
                    tok = files[name]["tokenmill" if library == "tokenmill" else "json"]
                    result = measure(library, inputs, tok)
                    runs.setdefault((name, library), []).append(result)
                    shown = {k: v for k, v in result.items() if k not in ("sha256", "ends")}
                    print(f"round {r + 1} {name} {library}: {shown}", file=sys.stderr, flush=True)
    rows = summarize(runs, names, libraries, mb)
    if args.json:
        write_json(args, rows)
    if args.tokenmill_only:
        return
    header = [
        f"- date: {started}; {args.rounds} interleaved rounds, medians; input {mb:.0f} MB of "
        f"JSON lines in {args.files} files",
        f"- machine: {machine_line(machine())}",
        f"- {load_line(load.summary(), os.cpu_count())}",
        f"- tokenmill {git_revision()}; {peer_versions}",
        f"- command: `python bench/bench_encode_dataset.py --mb {args.mb} --files {args.files} "
        f"--rounds {args.rounds}`",
        "- output: uint32 ids + int64 document ends, `<|endoftext|>` after each document; "
        "datasets: `load_dataset('json')` + `map(batched=True, num_proc=2)` + nanoGPT's "
        "write loop; datatrove: `JsonlReader` + `DocumentTokenizer(shuffle_documents=False)`, "
        "2 tasks on 2 workers (uint16 for GPT-2; its reader leaves out empty documents; the CPU "
        "time and memory of its workers are not counted: n/a). Peak RSS: the largest process "
        "of the run.",
    ]
    if note:
        header.append(f"- {note}")
    body = "\n".join(header) + "\n\n" + "\n".join(table(rows)) + "\n"
    print(body)
    if args.markdown:
        title = "## Dataset tokenization to token files (`bench_encode_dataset.py`)\n\n"
        write_results_section(SECTION, title + body, Path(args.markdown))


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def summarize(runs, names, libraries, mb) -> list[dict]:
    """One row per tokenizer and library: medians, the ratio to tokenmill, the output check."""
    out = []
    for name in names:
        base = runs[(name, "tokenmill")]
        base_ok = [r for r in base if "error" not in r]
        for library in libraries:
            results = runs[(name, library)]
            ok = [r for r in results if "error" not in r]
            row: dict = {"tokenizer": name, "library": library}
            if not ok:
                out.append(dict(row, error=results[0]["error"]))
                continue
            wall = statistics.median(r["wall"] for r in ok)
            # datatrove's workers are not waited for by its process: their CPU time and memory
            # are not in its figures.
            counted = library != "datatrove"
            row.update(
                wall=wall,
                cpu=statistics.median(r["cpu"] for r in ok) if counted else None,
                peak_mb=max(r["peak_mb"] for r in ok) if counted else None,
                mb=mb,
                tokens=ok[0]["tokens"],
                digest=ok[0].get("sha256"),
                ratio=None,
                check=None,
            )
            if library != "tokenmill" and base_ok:
                per_round = [
                    r["wall"] / b["wall"]
                    for r, b in zip(results, base)
                    if "error" not in r and "error" not in b
                ]
                row["ratio"] = statistics.median(per_round) if per_round else None
                row["check"] = output_check(ok[0], base_ok[0], name)
            out.append(row)
    return out


def output_check(result: dict, ref: dict, name: str) -> str:
    if "sha256" in result:
        same = result["sha256"] == ref["sha256"] and result["ends"] == ref["ends"]
        return "identical ids and ends" if same else "**DIFFERENT**"
    fewer = ref["tokens"] - result["tokens"]
    if fewer == 0 and result["id_sum"] == ref["id_sum"]:
        return "same count and id sum"
    if fewer > 0 and ref["id_sum"] - result["id_sum"] == fewer * EOS_IDS[name]:
        return f"the same but {fewer} empty documents left out (their EOS)"
    return "**DIFFERENT**"


def table(rows: list[dict]) -> list[str]:
    out = [
        "| tokenizer | library | wall s | CPU s | MB/s (wall) | peak RSS MB | time ÷ tokenmill "
        "| tokens | output |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        if "error" in row:
            out.append(
                f"| {row['tokenizer']} | {row['library']} | – | – | – | – | – | – | failed: "
                f"{row['error']} |"
            )
            continue
        cpu = "n/a" if row["cpu"] is None else f"{row['cpu']:.1f}"
        peak = "n/a" if row["peak_mb"] is None else f"{row['peak_mb']:.0f}"
        ratio = "–" if row["ratio"] is None else f"{row['ratio']:.2f}"
        out.append(
            f"| {row['tokenizer']} | {row['library']} | {row['wall']:.1f} | {cpu} | "
            f"{row['mb'] / row['wall']:.1f} | {peak} | {ratio} | {row['tokens']:,} | "
            f"{row['check'] or '–'} |"
        )
    return out


def write_json(args, rows: list[dict]) -> None:
    """``--json OUT``: the rows for run.py, or with ``--tokenmill-only`` tokenmill's timings
    and output digests for compare_builds.py (the formats are in _common.py)."""
    if args.tokenmill_only:
        results = Results()
        for row in rows:
            if "error" in row:
                fail(f"{row['tokenizer']}: {row['error']}")
            results.add(
                f"{row['tokenizer']} jsonl to bin",
                row["wall"],
                row["cpu"],
                row["peak_mb"],
                row["digest"],
            )
        results.write(args.json)
        return
    peers = PeerResults("tokenizers", "datasets", "datatrove", "pyarrow")
    for row in rows:
        if "error" in row:
            peers.note(f"{row['library']} on {row['tokenizer']} failed: {row['error']}")
            continue
        peers.add(
            f"{row['tokenizer']} jsonl to bin",
            row["library"],
            wall=row["wall"],
            cpu=row["cpu"],
            peak_mb=row["peak_mb"],
            mb=row["mb"],
            check=row["check"],
            ratio=None if row["ratio"] is None else {"wall": row["ratio"]},
        )
    peers.write(args.json)


if __name__ == "__main__":
    main()
