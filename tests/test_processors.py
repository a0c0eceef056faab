"""Post-processors: configuration, serialization and counts against `tokenizers.processors`.

Each processor is built the same way in both libraries; their tokenizer.json forms, reprs and
`num_special_tokens_to_add` must agree, and each library must load the other's JSON.
"""

from __future__ import annotations

import json
import pickle

import pytest
import tokenizers
import tokenmill
from tokenizers import models as hf_models, processors as hf_processors
from tokenmill import processors

BERT_SPECIALS = [("[CLS]", 101), ("[SEP]", 102)]

CONFIGS = {
    "byte_level": lambda m: m.ByteLevel(),
    "byte_level_no_trim": lambda m: m.ByteLevel(
        add_prefix_space=False, trim_offsets=False, use_regex=False
    ),
    "bert": lambda m: m.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
    "roberta": lambda m: m.RobertaProcessing(("</s>", 2), ("<s>", 0)),
    "roberta_no_prefix": lambda m: m.RobertaProcessing(
        ("</s>", 2), ("<s>", 0), trim_offsets=False, add_prefix_space=False
    ),
    "template_bert": lambda m: m.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=BERT_SPECIALS
    ),
    "template_lists_and_id_first": lambda m: m.TemplateProcessing(
        single=["[CLS]", "$0", "[SEP]"],
        pair=["[CLS]:0", "$A:0", "[SEP]:0", "$B:1", "[SEP]:1"],
        special_tokens=[(101, "[CLS]"), (102, "[SEP]")],
    ),
    "template_multi_id_special": lambda m: m.TemplateProcessing(
        single="<bos> $A <translate>:2",
        pair="<bos> $A <translate>:2 $b:3",
        special_tokens=[
            ("<bos>", 1),
            {"id": "<translate>", "ids": [7, 8, 9], "tokens": ["to", "French", ":"]},
        ],
    ),
    "template_defaults": lambda m: m.TemplateProcessing(),
    "template_type_ids_only": lambda m: m.TemplateProcessing(single="$1", pair="$B:2 $A:5"),
    "sequence": lambda m: m.Sequence(
        [m.ByteLevel(trim_offsets=True), m.BertProcessing(("[SEP]", 102), ("[CLS]", 101))]
    ),
    "nested_sequence": lambda m: m.Sequence(
        [m.Sequence([m.ByteLevel()]), m.RobertaProcessing(("</s>", 2), ("<s>", 0))]
    ),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_same_json_repr_and_counts(name):
    hf = CONFIGS[name](hf_processors)
    tm = CONFIGS[name](processors)
    assert tm.__getstate__() == hf.__getstate__()
    assert repr(tm) == repr(hf)
    assert str(tm) == str(hf)
    for is_pair in (False, True):
        assert tm.num_special_tokens_to_add(is_pair) == hf.num_special_tokens_to_add(is_pair)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_json_round_trip_both_ways(name):
    hf = CONFIGS[name](hf_processors)
    tm = CONFIGS[name](processors)
    # tokenizers' tokenizer.json section → tokenmill.
    tok = tokenizers.Tokenizer(hf_models.BPE())
    tok.post_processor = hf
    section = json.dumps(json.loads(tok.to_str())["post_processor"]).encode()
    other = processors.ByteLevel()
    other.__setstate__(section)
    assert other.__getstate__() == hf.__getstate__()
    # tokenmill's JSON → tokenizers.
    config = json.loads(tok.to_str())
    config["post_processor"] = json.loads(tm.__getstate__())
    back = tokenizers.Tokenizer.from_str(json.dumps(config))
    assert back.post_processor.__getstate__() == hf.__getstate__()
    # Pickling keeps the class.
    loaded = pickle.loads(pickle.dumps(tm))
    assert type(loaded) is type(tm)
    assert loaded.__getstate__() == tm.__getstate__()


def test_attributes_and_setters_match_tokenizers():
    hf = hf_processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tm = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    for obj in (hf, tm):
        obj.sep = ("[SEP]", 5)
        obj.trim_offsets = False
    assert tm.__getstate__() == hf.__getstate__()
    assert (tm.sep, tm.cls, tm.trim_offsets, tm.add_prefix_space) == (
        hf.sep,
        hf.cls,
        hf.trim_offsets,
        hf.add_prefix_space,
    )
    hf_t = CONFIGS["template_bert"](hf_processors)
    tm_t = CONFIGS["template_bert"](processors)
    assert tm_t.single == hf_t.single
    hf_t.single = "$A [SEP]"
    tm_t.single = "$A [SEP]"
    assert tm_t.__getstate__() == hf_t.__getstate__()
    # tokenizers keeps the count of the old template after `single` is set (a stale cache);
    # tokenmill recounts, which is what tokenizers itself gives once it reloads the JSON.
    fresh = tokenizers.Tokenizer(hf_models.BPE())
    fresh.post_processor = hf_t
    reloaded = tokenizers.Tokenizer.from_str(fresh.to_str()).post_processor
    assert tm_t.num_special_tokens_to_add(False) == reloaded.num_special_tokens_to_add(False) == 1
    seq = CONFIGS["sequence"](processors)
    assert isinstance(seq[0], processors.ByteLevel) and isinstance(
        seq[1], processors.BertProcessing
    )
    seq[0] = processors.ByteLevel(trim_offsets=False)
    assert seq[0].trim_offsets is False


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(single="[CLS] $A"),  # special token not given
        dict(pair="$A [SEP]", special_tokens=[("[SEP]", 1)]),  # pair without $B
        dict(single="$C"),  # unknown sequence
        dict(single="$A:x"),  # bad type id
        dict(
            single="[X] $A", special_tokens=[{"id": "[X]", "ids": [1, 2], "tokens": ["a"]}]
        ),  # lengths differ
    ],
)
def test_invalid_templates_raise_like_tokenizers(kwargs):
    with pytest.raises(Exception):  # noqa: B017 (the peer raises a plain Exception)
        hf_processors.TemplateProcessing(**kwargs)
    with pytest.raises(tokenmill.InvalidArgumentError):
        processors.TemplateProcessing(**kwargs)


def test_bad_arguments_raise_type_error():
    with pytest.raises(TypeError):
        processors.TemplateProcessing(special_tokens=[3.5])
    with pytest.raises(TypeError):
        processors.Sequence([processors.ByteLevel(), "nope"])


# --- through a full Tokenizer, on real text ---------------------------------------------------

from conftest import read_sample, shared_path  # noqa: E402

ENCODING_FIELDS = [
    "ids",
    "tokens",
    "type_ids",
    "offsets",
    "special_tokens_mask",
    "attention_mask",
    "word_ids",
    "sequence_ids",
]


def gpt2_tokenizer(add_prefix_space: bool) -> tokenizers.Tokenizer:
    from tokenizers import decoders as hf_decoders, pre_tokenizers as hf_pre_tokenizers

    vocab = shared_path("pretrained", "gpt2", "encoder.json")
    merges = shared_path("pretrained", "gpt2", "vocab.bpe")
    tok = tokenizers.Tokenizer(hf_models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = hf_pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = hf_decoders.ByteLevel()
    return tok


def text_pairs() -> list[tuple[str, str]]:
    """Pairs of consecutive lines from English and multilingual text, with leading/trailing
    spaces kept (they matter to offset trimming)."""
    lines = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 15_000
    ).splitlines()
    for lang_dir in sorted(
        p for p in shared_path("corpora", "multilingual").iterdir() if p.is_dir()
    ):
        lines += read_sample(sorted(lang_dir.glob("*.txt"))[0], 2_500).splitlines()
    lines = [line for line in lines if line.strip()]
    lines += [
        "  two leading spaces",
        "trailing spaces   ",
        " ",
        "\u00a0nbsp\u3000ideographic space",
    ]
    return list(zip(lines[::2], lines[1::2]))


def assert_same_encoding(hf_enc, tm_enc, context):
    for field in ENCODING_FIELDS:
        assert getattr(tm_enc, field) == getattr(hf_enc, field), (field, context)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_processing_through_tokenizer_matches(name, add_prefix_space):
    hf = gpt2_tokenizer(add_prefix_space)
    hf.post_processor = CONFIGS[name](hf_processors)
    tm = tokenmill.Tokenizer.from_str(hf.to_str())
    assert tm.post_processor.__getstate__() == hf.post_processor.__getstate__()
    pairs = text_pairs()
    for add_special_tokens in (True, False):
        for a, b in pairs:
            for args in ((a,), (a, b)):
                hf_enc = hf.encode(*args, add_special_tokens=add_special_tokens)
                tm_enc = tm.encode(*args, add_special_tokens=add_special_tokens)
                assert_same_encoding(hf_enc, tm_enc, (args, add_special_tokens))
        # The batch path goes through the same post-processing.
        hf_batch = hf.encode_batch(pairs[:50], add_special_tokens=add_special_tokens)
        tm_batch = tm.encode_batch(pairs[:50], add_special_tokens=add_special_tokens)
        for h, t in zip(hf_batch, tm_batch):
            assert_same_encoding(h, t, "batch")


@pytest.mark.parametrize(
    "name", ["bert", "roberta", "template_multi_id_special", "sequence", "byte_level"]
)
def test_process_method_matches(name):
    """`PostProcessor.process` on encodings made without a post-processor."""
    hf_tok = gpt2_tokenizer(add_prefix_space=True)
    tm_tok = tokenmill.Tokenizer.from_str(hf_tok.to_str())
    hf_p = CONFIGS[name](hf_processors)
    tm_p = CONFIGS[name](processors)
    for a, b in text_pairs()[:40]:
        hf_a, hf_b = hf_tok.encode(a), hf_tok.encode(b)
        tm_a, tm_b = tm_tok.encode(a), tm_tok.encode(b)
        for add in (True, False):
            assert_same_encoding(
                hf_p.process(hf_a, add_special_tokens=add),
                tm_p.process(tm_a, add_special_tokens=add),
                (a, add),
            )
            assert_same_encoding(
                hf_p.process(hf_a, hf_b, add), tm_p.process(tm_a, tm_b, add), (a, b, add)
            )
