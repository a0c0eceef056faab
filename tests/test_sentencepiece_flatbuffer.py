"""tokenmill.sentencepiece.convert_to_flatbuffer against the real `sentencepiece` 0.2.3: the
`.spm.fb` bytes must be identical for every pretrained model of ../shared/pretrained (with and
without skip_char_bigrams) and for edited models that reach the converter's other paths
(USER_DEFINED pieces, missing specs, WORD/CHAR, BPE pieces that are not direct mappings, NUL
pieces), and bad input must raise the same exception types with the same messages."""

from __future__ import annotations

import pytest
from conftest import shared_path

spm = pytest.importorskip("sentencepiece")
pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
import tokenmill.sentencepiece as tsp  # noqa: E402 (after importorskip)

MODELS = [
    "mistral/tokenizer.model.v1",
    "mistral/mistral_instruct_tokenizer_240323.model.v3",
    "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "sentencepiece_test/botchan_en_bpe_1000.model",
    "sentencepiece_test/botchan_en_unigram_1000.model",
    "sentencepiece_test/kyoto_ja_unigram_8000.model",
]
BPE = "sentencepiece_test/botchan_en_bpe_1000.model"
UNIGRAM = "sentencepiece_test/botchan_en_unigram_1000.model"


def load(name: str):
    proto = pb.ModelProto()
    proto.ParseFromString(shared_path("pretrained", name).read_bytes())
    return proto


def outcome(convert, **kwargs):
    """The bytes, or the exception's builtin kind and message."""
    try:
        return convert(**kwargs)
    except (ValueError, TypeError, RuntimeError) as e:
        kind = next(k for k in (TypeError, ValueError, RuntimeError) if isinstance(e, k))
        return kind.__name__, str(e)


def assert_same(**kwargs):
    want = outcome(spm.convert_to_flatbuffer, **kwargs)
    got = outcome(tsp.convert_to_flatbuffer, **kwargs)
    if isinstance(want, bytes) and isinstance(got, bytes) and want != got:
        first = next(
            (i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got))
        )
        pytest.fail(f"{len(got)} bytes vs sentencepiece's {len(want)}; first difference at {first}")
    assert got == want


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("skip_char_bigrams", [False, True])
def test_pretrained_models_convert_byte_for_byte(name, skip_char_bigrams):
    path = str(shared_path("pretrained", name))
    assert_same(model_file=path, skip_char_bigrams=skip_char_bigrams)


def edited(name, edit):
    proto = load(name)
    edit(proto)
    return proto


def set_types(proto, ids, kind):
    for i in ids:
        proto.pieces[i].type = kind


EDITS = {
    "user_defined": lambda p: set_types(p, (10, 20, 30), pb.ModelProto.SentencePiece.USER_DEFINED),
    "unused": lambda p: set_types(p, (40, 41), pb.ModelProto.SentencePiece.UNUSED),
    "no_trainer_spec": lambda p: p.ClearField("trainer_spec"),
    "no_normalizer_spec": lambda p: p.ClearField("normalizer_spec"),
    "ws_suffix_and_name": lambda p: (
        setattr(p.trainer_spec, "treat_whitespace_as_suffix", True),
        setattr(p.normalizer_spec, "name", "custom"),
    ),
    "no_unknown_piece": lambda p: (
        set_types(p, (0,), pb.ModelProto.SentencePiece.CONTROL),
        setattr(p.trainer_spec, "bos_piece", "<unk>"),
    ),
    "fractional_score": lambda p: setattr(p.pieces[5], "score", -7.9),
    "unreachable_piece": lambda p: setattr(p.pieces[50], "piece", "qzqzqzq"),
    "long_piece": lambda p: setattr(p.pieces[60], "piece", "x" * 200),
    "word": lambda p: setattr(p.trainer_spec, "model_type", pb.TrainerSpec.WORD),
    "char": lambda p: setattr(p.trainer_spec, "model_type", pb.TrainerSpec.CHAR),
    # errors
    "empty_piece": lambda p: setattr(p.pieces[5], "piece", ""),
    "too_long_piece": lambda p: setattr(p.pieces[5], "piece", "x" * 5000),
    "nul_piece": lambda p: setattr(p.pieces[5], "piece", "a\0b"),
    "duplicate_piece": lambda p: setattr(p.pieces[5], "piece", p.pieces[6].piece),
    "nan_score": lambda p: setattr(p.pieces[5], "score", float("nan")),
    "infinite_score": lambda p: setattr(p.pieces[5], "score", float("-inf")),
    "huge_score": lambda p: setattr(p.pieces[5], "score", 3e9),
    "no_pieces": lambda p: p.ClearField("pieces"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("name", [BPE, UNIGRAM])
def test_edited_models_convert_or_fail_alike(name, edit):
    proto = edited(name, EDITS[edit])
    assert_same(model_proto=proto)
    assert_same(
        serialized_model_proto=proto.SerializeToString(),
        skip_char_bigrams=True,
        allow_unsupported_model_type=True,
    )


def test_byte_fallback_model_with_unused_and_nul_pieces():
    def edit(proto):
        proto.pieces[1000].type = pb.ModelProto.SentencePiece.UNUSED  # "ла": 32 pieces not direct
        proto.pieces[3].piece = "\0"

    proto = edited("mistral/tokenizer.model.v1", edit)
    assert_same(model_proto=proto, treat_null_byte_as_unused=True)
    assert_same(model_proto=proto)


def test_inputs_outputs_and_argument_errors(tmp_path):
    path = str(shared_path("pretrained", UNIGRAM))
    expected = spm.convert_to_flatbuffer(model_file=path)
    out = tmp_path / "out.spm.fb"
    assert tsp.ConvertToFlatbuffer(model_file=path, output_file=out) is None
    assert out.read_bytes() == expected
    assert tsp.convert_to_flatbuffer(model_proto=load(UNIGRAM)) == expected
    for kwargs in [
        {},
        {"model_file": path, "serialized_model_proto": b"x"},
        {"model_file": ""},
        {"model_file": path, "output_file": ""},
        {"serialized_model_proto": "text"},
        {"model_proto": 12345},
        {"serialized_model_proto": b"corrupted_proto"},
        {"serialized_model_proto": b""},
    ]:
        assert_same(**kwargs)
    with pytest.raises(FileNotFoundError):
        tsp.convert_to_flatbuffer(model_file=str(tmp_path / "missing.model"))
    with pytest.raises(RuntimeError):
        tsp.convert_to_flatbuffer(model_file=path, output_file=tmp_path / "no" / "dir.fb")
