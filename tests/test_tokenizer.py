"""tokenmill.Tokenizer / AddedToken / Encoding: the API of `tokenizers.Tokenizer`, checked
against `tokenizers` itself on the same inputs (GPT-2 specifics are in test_gpt2_pipeline.py)."""

from __future__ import annotations

import pickle

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from tokenmill import models, normalizers, pre_tokenizers, trainers  # noqa: E402


def build_pair(
    normalizer=None, pre_tokenizer=("Whitespace", {}), post_processor=None, decoder=None
):
    """The same small BPE tokenizer in both libraries: built with `tokenizers`, then loaded by
    tokenmill from `tokenizers`' own tokenizer.json."""
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}
    for ch in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'-éö":
        vocab.setdefault(ch, len(vocab))
    merges = [("t", "h"), ("th", "e"), ("i", "n"), ("in", "g"), ("c", "a"), ("ca", "t")]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    hf = tokenizers.Tokenizer(
        tokenizers.models.BPE(vocab=dict(vocab), merges=list(merges), unk_token="[UNK]")
    )
    if normalizer is not None:
        hf.normalizer = getattr(tokenizers.normalizers, normalizer[0])(**normalizer[1])
    if pre_tokenizer is not None:
        hf.pre_tokenizer = getattr(tokenizers.pre_tokenizers, pre_tokenizer[0])(**pre_tokenizer[1])
    if post_processor is not None:
        hf.post_processor = post_processor(tokenizers)
    if decoder is not None:
        hf.decoder = getattr(tokenizers.decoders, decoder[0])(**decoder[1])
    return tokenmill.Tokenizer.from_str(hf.to_str()), hf


def bert_template(lib):
    return lib.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )


def same_encoding(a, b):
    return (
        a.ids,
        a.tokens,
        a.offsets,
        a.word_ids,
        a.type_ids,
        a.sequence_ids,
        a.special_tokens_mask,
        a.attention_mask,
    ) == (
        b.ids,
        b.tokens,
        b.offsets,
        b.word_ids,
        b.type_ids,
        b.sequence_ids,
        b.special_tokens_mask,
        b.attention_mask,
    )


TEXTS = ["the cat is thinking", "The CAT, the cat!", "héllo wörld", "", "   ", "unknown ß∂ chars"]


# ---- AddedToken ----

ADDED_TOKEN_KWARGS = [
    {},
    {"special": True},
    {"special": True, "normalized": True},
    {"single_word": True, "lstrip": True, "rstrip": True},
    {"normalized": False},
]


@pytest.mark.parametrize("kwargs", ADDED_TOKEN_KWARGS, ids=str)
def test_added_token_defaults_and_repr_match_tokenizers(kwargs):
    ours = tokenmill.AddedToken("<tok>", **kwargs)
    theirs = tokenizers.AddedToken("<tok>", **kwargs)
    for attr in ("content", "single_word", "lstrip", "rstrip", "normalized", "special"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    back = pickle.loads(pickle.dumps(ours))
    assert repr(back) == repr(ours) and back == ours


# ---- encoding with the pipeline ----


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_tokenizers(text):
    tm, hf = build_pair(normalizer=("Lowercase", {}), post_processor=bert_template)
    assert same_encoding(tm.encode(text), hf.encode(text))
    assert same_encoding(
        tm.encode(text, add_special_tokens=False), hf.encode(text, add_special_tokens=False)
    )
    assert same_encoding(tm.encode(text, "the pair"), hf.encode(text, "the pair"))


def test_encoding_object_api():
    tm, hf = build_pair(post_processor=bert_template)
    ours, theirs = tm.encode("the cat", "a thing"), hf.encode("the cat", "a thing")
    assert len(ours) == len(theirs)
    assert ours.n_sequences == theirs.n_sequences
    assert ours.words == theirs.words
    assert [e.ids for e in ours.overflowing] == [e.ids for e in theirs.overflowing]
    merged = tokenmill.Encoding.merge([tm.encode("the"), tm.encode("cat")], growing_offsets=True)
    expected = tokenizers.Encoding.merge([hf.encode("the"), hf.encode("cat")], growing_offsets=True)
    assert same_encoding(merged, expected)


def test_post_process_matches_tokenizers():
    tm, hf = build_pair(post_processor=bert_template)
    ours = tm.post_process(
        tm.encode("the cat", add_special_tokens=False), tm.encode("thing", add_special_tokens=False)
    )
    theirs = hf.post_process(
        hf.encode("the cat", add_special_tokens=False), hf.encode("thing", add_special_tokens=False)
    )
    assert same_encoding(ours, theirs)
    assert tm.num_special_tokens_to_add(True) == hf.num_special_tokens_to_add(True) == 3


def test_encode_batch_and_ids_path():
    tm, hf = build_pair(normalizer=("Lowercase", {}), post_processor=bert_template)
    texts = TEXTS * 20
    ours, theirs = tm.encode_batch(texts), hf.encode_batch(texts)
    assert all(same_encoding(a, b) for a, b in zip(ours, theirs))
    ids, bounds = tm.encode_batch_ids(texts)
    assert str(ids.dtype) == "uint32" and str(bounds.dtype) == "int64"
    assert [ids[bounds[i] : bounds[i + 1]].tolist() for i in range(len(texts))] == [
        e.ids for e in theirs
    ]
    assert [e.ids for e in tm.encode_batch_fast(texts)] == [
        e.ids for e in hf.encode_batch_fast(texts)
    ]


def test_decode_without_decoder_joins_with_spaces_like_tokenizers():
    tm, hf = build_pair()
    ids = hf.encode("the cat thing").ids
    assert tm.decode(ids) == hf.decode(ids)
    assert tm.decode_batch([ids, ids[:1]]) == hf.decode_batch([ids, ids[:1]])


# ---- added tokens with a normalizer ----


@pytest.mark.parametrize("normalized", [True, False])
def test_normalized_added_tokens_match_tokenizers(normalized):
    tm, hf = build_pair(normalizer=("Lowercase", {}), post_processor=bert_template)
    for t, lib in ((tm, tokenmill), (hf, tokenizers)):
        t.add_tokens(
            [
                lib.AddedToken("CatDog", normalized=normalized),
                lib.AddedToken("[Day]", normalized=normalized, lstrip=True),
            ]
        )
        t.add_special_tokens([lib.AddedToken("[MASK]", lstrip=True, rstrip=True)])
    for text in [
        "a CatDog catdog CATDOG",
        "the [Day] and [day] [MASK] x",
        "[MASK][MASK] catdog[Day]",
    ]:
        assert same_encoding(tm.encode(text), hf.encode(text)), text
        ids = hf.encode(text).ids
        assert tm.decode(ids, skip_special_tokens=False) == hf.decode(
            ids, skip_special_tokens=False
        )
    assert tm.id_to_token(tm.token_to_id("CatDog")) == hf.id_to_token(hf.token_to_id("CatDog"))
    # changing the normalizer re-normalizes the added tokens
    tm.normalizer = None
    hf.normalizer = None
    assert same_encoding(tm.encode("a CatDog catdog"), hf.encode("a CatDog catdog"))


def test_add_tokens_counts_and_ids_match_tokenizers():
    tm, hf = build_pair()
    counts = [
        t.add_tokens(["cat", "new1", lib.AddedToken("new2"), "", "new1"])
        for t, lib in ((tm, tokenmill), (hf, tokenizers))
    ]
    assert counts[0] == counts[1]
    assert tm.get_vocab() == hf.get_vocab()
    assert tm.get_vocab_size() == hf.get_vocab_size()
    assert tm.add_special_tokens(["[CLS]", "<extra>"]) == hf.add_special_tokens(
        ["[CLS]", "<extra>"]
    )
    assert tm.get_vocab() == hf.get_vocab()
    assert {k: repr(v) for k, v in tm.get_added_tokens_decoder().items()} == {
        k: repr(v) for k, v in hf.get_added_tokens_decoder().items()
    }


# ---- components ----


def test_component_properties_round_trip():
    tm, _ = build_pair(
        normalizer=("Lowercase", {}), post_processor=bert_template, decoder=("BPEDecoder", {})
    )
    assert type(tm.normalizer).__name__ == "Lowercase"
    assert type(tm.pre_tokenizer).__name__ == "Whitespace"
    assert type(tm.model).__name__ == "BPE"
    assert type(tm.post_processor).__name__ == "TemplateProcessing"
    assert type(tm.decoder).__name__ == "BPEDecoder"
    tm.normalizer = normalizers.NFKC()
    assert type(tm.normalizer).__name__ == "NFKC"
    tm.normalizer = None
    tm.decoder = None
    assert tm.normalizer is None and tm.decoder is None
    tm.pre_tokenizer = pre_tokenizers.ByteLevel()
    assert '"ByteLevel"' in tm.to_str()


# ---- bad input ----


def test_lone_surrogates_raise_a_clear_error():
    tm, _ = build_pair()
    with pytest.raises(tokenmill.TokenmillError, match="surrogate.*index 3"):
        tm.encode("abc\ud800def")
    with pytest.raises(tokenmill.TokenmillError, match="surrogate"):
        tm.encode("ok", "pair \udfff")
    with pytest.raises(tokenmill.TokenmillError, match="surrogate"):
        tm.encode_batch(["fine", "bad \ud83d"])
    with pytest.raises(tokenmill.TokenmillError, match="surrogate"):
        tm.encode_batch_ids(["bad \ud83d"])


def test_wrong_input_types_raise_type_errors():
    tm, _ = build_pair()
    with pytest.raises(TypeError):
        tm.encode(42)
    with pytest.raises(TypeError):
        tm.encode("not a list", is_pretokenized=True)
    with pytest.raises(TypeError):
        tm.add_tokens([3])


# ---- training ----


def _trained_pair(train):
    """Byte-level BPE trained by both libraries from the same untrained tokenizer.json."""
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.normalizer = tokenizers.normalizers.NFKC()
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tm = tokenmill.Tokenizer.from_str(hf.to_str())
    alphabet = tokenizers.pre_tokenizers.ByteLevel.alphabet()
    for t, lib in ((tm, tokenmill), (hf, tokenizers)):
        trainer = lib.trainers.BpeTrainer(
            vocab_size=600,
            min_frequency=2,
            special_tokens=["<s>", "</s>"],
            show_progress=False,
            initial_alphabet=alphabet,
        )
        train(t, trainer)
    return tm, hf


def test_train_from_files_matches_tokenizers(tmp_path):
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 150_000
    )
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    tm, hf = _trained_pair(lambda t, trainer: t.train([str(path)], trainer))
    assert tm.get_vocab() == hf.get_vocab()
    assert tm.to_str() == hf.to_str()
    sample = text[:5000]
    assert tm.encode(sample).ids == hf.encode(sample).ids


@pytest.mark.parametrize("batched", [False, True])
def test_train_from_iterator_matches_tokenizers(batched):
    lines = read_sample(
        shared_path("corpora", "gutenberg", "en_novels", "pg11_en_alice_in_wonderland.txt"), 120_000
    ).splitlines()

    def feed(t, trainer):
        if batched:
            chunks = (lines[i : i + 100] for i in range(0, len(lines), 100))
            t.train_from_iterator(chunks, trainer=trainer, length=len(lines) // 100 + 1)
        else:
            t.train_from_iterator(iter(lines), trainer=trainer)

    tm, hf = _trained_pair(feed)
    assert tm.get_vocab() == hf.get_vocab()
    assert tm.to_str() == hf.to_str()


def test_invalid_utf8_in_training_file_names_file_and_line(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_bytes(b"fine line\nanother fine line\nbad \xc3\x28 here\n")
    t = tokenmill.Tokenizer(models.BPE())
    with pytest.raises(tokenmill.TokenmillError, match=r"broken\.txt.*line 3"):
        t.train([str(path)], trainers.BpeTrainer(show_progress=False))


def test_missing_training_file_is_an_io_error(tmp_path):
    t = tokenmill.Tokenizer(models.BPE())
    with pytest.raises(tokenmill.TokenmillIOError, match="nope.txt"):
        t.train([str(tmp_path / "nope.txt")], trainers.BpeTrainer(show_progress=False))


def test_missing_tokenizer_file_is_an_io_error(tmp_path):
    with pytest.raises(tokenmill.TokenmillIOError, match="absent.json"):
        tokenmill.Tokenizer.from_file(str(tmp_path / "absent.json"))


def test_from_buffer_and_from_str_agree():
    tm, _ = build_pair(post_processor=bert_template)
    text = tm.to_str()
    a = tokenmill.Tokenizer.from_str(text)
    b = tokenmill.Tokenizer.from_buffer(text.encode("utf-8"))
    assert a.to_str() == b.to_str() == text
    with pytest.raises(tokenmill.FormatError, match="line 1"):
        tokenmill.Tokenizer.from_buffer(b'{"version": "1.0", "model": 3}')
