"""WordLevel model and WordLevelTrainer against `tokenizers`, on real text:

* the trained vocabulary and ids (special tokens first, then words by decreasing count, ties in
  byte order, ``min_frequency``, ``vocab_size``; a special token that is also a word keeps the
  word's id, leaving a hole, as in ``tokenizers``), through ``train_from_iterator`` and
  ``train(files)``;
* the model API (constructor, ``unk_token``, lookups, ``tokenize``, the missing-unk error,
  ``read_file`` / ``from_file`` / ``save``, pickling, repr);
* tokenizer.json written by one library and read by the other, encoding the same;
* trainers refusing another kind of model, with ``tokenizers``' message;
* trainers' ``special_tokens`` as ``AddedToken`` objects.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402 (after importorskip)

LIBS = (tokenizers, tokenmill)
ENGLISH = ("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt")
FRENCH = ("corpora", "gutenberg", "pg13951_fr_les_trois_mousquetaires.txt")


def lines_of(parts, max_bytes: int = 300_000) -> list[str]:
    return read_sample(shared_path(*parts), max_bytes).splitlines()


def trained(lib, lines, **options):
    tok = lib.Tokenizer(lib.models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
    tok.train_from_iterator(lines, lib.trainers.WordLevelTrainer(show_progress=False, **options))
    return tok


def ids_or_error(tok, line):
    """The ids, or "missing unk" when the vocabulary has neither the word nor the unk token."""
    try:
        return tok.encode(line).ids
    # tokenizers raises a bare Exception.
    except Exception as error:  # noqa: BLE001
        assert str(error).startswith("WordLevel error: Missing [UNK] token"), error
        return "missing unk"


TRAINER_OPTIONS = [
    {"vocab_size": 30000},
    {"vocab_size": 2000, "min_frequency": 2, "special_tokens": ["<unk>", "<pad>"]},
    # Cut inside a long run of equal counts: the tie rule decides which words are kept.
    {"vocab_size": 3001, "min_frequency": 1},
    # Special tokens that are also corpus words, one of them twice: holes, as in tokenizers.
    {"vocab_size": 500, "special_tokens": ["the", "<unk>", "and", "the"]},
    {"vocab_size": 3, "special_tokens": ["<s>", "</s>", "<unk>", "<pad>"]},
    {"min_frequency": 10**9, "special_tokens": ["<unk>"]},
]


@pytest.mark.parametrize("corpus", [ENGLISH, FRENCH])
@pytest.mark.parametrize("options", TRAINER_OPTIONS)
def test_trainer_learns_the_tokenizers_vocabulary(corpus, options):
    lines = lines_of(corpus)
    theirs, ours = (trained(lib, lines, **options) for lib in LIBS)
    assert ours.get_vocab() == theirs.get_vocab()
    assert ours.get_vocab(with_added_tokens=False) == theirs.get_vocab(with_added_tokens=False)
    assert ours.get_vocab_size() == theirs.get_vocab_size()
    assert json.loads(ours.to_str())["model"] == json.loads(theirs.to_str())["model"]
    for line in lines[:500]:
        assert ids_or_error(ours, line) == ids_or_error(theirs, line), line


def test_train_from_files_and_default_trainer(tmp_path):
    path = shared_path(*ENGLISH)
    vocabs = []
    for lib in LIBS:
        tok = lib.Tokenizer(lib.models.WordLevel(unk_token="[UNK]"))
        tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        tok.train(
            [str(path)],
            lib.trainers.WordLevelTrainer(
                vocab_size=4000, special_tokens=["[UNK]"], show_progress=False
            ),
        )
        vocabs.append(tok.get_vocab())
        assert type(tok.model.get_trainer()).__name__ == "WordLevelTrainer"
    assert vocabs[0] == vocabs[1]


def test_model_api_as_tokenizers(tmp_path):
    vocab = {"<unk>": 0, "héllo": 1, "world": 2, "a": 7}
    for lib in LIBS:
        assert lib.models.WordLevel().unk_token == "<unk>"
        assert lib.Tokenizer(lib.models.WordLevel()).get_vocab() == {}
    theirs, ours = (lib.models.WordLevel(vocab, unk_token="<unk>") for lib in LIBS)
    assert isinstance(ours, tokenmill.models.Model)
    assert repr(ours) == repr(theirs)
    big = {f"w{i}": i for i in range(150)}
    assert repr(tokenmill.models.WordLevel(big)) == repr(tokenizers.models.WordLevel(big))
    assert str(tokenmill.models.WordLevel(big)) == str(tokenizers.models.WordLevel(big))
    # (tokenizers' models have no get_vocab: its Tokenizer's is the reference.)
    assert ours.get_vocab() == tokenizers.Tokenizer(theirs).get_vocab() == vocab
    assert ours.get_vocab_size() == len(vocab)
    for token in ["héllo", "zzz", ""]:
        assert ours.token_to_id(token) == theirs.token_to_id(token)
    for i in range(9):
        assert ours.id_to_token(i) == theirs.id_to_token(i)
    for word in ["héllo", "world", "unknown", ""]:
        assert [(t.id, t.value, t.offsets) for t in ours.tokenize(word)] == [
            (t.id, t.value, t.offsets) for t in theirs.tokenize(word)
        ]
    for model in (theirs, ours):
        model.unk_token = "a"
        assert model.unk_token == "a"
        assert [t.id for t in model.tokenize("unknown")] == [7]
    assert ours.__getstate__() == theirs.__getstate__()
    copy = pickle.loads(pickle.dumps(ours))
    assert type(copy) is tokenmill.models.WordLevel and copy.__getstate__() == ours.__getstate__()
    # `save` writes the same vocab.json, which both libraries read back.
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    (saved,) = ours.save(str(ours_dir), "pre")
    (expected,) = theirs.save(str(theirs_dir), "pre")
    assert saved.endswith("pre-vocab.json")
    assert Path(saved).read_bytes() == Path(expected).read_bytes()
    for lib in LIBS:
        assert lib.models.WordLevel.read_file(saved) == vocab
        model = lib.models.WordLevel.from_file(saved, unk_token="a")
        assert model.unk_token == "a" and lib.Tokenizer(model).get_vocab() == vocab


def test_missing_unk_token_raises_as_tokenizers():
    for lib in LIBS:
        model = lib.models.WordLevel({"a": 0})
        assert [t.id for t in model.tokenize("a")] == [0]
        with pytest.raises(
            Exception, match=r"^WordLevel error: Missing \[UNK\] token from the vocabulary"
        ):
            model.tokenize("b")
        tok = lib.Tokenizer(model)
        with pytest.raises(Exception, match=r"^WordLevel error: Missing \[UNK\] token"):
            tok.encode("b")
    with pytest.raises(tokenmill.InvalidArgumentError, match='"b".*"<unk>"'):
        tokenmill.models.WordLevel({"a": 0}).tokenize("b")


def test_read_file_of_a_real_vocab_and_its_errors(tmp_path):
    path = shared_path("pretrained", "gpt2", "encoder.json")
    ours = tokenmill.models.WordLevel.read_file(str(path))
    assert ours == tokenizers.models.WordLevel.read_file(str(path))
    model = tokenmill.models.WordLevel(str(path))  # a path as vocab, as tokenizers allows
    assert model.get_vocab_size() == len(ours)
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 0,\n"b": -3}')
    with pytest.raises(tokenmill.FormatError, match=r"bad\.json:line 2"):
        tokenmill.models.WordLevel.read_file(str(bad))
    with pytest.raises(tokenmill.TokenmillError, match="missing.json"):
        tokenmill.models.WordLevel.from_file(str(tmp_path / "missing.json"))


@pytest.mark.parametrize("writer, reader", [(tokenmill, tokenizers), (tokenizers, tokenmill)])
def test_tokenizer_json_round_trips_between_the_libraries(writer, reader):
    lines = lines_of(ENGLISH, 150_000)
    source = trained(writer, lines, vocab_size=1500, special_tokens=["<unk>", "<pad>"])
    text = source.to_str()
    loaded = reader.Tokenizer.from_str(text)
    assert type(loaded.model).__name__ == "WordLevel"
    assert json.loads(loaded.to_str()) == json.loads(text)
    for line in lines[-300:]:
        assert loaded.encode(line).ids == source.encode(line).ids, line
        assert loaded.encode(line).tokens == source.encode(line).tokens, line
    # Batches (tokenmill fills their token texts from the vocabulary late) give the same tokens.
    batch = lines[-300:]
    expected = [e.tokens for e in source.encode_batch(batch)]
    assert [e.tokens for e in loaded.encode_batch(batch)] == expected
    assert [e.offsets for e in loaded.encode_batch(batch)] == [
        e.offsets for e in source.encode_batch(batch)
    ]
    # Old files without the model's "type" are read as WordLevel too (WordPiece needs more).
    untyped = json.loads(text)
    del untyped["model"]["type"]
    assert type(reader.Tokenizer.from_str(json.dumps(untyped)).model).__name__ == "WordLevel"


MODELS = {"BPE": {}, "WordPiece": {}, "WordLevel": {}, "Unigram": {}}
TRAINERS = ["BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer"]


@pytest.mark.parametrize("trainer_name", TRAINERS)
@pytest.mark.parametrize("model_name", MODELS)
def test_a_trainer_refuses_another_kind_of_model(trainer_name, model_name, tmp_path):
    kind = trainer_name.removesuffix("Trainer").replace("Bpe", "BPE")
    if kind == model_name:
        return
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n")
    messages = []
    for lib in LIBS:
        tok = lib.Tokenizer(getattr(lib.models, model_name)())
        vocab_before = tok.get_vocab()
        trainer = getattr(lib.trainers, trainer_name)(show_progress=False)
        # tokenizers raises a bare Exception.
        with pytest.raises(Exception) as error:
            tok.train([str(corpus)], trainer)
        with pytest.raises(Exception):  # noqa: B017
            tok.train_from_iterator(["hello world"], trainer)
        assert type(tok.model).__name__ == model_name and tok.get_vocab() == vocab_before
        messages.append(str(error.value))
    assert messages[1].startswith(messages[0]), messages


def test_unigram_trainer_keeps_training_unigram_models():
    lines = lines_of(ENGLISH, 60_000)
    tok = tokenmill.Tokenizer(tokenmill.models.Unigram())
    tok.train_from_iterator(
        lines, tokenmill.trainers.UnigramTrainer(vocab_size=300, show_progress=False)
    )
    assert type(tok.model).__name__ == "Unigram" and tok.get_vocab_size() == 300


@pytest.mark.parametrize("name", TRAINERS)
def test_special_tokens_are_added_tokens_as_in_tokenizers(name):
    got = []
    for lib in LIBS:
        given = lib.AddedToken("<b>", lstrip=True)
        explicit = lib.AddedToken("<c>", normalized=True)
        trainer = getattr(lib.trainers, name)(special_tokens=["<a>", given, explicit])
        tokens = trainer.special_tokens
        assert all(isinstance(t, lib.AddedToken) for t in tokens)
        assert given.special  # the caller's token is marked special, as tokenizers does
        got.append([repr(t) for t in tokens])
        trainer.special_tokens = [lib.AddedToken("<d>", rstrip=True), "<e>"]
        got.append([repr(t) for t in trainer.special_tokens])
        trainer.special_tokens = []
        assert trainer.special_tokens == []
    assert got[:2] == got[2:]


def test_train_new_from_iterator_like_transformers(tmp_path):
    transformers = pytest.importorskip("transformers")
    lines = lines_of(ENGLISH, 120_000)
    source = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({"[UNK]": 0, "[PAD]": 1}, unk_token="[UNK]")
    )
    source.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    source.add_special_tokens(["[UNK]", "[PAD]"])
    path = tmp_path / "tokenizer.json"
    source.save(str(path))
    theirs = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(path), unk_token="[UNK]", pad_token="[PAD]"
    )
    theirs = theirs.train_new_from_iterator(lines, vocab_size=900)
    ours = tokenmill.Tokenizer.from_file(str(path)).train_new_from_iterator(
        lines, vocab_size=900, show_progress=False
    )
    assert ours.get_vocab() == theirs.get_vocab()
    assert (
        json.loads(ours.to_str())["model"] == json.loads(theirs.backend_tokenizer.to_str())["model"]
    )
