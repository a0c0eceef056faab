"""``tokenmill encode`` and ``tokenmill decode``: texts to ids and back, with any tokenizer file
the CLI reads. Input comes from the arguments, from files (one item per line) or from stdin;
``--jsonl`` reads and writes JSON lines."""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, List

from tokenmill.cli import formats
from tokenmill.cli.formats import Failure

BATCH = 1000  # lines encoded per batch (stdin streams through in batches)


def add_tokenizer_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--tokenizer",
        default="tokenizer.json",
        help="tokenizer file: tokenizer.json, .model, .tiktoken, vocab.txt, vocab.json, or a "
        "model folder",
    )
    p.add_argument(
        "--encoding",
        help="tiktoken encoding whose split pattern and special tokens a .tiktoken file uses "
        "(default: from its name, else r50k_base)",
    )


def add_input_arguments(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--file",
        action="append",
        default=[],
        help=f"read {what} from this file, one per line (repeatable; - for stdin)",
    )
    p.add_argument(
        "--jsonl",
        action="store_true",
        help="JSON lines in (files and stdin) and out",
    )


def add_encode_arguments(e: argparse.ArgumentParser) -> None:
    add_tokenizer_arguments(e)
    e.add_argument("text", nargs="*", help="texts to encode (default: each line of stdin)")
    add_input_arguments(e, "texts")
    e.add_argument(
        "--field", default="text", help="with --jsonl: the field of JSON objects holding the text"
    )
    e.add_argument("--tokens", action="store_true", help="print the tokens instead of the ids")
    e.add_argument(
        "--no-special-tokens",
        action="store_true",
        help="do not add the post-processor's special tokens",
    )
    e.set_defaults(run=run_encode)


def add_decode_arguments(d: argparse.ArgumentParser) -> None:
    add_tokenizer_arguments(d)
    d.add_argument("ids", nargs="*", help="one sequence of ids (default: one per line of stdin)")
    add_input_arguments(d, 'id sequences (as text, a JSON list, or {"ids": [...]})')
    d.add_argument("--skip-special-tokens", action="store_true", help="leave special tokens out")
    d.set_defaults(run=run_decode)


def input_lines(files: List[str]) -> Iterator[tuple]:
    """(where, line without its end) of each line of ``files`` (stdin for ``-`` or none)."""
    for path in files or ["-"]:
        if path == "-":
            yield from (
                ("<stdin>:" + str(n), line.rstrip("\r\n")) for n, line in enumerate(sys.stdin, 1)
            )
            continue
        with open(path, encoding="utf-8", newline="") as f:
            for n, line in enumerate(f, 1):
                yield f"{path}:{n}", line.rstrip("\r\n")


def parse_json(where: str, line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError as e:
        raise Failure(f"{where}: not a JSON line ({e})") from None


def texts_of(args: argparse.Namespace) -> Iterator[str]:
    if args.text:
        yield from args.text
        return
    for where, line in input_lines(args.file):
        if not args.jsonl:
            yield line
            continue
        if not line.strip():
            continue
        value = parse_json(where, line)
        if isinstance(value, dict):
            value = value.get(args.field)
        if not isinstance(value, str):
            raise Failure(
                f"{where}: expected a JSON string or an object with a string {args.field!r}"
            )
        yield value


def batches(items: Iterable[Any]) -> Iterator[List[Any]]:
    it = iter(items)
    while True:
        chunk = list(itertools.islice(it, BATCH))
        if not chunk:
            return
        yield chunk


def run_encode(args: argparse.Namespace) -> int:
    tok = formats.load(args.tokenizer, args.encoding)
    out = sys.stdout
    for chunk in batches(texts_of(args)):
        for ids in tok.encode(chunk, add_special_tokens=not args.no_special_tokens):
            if args.jsonl:
                record = {"ids": ids, "tokens": tok.tokens(ids)}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            elif args.tokens:
                out.write(" ".join(tok.tokens(ids)) + "\n")
            else:
                out.write(" ".join(map(str, ids)) + "\n")
    return 0


def parse_ids(where: str, text: str, jsonl: bool) -> List[int]:
    """The ids of one line: ``1 2 3``, ``1,2,3``, ``[1, 2, 3]`` or ``{"ids": [1, 2, 3]}``."""
    text = text.strip()
    if jsonl or text[:1] in "[{":
        value = parse_json(where, text)
        if isinstance(value, dict):
            value = value.get("ids")
        items = value if isinstance(value, list) else None
    else:
        items = text.replace(",", " ").split()
    try:
        if items is None:
            raise ValueError
        ids = [int(i) if not isinstance(i, (bool, float)) else int("x") for i in items]
    except (ValueError, TypeError):
        raise Failure(
            f'{where}: ids must be integers (as text, a JSON list or {{"ids": [...]}})'
        ) from None
    return ids


def run_decode(args: argparse.Namespace) -> int:
    tok = formats.load(args.tokenizer, args.encoding)
    if args.ids:
        sequences: Iterable[List[int]] = [parse_ids("arguments", " ".join(args.ids), False)]
    else:
        sequences = (
            parse_ids(where, line, args.jsonl)
            for where, line in input_lines(args.file)
            if line.strip()
        )
    for ids in sequences:
        tok.check_ids(ids)
        text = tok.decode(ids, skip_special_tokens=args.skip_special_tokens)
        if args.jsonl:
            sys.stdout.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
        else:
            sys.stdout.write(text + "\n")
    return 0
