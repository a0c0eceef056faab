"""``tokenmill encode-dataset``: a corpus (text, JSON lines, Parquet; globs, ``.gz`` / ``.zst``)
tokenized into shards of token ids for language-model training, with a manifest; a rerun
resumes (see :mod:`tokenmill.data` for the files it writes)."""

from __future__ import annotations

import argparse
import re

from tokenmill.cli.encode import add_tokenizer_arguments
from tokenmill.cli.formats import Failure

SIZE_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}


def size(text: str) -> int:
    """A positive count, with an optional unit: ``500000``, ``100M``, ``1GB``, ``2GiB``."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?\s*", text, re.IGNORECASE)
    if not found:
        raise argparse.ArgumentTypeError(f"expected a size such as 100M or 1GB, got {text!r}")
    unit = found.group(2).lower()
    factor = 1024 ** " kmgt".index(unit) if found.group(3) and unit else SIZE_UNITS[unit]
    value = int(float(found.group(1)) * factor)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive size, got {text!r}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    from tokenmill.data import FORMATS

    p.add_argument("files", nargs="+", help="input files or globs (quote globs: 'data/*.jsonl')")
    add_tokenizer_arguments(p)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="PREFIX",
        help="prefix of the files written: out/train gives out/train-00000.bin, ... and "
        "out/train.manifest.json",
    )
    p.add_argument("--format", choices=list(FORMATS), default="bin", help="token file format")
    p.add_argument(
        "--field", default="text", help="the string field of JSON lines, or Parquet column"
    )
    p.add_argument(
        "--input-format",
        choices=["auto", "text", "jsonl", "parquet"],
        default="auto",
        help="how inputs are read (auto: .jsonl/.json/.ndjson are JSON lines, .parquet "
        "Parquet, others text with one document per line)",
    )
    p.add_argument(
        "--whole-file",
        "--document-per-file",
        dest="whole_file",
        action="store_true",
        help="each text file is one document",
    )
    p.add_argument("--bos", metavar="TOKEN", help="token (or id) before each document")
    p.add_argument("--eos", metavar="TOKEN", help="token (or id) after each document")
    p.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="add the post-processor's special tokens to each document (tokenizer.json)",
    )
    shard = p.add_mutually_exclusive_group()
    shard.add_argument(
        "--shard-tokens", type=size, metavar="N", help="tokens per shard (default 2**28)"
    )
    shard.add_argument("--shard-size", type=size, metavar="BYTES", help="bytes per shard (1GB)")
    p.add_argument(
        "--dtype",
        choices=["auto", "uint16", "uint32"],
        default="auto",
        help="id type (auto: uint16 when the vocabulary fits, else uint32)",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace output written with other settings (default: refuse)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        help="progress bar (default: when stderr is a terminal)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tokenmill.data import DatasetError, encode_dataset

    try:
        manifest = encode_dataset(
            args.files,
            args.tokenizer,
            args.output,
            format=args.format,
            field=args.field,
            input_format=args.input_format,
            document_per_file=args.whole_file,
            add_special_tokens=args.add_special_tokens,
            bos=args.bos,
            eos=args.eos,
            shard_tokens=args.shard_tokens,
            shard_bytes=args.shard_size,
            dtype=args.dtype,
            encoding=args.encoding,
            overwrite=args.overwrite,
            progress=args.progress,
        )
    except DatasetError as e:
        raise Failure(str(e)) from None
    shards = manifest["shards"]
    print(
        f"{sum(s['documents'] for s in shards)} documents, {sum(s['tokens'] for s in shards)} "
        f"tokens ({manifest['settings']['dtype']}) in {len(shards)} shards: "
        f"{args.output}{'-*' if shards else ''} and {args.output}.manifest.json"
    )
    return 0
