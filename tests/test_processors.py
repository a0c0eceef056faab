"""Post-processors: configuration, serialization and counts against `tokenizers.processors`.

Each processor is built the same way in both libraries; their tokenizer.json forms, reprs and
`num_special_tokens_to_add` must agree, and each library must load the other's JSON.
"""
from __future__ import annotations

import json
import pickle

import pytest
import tokenizers
from tokenizers import models as hf_models
from tokenizers import processors as hf_processors

import tokenmill
from tokenmill import processors

BERT_SPECIALS = [("[CLS]", 101), ("[SEP]", 102)]

CONFIGS = {
    "byte_level": lambda m: m.ByteLevel(),
    "byte_level_no_trim": lambda m: m.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    "bert": lambda m: m.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
    "roberta": lambda m: m.RobertaProcessing(("</s>", 2), ("<s>", 0)),
    "roberta_no_prefix": lambda m: m.RobertaProcessing(("</s>", 2), ("<s>", 0), trim_offsets=False, add_prefix_space=False),
    "template_bert": lambda m: m.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=BERT_SPECIALS
    ),
    "template_lists_and_id_first": lambda m: m.TemplateProcessing(
        single=["[CLS]", "$0", "[SEP]"], pair=["[CLS]:0", "$A:0", "[SEP]:0", "$B:1", "[SEP]:1"], special_tokens=[(101, "[CLS]"), (102, "[SEP]")]
    ),
    "template_multi_id_special": lambda m: m.TemplateProcessing(
        single="<bos> $A <translate>:2",
        pair="<bos> $A <translate>:2 $b:3",
        special_tokens=[("<bos>", 1), {"id": "<translate>", "ids": [7, 8, 9], "tokens": ["to", "French", ":"]}],
    ),
    "template_defaults": lambda m: m.TemplateProcessing(),
    "template_type_ids_only": lambda m: m.TemplateProcessing(single="$1", pair="$B:2 $A:5"),
    "sequence": lambda m: m.Sequence([m.ByteLevel(trim_offsets=True), m.BertProcessing(("[SEP]", 102), ("[CLS]", 101))]),
    "nested_sequence": lambda m: m.Sequence([m.Sequence([m.ByteLevel()]), m.RobertaProcessing(("</s>", 2), ("<s>", 0))]),
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
    assert (tm.sep, tm.cls, tm.trim_offsets, tm.add_prefix_space) == (hf.sep, hf.cls, hf.trim_offsets, hf.add_prefix_space)
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
    assert isinstance(seq[0], processors.ByteLevel) and isinstance(seq[1], processors.BertProcessing)
    seq[0] = processors.ByteLevel(trim_offsets=False)
    assert seq[0].trim_offsets is False


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(single="[CLS] $A"),  # special token not given
        dict(pair="$A [SEP]", special_tokens=[("[SEP]", 1)]),  # pair without $B
        dict(single="$C"),  # unknown sequence
        dict(single="$A:x"),  # bad type id
        dict(single="[X] $A", special_tokens=[{"id": "[X]", "ids": [1, 2], "tokens": ["a"]}]),  # lengths differ
    ],
)
def test_invalid_templates_raise_like_tokenizers(kwargs):
    with pytest.raises(Exception):
        hf_processors.TemplateProcessing(**kwargs)
    with pytest.raises(tokenmill.InvalidArgumentError):
        processors.TemplateProcessing(**kwargs)


def test_bad_json_raises_tokenmill_error():
    p = processors.ByteLevel()
    for bad in [b'{"type":"RobertaProcessing","sep":["</s>",2]}', b'{"add_prefix_space":true}', b"[", b'{"type":"Sequence","processors":[{}]}']:
        with pytest.raises(tokenmill.TokenmillError):
            p.__setstate__(bad)
    with pytest.raises(TypeError):
        processors.TemplateProcessing(special_tokens=[3.5])
    with pytest.raises(TypeError):
        processors.Sequence([processors.ByteLevel(), "nope"])

