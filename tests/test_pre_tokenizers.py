"""tokenmill.pre_tokenizers against tokenizers.pre_tokenizers: same pieces, same offsets.

Every pre-tokenizer and setting runs on a sample of every corpus in ../shared/corpora (plus
Python standard library sources) and on adversarial strings; Split also runs the
GPT-2 / cl100k / o200k / Llama-3 / Qwen2 / CLIP patterns with every behavior and invert.
The reference is always `tokenizers` itself, run on the same input in the same process.
"""

from __future__ import annotations

import functools
import json
import pickle
import sysconfig
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from conftest import (  # noqa: E402
    GPT2_PATTERN,
    LLAMA3_PATTERN,
    QWEN2_PATTERN,
    read_sample,
    shared_path,
)
from tokenizers import (  # noqa: E402
    Regex as TkRegex,
    pre_tokenizers as tk,
)
from tokenmill import pre_tokenizers as tm  # noqa: E402
from tokenmill.tiktoken import CL100K_PAT_STR, O200K_PAT_STR, R50K_PAT_STR  # noqa: E402

BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]

PATTERNS = {
    "gpt2": GPT2_PATTERN,
    "r50k_tiktoken": R50K_PAT_STR,
    "cl100k": CL100K_PAT_STR,
    "o200k": O200K_PAT_STR,
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
    "clip": r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+""",
}

# Smaller regexes exercising single features (Oniguruma semantics: `.` matches \n, `^`/`$` are
# line anchors, \s / \w / \d are Unicode).
SMALL_PATTERNS = [
    r"\s+",
    r"\s",
    r"\w+",
    r"\d+",
    r"\p{P}",
    r".",
    r"^\s*",
    r"\s*$",
    r"(?i)the",
    r"[aeiou]",
    r"x*",
    r"(?<=\s)\S",
]

STRING_PATTERNS = [" ", ",", "e", "the", "\n", "", ".", "  "]

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "a",
    "Hello, world! How's it going? I'm fine; you'll see -- it's 12:30.",
    " leading space and trailing space ",
    "tabs\tand\nnewlines\r\nand\x0bvertical\x0cfeed\x1c\x1d\x1e\x1f",
    "nbsp\u00a0ideographic\u3000line\u2028para\u2029nel\u0085ogham\u1680thin\u2009zwsp\u200bmongolian\u180e",
    "\u00a0\u00a0x\u3000\u3000y\u2028",
    "emoji 👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 thumbs",
    "combining e\u0301 a\u0308 o\u0303\u0323 ZWJ a\u200db ZWNJ a\u200cb",
    "CJK 日本語のテキストです。中文没有空格也可以分词！한국어 텍스트",
    "RTL עברית ותוכן العربية والكلمات ١٢٣٤ فارسی ۱۲۳",
    "digits ٠١٢٣ ०१२३ ๐๑๒ ①②③ ¼½ Ⅻ ⁵ 12,345.67 1e10",
    "punct ¡¿ «» „“ ‹› — – … ‰ § ¶ † ‡ • ′ ″ ‽ ⁂ 〈〉 【】 、。",
    "symbols $ + < = > ^ ` | ~ € £ ¥ © ® ™ ° ± × ÷ ∞ ≠",
    "contractions: don't won't I'd you've they're it's we'll I'M DON'T",
    "controls \x00\x01\x07\x1b[0m\x7f end",
    "the quick brown fox\n\n\n   jumps\t\t over\r\r the lazy dog   \n",
    "aaaa" * 50 + "  " + "!!!!" * 20 + "\n" * 5 + "1234567890" * 5,
    "    indented code:\n        return x + 1  # comment\n",
    "mixed123abc456 under_score camelCase snake_case kebab-case",
    "▁already▁has▁meta ▁spaces",
    "x" * 100_000,
    " " * 10_000 + "x",
    "\n" * 10_000,
    "ab" * 30_000 + " " + "日本" * 20_000,
]


def corpus_files() -> list[Path]:
    root = shared_path("corpora")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in {".txt", ".conllu", ".utf8"}
        and "LICENSE" not in p.name
        and "index" not in p.name
    )
    assert files, f"no corpus files under {root}"
    return files


def stdlib_sample(max_bytes: int) -> str:
    """Python source code: the standard library's own files (always present)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    parts, size = [], 0
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text[:20_000])
        size += len(parts[-1])
        if size >= max_bytes:
            break
    return "".join(parts)


@pytest.fixture(scope="module")
def mixed_text() -> str:
    """A few kB of every corpus file, standard library code, and the adversarial strings."""
    parts = [read_sample(p, 1_500) for p in corpus_files()]
    parts.append(stdlib_sample(40_000))
    parts.extend(s for s in ADVERSARIAL if len(s) < 5_000)
    return "\n".join(parts)


@pytest.fixture(scope="module")
def corpus_texts() -> dict[str, str]:
    """A larger sample of each corpus file, and of code."""
    texts = {str(p.relative_to(p.parents[1])): read_sample(p, 12_000) for p in corpus_files()}
    texts["python-stdlib"] = stdlib_sample(150_000)
    return texts


def assert_same(ours, theirs, text: str, what: str = "") -> None:
    """Same pieces and offsets; on a mismatch, shows the first differing piece in context."""
    got = ours.pre_tokenize_str(text)
    want = theirs.pre_tokenize_str(text)
    if got == want:
        return
    i = next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))
    raise AssertionError(
        f"{what}: {ours!r} differs from tokenizers at piece {i} "
        f"(ours {len(got)} pieces, tokenizers {len(want)}):\n"
        f"  ours:       {got[max(0, i - 2) : i + 3]!r}\n"
        f"  tokenizers: {want[max(0, i - 2) : i + 3]!r}"
    )


def from_reference(theirs):
    """The tokenmill pre-tokenizer read from the reference's own JSON (its pickle state)."""
    state = theirs.__getstate__()
    kind = json.loads(state)["type"]
    blank = {
        "Split": lambda: tm.Split(" ", "removed"),
        "CharDelimiterSplit": lambda: tm.CharDelimiterSplit(" "),
        "Sequence": lambda: tm.Sequence([]),
    }
    ours = blank.get(kind, getattr(tm, kind, None) or (lambda: None))()
    assert ours is not None, f"no tokenmill class for {kind}"
    ours.__setstate__(state)
    assert ours.__getstate__() == state, "JSON differs after a round trip"
    return ours


def configs():
    """(name, tokenmill object, tokenizers object) for every class and setting."""
    out = []
    for aps in (True, False):
        for use_regex in (True, False):
            for trim in (True, False):
                out.append(
                    (
                        f"ByteLevel({aps},{trim},{use_regex})",
                        tm.ByteLevel(aps, trim, use_regex),
                        tk.ByteLevel(aps, trim, use_regex),
                    )
                )
    out.append(("Whitespace", tm.Whitespace(), tk.Whitespace()))
    out.append(("WhitespaceSplit", tm.WhitespaceSplit(), tk.WhitespaceSplit()))
    out.append(("BertPreTokenizer", tm.BertPreTokenizer(), tk.BertPreTokenizer()))
    for b in BEHAVIORS:
        out.append((f"Punctuation({b})", tm.Punctuation(b), tk.Punctuation(b)))
    out.append(("Punctuation()", tm.Punctuation(), tk.Punctuation()))
    for ind in (False, True):
        out.append((f"Digits({ind})", tm.Digits(ind), tk.Digits(ind)))
    for rep in ("▁", "_"):
        for scheme in ("always", "first", "never"):
            for split in (True, False):
                out.append(
                    (
                        f"Metaspace({rep},{scheme},{split})",
                        tm.Metaspace(rep, scheme, split),
                        tk.Metaspace(rep, scheme, split),
                    )
                )
    for d in (" ", "e", "\n", "日"):
        out.append(
            (f"CharDelimiterSplit({d!r})", tm.CharDelimiterSplit(d), tk.CharDelimiterSplit(d))
        )
    out.append(("UnicodeScripts", tm.UnicodeScripts(), tk.UnicodeScripts()))
    for n in (1, 5):
        out.append((f"FixedLength({n})", tm.FixedLength(n), tk.FixedLength(n)))
    for pattern in STRING_PATTERNS:
        for b in BEHAVIORS:
            for inv in (False, True):
                out.append(
                    (
                        f"Split({pattern!r},{b},{inv})",
                        tm.Split(pattern, b, inv),
                        tk.Split(pattern, b, inv),
                    )
                )
    for pattern in SMALL_PATTERNS:
        for b in BEHAVIORS:
            theirs = tk.Split(TkRegex(pattern), b)
            out.append((f"Split(Regex({pattern!r}),{b})", from_reference(theirs), theirs))
    out.append(
        (
            "Sequence(Whitespace, Digits, Punctuation)",
            tm.Sequence(
                [
                    tm.WhitespaceSplit(),
                    tm.Sequence([tm.Digits(True), tm.Punctuation("merged_with_next")]),
                ]
            ),
            tk.Sequence(
                [
                    tk.WhitespaceSplit(),
                    tk.Sequence([tk.Digits(True), tk.Punctuation("merged_with_next")]),
                ]
            ),
        )
    )
    out.append(
        (
            "Sequence(Metaspace, Digits)",
            tm.Sequence([tm.Metaspace(), tm.Digits()]),
            tk.Sequence([tk.Metaspace(), tk.Digits()]),
        )
    )
    out.append(
        (
            "Sequence(ByteLevel, Metaspace)",
            tm.Sequence([tm.ByteLevel(), tm.Metaspace()]),
            tk.Sequence([tk.ByteLevel(), tk.Metaspace()]),
        )
    )
    return out


CONFIGS = configs()


@pytest.mark.parametrize("name,ours,theirs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_every_setting_on_mixed_text(name, ours, theirs, mixed_text):
    assert_same(ours, theirs, mixed_text, name)
    # Pieces of the input, too: each starts fresh at offset 0 (matters for prepend_scheme="first").
    for chunk in mixed_text.split("\n\n")[:200]:
        assert_same(ours, theirs, chunk, name)


@pytest.mark.parametrize("text", ADVERSARIAL, ids=[f"adv{i}" for i in range(len(ADVERSARIAL))])
def test_adversarial_strings(text):
    for name, ours, theirs in CONFIGS:
        if len(text) > 5_000 and name.startswith(("Split(", "FixedLength(1)")):
            continue  # long strings: covered by the main configurations below
        assert_same(ours, theirs, text, name)


def split_regex_pair(pattern: str, behavior: str, invert: bool):
    """Split(Regex(pattern)) in both libraries (ours built from a tokenmill.Regex when the
    pattern compiles as given, else read from the reference's JSON)."""
    theirs = tk.Split(TkRegex(pattern), behavior, invert)
    try:
        regex = tokenmill.Regex(pattern)
    except tokenmill.FormatError:
        return from_reference(theirs), theirs
    ours = tm.Split(regex, behavior, invert)
    assert ours.__getstate__() == theirs.__getstate__()
    return ours, theirs


@pytest.mark.parametrize("pattern_name", list(PATTERNS))
def test_split_with_model_patterns_on_every_corpus(pattern_name, corpus_texts):
    ours, theirs = split_regex_pair(PATTERNS[pattern_name], "isolated", False)
    for name, text in corpus_texts.items():
        assert_same(ours, theirs, text, f"{pattern_name} on {name}")


@pytest.mark.parametrize("pattern_name", list(PATTERNS))
@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
def test_split_with_model_patterns_every_behavior(pattern_name, behavior, invert, mixed_text):
    ours, theirs = split_regex_pair(PATTERNS[pattern_name], behavior, invert)
    assert_same(ours, theirs, mixed_text, f"{pattern_name} {behavior} invert={invert}")
    for text in ADVERSARIAL:
        assert_same(ours, theirs, text, f"{pattern_name} {behavior} invert={invert}")


@pytest.mark.parametrize(
    "name,ours,theirs",
    [
        ("ByteLevel", tm.ByteLevel(), tk.ByteLevel()),
        (
            "ByteLevel(no prefix)",
            tm.ByteLevel(add_prefix_space=False),
            tk.ByteLevel(add_prefix_space=False),
        ),
        ("Whitespace", tm.Whitespace(), tk.Whitespace()),
        ("BertPreTokenizer", tm.BertPreTokenizer(), tk.BertPreTokenizer()),
        ("Metaspace", tm.Metaspace(), tk.Metaspace()),
        ("UnicodeScripts", tm.UnicodeScripts(), tk.UnicodeScripts()),
        ("Digits", tm.Digits(), tk.Digits()),
        ("Punctuation", tm.Punctuation(), tk.Punctuation()),
    ],
)
def test_main_pre_tokenizers_on_every_corpus(name, ours, theirs, corpus_texts):
    for corpus, text in corpus_texts.items():
        assert_same(ours, theirs, text, f"{name} on {corpus}")


def test_model_sequences(corpus_texts):
    """The pre-tokenizers of real models: Llama-3 style and CLIP style."""
    llama_tk = tk.Sequence(
        [
            tk.Split(TkRegex(PATTERNS["llama3"]), "isolated"),
            tk.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    clip_tk = tk.Sequence(
        [
            tk.Split(TkRegex(PATTERNS["clip"]), "removed", invert=True),
            tk.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    for theirs in (llama_tk, clip_tk):
        ours = from_reference(theirs)
        for corpus, text in corpus_texts.items():
            assert_same(ours, theirs, text, corpus)


def test_megabyte_word_and_long_lines():
    """1 MB without spaces, and a multi-megabyte line: same result, and done in linear time
    (a quadratic pass would not finish within the test run)."""
    word = "abcdefghij" * 100_000
    for ours, theirs in [
        (tm.ByteLevel(), tk.ByteLevel()),
        (tm.Metaspace(), tk.Metaspace()),
        (tm.Whitespace(), tk.Whitespace()),
    ]:
        assert_same(ours, theirs, word, "1 MB word")
    line = "word, other 123 words! " * 60_000  # 1.4 MB, one line
    for ours, theirs in [(tm.ByteLevel(), tk.ByteLevel()), (tm.Digits(), tk.Digits())]:
        got = ours.pre_tokenize_str(line)
        want = theirs.pre_tokenize_str(line)
        assert len(got) == len(want) and got[:50] == want[:50] and got[-50:] == want[-50:]
    spaces = " " * 1_000_000 + "x"
    assert_same(tm.ByteLevel(), tk.ByteLevel(), spaces, "1 MB of spaces")
    for name in ("llama3", "qwen2"):  # the Split patterns of real tokenizer.json files
        ours, theirs = split_regex_pair(PATTERNS[name], "isolated", False)
        assert_same(ours, theirs, spaces, f"{name}: 1 MB of spaces")
        assert_same(ours, theirs, word, f"{name}: 1 MB word")


@functools.lru_cache(maxsize=1)
def assigned_code_points() -> str:
    """Every code point assigned in Python's Unicode database (older than both engines' tables,
    so Unicode-version differences between Oniguruma and Rust's tables stay out)."""
    import unicodedata

    return "".join(
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c < 0xE000 and unicodedata.category(chr(c)) != "Cn"
    )


@pytest.mark.parametrize(
    "pattern",
    [
        r"\w",
        r"\W",
        r"[\w]",
        r"[\W]",
        r"[^\w\s]",
        r"[^\W]",
        r"\s",
        r"\S",
        r"\d",
        r"\p{L}",
        r"\p{N}",
        r"\p{P}",
        r"\p{M}",
        r"[^\r\n\p{L}\p{N}]",
        r"\h",
        r"(?i:k)",
        r"\p{^L}",
    ],
)
def test_regex_classes_on_every_code_point(pattern):
    """Which chars a class matches, as Oniguruma (tokenizers) decides, for all of Unicode."""
    ours, theirs = split_regex_pair(pattern, "removed", True)
    assert_same(ours, theirs, assigned_code_points(), pattern)


@pytest.mark.parametrize(
    "arrangement", ["in code point order", "each after a Latin letter", "each after a digit"]
)
def test_unicode_scripts_on_every_code_point(arrangement):
    """UnicodeScripts gives every code point, assigned or not, tokenizers' script: that of its
    frozen Unicode 9.0 table, not a current one (chars assigned since have no script)."""
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    if arrangement == "in code point order":  # a cut wherever neighbours' scripts differ
        text = "".join(chars)
    else:  # a cut before each char unless it is Latin (Common) or has no script
        text = ("a" if "Latin" in arrangement else "0").join(chars)
    assert_same(tm.UnicodeScripts(), tk.UnicodeScripts(), text, arrangement)


# --- JSON, pickling, Python API ------------------------------------------------------------


@pytest.mark.parametrize("name,ours,theirs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_json_round_trips_both_ways(name, ours, theirs):
    assert ours.__getstate__() == theirs.__getstate__()
    # tokenizers reads what we write, and we read what it writes.
    theirs_again = pickle.loads(pickle.dumps(theirs))
    theirs_again.__setstate__(ours.__getstate__())
    assert theirs_again.__getstate__() == ours.__getstate__()
    assert from_reference(theirs).__getstate__() == ours.__getstate__()


@pytest.mark.parametrize("name,ours,theirs", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_pickle_and_repr(name, ours, theirs):
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is type(ours)
    assert again.__getstate__() == ours.__getstate__()
    assert repr(ours) == repr(theirs)
    assert isinstance(ours, tm.PreTokenizer)


def tokenizer_json_with(pre_tokenizer: dict) -> str:
    return json.dumps(
        {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [],
            "normalizer": None,
            "pre_tokenizer": pre_tokenizer,
            "post_processor": None,
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"},
        }
    )


@pytest.mark.parametrize(
    "older",
    [
        {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        {
            "type": "Metaspace",
            "replacement": "▁",
            "add_prefix_space": True,
            "str_rep": "▁",
            "prepend_scheme": "first",
        },
        {
            "type": "Metaspace",
            "replacement": "_",
            "add_prefix_space": False,
            "prepend_scheme": "never",
        },
        {"type": "Metaspace", "replacement": "▁"},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True},
        {"type": "Punctuation"},
        {"type": "Whitespace", "unknown_field": 1},
    ],
)
def test_older_json_forms(older):
    """Forms older tokenizer.json files use: read as tokenizers reads them."""
    reference = json.loads(tokenizers.Tokenizer.from_str(tokenizer_json_with(older)).to_str())[
        "pre_tokenizer"
    ]
    ours = tm.Whitespace() if older["type"] == "Whitespace" else getattr(tm, older["type"])()
    ours.__setstate__(json.dumps(older).encode())
    assert json.loads(ours.__getstate__()) == reference


@pytest.mark.parametrize(
    "bad",
    [
        '{"type":"Split","pattern":{"Regex":"(unclosed"},"behavior":"Removed","invert":false}',
        '{"type":"Split","pattern":{"Regex":"a"},"behavior":"Sideways","invert":false}',
        '{"type":"Split","pattern":"a","behavior":"Removed","invert":false}',
        '{"type":"Metaspace","replacement":"ab"}',
        '{"type":"Metaspace","replacement":"_","add_prefix_space":false,"prepend_scheme":"always"}',
        "not json",
    ],
)
def test_bad_json_raises_format_error(bad):
    target = tm.Metaspace() if "Metaspace" in bad else tm.Split(" ", "removed")
    with pytest.raises(tokenmill.FormatError):
        target.__setstate__(bad.encode())


def test_bad_regex_raises_format_error():
    ours = tm.Split(" ", "removed")
    with pytest.raises(tokenmill.FormatError, match="unclosed|\\(a"):
        ours.__setstate__(
            b'{"type":"Split","pattern":{"Regex":"(a"},"behavior":"Removed","invert":false}'
        )
    with pytest.raises(tokenmill.FormatError):
        tm.Split(tokenmill.Regex("(a"), "isolated")


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(tokenmill.InvalidArgumentError, match="behavior"):
        tm.Split(" ", "sideways")
    with pytest.raises(tokenmill.InvalidArgumentError, match="prepend_scheme"):
        tm.Metaspace(prepend_scheme="sometimes")
    with pytest.raises((TypeError, ValueError)):
        tm.Metaspace(replacement="ab")
    with pytest.raises(TypeError):
        tm.Split(42, "removed")
    with pytest.raises(TypeError):
        tm.Sequence([tm.Whitespace(), "not a pre-tokenizer"])
    with pytest.raises(TypeError):
        tm.ByteLevel().__setstate__(b'{"type":"Whitespace"}')
    with pytest.raises(tokenmill.InvalidArgumentError):
        tm.FixedLength(0).pre_tokenize_str("abc")


def test_properties_match_tokenizers():
    pairs = [
        (
            tm.ByteLevel(False, False, True),
            tk.ByteLevel(False, False, True),
            ["add_prefix_space", "trim_offsets", "use_regex"],
        ),
        (
            tm.Split(",", "merged_with_next", True),
            tk.Split(",", "merged_with_next", True),
            ["behavior", "invert"],
        ),
        (tm.Punctuation("contiguous"), tk.Punctuation("contiguous"), ["behavior"]),
        (tm.Digits(True), tk.Digits(True), ["individual_digits"]),
        (
            tm.Metaspace("_", "first", False),
            tk.Metaspace("_", "first", False),
            ["replacement", "prepend_scheme", "split"],
        ),
        (tm.CharDelimiterSplit("x"), tk.CharDelimiterSplit("x"), ["delimiter"]),
        (tm.FixedLength(7), tk.FixedLength(7), ["length"]),
    ]
    for ours, theirs, names in pairs:
        for n in names:
            assert getattr(ours, n) == getattr(theirs, n), n
    assert tm.Split(",", "removed").pattern == ","
    regex = tm.Split(tokenmill.Regex(r"\s+"), "removed").pattern
    assert isinstance(regex, tokenmill.Regex) and regex.pattern == r"\s+"


def test_setters_change_behaviour():
    ours, theirs = tm.ByteLevel(), tk.ByteLevel()
    ours.add_prefix_space = theirs.add_prefix_space = False
    ours.use_regex = theirs.use_regex = False
    assert_same(ours, theirs, "hello world", "after setters")
    assert ours.__getstate__() == theirs.__getstate__()
    m, t = tm.Metaspace(), tk.Metaspace()
    m.replacement = t.replacement = "_"
    m.prepend_scheme = t.prepend_scheme = "never"
    m.split = t.split = False
    assert_same(m, t, " a b  c", "Metaspace after setters")
    s, ts = tm.Split(" ", "removed"), tk.Split(" ", "removed")
    s.behavior = ts.behavior = "merged_with_next"
    s.invert = ts.invert = True
    assert_same(s, ts, " a b  c ", "Split after setters")


def test_alphabet():
    ours = tm.ByteLevel.alphabet()
    assert len(ours) == 256 and sorted(ours) == sorted(tk.ByteLevel.alphabet())


def test_sequence_indexing():
    seq = tm.Sequence([tm.Whitespace(), tm.Sequence([tm.Digits(True), tm.ByteLevel()])])
    assert len(seq) == 3  # nested sequences are flattened, as in tokenizers
    assert isinstance(seq[2], tm.ByteLevel) and seq[2].add_prefix_space is True
    assert isinstance(seq[-1], tm.ByteLevel)
    seq[0] = tm.Punctuation()
    ref = tk.Sequence([tk.Punctuation(), tk.Digits(True), tk.ByteLevel()])
    assert seq.__getstate__() == ref.__getstate__()
    assert_same(seq, ref, "Hello, 42 worlds!", "after __setitem__")
    with pytest.raises(IndexError):
        seq[3]
