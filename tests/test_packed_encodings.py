"""Batch encodings held packed, against Hugging Face `tokenizers`.

`encode_batch`, `encode_batch_fast`, `encode_batch_with` and the rows of
`tok(..., return_tensors="np")` hold each encoding packed (ids, offsets, words as u32, masks as
bytes, token texts only where they are not deferred) and, for the NumPy rows, not yet padded:
the getters read that form, the lookups and edits unpack it once. These tests check that every
way of reading such an encoding (each getter, the overflowing windows, every lookup, pad,
truncate, set_sequence_id, pickling) gives exactly what `tokenizers` gives for the same batch,
with truncation windows and padding on either side, for single texts and pairs.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

DOC_BYTES = 400


@pytest.fixture(scope="module")
def docs():
    text = read_sample(
        shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"), 16_000
    )
    french = read_sample(
        shared_path("corpora", "multilingual", "fr", "fr_pg14155_flaubert_madame_bovary.txt"), 4_000
    )
    docs, current = [], ""
    for line in (text + french).splitlines(keepends=True):
        current += line
        if len(current) >= DOC_BYTES:
            docs.append(current)
            current = ""
    return docs + ["", "Hello, world!", "[CLS] glued[SEP]x [MASK] unknownwordsareunknownwords"]


SETTINGS = [
    pytest.param(None, None, id="plain"),
    pytest.param(
        {"max_length": 24, "stride": 6},
        {"direction": "right", "pad_to_multiple_of": 8},
        id="windows-right",
    ),
    pytest.param(
        {"max_length": 40, "stride": 0, "direction": "left"},
        {"direction": "left", "pad_token": "[MASK]", "pad_id": 103},
        id="left",
    ),
    pytest.param(None, {"length": 300, "pad_type_id": 1}, id="fixed"),
]


def _configure(tok, truncation, padding):
    if truncation is not None:
        tok.enable_truncation(**truncation)
    else:
        tok.no_truncation()
    if padding is not None:
        tok.enable_padding(**padding)
    else:
        tok.no_padding()


def _assert_same(expected, got, where):
    assert len(got) == len(expected), where
    for name in (
        "ids",
        "tokens",
        "offsets",
        "type_ids",
        "word_ids",
        "sequence_ids",
        "attention_mask",
        "special_tokens_mask",
        "n_sequences",
    ):
        assert getattr(got, name) == getattr(expected, name), (where, name)
    # Each lookup on a sample of words, characters (per sequence) and tokens, out of range too.
    per_sequence = [
        ("word_to_tokens", range(8)),
        ("word_to_chars", range(8)),
        ("char_to_token", range(0, 60, 7)),
        ("char_to_word", range(0, 60, 7)),
    ]
    for sequence in range(expected.n_sequences):
        for method, positions in per_sequence:
            want, have = getattr(expected, method), getattr(got, method)
            for i in positions:
                assert have(i, sequence) == want(i, sequence), (where, method, i)
    for method in ("token_to_sequence", "token_to_chars", "token_to_word"):
        want, have = getattr(expected, method), getattr(got, method)
        for token in range(0, len(expected) + 2, 5):
            assert have(token) == want(token), (where, method, token)
    assert len(got.overflowing) == len(expected.overflowing), where
    for k, (e, g) in enumerate(zip(expected.overflowing, got.overflowing)):
        _assert_same(e, g, f"{where} window {k}")


def _inputs(docs, pairs):
    if not pairs:
        return docs
    return [(docs[i], docs[(i + 1) % len(docs)][:120]) for i in range(len(docs))]


@pytest.mark.parametrize("pairs", [False, True], ids=["single", "pairs"])
@pytest.mark.parametrize("truncation, padding", SETTINGS)
def test_batch_encodings_read_as_tokenizers(bert_json, docs, truncation, padding, pairs):
    theirs, ours = (
        tokenizers.Tokenizer.from_file(bert_json),
        tokenmill.Tokenizer.from_file(bert_json),
    )
    for tok in (theirs, ours):
        _configure(tok, truncation, padding)
    inputs = _inputs(docs, pairs)
    expected, got = theirs.encode_batch(inputs), ours.encode_batch(inputs)
    for i, (e, g) in enumerate(zip(expected, got)):
        _assert_same(e, g, i)
        back = pickle.loads(pickle.dumps(g))
        assert back.ids == e.ids and back.tokens == e.tokens and back.offsets == e.offsets, i
    fast_e, fast_g = theirs.encode_batch_fast(inputs[:10]), ours.encode_batch_fast(inputs[:10])
    assert [g.ids for g in fast_g] == [e.ids for e in fast_e]


@pytest.mark.parametrize("truncation, padding", SETTINGS)
def test_edits_of_batch_encodings(bert_json, docs, truncation, padding):
    theirs, ours = (
        tokenizers.Tokenizer.from_file(bert_json),
        tokenmill.Tokenizer.from_file(bert_json),
    )
    for tok in (theirs, ours):
        _configure(tok, truncation, padding)
    expected, got = theirs.encode_batch(docs[:12]), ours.encode_batch(docs[:12])
    # windows combine pairwise in a merge: three encodings are enough
    merged_e = tokenizers.Encoding.merge(expected[:3], growing_offsets=True)
    merged_g = tokenmill.Encoding.merge(got[:3], growing_offsets=True)
    _assert_same(merged_e, merged_g, "merged")
    for i, (e, g) in enumerate(zip(expected, got)):
        # a getter first (packed), then an edit (unpacks), then the getters again
        assert g.ids == e.ids
        for enc in (e, g):
            enc.truncate(10, stride=2, direction="left" if i % 2 else "right")
            enc.pad(
                14, direction="left" if i % 3 else "right", pad_id=7, pad_type_id=2, pad_token="<p>"
            )
        _assert_same(e, g, f"{i} edited")


@pytest.mark.parametrize("pairs", [False, True], ids=["single", "pairs"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_numpy_rows_padded_when_made(bert_json, docs, side, pairs):
    """The rows of `tok(..., return_tensors="np")` are padded only when their Encoding is made:
    arrays and rows equal `tokenizers`' batch with the same truncation and padding."""
    theirs, ours = (
        tokenizers.Tokenizer.from_file(bert_json),
        tokenmill.Tokenizer.from_file(bert_json),
    )
    theirs.enable_truncation(32, stride=4, strategy="only_second" if pairs else "longest_first")
    theirs.enable_padding(direction=side, pad_to_multiple_of=8)
    options = dict(
        max_length=32,
        stride=4,
        padding="longest",
        pad_to_multiple_of=8,
        padding_side=side,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        return_tensors="np",
    )
    if pairs:
        # "only_second" cuts the second text: the first ones (questions) are kept short
        questions = [d[:40] for d in docs]
        expected = theirs.encode_batch(list(zip(questions, docs)))
        out = ours(questions, docs, truncation="only_second", **options)
    else:
        expected = theirs.encode_batch(docs)
        out = ours(docs, truncation=True, **options)
    rows = [row for e in expected for row in [e] + e.overflowing]
    assert out["input_ids"].shape == (len(rows), len(rows[0]))
    np.testing.assert_array_equal(out["input_ids"], np.array([r.ids for r in rows]))
    np.testing.assert_array_equal(out["token_type_ids"], np.array([r.type_ids for r in rows]))
    np.testing.assert_array_equal(out["attention_mask"], np.array([r.attention_mask for r in rows]))
    np.testing.assert_array_equal(
        out["special_tokens_mask"], np.array([r.special_tokens_mask for r in rows])
    )
    np.testing.assert_array_equal(
        out["offset_mapping"], np.array([r.offsets for r in rows]).reshape(len(rows), -1, 2)
    )
    for i in range(0, len(rows), 3):
        _assert_same(rows[i], out[i], i)
        assert out.tokens(i) == rows[i].tokens and out.word_ids(i) == rows[i].word_ids


def test_set_sequence_id_on_packed_encodings(bert_json, docs):
    """Overlapping sequence ranges are answered in hash-map order by `tokenizers` (at random),
    so a packed encoding is compared here with the same encoding held whole (`encode`)."""
    ours = tokenmill.Tokenizer.from_file(bert_json)
    for doc, packed in zip(docs[:8], ours.encode_batch(docs[:8])):
        whole = ours.encode(doc)
        for enc in (whole, packed):
            enc.set_sequence_id(1)
        assert packed.n_sequences == whole.n_sequences == 2
        assert packed.sequence_ids == whole.sequence_ids
        assert [packed.token_to_sequence(t) for t in range(len(whole) + 1)] == [
            whole.token_to_sequence(t) for t in range(len(whole) + 1)
        ]
        assert packed.char_to_token(3, 1) == whole.char_to_token(3, 1)
