"""tokenmill.tiktoken's module layout, model table, cache lookup, ``_encode_bytes`` and
``encode_with_unstable`` against the real tiktoken, both reading the same offline cache
folder (files named by the sha1 of their URL, as tiktoken lays it out)."""

from __future__ import annotations

import hashlib
import pickle
import random

import pytest
import tokenmill
from conftest import TIKTOKEN_FILES, make_tiktoken_cache, read_sample, shared_path
from tokenmill import tiktoken as tm

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")
tiktoken_model = pytest.importorskip("tiktoken.model")
tiktoken_registry = pytest.importorskip("tiktoken.registry")

NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module", autouse=True)
def offline_cache(tiktoken_cache):
    """Both libraries read the same cache folder; tokenmill's own folder variable is unset."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
        mp.delenv("TOKENMILL_TIKTOKEN_DIR", raising=False)
        yield tiktoken_cache


@pytest.fixture(scope="module")
def pairs():
    """name → (tiktoken encoding, tokenmill encoding), both from the cache folder."""
    return {name: (tiktoken.get_encoding(name), tm.get_encoding(name)) for name in NAMES}


@pytest.fixture(scope="module")
def texts():
    root = shared_path("corpora")
    out = [read_sample(root / "english_large" / "gutenberg_en_large_part1.txt", 20_000)]
    out += [read_sample(p, 6_000) for p in sorted((root / "multilingual").rglob("*.txt"))[:8]]
    return out


# ---- modules and tables ----


@pytest.mark.parametrize("module", ["", "core", "load", "registry", "model"])
def test_modules_expose_tiktokens_public_names(module):
    theirs = tiktoken if not module else getattr(tiktoken, module)
    ours = tm if not module else getattr(tm, module)
    public = {
        name
        for name, value in vars(theirs).items()
        if not name.startswith("_")
        and (
            isinstance(value, dict) or (callable(value) and value.__module__.startswith("tiktoken"))
        )
    }
    assert public, "the filter should find tiktoken's names"
    assert sorted(name for name in public if not hasattr(ours, name)) == []


def test_model_tables_and_errors_match_tiktoken():
    assert tm.model.MODEL_TO_ENCODING == tiktoken_model.MODEL_TO_ENCODING
    assert list(tm.model.MODEL_PREFIX_TO_ENCODING.items()) == list(
        tiktoken_model.MODEL_PREFIX_TO_ENCODING.items()
    )
    probes = list(tiktoken_model.MODEL_TO_ENCODING)
    probes += [prefix + "2024-05-13" for prefix in tiktoken_model.MODEL_PREFIX_TO_ENCODING]
    probes += ["gpt-4o-mini", "gpt-5-nano", "ft:gpt-4o-mini:org::id", "gpt-3.5-turbo-FAKE"]
    for model in probes:
        assert tm.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model), model
    for unknown in ["llama-3", "", "GPT-4"]:
        with pytest.raises(KeyError) as ours:
            tm.encoding_name_for_model(unknown)
        with pytest.raises(KeyError) as theirs:
            tiktoken.encoding_name_for_model(unknown)
        assert str(ours.value) == str(theirs.value)


def test_encoding_for_model_loads_from_the_cache(pairs):
    for model in ["gpt2", "text-davinci-003", "gpt-4", "gpt-4o", "gpt-oss-120b"]:
        enc = tm.encoding_for_model(model)
        assert enc.name == tiktoken.encoding_for_model(model).name
        assert enc is tm.get_encoding(enc.name)
    assert tm.list_encoding_names() == tiktoken.list_encoding_names()


def test_registry_constructors_give_tiktokens_arguments():
    ours = tm.registry.ENCODING_CONSTRUCTORS["r50k_base"]()
    theirs = tiktoken_registry.ENCODING_CONSTRUCTORS["r50k_base"]()
    assert ours == theirs
    assert tm.Encoding(**ours).encode("hello world") == [31373, 995]


def test_registered_encodings_pickle_by_name(pairs):
    enc = pairs["cl100k_base"][1]
    assert enc.__getstate__() == "cl100k_base"
    assert pickle.loads(pickle.dumps(enc)).encode("pickled") == enc.encode("pickled")


# ---- rank files from the cache folder ----


def test_load_by_url_reads_the_cache_like_tiktoken():
    url = "https://openaipublic.blob.core.windows.net/encodings/p50k_base.tiktoken"
    sha = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
    assert tm.load.load_tiktoken_bpe(url, expected_hash=sha) == tiktoken_load.load_tiktoken_bpe(
        url, expected_hash=sha
    )
    with pytest.raises(ValueError, match="sha256"):
        tm.load.load_tiktoken_bpe(url, expected_hash="0" * 64)


def test_data_gym_ranks_match_tiktoken():
    vocab, encoder = [url for url in TIKTOKEN_FILES if "gpt-2" in url]
    ours = tm.load.data_gym_to_mergeable_bpe_ranks(vocab, encoder)
    assert ours == tiktoken_load.data_gym_to_mergeable_bpe_ranks(vocab, encoder)
    local = shared_path("pretrained", "gpt2")
    assert (
        tm.load.data_gym_to_mergeable_bpe_ranks(local / "vocab.bpe", local / "encoder.json") == ours
    )


def test_gpt2_from_the_data_gym_files_alone(tmp_path, monkeypatch, pairs):
    urls = [url for url in TIKTOKEN_FILES if "gpt-2" in url]
    cache = make_tiktoken_cache(tmp_path / "cache", urls)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    enc = tm.get_encoding("gpt2", path=tmp_path / "empty")
    text = read_sample(
        shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"), 30_000
    )
    assert enc.encode(text) == pairs["gpt2"][0].encode(text)


def test_missing_rank_file_says_what_to_put_where(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(tokenmill.TokenmillIOError) as err:
        tm.get_encoding("o200k_base", path=tmp_path)
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    message = str(err.value)
    for needle in [
        url,
        str(tmp_path / "cache" / hashlib.sha1(url.encode()).hexdigest()),
        "path=",
        "o200k_base.tiktoken",
    ]:
        assert needle in message
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "gym"))
    with pytest.raises(tokenmill.TokenmillIOError, match=str(tmp_path / "gym")):
        tm.get_encoding("o200k_base", path=tmp_path)


def test_a_corrupt_cache_file_is_an_error(tmp_path, monkeypatch):
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"YQ== 0\n")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="sha256"):
        tm.get_encoding("cl100k_base", path=tmp_path / "elsewhere")


def test_ranks_beyond_two_to_the_twenty(tmp_path):
    """tiktoken takes any u32 rank; sparse large ids must load, encode and decode alike."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update(
        {b"he": 1 << 20, b"ll": (1 << 24) + 7, b"hell": (1 << 31) + 1, b" wor": 3_000_000_000}
    )
    path = tmp_path / "sparse.tiktoken"
    tm.dump_tiktoken_bpe(ranks, path)
    assert tm.load_tiktoken_bpe(path) == tiktoken_load.load_tiktoken_bpe(str(path)) == ranks
    specials = {"<|end|>": 4_000_000_000}
    pat = tm.R50K_PAT_STR
    ours = tm.Encoding("sparse", pat_str=pat, mergeable_ranks=ranks, special_tokens=specials)
    theirs = tiktoken.Encoding(
        "sparse", pat_str=pat, mergeable_ranks=ranks, special_tokens=specials
    )
    text = "hello world, hell<|end|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.decode(ours.encode(text, allowed_special="all")) == text
    assert ours.max_token_value == theirs.max_token_value == 4_000_000_000
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert ours._mergeable_ranks == ranks
    with pytest.raises(ValueError, match="reserved"):
        tm.Encoding(
            "bad", pat_str=pat, mergeable_ranks={**ranks, b"x!": 2**32 - 1}, special_tokens={}
        )


# ---- _encode_bytes and encode_with_unstable ----


def cut_points(data: bytes, rng: random.Random, n: int) -> list[int]:
    """Cut positions, many of them inside a multi-byte character."""
    inside = [i for i in range(1, len(data)) if data[i] & 0xC0 == 0x80]
    anywhere = list(range(len(data) + 1))
    return sorted(
        set(rng.sample(inside, min(n, len(inside))) + rng.sample(anywhere, min(n, len(anywhere))))
    )


@pytest.mark.parametrize("name", NAMES[1:])
def test_encode_bytes_like_tiktoken(name, pairs, texts):
    theirs, ours = pairs[name]
    rng = random.Random(15)
    for text in texts:
        data = text.encode()[:3000]
        for cut in cut_points(data, rng, 25):
            for piece in (
                data[:cut],
                data[cut : cut + 40],
                data[:cut] + b"\xff" + data[cut : cut + 10],
            ):
                assert ours._encode_bytes(piece) == theirs._encode_bytes(piece), (piece[-20:], name)
    for blob in [
        b"",
        b"\x80",
        b"\xff\xfe",
        b" \xec\x8b\xa4\xed",
        b"\n\n \xe2\x82",
        bytes(range(256)),
    ]:
        assert ours._encode_bytes(blob) == theirs._encode_bytes(blob)
        assert ours.decode_bytes(ours._encode_bytes(blob)) == blob


@pytest.mark.parametrize("name", NAMES[1:])
def test_encode_with_unstable_like_tiktoken(name, pairs, texts):
    theirs, ours = pairs[name]
    rng = random.Random(20)
    # A prefix ending in a space has ~100k completions (every token starting with one), which
    # takes both libraries a fraction of a second: few of those.
    prefixes = [
        "hello fanta",
        "hello\n\n",
        "x  !",
        "I'",
        "12",
        "<|endoftext|>",
        "",
        "  !",
        "def f():\n    ",
    ]
    prefixes.append("hello " if name == "r50k_base" else "hello  ")
    for text in texts[:6]:
        for end in rng.sample(range(1, min(len(text), 4000)), 8):
            if not text[:end].endswith(" "):
                prefixes.append(text[:end])
    for prefix in prefixes:
        stable, completions = ours.encode_with_unstable(prefix, allowed_special="all")
        ref_stable, ref_completions = theirs.encode_with_unstable(prefix, allowed_special="all")
        assert stable == ref_stable, prefix[-30:]
        assert sorted(completions) == sorted(map(list, ref_completions)) == completions, prefix[
            -30:
        ]
    with pytest.raises(ValueError, match="disallowed special token"):
        ours.encode_with_unstable("<|endoftext|>")
