"""Trainers and BPE options against `tokenizers`, on real text:

* what training does to a BPE model's ``continuing_subword_prefix`` / ``end_of_word_suffix``
  (``tokenizers`` replaces both by the trainer's, ``None`` included) and to a WordPiece model's
  prefix (the trainer's, or ``##`` when the trainer has none);
* ``ignore_merges`` with dropout (``tokenizers`` ignores it when dropout is on);
* trainer pickles: the state is ``tokenizers``' JSON layout, both ways.
"""

from __future__ import annotations

import json
import pickle

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

ENGLISH = ("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt")


def english_lines(max_bytes: int = 200_000) -> list[str]:
    return read_sample(shared_path(*ENGLISH), max_bytes).splitlines()


def model_json(tokenizer) -> dict:
    return json.loads(tokenizer.to_str())["model"]


AFFIXES = [
    (dict(continuing_subword_prefix="##", end_of_word_suffix="</w>"), {}),
    ({}, dict(continuing_subword_prefix="@@", end_of_word_suffix="_e")),
    (dict(continuing_subword_prefix="##"), dict(end_of_word_suffix="</w>")),
    (dict(end_of_word_suffix="</w>"), dict(continuing_subword_prefix="##")),
]


@pytest.mark.parametrize("model_options, trainer_options", AFFIXES)
def test_bpe_training_sets_prefix_and_suffix_as_tokenizers(model_options, trainer_options):
    lines = english_lines()
    trained = {}
    for lib in (tokenizers, tokenmill):
        tok = lib.Tokenizer(lib.models.BPE(**model_options))
        tok.pre_tokenizer = lib.pre_tokenizers.Whitespace()
        tok.train_from_iterator(
            lines, lib.trainers.BpeTrainer(vocab_size=800, show_progress=False, **trainer_options)
        )
        trained[lib.__name__] = tok
    ours, theirs = model_json(trained["tokenmill"]), model_json(trained["tokenizers"])
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        assert ours[key] == theirs[key], key
        assert getattr(trained["tokenmill"].model, key) == getattr(trained["tokenizers"].model, key)
    # (The vocabularies themselves are compared in test_trainers_bpe.py: tokenizers breaks ties
    # between prefixed / suffixed forms in hash order, so a tie at the last merge may differ.)
    assert len(ours["vocab"]) == len(theirs["vocab"])
    # The model tokenmill trained encodes the same in tokenizers as in tokenmill.
    reloaded = tokenizers.Tokenizer.from_str(trained["tokenmill"].to_str())
    for line in lines[:300]:
        assert trained["tokenmill"].encode(line).tokens == reloaded.encode(line).tokens, line


@pytest.mark.parametrize(
    "model_prefix, trainer_prefix", [("##", "##"), ("@@", "##"), ("##", None), ("@@", None)]
)
def test_wordpiece_training_sets_the_prefix_as_tokenizers(model_prefix, trainer_prefix):
    lines = english_lines(100_000)
    prefixes = []
    for lib in (tokenizers, tokenmill):
        tok = lib.Tokenizer(
            lib.models.WordPiece(unk_token="[UNK]", continuing_subword_prefix=model_prefix)
        )
        tok.pre_tokenizer = lib.pre_tokenizers.BertPreTokenizer()
        trainer = lib.trainers.WordPieceTrainer(
            vocab_size=600, show_progress=False, special_tokens=["[UNK]"]
        )
        trainer.continuing_subword_prefix = trainer_prefix  # tokenizers' constructor refuses None
        tok.train_from_iterator(lines, trainer)
        prefixes.append(
            (model_json(tok)["continuing_subword_prefix"], tok.model.continuing_subword_prefix)
        )
    assert prefixes[0] == prefixes[1]


def gpt2_like_model(lines):
    """A byte-level BPE that tokenizers trains deterministically (its vocab and merges)."""
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=1500,
        show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(lines, trainer)
    model = model_json(tok)
    return model["vocab"], [
        tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]
    ]


@pytest.mark.parametrize("dropout", [None, 0.0, 1.0])
@pytest.mark.parametrize("ignore_merges", [False, True])
def test_ignore_merges_with_dropout_as_tokenizers(dropout, ignore_merges):
    lines = english_lines(100_000)
    vocab, merges = gpt2_like_model(lines)
    encoded = []
    for lib in (tokenizers, tokenmill):
        tok = lib.Tokenizer(
            lib.models.BPE(dict(vocab), list(merges), dropout=dropout, ignore_merges=ignore_merges)
        )
        tok.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
        encoded.append([tok.encode(line).ids for line in lines[:400]])
    assert encoded[0] == encoded[1]
    if ignore_merges and dropout == 1.0:
        # Dropout 1 skips every merge, whole-word tokens included: one token per byte.
        assert all(len(ids) == len(line.encode()) for ids, line in zip(encoded[1], lines[:400]))


def trainer_pairs():
    """The same trainer built by both libraries."""
    specials = ["<s>", tokenizers.AddedToken("<pad>", special=True)]
    for name, options in [
        (
            "BpeTrainer",
            dict(
                vocab_size=123,
                min_frequency=3,
                special_tokens=specials,
                limit_alphabet=50,
                initial_alphabet=["a", "é"],
                end_of_word_suffix="</w>",
                max_token_length=7,
            ),
        ),
        ("BpeTrainer", dict(continuing_subword_prefix="##", show_progress=False)),
        (
            "WordPieceTrainer",
            dict(
                vocab_size=500, special_tokens=["[UNK]"], limit_alphabet=30, initial_alphabet=["x"]
            ),
        ),
        (
            "UnigramTrainer",
            dict(
                vocab_size=400,
                special_tokens=["<unk>"],
                unk_token="<unk>",
                shrinking_factor=0.5,
                max_piece_length=8,
            ),
        ),
        (
            "WordLevelTrainer",
            dict(vocab_size=700, min_frequency=2, special_tokens=specials, show_progress=False),
        ),
    ]:
        yield (
            name,
            getattr(tokenizers.trainers, name)(**options),
            getattr(tokenmill.trainers, name)(**options),
        )


def normalized_state(state: bytes) -> dict:
    """A pickled state with the initial alphabet sorted (tokenizers writes a hash set)."""
    value = json.loads(state)
    ((name, fields),) = value.items()
    inner = fields.get("bpe_trainer", fields)
    if "initial_alphabet" in inner:
        inner["initial_alphabet"] = sorted(inner["initial_alphabet"])
    return value


@pytest.mark.parametrize("index", range(5))
def test_trainer_state_is_tokenizers_layout_both_ways(index):
    name, theirs, ours = list(trainer_pairs())[index]
    assert normalized_state(ours.__getstate__()) == normalized_state(theirs.__getstate__())
    # A tokenizers state loads in tokenmill, and tokenmill's in tokenizers.
    loaded = getattr(tokenmill.trainers, name)()
    loaded.__setstate__(theirs.__getstate__())
    assert normalized_state(loaded.__getstate__()) == normalized_state(theirs.__getstate__())
    back = getattr(tokenizers.trainers, name)()
    back.__setstate__(ours.__getstate__())
    assert normalized_state(back.__getstate__()) == normalized_state(theirs.__getstate__())
    copy = pickle.loads(pickle.dumps(ours))
    assert type(copy) is type(ours) and copy.__getstate__() == ours.__getstate__()


def test_trainer_state_keeps_word_counts_and_reads_the_older_layout():
    lines = english_lines(50_000)
    tok = tokenmill.Tokenizer(tokenmill.models.BPE())
    tok.pre_tokenizer = tokenmill.pre_tokenizers.Whitespace()
    trainer = tokenmill.trainers.BpeTrainer(vocab_size=300, show_progress=False)
    tok.train_from_iterator(lines, trainer)
    words = json.loads(trainer.__getstate__())["BpeTrainer"]["words"]
    reference = tokenizers.Tokenizer(tokenizers.models.BPE())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    reference_trainer = tokenizers.trainers.BpeTrainer(vocab_size=300, show_progress=False)
    reference.train_from_iterator(lines, reference_trainer)
    assert words == json.loads(reference_trainer.__getstate__())["BpeTrainer"]["words"]
    # tokenmill's earlier pickles were internally tagged: they still load.
    older = {
        "type": "WordPieceTrainer",
        "bpe_trainer": {"vocab_size": 77, "continuing_subword_prefix": "##"},
        "algorithm": "likelihood",
    }
    wordpiece = tokenmill.trainers.WordPieceTrainer()
    wordpiece.__setstate__(json.dumps(older).encode())
    assert (wordpiece.vocab_size, wordpiece.algorithm) == (77, "likelihood")
    assert json.loads(wordpiece.__getstate__())["WordPieceTrainer"]["algorithm"] == "likelihood"
    with pytest.raises(ValueError):
        wordpiece.__setstate__(b'{"WordLevelTrainer": {}}')


@pytest.mark.parametrize("index", range(5))
def test_trainer_repr_and_str_as_tokenizers(index):
    name, theirs, ours = list(trainer_pairs())[index]
    # tokenizers prints its initial alphabet in hash order: compare with one character.
    for trainer in (theirs, ours):
        if hasattr(trainer, "initial_alphabet") and trainer.initial_alphabet:
            trainer.initial_alphabet = ["a"]
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
