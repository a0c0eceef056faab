"""Property tests (Hypothesis) on generated text: round trips of the lossless models, offset
invariants, equality with tiktoken, tokenizers and sentencepiece, encode_batch equal to encoding
one by one, and pickling round trips. Bounded: a few dozen examples per property, no deadline
(the first call of a pipeline may build caches); the whole file runs in well under a minute.

The pretrained files come from ../shared; the tests skip with the reason when it is absent."""

from __future__ import annotations

import pickle
import unicodedata

import pytest
import tokenmill
import tokenmill.sentencepiece as tsp
from conftest import gpt2, shared_path
from hypothesis import given, settings, strategies as st
from tokenmill import models, tiktoken as tm

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")

EXAMPLES = settings(max_examples=40, deadline=None)

# ---- text strategies ------------------------------------------------------------------------

WHITESPACE = " \t\n\r\x0b\x0c\u00a0\u2028\u3000"
FRAGMENTS = [
    "hello", "World", "'s", "'LL", "don't", "ça", "Ärger", "straße", "İ", "42", "12345", "٣",
    "½", ".", "...", "!?", "--", "()", "<", ">", "|", "e\u0301", "\u0301\u0308", "你好",
    "日本語", "한국어", "Привет", "مرحبا", "नमस्ते", "ไทย", "🙂", "👍🏽", "👩\u200d👩\u200d👧",
    "🇫🇷", "𝔘", "\u200d", "\ufe0f", "▁", "##ing",
]  # fmt: skip
# Any code point but surrogates, plus runs of whitespace, words of many scripts, emoji
# sequences and combining marks, mixed.
ANY_CHAR = st.characters(blacklist_categories=("Cs",))
TEXTS = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.text(WHITESPACE, min_size=1, max_size=6),
            st.characters(whitelist_categories=("Mn", "Me", "So", "Lo", "Nd", "Zs")),
            ANY_CHAR,
        ),
        max_size=20,
    ).map("".join),
)
ASCII_TEXTS = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


def check_offsets(text: str, offsets: list[tuple[int, int]]) -> None:
    """Offsets (chars) in order, each inside the text."""
    last = 0
    for start, end in offsets:
        assert 0 <= start <= end <= len(text), (text, offsets)
        assert start >= last, (text, offsets)
        last = start


# ---- the pipelines, built once --------------------------------------------------------------


@pytest.fixture(scope="module")
def tiktoken_pairs(tiktoken_cache):
    """name → (tokenmill, tiktoken) for r50k_base, cl100k_base and o200k_base."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tiktoken_cache))
        mp.delenv("TOKENMILL_TIKTOKEN_DIR", raising=False)
        names = ["r50k_base", "cl100k_base", "o200k_base"]
        yield {n: (tm.get_encoding(n), tiktoken.get_encoding(n)) for n in names}


@pytest.fixture(scope="module")
def gpt2_pair():
    return gpt2(tokenmill), gpt2(tokenizers)


@pytest.fixture(scope="module")
def bert_pair(bert_json):
    return tokenmill.Tokenizer.from_file(bert_json), tokenizers.Tokenizer.from_file(bert_json)


SP_MODELS = [
    ("sentencepiece_test", "botchan_en_bpe_1000.model"),
    ("sentencepiece_test", "botchan_en_unigram_1000.model"),
    ("sentencepiece_test", "kyoto_ja_unigram_8000.model"),
    ("mistral", "tokenizer.model.v1"),
]


@pytest.fixture(scope="module")
def sp_pairs():
    pairs = []
    for folder, name in SP_MODELS:
        path = str(shared_path("pretrained", folder, name))
        pairs.append(
            (
                name,
                tsp.SentencePieceProcessor(model_file=path),
                spm.SentencePieceProcessor(model_file=path),
            )
        )
    return pairs


# ---- tiktoken -------------------------------------------------------------------------------


@EXAMPLES
@given(text=TEXTS)
def test_tiktoken_equals_tiktoken_and_round_trips(tiktoken_pairs, text):
    for name, (ours, theirs) in tiktoken_pairs.items():
        ids = ours.encode_ordinary(text)
        assert ids == theirs.encode_ordinary(text), name
        assert ours.encode(text, allowed_special="all") == theirs.encode(
            text, allowed_special="all"
        ), name
        assert ours.decode_bytes(ids) == text.encode(), name
        assert all(0 <= i < ours.n_vocab for i in ids), name


@EXAMPLES
@given(texts=st.lists(TEXTS, max_size=5))
def test_tiktoken_batch_equals_one_by_one(tiktoken_pairs, texts):
    for ours, _ in tiktoken_pairs.values():
        assert ours.encode_ordinary_batch(texts) == [ours.encode_ordinary(t) for t in texts]


# ---- tokenizer.json pipelines ---------------------------------------------------------------


@EXAMPLES
@given(text=TEXTS)
def test_byte_level_bpe_equals_tokenizers_and_round_trips(gpt2_pair, text):
    ours, theirs = gpt2_pair
    mine, ref = ours.encode(text), theirs.encode(text)
    assert mine.ids == ref.ids
    assert mine.offsets == ref.offsets
    assert ours.decode(mine.ids) == text
    check_offsets(text, mine.offsets)
    # Each token covers the text it came from: its bytes are the UTF-8 of its span when they
    # are whole characters (a token may hold part of a character; then it spans the character).
    byte_of = {c: b for b, c in bytes_to_unicode().items()}
    for token, (start, end) in zip(mine.tokens, mine.offsets):
        raw = bytes(byte_of[c] for c in token)
        try:
            piece = raw.decode()
        except UnicodeDecodeError:
            continue
        assert piece == text[start:end], (text, token, start, end)


def bytes_to_unicode() -> dict[int, str]:
    from conftest import bytes_to_unicode as table

    return table()


@EXAMPLES
@given(text=TEXTS)
def test_wordpiece_equals_tokenizers(bert_pair, text):
    ours, theirs = bert_pair
    for special in (False, True):
        mine, ref = (
            ours.encode(text, add_special_tokens=special),
            theirs.encode(text, add_special_tokens=special),
        )
        assert mine.ids == ref.ids
        assert mine.offsets == ref.offsets
    plain = ours.encode(text, add_special_tokens=False)
    check_offsets(text, plain.offsets)
    assert all(0 <= i < ours.get_vocab_size() for i in plain.ids)


@EXAMPLES
@given(text=ASCII_TEXTS)
def test_wordpiece_offsets_map_to_their_text(bert_pair, text):
    ours, _ = bert_pair
    encoding = ours.encode(text, add_special_tokens=False)
    for token, (start, end) in zip(encoding.tokens, encoding.offsets):
        if token != "[UNK]":
            assert text[start:end].lower() == token.removeprefix("##"), (text, token)


@EXAMPLES
@given(texts=st.lists(TEXTS, max_size=5))
def test_tokenizer_batch_equals_one_by_one(gpt2_pair, bert_pair, texts):
    for ours in (gpt2_pair[0], bert_pair[0]):
        batch = ours.encode_batch(texts)
        single = [ours.encode(t) for t in texts]
        assert [e.ids for e in batch] == [e.ids for e in single]
        assert [e.offsets for e in batch] == [e.offsets for e in single]


# ---- sentencepiece --------------------------------------------------------------------------


@EXAMPLES
@given(text=TEXTS)
def test_sentencepiece_equals_sentencepiece(sp_pairs, text):
    for name, ours, theirs in sp_pairs:
        ids = ours.encode(text)
        assert ids == theirs.encode(text), name
        assert ours.encode(text, out_type=str) == theirs.encode(text, out_type=str), name
        assert ours.decode(ids) == theirs.decode(ids), name
        assert all(0 <= i < ours.get_piece_size() for i in ids), name


@EXAMPLES
@given(text=TEXTS)
def test_sentencepiece_byte_fallback_round_trips(sp_pairs, text):
    # Mistral's model: identity normalization, byte fallback, no removal of extra spaces; only
    # its own space symbol ▁ does not come back (it decodes to a space, as in sentencepiece).
    name, ours, _ = sp_pairs[-1]
    if "▁" not in text:
        assert ours.decode(ours.encode(text)) == text, name


@EXAMPLES
@given(text=TEXTS)
def test_sentencepiece_offsets_in_order(sp_pairs, text):
    for name, ours, theirs in sp_pairs:
        mine = ours.encode(text, out_type="proto")
        ref = theirs.encode(text, out_type="proto")
        spans = [(p.begin, p.end) for p in mine.pieces]
        assert spans == [(p.begin, p.end) for p in ref.pieces], name
        raw = text.encode()
        last = 0
        for begin, end in spans:
            assert 0 <= begin <= end <= len(raw) and begin >= last, (name, text, spans)
            last = begin


@EXAMPLES
@given(texts=st.lists(TEXTS, max_size=5))
def test_sentencepiece_batch_equals_one_by_one(sp_pairs, texts):
    for name, ours, _ in sp_pairs:
        assert ours.encode(texts) == [ours.encode(t) for t in texts], name


# ---- pickling -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def unpickled(gpt2_pair, bert_pair):
    """The GPT-2 and BERT pipelines after a pickling round trip (once: they are large)."""
    return [(t, pickle.loads(pickle.dumps(t))) for t in (gpt2_pair[0], bert_pair[0])]


@EXAMPLES
@given(text=TEXTS)
def test_pickled_tokenizers_and_encodings_round_trip(unpickled, text):
    for original, restored in unpickled:
        encoding = original.encode(text)
        again = restored.encode(text)
        assert (again.ids, again.offsets, again.tokens) == (
            encoding.ids,
            encoding.offsets,
            encoding.tokens,
        )
        copy = pickle.loads(pickle.dumps(encoding))
        for attribute in ("ids", "type_ids", "tokens", "offsets", "attention_mask", "words"):
            assert getattr(copy, attribute) == getattr(encoding, attribute), attribute
        assert copy.special_tokens_mask == encoding.special_tokens_mask


VOCABS = st.lists(
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=6),
    min_size=1,
    max_size=30,
    unique=True,
)


@EXAMPLES
@given(vocab=VOCABS, word=st.text(max_size=12))
def test_pickled_models_round_trip(vocab, word):
    ids = {token: i for i, token in enumerate(["[UNK]", *[t for t in vocab if t != "[UNK]"]])}
    built = [
        models.WordLevel(ids, unk_token="[UNK]"),
        models.WordPiece(ids, unk_token="[UNK]"),
        models.BPE(ids, [], unk_token="[UNK]"),
        models.Unigram([(t, -float(i)) for t, i in ids.items()], 0),
    ]
    for model in built:
        copy = pickle.loads(pickle.dumps(model))
        assert type(copy) is type(model)
        assert copy.get_vocab() == model.get_vocab()
        if word and unicodedata.category(word[0]) != "Cs":
            mine = [(t.id, t.value, t.offsets) for t in model.tokenize(word)]
            assert [(t.id, t.value, t.offsets) for t in copy.tokenize(word)] == mine


def test_bpe_vocabulary_with_a_shared_id_round_trips(tmp_path):
    # Found by fuzzing (parse_tokenizer_json): a BPE vocabulary giving one id to two tokens loads
    # (as in tokenizers), but saved one token per id and the merge spelled by id ('a b' ->
    # 'b b'), so that the saved or pickled model did not load again (nor does tokenizers').
    model = models.BPE({"a": 0, "b": 0, "ab": 2}, [("a", "b")])
    copy = pickle.loads(pickle.dumps(model))
    tok = tokenmill.Tokenizer(model)
    assert tokenmill.Tokenizer.from_str(tok.to_str()).encode("ab").ids == [2]
    vocab, merges = model.save(str(tmp_path))
    assert models.BPE.from_file(vocab, merges).get_vocab() == model.get_vocab()
    assert copy.get_vocab() == model.get_vocab()
