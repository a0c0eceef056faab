#!/usr/bin/env python3
"""tokenmill.tiktoken against tiktoken (r50k_base, cl100k_base, o200k_base): the same ids for
``encode_ordinary`` and for ``encode`` with every special token allowed, on generated text, and
decoding gives the text back."""

import sys

import atheris

with atheris.instrument_imports():
    import common
    import tiktoken
    from tokenmill import tiktoken as tm

common.tiktoken_cache()
PAIRS = [(tm.get_encoding(name), tiktoken.get_encoding(name)) for name in common.TIKTOKEN_FILES]


def test_one_input(data: bytes) -> None:
    if not data:
        return
    ours, theirs = PAIRS[data[0] % len(PAIRS)]
    text = common.generated_text(data[1:])
    ids = ours.encode_ordinary(text)
    common.observe(text, ids)
    common.check_equal(f"{ours.name} encode_ordinary", text, ids, theirs.encode_ordinary(text))
    common.check_equal(f"{ours.name} decode", text, ours.decode(ids), theirs.decode(ids))
    everything = ours.encode(text, allowed_special="all")
    common.check_equal(
        f"{ours.name} encode", text, everything, theirs.encode(text, allowed_special="all")
    )


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
