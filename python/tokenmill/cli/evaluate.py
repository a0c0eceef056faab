"""``tokenmill eval``: evaluate and compare tokenizers on corpora and across the languages of a
parallel text (:mod:`tokenmill.evaluate`); a table on stdout, JSON and a self-contained HTML
report on request."""

from __future__ import annotations

import argparse

from tokenmill.cli.formats import Failure


def add_arguments(e: argparse.ArgumentParser) -> None:
    e.add_argument(
        "tokenizers",
        nargs="+",
        metavar="TOKENIZER",
        help="tokenizer.json, .model, .tiktoken, vocab.txt, vocab.json, a model folder, or a "
        "tiktoken encoding name (cl100k_base, ...)",
    )
    e.add_argument(
        "--corpus",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="text files or globs, each a corpus (every non-empty line a document; .jsonl: "
        "the text field)",
    )
    e.add_argument("--language", default="en", help="language of the corpora, for what a word is")
    e.add_argument(
        "--udhr",
        nargs="?",
        const="udhr",
        metavar="FOLDER",
        help="parity across languages on the Universal Declaration of Human Rights (NLTK's "
        "udhr2 folder, $TOKENMILL_UDHR, or FOLDER: one <language>.txt per language)",
    )
    e.add_argument(
        "--languages",
        help="with --udhr: only these languages, comma-separated file names (eng,deu,cmn_hans)",
    )
    e.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    e.add_argument("--html", metavar="OUT", help="write the HTML report to OUT")
    e.add_argument(
        "--parity-rows",
        type=int,
        default=10,
        help="languages shown at each end of the parity table",
    )
    e.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tokenmill.evaluate import evaluate

    if not args.corpus and not args.udhr:
        raise Failure("nothing to evaluate on: give --corpus FILE..., --udhr, or both")
    languages = None
    if args.languages:
        if not args.udhr:
            raise Failure("--languages applies to --udhr")
        languages = [x.strip() for x in args.languages.split(",") if x.strip()]
    result = evaluate(
        args.tokenizers,
        corpora=args.corpus,
        parallel=args.udhr,
        languages=languages,
        language=args.language,
    )
    print(result.table(parity_rows=args.parity_rows))
    if args.json:
        result.save_json(args.json)
        print(f"saved {args.json}")
    if args.html:
        result.save_html(args.html)
        print(f"saved {args.html}")
    return 0
