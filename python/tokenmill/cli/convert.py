"""``tokenmill convert`` (between tokenizer.json, .model, .tiktoken, vocab.txt and vocab.json +
merges.txt, checked to give the same ids) and ``tokenmill info`` (what a tokenizer file is)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from tokenmill.cli import formats
from tokenmill.cli.encode import add_tokenizer_arguments

FORMATS_HELP = (
    "tokenizer.json, a SentencePiece .model, a .tiktoken rank file, vocab.txt (WordPiece) or "
    "vocab.json (BPE; merges.txt goes beside it)"
)


def add_convert_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("source", help="the tokenizer to convert (any format the CLI reads)")
    c.add_argument("output", help=f"the file to write, its format from its name: {FORMATS_HELP}")
    c.add_argument(
        "--encoding",
        help="tiktoken encoding (split pattern, special tokens) of a .tiktoken source or output "
        "(default: from the file name, else r50k_base)",
    )
    c.add_argument("--force", action="store_true", help="replace an existing output file")
    c.set_defaults(run=run_convert)


def add_info_arguments(i: argparse.ArgumentParser) -> None:
    add_tokenizer_arguments(i)
    i.add_argument("file", nargs="?", help="the tokenizer file (default: --tokenizer)")
    i.set_defaults(run=run_info)


def run_convert(args: argparse.Namespace) -> int:
    output = os.path.abspath(args.output)
    folder = os.path.dirname(output)
    if not os.path.isdir(folder):
        raise formats.Failure(f"output folder {folder} does not exist")
    formats.target_kind(output)
    if os.path.exists(output) and not args.force:
        raise formats.Failure(f"{output} exists (pass --force to replace it)")
    source_kind = formats.kind_of(args.source) if os.path.exists(args.source) else None
    source = formats.load(args.source, args.encoding if source_kind == "tiktoken" else None)
    written = formats.write_converted(source, output, args.encoding)
    for path in written:
        print(f"saved {path}")
    loader = f"tokenmill encode --tokenizer {shlex.quote(written[0])}"
    if written[0].endswith(".tiktoken"):
        name = source.to_tiktoken()[1]
        specials = [t["content"] for t in getattr(source, "config", {}).get("added_tokens", [])]
        if specials:
            print(
                f"note: a .tiktoken file stores no special tokens: {' '.join(specials)} "
                "became plain ranks",
                file=sys.stderr,
            )
        if name != formats.TIKTOKEN_DEFAULT and os.path.basename(written[0]) != f"{name}.tiktoken":
            loader += f" --encoding {name}"
    print(f"next: {loader} 'Hello world'")
    return 0


def run_info(args: argparse.Namespace) -> int:
    path = args.file or args.tokenizer
    tok = formats.load(path, args.encoding)
    rows = [("file", os.path.abspath(path)), *tok.info()]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key + ':':<{width + 1}} {value}")
    return 0
