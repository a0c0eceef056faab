"""The ``tokenmill`` command line: train a tokenizer, encode and decode with a saved one.

``tokenmill train`` with no corpus trains a byte-level BPE (GPT-2 style) on the Python standard
library's own ``.py`` sources, holding out every 20th file to measure compression; with arguments
it trains on the given files (globs, ``.txt``, ``.jsonl`` with ``--field``, ``-`` for stdin).
``tokenmill encode`` / ``tokenmill decode`` use a saved ``tokenizer.json``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import sysconfig
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import List, Optional, Tuple

HELD_OUT_EVERY = 20  # every 20th stdlib file (5%) is held out to measure compression


def stdlib_files() -> List[str]:
    """The standard library's ``.py`` files, in a deterministic order (corpora MANIFEST, section
    5)."""
    root = sysconfig.get_paths()["stdlib"]
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(
            x for x in dirs if x not in ("site-packages", "dist-packages", "__pycache__")
        )
        files += [os.path.join(d, f) for f in names if f.endswith(".py")]
    files.sort(key=lambda p: os.path.relpath(p, root))
    return files


def is_utf8(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.read().decode("utf-8")
        return True
    except (UnicodeDecodeError, OSError):
        return False


def split_held_out(files: Sequence[str]) -> Tuple[List[str], List[str]]:
    """(training files, held-out files): every ``HELD_OUT_EVERY``-th file is held out."""
    train = [f for i, f in enumerate(files) if i % HELD_OUT_EVERY != HELD_OUT_EVERY - 1]
    held = [f for i, f in enumerate(files) if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1]
    return train, held


def expand_inputs(patterns: Sequence[str]) -> List[str]:
    """Files named by paths or globs (``-`` stays as stdin); fails on a pattern matching nothing."""
    out: List[str] = []
    for p in patterns:
        if p == "-":
            out.append(p)
            continue
        matches = sorted(glob.glob(p, recursive=True)) if glob.has_magic(p) else [p]
        matches = [m for m in matches if os.path.isfile(m) or m == p]
        if not matches:
            raise SystemExit(f"tokenmill: no file matches {p!r}")
        out += matches
    return out


def documents(inputs: Sequence[str], field: Optional[str], whole_file: bool) -> Iterator[str]:
    """The training documents of `inputs`: lines (with their ends) of text files, or whole files,
    the `field` of each JSON line of ``.jsonl`` files, lines of stdin for ``-``."""
    for path in inputs:
        if path == "-":
            yield from (sys.stdin.read(),) if whole_file else sys.stdin
        elif path.endswith(".jsonl"):
            yield from jsonl_field(path, field or "text")
        else:
            with open(path, encoding="utf-8", newline="") as f:
                if whole_file:
                    yield f.read()
                else:
                    yield from f


def jsonl_field(path: str, field: str) -> Iterator[str]:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)[field]
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(
                    f"tokenmill: {path}:{number}: no string field {field!r} ({e})"
                ) from None
            if not isinstance(value, str):
                raise SystemExit(f"tokenmill: {path}:{number}: field {field!r} is not a string")
            yield value


def build_tokenizer(args: argparse.Namespace):
    """An untrained Tokenizer and its trainer for the chosen model and options."""
    from tokenmill import Tokenizer, decoders, models, pre_tokenizers, trainers

    special = [t for t in (args.special_tokens or "").split(",") if t]
    options = dict(
        vocab_size=args.vocab_size,
        min_frequency=args.min_frequency,
        show_progress=not args.no_progress,
        special_tokens=special,
        limit_alphabet=args.limit_alphabet,
        continuing_subword_prefix=args.prefix,
        end_of_word_suffix=args.suffix,
        max_token_length=args.max_token_length,
    )
    if args.model == "bytelevel-bpe":
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), **options
        )
    else:
        unk = args.unk_token
        if unk not in special:
            options["special_tokens"] = [unk] + special
        tokenizer = Tokenizer(
            models.BPE(
                unk_token=unk, continuing_subword_prefix=args.prefix, end_of_word_suffix=args.suffix
            )
        )
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        if args.suffix:
            tokenizer.decoder = decoders.BPEDecoder(suffix=args.suffix)
        elif args.prefix:
            tokenizer.decoder = decoders.WordPiece(prefix=args.prefix)
        trainer = trainers.BpeTrainer(**options)
    return tokenizer, trainer


def bytes_per_token(tokenizer, files: Iterable[str]) -> Tuple[float, int, int]:
    """(bytes per token, bytes, tokens) of encoding `files` whole."""
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False))
    return (n_bytes / n_tokens if n_tokens else float("nan")), n_bytes, n_tokens


def cmd_train(args: argparse.Namespace) -> int:
    tokenizer, trainer = build_tokenizer(args)
    held_out: List[str] = []
    if not args.files:
        files = [f for f in stdlib_files() if is_utf8(f)]
        train_files, held_out = split_held_out(files)
        corpus = (
            f"the Python standard library ({len(train_files)} .py files; {len(held_out)} held out)"
        )
    else:
        train_files = expand_inputs(args.files)
        corpus = ", ".join(train_files) if len(train_files) <= 3 else f"{len(train_files)} files"
    print(
        f"Training {args.model} (vocab_size={args.vocab_size}, "
        f"min_frequency={args.min_frequency}) on {corpus}",
        file=sys.stderr,
    )
    start = time.perf_counter()
    plain = all(f != "-" and not f.endswith(".jsonl") for f in train_files) and not args.whole_file
    if plain:
        tokenizer.train(train_files, trainer)
    else:
        tokenizer.train_from_iterator(documents(train_files, args.field, args.whole_file), trainer)
    elapsed = time.perf_counter() - start
    tokenizer.save(args.output)
    print(f"vocabulary size: {tokenizer.get_vocab_size()}")
    print(f"training time: {elapsed:.2f} s")
    if held_out:
        bpt, n_bytes, n_tokens = bytes_per_token(tokenizer, held_out)
        print(
            f"compression: {bpt:.3f} bytes per token on {len(held_out)} held-out files ({n_bytes} "
            f"bytes -> {n_tokens} tokens)"
        )
    print(f"saved {args.output}")
    return 0


def load(path: str):
    from tokenmill import Tokenizer

    return Tokenizer.from_file(path)


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load(args.tokenizer)
    if args.file:
        with open(args.file, encoding="utf-8", newline="") as f:
            texts = [line.rstrip("\r\n") for line in f]
    elif args.text is not None:
        texts = [args.text]
    else:
        texts = [line.rstrip("\r\n") for line in sys.stdin]
    for encoding in tokenizer.encode_batch(texts, add_special_tokens=not args.no_special_tokens):
        if args.json:
            print(json.dumps({"ids": encoding.ids, "tokens": encoding.tokens}, ensure_ascii=False))
        else:
            print(" ".join(map(str, encoding.ids)))
    return 0


def parse_ids(text: str) -> List[int]:
    text = text.strip()
    if text.startswith("["):
        return [int(i) for i in json.loads(text)]
    if text.startswith("{"):
        return [int(i) for i in json.loads(text)["ids"]]
    return [int(i) for i in text.replace(",", " ").split()]


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load(args.tokenizer)
    try:
        batches = (
            [parse_ids(" ".join(args.ids))]
            if args.ids
            else [parse_ids(line) for line in sys.stdin if line.strip()]
        )
    except (ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"tokenmill: ids must be integers (as text or JSON): {e}") from None
    for ids in batches:
        print(tokenizer.decode(ids, skip_special_tokens=args.skip_special_tokens))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tokenmill", description="Train and run text tokenizers.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser(
        "train", help="train a tokenizer (default: byte-level BPE on the Python standard library)"
    )
    t.add_argument(
        "files",
        nargs="*",
        help=(
            "training files or globs (.txt: one document per line; .jsonl: see --field; "
            "- for stdin)"
        ),
    )
    t.add_argument(
        "-o",
        "--output",
        default="tokenizer.json",
        help="where to save the tokenizer (default: tokenizer.json)",
    )
    t.add_argument(
        "--model",
        choices=["bytelevel-bpe", "bpe"],
        default="bytelevel-bpe",
        help="byte-level BPE (GPT-2 style) or classic character BPE",
    )
    t.add_argument("--vocab-size", type=int, default=32000)
    t.add_argument("--min-frequency", type=int, default=2)
    t.add_argument(
        "--special-tokens",
        default=None,
        help="comma-separated special tokens (they get the first ids)",
    )
    t.add_argument("--limit-alphabet", type=int, default=None)
    t.add_argument("--prefix", default=None, help="continuing-subword prefix, e.g. ##")
    t.add_argument("--suffix", default=None, help="end-of-word suffix, e.g. </w>")
    t.add_argument("--max-token-length", type=int, default=None)
    t.add_argument("--unk-token", default="<unk>", help="unknown token of the classic BPE model")
    t.add_argument(
        "--field", default="text", help="the string field of .jsonl records (default: text)"
    )
    _add_flags(
        t,
        ("--whole-file", "each file (or stdin) is one document instead of one per line"),
        ("--no-progress", "no progress bar"),
    )
    t.set_defaults(run=cmd_train)

    e = sub.add_parser(
        "encode", help="encode text with a saved tokenizer (ids per line, or JSON lines)"
    )
    e.add_argument("-t", "--tokenizer", default="tokenizer.json")
    e.add_argument("text", nargs="?", help="the text (default: each line of stdin)")
    e.add_argument("--file", help="encode each line of this file")
    _add_flags(
        e,
        ("--json", 'print {"ids": [...], "tokens": [...]} per line'),
        ("--no-special-tokens", "do not add the post-processor's special tokens"),
    )
    e.set_defaults(run=cmd_encode)

    d = sub.add_parser("decode", help="decode ids with a saved tokenizer")
    d.add_argument("-t", "--tokenizer", default="tokenizer.json")
    d.add_argument(
        "ids", nargs="*", help="ids (default: one sequence per line of stdin, as text or JSON)"
    )
    _add_flags(d, ("--skip-special-tokens", None))
    d.set_defaults(run=cmd_decode)
    return p


def _add_flags(parser: argparse.ArgumentParser, *flags: Tuple[str, Optional[str]]) -> None:
    """Adds on/off options to ``parser``: each flag with its help text (or None)."""
    for flag, help_text in flags:
        parser.add_argument(flag, action="store_true", help=help_text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``tokenmill`` / ``python -m tokenmill``."""
    from tokenmill import TokenmillError

    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except TokenmillError as e:
        print(f"tokenmill: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tokenmill: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
