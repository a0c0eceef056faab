"""GPT-2 as a tokenizer.json: tokenmill against Hugging Face `tokenizers`, on real text.

The tokenizer is built with `tokenizers` from the data-gym files in ../shared/pretrained/gpt2
(ByteLevel pre-tokenizer without prefix space, ByteLevel decoder, ByteLevel post-processor with
trim_offsets, `<|endoftext|>` as a special token), saved, and loaded by both libraries. Every
comparison is against what `tokenizers` returns for the same input.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from conftest import SHARED, corpus_files, documents, read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

SAMPLE_BYTES = 24_000  # per corpus file: ~65 files, ~1.5 MB in all


CORPUS_FILES = corpus_files()


ADVERSARIAL = [
    "",
    " ",
    "Hello world",
    " Hello  world ",
    "\t\n\r\x0b\x0c \u00a0\u2003\u3000 mixed whitespace runs\n\n\n   \t",
    "emoji 👩‍👩‍👧‍👦 family, flags 🇫🇷🇯🇵, skin 👍🏽, keycap 1️⃣",
    "combining: e\u0301 a\u0308\u0304 Z\u0335\u0321\u0327a\u0336\u0317l\u0334go",
    "中文没有空格的句子很长很长很长。日本語の文章です。한국어 문장입니다.",
    "العربية من اليمين إلى اليسار مع أرقام 123 و עברית",
    "control \x00\x01\x02\x1b[31m red \x7f chars",
    "a" * 20_000,
    " " * 5_000 + "x",
    "\n" * 3_000,
    "😀" * 2_000,
    "x<|endoftext|>y <|endoftext|> <|endoftext|><|endoftext|>",
    "<|endoftext",
    "don't won't I'm we've they're it's you'll HE'S",
    "1234567890 3.14159 -42 1e10 0x1F",
    "def f(x):\n    return x**2  # comment\n",
    "\ufeffBOM at start and \ufffd replacement",
    "\U0001d54f\U0001d560\U0001d565 math letters",
]


@pytest.fixture(scope="module")
def gpt2_json(tmp_path_factory) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    encoder = shared_path("pretrained", "gpt2", "encoder.json")
    merges = shared_path("pretrained", "gpt2", "vocab.bpe")
    hf = Tokenizer(models.BPE.from_file(str(encoder), str(merges)))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.post_processor = processors.ByteLevel(trim_offsets=True)
    hf.add_special_tokens(["<|endoftext|>"])
    path = tmp_path_factory.mktemp("gpt2") / "tokenizer.json"
    hf.save(str(path))
    return path


@pytest.fixture(scope="module")
def pair(gpt2_json):
    return tokenmill.Tokenizer.from_file(str(gpt2_json)), tokenizers.Tokenizer.from_file(
        str(gpt2_json)
    )


def assert_same_encoding(ours, theirs, context: str) -> None:
    assert ours.ids == theirs.ids, f"ids differ on {context}"
    assert ours.tokens == theirs.tokens, f"tokens differ on {context}"
    assert ours.offsets == theirs.offsets, f"offsets differ on {context}"
    assert ours.word_ids == theirs.word_ids, f"word_ids differ on {context}"
    assert ours.type_ids == theirs.type_ids, f"type_ids differ on {context}"
    assert ours.special_tokens_mask == theirs.special_tokens_mask, (
        f"special_tokens_mask differs on {context}"
    )
    assert ours.attention_mask == theirs.attention_mask, f"attention_mask differs on {context}"
    assert ours.sequence_ids == theirs.sequence_ids, f"sequence_ids differ on {context}"


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: str(p.relative_to(SHARED / "corpora")))
def test_corpus_samples_match_tokenizers(pair, path):
    tm, hf = pair
    docs = documents(read_sample(path, SAMPLE_BYTES))
    ours = tm.encode_batch(docs)
    theirs = hf.encode_batch(docs)
    assert len(ours) == len(theirs) == len(docs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert_same_encoding(o, t, f"{path.name} document {i}")
    # decode gives back what tokenizers decodes (byte-level: the text itself)
    ids = [e.ids for e in theirs]
    assert tm.decode_batch(ids) == hf.decode_batch(ids)
    # the lean path gives the same ids, laid out flat with boundaries
    flat, bounds = tm.encode_batch_ids(docs)
    assert len(bounds) == len(docs) + 1
    for i, t in enumerate(theirs):
        assert flat[bounds[i] : bounds[i + 1]].tolist() == t.ids


def test_corpus_files_are_present():
    shared_path("corpora")
    assert CORPUS_FILES, "no corpus files found under ../shared/corpora"


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_strings_match_tokenizers(pair, text):
    tm, hf = pair
    for add_special_tokens in (True, False):
        assert_same_encoding(
            tm.encode(text, add_special_tokens=add_special_tokens),
            hf.encode(text, add_special_tokens=add_special_tokens),
            repr(text[:40]),
        )
    ids = hf.encode(text).ids
    for skip in (True, False):
        assert tm.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)


def test_pairs_and_pretokenized_match_tokenizers(pair):
    tm, hf = pair
    assert_same_encoding(
        tm.encode("Hello there", "General Kenobi!"),
        hf.encode("Hello there", "General Kenobi!"),
        "pair",
    )
    words = ["Hello", " world", "héllo", "!!"]
    assert_same_encoding(
        tm.encode(words, is_pretokenized=True),
        hf.encode(words, is_pretokenized=True),
        "pre-tokenized",
    )
    batch = ["one", ("two", "three"), "four <|endoftext|>"]
    for o, t in zip(tm.encode_batch(batch), hf.encode_batch(batch)):
        assert_same_encoding(o, t, "batch with pairs")
    pre = [["a", "b"], (["c"], ["d", "e"])]
    for o, t in zip(
        tm.encode_batch(pre, is_pretokenized=True), hf.encode_batch(pre, is_pretokenized=True)
    ):
        assert_same_encoding(o, t, "pre-tokenized batch")


ADDED_TOKEN_OPTIONS = [
    dict(),
    dict(lstrip=True),
    dict(rstrip=True),
    dict(lstrip=True, rstrip=True),
    dict(single_word=True),
    dict(single_word=True, lstrip=True, rstrip=True),
    dict(normalized=False),
    dict(special=True),
]

ADDED_TOKEN_TEXTS = [
    "I saw a [MASK] today",
    "I saw a[MASK]today",
    "  [MASK]  [MASK][MASK]   x",
    "the cat sat; cat; concatenate catalog cat",
    "Cat cat CAT cat.",
    "<|endoftext|>cat<|endoftext|> [MASK]<|endoftext|>",
    "héllo [MASK] wörld cat",
]


@pytest.mark.parametrize("options", ADDED_TOKEN_OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_added_tokens_match_tokenizers(gpt2_json, options):
    tm = tokenmill.Tokenizer.from_file(str(gpt2_json))
    hf = tokenizers.Tokenizer.from_file(str(gpt2_json))
    ours = [tokenmill.AddedToken("[MASK]", **options), tokenmill.AddedToken("cat", **options)]
    theirs = [tokenizers.AddedToken("[MASK]", **options), tokenizers.AddedToken("cat", **options)]
    assert tm.add_tokens(ours) == hf.add_tokens(theirs)
    assert tm.add_special_tokens(
        [tokenmill.AddedToken("<sep>", **options)]
    ) == hf.add_special_tokens([tokenizers.AddedToken("<sep>", **options)])
    assert tm.get_vocab_size() == hf.get_vocab_size()
    assert tm.get_vocab() == hf.get_vocab()
    assert {k: str(v) for k, v in tm.get_added_tokens_decoder().items()} == {
        k: str(v) for k, v in hf.get_added_tokens_decoder().items()
    }
    assert [repr(v) for v in tm.get_added_tokens_decoder().values()] == [
        repr(v) for v in hf.get_added_tokens_decoder().values()
    ]
    for text in ADDED_TOKEN_TEXTS + [t + " <sep> x<sep>y" for t in ADDED_TOKEN_TEXTS]:
        assert_same_encoding(tm.encode(text), hf.encode(text), repr(text))
        ids = hf.encode(text).ids
        for skip in (True, False):
            assert tm.decode(ids, skip_special_tokens=skip) == hf.decode(
                ids, skip_special_tokens=skip
            )
    assert tm.to_str() == hf.to_str()


def test_vocabulary_queries_match_tokenizers(pair):
    tm, hf = pair
    assert tm.get_vocab_size() == hf.get_vocab_size()
    assert tm.get_vocab_size(with_added_tokens=False) == hf.get_vocab_size(with_added_tokens=False)
    assert tm.get_vocab() == hf.get_vocab()
    for token in ["Hello", "ĠHello", "<|endoftext|>", "not-a-token-at-all"]:
        assert tm.token_to_id(token) == hf.token_to_id(token)
    for i in [0, 1, 256, 50255, 50256, 50257, 10**6]:
        assert tm.id_to_token(i) == hf.id_to_token(i)
    assert tm.num_special_tokens_to_add(False) == hf.num_special_tokens_to_add(False)
    assert tm.num_special_tokens_to_add(True) == hf.num_special_tokens_to_add(True)


def test_unknown_ids_in_decode_are_skipped_like_tokenizers(pair):
    tm, hf = pair
    ids = [15496, 10**8, 995, 50257]
    assert tm.decode(ids) == hf.decode(ids)


def test_json_round_trip_is_byte_identical(pair):
    tm, hf = pair
    for pretty in (False, True):
        text = hf.to_str(pretty=pretty)
        assert tokenmill.Tokenizer.from_str(text).to_str(pretty=pretty) == text


def test_saved_tokenizer_loads_in_tokenizers(pair, tmp_path):
    tm, _ = pair
    tm2 = tokenmill.Tokenizer.from_str(tm.to_str())
    tm2.add_tokens(["newword", tokenmill.AddedToken("[X]", lstrip=True)])
    tm2.add_special_tokens(["<pad>"])
    path = tmp_path / "saved.json"
    tm2.save(str(path))
    hf2 = tokenizers.Tokenizer.from_file(str(path))
    text = (
        read_sample(shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 50_000)
        + " newword [X] <pad>"
    )
    assert tm2.encode(text).ids == hf2.encode(text).ids
    assert path.read_text(encoding="utf-8") == hf2.to_str(pretty=True)
    assert [p.name for p in tmp_path.iterdir()] == ["saved.json"], "save() left a temporary file"


def test_pickle_round_trip(pair):
    tm, _ = pair
    back = pickle.loads(pickle.dumps(tm))
    assert back.to_str() == tm.to_str()
    text = "Pickled <|endoftext|> tokenizers still work."
    assert back.encode(text).ids == tm.encode(text).ids


def test_malformed_json_names_the_line(pair):
    tm, _ = pair
    lines = tm.to_str(pretty=True).splitlines()
    # break the JSON on line 5
    broken = "\n".join(lines[:4] + [lines[4] + " ,,"] + lines[5:])
    with pytest.raises(tokenmill.FormatError, match="line 5"):
        tokenmill.Tokenizer.from_str(broken)


def test_unknown_component_type_names_the_line(pair, tmp_path):
    tm, _ = pair
    text = tm.to_str(pretty=True)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"type": "ByteLevel"' in line)
    lines[at] = lines[at].replace("ByteLevel", "NoSuchPreTokenizer")
    path = tmp_path / "bad.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(tokenmill.FormatError) as info:
        tokenmill.Tokenizer.from_file(str(path))
    message = str(info.value)
    assert "bad.json" in message and "line" in message and "pre_tokenizer" in message, message
