"""Bad input to tokenmill.sentencepiece never crashes: hundreds of truncated and bit-flipped
copies of real `.model` files either raise a tokenmill exception or load into a processor that
encodes, n-best encodes, samples and decodes without error; wrong piece types and impossible
training settings raise clear errors."""

from __future__ import annotations

import contextlib
import random

import pytest
import tokenmill  # noqa: E402
import tokenmill.sentencepiece as tsp  # noqa: E402
from conftest import shared_path

TEXTS = ["Hello world", "日本語のテキスト", "  a  b ", "😀 ﬁ ½", "", "x" * 200]


def exercise(model: tsp.SentencePieceProcessor) -> None:
    ids = model.encode(TEXTS)
    model.decode(ids)
    model.encode(TEXTS, out_type="serialized_proto")
    if model._model.model_type() == 1:  # Unigram: the lattice paths too
        model.nbest_encode(TEXTS, nbest_size=3)
        model.encode(TEXTS, enable_sampling=True, alpha=0.5, nbest_size=-1)
        model.calculate_entropy(TEXTS, 0.5)
        model.sample_encode_and_score("Hello world", num_samples=2, alpha=0.5, wor=True)


@pytest.mark.parametrize(
    "name", ["sentencepiece_test/botchan_en_unigram_1000.model", "mistral/tokenizer.model.v1"]
)
def test_hundreds_of_truncations_and_bit_flips_never_crash(name):
    data = shared_path("pretrained", *name.split("/")).read_bytes()
    rng = random.Random(2024)
    variants = [data[: rng.randrange(len(data))] for _ in range(150)]
    for _ in range(150):
        corrupted = bytearray(data)
        for _ in range(rng.randrange(1, 8)):
            at = rng.randrange(len(corrupted))
            corrupted[at] ^= 1 << rng.randrange(8)
        variants.append(bytes(corrupted))
    loaded = rejected = 0
    for variant in variants:
        try:
            model = tsp.SentencePieceProcessor(model_proto=variant)
        except tokenmill.TokenmillError:
            rejected += 1
            continue
        # A clear error on a damaged model is fine; a crash is not.
        with contextlib.suppress(tokenmill.TokenmillError):
            exercise(model)
        loaded += 1
    assert loaded + rejected == len(variants) and rejected > 0


def _piece(piece: str, piece_type: int) -> bytes:
    """One `pieces` entry of a ModelProto in protobuf wire format (piece and type; short)."""
    body = bytes([1 << 3 | 2, len(piece.encode())]) + piece.encode() + bytes([3 << 3, piece_type])
    return bytes([1 << 3 | 2, len(body)]) + body


@pytest.mark.parametrize("piece_type", [0, 7, 100])
def test_unknown_piece_types_are_normal_as_in_sentencepiece(piece_type):
    # protobuf gives sentencepiece the field's default (NORMAL) for a value the enum lacks
    model = _piece("<unk>", 2) + _piece("a", 1) + _piece("b", piece_type)
    normal = _piece("<unk>", 2) + _piece("a", 1) + _piece("b", 1)
    ours = tsp.SentencePieceProcessor(model_proto=model)
    assert ours.encode("ab") == tsp.SentencePieceProcessor(model_proto=normal).encode("ab")
    spm = pytest.importorskip("sentencepiece")
    assert ours.encode("ab") == spm.SentencePieceProcessor(model_proto=model).encode("ab")
