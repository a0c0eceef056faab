"""tokenmill.normalizers against tokenizers.normalizers: outputs, alignments, JSON, pickling.

Each normalizer is built twice from the same description, once with tokenmill and once with
tokenizers, and both run on samples of every corpus in ../shared/corpora, on Python standard
library sources (the code corpus) and on adversarial strings. Alignments are compared per
normalized character: tokenmill exposes them as ``NormalizedString.alignments``; for tokenizers
we read them from a Tokenizer whose pre-tokenizer isolates every character, so each token's
offsets are the original span of one normalized character.
"""

from __future__ import annotations

import copy
import json
import pickle
import sysconfig
from pathlib import Path

import pytest
import tokenizers
import tokenizers.models
import tokenmill
from conftest import SHARED, protobuf_fields, read_sample, shared_path
from tokenizers import normalizers as tk_normalizers, pre_tokenizers as tk_pre_tokenizers
from tokenizers.models import WordLevel
from tokenmill import normalizers as tm_normalizers

# ---------------------------------------------------------------------------------------------
# The normalizers under test, as builders taking (normalizers module, Regex class).

CONFIGS = {
    "NFC": lambda N, R: N.NFC(),
    "NFD": lambda N, R: N.NFD(),
    "NFKC": lambda N, R: N.NFKC(),
    "NFKD": lambda N, R: N.NFKD(),
    "Lowercase": lambda N, R: N.Lowercase(),
    "StripAccents": lambda N, R: N.StripAccents(),
    "Nmt": lambda N, R: N.Nmt(),
    "ByteLevel": lambda N, R: N.ByteLevel(),
    "Strip": lambda N, R: N.Strip(),
    "Strip-left": lambda N, R: N.Strip(left=True, right=False),
    "Strip-right": lambda N, R: N.Strip(left=False, right=True),
    "Replace-str": lambda N, R: N.Replace(" ", "▁"),
    "Replace-str-delete": lambda N, R: N.Replace("th", ""),
    "Replace-str-grow": lambda N, R: N.Replace("e", "[E]"),
    "Replace-regex": lambda N, R: N.Replace(R(r"\s+"), " "),
    "Replace-regex-vowels": lambda N, R: N.Replace(R("[aeioué]+"), "V"),
    "Prepend": lambda N, R: N.Prepend("▁"),
    "Bert": lambda N, R: N.BertNormalizer(),
    "Bert-cased": lambda N, R: N.BertNormalizer(lowercase=False),
    "Bert-strip-cased": lambda N, R: N.BertNormalizer(strip_accents=True, lowercase=False),
    "Bert-lower-keep-accents": lambda N, R: N.BertNormalizer(strip_accents=False),
    "Bert-no-clean-no-cjk": lambda N, R: N.BertNormalizer(
        clean_text=False, handle_chinese_chars=False
    ),
    "Seq-strip-accents": lambda N, R: N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase()]),
    "Seq-t5-like": lambda N, R: N.Sequence([N.Nmt(), N.NFKC(), N.Replace(R(" {2,}"), " ")]),
    "Seq-llama-like": lambda N, R: N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]),
    "Seq-nested": lambda N, R: N.Sequence(
        [N.Strip(), N.Sequence([N.NFKC(), N.Lowercase()]), N.StripAccents()]
    ),
}


def build(name):
    """The (tokenmill, tokenizers) pair for a config name."""
    return CONFIGS[name](tm_normalizers, tokenmill.Regex), CONFIGS[name](
        tk_normalizers, tokenizers.Regex
    )


def spm_charsmap(path: Path) -> bytes:
    """The precompiled_charsmap of a SentencePiece model file (protobuf: ModelProto field 3 =
    NormalizerSpec, its field 2 = the charsmap)."""
    for number, value in protobuf_fields(path.read_bytes()):
        if number == 3:
            for inner_number, inner_value in protobuf_fields(value):
                if inner_number == 2:
                    return bytes(inner_value)
    raise ValueError(f"{path} has no precompiled_charsmap")


SPM_MODELS = [
    "botchan_en_unigram_1000.model",
    "botchan_en_bpe_1000.model",
    "kyoto_ja_unigram_8000.model",
]


def precompiled_pair(model: str):
    charsmap = spm_charsmap(shared_path("pretrained", "sentencepiece_test", model))
    return tm_normalizers.Precompiled(charsmap), tk_normalizers.Precompiled(charsmap)


# ---------------------------------------------------------------------------------------------
# Texts.

ADVERSARIAL = [
    "",
    " ",
    "   leading and trailing   ",
    "e\u0301 a\u0300\u0323 o\u0308\u0304 \u1e9b\u0323",  # combining sequences, reordering
    "\u0301 starts with a lone combining mark",
    "\u0301",
    "ﬁﬂﬃ ﬀ ½ ⅞ ① ㈱ ㎏ Ｈｅｌｌｏ ｶﾞ ™ ℌ",  # ligatures and compatibility chars
    "한국어 \u1112\u1161\u11ab\u1100\u116e\u11a8 각",  # Hangul, precomposed and as jamo
    "👩\u200d👩\u200d👧\u200d👦 🇫🇷 👍🏽 ❤️",  # emoji ZWJ sequences, flags, modifiers
    "ctrl\x00\x01\x07\x1b\x7f\x85\u200b\u200d\ufeff\ufffd end",  # control and format chars
    "tabs\tnew\nlines\r\n\u00a0nbsp\u3000ideo\u2028ls\u2029ps\u1680ogham",  # whitespace kinds
    "İstanbul ΣΑΣ ß ǅ ﬃ Ǆ ᾼ",  # case mappings that change length
    "中文字符测试 日本語のテキスト 𠀀𪜀 한자 漢字",  # CJK incl. supplementary planes
    "مرحبا بالعالم — שלום עולם",  # right to left
    "नमस्ते दुनिया क्षत्रिय",  # Devanagari with combining signs
    # math alphanumerics, roman numerals, superscripts
    "\U0001d400\U0001d41a 𝔄𝔅 \u2163 \u00b2\u2075",
    "a" * 100_000,
    "th" * 20_000 + "e",
    "é" * 50_000,
]


def corpus_files():
    """Every text file of ../shared/corpora (small samples of each are used)."""
    root = shared_path("corpora")
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.name not in {"MANIFEST.md", "LICENSE.txt"}
    )
    assert files, f"no corpus files under {root}"
    return files


def code_files():
    """Python standard library sources: the code corpus."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [
        stdlib / name
        for name in ("json/decoder.py", "textwrap.py", "unicodedata.py", "difflib.py")
        if (stdlib / name).exists()
    ]


def corpus_samples(max_bytes):
    samples = {
        p.relative_to(SHARED / "corpora").as_posix(): read_sample(p, max_bytes)
        for p in corpus_files()
    }
    for p in code_files():
        samples[f"stdlib/{p.name}"] = read_sample(p, max_bytes)
    return samples


@pytest.fixture(scope="module")
def samples():
    return corpus_samples(40_000)


@pytest.fixture(scope="module")
def mixed_text():
    """A few kB of every corpus, one string: covers all scripts at once for alignment checks."""
    return "\n".join(text[:2_500] for text in corpus_samples(5_000).values())


# ---------------------------------------------------------------------------------------------
# Alignments.


def tokenizers_alignments(normalizer, text):
    """Per normalized char, its (start, end) char span in `text`, as tokenizers computes it."""
    tok = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = tk_pre_tokenizers.Split(tokenizers.Regex(r"[\s\S]"), "isolated")
    return [tuple(o) for o in tok.encode(text).offsets]


def tokenmill_alignments(normalizer, text):
    n = tokenmill.NormalizedString(text)
    normalizer.normalize(n)
    return n.normalized, [tuple(a) for a in n.alignments]


def assert_same_alignments(tm, tk, text, label):
    normalized, got = tokenmill_alignments(tm, text)
    expected_normalized = tk.normalize_str(text)
    assert normalized == expected_normalized, f"{label}: normalized text differs"
    expected = tokenizers_alignments(tk, text)
    assert len(got) == len(expected) == len(normalized), label
    if got != expected:
        i = next(k for k, (a, b) in enumerate(zip(got, expected)) if a != b)
        pytest.fail(
            f"{label}: alignment of normalized char {i} ({normalized[i]!r}) is {got[i]}, "
            f"tokenizers says {expected[i]}"
        )


# ---------------------------------------------------------------------------------------------
# Tests.


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_normalize_str_matches_tokenizers_on_corpora(name, samples):
    tm, tk = build(name)
    for label, text in samples.items():
        assert tm.normalize_str(text) == tk.normalize_str(text), f"{name} on {label}"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_normalize_str_matches_tokenizers_on_adversarial_strings(name):
    tm, tk = build(name)
    for text in ADVERSARIAL:
        assert tm.normalize_str(text) == tk.normalize_str(text), f"{name} on {text[:40]!r}"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_alignments_match_tokenizers(name, mixed_text):
    tm, tk = build(name)
    assert_same_alignments(tm, tk, mixed_text, f"{name} on the corpus mix")
    for text in ADVERSARIAL:
        if len(text) <= 5_000:
            assert_same_alignments(tm, tk, text, f"{name} on {text[:40]!r}")


@pytest.mark.parametrize("model", SPM_MODELS)
def test_precompiled_matches_tokenizers(model, samples, mixed_text):
    tm, tk = precompiled_pair(model)
    for label, text in samples.items():
        assert tm.normalize_str(text) == tk.normalize_str(text), f"Precompiled({model}) on {label}"
    for text in ADVERSARIAL:
        assert tm.normalize_str(text) == tk.normalize_str(text), (
            f"Precompiled({model}) on {text[:40]!r}"
        )
    assert_same_alignments(tm, tk, mixed_text, f"Precompiled({model}) on the corpus mix")
    for text in ADVERSARIAL[:16]:
        assert_same_alignments(tm, tk, text, f"Precompiled({model}) on {text[:40]!r}")
    assert tm.__getstate__() == tk.__getstate__()


@pytest.mark.parametrize("name", ["Bert", "NFKC", "Seq-strip-accents", "Replace-str"])
def test_one_megabyte_string(name, samples):
    """A 1 MB multilingual string: same output (and no quadratic blow-up); for the BERT
    normalizer (the one with most steps) also the same alignments."""
    text = "".join(samples.values())
    text = (text * (1_000_000 // max(len(text), 1) + 1))[:1_000_000]
    tm, tk = build(name)
    if name == "Bert":
        assert_same_alignments(tm, tk, text, f"{name} on 1 MB")
    else:
        assert tm.normalize_str(text) == tk.normalize_str(text)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_json_matches_tokenizers_both_ways(name):
    tm, tk = build(name)
    tk_state = tk.__getstate__()
    # tokenmill writes exactly what tokenizers writes (same keys, same order)...
    assert tm.__getstate__() == tk_state
    # ...reads what tokenizers writes, and writes it back unchanged...
    restored = copy.copy(tm)
    restored.__setstate__(tk_state)
    assert restored.__getstate__() == tk_state
    # ...and tokenizers reads what tokenmill writes, into the same behaviour.
    tk_restored = build(name)[1]
    tk_restored.__setstate__(tm.__getstate__())
    text = ADVERSARIAL[11] + ADVERSARIAL[3]
    assert tk_restored.normalize_str(text) == tm.normalize_str(text)
    # The JSON is also the one inside a whole tokenizer.json.
    tok = tokenizers.Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = tk
    assert json.loads(tok.to_str())["normalizer"] == json.loads(tm.__getstate__())


def test_legacy_json_without_type_is_read():
    strip = tm_normalizers.Strip()
    strip.__setstate__(b'{"strip_left":false,"strip_right":true}')
    assert (strip.left, strip.right) == (False, True)
    prepend = tm_normalizers.Prepend()
    prepend.__setstate__(b'{"prepend":"a"}')
    assert prepend.normalize_str("b") == "ab"


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_repr_and_pickle(name):
    tm, tk = build(name)
    assert repr(tm) == repr(tk)
    clone = pickle.loads(pickle.dumps(tm))
    assert type(clone) is type(tm)
    assert clone.__getstate__() == tm.__getstate__()
    assert clone.normalize_str(ADVERSARIAL[11]) == tk.normalize_str(ADVERSARIAL[11])


def test_properties_get_and_set_like_tokenizers():
    tm, tk = build("Bert")
    text = "Héllo WÖRLD 中文\t!"
    for attr, value in [
        ("lowercase", False),
        ("strip_accents", True),
        ("handle_chinese_chars", False),
        ("clean_text", False),
    ]:
        assert getattr(tm, attr) == getattr(tk, attr)
        setattr(tm, attr, value)
        setattr(tk, attr, value)
        assert getattr(tm, attr) == value
        assert tm.normalize_str(text) == tk.normalize_str(text)
    strip_tm, strip_tk = tm_normalizers.Strip(), tk_normalizers.Strip()
    strip_tm.left = strip_tk.left = False
    assert strip_tm.normalize_str("  a  ") == strip_tk.normalize_str("  a  ")
    prepend_tm, prepend_tk = tm_normalizers.Prepend(), tk_normalizers.Prepend()
    assert prepend_tm.prepend == prepend_tk.prepend == "▁"
    prepend_tm.prepend = prepend_tk.prepend = "#"
    assert prepend_tm.normalize_str("x") == prepend_tk.normalize_str("x")
    replace_tm, replace_tk = build("Replace-regex")
    assert replace_tm.content == replace_tk.content
    replace_tm.content = replace_tk.content = "_"
    assert replace_tm.normalize_str("a  b") == replace_tk.normalize_str("a  b")
    assert isinstance(replace_tm.pattern, tokenmill.Regex) and replace_tm.pattern.pattern == r"\s+"
    assert tm_normalizers.Replace("ab", "").pattern == "ab"


def test_sequence_indexing_like_tokenizers():
    tm, tk = build("Seq-nested")
    assert len(tm) == len(tk) == 4  # nested sequences are flattened
    for i in range(len(tk)):
        assert type(tm[i]).__name__ == type(tk[i]).__name__
        assert repr(tm[i]) == repr(tk[i])
    assert repr(tm[-1]) == repr(tk[3])
    with pytest.raises(IndexError):
        tm[4]
    tm[0] = tm_normalizers.Lowercase()
    tk[0] = tk_normalizers.Lowercase()
    assert tm.normalize_str(" ÀB ") == tk.normalize_str(" ÀB ")
    assert isinstance(tm[1], tm_normalizers.NFKC) and isinstance(tm[1], tm_normalizers.Normalizer)


def test_bad_input_raises_tokenmill_errors():
    with pytest.raises(tokenmill.FormatError, match="regex"):
        tokenmill.Regex("(unclosed")
    with pytest.raises(tokenmill.FormatError):
        tm_normalizers.Precompiled(b"\x01\x02")
    with pytest.raises(tokenmill.FormatError):
        tm_normalizers.Precompiled(b"\xff\xff\xff\x7f")
    replace = tm_normalizers.Replace("a", "b")
    with pytest.raises(tokenmill.FormatError, match="regex"):
        replace.__setstate__(b'{"type":"Replace","pattern":{"Regex":"("},"content":""}')
    with pytest.raises(tokenmill.FormatError, match="unknown normalizer type"):
        replace.__setstate__(b'{"type":"Nope"}')
    with pytest.raises(TypeError):
        tm_normalizers.NFC().__setstate__(b'{"type":"NFD"}')
    with pytest.raises(TypeError):
        tm_normalizers.Replace(3, "x")
    with pytest.raises(TypeError):
        tm_normalizers.Sequence(["NFC"])


def test_normalized_string_api_matches_tokenizers():
    text = "  Héllo, ﬁne WORLD! 中文  "
    tm, tk = tokenmill.NormalizedString(text), tokenizers.NormalizedString(text)
    for method in ["nfkd", "lowercase", "strip", "nfc", "uppercase", "lstrip", "nfd", "nfkc"]:
        getattr(tm, method)()
        getattr(tk, method)()
        assert tm.normalized == tk.normalized, method
    tm.append("!?")
    tk.append("!?")
    tm.prepend(">>")
    tk.prepend(">>")
    tm.replace("L", "ll")
    tk.replace("L", "ll")
    tm.replace(tokenmill.Regex("[,!]"), "")
    tk.replace(tokenizers.Regex("[,!]"), "")
    tm.filter(lambda c: c != "O")
    tk.filter(lambda c: c != "O")
    tm.map(lambda c: "_" if c == " " else c)
    tk.map(lambda c: "_" if c == " " else c)
    assert (tm.normalized, tm.original, str(tm)) == (tk.normalized, tk.original, str(tk))
    for behavior in [
        "removed",
        "isolated",
        "merged_with_previous",
        "merged_with_next",
        "contiguous",
    ]:
        got = [p.normalized for p in tm.split("_", behavior)]
        expected = [p.normalized for p in tk.split("_", behavior) if p.normalized]
        assert got == expected, behavior
    assert tm[2:6].normalized == tk[2:6].normalized
    assert tm.slice((1, 4)).original == tk.slice((1, 4)).original
    assert tm[0].normalized == tk[0].normalized
    seen = []
    tm.for_each(seen.append)
    assert "".join(seen) == tm.normalized
    tm.clear()
    assert tm.normalized == ""
    assert repr(tokenmill.NormalizedString("a")) == repr(tokenizers.NormalizedString("a"))


def test_normalized_string_callbacks_propagate_errors():
    n = tokenmill.NormalizedString("abc")
    with pytest.raises(ZeroDivisionError):
        n.filter(lambda c: 1 / 0)
    with pytest.raises(ValueError, match="one character"):
        n.map(lambda c: c * 2)
    assert n.normalized == "abc"


def test_unicode_normalizer_from_str():
    assert isinstance(tm_normalizers.unicode_normalizer_from_str("nfkc"), tm_normalizers.NFKC)
    with pytest.raises(ValueError):
        tm_normalizers.unicode_normalizer_from_str("nfx")
    assert tm_normalizers.ByteLevel.alphabet() and len(tm_normalizers.ByteLevel.alphabet()) == 256


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_offsets_through_a_whole_tokenizer(name, mixed_text):
    """Token offsets after normalization, through the whole pipeline (WhitespaceSplit + a
    char-level BPE), equal tokenizers'; the tokenizer.json written by tokenizers loads in
    tokenmill and encodes the same."""
    tm_norm, tk_norm = build(name)
    text = mixed_text[:30_000] + "\n" + "\n".join(t for t in ADVERSARIAL if len(t) < 1000)
    vocab = {"[UNK]": 0}
    for c in sorted(set(tk_norm.normalize_str(text))):
        vocab.setdefault(c, len(vocab))
    tk = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, [], unk_token="[UNK]"))
    tk.normalizer = tk_norm
    tk.pre_tokenizer = tk_pre_tokenizers.WhitespaceSplit()
    tm = tokenmill.Tokenizer(tokenmill.models.BPE(vocab, [], unk_token="[UNK]"))
    tm.normalizer = tm_norm
    tm.pre_tokenizer = tokenmill.pre_tokenizers.WhitespaceSplit()
    for line in text.split("\n"):
        expected = tk.encode(line)
        got = tm.encode(line)
        assert got.ids == expected.ids, f"{name} on {line[:40]!r}"
        assert got.offsets == expected.offsets, f"{name} on {line[:40]!r}"
    from_json = tokenmill.Tokenizer.from_str(tk.to_str())
    assert from_json.encode(text).offsets == tk.encode(text).offsets


def test_replace_regex_anchors_match_at_lines_as_in_tokenizers():
    # tokenizers compiles Replace's regex with Oniguruma (Ruby syntax): `^` and `$` match at
    # every line, `\A` and `\z` at the ends of the text.
    text = "a\n b \n  c\n d"
    for pattern in ["^ +| +$", " +$", "^ +", r"\A +| +\z", "(?m:^ +)"]:
        ours = tm_normalizers.Replace(tokenmill.Regex(pattern), "_").normalize_str(text)
        theirs = tk_normalizers.Replace(tokenizers.Regex(pattern), "_").normalize_str(text)
        assert ours == theirs, pattern
