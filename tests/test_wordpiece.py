"""WordPiece against tokenizers: the model alone, real BERT vocabularies end to end on every
corpus, adversarial strings, tokenizer.json both ways, vocab.txt files and their errors."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import pytest
from conftest import SHARED, read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from tokenmill import models  # noqa: E402
from tokenmill.implementations import BertWordPieceTokenizer  # noqa: E402

PETAR = "A mouse called Petar sits on the legendary throne in the ivory tower."
PETAR_IDS = [
    101,
    1037,
    8000,
    2170,
    9004,
    2906,
    7719,
    2006,
    1996,
    8987,
    6106,
    1999,
    1996,
    11554,
    3578,
    1012,
    102,
]

# (vocab, BertWordPieceTokenizer options): the MANIFEST's settings; bert-base-chinese both ways.
BERT_CONFIGS = {
    "uncased": ("bert_base_uncased", dict(lowercase=True)),
    "chinese": ("bert_base_chinese", dict(lowercase=True)),
    "chinese_cased": ("bert_base_chinese", dict(lowercase=False)),
}

ADVERSARIAL = [
    "",
    " ",
    "\t\n\r  \u3000",
    "Héllo Wörld! Ça va? naïve café résumé Ångström",
    "e\u0301 a\u0300\u0301\u0302 \u0301alone",
    "ﬁnancial ＦＵＬＬ ｗｉｄｔｈ ℌ𝔢𝔩𝔩𝔬",
    "你好，世界！Hello 中文字符和English混合",
    "日本語のテキスト、カタカナ。한국어 텍스트",
    "Привет мир ΣΑΣ σας Ελληνικά",
    "مرحبا بالعالم हिन्दी पाठ",
    "emoji 😀👍🏽 👨‍👩‍👧 flags 🇫🇷",
    "ctrl\u0000nul\u0001soh\u007fdel\u0085nel\u200bzw\u200dzwj\ufeffbom\ufffdrep\u2028ls\u000bvt\u000cff",
    "unaffable unbelievably antidisestablishmentarianism",
    "x" * 100,
    "x" * 101,
    "é" * 100,
    "é" * 101,
    "ab" * 60,
    "supercalifragilisticexpialidocious" * 3,
    "http://example.com/path?q=1&r=2#frag user@example.org $100.00 3.14159 1,000,000",
    "don't won't it's y'all rock'n'roll",
    "[CLS] [SEP] [MASK] [UNK] [PAD] ##ing ## #",
    "\U0010ffff\U000e0001 private\ue000use",
]


def bert_vocab(name: str):
    return shared_path("pretrained", name, "vocab.txt")


def pair(config: str):
    """The same BERT tokenizer in tokenmill and in tokenizers."""
    name, options = BERT_CONFIGS[config]
    path = str(bert_vocab(name))
    return BertWordPieceTokenizer(path, **options), tokenizers.BertWordPieceTokenizer(
        path, **options
    )


def assert_same_encodings(ours, theirs, texts):
    mine = ours.encode_batch(texts)
    ref = theirs.encode_batch(texts)
    for text, a, b in zip(texts, mine, ref):
        assert a.ids == b.ids, text[:200]
        assert a.tokens == b.tokens, text[:200]
        assert a.offsets == b.offsets, text[:200]


def corpus_files():
    root = SHARED / "corpora"
    if not root.exists():
        return []
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".txt", ".conllu", ".utf8", ".tsv")
    )


@pytest.mark.parametrize("config", list(BERT_CONFIGS))
def test_every_corpus_same_as_tokenizers(config):
    files = corpus_files()
    if not files:
        pytest.skip(f"needs {SHARED / 'corpora'}, which is absent")
    ours, theirs = pair(config)
    for f in files:
        lines = read_sample(SHARED / "corpora" / f, 12_000).splitlines()
        assert_same_encodings(ours, theirs, lines)


@pytest.mark.parametrize("config", list(BERT_CONFIGS))
def test_adversarial_strings_same_as_tokenizers(config):
    ours, theirs = pair(config)
    assert_same_encodings(ours, theirs, ADVERSARIAL)
    # Pairs too (type ids from BertProcessing).
    a, b = ours.encode("Héllo 世界", "ﬁne wörds"), theirs.encode("Héllo 世界", "ﬁne wörds")
    assert (a.ids, a.type_ids, a.offsets) == (b.ids, b.type_ids, b.offsets)


def test_mouse_called_petar():
    ours, theirs = pair("uncased")
    assert ours.encode(PETAR).ids == theirs.encode(PETAR).ids == PETAR_IDS
    assert ours.decode(PETAR_IDS) == theirs.decode(PETAR_IDS)


def test_manifest_golden_ids():
    ours, _ = pair("uncased")
    assert ours.encode("Hello, world!").ids == [101, 7592, 1010, 2088, 999, 102]
    ours, _ = pair("chinese")
    assert ours.encode("你好，世界！Hello").ids == [
        101,
        872,
        1962,
        8024,
        686,
        4518,
        8013,
        8701,
        102,
    ]


def random_words(vocab, n, seed):
    """Words made of vocabulary pieces, some with a char no token has (they become [UNK])."""
    rng = random.Random(seed)
    pieces = [t for t in vocab if not t.startswith("[")]
    words = []
    for _ in range(n):
        w = rng.choice(pieces)
        for _ in range(rng.randrange(4)):
            w += rng.choice(pieces).removeprefix("##")
        if rng.random() < 0.05:
            w += rng.choice("\u2603\U0001f600\u0378")
        words.append(w)
    return words


@pytest.mark.parametrize("name", ["bert_base_uncased", "bert_base_chinese"])
def test_model_tokenize_same_as_tokenizers(name):
    path = str(bert_vocab(name))
    ours, theirs = models.WordPiece.from_file(path), tokenizers.models.WordPiece.from_file(path)
    vocab = theirs_vocab = tokenizers.models.WordPiece.read_file(path)
    assert models.WordPiece.read_file(path) == theirs_vocab
    for word in random_words(vocab, 3000, seed=len(name)) + ADVERSARIAL[3:]:
        mine = [(t.id, t.value, t.offsets) for t in ours.tokenize(word)]
        ref = [(t.id, t.value, t.offsets) for t in theirs.tokenize(word)]
        assert mine == ref, word


def test_options_same_as_tokenizers():
    vocab = {
        "[UNK]": 0,
        "<unk>": 1,
        "a": 2,
        "##b": 3,
        "@@b": 4,
        "ab": 5,
        "##a": 6,
        "@@a": 7,
        "é": 8,
        "##é": 9,
    }
    words = ["ab", "abab", "aba", "abb", "ba", "éé", "aé", "a" * 7, "é" * 6, "c", ""]
    for options in [
        dict(),
        dict(continuing_subword_prefix="@@"),
        dict(max_input_chars_per_word=5),
        dict(unk_token="<unk>"),
        dict(continuing_subword_prefix="", max_input_chars_per_word=3),
    ]:
        ours, theirs = (
            models.WordPiece(vocab, **options),
            tokenizers.models.WordPiece(vocab, **options),
        )
        for w in words:
            assert [(t.id, t.value, t.offsets) for t in ours.tokenize(w)] == [
                (t.id, t.value, t.offsets) for t in theirs.tokenize(w)
            ], (options, w)


def test_long_words():
    vocab = {"[UNK]": 0, "a": 1, "##a": 2, "##b": 3, "aaa": 4, "##aaab": 5, "##ab": 6}
    ours, theirs = (
        models.WordPiece(vocab, max_input_chars_per_word=10**9),
        tokenizers.models.WordPiece(vocab, max_input_chars_per_word=10**9),
    )
    for word in ["a" * 1500, "ab" * 700, "aaab" * 400 + "c"]:
        assert [(t.id, t.offsets) for t in ours.tokenize(word)] == [
            (t.id, t.offsets) for t in theirs.tokenize(word)
        ]
    # A 1 MB word (linear time: the reference's substring probes would take hours on it).
    word = "aaab" * (1 << 18)
    tokens = ours.tokenize(word)
    assert tokens[0].offsets == (0, 3) and tokens[-1].offsets[1] == len(word)
    assert all(a.offsets[1] == b.offsets[0] for a, b in zip(tokens, tokens[1:]))
    # With the default limit it is one [UNK] at once.
    assert [(t.value, t.offsets) for t in models.WordPiece(vocab).tokenize(word)] == [
        ("[UNK]", (0, len(word)))
    ]


@pytest.mark.parametrize("config", ["uncased", "chinese"])
def test_tokenizer_json_both_ways(config, tmp_path):
    ours, theirs = pair(config)
    texts = ADVERSARIAL + [PETAR]
    # tokenmill's tokenizer.json loads in tokenizers, with the same model section and encodings.
    ours_json = ours.to_str()
    loaded = tokenizers.Tokenizer.from_str(ours_json)
    assert json.loads(ours_json)["model"] == json.loads(theirs.to_str())["model"]
    assert_same_encodings(loaded, theirs, texts)
    # And the other way.
    back = tokenmill.Tokenizer.from_str(theirs.to_str())
    assert_same_encodings(back, theirs, texts)
    assert json.loads(back.to_str())["model"] == json.loads(theirs.to_str())["model"]
    path = tmp_path / "tokenizer.json"
    theirs.save(str(path))
    assert_same_encodings(tokenmill.Tokenizer.from_file(str(path)), theirs, texts)


def test_model_attributes_save_and_pickle(tmp_path):
    path = str(bert_vocab("bert_base_uncased"))
    wp = models.WordPiece.from_file(path, unk_token="[UNK]", max_input_chars_per_word=50)
    assert (wp.unk_token, wp.continuing_subword_prefix, wp.max_input_chars_per_word) == (
        "[UNK]",
        "##",
        50,
    )
    assert (
        wp.get_vocab_size() == 30522
        and wp.token_to_id("the") == 1996
        and wp.id_to_token(1996) == "the"
    )
    wp.max_input_chars_per_word = 3
    assert [t.value for t in wp.tokenize("abcd")] == ["[UNK]"]
    wp.max_input_chars_per_word = 100
    ours_files = wp.save(str(tmp_path), "ours")
    theirs_files = tokenizers.models.WordPiece.from_file(path).save(str(tmp_path), "ref")
    assert Path(ours_files[0]).read_bytes() == Path(theirs_files[0]).read_bytes()
    again = pickle.loads(pickle.dumps(wp))
    assert isinstance(again, models.WordPiece) and again.get_vocab() == wp.get_vocab()
    assert [t.id for t in again.tokenize("tokenization")] == [
        t.id for t in wp.tokenize("tokenization")
    ]
    # A model shared with a tokenizer sees changes made through tokenizer.model.
    tok = tokenmill.Tokenizer(models.WordPiece.from_file(path))
    assert isinstance(tok.model, models.WordPiece)
    tok.model.unk_token = "[PAD]"
    assert tok.encode("\u2603").tokens == ["[PAD]"]
    assert "WordPiece" in repr(wp)


def write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_vocab_file_errors_name_file_and_line(tmp_path):
    dup = write(tmp_path, "dup.txt", b"[UNK]\nhello\n##lo\nhello \n")
    for load in (models.WordPiece.from_file, models.WordPiece.read_file, BertWordPieceTokenizer):
        with pytest.raises(
            tokenmill.FormatError,
            match=(
                r"dup\.txt:line 4.*duplicate token 'hello'.*line 2"
                r"|dup\.txt:line 4.*\"hello\".*line 2"
            ),
        ):
            load(dup)
    bad = write(tmp_path, "bad.txt", b"[UNK]\nok\n\xff\xfe\n")
    with pytest.raises(tokenmill.FormatError, match=r"bad\.txt:line 3.*UTF-8"):
        models.WordPiece.from_file(bad)
    no_unk = write(tmp_path, "nounk.txt", b"hello\nworld\n")
    with pytest.raises(tokenmill.FormatError, match=r"nounk\.txt.*\[UNK\]"):
        models.WordPiece.from_file(no_unk)
    with pytest.raises(tokenmill.FormatError, match=r"<oov>"):
        BertWordPieceTokenizer(no_unk, unk_token="<oov>")
    with pytest.raises(tokenmill.TokenmillIOError, match="missing.txt"):
        models.WordPiece.from_file(str(tmp_path / "missing.txt"))
    # A model built from a dict without its unk token fails only on words that need it.
    wp = models.WordPiece({"a": 0, "##b": 1})
    assert [t.value for t in wp.tokenize("ab")] == ["a", "##b"]
    with pytest.raises(tokenmill.InvalidArgumentError, match=r"\[UNK\]"):
        wp.tokenize("abc")
    with pytest.raises(TypeError):
        models.WordPiece({"a": "zero"})


def test_bad_tokenizer_json_model():
    good = json.loads(
        tokenizers.Tokenizer(tokenizers.models.WordPiece({"[UNK]": 0, "a": 1})).to_str()
    )
    for broken in [
        {k: v for k, v in good["model"].items() if k != "vocab"},
        dict(good["model"], max_input_chars_per_word=-1),
        dict(good["model"], vocab={"a": "x"}),
    ]:
        with pytest.raises(tokenmill.TokenmillError):
            tokenmill.Tokenizer.from_str(json.dumps(dict(good, model=broken)))
