"""Components written in Python (``Normalizer.custom``, ``PreTokenizer.custom``,
``Decoder.custom``) and ``PreTokenizedString``: the same Python classes plugged into
``tokenizers`` and into ``tokenmill`` give the same encodings, offsets and decodings on real
multilingual text; saving or pickling a tokenizer that holds one raises in both.
"""

from __future__ import annotations

import pickle

import pytest
import tokenizers
import tokenmill
from conftest import corpus_text, gpt2, non_empty_lines

LIBS = {"tokenizers": tokenizers, "tokenmill": tokenmill}


@pytest.fixture(scope="module")
def lines():
    samples = [("gutenberg/pg34811_de_buddenbrooks.txt", 40_000)]
    samples += [(f"multilingual/{lang}", 20_000) for lang in ["fr", "ru", "ja"]]
    out = [line.strip() for rel in samples for line in non_empty_lines(corpus_text(rel))]
    return out[::5][:200] + ["Tel. 0171 234-56, Zimmer 12a; 1.000,50 €"]


def outputs(tok, lines):
    encodings = tok.encode_batch(lines)
    return [(e.ids, e.tokens, e.offsets, e.word_ids) for e in encodings], tok.decode_batch(
        [e.ids for e in encodings]
    )


class LowerAndMarkDigits:
    """A normalizer using the NormalizedString API: lowercase, NFKC, digits replaced."""

    def normalize(self, normalized):
        normalized.nfkc()
        normalized.lowercase()
        for digit in "0123456789":
            normalized.replace(digit, "#")


class DigitsAndSpaces:
    """A pre-tokenizer: split on spaces (kept with the next word), then cut digit runs out by
    slicing."""

    def split_digits(self, i, normalized):
        text = str(normalized)
        pieces, start = [], 0
        for k in range(1, len(text) + 1):
            if k == len(text) or text[k].isdigit() != text[k - 1].isdigit():
                pieces.append(normalized[start:k])
                start = k
        return pieces

    def pre_tokenize(self, pretok):
        pretok.split(lambda i, normalized: normalized.split(" ", "merged_with_next"))
        pretok.split(self.split_digits)


class UpperDecoder:
    def decode_chain(self, tokens):
        return [t.upper() for t in tokens]

    def decode(self, tokens):
        return "|".join(self.decode_chain(tokens))


def test_custom_normalizer(lines):
    results = {}
    for name, lib in LIBS.items():
        tok = gpt2(lib)
        tok.normalizer = lib.normalizers.Normalizer.custom(LowerAndMarkDigits())
        results[name] = outputs(tok, lines)
        assert tok.normalizer.normalize_str("Ab 12") == "ab ##"
    assert results["tokenmill"] == results["tokenizers"]


def test_custom_pre_tokenizer_in_a_sequence(lines):
    results = {}
    for name, lib in LIBS.items():
        tok = gpt2(lib)
        tok.pre_tokenizer = lib.pre_tokenizers.Sequence(
            [
                lib.pre_tokenizers.PreTokenizer.custom(DigitsAndSpaces()),
                lib.pre_tokenizers.ByteLevel(add_prefix_space=False),
            ]
        )
        results[name] = (
            outputs(tok, lines),
            [tok.pre_tokenizer.pre_tokenize_str(line) for line in lines],
        )
    assert results["tokenmill"] == results["tokenizers"]


def test_custom_decoder(lines):
    results = {}
    for name, lib in LIBS.items():
        tok = gpt2(lib)
        tok.decoder = lib.decoders.Decoder.custom(UpperDecoder())
        ids = [tok.encode(line).ids for line in lines]
        results[name] = [tok.decode(i) for i in ids], tok.decoder.decode(["a", "b"])
    assert results["tokenmill"] == results["tokenizers"]


@pytest.mark.parametrize("stage", ["normalizer", "pre_tokenizer", "decoder"])
def test_custom_components_cannot_be_serialized(stage):
    make_custom = {
        "normalizer": lambda lib: lib.normalizers.Normalizer.custom(LowerAndMarkDigits()),
        "pre_tokenizer": lambda lib: lib.pre_tokenizers.PreTokenizer.custom(DigitsAndSpaces()),
        "decoder": lambda lib: lib.decoders.Decoder.custom(UpperDecoder()),
    }[stage]
    for lib in LIBS.values():
        tok = gpt2(lib)
        setattr(tok, stage, make_custom(lib))
        with pytest.raises(Exception, match="(?i)custom"):
            tok.to_str()
        with pytest.raises(Exception):  # noqa: B017 (tokenizers raises a plain Exception)
            pickle.dumps(tok)


def test_callback_errors_propagate():
    """An exception raised by a Python component stops the encode with a clear error. (Here
    tokenmill differs on purpose: tokenizers 0.23 drops a custom normalizer's exception and
    encodes a mangled string.)"""

    class Broken:
        def normalize(self, normalized):
            raise ValueError("broken normalizer")

    tok = gpt2(tokenmill)
    tok.normalizer = tokenmill.normalizers.Normalizer.custom(Broken())
    with pytest.raises(tokenmill.TokenmillError, match="broken normalizer"):
        tok.encode("some text")
    with pytest.raises(tokenmill.TokenmillError, match="broken normalizer"):
        tok.encode_batch(["some text", "more text"])


def test_pre_tokenized_string_api(lines):
    """split / normalize / tokenize / get_splits / to_encoding, driven by hand."""

    def drive(lib):
        model = gpt2(lib).model
        out = []
        for line in lines[:80]:
            pretok = lib.PreTokenizedString(line)
            pretok.split(lambda i, n: n.split(" ", "isolated"))
            pretok.normalize(lambda n: n.lowercase())
            before = pretok.get_splits()
            normalized = pretok.get_splits(offset_referential="normalized", offset_type="byte")
            pretok.tokenize(
                lambda word: model.tokenize(
                    "".join(chr(ord(c)) for c in word if ord(c) < 128) or "a"
                )
            )
            after = [(s, o, [t.as_tuple() for t in tokens]) for s, o, tokens in pretok.get_splits()]
            encoding = pretok.to_encoding()
            out.append((before, normalized, after, encoding.ids, encoding.offsets, encoding.tokens))
        return out

    assert drive(tokenmill) == drive(tokenizers)
