"""tokenmill.models.BPE against tokenizers.models.BPE on real vocabularies and real text.

The text is pre-split into words here (with tokenizers' own pre-tokenizers) so that only the
model is compared: for every word, the tokens (id, value, byte offsets) must be identical.
"""

from __future__ import annotations

import json
import pickle
import sysconfig
from pathlib import Path

import pytest

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from conftest import (  # noqa: E402
    bytes_to_unicode,
    clip_merges,
    read_sample,
    shared_path,
)
from tokenizers import (  # noqa: E402
    Tokenizer as HFTokenizer,
    models as hf_models,
    pre_tokenizers as hf_pre,
    trainers as hf_trainers,
)
from tokenmill import models  # noqa: E402

MULTILINGUAL = [
    ("multilingual", "ar", "ar_ud_pud_test_text.txt"),
    ("multilingual", "de", "de_pg22367_kafka_die_verwandlung.txt"),
    ("multilingual", "eo", "eo_pg8224_zamenhof_fundamenta_krestomatio_unicode.txt"),
    ("multilingual", "fr", "fr_pg14155_flaubert_madame_bovary.txt"),
    ("multilingual", "hi", "hi_ud_pud_test_text.txt"),
    ("multilingual", "ja", "ja_aozora_soseki_kokoro.txt"),
    ("multilingual", "pl", "pl_pg31536_mickiewicz_pan_tadeusz_t1.txt"),
    ("multilingual", "ru", "ru_ruslit_chekhov_drama_na_okhote.txt"),
    ("multilingual", "zh", "zh_debian_fortunes-zh_2.98.txt"),
]


def corpus_text(max_bytes_each: int = 150_000) -> str:
    """English, every multilingual language, and Python standard-library code, sampled."""
    parts = [
        read_sample(shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 400_000)
    ]
    parts += [read_sample(shared_path("corpora", *p), max_bytes_each) for p in MULTILINGUAL]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code = []
    for name in ["json/decoder.py", "argparse.py", "textwrap.py", "difflib.py"]:
        path = stdlib / name
        if path.exists():
            code.append(path.read_text(encoding="utf-8", errors="surrogateescape"))
    parts.append("".join(code)[:300_000])
    return "\n".join(parts)


def unique_words(text: str, pre_tokenizer) -> list[str]:
    seen = dict.fromkeys(
        w for line in text.splitlines() for w, _ in pre_tokenizer.pre_tokenize_str(line)
    )
    return list(seen)


def as_triples(tokens) -> list[tuple]:
    return [(t.id, t.value, tuple(t.offsets)) for t in tokens]


def assert_same_tokens(ours, theirs, words) -> None:
    mismatches = []
    for w in words:
        a, b = as_triples(ours.tokenize(w)), as_triples(theirs.tokenize(w))
        if a != b:
            mismatches.append((w, a, b))
            if len(mismatches) >= 5:
                break
    assert not mismatches, f"{len(mismatches)}+ words differ, e.g. {mismatches[:3]}"


# ---------------------------------------------------------------- fixtures: real vocabularies


@pytest.fixture(scope="module")
def gpt2_files():
    return shared_path("pretrained", "gpt2", "encoder.json"), shared_path(
        "pretrained", "gpt2", "vocab.bpe"
    )


@pytest.fixture(scope="module")
def gpt2_pair(gpt2_files):
    vocab, merges = gpt2_files
    return models.BPE.from_file(str(vocab), str(merges)), hf_models.BPE.from_file(
        str(vocab), str(merges)
    )


@pytest.fixture(scope="module")
def byte_level_words():
    return unique_words(corpus_text(), hf_pre.ByteLevel(add_prefix_space=False))


@pytest.fixture(scope="module")
def clip_vocab_merges():
    """CLIP's vocabulary and merges, built as the pretrained MANIFEST describes."""
    merges = clip_merges()
    vocab = list(bytes_to_unicode().values())
    vocab += [v + "</w>" for v in vocab]
    vocab += ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    return {t: i for i, t in enumerate(vocab)}, merges


CLIP_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""


@pytest.fixture(scope="module")
def trained_classic():
    """A classic BPE trained by tokenizers on real English (vocab and merges from its JSON),
    once with a continuing-subword prefix and once with an end-of-word suffix."""
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 250_000
    )
    out = {}
    for name, kwargs in {
        "prefix": {"continuing_subword_prefix": "##"},
        "suffix": {"end_of_word_suffix": "</w>"},
    }.items():
        tok = HFTokenizer(hf_models.BPE(unk_token="<unk>", **kwargs))
        tok.pre_tokenizer = hf_pre.Whitespace()
        trainer = hf_trainers.BpeTrainer(
            vocab_size=2000, special_tokens=["<unk>"], show_progress=False, **kwargs
        )
        tok.train_from_iterator(text.splitlines(), trainer=trainer)
        model = json.loads(tok.to_str())["model"]
        out[name] = (model["vocab"], [tuple(m) for m in model["merges"]], kwargs)
    return out


@pytest.fixture(scope="module")
def whitespace_words():
    """Words of English and every multilingual file, split on whitespace and punctuation."""
    return unique_words(corpus_text(60_000), hf_pre.Whitespace())


# ---------------------------------------------------------------- differential tests


def test_gpt2_data_gym_files_match_tokenizers(gpt2_pair, byte_level_words):
    ours, theirs = gpt2_pair
    reference_vocab = HFTokenizer(theirs).get_vocab()  # tokenizers' Model has no get_vocab
    assert ours.get_vocab_size() == len(reference_vocab) == 50257
    assert ours.get_vocab() == reference_vocab
    assert len(byte_level_words) > 20_000
    assert_same_tokens(ours, theirs, byte_level_words)


def test_gpt2_without_cache_and_ignore_merges(gpt2_files, byte_level_words):
    vocab, merges = map(str, gpt2_files)
    ours = models.BPE.from_file(vocab, merges, cache_capacity=0)
    theirs = hf_models.BPE.from_file(vocab, merges, cache_capacity=0)
    assert_same_tokens(ours, theirs, byte_level_words[:5000])
    ours = models.BPE.from_file(vocab, merges, ignore_merges=True)
    theirs = hf_models.BPE.from_file(vocab, merges, ignore_merges=True)
    assert_same_tokens(ours, theirs, byte_level_words)


def test_clip_end_of_word_suffix_matches_tokenizers(clip_vocab_merges):
    vocab, merges = clip_vocab_merges
    assert len(vocab) == 49408
    kwargs = dict(end_of_word_suffix="</w>", unk_token="<|endoftext|>")
    ours, theirs = models.BPE(vocab, merges, **kwargs), hf_models.BPE(vocab, merges, **kwargs)
    pre = hf_pre.Sequence(
        [
            hf_pre.Split(tokenizers.Regex(CLIP_PATTERN), "removed", invert=True),
            hf_pre.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    words = unique_words(corpus_text(80_000).lower(), pre)
    assert len(words) > 10_000
    assert_same_tokens(ours, theirs, words)
    # Without byte-level mapping many characters are unknown: the unk path, fused or not.
    raw_words = unique_words(corpus_text(20_000).lower(), hf_pre.Whitespace())
    for fuse in (False, True):
        ours = models.BPE(vocab, merges, fuse_unk=fuse, **kwargs)
        theirs = hf_models.BPE(vocab, merges, fuse_unk=fuse, **kwargs)
        assert_same_tokens(ours, theirs, raw_words)


@pytest.mark.parametrize("kind", ["prefix", "suffix"])
@pytest.mark.parametrize("fuse_unk", [False, True])
def test_trained_classic_bpe_matches_tokenizers(trained_classic, whitespace_words, kind, fuse_unk):
    vocab, merges, kwargs = trained_classic[kind]
    ours = models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=fuse_unk, **kwargs)
    theirs = hf_models.BPE(vocab, merges, unk_token="<unk>", fuse_unk=fuse_unk, **kwargs)
    assert_same_tokens(ours, theirs, whitespace_words)
    # No unk token: unknown characters are dropped, by both.
    ours = models.BPE(vocab, merges, **kwargs)
    theirs = hf_models.BPE(vocab, merges, **kwargs)
    assert_same_tokens(ours, theirs, whitespace_words[:3000])


def test_byte_fallback_mistral_like(trained_classic, whitespace_words):
    """Mistral/Llama-2 settings: <unk>, <0xNN> byte tokens, byte_fallback, fuse_unk."""
    vocab, merges, _ = trained_classic["suffix"]
    vocab = dict(vocab)
    # Byte tokens for every byte except a few, so both the fallback and the unk path run.
    for b in range(256):
        if b not in (0xE4, 0xD8):
            vocab[f"<0x{b:02X}>"] = len(vocab)
    for fuse in (True, False):
        kwargs = dict(unk_token="<unk>", byte_fallback=True, fuse_unk=fuse)
        ours, theirs = models.BPE(vocab, merges, **kwargs), hf_models.BPE(vocab, merges, **kwargs)
        assert_same_tokens(ours, theirs, whitespace_words)
        kwargs["end_of_word_suffix"] = "</w>"
        ours, theirs = models.BPE(vocab, merges, **kwargs), hf_models.BPE(vocab, merges, **kwargs)
        assert_same_tokens(ours, theirs, whitespace_words)
    assert any(
        t.value.startswith("<0x") for w in whitespace_words[-2000:] for t in ours.tokenize(w)
    )


def test_long_words(gpt2_pair, byte_level_words):
    """A 100 kB word matches tokenizers; a 1 MB word (no spaces) completes."""
    ours, theirs = gpt2_pair
    text = "".join(w.lstrip("Ġ") for w in byte_level_words)
    word = text[:100_000]
    assert as_triples(ours.tokenize(word)) == as_triples(theirs.tokenize(word))
    run = "a" * 100_000
    assert as_triples(ours.tokenize(run)) == as_triples(theirs.tokenize(run))
    big = (text * (1_000_000 // len(text) + 1))[:1_000_000]
    tokens = ours.tokenize(big)
    assert "".join(t.value for t in tokens) == big
    assert tokens[-1].offsets[1] == len(big.encode("utf-8"))


# ---------------------------------------------------------------- dropout


def test_dropout_one_gives_characters(gpt2_files, byte_level_words):
    vocab, merges = map(str, gpt2_files)
    ours = models.BPE.from_file(vocab, merges, dropout=1.0)
    theirs = hf_models.BPE.from_file(vocab, merges, dropout=1.0)
    assert_same_tokens(ours, theirs, byte_level_words[:3000])
    assert all(len(t.value) == 1 for t in ours.tokenize("Ġunbelievably"))


def test_dropout_is_seedable_and_random(gpt2_files, byte_level_words):
    vocab, merges = map(str, gpt2_files)
    words = [w for w in byte_level_words if len(w) >= 6][:2000]
    runs = []
    for _ in range(2):
        model = models.BPE.from_file(vocab, merges, dropout=0.3, dropout_seed=1234)
        runs.append([as_triples(model.tokenize(w)) for w in words])
    assert runs[0] == runs[1], "same seed, same segmentation"
    other = models.BPE.from_file(vocab, merges, dropout=0.3, dropout_seed=99)
    assert [as_triples(other.tokenize(w)) for w in words] != runs[0]
    plain = models.BPE.from_file(vocab, merges)
    n_plain = sum(len(plain.tokenize(w)) for w in words)
    n_drop = sum(len(r) for r in runs[0])
    assert n_drop > n_plain
    for w, tokens in zip(words, runs[0]):
        assert "".join(v for _, v, _ in tokens) == w
    # Same dropout semantics as tokenizers (skipped merges come back after the next merge):
    # over thousands of words the mean number of tokens agrees closely.
    # (About 4 standard deviations of tolerance for 6000 words.)
    many = [w for w in byte_level_words if len(w) >= 6][:6000]
    seeded = models.BPE.from_file(vocab, merges, dropout=0.3, dropout_seed=5)
    theirs = hf_models.BPE.from_file(vocab, merges, dropout=0.3)
    n_ours = sum(len(seeded.tokenize(w)) for w in many)
    n_theirs = sum(len(theirs.tokenize(w)) for w in many)
    assert abs(n_ours - n_theirs) / n_theirs < 0.05, (n_ours, n_theirs)
    for zero in (0.0, None):
        model = models.BPE.from_file(vocab, merges, dropout=zero)
        assert [as_triples(model.tokenize(w)) for w in words[:300]] == [
            as_triples(plain.tokenize(w)) for w in words[:300]
        ]
    with pytest.raises(tokenmill.TokenmillError):
        models.BPE({}, [], dropout=1.5)


# ---------------------------------------------------------------- formats


def model_json(hf_model) -> dict:
    return json.loads(HFTokenizer(hf_model).to_str())["model"]


def test_json_round_trip_and_tokenizers_json_accepted(trained_classic, gpt2_pair, whitespace_words):
    vocab, merges, kwargs = trained_classic["prefix"]
    theirs = hf_models.BPE(vocab, merges, unk_token="<unk>", dropout=0.25, fuse_unk=True, **kwargs)
    reference = model_json(theirs)
    ours = models.BPE()
    ours.__setstate__(json.dumps(reference).encode())
    assert json.loads(ours.__getstate__()) == reference
    assert ours.__getstate__().decode() == json.dumps(
        reference, ensure_ascii=False, separators=(",", ":")
    )
    # Old files: merges as "a b" strings.
    legacy = dict(reference, merges=[f"{a} {b}" for a, b in reference["merges"]], dropout=None)
    ours.__setstate__(json.dumps(legacy).encode())
    theirs.dropout = None
    assert_same_tokens(ours, theirs, whitespace_words[:3000])
    # GPT-2: the whole model section is written byte for byte as tokenizers writes it.
    gpt2_ours, gpt2_theirs = gpt2_pair
    assert gpt2_ours.__getstate__().decode() == json.dumps(
        model_json(gpt2_theirs), ensure_ascii=False, separators=(",", ":")
    )


def test_pickle_and_attributes(trained_classic, whitespace_words):
    vocab, merges, kwargs = trained_classic["suffix"]
    ours = models.BPE(vocab, merges, unk_token="<unk>", **kwargs)
    again = pickle.loads(pickle.dumps(ours))
    assert type(again) is models.BPE and isinstance(again, models.Model)
    assert again.end_of_word_suffix == "</w>" and again.unk_token == "<unk>"
    assert as_triples(again.tokenize("Holmes")) == as_triples(ours.tokenize("Holmes"))
    theirs = hf_models.BPE(vocab, merges, unk_token="<unk>", **kwargs)
    for attr, value in [
        ("unk_token", None),
        ("fuse_unk", True),
        ("end_of_word_suffix", None),
        ("ignore_merges", True),
        ("byte_fallback", True),
        ("continuing_subword_prefix", "##"),
        ("dropout", 0.5),
    ]:
        assert getattr(ours, attr) == getattr(theirs, attr), attr
        setattr(ours, attr, value)
        setattr(theirs, attr, value)
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(models.BPE()) == repr(hf_models.BPE())
    assert repr(models.BPE(vocab, merges)) == repr(hf_models.BPE(vocab, merges))
    assert ours.token_to_id("the</w>") == theirs.token_to_id("the</w>")
    assert ours.id_to_token(5) == theirs.id_to_token(5)
    assert ours.token_to_id("not-a-token") is None and ours.id_to_token(10**9) is None
    trainer = ours.get_trainer()
    assert isinstance(trainer, tokenmill.trainers.BpeTrainer)
    assert trainer.vocab_size == theirs.get_trainer().vocab_size


def test_save_writes_tokenizers_files(tmp_path, trained_classic, gpt2_pair):
    gpt2_ours, gpt2_theirs = gpt2_pair
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ours_files = gpt2_ours.save(str(tmp_path / "ours"))
    theirs_files = gpt2_theirs.save(str(tmp_path / "theirs"))
    assert (
        [Path(p).name for p in ours_files]
        == [Path(p).name for p in theirs_files]
        == ["vocab.json", "merges.txt"]
    )
    for a, b in zip(ours_files, theirs_files):
        assert Path(a).read_bytes() == Path(b).read_bytes()
    named = gpt2_ours.save(str(tmp_path / "ours"), "gpt2")
    assert [Path(p).name for p in named] == ["gpt2-vocab.json", "gpt2-merges.txt"]
    vocab, merges = models.BPE.read_file(*named)
    assert (vocab, merges) == hf_models.BPE.read_file(*theirs_files)
    assert list(tmp_path.joinpath("ours").iterdir()).__len__() == 4, (
        "no temporary files left behind"
    )


def write(tmp_path: Path, name: str, data) -> str:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


def test_malformed_files_raise_format_error(tmp_path):
    vocab = write(tmp_path, "vocab.json", '{"a": 0, "b": 1, "ab": 2, "c": 3}')
    cases = {
        "three.txt": ("#version: 0.2\na b\na b c\n", "line 3"),
        "empty_line.txt": ("#version: 0.2\n\na b\n", "line 2"),
        "unknown.txt": ("#version: 0.2\na b\nab zz\n", "line 3"),
        "unmerged.txt": ("a c\n", "line 1"),
        "utf8.txt": (b"#version: 0.2\na b\n\xff\xfe b\n", "line 3"),
    }
    for name, (content, where) in cases.items():
        merges = write(tmp_path, name, content)
        with pytest.raises(tokenmill.FormatError) as info:
            models.BPE.from_file(vocab, merges)
        message = str(info.value)
        assert name in message and where in message, message
    good_merges = write(tmp_path, "good.txt", "a b\n")
    bad_vocab = write(tmp_path, "bad_vocab.json", '{"a": 0,\n "b": "one"}')
    with pytest.raises(tokenmill.FormatError, match=r"bad_vocab\.json:line 2"):
        models.BPE(bad_vocab, good_merges)
    not_json = write(tmp_path, "not_json.json", "[1, 2")
    with pytest.raises(tokenmill.FormatError, match=r"not_json\.json"):
        models.BPE.read_file(not_json, good_merges)
    with pytest.raises(tokenmill.TokenmillIOError, match="missing"):
        models.BPE.from_file(str(tmp_path / "missing.json"), good_merges)
    with pytest.raises(tokenmill.TokenmillError, match="zz"):
        models.BPE({"a": 0}, [("a", "zz")])
    model = models.BPE()
    with pytest.raises(tokenmill.FormatError):
        model.__setstate__(b'{"type":"BPE","vocab":{"a":0},"merges":["a b c"]}')
    with pytest.raises(tokenmill.TokenmillError, match="unk"):
        models.BPE({"a": 0}, [], unk_token="<unk>").tokenize("ab")
