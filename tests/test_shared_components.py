"""Shared component state: changing a component through any Python object that holds it changes
every Tokenizer (and Sequence) that holds it, exactly as in `tokenizers`.

Each scenario is one function run against both libraries (the same code with
``tokenizers`` or ``tokenmill`` as ``lib``); the encodings (ids, tokens, offsets) and decodings
it records must be identical. Text: real multilingual lines from ../shared/corpora.
"""

from __future__ import annotations

import pickle

import pytest
import tokenizers
import tokenmill
from conftest import STUDY_IN_SCARLET, corpus_text, gpt2, gpt2_model, non_empty_lines

LIBS = {"tokenizers": tokenizers, "tokenmill": tokenmill}


@pytest.fixture(scope="module")
def lines():
    """~400 lines of English, French, German, Russian, Chinese, Hindi and Arabic text (with
    digits)."""
    samples = [
        (STUDY_IN_SCARLET, 60_000),
        ("gutenberg/pg13951_fr_les_trois_mousquetaires.txt", 60_000),
        ("gutenberg/pg34811_de_buddenbrooks.txt", 60_000),
    ]
    samples += [(f"multilingual/{lang}", 30_000) for lang in ["ru", "zh", "hi", "ar"]]
    out = [line.strip() for rel in samples for line in non_empty_lines(corpus_text(rel))]
    # Every 7th line, to mix the languages and keep the test quick.
    return [line for i, line in enumerate(out) if i % 7 == 0][:400] + [
        "Call 0123456789 at 10:45, room 2024."
    ]


def snapshot(tok, lines):
    """What a tokenizer does now: ids, tokens and offsets of every line, and the decodings."""
    encodings = tok.encode_batch(lines)
    return (
        [e.ids for e in encodings],
        [e.tokens for e in encodings],
        [e.offsets for e in encodings],
        tok.decode_batch([e.ids for e in encodings]),
    )


def recorder(records: list, lines):
    """A `record(tok)` callback that appends the snapshot of `tok` on `lines` to `records`."""
    return lambda tok: records.append(snapshot(tok, lines))


def run_both(scenario, lines):
    """Runs `scenario(lib, record)` for both libraries and checks they recorded the same."""
    results = {}
    for name, lib in LIBS.items():
        records = []
        scenario(lib, recorder(records, lines))
        results[name] = records
    assert len(results["tokenmill"]) == len(results["tokenizers"]) > 0
    for step, (ours, theirs) in enumerate(zip(results["tokenmill"], results["tokenizers"])):
        assert ours == theirs, f"step {step} differs from tokenizers"
    return results["tokenmill"]


# ---- scenarios run by `test_same_as_tokenizers`: `fn(lib, record)`, as `run_both` wants ----

SCENARIOS = []


def scenario(check=None):
    """Registers the decorated scenario for `test_same_as_tokenizers`; `check(records)`, if
    given, asserts what tokenmill's records must show besides being tokenizers'."""

    def register(fn):
        SCENARIOS.append(pytest.param(fn, check, id=fn.__name__))
        return fn

    return register


def first_two_changes_show(records):
    """Each of the first two changes changes the output."""
    assert records[0] != records[1] != records[2]


def dropout_undone(records):
    """The change shows, and undoing it gives the first output back."""
    assert records[0] != records[1] and records[0] == records[2]


def all_differ(records):
    """Every step gives a different output."""
    assert len({repr(r) for r in records}) == len(records)


@scenario(dropout_undone)
def model_attribute_through_tok_model(lib, record):
    tok = gpt2(lib)
    record(tok)
    tok.model.dropout = 1.0  # every merge dropped: one token per byte-level char
    record(tok)
    tok.model.dropout = None
    record(tok)


@scenario()
def model_shared_by_two_tokenizers(lib, record):
    first = gpt2(lib)
    second = lib.Tokenizer(first.model)
    second.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
    model = second.model
    model.dropout = 1.0
    record(first)
    record(second)


@scenario()
def model_assigned_then_changed(lib, record):
    tok = gpt2(lib)
    model = gpt2_model(lib)
    tok.model = model
    record(tok)
    model.dropout = 1.0
    record(tok)


@scenario(first_two_changes_show)
def normalizer_changed_after_assignment(lib, record):
    tok = gpt2(lib)
    normalizer = lib.normalizers.BertNormalizer(lowercase=True, strip_accents=False)
    tok.normalizer = normalizer
    record(tok)
    normalizer.lowercase = False
    record(tok)
    tok.normalizer.handle_chinese_chars = False
    normalizer.strip_accents = True
    record(tok)


@scenario(all_differ)
def normalizer_sequence_items(lib, record):
    tok = gpt2(lib)
    prepend = lib.normalizers.Prepend("▁")
    tok.normalizer = lib.normalizers.Sequence(
        [lib.normalizers.Strip(), prepend, lib.normalizers.Lowercase()]
    )
    record(tok)
    tok.normalizer[1].prepend = "<<"  # through indexing
    record(tok)
    prepend.prepend = ">>"  # through the object the Sequence was built from
    record(tok)
    tok.normalizer[0] = lib.normalizers.Prepend("%")  # item assignment
    record(tok)
    item = tok.normalizer[2]
    # an object held before sees the new value
    tok.normalizer[2] = lib.normalizers.Replace("e", "E")
    assert repr(item) == repr(tok.normalizer[2])
    record(tok)


@scenario(first_two_changes_show)
def pre_tokenizer_attribute_and_sequence(lib, record):
    tok = gpt2(lib)
    tok.pre_tokenizer.add_prefix_space = True
    record(tok)
    digits = lib.pre_tokenizers.Digits(individual_digits=False)
    tok.pre_tokenizer = lib.pre_tokenizers.Sequence(
        [digits, lib.pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    record(tok)
    digits.individual_digits = True
    record(tok)
    tok.pre_tokenizer[1].use_regex = False
    record(tok)
    tok.pre_tokenizer[1] = lib.pre_tokenizers.ByteLevel(add_prefix_space=True)
    record(tok)


@scenario(first_two_changes_show)
def post_processor_attribute(lib, record):
    tok = gpt2(lib)
    tok.add_special_tokens(["<|endoftext|>"])
    processor = lib.processors.RobertaProcessing(("<|endoftext|>", 50256), ("<|endoftext|>", 50256))
    tok.post_processor = processor
    record(tok)
    processor.trim_offsets = False
    record(tok)
    tok.post_processor.sep = ("!", 0)
    record(tok)


@scenario()
def decoder_attribute_and_sequence_copies(lib, record):
    tok = gpt2(lib)
    strip = lib.decoders.Strip(content="Ġ", left=1, right=0)
    tok.decoder = lib.decoders.Sequence([strip, lib.decoders.ByteLevel()])
    record(tok)
    strip.start = 0  # a decoder Sequence holds copies (as in tokenizers): no change
    record(tok)
    tok.decoder = strip
    strip.start = 2
    record(tok)


@scenario()
def pickled_tokenizer_keeps_changes(lib, record):
    tok = gpt2(lib)
    tok.normalizer = lib.normalizers.Sequence(
        [lib.normalizers.Lowercase(), lib.normalizers.Prepend("x")]
    )
    tok.normalizer[1].prepend = "y"
    tok.model.dropout = 1.0
    record(pickle.loads(pickle.dumps(tok)))
    record(lib.Tokenizer.from_str(tok.to_str()))


@pytest.mark.parametrize("scenario_fn, check", SCENARIOS)
def test_same_as_tokenizers(scenario_fn, check, lines):
    records = run_both(scenario_fn, lines)
    if check is not None:
        check(records)


def test_trained_model_is_the_shared_one(lines):
    def scenario(lib, record):
        tok = lib.Tokenizer(lib.models.BPE())
        tok.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = lib.decoders.ByteLevel()
        model = tok.model
        trainer = lib.trainers.BpeTrainer(
            vocab_size=600,
            show_progress=False,
            initial_alphabet=lib.pre_tokenizers.ByteLevel.alphabet(),
        )
        tok.train_from_iterator(lines, trainer)
        record(tok)
        # The model object taken before training is the trained one.
        assert model.token_to_id("Ġthe") == tok.token_to_id("Ġthe") is not None
        model.dropout = 1.0
        record(tok)

    run_both(scenario, lines)


def test_components_outlive_their_tokenizer(lines):
    """A component taken from a tokenizer stays usable after the tokenizer is gone."""
    tok = gpt2(tokenmill)
    theirs = gpt2(tokenizers)
    ours_model, their_model = tok.model, theirs.model
    ours_pre, their_pre = tok.pre_tokenizer, theirs.pre_tokenizer
    del tok, theirs
    for line in lines[:50]:
        assert [t.value for t in ours_model.tokenize("Ġhello")] == [
            t.value for t in their_model.tokenize("Ġhello")
        ]
        assert ours_pre.pre_tokenize_str(line) == their_pre.pre_tokenize_str(line)
