"""Hostile or unlucky input never crashes the process: a huge vocabulary piece, impossible
padding lengths, inconsistent pickled states, oversized training input and a custom component
that re-enters its tokenizer each give a clear Python exception (or just work), never a
segfault, an abort or a `PanicException`."""

from __future__ import annotations

import io
import random
import string

import pytest
from tokenmill import Tokenizer, models
from tokenmill.sentencepiece import SentencePieceProcessor, SentencePieceTrainer

# A vocabulary piece far beyond the ~28 kB at which the recursive double-array builders
# overflowed the stack (a segfault). Random letters, so that matching it inside a text costs
# one long walk, not one per position as a periodic piece would.
LONG_PIECE = "".join(random.Random(18).choices(string.ascii_lowercase, k=100_000))


def test_a_100_kb_piece_in_a_unigram_model_and_its_tokenizer_json():
    model = models.Unigram([("<unk>", 0.0), ("a", -1.0), (LONG_PIECE, -2.0)], unk_id=0)
    tokenizer = Tokenizer(model)
    assert tokenizer.encode("a" + LONG_PIECE).ids == [1, 2]
    assert Tokenizer.from_str(tokenizer.to_str()).encode(LONG_PIECE + "a").ids == [2, 1]


@pytest.mark.parametrize("model_type", [1, 2])  # Unigram, BPE
def test_a_100_kb_piece_in_a_model_file(model_type):
    pytest.importorskip("google.protobuf")
    from tokenmill.sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.trainer_spec.model_type = model_type
    pieces = [("<unk>", 2), ("<s>", 3), ("</s>", 3), ("▁", 1), ("a", 1), (LONG_PIECE, 4)]
    for score, (piece, kind) in enumerate(pieces):
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, -score, kind
    processor = SentencePieceProcessor(model_proto=proto.SerializeToString())
    assert processor.encode("a" + LONG_PIECE) == [3, 4, 5]


@pytest.mark.parametrize("model_type", ["unigram", "bpe", "char", "word"])
def test_a_100_kb_user_defined_symbol_in_training(model_type):
    out = io.BytesIO()
    SentencePieceTrainer.train(
        sentence_iterator=iter(["abc def abd"] * 50),
        model_writer=out,
        vocab_size=30,
        model_type=model_type,
        user_defined_symbols=[LONG_PIECE],
        hard_vocab_limit=False,
    )
    processor = SentencePieceProcessor(model_proto=out.getvalue())
    assert processor.id_to_piece(3) == LONG_PIECE
    if model_type != "word":  # (whose pieces are whole words, which the symbol is not)
        assert 3 in processor.encode("x " + LONG_PIECE)
