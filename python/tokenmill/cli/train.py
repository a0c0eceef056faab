"""``tokenmill train``: every model type, its matched pipeline, a held-out compression report.

With no corpus, a byte-level BPE (GPT-2 style) is trained on the Python standard library's own
``.py`` sources, every 20th file held out to measure compression; with files, every 20th file
is held out when there are at least 100 (``BY_FILE`` times 20), else every 20th document (line,
JSON record, or file with ``--whole-file``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shlex
import sys
import sysconfig
import time
from collections.abc import Iterator, Sequence
from typing import Any, Dict, List, Optional, Tuple

from tokenmill import (
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from tokenmill._atomic import atomic_open
from tokenmill.cli import formats
from tokenmill.cli.formats import Failure
from tokenmill.sentencepiece import SentencePieceTrainer

MODELS = [
    "bytelevel-bpe",
    "bpe",
    "wordpiece",
    "unigram",
    "sentencepiece-bpe",
    "sentencepiece-unigram",
]
BPE_FAMILY = {"bytelevel-bpe", "bpe"}
SENTENCEPIECE = {"sentencepiece-bpe", "sentencepiece-unigram"}
UNIGRAMS = {"unigram", "sentencepiece-unigram"}
WITH_UNK = set(MODELS) - {"bytelevel-bpe"}

#: Option (its dest) → the model types it applies to; any other type rejects it.
APPLIES_TO: Dict[str, set] = {
    "min_frequency": BPE_FAMILY | {"wordpiece"},
    "limit_alphabet": BPE_FAMILY | {"wordpiece"},
    "initial_alphabet": {"bpe", "wordpiece", "unigram"},
    "prefix": {"bpe", "wordpiece"},
    "suffix": {"bpe"},
    "unk_token": WITH_UNK,
    "max_token_length": set(MODELS) - {"wordpiece"},
    "shrinking_factor": UNIGRAMS,
    "n_sub_iterations": UNIGRAMS,
    "seed_size": UNIGRAMS,
    "character_coverage": SENTENCEPIECE,
    "byte_fallback": SENTENCEPIECE,
    "max_sentence_length": SENTENCEPIECE,
    "split_digits": SENTENCEPIECE,
    "input_sentence_size": SENTENCEPIECE,
    "sp_option": SENTENCEPIECE,
}

#: The normalizers a model type can take, its default first.
NORMALIZERS = {
    "bytelevel-bpe": ["none", "nfc", "nfd", "nfkc", "nfkd", "bert"],
    "bpe": ["nfc", "none", "nfd", "nfkc", "nfkd", "bert"],
    "wordpiece": ["bert", "none", "nfc", "nfd", "nfkc", "nfkd"],
    "unigram": ["nfkc", "none", "nfc", "nfd", "nfkd", "bert"],
    "sentencepiece-bpe": ["nmt_nfkc", "nfkc", "none"],
    "sentencepiece-unigram": ["nmt_nfkc", "nfkc", "none"],
}
DEFAULT_UNK = {"wordpiece": "[UNK]"}
DEFAULT_SPECIALS = {"wordpiece": "[PAD],[UNK],[CLS],[SEP],[MASK]"}
HELD_OUT_EVERY = 20
BY_FILE = 5  # hold out whole files when there are at least BY_FILE * HELD_OUT_EVERY of them


def add_arguments(t: argparse.ArgumentParser, checks) -> None:
    positive, non_negative, fraction = checks.positive, checks.non_negative, checks.fraction
    t.add_argument(
        "files",
        nargs="*",
        help="training files or globs (.txt: a document per line; .jsonl: see --field; - for "
        "stdin); none: the Python standard library's .py files",
    )
    t.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="file to write (default: tokenizer.json; tokenizer.model for sentencepiece-*)",
    )
    t.add_argument(
        "--model",
        choices=MODELS,
        default="bytelevel-bpe",
        metavar="TYPE",
        help=f"model type: {', '.join(MODELS)}",
    )
    t.add_argument(
        "--vocab-size", type=positive, metavar="N", default=32000, help="vocabulary size"
    )
    t.add_argument(
        "--min-frequency",
        type=non_negative,
        metavar="N",
        help="least count of a pair to merge (default: 2; BPE and WordPiece)",
    )
    t.add_argument(
        "--special-tokens",
        metavar="T1,T2",
        help="comma-separated special tokens, given the first ids (default: none; "
        f"{DEFAULT_SPECIALS['wordpiece']} for wordpiece; sentencepiece: user-defined symbols)",
    )
    t.add_argument(
        "--unk-token",
        metavar="TOKEN",
        help="unknown token (default: <unk>; [UNK] for wordpiece; no bytelevel-bpe)",
    )
    t.add_argument(
        "--limit-alphabet",
        type=non_negative,
        metavar="N",
        help="most initial characters kept (BPE, WordPiece)",
    )
    t.add_argument(
        "--initial-alphabet",
        metavar="CHARS",
        help="characters always in the vocabulary (bpe, wordpiece, unigram)",
    )
    t.add_argument(
        "--prefix", help="continuing-subword prefix (bpe; wordpiece, whose default is ##)"
    )
    t.add_argument("--suffix", help="end-of-word suffix, e.g. </w> (bpe)")
    t.add_argument(
        "--max-token-length",
        type=positive,
        metavar="N",
        help="longest token in characters (default: none for BPE; 16 for Unigram and "
        "SentencePiece)",
    )
    t.add_argument(
        "--normalizer",
        choices=sorted({n for names in NORMALIZERS.values() for n in names}),
        metavar="NAME",
        help="text normalization: none, nfc, nfd, nfkc, nfkd or bert; for sentencepiece-*: "
        "nmt_nfkc, nfkc or none (default: none for bytelevel-bpe, nfc for bpe, bert for "
        "wordpiece, nfkc for unigram, nmt_nfkc for sentencepiece-*)",
    )
    t.add_argument("--lowercase", action="store_true", help="lowercase the text first")
    t.add_argument(
        "--shrinking-factor",
        type=fraction,
        metavar="X",
        help="share of pieces kept at each pruning step (default: 0.75; unigram types)",
    )
    t.add_argument(
        "--n-sub-iterations",
        type=positive,
        metavar="N",
        help="EM steps per pruning step (default: 2; unigram)",
    )
    t.add_argument(
        "--seed-size",
        type=positive,
        metavar="N",
        help="size of the seed vocabulary (default: 1000000; unigram)",
    )
    t.add_argument(
        "--character-coverage",
        type=fraction,
        metavar="X",
        help="share of characters covered (default: 0.9995; sentencepiece-*)",
    )
    t.add_argument(
        "--byte-fallback",
        action="store_true",
        help="unknown characters as byte pieces (sentencepiece-*)",
    )
    t.add_argument(
        "--max-sentence-length",
        type=positive,
        metavar="N",
        help="longer sentences (bytes) are skipped (default: 4192; sentencepiece-*)",
    )
    t.add_argument(
        "--split-digits", action="store_true", help="one digit per piece (sentencepiece-*)"
    )
    t.add_argument(
        "--input-sentence-size",
        type=non_negative,
        metavar="N",
        help="sentences sampled for training, 0: all (default: 0; sentencepiece-*)",
    )
    t.add_argument(
        "--sp-option",
        action="append",
        metavar="KEY=VALUE",
        help="any other SentencePiece trainer option, e.g. --sp-option split_by_number=false "
        "(repeatable; sentencepiece-*)",
    )
    t.add_argument(
        "--threads", type=positive, metavar="N", help="training threads (default: one per core)"
    )
    t.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        help="progress bar (default: when stderr is a terminal)",
    )
    t.add_argument("--field", default="text", help="the string field of .jsonl records")
    t.add_argument("--whole-file", action="store_true", help="each file (or stdin) is one document")
    t.add_argument(
        "--held-out-every",
        type=non_negative,
        default=HELD_OUT_EVERY,
        metavar="N",
        help="hold out every N-th file (with 5N files or more; else every N-th document) to "
        "measure compression; 0: train on everything",
    )
    t.add_argument(
        "--compare",
        nargs="+",
        action="extend",
        metavar="FILE",
        default=[],
        help="reference tokenizers to compare on the held-out text (tokenizer.json, .model, "
        ".tiktoken, vocab.txt, vocab.json)",
    )
    t.set_defaults(run=run)


# ---- checks before any work ----------------------------------------------------------------


def check(args: argparse.Namespace, usage) -> None:
    """Rejects options the model type does not take and fills in the per-type defaults;
    ``usage(message)`` reports a usage error."""
    model = args.model
    for dest, types in APPLIES_TO.items():
        value = getattr(args, dest)
        if value not in (None, False) and model not in types:
            option = "--" + dest.replace("_", "-")
            usage(f"{option} does not apply to {model} (only to {', '.join(sorted(types))})")
    normalizers = NORMALIZERS[model]
    if args.normalizer is None:
        args.normalizer = normalizers[0]
    elif args.normalizer not in normalizers:
        usage(
            f"--normalizer {args.normalizer} does not apply to {model} "
            f"(one of {', '.join(normalizers)})"
        )
    if args.lowercase and model in SENTENCEPIECE and args.normalizer == "none":
        usage("--lowercase with sentencepiece needs --normalizer nfkc or nmt_nfkc")
    if model == "wordpiece" and args.prefix is None:
        args.prefix = "##"
    if model in ("bpe", "wordpiece") and args.prefix == "":
        usage("--prefix must not be empty")
    if args.unk_token is None and model in WITH_UNK:
        args.unk_token = DEFAULT_UNK.get(model, "<unk>")
    if args.min_frequency is None and model in APPLIES_TO["min_frequency"]:
        args.min_frequency = 2
    specials = args.special_tokens
    if specials is None:
        specials = DEFAULT_SPECIALS.get(model, "")
    args.special_tokens = [t for t in specials.split(",") if t]
    for option in args.sp_option or []:
        if "=" not in option:
            usage(f"--sp-option {option!r}: expected KEY=VALUE")
    output = args.output or ("tokenizer.model" if model in SENTENCEPIECE else "tokenizer.json")
    if model in SENTENCEPIECE and not output.endswith(".model"):
        usage(f"-o {output}: {model} writes a SentencePiece .model file (name it *.model)")
    if model not in SENTENCEPIECE and not output.endswith(".json"):
        usage(
            f"-o {output}: {model} writes tokenizer.json (tokenmill convert writes other formats)"
        )
    args.output = os.path.abspath(output)
    folder = os.path.dirname(args.output)
    if os.path.isdir(args.output):
        raise Failure(f"{args.output} is a folder; name the file to write")
    if not os.path.isdir(folder):
        raise Failure(f"output folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise Failure(f"output folder {folder} is not writable")


def stdlib_files() -> List[str]:
    """The standard library's ``.py`` files in a deterministic order (corpora MANIFEST, section
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


def _is_utf8(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.read().decode("utf-8")
        return True
    except (UnicodeDecodeError, OSError):
        return False


def expand_inputs(patterns: Sequence[str]) -> List[str]:
    """Files named by paths or globs (``-`` stays as stdin), each checked readable."""
    out: List[str] = []
    for p in patterns:
        if p == "-":
            out.append(p)
            continue
        matches = sorted(glob.glob(p, recursive=True)) if glob.has_magic(p) else [p]
        matches = [m for m in matches if os.path.isfile(m) or m == p]
        if not matches:
            raise Failure(f"no file matches {p!r}")
        for m in matches:
            if os.path.isdir(m):
                raise Failure(f"{m} is a folder (give its files, e.g. '{m}/**/*.txt')")
            with open(m, "rb"):  # FileNotFoundError / PermissionError name the file
                pass
        out += matches
    return out


# ---- the corpus ---------------------------------------------------------------------------


class Corpus:
    """Training documents and the held-out texts, split deterministically."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.field, self.whole_file, every = args.field, args.whole_file, args.held_out_every
        self.held_out: List[str] = []
        if args.files:
            files = expand_inputs(args.files)
            self.description = ", ".join(files) if len(files) <= 3 else f"{len(files)} files"
        else:
            files = [f for f in stdlib_files() if _is_utf8(f)]
            self.description = f"the Python standard library ({len(files)} .py files)"
        self.by_file = bool(every) and len(files) >= BY_FILE * every and "-" not in files
        if self.by_file:
            self.files = [f for i, f in enumerate(files) if i % every != every - 1]
            held = [f for i, f in enumerate(files) if i % every == every - 1]
            self.held_out = list(documents(held, self.field, whole_file=True))
            self.unit = f"{len(held)} held-out files"
        else:
            self.files = files
            self.unit = ""
        self.every = 0 if self.by_file else every
        self.plain = (
            not self.every
            and not self.whole_file
            and all(f != "-" and not f.endswith(".jsonl") for f in self.files)
        )

    def documents(self) -> Iterator[str]:
        """The training documents; every ``every``-th goes to ``held_out`` instead."""
        for i, doc in enumerate(documents(self.files, self.field, self.whole_file)):
            if self.every and i % self.every == self.every - 1:
                self.held_out.append(doc)
            else:
                yield doc


def documents(inputs: Sequence[str], field: str, whole_file: bool) -> Iterator[str]:
    """The documents of ``inputs``: lines (with their ends) of text files, or whole files; the
    ``field`` of each JSON line of ``.jsonl`` files; stdin for ``-``."""
    for path in inputs:
        if path == "-":
            yield from (sys.stdin.read(),) if whole_file else sys.stdin
        elif path.endswith(".jsonl"):
            yield from jsonl_field(path, field)
        else:
            with open(path, "rb") as f:
                if whole_file:
                    yield utf8(path, f.read())
                else:
                    yield from (utf8(path, line, n) for n, line in enumerate(f, 1))


def utf8(path: str, data: bytes, line: Optional[int] = None) -> str:
    """``data`` (read from ``path``, at ``line`` if given) decoded; an error names the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = line if line is not None else data[: e.start].count(b"\n") + 1
        raise Failure(f"{path}: line {line} is not UTF-8 ({e.reason})") from None


def jsonl_field(path: str, field: str) -> Iterator[str]:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)[field]
            except (ValueError, KeyError, TypeError) as e:
                raise Failure(f"{path}:{number}: no string field {field!r} ({e})") from None
            if not isinstance(value, str):
                raise Failure(f"{path}:{number}: field {field!r} is not a string")
            yield value


# ---- the pipelines ------------------------------------------------------------------------


def hf_normalizers(name: str, lowercase: bool) -> list:
    """The normalizer steps of ``--normalizer`` and ``--lowercase``."""
    if name == "bert":
        return [normalizers.BertNormalizer(lowercase=lowercase, strip_accents=False)]
    steps = [] if name == "none" else [getattr(normalizers, name.upper())()]
    return steps + [normalizers.Lowercase()] if lowercase else steps


def spaces_as_metaspace(tok, normalizer_steps: list, decoder_steps: list) -> None:
    """Spaces become ▁ and start the words, as in SentencePiece. One ▁ is always prepended (a
    normalizer step) and exactly one leading space is stripped when decoding, so decode gives
    back every space (Metaspace's own prepending skips a text that starts with a space)."""
    normalizer_steps.append(normalizers.Prepend("▁"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="never")
    tok.decoder = decoders.Sequence(
        [
            *decoder_steps,
            decoders.Replace("▁", " "),
            decoders.Fuse(),
            decoders.Strip(content=" ", left=1, right=0),
        ]
    )


def hf_tokenizer(args: argparse.Namespace) -> Tuple[Any, Any]:
    """An untrained Tokenizer with the pipeline matched to ``args.model``, and its trainer."""

    model, special = args.model, list(args.special_tokens)
    normalizer = hf_normalizers(args.normalizer, args.lowercase)
    if args.unk_token is not None and args.unk_token not in special:
        special.insert(0, args.unk_token)
    common: Dict[str, Any] = dict(
        vocab_size=args.vocab_size, show_progress=args.progress, special_tokens=special
    )
    alphabet = sorted(set(args.initial_alphabet)) if args.initial_alphabet else None
    if model in BPE_FAMILY or model == "wordpiece":
        common.update(min_frequency=args.min_frequency, limit_alphabet=args.limit_alphabet)
    if model == "bytelevel-bpe":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        trainer = trainers.BpeTrainer(
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            max_token_length=args.max_token_length,
            **common,
        )
    elif model == "bpe":
        tok = Tokenizer(
            models.BPE(
                unk_token=args.unk_token,
                continuing_subword_prefix=args.prefix,
                end_of_word_suffix=args.suffix,
            )
        )
        steps = []
        if args.prefix:
            steps.append(decoders.Replace(Regex("^" + re.escape(args.prefix)), ""))
        if args.suffix:
            steps.append(decoders.Replace(Regex(re.escape(args.suffix) + "$"), ""))
        spaces_as_metaspace(tok, normalizer, steps)
        trainer = trainers.BpeTrainer(
            initial_alphabet=alphabet,
            continuing_subword_prefix=args.prefix,
            end_of_word_suffix=args.suffix,
            max_token_length=args.max_token_length,
            **common,
        )
    elif model == "wordpiece":
        tok = Tokenizer(
            models.WordPiece(unk_token=args.unk_token, continuing_subword_prefix=args.prefix)
        )
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix=args.prefix)
        trainer = trainers.WordPieceTrainer(
            initial_alphabet=alphabet, continuing_subword_prefix=args.prefix, **common
        )
    else:  # unigram
        tok = Tokenizer(models.Unigram())
        spaces_as_metaspace(tok, normalizer, [])
        options = dict(unk_token=args.unk_token, initial_alphabet=alphabet)
        options.update(unigram_options(args, "tokenizers"))
        trainer = trainers.UnigramTrainer(
            **common, **{k: v for k, v in options.items() if v is not None}
        )
    if normalizer:
        tok.normalizer = normalizer[0] if len(normalizer) == 1 else normalizers.Sequence(normalizer)
    return tok, trainer


# The Unigram options both trainers take: the CLI's name, then tokenizers' and sentencepiece's.
UNIGRAM_OPTIONS = [
    ("shrinking_factor", "shrinking_factor", "shrinking_factor"),
    ("max_token_length", "max_piece_length", "max_sentencepiece_length"),
    ("n_sub_iterations", "n_sub_iterations", "num_sub_iterations"),
    ("seed_size", "seed_size", "seed_sentencepiece_size"),
]


def unigram_options(args: argparse.Namespace, library: str) -> Dict[str, Any]:
    """The Unigram options given on the command line, under ``library``'s names."""
    column = 1 if library == "tokenizers" else 2
    return {names[column]: getattr(args, names[0]) for names in UNIGRAM_OPTIONS}


def bert_post_processor(tok) -> None:
    """[CLS] A [SEP] (and B [SEP]) when both tokens are in the trained vocabulary."""
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls is not None and sep is not None:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS]:0 $A:0 [SEP]:0",
            pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
        )


def train_hf(args: argparse.Namespace, corpus: Corpus) -> None:
    tok, trainer = hf_tokenizer(args)
    if corpus.plain:
        tok.train(corpus.files, trainer)
    else:
        tok.train_from_iterator(corpus.documents(), trainer)
    if args.model == "wordpiece":
        bert_post_processor(tok)
    text = tok.to_str(pretty=True)
    with atomic_open(args.output, "w", encoding="utf-8") as f:
        f.write(text)


def train_sentencepiece(args: argparse.Namespace, corpus: Corpus) -> None:
    rule = args.normalizer if args.normalizer != "none" else "identity"
    if args.lowercase:
        rule += "_cf"
    options: Dict[str, Any] = dict(
        model_prefix=args.output[: -len(".model")],
        model_type=args.model.split("-")[1],
        vocab_size=args.vocab_size,
        normalization_rule_name=rule,
        unk_piece=args.unk_token,
        byte_fallback=args.byte_fallback,
        split_digits=args.split_digits,
        character_coverage=args.character_coverage,
        max_sentence_length=args.max_sentence_length,
        input_sentence_size=args.input_sentence_size,
        num_threads=args.threads,
        **unigram_options(args, "sentencepiece"),
    )
    if args.special_tokens:
        options["user_defined_symbols"] = args.special_tokens
    options = {k: v for k, v in options.items() if v is not None}
    options.update(o.split("=", 1) for o in args.sp_option or [])
    if corpus.plain:
        options["input"] = corpus.files
    else:
        options["sentence_iterator"] = (
            line for doc in corpus.documents() for line in doc.splitlines() if line.strip()
        )
    SentencePieceTrainer.train(**options)


# ---- the report ---------------------------------------------------------------------------


def report(trained: formats.Loaded, references: List[formats.Loaded], held_out: List[str]):
    n_bytes = sum(len(t.encode("utf-8")) for t in held_out)
    rows = []
    for name, tok in [("this tokenizer", trained)] + [(r.path, r) for r in references]:
        n_tokens = sum(len(ids) for ids in tok.encode(held_out, add_special_tokens=False))
        rows.append((name, tok.vocab_size(), n_tokens, n_bytes / n_tokens if n_tokens else 0.0))
    width = max(len(r[0]) for r in rows)
    lines = [f"  {'tokenizer':<{width}}  {'vocab':>7}  {'tokens':>10}  bytes/token"]
    lines += [f"  {n:<{width}}  {v:>7}  {t:>10}  {b:>11.3f}" for n, v, t, b in rows]
    return n_bytes, lines


def run(args: argparse.Namespace) -> int:
    if args.progress is None:
        args.progress = sys.stderr.isatty()
    if args.threads:
        os.environ["TOKENMILL_NUM_THREADS"] = str(args.threads)
    references = [formats.load(path) for path in args.compare]
    corpus = Corpus(args)
    print(
        f"Training {args.model} (vocab_size={args.vocab_size}) on {corpus.description}",
        flush=True,
    )
    start = time.perf_counter()
    if args.model in SENTENCEPIECE:
        train_sentencepiece(args, corpus)
    else:
        train_hf(args, corpus)
    elapsed = time.perf_counter() - start
    trained = formats.load(args.output)
    print(f"vocabulary size: {trained.vocab_size()}")
    print(f"training time: {elapsed:.2f} s")
    if corpus.held_out:
        n_bytes, table = report(trained, references, corpus.held_out)
        unit = corpus.unit or f"{len(corpus.held_out)} held-out documents"
        print(f"held-out compression ({unit}, {n_bytes} bytes; more bytes per token is better):")
        print("\n".join(table))
    elif references:
        print("no held-out text (--held-out-every 0): nothing to compare on")
    print(f"saved {args.output}")
    print(f"next: tokenmill encode --tokenizer {shlex.quote(args.output)} 'Hello world'")
    return 0
