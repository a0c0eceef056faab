"""Adversarial input: does the cost per MB stay flat from 100 kB to 10 MB? tokenmill vs its peers.

    python bench/bench_adversarial.py [--quick] [--encoders a,b] [--kinds a,b] [--sizes 0.1,1,10]
                                      [--rounds 3] [--timeout 30] [--no-peers] [--skip-loaders]
                                      [--markdown bench/RESULTS.md]

Every encoder -- byte-level BPE with each pretrained pattern (GPT-2 / r50k, cl100k, o200k through
``tokenmill.tiktoken``; GPT-2 through ``Tokenizer``), BERT WordPiece (``BertWordPieceTokenizer``,
bert_base_uncased), SentencePiece BPE (Mistral v1) and Unigram (botchan) from their ``.model``
files, that Unigram model in a ``Tokenizer`` (``tokenmill.sentencepiece.to_tokenizer``), the word
tokenizer (``tokenmill.words``, ``tokenize_spans``) and the Chinese segmenter (``cut``) -- encodes
every kind of hostile text (``KINDS``: one repeated letter, runs of each kind of whitespace,
digits, one random-letter "word", CJK without spaces, emoji ZWJ sequences, combining marks,
punctuation, alternating character classes, random Unicode, random Latin-1 bytes) at 100 kB, 1 MB
and 10 MB of UTF-8 (seeded generators: the same text in every run and library), as one call.
The peer runs the same call on the same text: tiktoken for the tiktoken encodings, tokenizers for
the ``Tokenizer`` pipelines, sentencepiece for the ``.model`` files (none for the word tokenizer
and the segmenter); the ids are compared (``same``, ``DIFF``).

Each library runs in a worker process per encoder, which builds the text and times the call (CPU
seconds, ``time.process_time``; the machine may be shared); rounds are interleaved (tokenmill,
peer, then peer, tokenmill...) and the median of ``--rounds`` counts (one round for a cell whose
first call takes over 10 s). Every call is made on a freshly built encoder (outside the timing),
so that no word cache holds the text from an earlier round; a call faster than 20 ms is repeated
(on the same encoder) until 20 ms add up, and averaged. A call that takes longer than
``--timeout`` seconds is killed and shown as ``> Ns``, and the library's larger sizes of that
input are then not tried (also ``>``).
Peak memory is the growth of the worker's peak resident set during the call (``VmHWM`` reset
before it through ``/proc/self/clear_refs``; Linux), beyond the text itself.

The table: per encoder and input, each library's milliseconds per MB at each size and
``growth``, its cost per MB at the largest size over that at the smallest (1.0 is linear; the
goal for tokenmill is at most 1.5). ``--quick`` runs 100 kB and 1 MB only.

Loaders (unless ``--skip-loaders``): a tokenizer.json whose one long entry has 10k, 100k and 1M
characters -- a WordPiece vocabulary entry, a BPE vocabulary entry, a Unigram piece, an added
token -- and a tiktoken encoding with one long token, loaded by tokenmill and its peer
(``Tokenizer.from_str``, ``tiktoken.Encoding``); milliseconds per MB of the long entry and its
growth from 10k to 1M characters.

``--markdown FILE`` rewrites the ``adversarial`` section of FILE (``bench/RESULTS.md``) with the
machine, date, load, versions, command and tables; ``--json OUT`` (run.py) writes the rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import select
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from _common import (
    SHARED,
    LoadSampler,
    PeerResults,
    Results,
    bench_parser,
    git_revision,
    load_line,
    machine,
    machine_line,
    parse_args,
    versions,
    write_results_section,
)

PRETRAINED = SHARED / "pretrained"
SECTION = "adversarial"

# --- inputs -------------------------------------------------------------------------------------

LETTERS = "abcdefghijklmnopqrstuvwxyz"
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
ZWJ_SEQUENCES = [
    "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # family
    "\U0001f468\u200d\U0001f4bb",  # technologist
    "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag
    "\U0001f9d1\U0001f3fd\u200d\U0001f91d\u200d\U0001f9d1\U0001f3fb",  # people holding hands
]


def random_chars(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choices(alphabet, k=count))


def random_unicode(rng: random.Random, count: int) -> str:
    """Code points drawn uniformly from all of Unicode but the surrogates."""
    points = rng.choices(range(0x10F800), k=count)
    return "".join(chr(p + 0x800 if p >= 0xD800 else p) for p in points)


# Input kind -> (generator of about `n` bytes of UTF-8 from a seeded Random, its bytes per char).
KINDS: dict[str, Callable[[random.Random, int], str]] = {
    "one letter": lambda rng, n: "a" * n,
    "spaces": lambda rng, n: " " * n,
    "newlines": lambda rng, n: "\n" * n,
    "tabs": lambda rng, n: "\t" * n,
    "mixed whitespace": lambda rng, n: random_chars(rng, " \t\n\r\x0b\x0c", n),
    "\\r\\n": lambda rng, n: "\r\n" * (n // 2),
    "NBSP, ideographic sp": lambda rng, n: random_chars(rng, "\u00a0\u3000", n * 2 // 5),
    "digits": lambda rng, n: random_chars(rng, "0123456789", n),
    "random-letter word": lambda rng, n: random_chars(rng, LETTERS, n),
    "CJK, no spaces": lambda rng, n: "".join(
        chr(c) for c in rng.choices(range(0x4E00, 0xA000), k=n // 3)
    ),
    "emoji ZWJ": lambda rng, n: "".join(rng.choices(ZWJ_SEQUENCES, k=n // 20)),
    "combining marks": lambda rng, n: "".join(
        rng.choice(LETTERS) + random_chars(rng, "\u0300\u0301\u0308\u0327\u0323", rng.randint(1, 3))
        for _ in range(n // 5)
    ),
    "punctuation": lambda rng, n: random_chars(rng, PUNCTUATION, n),
    "alternating a1 a1": lambda rng, n: "a1 " * (n // 3),
    "alternating a1!": lambda rng, n: "a1!" * (n // 3),
    "random Unicode": lambda rng, n: random_unicode(rng, n // 4),
    "random Latin-1": lambda rng, n: rng.randbytes(n).decode("latin-1"),
}


def make_text(kind: str, size_mb: float) -> str:
    """The input of `kind`, about `size_mb` MB of UTF-8, the same on every call."""
    n = int(size_mb * 1e6)
    seed = int.from_bytes(hashlib.sha256(f"{kind} {n}".encode()).digest()[:8], "little")
    return KINDS[kind](random.Random(seed), n)


def cached_text(kind: str, size_mb: float, workdir: Path) -> str:
    """`make_text`, made once per run: the workers of both libraries read the same file."""
    path = workdir / ("text-" + hashlib.sha1(f"{kind} {size_mb}".encode()).hexdigest())
    if path.exists():
        return path.read_bytes().decode("utf-8")
    text = make_text(kind, size_mb)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(text.encode("utf-8"))
    os.replace(tmp, path)
    return text


# --- encoders -----------------------------------------------------------------------------------

TIKTOKEN_NAMES = {"gpt2 (tiktoken)": "r50k_base", "cl100k (tiktoken)": "cl100k_base"}
TIKTOKEN_NAMES["o200k (tiktoken)"] = "o200k_base"
# Encoder -> its peer library (None: no peer).
ENCODERS: dict[str, Optional[str]] = {
    **{name: "tiktoken" for name in TIKTOKEN_NAMES},
    "gpt2 (Tokenizer)": "tokenizers",
    "bert WordPiece": "tokenizers",
    "mistral BPE (.model)": "sentencepiece",
    "botchan Unigram (.model)": "sentencepiece",
    "botchan Unigram (Tokenizer)": "tokenizers",
    "words (en)": None,
    "Chinese segmenter": None,
}
SP_MODELS = {
    "mistral BPE (.model)": PRETRAINED / "mistral" / "tokenizer.model.v1",
    "botchan Unigram (.model)": PRETRAINED / "sentencepiece_test" / "botchan_en_unigram_1000.model",
}


def tiktoken_cache(workdir: Path) -> Path:
    """A TIKTOKEN_CACHE_DIR holding the shared rank files, so that tiktoken never downloads."""
    from bench_tiktoken import BLOB, RANK_FILES

    cache = workdir / "tiktoken_cache"
    cache.mkdir(exist_ok=True)
    for name, rel in RANK_FILES.items():
        link = cache / hashlib.sha1(f"{BLOB}{name}.tiktoken".encode()).hexdigest()
        if not link.exists():
            os.symlink(PRETRAINED / rel, link)
    return cache


def unigram_tokenizer_json(workdir: Path) -> Path:
    """botchan's Unigram model as a tokenizer.json (made by tokenmill, loaded by both)."""
    path = workdir / "botchan_unigram.json"
    if not path.exists():
        from tokenmill import sentencepiece

        sentencepiece.to_tokenizer(str(SP_MODELS["botchan Unigram (.model)"])).save(str(path))
    return path


# CPU seconds a timed cell adds up at least (by repeating a faster call).
MIN_TIMED_SECONDS = 0.02


def build_encoder(lib: str, encoder: str, workdir: Path) -> Callable[[str], Any]:
    """The timed call of `lib` (tokenmill or the peer) for `encoder`: text -> ids (or spans)."""
    if encoder in TIKTOKEN_NAMES:
        if lib == "tokenmill":
            from tokenmill import tiktoken as module

            enc = module.get_encoding(TIKTOKEN_NAMES[encoder], path=PRETRAINED)
        else:
            import tiktoken as module

            enc = module.get_encoding(TIKTOKEN_NAMES[encoder])
        # A new object (get_encoding returns the same one): its piece cache starts empty.
        enc = module.Encoding(
            name=enc.name,
            pat_str=enc._pat_str,
            mergeable_ranks=enc._mergeable_ranks,
            special_tokens=enc._special_tokens,
        )
        return enc.encode_ordinary
    if encoder in SP_MODELS:
        if lib == "tokenmill":
            import tokenmill.sentencepiece as spm
        else:
            import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=str(SP_MODELS[encoder]))
        return sp.encode
    if encoder == "words (en)":
        from tokenmill.words import WordTokenizer

        words = WordTokenizer("en")
        return lambda text: words.tokenize_spans(text)[0].tolist()
    if encoder == "Chinese segmenter":
        from tokenmill.words import ChineseSegmenter

        segmenter = ChineseSegmenter()
        return lambda text: [len(w) for w in segmenter.cut(text)]
    module = __import__(lib)
    if encoder == "gpt2 (Tokenizer)":
        gpt2 = PRETRAINED / "gpt2"
        bpe = module.models.BPE.from_file(str(gpt2 / "encoder.json"), str(gpt2 / "vocab.bpe"))
        tok = module.Tokenizer(bpe)
        tok.pre_tokenizer = module.pre_tokenizers.ByteLevel(add_prefix_space=False)
    elif encoder == "bert WordPiece":
        vocab = str(PRETRAINED / "bert_base_uncased" / "vocab.txt")
        tok = module.implementations.BertWordPieceTokenizer(vocab, lowercase=True)
    else:
        tok = module.Tokenizer.from_file(str(unigram_tokenizer_json(workdir)))
    return lambda text: tok.encode(text, add_special_tokens=False).ids


# --- loaders ------------------------------------------------------------------------------------

LOADERS = ["WordPiece entry", "BPE entry", "Unigram piece", "added token", "tiktoken token"]
LOADER_PEERS = {name: "tokenizers" for name in LOADERS}
LOADER_PEERS["tiktoken token"] = "tiktoken"


def long_entry(chars: int) -> str:
    """An entry of `chars` characters: letters and a few spaces, seeded."""
    rng = random.Random(chars)
    return "".join(rng.choices(LETTERS + " ", k=chars))


def loader_input(loader: str, chars: int) -> Any:
    """What the loader reads: a tokenizer.json string, or (ranks, pattern) for tiktoken."""
    long = long_entry(chars)
    if loader == "tiktoken token":
        ranks = {bytes([b]): b for b in range(256)}
        ranks[long.encode()] = 256
        return ranks
    base = {"[UNK]": 0, "a": 1, "b": 2, "##a": 3, "##b": 4}
    model: dict[str, Any]
    if loader == "WordPiece entry":
        model = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##"}
        model.update(max_input_chars_per_word=100, vocab=dict(base, **{long: 5}))
    elif loader == "BPE entry":
        model = {"type": "BPE", "vocab": dict(base, **{long: 5}), "merges": []}
        model.update(unk_token="[UNK]")
    elif loader == "Unigram piece":
        model = {"type": "Unigram", "unk_id": 0, "vocab": [[k, -1.0] for k in [*base, long]]}
    else:
        model = {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##"}
        model.update(max_input_chars_per_word=100, vocab=base)
    added = [
        {"id": 0, "content": "[UNK]", "single_word": False, "lstrip": False, "rstrip": False}
        | {"normalized": False, "special": True}
    ]
    if loader == "added token":
        added.append(dict(added[0], id=5, content=long, special=False, normalized=True))
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added}
    doc.update(normalizer=None, pre_tokenizer=None, post_processor=None, decoder=None)
    doc["model"] = model
    return json.dumps(doc)


def build_loader(lib: str, loader: str) -> Callable[[Any], Any]:
    if loader == "tiktoken token":
        module = __import__("tokenmill.tiktoken" if lib == "tokenmill" else lib, fromlist=["x"])
        return lambda ranks: module.Encoding(
            "long", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={}
        ).encode_ordinary("ab")
    module = __import__(lib)
    return lambda doc: module.Tokenizer.from_str(doc).encode("a b").ids


# --- the worker ---------------------------------------------------------------------------------


def clear_peak() -> Optional[float]:
    """Resets this process's peak RSS (Linux) and returns the current RSS in MB, or None."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return status_mb("VmRSS")
    except OSError:
        return None


def status_mb(field: str) -> Optional[float]:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def worker(lib: str, encoder: str, workdir: str) -> None:
    """Serves cells on stdin/stdout, one JSON line each: {"kind", "mb"} or {"loader", "chars"}."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(Path(workdir)))
    calls: dict[str, Callable[[Any], Any]] = {}
    held: tuple[Any, Any] = (None, None)
    for line in sys.stdin:
        cell = json.loads(line)
        key = json.dumps(cell, sort_keys=True)
        if held[0] != key:
            held = (None, None)  # the previous text is freed before the next is made
            if "loader" in cell:
                held = (key, loader_input(cell["loader"], cell["chars"]))
            else:
                held = (key, cached_text(cell["kind"], cell["mb"], Path(workdir)))
        name = cell.get("loader", encoder)
        if "loader" in cell:
            if name not in calls:
                calls[name] = build_loader(lib, name)
        else:
            # A fresh encoder for every call: a word cache that kept the 100 kB text of the
            # previous round would make the small sizes look cheaper than they are.
            calls.pop(name, None)
            calls[name] = build_encoder(lib, name, Path(workdir))
            calls[name]("warm up")
        data = held[1]
        before = clear_peak()
        cpu, wall = time.process_time(), time.perf_counter()
        out = calls[name](data)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        peak = status_mb("VmHWM")
        # A call of a few milliseconds is below the clock's resolution for a ratio: repeated
        # until 20 ms add up, and averaged.
        repeats = 1
        while cpu < MIN_TIMED_SECONDS and repeats < 1000:
            start_cpu, start_wall = time.process_time(), time.perf_counter()
            calls[name](data)
            cpu += time.process_time() - start_cpu
            wall += time.perf_counter() - start_wall
            repeats += 1
        cpu, wall = cpu / repeats, wall / repeats
        result = {
            "cpu": cpu,
            "wall": wall,
            "digest": hashlib.sha256(repr(out).encode()).hexdigest(),
        }
        result["extra_mb"] = None if before is None or peak is None else peak - before
        del out
        print(json.dumps(result), flush=True)


class Worker:
    """A worker process of one library for one encoder, restarted after a timeout."""

    def __init__(self, lib: str, encoder: str, workdir: Path, env: dict[str, str]) -> None:
        self.args = [sys.executable, __file__, "--worker", lib, encoder, str(workdir)]
        self.env = env
        self.proc: Optional[subprocess.Popen] = None

    def run(self, cell: dict, timeout: float) -> dict:
        """The cell's result, {"timeout": True} when it took over `timeout` seconds, or
        {"error": ...} when the worker died."""
        if self.proc is None:
            self.proc = subprocess.Popen(
                self.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=self.env,
            )
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(cell) + "\n")
        self.proc.stdin.flush()
        # The limit is on CPU seconds (the worker's, from /proc; wall time where that is
        # missing), which a loaded machine does not inflate; making the text is allowed for.
        limit = timeout + 5 + 2 * cell.get("mb", 0)
        start_cpu, start_wall = self.cpu_seconds(), time.monotonic()
        ready: list = []
        while not ready:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            cpu = self.cpu_seconds()
            used = time.monotonic() - start_wall if cpu is None else cpu - (start_cpu or 0)
            if not ready and (used > limit or time.monotonic() - start_wall > 20 * limit):
                break
        line = self.proc.stdout.readline() if ready else ""
        if line:
            result = json.loads(line)
            if result["cpu"] > timeout:
                result["timeout"] = True
            return result
        timed_out = not ready
        self.close()
        if timed_out:
            return {"timeout": True}
        return {"error": "worker died"}

    def cpu_seconds(self) -> Optional[float]:
        """The worker's CPU seconds so far (user + system, Linux), or None."""
        try:
            assert self.proc is not None
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, AssertionError, IndexError, ValueError):
            return None

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            stderr = self.proc.communicate()[1]
            if stderr.strip():
                print(stderr.strip().splitlines()[-1], file=sys.stderr)
            self.proc = None


# --- the table ----------------------------------------------------------------------------------


def per_mb_ms(result: Optional[dict], mb: float) -> Optional[float]:
    return None if not result or "cpu" not in result else 1000 * result["cpu"] / mb


def fmt_cell(result: Optional[dict], mb: float, timeout: float) -> str:
    if result is None:
        return "–"
    if result.get("timeout"):
        return f"> {timeout:.0f}s"
    if "error" in result:
        return "error"
    ms = per_mb_ms(result, mb)
    return f"{ms:.1f}" if ms < 10 else f"{ms:.0f}"


def growth(results: list[Optional[dict]], mbs: list[float]) -> Optional[float]:
    first, last = per_mb_ms(results[0], mbs[0]), per_mb_ms(results[-1], mbs[-1])
    if last is None and results[-1] is not None and results[-1].get("timeout"):
        return float("inf")
    if first is None or last is None or first <= 0:
        return None
    return last / first


def median_result(results: list[dict]) -> dict:
    """The median CPU time of the rounds, with the largest extra memory."""
    done = [r for r in results if "cpu" in r and not r.get("timeout")]
    if len(done) < len(results):
        return next(r for r in results if "cpu" not in r or r.get("timeout"))
    out = dict(done[0])
    out["cpu"] = statistics.median(r["cpu"] for r in done)
    out["wall"] = statistics.median(r["wall"] for r in done)
    extras = [r["extra_mb"] for r in done if r.get("extra_mb") is not None]
    out["extra_mb"] = max(extras) if extras else None
    return out


def run_rows(
    rows: list[tuple[str, str]],
    libs_of: Callable[[str], list[str]],
    cells: Callable[[str, str, float], dict],
    sizes: list[float],
    mb_of: Callable[[str, float], float],
    args: Any,
    workdir: Path,
    env: dict[str, str],
    records: list[dict],
    on_row: Callable[[], None],
) -> None:
    """Runs each (worker name, row) at every size, libraries interleaved; appends one record per
    row and library to `records` (its results per size), calling `on_row` after each row."""
    workers: dict[tuple[str, str], Worker] = {}
    current = None
    for group, row in rows:
        if group != current:
            for w in workers.values():
                w.close()
            workers, current = {}, group
        libs = libs_of(group)
        given_up: dict[str, dict] = {lib: {} for lib in libs}
        per_lib: dict[str, list[Optional[dict]]] = {lib: [] for lib in libs}
        for size in sizes:
            cell = cells(group, row, size)
            rounds: dict[str, list[dict]] = {lib: [] for lib in libs}
            for r in range(args.rounds):
                order = libs if r % 2 == 0 else libs[::-1]
                for lib in order:
                    if given_up[lib] or (rounds[lib] and rounds[lib][0].get("cpu", 0) > 10):
                        continue
                    w = workers.setdefault((lib, group), Worker(lib, group, workdir, env))
                    result = w.run(cell, args.timeout)
                    rounds[lib].append(result)
                    if "cpu" not in result or result.get("timeout"):
                        given_up[lib] = result
            for lib in libs:
                # A size not tried after a timeout shows as one; after an error, as nothing.
                skipped = {"timeout": True} if given_up[lib].get("timeout") else None
                per_lib[lib].append(median_result(rounds[lib]) if rounds[lib] else skipped)
        mbs = [mb_of(row, s) for s in sizes]
        same = []
        for i in range(len(sizes)):
            d = [(per_lib[lib][i] or {}).get("digest") for lib in libs]
            same.append(None if len(d) < 2 or None in d else d[0] == d[1])
        for lib in libs:
            record = {"group": group, "row": row, "lib": lib, "results": per_lib[lib]}
            record.update(mbs=mbs, same=same, growth=growth(per_lib[lib], mbs))
            records.append(record)
            print(line_of(record, args.timeout), flush=True)
        on_row()
    for w in workers.values():
        w.close()


def line_of(record: dict, timeout: float) -> str:
    cells = [fmt_cell(r, mb, timeout) for r, mb in zip(record["results"], record["mbs"])]
    g = record["growth"]
    grown = "–" if g is None else f"{g:.2f}" + (" !" if g > 1.5 else "")
    extra = (record["results"][-1] or {}).get("extra_mb")
    memory = "–" if extra is None else f"{extra:.0f}"
    if record["lib"] == "tokenmill":
        compared = [s for s in record["same"] if s is not None]
        check = "–" if not compared else ("same" if all(compared) else "DIFF")
    else:
        check = ""
    return " | ".join([record["group"], record["row"], record["lib"], *cells, grown, memory, check])


def table(records: list[dict], sizes_label: list[str], first: str, timeout: float) -> str:
    head = [first, "input", "library", *[f"ms/MB {s}" for s in sizes_label]]
    head += ["growth", "extra MB (largest)", "ids"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + line_of(r, timeout).replace("\\r\\n", "\\\\r\\\\n") + " |" for r in records]
    return "\n".join(lines)


def size_label(mb: float) -> str:
    return f"{mb * 1000:.0f} kB" if mb < 1 else f"{mb:g} MB"


def chars_label(chars: int) -> str:
    return f"{chars // 1000}k" if chars < 10**6 else f"{chars // 10**6}M"


def split_names(arg: str, known) -> list[str]:
    """`arg` split at commas, keeping together a known name that has commas ("CJK, no spaces")."""
    names: list[str] = []
    for part in arg.split(","):
        joined = f"{names[-1]},{part}" if names else None
        if names and names[-1] not in known and any(k.startswith(joined) for k in known):
            names[-1] = joined
        else:
            names.append(part)
    return names


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:5])
        return
    ap = bench_parser(__doc__)
    ap.add_argument("--quick", action="store_true", help="100 kB and 1 MB only")
    ap.add_argument("--sizes", help="MB, comma-separated (default 0.1,1,10)")
    ap.add_argument("--encoders", help=f"comma-separated, of: {', '.join(ENCODERS)}")
    ap.add_argument("--kinds", help="comma-separated input kinds (default all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per call")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--skip-loaders", action="store_true")
    ap.add_argument("--loader-chars", default="10000,100000,1000000")
    ap.add_argument("--markdown", metavar="FILE", help="rewrite FILE's adversarial section")
    args = parse_args(ap)
    sizes = [float(s) for s in (args.sizes or ("0.1,1" if args.quick else "0.1,1,10")).split(",")]
    encoders = split_names(args.encoders, ENCODERS) if args.encoders else list(ENCODERS)
    kinds = split_names(args.kinds, KINDS) if args.kinds else list(KINDS)
    for name, known in ((encoders, ENCODERS), (kinds, KINDS)):
        unknown = [n for n in name if n not in known]
        if unknown:
            ap.error(f"unknown {', '.join(unknown)}; known: {', '.join(known)}")
    peers = not (args.no_peers or args.tokenmill_only)
    command = "python " + " ".join(
        shlex.quote(a) for a in ["bench/bench_adversarial.py"] + sys.argv[1:]
    )
    text_mb = {(k, s): len(make_text(k, s).encode()) / 1e6 for k in kinds for s in sizes[:1]}

    def mb_of(kind: str, size: float) -> float:
        # Every generator scales linearly: the smallest size's measure gives the others'.
        return text_mb[(kind, sizes[0])] * size / sizes[0]

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory() as tmp, LoadSampler() as load:
        workdir = Path(tmp)
        env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENMILL_NUM_THREADS="1")
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
        print(" | ".join(["encoder", "input", "library", *map(size_label, sizes)]) + " | growth")
        records: list[dict] = []
        loader_records: list[dict] = []
        chars = [int(c) for c in args.loader_chars.split(",")]

        def save() -> None:
            """The results so far (a run cut short keeps its finished rows)."""
            summary = (sizes, chars, command, started, load.summary())
            write_outputs(args, records, loader_records, *summary, final=False)

        run_rows(
            [(e, k) for e in encoders for k in kinds],
            lambda e: ["tokenmill"] + ([ENCODERS[e]] if peers and ENCODERS[e] else []),
            lambda e, k, s: {"kind": k, "mb": s},
            sizes,
            mb_of,
            args,
            workdir,
            env,
            records,
            save,
        )
        if not args.skip_loaders:
            run_rows(
                [(name, "one long entry") for name in LOADERS],
                lambda n: ["tokenmill"] + ([LOADER_PEERS[n]] if peers else []),
                lambda n, _, c: {"loader": n, "chars": int(c)},
                chars,
                lambda _, c: c / 1e6,
                args,
                workdir,
                env,
                loader_records,
                save,
            )
    write_outputs(args, records, loader_records, sizes, chars, command, started, load.summary())


def write_outputs(
    args, records, loader_records, sizes, chars, command, started, load, final=True
) -> None:
    size_labels = list(map(size_label, sizes))
    chars_labels = list(map(chars_label, chars))
    if args.tokenmill_only:
        results = Results()
        for r in records + loader_records:
            labels = size_labels if r in records else chars_labels
            for result, label in zip(r["results"], labels):
                if result and "cpu" in result:
                    case = f"{r['group']} {r['row']} {label}"
                    results.add(case, result["wall"], result["cpu"], None, result.get("digest"))
        results.write(args.json)
        return
    peer_results = PeerResults("tiktoken", "tokenizers", "sentencepiece")
    for r in records + loader_records:
        labels = size_labels if r in records else chars_labels
        for i, (result, label, mb) in enumerate(zip(r["results"], labels, r["mbs"])):
            result = result or {}
            check = {None: None, True: "ids identical", False: "ids DIFFERENT"}[r["same"][i]]
            peer_results.add(
                f"{r['group']} · {r['row']} · {label}",
                r["lib"],
                result.get("wall"),
                result.get("cpu"),
                result.get("extra_mb"),
                mb,
                check if "cpu" in result else f"> {args.timeout:.0f} s or failed",
            )
    peer_results.write(args.json)
    over = [
        r for r in records + loader_records if r["lib"] == "tokenmill" and (r["growth"] or 0) > 1.5
    ]
    if final:
        print(f"\ntokenmill rows whose cost per MB grows over 1.5x: {len(over)}")
        for r in over:
            print(f"  {r['group']} · {r['row']}: {r['growth']:.2f}x")
    if not args.markdown:
        return
    m = machine()
    body = [
        "## Adversarial input: cost per MB from 100 kB to 10 MB (`bench_adversarial.py`)",
        "",
        f"- machine: {machine_line(m)}",
        f"- date: {started}; {load_line(load, m['cores'])}",
        f"- tokenmill {git_revision()}; {versions('tiktoken', 'tokenizers', 'sentencepiece')}",
        f"- command: `{command}`",
        "- CPU milliseconds per MB of UTF-8 input (median of interleaved rounds), one call on the"
        " whole text by a freshly built encoder (no word cached); growth = cost per MB at the"
        " largest size over the smallest (1.0: linear;"
        f" ` !` over 1.5); `> {args.timeout:.0f}s`: killed at the timeout (larger sizes then not"
        " tried); extra MB: growth of the peak RSS during the call at the largest size; ids:"
        " tokenmill's ids equal to the peer's at every size.",
        f"- tokenmill rows over 1.5x: {len(over)}"
        + ("" if not over else " (" + ", ".join(f"{r['group']} · {r['row']}" for r in over) + ")"),
        "",
        table(records, size_labels, "encoder", args.timeout),
    ]
    if loader_records:
        body += [
            "",
            "Loaders: one long entry in a tiny vocabulary (milliseconds per MB of the entry).",
            "",
            table(loader_records, chars_labels, "loader", args.timeout),
        ]
    write_results_section(SECTION, "\n".join(body) + "\n", Path(args.markdown))


if __name__ == "__main__":
    main()
