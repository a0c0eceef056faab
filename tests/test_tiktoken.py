"""tokenmill.tiktoken against OpenAI's tiktoken, on real text and adversarial strings.

The reference encodings come from `tiktoken.get_encoding` fed offline through
`TIKTOKEN_CACHE_DIR` (files from ../shared/pretrained named by the sha1 of their URL, see its
MANIFEST.md), so they carry tiktoken's own patterns and special tokens.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import tokenmill
from conftest import read_sample, shared_path
from tokenmill import tiktoken as tm
from tokenmill.cli import stdlib_files

tiktoken = pytest.importorskip("tiktoken")

ENCODINGS = ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="session")
def pretrained() -> Path:
    return shared_path("pretrained")


@pytest.fixture(scope="session")
def reference(tiktoken_cache):
    """name → tiktoken.Encoding, loaded offline."""
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache)
    try:
        return {name: tiktoken.get_encoding(name) for name in ENCODINGS + ["o200k_harmony"]}
    finally:
        if old is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def ours(pretrained):
    """name → tokenmill.tiktoken.Encoding, from the same files."""
    return {name: tm.get_encoding(name, path=pretrained) for name in ENCODINGS}


def stdlib_code(max_bytes: int) -> str:
    """The start of the Python standard library sources (corpora MANIFEST section 5), UTF-8 files
    only."""
    parts, size = [], 0
    for p in stdlib_files():
        try:
            text = Path(p).read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
        parts.append(text)
        size += len(text)
        if size >= max_bytes:
            break
    return "".join(parts)


def corpus_samples() -> list[tuple[str, int]]:
    files = [("english_large/gutenberg_en_large_part1.txt", 400_000)]
    root = shared_path("corpora")
    for f in sorted((root / "multilingual").rglob("*.txt")):
        files.append((str(f.relative_to(root)), 120_000))
    return files


@pytest.fixture(scope="module")
def samples():
    root = shared_path("corpora")
    out = {rel: read_sample(root / rel, n) for rel, n in corpus_samples()}
    out["code/stdlib"] = stdlib_code(600_000)
    return out


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_corpora_ids_identical_to_tiktoken(name, reference, ours, samples):
    ref, enc = reference[name], ours[name]
    for rel, text in samples.items():
        want = ref.encode_ordinary(text)
        got = enc.encode_ordinary(text)
        assert got == want, f"{name} differs from tiktoken on {rel}"
        assert enc.decode(got) == text


ADVERSARIAL = [
    "",
    " ",
    "hello world",
    "Hello world",
    "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🇯🇵 flag, ❤️‍🔥",
    "e\u0301\u0301 a\u0308\u0304 \u0301lone \u0301\u0301\u0301",
    "中文没有空格的句子很长很长。日本語のテキストとカタカナ、한국어 문장입니다",
    "مرحبا بالعالم، هذا نص عربي. שלום עולם! \u200f\u200e",
    "\x00\x01\x07\x1b[31mred\x1b[0m\x7f\x85\x9f\ufeff\u200b\u200d",
    "a" * 100_000,
    "é" * 50_000,
    "😀" * 25_000,
    "1" * 100_000,
    "!" * 100_000,
    " " * 100_000,
    "\n" * 100_000,
    " \t\u00a0\u3000\u2003\r\n\u2028\u2029\x0b\x0c\u1680\u202f\u205f" * 500,
    "x" + " " * 1000 + "y\n\n\n  \t \r\n z  ",
    "I'm they're we'VE it'S 'll 'd ſ 'ſ don’t O'NEIL",
    "CamelCaseWORDSandMIXEDcase ǅungla ʰʰʰA",
    "path/to//file.py\n/usr/bin\r\n!!/\n",
    "12345678901234567890 3.14159 ½ ² Ⅻ ٣٤٥",
    "    def f(x):\n        return x  # comment\n\n\n\tfoo\r\n",
]


@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_adversarial_strings_identical_to_tiktoken(name, reference, ours):
    ref, enc = reference[name], ours[name]
    for text in ADVERSARIAL:
        got = enc.encode_ordinary(text)
        assert got == ref.encode_ordinary(text), f"{name}: {text[:40]!r}"
        assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        assert enc.decode(got) == text
        assert enc.decode_bytes(got) == text.encode("utf-8")


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_tokens_like_tiktoken(name, reference, ours):
    ref, enc = reference[name], ours[name]
    assert enc.special_tokens_set == ref.special_tokens_set
    specials = sorted(ref.special_tokens_set)
    text = "start " + " middle ".join(specials) + " end<|endoftext|>"
    for kwargs in [
        dict(allowed_special="all"),
        dict(allowed_special={"<|endoftext|>"}, disallowed_special=()),
        dict(disallowed_special=()),
        dict(allowed_special=set(specials[:1]), disallowed_special=()),
    ]:
        assert enc.encode(text, **kwargs) == ref.encode(text, **kwargs), kwargs
        assert enc.encode_batch([text, "x"], **kwargs) == ref.encode_batch([text, "x"], **kwargs)
    raised = 0
    for kwargs in [
        dict(),
        dict(allowed_special={"<|endoftext|>"}),
        dict(disallowed_special={"<|endoftext|>"}),
    ]:
        try:
            want = ref.encode(text, **kwargs)
        except ValueError as ref_err:
            raised += 1
            with pytest.raises(ValueError) as ours_err:
                enc.encode(text, **kwargs)
            assert str(ours_err.value) == str(ref_err)
        else:
            assert enc.encode(text, **kwargs) == want
    assert raised >= 2
    with pytest.raises(ValueError):
        enc.encode_batch(["fine", "<|endoftext|>"])
    eot = ref.eot_token
    assert enc.eot_token == eot
    assert enc.decode([eot]) == "<|endoftext|>"
    assert enc.encode_single_token("<|endoftext|>") == eot
    assert enc.is_special_token(eot) and not enc.is_special_token(0)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_lone_surrogates_like_tiktoken(name, reference, ours):
    ref, enc = reference[name], ours[name]
    for text in ["\ud800", "abc\udfffdef", "\ud83d\ude00 pair", "x\ud800\ud800y", "\udc00" * 10]:
        assert enc.encode(text) == ref.encode(text), repr(text)
        assert enc.encode_ordinary(text) == ref.encode_ordinary(text), repr(text)
        assert enc.encode_ordinary_batch([text, "ok"]) == ref.encode_ordinary_batch([text, "ok"])


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_vocabulary_and_decoding_helpers_like_tiktoken(name, reference, ours):
    ref, enc = reference[name], ours[name]
    assert enc.name == ref.name
    assert enc.n_vocab == ref.n_vocab
    assert enc.max_token_value == ref.max_token_value
    assert enc.token_byte_values() == ref.token_byte_values()
    assert enc._mergeable_ranks == ref._mergeable_ranks
    text = "Grüße, 世界! 👩‍👩‍👧 def f(): return 42\n"
    ids = ref.encode(text)
    assert enc.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert enc.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    assert [enc.decode_single_token_bytes(t) for t in ids] == [
        ref.decode_single_token_bytes(t) for t in ids
    ]
    partial = (
        ids[:3] + [ref.encode_single_token(b"\xe4")] if b"\xe4" in ref._mergeable_ranks else ids[:3]
    )
    assert enc.decode(partial) == ref.decode(partial)
    assert enc.decode(partial, errors="ignore") == ref.decode(partial, errors="ignore")
    assert enc._encode_single_piece("helloqqqq") == ref._encode_single_piece("helloqqqq")
    with pytest.raises(KeyError):
        enc.encode_single_token(b"\x00\x01\x02 not a token")


def test_o200k_harmony_like_tiktoken(reference, pretrained):
    ref = reference["o200k_harmony"]
    enc = tm.get_encoding("o200k_harmony", path=pretrained)
    assert enc.special_tokens_set == ref.special_tokens_set
    assert enc.n_vocab == ref.n_vocab == 201088
    text = (
        "<|start|>user<|message|>Hi there<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello!<|return|><|endofprompt|>"
    )
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    ids = enc.encode(text, allowed_special="all")[
        :-1
    ]  # 200018 has two names: decoding it is ambiguous in tiktoken
    assert enc.decode(ids) == ref.decode(ids)


def test_unknown_ids_raise_a_tokenmill_key_error(ours):
    enc = ours["cl100k_base"]
    for bad in ([10**9], [100261], [5, 100_500]):
        with pytest.raises(KeyError):
            enc.decode(bad)
        with pytest.raises(tokenmill.UnknownIdError) as err:
            enc.decode_bytes(bad)
        assert str(bad[-1]) in str(err.value)
    with pytest.raises(tokenmill.TokenmillError):
        enc.decode_single_token_bytes(10**9)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_batches_and_numpy_path(name, reference, ours, samples):
    ref, enc = reference[name], ours[name]
    texts = [t[i : i + 1000] for t in samples.values() for i in range(0, 20_000, 1000)]
    want = ref.encode_ordinary_batch(texts)
    assert enc.encode_ordinary_batch(texts, num_threads=2) == want
    assert enc.encode_batch(texts, disallowed_special=()) == ref.encode_batch(
        texts, disallowed_special=()
    )
    ids, offsets = enc.encode_ordinary_batch_to_numpy(texts)
    assert ids.dtype == np.uint32 and offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
    for i, w in enumerate(want):
        assert ids[offsets[i] : offsets[i + 1]].tolist() == w
    assert enc.encode_to_numpy(texts[0]).tolist() == want[0]
    assert enc.decode_batch(want[:5]) == ref.decode_batch(want[:5])


def test_encodings_sharing_a_thread_keep_their_own_piece_caches(reference, ours, samples):
    """Pieces are cached per thread and encoding: interleaving encodings (two of them with the
    same pattern but different ranks) on one thread must never replay another one's tokens."""
    cl100k = reference["cl100k_base"]
    # cl100k's pattern with r50k's ranks: the same pieces, other tokens.
    r50k_ranks = reference["r50k_base"]._mergeable_ranks
    ref_mixed = tiktoken.Encoding(
        "mixed", pat_str=cl100k._pat_str, mergeable_ranks=r50k_ranks, special_tokens={}
    )
    ours_mixed = tm.Encoding(
        "mixed", pat_str=cl100k._pat_str, mergeable_ranks=r50k_ranks, special_tokens={}
    )
    pairs = [
        (ours["cl100k_base"], cl100k),
        (ours_mixed, ref_mixed),
        (ours["o200k_base"], reference["o200k_base"]),
    ]
    text = samples["english_large/gutenberg_en_large_part1.txt"][:30_000]
    for start in range(0, len(text), 5_000):
        chunk = text[start : start + 5_000]
        for enc, ref in pairs:
            assert enc.encode_ordinary(chunk) == ref.encode_ordinary(chunk)


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base"])
def test_encoding_built_from_ranks_dict(name, reference, pretrained):
    ref = reference[name]
    enc = tm.Encoding(
        name + "_copy",
        pat_str=ref._pat_str,
        mergeable_ranks=ref._mergeable_ranks,
        special_tokens=ref._special_tokens,
        explicit_n_vocab={"r50k_base": 50257}.get(name),  # cl100k has unused ids
    )
    text = "Hello, world! The quick brown fox <|endoftext|> jumps.\n\n  "
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    with pytest.raises(tokenmill.InvalidArgumentError):
        tm.Encoding(
            "bad",
            pat_str=ref._pat_str,
            mergeable_ranks=ref._mergeable_ranks,
            special_tokens=ref._special_tokens,
            explicit_n_vocab=ref.n_vocab + 1,
        )


def test_custom_pattern_uses_the_general_regex_engine(reference):
    ref = reference["cl100k_base"]
    pat = r"""\w+|[^\w\s]+|\s+"""
    enc = tm.Encoding("words", pat_str=pat, mergeable_ranks=ref._mergeable_ranks, special_tokens={})
    assert not enc._core_bpe.uses_scanner
    assert tm.get_encoding("cl100k_base", path=shared_path("pretrained"))._core_bpe.uses_scanner
    ref_words = tiktoken.Encoding(
        "words", pat_str=pat, mergeable_ranks=ref._mergeable_ranks, special_tokens={}
    )
    text = "Don't split_me, please: x+y=42 ünïcödé"
    assert enc.encode_ordinary(text) == ref_words.encode_ordinary(text)


def test_p50k_derived_from_r50k_matches_the_p50k_file(pretrained, tmp_path, ours):
    (tmp_path / "r50k_base.tiktoken").symlink_to(pretrained / "whisper" / "gpt2.tiktoken")
    derived = tm.get_encoding("p50k_base", path=tmp_path)
    assert derived._mergeable_ranks == ours["p50k_base"]._mergeable_ranks
    assert derived.n_vocab == 50281


def test_get_encoding_never_downloads(tmp_path, monkeypatch):
    monkeypatch.delenv("TOKENMILL_TIKTOKEN_DIR", raising=False)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    with pytest.raises(tokenmill.TokenmillIOError, match="cl100k_base"):
        tm.get_encoding("cl100k_base", path=tmp_path)
    with pytest.raises(ValueError):
        tm.get_encoding("no_such_encoding")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    url = "https://example.com/x.tiktoken"
    with pytest.raises(tokenmill.TokenmillIOError) as err:
        tm.load_tiktoken_bpe(url)
    assert str(tmp_path / hashlib.sha1(url.encode()).hexdigest()) in str(err.value)


def test_get_encoding_from_env_dir(pretrained, monkeypatch, reference):
    monkeypatch.setenv("TOKENMILL_TIKTOKEN_DIR", str(pretrained))
    enc = tm.get_encoding("o200k_base")
    assert (
        enc.encode("hello world") == [24912, 2375] == reference["o200k_base"].encode("hello world")
    )


def test_pickle_round_trip(ours):
    enc = ours["cl100k_base"]
    again = pickle.loads(pickle.dumps(enc))
    assert again.encode("pickled text") == enc.encode("pickled text")
    small = tm.Encoding(
        "small",
        pat_str=enc._pat_str,
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={},
    )
    assert pickle.loads(pickle.dumps(small)).encode("abc") == [97, 98, 99]


def test_rank_files_read_and_write_like_tiktoken(pretrained, tmp_path):
    import tiktoken.load

    path = pretrained / "cl100k_base" / "cl100k_base.tiktoken"
    ranks = tm.load_tiktoken_bpe(path)
    assert ranks == tiktoken.load.load_tiktoken_bpe(str(path))
    out = tmp_path / "copy.tiktoken"
    tm.dump_tiktoken_bpe(ranks, out)
    # tiktoken's dump_tiktoken_bpe needs blobfile; its format is the one of the original file.
    assert out.read_bytes() == path.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".") or "tmp" in p.name] == []


@pytest.mark.parametrize(
    "content, line",
    [
        (b"YQ== 0\nYg==\n", 2),
        (b"YQ== 0\nYg== 1\n%%% 2\n", 3),
        (b"YQ== zero\n", 1),
        (b"YQ== 0\nYg== 0\n", 2),
        (b"YQ== 0\n\nYQ== 1\n", 3),
        (b"YQ== 0 1\n", 1),
        (b"YQ== -1\n", 1),
    ],
)
def test_bad_rank_files_raise_format_error_naming_file_and_line(tmp_path, content, line):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(tokenmill.FormatError) as err:
        tm.load_tiktoken_bpe(path)
    assert str(path) in str(err.value) and f"line {line}" in str(err.value)
    with pytest.raises(tokenmill.FormatError):
        tm.get_encoding("cl100k_base", path=path)


def test_missing_rank_file_is_an_io_error(tmp_path):
    with pytest.raises(tokenmill.TokenmillIOError):
        tm.load_tiktoken_bpe(tmp_path / "absent.tiktoken")
