"""Hostile or unlucky input never crashes the process: a huge vocabulary piece just works (or,
in a `.model`, is refused as sentencepiece refuses it), and impossible padding lengths and a
NumPy that cannot be imported give a clear Python exception, never a segfault, an abort or a
`PanicException`."""

from __future__ import annotations

import io
import random
import string
import subprocess
import sys

import pytest
import tokenmill
from conftest import child_env
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
    # sentencepiece (0.2.3) refuses a piece of 8000 bytes or more, and so does tokenmill: a clean
    # error naming it, no crash in the double-array builder (which handles such keys, see above)
    with pytest.raises(tokenmill.FormatError, match="piece 5: piece is too long"):
        SentencePieceProcessor(model_proto=proto.SerializeToString())


@pytest.mark.parametrize("model_type", ["unigram", "bpe", "char", "word"])
def test_a_100_kb_user_defined_symbol_in_training(model_type):
    pytest.importorskip("google.protobuf")
    from tokenmill.sentencepiece import sentencepiece_model_pb2

    out = io.BytesIO()
    SentencePieceTrainer.train(
        sentence_iterator=iter(["abc def abd"] * 50),
        model_writer=out,
        vocab_size=30,
        model_type=model_type,
        user_defined_symbols=[LONG_PIECE],
        hard_vocab_limit=False,
    )
    # The model holds the symbol; like sentencepiece, which trains it too, the processor then
    # refuses the over-long piece cleanly.
    proto = sentencepiece_model_pb2.ModelProto.FromString(out.getvalue())
    assert proto.pieces[3].piece == LONG_PIECE
    with pytest.raises(tokenmill.FormatError, match="piece 3: piece is too long"):
        SentencePieceProcessor(model_proto=out.getvalue())


# Each of these padding settings once aborted the process on allocation (or raised
# `PanicException('capacity overflow')`, which `except Exception` misses). They run in a child
# process whose address space is capped, so that an allocation the check let through fails
# there (and shows as a crash of the child) instead of filling this machine's memory.
PADDING_CASES = {
    "enable_padding": "t.enable_padding(length=10**9); t.encode('a')",
    "enable_padding_batch": "t.enable_padding(length=10**9); t.encode_batch(['a', 'a a'])",
    "encoding_pad": "t.encode('a').pad(10**8)",
    "fixed_10_12": "Tokenizer.from_str(with_padding({'Fixed': 10**12})).encode('a')",
    "fixed_max": "Tokenizer.from_str(with_padding({'Fixed': 2**64 - 1})).encode('a')",
    "multiple_of": "Tokenizer.from_str(with_padding('BatchLongest', 2**63)).encode('a')",
}

PADDING_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from tokenmill import InvalidArgumentError, Tokenizer, models
t = Tokenizer(models.WordLevel({"a": 0, "[PAD]": 1, "[UNK]": 2}, unk_token="[UNK]"))
def with_padding(strategy, multiple=None):
    t.enable_padding(length=5)
    data = json.loads(t.to_str())
    data["padding"].update(strategy=strategy, pad_to_multiple_of=multiple)
    t.no_padding()
    return json.dumps(data)
try:
    exec(sys.argv[1])
except InvalidArgumentError as e:
    print("InvalidArgumentError:", e)
"""


@pytest.mark.parametrize("case", sorted(PADDING_CASES))
def test_impossible_padding_lengths_raise_a_clear_error(case):
    pytest.importorskip("resource")
    child = subprocess.run(
        [sys.executable, "-c", PADDING_CHILD, PADDING_CASES[case]],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith("InvalidArgumentError: padding"), child.stdout
    assert "too large" in child.stdout


# Every call that returns NumPy arrays, in a child where importing NumPy fails (as it does
# under an address-space limit, or with a broken install): NumPy is imported on the first array.
ARRAY_CALLS = {
    "encode_batch_ids": "t.encode_batch_ids(['a', 'a a'])",
    "encode_batch_arrays": "t.encode_batch_arrays(['a', 'a a'])",
    "tiktoken_encode_to_numpy": "enc.encode_to_numpy('a a')",
    "tiktoken_batch_to_numpy": "enc._core_bpe.encode_ordinary_batch_to_numpy(['a', 'a a'])",
    "words_tokenize_spans": "WordTokenizer().tokenize_spans('a a')",
}

ARRAY_CHILD = """
import sys
from tokenmill import Tokenizer, models, pre_tokenizers
from tokenmill.tiktoken import Encoding
from tokenmill.words import WordTokenizer
t = Tokenizer(models.WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
t.pre_tokenizer = pre_tokenizers.Whitespace()
ranks = {bytes([b]): b for b in range(256)}
enc = Encoding("bytes", pat_str=r"\\S+|\\s+", mergeable_ranks=ranks, special_tokens={})
sys.modules["numpy"] = None  # `import numpy` now raises ImportError
try:
    exec(sys.argv[1])
except ImportError as e:
    print("ImportError:", e)
"""


@pytest.mark.parametrize("case", sorted(ARRAY_CALLS))
def test_arrays_when_numpy_cannot_be_imported_raise_its_import_error(case):
    """The import failed inside rust-numpy, which panicked (`PanicException`, which `except
    Exception` does not catch; under a memory limit the panic's backtrace then aborted)."""
    child = subprocess.run(
        [sys.executable, "-c", ARRAY_CHILD, ARRAY_CALLS[case]],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(),
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith("ImportError:") and "numpy" in child.stdout, child.stdout
    assert "panicked" not in child.stderr, child.stderr[-2000:]
