"""Word tokenization: UD word-boundary F1 per language and throughput, tokenmill vs NLTK and spaCy.

    python bench/bench_words.py                # all UD test sets, 4 MB English throughput sample
    python bench/bench_words.py --mb 2 --langs en,de

F1 uses ``tokenmill.words.evaluate`` on every UD treebank under ``$TOKENMILL_SHARED/corpora/ud``
(default ../shared beside the repo) for: tokenmill ``WordTokenizer(lang)``, NLTK's
``TreebankWordTokenizer`` and ``NLTKWordTokenizer`` (their ``span_tokenize``), and spaCy's
blank-language tokenizer (``spacy.blank(lang)``, no model download). Throughput: one thread,
tokens with character offsets, on paragraphs of ``english_large``; tokenmill is timed on the
same paragraphs as the others (one call per paragraph) and on the whole sample in one call.
Times are process CPU time (``time.process_time``), the median of ``--repeat`` runs: on a shared
machine wall time measures the neighbours; every tokenizer here runs on one thread, so CPU time
is its single-thread cost. ``tokenize_spans`` (NumPy offsets, no Python object per token) is
timed on the whole sample too.
"""

from __future__ import annotations

import sys

from _common import (
    SHARED,
    PeerResults,
    Results,
    bench_parser,
    digest_of,
    mb_of,
    parse_args,
    peak_rss_mb,
    time_runs,
)
from tokenmill.words import WordTokenizer, evaluate

UD = {
    "en": ["UD_English-EWT"],
    "de": ["UD_German-GSD"],
    "fr": ["UD_French-GSD"],
    "pl": ["UD_Polish-PDB", "UD_Polish-LFG"],
    "ar": ["UD_Arabic-PUD"],
    "hi": ["UD_Hindi-PUD"],
    "zh": ["UD_Chinese-GSDSimp"],
    "ja": ["UD_Japanese-GSD"],
}


def nltk_tokenizers():
    from nltk.tokenize import NLTKWordTokenizer, TreebankWordTokenizer

    out = {}
    for name, tok in [
        ("nltk-treebank", TreebankWordTokenizer()),
        ("nltk-word", NLTKWordTokenizer()),
    ]:

        def spans(text, tok=tok):
            try:
                return [(text[s:e], s, e) for s, e in tok.span_tokenize(text)]
            except ValueError:  # span alignment fails on some inputs: fall back to strings
                return tok.tokenize(text)

        out[name] = spans
    return out


def spacy_tokenizer(lang):
    try:
        import spacy

        nlp = spacy.blank(lang)
    except Exception as e:  # a language whose blank pipeline needs extra packages
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"
    tok = nlp.tokenizer
    return (
        lambda text: [(t.text, t.idx, t.idx + len(t.text)) for t in tok(text) if not t.is_space]
    ), None


def f1_table(langs, peer_results):
    print("## UD word-boundary F1 (test sets)\n")
    header = ["treebank", "tokenmill", "nltk-treebank", "nltk-word", "spacy-blank"]
    rows = []
    print(
        "| treebank | tokenmill | nltk-treebank | nltk-word | spacy-blank "
        "| tokenmill - best other |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    nltk = nltk_tokenizers()
    for lang in langs:
        spacy_tok, spacy_err = spacy_tokenizer(lang)
        for tb in UD.get(lang, []):
            files = sorted((SHARED / "corpora" / "ud" / tb).glob("*.conllu"))
            if not files:
                continue
            ours = evaluate(WordTokenizer(lang), files).f1
            others = {name: evaluate(fn, files).f1 for name, fn in nltk.items()}
            others["spacy"] = evaluate(spacy_tok, files).f1 if spacy_tok else None
            best = max(v for v in others.values() if v is not None)
            cells = [
                f"{others[k]:.4f}" if others[k] is not None else f"n/a ({spacy_err})"
                for k in ("nltk-treebank", "nltk-word", "spacy")
            ]
            print(f"| {tb} | {ours:.4f} | {' | '.join(cells)} | {ours - best:+.4f} |")
            rows.append([tb, f"{ours:.4f}", *cells, f"{ours - best:+.4f}"])
    print()
    title = "UD word-boundary F1 (test sets)"
    peer_results.table(title, [*header, "tokenmill - best other"], rows)


def paragraphs(mb):
    path = SHARED / "corpora" / "english_large" / "gutenberg_en_large_part1.txt"
    data = path.read_bytes()[: int(mb * 1_000_000)]
    text = data[: data.rfind(b"\n") + 1].decode("utf-8", errors="replace")
    return text, [p for p in text.split("\n\n") if p.strip()]


REPEAT = 3


def throughput(fn, paras):
    """MB, median wall and CPU seconds of REPEAT runs of `fn` on every paragraph, and the
    number of tokens."""
    mb = sum(len(p.encode("utf-8")) + 2 for p in paras) / 1e6
    return (mb, *time_runs(lambda: sum(len(fn(p)) for p in paras), REPEAT))


def whole_text(fn, text):
    """As ``throughput``, with one call on the whole text."""
    return (mb_of(text), *time_runs(lambda: len(fn(text)), REPEAT))


def python_floor(tokenizer, text):
    """What CPython alone needs to build the whole sample's list of (token, start, end) tuples
    (fresh int objects, shared token strings) from lists made beforehand: the floor under any
    tokenizer that returns that list."""
    tokens = tokenizer.tokenize_with_offsets(text)
    words, starts, ends = [t[0] for t in tokens], [t[1] for t in tokens], [t[2] for t in tokens]

    def build(_text):
        import gc

        # the most favourable case: no collection at all (tokenmill untracks its tuples instead)
        gc.disable()
        try:
            return list(zip(words, [s + 0 for s in starts], [e + 0 for e in ends]))
        finally:
            gc.enable()

    return build


def speed_table(mb, peer_results):
    text, paras = paragraphs(mb)
    small = paras[: max(1, len(paras) * 1 // max(1, int(mb)))]  # ~1 MB for the slow tokenizers
    print("## English throughput (one thread, tokens with character offsets)\n")
    print(
        f"sample: {len(text.encode()) / 1e6:.1f} MB of english_large part 1 "
        f"({len(paras)} paragraphs); "
        f"NLTK and spaCy on the first {sum(len(p) for p in small) / 1e6:.1f} MB\n"
    )
    ours = WordTokenizer("en")
    rows = []
    rows.append(
        ("tokenmill (whole sample, one call)", *whole_text(ours.tokenize_with_offsets, text))
    )
    rows.append(("tokenmill (per paragraph)", *throughput(ours.tokenize_with_offsets, paras)))
    rows.append(
        (
            "tokenmill tokenize_spans (whole sample, NumPy)",
            *whole_text(lambda t: ours.tokenize_spans(t)[0], text),
        )
    )
    rows.append(
        (
            "CPython alone builds the same list from ready lists (about the floor)",
            *whole_text(python_floor(ours, text), text),
        )
    )
    rows.append(
        (
            "tokenmill PTB (per paragraph)",
            *throughput(WordTokenizer("en", penn_treebank=True).tokenize_with_offsets, paras),
        )
    )
    for name, fn in nltk_tokenizers().items():
        rows.append((name + " span_tokenize", *throughput(fn, small)))
    spacy_tok, err = spacy_tokenizer("en")
    if spacy_tok:
        rows.append(("spacy blank('en') tokenizer", *throughput(spacy_tok, small)))
    else:
        print(f"spaCy unavailable: {err}\n")
    ref = rows[1][1] / rows[1][3]
    print("| tokenizer | MB/s | tokens | tokenmill (per paragraph) speed-up |")
    print("|---|---:|---:|---:|")
    for name, size, _, cpu, n in rows:
        print(f"| {name} | {size / cpu:.2f} | {n} | {ref / (size / cpu):.1f}x |")
    print()
    # Recorded as cases: the per-paragraph rows against each other (throughput on their own
    # samples), the whole-sample rows against the CPython floor.
    cases = [
        ("whole sample, one call", "tokenmill"),
        ("per paragraph", "tokenmill"),
        ("tokenize_spans (NumPy offsets), whole sample", "tokenmill"),
        ("whole sample, one call", "CPython list-building floor"),
        ("PTB per paragraph", "tokenmill"),
    ] + [("per paragraph", name.split(" ")[0]) for name, *_ in rows[5:]]
    for (case, library), (_, size, wall, cpu, _) in zip(cases, rows):
        peer_results.add(case, library, wall, cpu, None, size)
    peer_results.note(
        f"English throughput, one thread, tokens with character offsets: {mb_of(text):.1f} MB of"
        " english_large part 1 for tokenmill, the first ~1 MB of it for NLTK and spaCy; medians"
        f" of {REPEAT} runs, all in one process (no per-library peak memory); the tokenizers"
        " differ by design (see the F1 table)"
    )


def tokenmill_only(mb, out):
    """--tokenmill-only: tokenmill's throughput rows (the same calls as the table's), to --json.
    The rows run in this process, so each one's peak is the process's peak so far."""
    text, paras = paragraphs(mb)
    ours, ptb = WordTokenizer("en"), WordTokenizer("en", penn_treebank=True)
    cases = {
        "whole sample": lambda: len(ours.tokenize_with_offsets(text)),
        "per paragraph": lambda: sum(len(ours.tokenize_with_offsets(p)) for p in paras),
        "tokenize_spans whole sample": lambda: len(ours.tokenize_spans(text)[0]),
        "PTB per paragraph": lambda: sum(len(ptb.tokenize_with_offsets(p)) for p in paras),
    }
    results = Results()
    for case, run in cases.items():
        wall, cpu, n = time_runs(run, REPEAT)
        results.add(case, wall, cpu, peak_rss_mb(), n)
    results.cases["whole sample"]["digest"] = digest_of(ours.tokenize_with_offsets(text))
    results.write(out)


def main(argv=None):
    ap = bench_parser(__doc__)
    ap.add_argument(
        "--langs",
        default=",".join(UD),
        help="comma-separated language codes (default: all UD sets)",
    )
    ap.add_argument(
        "--mb", type=float, default=4.0, help="English sample size for throughput, in MB"
    )
    ap.add_argument("--skip-f1", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs per throughput row (median)")
    args = parse_args(ap, argv)
    global REPEAT
    REPEAT = max(1, args.repeat)
    if not (SHARED / "corpora").exists():
        sys.exit(f"needs {SHARED}/corpora (set TOKENMILL_SHARED)")
    if args.tokenmill_only:
        tokenmill_only(args.mb, args.json)
        return
    peer_results = PeerResults("nltk", "spacy")
    if not args.skip_f1:
        f1_table([lang for lang in args.langs.split(",") if lang], peer_results)
    if not args.skip_speed:
        speed_table(args.mb, peer_results)
    peer_results.write(args.json)


if __name__ == "__main__":
    main()
