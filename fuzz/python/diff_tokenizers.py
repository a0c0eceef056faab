#!/usr/bin/env python3
"""tokenmill.Tokenizer against tokenizers on the same tokenizer.json (GPT-2 byte-level BPE,
BERT uncased WordPiece): the same ids and offsets, with and without special tokens, on
generated text."""

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import common
    import tokenizers
    import tokenmill


def pipelines() -> list:
    """(name, tokenmill, tokenizers) built from one tokenizer.json each."""
    folder = Path(tempfile.mkdtemp(prefix="tokenmill-fuzz-tokenizers-"))
    gpt2 = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(
            str(common.PRETRAINED / "gpt2" / "encoder.json"),
            str(common.PRETRAINED / "gpt2" / "vocab.bpe"),
        )
    )
    gpt2.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    gpt2.decoder = tokenizers.decoders.ByteLevel()
    gpt2.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    gpt2.add_special_tokens(["<|endoftext|>"])
    bert = tokenizers.implementations.BertWordPieceTokenizer(
        str(common.PRETRAINED / "bert_base_uncased" / "vocab.txt"), lowercase=True
    )
    built = []
    for name, reference in [("gpt2", gpt2), ("bert", bert)]:
        path = folder / f"{name}.json"
        reference.save(str(path))
        built.append(
            (
                name,
                tokenmill.Tokenizer.from_file(str(path)),
                tokenizers.Tokenizer.from_file(str(path)),
            )
        )
    return built


PIPELINES = pipelines()


def test_one_input(data: bytes) -> None:
    if not data:
        return
    name, ours, theirs = PIPELINES[data[0] % len(PIPELINES)]
    special = bool(data[0] & 0x80)
    text = common.generated_text(data[1:])
    a = ours.encode(text, add_special_tokens=special)
    b = theirs.encode(text, add_special_tokens=special)
    common.observe(text, a.ids)
    common.check_equal(f"{name} ids", text, a.ids, b.ids)
    common.check_equal(f"{name} offsets", text, a.offsets, b.offsets)
    common.check_equal(f"{name} decode", text, ours.decode(a.ids), theirs.decode(b.ids))


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
