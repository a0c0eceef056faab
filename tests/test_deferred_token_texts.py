"""Token texts made on first use, against Hugging Face `tokenizers`.

Batch calls on a WordPiece tokenizer whose post-processor never reads token texts (BERT's)
leave the texts of the model's tokens empty while encoding and fill them from the vocabulary
when they are read (`Encoding.tokens`, pickling, `Encoding.merge`, `post_process`, overflowing
windows, the rows of `tok(..., return_tensors="np")`). These tests check that every way of
reading an encoding gives exactly `tokenizers`' texts, also where padding or special tokens
have texts of their own (an empty pad token), and that a post-processor that reads token texts
(ByteLevel's offset trimming) still sees them.
"""

from __future__ import annotations

import pickle

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

DOC_BYTES = 1_000


def _documents(max_bytes: int) -> list[str]:
    text = read_sample(
        shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"), max_bytes
    )
    multilingual = read_sample(
        shared_path("corpora", "multilingual", "fr", "fr_pg14155_flaubert_madame_bovary.txt"),
        20_000,
    )
    docs, current, length = [], [], 0
    for line in (text + multilingual).splitlines(keepends=True):
        current.append(line)
        length += len(line)
        if length >= DOC_BYTES:
            docs.append("".join(current))
            current, length = [], 0
    return docs + ["", "Hello, world!", "[CLS] glued[SEP]x [MASK] unknownwordsareunknownwords" * 3]


@pytest.fixture(scope="module")
def docs():
    return _documents(60_000)


def _pair(bert_json):
    return tokenizers.Tokenizer.from_file(bert_json), tokenmill.Tokenizer.from_file(bert_json)


def _assert_same(expected, got, where=""):
    assert got.ids == expected.ids, where
    assert got.tokens == expected.tokens, where
    assert got.offsets == expected.offsets, where
    assert got.special_tokens_mask == expected.special_tokens_mask, where
    assert got.attention_mask == expected.attention_mask, where
    assert len(got.overflowing) == len(expected.overflowing), where
    for e, g in zip(expected.overflowing, got.overflowing):
        assert g.ids == e.ids and g.tokens == e.tokens and g.offsets == e.offsets, where


def test_batch_tokens_pickle_and_merge(bert_json, docs):
    theirs, ours = _pair(bert_json)
    expected, got = theirs.encode_batch(docs), ours.encode_batch(docs)
    for i, (e, g) in enumerate(zip(expected, got)):
        _assert_same(e, g, i)
        back = pickle.loads(pickle.dumps(g))
        assert back.tokens == e.tokens and back.ids == e.ids
    merged_e = tokenizers.Encoding.merge(expected[:5], growing_offsets=True)
    merged_g = tokenmill.Encoding.merge(got[:5], growing_offsets=True)
    assert merged_g.tokens == merged_e.tokens and merged_g.ids == merged_e.ids
    # a deferred encoding merged with one from another vocabulary keeps each one's texts
    other = tokenmill.Tokenizer.from_file(bert_json)
    other.no_truncation()
    single = other.encode("hello there")
    assert (
        tokenmill.Encoding.merge([got[0], single]).tokens
        == expected[0].tokens + theirs.encode("hello there").tokens
    )


def test_post_process_of_batch_encodings(bert_json, docs):
    theirs, ours = _pair(bert_json)
    expected = theirs.encode_batch(docs[:20], add_special_tokens=False)
    got = ours.encode_batch(docs[:20], add_special_tokens=False)
    for e, g in zip(expected, got):
        _assert_same(theirs.post_process(e), ours.post_process(g))
        _assert_same(theirs.post_process(e, e), ours.post_process(g, g))
        _assert_same(theirs.post_processor.process(e), ours.post_processor.process(g))


@pytest.mark.parametrize("pad_token", ["[PAD]", ""])
def test_truncation_windows_and_padding(bert_json, docs, pad_token):
    theirs, ours = _pair(bert_json)
    for t in (theirs, ours):
        t.enable_truncation(64, stride=16)
        t.enable_padding(pad_token=pad_token, pad_to_multiple_of=8)
    pairs = list(zip(docs[:30], docs[30:60]))
    for batch in (docs, pairs):
        for i, (e, g) in enumerate(zip(theirs.encode_batch(batch), ours.encode_batch(batch))):
            _assert_same(e, g, i)
    # an Encoding padded and truncated after the call
    e, g = theirs.encode_batch(docs[:3])[2], ours.encode_batch(docs[:3])[2]
    e.pad(200, pad_token=pad_token)
    g.pad(200, pad_token=pad_token)
    _assert_same(e, g)
    e.truncate(20, stride=4)
    g.truncate(20, stride=4)
    _assert_same(e, g)


def test_transformers_call_rows(bert_json, docs):
    theirs, ours = _pair(bert_json)
    theirs.enable_truncation(128, stride=32)
    theirs.enable_padding()
    expected = theirs.encode_batch(docs)
    out = ours(
        docs,
        truncation=True,
        max_length=128,
        stride=32,
        padding=True,
        return_tensors="np",
        return_overflowing_tokens=True,
    )
    rows = [r for e in expected for r in [e] + e.overflowing]
    assert out["input_ids"].tolist() == [r.ids for r in rows]
    for i, r in enumerate(rows):
        assert out.tokens(i) == r.tokens, i
        assert out.encodings[i].offsets == r.offsets, i
    plain = ours(docs, truncation=True, max_length=128, padding=True, return_tensors="np")
    theirs.enable_truncation(128)
    for i, e in enumerate(theirs.encode_batch(docs)):
        assert plain.tokens(i) == e.tokens, i
        assert [o.tokens for o in plain.encodings[i].overflowing] == [
            o.tokens for o in e.overflowing
        ], i


def test_a_post_processor_that_reads_texts_gets_them(bert_json, docs):
    """WordPiece with ByteLevel's offset trimming: the trimming reads the token texts."""
    from tokenizers import processors

    theirs, _ = _pair(bert_json)
    theirs.post_processor = processors.ByteLevel(trim_offsets=True)
    ours = tokenmill.Tokenizer.from_str(theirs.to_str())
    texts = [" ".join(d.split()[:40]) for d in docs[:30]] + ["  spaced   words  "]
    for e, g in zip(theirs.encode_batch(texts), ours.encode_batch(texts)):
        _assert_same(e, g)
