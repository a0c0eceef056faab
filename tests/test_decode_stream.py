"""decoders.DecodeStream: step by step, the same outputs (text or None at every step) as
`tokenizers`' DecodeStream, on GPT-2 (byte-level: CJK and emoji characters span several
tokens) and on a Llama/Mistral-style BPE with byte fallback (``<0xNN>`` tokens), over real
multilingual text. The pieces always concatenate to ``decode`` of the whole sequence.
"""

from __future__ import annotations

import json

import pytest
import tokenizers
import tokenmill
from conftest import STUDY_IN_SCARLET, corpus_text, gpt2, non_empty_lines


@pytest.fixture(scope="module")
def lines():
    samples = [(STUDY_IN_SCARLET, 20_000)]
    samples += [(f"multilingual/{lang}", 8_000) for lang in ["zh", "ja", "hi", "ar", "ru", "pl"]]
    out = [line.strip() for sample in samples for line in non_empty_lines(corpus_text(sample))]
    return out[::3][:150] + ["emoji 👩‍👩‍👧 and flags 🇵🇱🇯🇵, combining é and 한국어"]


@pytest.fixture(scope="module")
def gpt2_pair(tmp_path_factory):
    tok = gpt2(tokenizers)
    tok.add_special_tokens(["<|endoftext|>"])
    path = tmp_path_factory.mktemp("gpt2") / "tokenizer.json"
    tok.save(str(path))
    return tokenizers.Tokenizer.from_file(str(path)), tokenmill.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def byte_fallback_pair(tmp_path_factory):
    """A Llama-style tokenizer: ``▁`` for spaces, BPE with byte fallback trained on English (so
    that most non-Latin characters become ``<0xNN>`` runs), Llama's decoder chain."""
    lib = tokenizers
    tok = lib.Tokenizer(lib.models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = lib.normalizers.Sequence(
        [lib.normalizers.Prepend("▁"), lib.normalizers.Replace(" ", "▁")]
    )
    tok.decoder = lib.decoders.Sequence(
        [
            lib.decoders.Replace("▁", " "),
            lib.decoders.ByteFallback(),
            lib.decoders.Fuse(),
            lib.decoders.Strip(" ", 1, 0),
        ]
    )
    byte_tokens = [f"<0x{i:02X}>" for i in range(256)]
    english = corpus_text((STUDY_IN_SCARLET, 200_000)).splitlines()
    trainer = lib.trainers.BpeTrainer(
        vocab_size=1200, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens, show_progress=False
    )
    tok.train_from_iterator(english, trainer)
    data = json.loads(tok.to_str())
    # Byte tokens are ordinary vocabulary entries in Llama (not special: they decode).
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in byte_tokens]
    path = tmp_path_factory.mktemp("llama") / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path)), tokenmill.Tokenizer.from_file(str(path))


def stream_steps(lib, tok, ids, skip_special_tokens, chunk=1, prefill=None):
    stream = lib.decoders.DecodeStream(ids=prefill, skip_special_tokens=skip_special_tokens)
    out = []
    for i in range(0, len(ids), chunk):
        piece = ids[i : i + chunk]
        out.append(stream.step(tok, piece[0] if chunk == 1 else piece))
    return out


def check_same_as_tokenizers(pair, lines, special_id, **kwargs):
    theirs, ours = pair
    covered_partial = False
    for line in lines:
        ids = [special_id] + theirs.encode(line).ids + [special_id]
        for skip in (False, True):
            expected = stream_steps(tokenizers, theirs, ids, skip, **kwargs)
            got = stream_steps(tokenmill, ours, ids, skip, **kwargs)
            assert got == expected, line
            covered_partial |= None in got
            if kwargs.get("prefill") is None:
                assert "".join(p for p in got if p) == ours.decode(ids, skip_special_tokens=skip)
    assert covered_partial, "the text should contain characters that span several tokens"


def test_gpt2_byte_level(gpt2_pair, lines):
    check_same_as_tokenizers(gpt2_pair, lines, gpt2_pair[0].token_to_id("<|endoftext|>"))


def test_byte_fallback(byte_fallback_pair, lines):
    theirs = byte_fallback_pair[0]
    assert any("<0x" in t for t in theirs.encode(lines[-1]).tokens)
    check_same_as_tokenizers(byte_fallback_pair, lines, theirs.token_to_id("<s>"))


def test_several_ids_per_step_and_prefill(gpt2_pair, byte_fallback_pair, lines):
    check_same_as_tokenizers(
        gpt2_pair, lines[::4], gpt2_pair[0].token_to_id("<|endoftext|>"), chunk=3
    )
    check_same_as_tokenizers(
        byte_fallback_pair, lines[::4], byte_fallback_pair[0].token_to_id("<s>"), prefill=[5, 6, 7]
    )


def test_bad_step_argument(gpt2_pair):
    stream = tokenmill.decoders.DecodeStream()
    with pytest.raises(TypeError):
        stream.step(gpt2_pair[1], "not an id")
