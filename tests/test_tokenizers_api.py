"""The surface of `tokenizers` that code written for it touches beyond encoding: what the package
exports at its top level, repr/str, what happens to the caller's AddedToken objects, NumPy
inputs, DecodeStream copies, the exceptions raised, and the asyncio methods. Each behaviour is
checked against `tokenizers` itself on real vocabularies and text."""

from __future__ import annotations

import copy
import errno
import functools
import pickle
from pathlib import Path

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
np = pytest.importorskip("numpy")
import tokenmill  # noqa: E402
from tokenmill import models, normalizers  # noqa: E402


@functools.lru_cache(maxsize=1)
def gpt2_json():
    encoder = shared_path("pretrained", "gpt2", "encoder.json")
    merges = shared_path("pretrained", "gpt2", "vocab.bpe")
    return tokenizers.implementations.ByteLevelBPETokenizer(
        str(encoder), str(merges)
    )._tokenizer.to_str()


def gpt2_pair():
    """GPT-2's byte-level BPE in both libraries (tokenmill loads tokenizers' own JSON), new
    objects each time (tests change them)."""
    json = gpt2_json()
    return tokenmill.Tokenizer.from_str(json), tokenizers.Tokenizer.from_str(json)


def bert_pair(bert_json):
    return tokenmill.Tokenizer.from_file(bert_json), tokenizers.Tokenizer.from_file(bert_json)


def lines(*parts, count=40, max_bytes=200_000):
    text = read_sample(shared_path("corpora", *parts), max_bytes)
    return [line for line in text.splitlines() if line.strip()][:count]


def same(ours, theirs):
    return (ours.ids, ours.tokens, ours.offsets, ours.type_ids, ours.attention_mask) == (
        theirs.ids,
        theirs.tokens,
        theirs.offsets,
        theirs.type_ids,
        theirs.attention_mask,
    )


# ---- top-level names ----


def test_every_top_level_name_of_tokenizers_exists():
    incidental = {"Enum", "List", "Tuple", "Union", "tokenizers"}  # its imports and native module
    public = {n for n in dir(tokenizers) if not n.startswith("_")} - incidental
    assert sorted(n for n in public if not hasattr(tokenmill, n)) == []


def test_implementations_are_reexported():
    for name in [
        "BertWordPieceTokenizer",
        "ByteLevelBPETokenizer",
        "CharBPETokenizer",
        "SentencePieceBPETokenizer",
        "SentencePieceUnigramTokenizer",
    ]:
        assert getattr(tokenmill, name) is getattr(tokenmill.implementations, name)
        assert name in tokenmill.__all__


# The input type aliases tokenizers exports (typing objects: equal when they describe the same
# types), for one sequence and for one encode input (a sequence or a pair), and its enums.
SEQUENCE_TYPES = ["TextInputSequence", "PreTokenizedInputSequence", "InputSequence"]
ENCODE_INPUT_TYPES = ["TextEncodeInput", "PreTokenizedEncodeInput", "EncodeInput"]
ENUMS = ["OffsetReferential", "OffsetType", "SplitDelimiterBehavior"]


@pytest.mark.parametrize("name", ["Offsets", *SEQUENCE_TYPES, *ENCODE_INPUT_TYPES])
def test_type_alias_matches(name):
    assert getattr(tokenmill, name) == getattr(tokenizers, name), name


@pytest.mark.parametrize("name", ENUMS)
def test_enum_matches(name):
    ours, theirs = getattr(tokenmill, name), getattr(tokenizers, name)
    assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs], name


# ---- repr / str ----


def repr_cases(bert_json):
    """(tokenmill object, tokenizers object) pairs whose repr and str are compared."""
    tm_bert, hf_bert = bert_pair(bert_json)
    tm_gpt2, hf_gpt2 = gpt2_pair()
    tm_empty, hf_empty = (
        tokenmill.Tokenizer(models.BPE()),
        tokenizers.Tokenizer(tokenizers.models.BPE()),
    )
    for tok in (tm_empty, hf_empty):
        tok.add_tokens(["my", "name", "is", "john", "and", "more"])
        tok.add_special_tokens(["<s>"])
        tok.enable_truncation(16, stride=2, direction="left")
        tok.enable_padding(pad_token="<pad>", pad_id=3, length=20)
    vocab = [(piece, -i / 100) for i, piece in enumerate(["<unk>", "▁a", "b", "▁", "cd", "e", "f"])]
    return [
        (tm_bert, hf_bert),
        (tm_gpt2, hf_gpt2),
        (tm_empty, hf_empty),
        (tm_gpt2.model, hf_gpt2.model),
        (tm_bert.model, hf_bert.model),
        (
            models.Unigram(vocab, 0, byte_fallback=True),
            tokenizers.models.Unigram(vocab, 0, byte_fallback=True),
        ),
        (models.Unigram(vocab[:5], 0), tokenizers.models.Unigram(vocab[:5], 0)),
    ]


def test_repr_and_str_are_tokenizers(bert_json):
    for ours, theirs in repr_cases(bert_json):
        assert repr(ours) == repr(theirs)
        assert str(ours) == str(theirs)


# ---- AddedToken objects given to add_tokens / add_special_tokens ----


def added_tokens(lib):
    return [
        lib.AddedToken("the"),
        lib.AddedToken("quick", normalized=True),
        lib.AddedToken("brown", normalized=False),
        lib.AddedToken("fox", single_word=True, lstrip=True),
        lib.AddedToken("[MASK]", special=True),
    ]


def token_state(t):
    return (t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)


@pytest.mark.parametrize("method", ["add_tokens", "add_special_tokens"])
def test_what_adding_does_to_the_callers_added_tokens(method):
    ours, theirs = added_tokens(tokenmill), added_tokens(tokenizers)
    tm, hf = tokenmill.Tokenizer(models.BPE()), tokenizers.Tokenizer(tokenizers.models.BPE())
    assert getattr(tm, method)(ours) == getattr(hf, method)(theirs)
    assert [token_state(t) for t in ours] == [token_state(t) for t in theirs]
    assert {i: repr(t) for i, t in tm.get_added_tokens_decoder().items()} == {
        i: repr(t) for i, t in hf.get_added_tokens_decoder().items()
    }


# ---- NumPy inputs ----


def numpy_inputs(texts):
    """(batch, is_pretokenized, the same batch as lists) in the NumPy shapes tokenizers accepts."""
    pairs = [(a, b) for a, b in zip(texts[::2], texts[1::2])]
    words = [t.split()[:4] for t in texts if len(t.split()) >= 4]
    word_pairs = [(w, w[:2]) for w in words]
    return [
        (np.array(texts), False, texts),
        (np.array(pairs), False, pairs),
        (np.array([list(p) for p in pairs]), False, pairs),
        (np.array(words), True, words),
        (np.array([list(p) for p in word_pairs], dtype=object), True, word_pairs),
        (
            np.array([tuple(tuple(x) for x in p) for p in word_pairs], dtype=object),
            True,
            word_pairs,
        ),
        ([np.array(w) for w in words], True, words),
    ]


def test_encode_batch_of_numpy_arrays(bert_json):
    """Every NumPy shape gives what tokenizers gives for the same batch as lists. (tokenizers
    itself reads the words of a pre-tokenized ``dtype='U'`` array as UTF-8 when they are UCS-4,
    so each character comes with three NULs: BERT's normalizer drops them, its offsets do not.
    We read the array's str items, as for any sequence.)"""
    tm, hf = bert_pair(bert_json)
    texts = lines("gutenberg", "pg244_en_a_study_in_scarlet.txt", count=12)
    for batch, pretokenized, as_lists in numpy_inputs(texts):
        ours = tm.encode_batch(batch, is_pretokenized=pretokenized)
        theirs = hf.encode_batch(as_lists, is_pretokenized=pretokenized)
        assert len(ours) == len(theirs) > 0
        assert all(same(a, b) for a, b in zip(ours, theirs))
        if not (pretokenized and batch[0].dtype.kind == "U"):
            numpy_theirs = hf.encode_batch(batch, is_pretokenized=pretokenized)
            assert all(same(a, b) for a, b in zip(ours, numpy_theirs))
        else:  # BERT's normalizer hides the NULs from the tokens
            assert [e.tokens for e in ours] == [
                e.tokens for e in hf.encode_batch(batch, is_pretokenized=True)
            ]


MALFORMED = [
    (lambda t: t.encode([["my", "name"]]), "TextInputSequence must be str"),
    (lambda t: t.encode("My name is john", [["pair"]]), "TextInputSequence must be str"),
    (lambda t: t.encode("my name is john", ["pair"]), "TextInputSequence must be str"),
    (lambda t: t.encode("My name is john", is_pretokenized=True), r"InputSequence must be Union\["),
    (
        lambda t: t.encode("My name is john", ["pair"], is_pretokenized=True),
        r"InputSequence must be Union\[",
    ),
    (
        lambda t: t.encode(["My", "name"], "pair", is_pretokenized=True),
        r"InputSequence must be Union\[",
    ),
    (lambda t: t.encode_batch([1]), None),
    (lambda t: t.encode_batch([("a", "b", "c")]), None),
    (lambda t: t.encode_batch(123), None),
    (lambda t: t.encode_batch("my name", is_pretokenized=True), None),
]


@pytest.mark.parametrize("index", range(len(MALFORMED)))
def test_malformed_inputs_raise_type_errors_as_tokenizers(index, bert_json):
    call, message = MALFORMED[index]
    for tok in bert_pair(bert_json):
        with pytest.raises(TypeError, match=message):
            call(tok)


# ---- DecodeStream ----


def test_decode_stream_copies_and_prefix_ids_continue_as_tokenizers():
    tm, hf = gpt2_pair()
    text = (
        " ".join(lines("multilingual", "ja", "ja_aozora_soseki_kokoro.txt", count=3))
        + " Ünïcödé 🤗 ok"
    )
    ids = hf.encode(text).ids
    ours, theirs = tokenmill.decoders.DecodeStream(), tokenizers.decoders.DecodeStream()
    for k, token_id in enumerate(ids):
        if k % 7 == 3:
            # A copy (shallow, deep, or through pickle for ours) goes on like the original.
            clones = [copy.copy(ours), copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))]
            their_copy = copy.copy(theirs)
            rest = ids[k : k + 5]
            expected = [their_copy.step(hf, i) for i in rest]
            for clone in clones:
                assert [clone.step(tm, i) for i in rest] == expected
            # A stream started from the ids so far gives what tokenizers' does.
            assert tokenmill.decoders.DecodeStream(ids[:k]).step(
                tm, token_id
            ) == tokenizers.decoders.DecodeStream(ids[:k]).step(hf, token_id)
        assert ours.step(tm, token_id) == theirs.step(hf, token_id)


def test_decode_stream_bad_pickle_state_is_an_error():
    stream = tokenmill.decoders.DecodeStream()
    with pytest.raises(tokenmill.InvalidArgumentError, match="prefix ids"):
        stream.__setstate__(([1], "", 5, False))


# ---- exceptions ----

SURROGATE_CALLS = [
    lambda t: t.encode("abc\udc80def"),
    lambda t: t.encode("fine", "pair \ud800"),
    lambda t: t.encode(["ok", "\udfff"], is_pretokenized=True),
    lambda t: t.encode_batch(["fine", "bad \ud83d"]),
]


@pytest.mark.parametrize("index", range(len(SURROGATE_CALLS)))
def test_lone_surrogate_is_a_type_error_as_in_tokenizers(index):
    call = SURROGATE_CALLS[index]
    tm, hf = gpt2_pair()
    with pytest.raises(TypeError):
        call(hf)
    with pytest.raises(TypeError, match="lone surrogate") as raised:
        call(tm)
    # Still what tokenmill raised before: an InvalidArgumentError (a ValueError).
    assert isinstance(
        raised.value, (tokenmill.InvalidTextError, tokenmill.InvalidArgumentError, ValueError)
    )


MISSING_FILE_CALLS = [
    lambda lib, d: lib.Tokenizer.from_file(str(d / "absent.json")),
    lambda lib, d: lib.models.BPE.from_file(
        str(d / "absent-vocab.json"), str(d / "absent-merges.txt")
    ),
    lambda lib, d: lib.models.BPE.read_file(
        str(d / "absent-vocab.json"), str(d / "absent-merges.txt")
    ),
    lambda lib, d: lib.models.WordPiece.from_file(str(d / "absent-vocab.txt")),
    lambda lib, d: lib.models.WordPiece.read_file(str(d / "absent-vocab.txt")),
]


@pytest.mark.parametrize("index", range(len(MISSING_FILE_CALLS)))
def test_missing_file_is_file_not_found(index, tmp_path):
    call = MISSING_FILE_CALLS[index]
    with pytest.raises(Exception, match="No such file"):  # all tokenizers promises
        call(tokenizers, tmp_path)
    with pytest.raises(FileNotFoundError) as raised:
        call(tokenmill, tmp_path)
    error = raised.value
    assert isinstance(error, tokenmill.TokenmillIOError) and isinstance(error, OSError)
    assert error.errno == errno.ENOENT and Path(error.filename).name.startswith("absent")


def test_io_errors_are_os_errors(tmp_path):
    with pytest.raises(OSError) as raised:
        tokenmill.Tokenizer.from_file(str(tmp_path))  # a directory
    assert (
        isinstance(raised.value, tokenmill.TokenmillIOError) and raised.value.errno == errno.EISDIR
    )


def test_encoding_truncate_direction_error_is_tokenizers(bert_json):
    messages = []
    for tok in bert_pair(bert_json):
        encoding = tok.encode("my name is john and this is long enough")
        with pytest.raises(ValueError) as raised:
            encoding.truncate(2, 1, "not_a_direction")
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


def test_normalized_string_lent_to_a_custom_normalizer_cannot_be_used_after():
    class Keeper:
        def normalize(self, normalized):
            self.kept = normalized
            normalized.replace("there", "you")

    for lib in (tokenmill, tokenizers):
        keeper = Keeper()
        normalizer = lib.normalizers.Normalizer.custom(keeper)
        assert normalizer.normalize_str("Hey there!") == "Hey you!"
        with pytest.raises(
            Exception, match="Cannot use a NormalizedStringRefMut outside `normalize`"
        ):
            keeper.kept.replace("something", "else")
    # A NormalizedString of the caller's own, given to normalize(), stays usable.
    mine = tokenmill.NormalizedString("Hey there!")
    normalizers.Normalizer.custom(Keeper()).normalize(mine)
    assert mine.normalized == "Hey you!"
