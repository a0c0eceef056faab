#!/usr/bin/env python3
"""tokenmill.sentencepiece against sentencepiece on the same `.model` files (BPE and Unigram
test models, Mistral's byte-fallback BPE): the same ids and pieces on generated text, and the
same decoded text."""

import sys

import atheris

with atheris.instrument_imports():
    import common
    import sentencepiece as spm
    import tokenmill.sentencepiece as tsp

MODELS = [
    common.PRETRAINED / "sentencepiece_test" / "botchan_en_bpe_1000.model",
    common.PRETRAINED / "sentencepiece_test" / "botchan_en_unigram_1000.model",
    common.PRETRAINED / "sentencepiece_test" / "kyoto_ja_unigram_8000.model",
    common.PRETRAINED / "mistral" / "tokenizer.model.v1",
]
PAIRS = [
    (
        path.name,
        tsp.SentencePieceProcessor(model_file=str(path)),
        spm.SentencePieceProcessor(model_file=str(path)),
    )
    for path in MODELS
]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    name, ours, theirs = PAIRS[data[0] % len(PAIRS)]
    text = common.generated_text(data[1:])
    ids = ours.encode(text)
    common.observe(text, ids)
    common.check_equal(f"{name} ids", text, ids, theirs.encode(text))
    common.check_equal(
        f"{name} pieces", text, ours.encode(text, out_type=str), theirs.encode(text, out_type=str)
    )
    common.check_equal(f"{name} decode", text, ours.decode(ids), theirs.decode(ids))


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
