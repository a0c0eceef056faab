"""tokenmill.implementations against tokenizers.implementations on real files and text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

hf = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from conftest import read_sample, shared_path  # noqa: E402
from tokenizers import implementations as hf_impl  # noqa: E402
from tokenmill import implementations  # noqa: E402


def sample_lines(max_bytes: int = 200_000) -> list[str]:
    """English prose plus a few multilingual files, as lines."""
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), max_bytes
    )
    for lang, name in [
        ("fr", "fr_pg14155_flaubert_madame_bovary.txt"),
        ("ru", "ru_ruslit_chekhov_drama_na_okhote.txt"),
        ("zh", "zh_debian_fortunes-zh_2.98.txt"),
    ]:
        text += read_sample(shared_path("corpora", "multilingual", lang, name), 30_000)
    return [line for line in text.splitlines() if line.strip()]


def assert_same_encodings(ours, theirs, lines) -> None:
    for line in lines:
        a, b = ours.encode(line), theirs.encode(line)
        assert (a.tokens, a.ids, a.offsets) == (b.tokens, b.ids, b.offsets), line
        assert ours.decode(a.ids) == theirs.decode(b.ids), line


@pytest.fixture(scope="module")
def gpt2_files():
    return str(shared_path("pretrained", "gpt2", "encoder.json")), str(
        shared_path("pretrained", "gpt2", "vocab.bpe")
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"add_prefix_space": True, "trim_offsets": True},
        {"lowercase": True, "unicode_normalizer": "nfkc"},
    ],
)
def test_byte_level_bpe_from_gpt2_files(gpt2_files, kwargs):
    ours = implementations.ByteLevelBPETokenizer.from_file(*gpt2_files, **kwargs)
    theirs = hf_impl.ByteLevelBPETokenizer.from_file(*gpt2_files, **kwargs)
    assert ours.get_vocab_size() == theirs.get_vocab_size()
    assert_same_encodings(ours, theirs, sample_lines(60_000)[:1500])
    assert ours.token_to_id("Ġthe") == theirs.token_to_id("Ġthe")


def test_byte_level_bpe_training_matches(tmp_path):
    lines = sample_lines(150_000)
    ours, theirs = implementations.ByteLevelBPETokenizer(), hf_impl.ByteLevelBPETokenizer()
    for tok in (ours, theirs):
        tok.train_from_iterator(
            lines,
            vocab_size=1200,
            min_frequency=2,
            show_progress=False,
            special_tokens=["<|endoftext|>"],
        )
    assert ours.get_vocab() == theirs.get_vocab()
    ours_files = ours.save_model(str(tmp_path), "ours")
    theirs_files = theirs.save_model(str(tmp_path), "theirs")
    assert Path(ours_files[1]).read_text() == Path(theirs_files[1]).read_text(), (
        "same merges, same order"
    )
    reloaded = implementations.ByteLevelBPETokenizer.from_file(*ours_files)
    assert_same_encodings(reloaded, theirs, lines[:500])
    # Training from files gives the same model as from the iterator.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(lines), encoding="utf-8")
    from_files = implementations.ByteLevelBPETokenizer()
    from_files.train(
        str(corpus),
        vocab_size=1200,
        min_frequency=2,
        show_progress=False,
        special_tokens=["<|endoftext|>"],
    )
    assert from_files.get_vocab() == ours.get_vocab()


def test_char_bpe_training_and_files(tmp_path):
    lines = sample_lines(150_000)
    ours, theirs = implementations.CharBPETokenizer(), hf_impl.CharBPETokenizer()
    for tok in (ours, theirs):
        tok.train_from_iterator(lines, vocab_size=1500, min_frequency=2, show_progress=False)
    # tokenizers gives suffix tokens ids in hash order, so only the token sets are comparable.
    assert set(ours.get_vocab()) == set(theirs.get_vocab())
    theirs_files = theirs.save_model(str(tmp_path), "theirs")
    ours_from_theirs = implementations.CharBPETokenizer.from_file(*theirs_files)
    theirs_reloaded = hf_impl.CharBPETokenizer.from_file(*theirs_files)
    assert_same_encodings(ours_from_theirs, theirs_reloaded, lines[:800])
    ours_files = ours.save_model(str(tmp_path))
    assert [Path(p).name for p in ours_files] == ["vocab.json", "merges.txt"]
    assert json.loads(Path(ours_files[0]).read_text()) == ours.get_vocab(with_added_tokens=False)
    again = implementations.CharBPETokenizer.from_file(*ours_files)
    assert again.encode(lines[3]).ids == ours.encode(lines[3]).ids


@pytest.mark.parametrize(
    "kwargs", [{"split_on_whitespace_only": True}, {"bert_normalizer": False, "lowercase": True}]
)
def test_char_bpe_options(tmp_path, kwargs):
    lines = sample_lines(80_000)
    theirs = hf_impl.CharBPETokenizer(**kwargs)
    theirs.train_from_iterator(lines, vocab_size=800, show_progress=False)
    files = theirs.save_model(str(tmp_path))
    ours = implementations.CharBPETokenizer.from_file(*files, **kwargs)
    theirs = hf_impl.CharBPETokenizer.from_file(*files, **kwargs)
    assert_same_encodings(ours, theirs, lines[:500])


def test_base_tokenizer_forwards(gpt2_files):
    ours = implementations.ByteLevelBPETokenizer.from_file(*gpt2_files)
    theirs = hf_impl.ByteLevelBPETokenizer.from_file(*gpt2_files)
    assert isinstance(ours, implementations.BaseTokenizer)
    assert repr(ours) == repr(theirs)
    assert ours.num_special_tokens_to_add(False) == theirs.num_special_tokens_to_add(False)
    assert ours.add_special_tokens(["<|endoftext|>"]) == theirs.add_special_tokens(
        ["<|endoftext|>"]
    )
    batch = sample_lines(20_000)[:50]
    assert [e.ids for e in ours.encode_batch(batch)] == [e.ids for e in theirs.encode_batch(batch)]
    assert isinstance(ours.model, tokenmill.models.BPE)
    with pytest.raises(ValueError):
        ours.encode(None)
    with pytest.raises(ValueError, match="unicode normalizer"):
        implementations.ByteLevelBPETokenizer(unicode_normalizer="nfx")
