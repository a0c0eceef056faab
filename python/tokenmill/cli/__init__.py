"""The ``tokenmill`` command line (also ``python -m tokenmill``).

- ``tokenmill train``: trains any model type (byte-level BPE by default, on the Python standard
  library's sources when no corpus is given) and reports held-out compression, side by side
  with ``--compare`` reference tokenizers (:mod:`tokenmill.cli.train`).
- ``tokenmill encode`` / ``decode``: texts to ids and back (:mod:`tokenmill.cli.encode`).
- ``tokenmill encode-dataset``: a corpus into token files for language-model training
  (:mod:`tokenmill.cli.encode_dataset`, :mod:`tokenmill.data`).
- ``tokenmill convert`` / ``info``: between tokenizer.json, SentencePiece ``.model``,
  ``.tiktoken`` and vocab files, and what a file holds (:mod:`tokenmill.cli.convert`).
- ``tokenmill eval``: compares tokenizers on corpora and across languages, with a table, JSON
  and an HTML report (:mod:`tokenmill.cli.evaluate`).

Errors are one line, ``tokenmill <command>: error: ...``: exit status 2 for a usage error (an
unknown option also shows the command's usage and the nearest option), 1 for a failure. Built
on argparse (the standard library: no dependency for the CLI).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from typing import List, NoReturn, Optional, Sequence

from tokenmill.cli import convert, encode, encode_dataset, evaluate, train
from tokenmill.cli.formats import Failure
from tokenmill.cli.train import stdlib_files

__all__ = ["main", "parser", "stdlib_files"]


class UsageError(Exception):
    """A command line that cannot run (exit status 2)."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless it has none (or its help already says it)."""

    def _get_help_string(self, action: argparse.Action) -> Optional[str]:
        if action.default in (None, False, []) or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Reports errors as :class:`UsageError` (one line; main prints it), with a suggestion
    for a misspelled command."""

    def error(self, message: str) -> NoReturn:
        found = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if found:
            choices = [c.strip(" '") for c in found.group(3).split(",")]
            message = f"argument {found.group(1)}: invalid choice: {found.group(2)!r}"
            message += suggestion(found.group(2), choices) or f" (choose from {', '.join(choices)})"
        if message.endswith("required: COMMAND"):
            message += f" (run {self.prog} --help)"
        raise UsageError(f"{self.prog}: error: {message}")


def suggestion(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class Checks:
    """argparse ``type=`` functions: the value, or an error naming what was expected."""

    @staticmethod
    def positive(text: str) -> int:
        value = Checks._int(text)
        if value <= 0 or value >= 2**32:
            raise argparse.ArgumentTypeError(f"expected a positive integer below 2**32, got {text}")
        return value

    @staticmethod
    def non_negative(text: str) -> int:
        value = Checks._int(text)
        if value < 0 or value >= 2**32:
            raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**32-1, got {text}")
        return value

    @staticmethod
    def fraction(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0.0 < value <= 1.0:
            raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text}")
        return value

    @staticmethod
    def _int(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


EXAMPLES = {
    "train": "examples: tokenmill train; tokenmill train 'corpus/*.txt' --model unigram "
    "--vocab-size 8000 -o unigram.json --compare cl100k_base.tiktoken",
    "encode": "examples: tokenmill encode -t tokenizer.json 'Hello world'; "
    "tokenmill encode -t m.model --jsonl < docs.jsonl",
    "decode": "example: tokenmill encode -t tokenizer.json 'Hi' | tokenmill decode -t "
    "tokenizer.json",
    "encode-dataset": "examples: tokenmill encode-dataset 'data/*.jsonl.zst' -t tokenizer.json "
    "-o out/train --eos '<|endoftext|>'; tokenmill encode-dataset corpus.txt -t "
    "cl100k_base.tiktoken -o out/c --format parquet",
    "convert": "examples: tokenmill convert tokenizer.model tokenizer.json; "
    "tokenmill convert tokenizer.json out/vocab.json",
    "eval": "examples: tokenmill eval tokenizer.json cl100k_base --corpus 'texts/*.txt'; "
    "tokenmill eval gpt2.json m.model --udhr --html report.html",
}


def parser() -> Parser:
    """The ``tokenmill`` argument parser."""
    from tokenmill import __version__

    p = Parser(
        prog="tokenmill",
        description="Train, run, convert and inspect text tokenizers.",
        epilog="Run 'tokenmill COMMAND --help' for a command's options.",
    )
    p.add_argument("--version", action="version", version=f"tokenmill {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    commands = [
        ("train", "train a tokenizer and report its compression", train.add_arguments),
        ("encode", "encode texts to ids", encode.add_encode_arguments),
        ("decode", "decode ids to text", encode.add_decode_arguments),
        (
            "encode-dataset",
            "tokenize a corpus into token files for language-model training",
            encode_dataset.add_arguments,
        ),
        ("convert", "convert a tokenizer to another file format", convert.add_convert_arguments),
        ("info", "model type, vocabulary, special tokens and pipeline", convert.add_info_arguments),
        ("eval", "evaluate and compare tokenizers", evaluate.add_arguments),
    ]
    for name, summary, add in commands:
        command = sub.add_parser(
            name,
            help=summary,
            description=summary[0].upper() + summary[1:] + ".",
            epilog=EXAMPLES.get(name),
            formatter_class=HelpFormatter,
        )
        if name == "train":
            add(command, Checks)
        else:
            add(command)
    return p


def unknown_options(p: Parser, args: argparse.Namespace, extras: List[str]) -> str:
    """The error for arguments no option of the command takes, with the nearest option."""
    command = _subparser(p, args.command)
    known = [s for a in command._actions for s in a.option_strings]
    hints = [suggestion(x.split("=", 1)[0], known) for x in extras if x.startswith("-")]
    hint = next((h for h in hints if h), "")
    command.print_usage(sys.stderr)
    return f"{command.prog}: error: unrecognized arguments: {' '.join(extras)}{hint}"


def _subparser(p: Parser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def one_line(error: BaseException) -> str:
    """An exception as one line of text."""
    from tokenmill import TokenmillError

    if isinstance(error, OSError) and error.strerror and error.filename:
        text = f"{error.filename}: {error.strerror}"
    elif isinstance(error, Failure):
        text = str(error)
    elif isinstance(error, TokenmillError):
        text = f"{type(error).__name__}: {error}"
    else:
        text = f"{type(error).__name__}: {error}"
    return " ".join(text.split("\n")).strip()


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``tokenmill`` with ``argv`` (default: the process's arguments); the exit status."""
    from tokenmill import TokenmillError

    p = parser()
    command = "tokenmill"
    try:
        args, extras = p.parse_known_args(argv)
        command = f"tokenmill {args.command}"
        if extras:
            raise UsageError(unknown_options(p, args, extras))
        if args.command == "train":

            def usage(message: str) -> NoReturn:
                raise UsageError(f"{command}: error: {message}")

            train.check(args, usage)
        return args.run(args)
    except SystemExit as e:  # --help, --version
        return e.code if isinstance(e.code, int) else 0
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as other command-line tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130
    except (Failure, TokenmillError, OSError, ValueError, OverflowError, KeyError) as e:
        print(f"{command}: error: {one_line(e)}", file=sys.stderr)
        return 1
