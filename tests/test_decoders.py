"""Decoders: differential tests against `tokenizers.decoders` on token lists from real encodings.

Token lists come from the reference libraries encoding real corpus text with real vocabularies
(GPT-2 byte-level BPE, CLIP BPE with ``</w>``, BERT WordPiece, Mistral's SentencePiece BPE with
byte fallback); some are cut or shuffled to produce invalid UTF-8. Every case compares
tokenmill's ``decode`` with tokenizers' on the same tokens.
"""

from __future__ import annotations

import json
import pickle
import random

import pytest
import tokenizers
import tokenmill
from conftest import bytes_to_unicode, clip_merges, read_sample, shared_path
from tokenizers import (
    decoders as hf_decoders,
    models as hf_models,
    normalizers as hf_normalizers,
    pre_tokenizers as hf_pre_tokenizers,
)
from tokenmill import decoders

SAMPLE_BYTES = 150_000


def corpus_lines(max_bytes: int = SAMPLE_BYTES) -> list[str]:
    """Lines of English prose and of the first file of every multilingual language (bounded
    samples)."""
    english = shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt")
    lines = read_sample(english, max_bytes).splitlines()
    for lang_dir in sorted(
        p for p in shared_path("corpora", "multilingual").iterdir() if p.is_dir()
    ):
        first = sorted(lang_dir.glob("*.txt"))[0]
        lines += read_sample(first, max_bytes // 4).splitlines()
    return [line for line in lines if line.strip()]


def chunks(lines: list[str], size: int = 20) -> list[str]:
    return ["\n".join(lines[i : i + size]) for i in range(0, len(lines), size)]


def assert_same_decode(hf, tm, token_lists):
    assert token_lists, "no token lists to compare"
    for tokens in token_lists:
        assert tm.decode(tokens) == hf.decode(tokens), tokens[:20]


def broken_windows(token_lists, seed: int, n: int = 300) -> list[list[str]]:
    """Random sub-slices and shuffles of token lists: cuts through multi-byte characters."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        tokens = rng.choice(token_lists)
        if not tokens:
            continue
        a = rng.randrange(len(tokens))
        b = min(len(tokens), a + rng.randrange(1, 12))
        window = tokens[a:b]
        if rng.random() < 0.3:
            rng.shuffle(window)
        out.append(window)
    return out


# --- token sources ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2_tokens() -> list[list[str]]:
    vocab = shared_path("pretrained", "gpt2", "encoder.json")
    merges = shared_path("pretrained", "gpt2", "vocab.bpe")
    tok = tokenizers.Tokenizer(hf_models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = hf_pre_tokenizers.ByteLevel(add_prefix_space=False)
    return [e.tokens for e in tok.encode_batch(chunks(corpus_lines()))]


@pytest.fixture(scope="module")
def clip_tokens() -> list[list[str]]:
    merges = clip_merges()
    alphabet = list(hf_pre_tokenizers.ByteLevel.alphabet())
    byte_of = {c: b for b, c in bytes_to_unicode().items()}
    byte_order = sorted(alphabet, key=lambda c: byte_of[c])
    vocab_list = byte_order + [c + "</w>" for c in byte_order] + ["".join(m) for m in merges]
    vocab_list += ["<|startoftext|>", "<|endoftext|>"]
    vocab = {t: i for i, t in enumerate(vocab_list)}
    tok = tokenizers.Tokenizer(
        hf_models.BPE(vocab, merges, end_of_word_suffix="</w>", unk_token="<|endoftext|>")
    )
    tok.normalizer = hf_normalizers.Sequence(
        [
            hf_normalizers.NFC(),
            hf_normalizers.Replace(tokenizers.Regex(r"\s+"), " "),
            hf_normalizers.Lowercase(),
        ]
    )
    pattern = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
    tok.pre_tokenizer = hf_pre_tokenizers.Sequence(
        [
            hf_pre_tokenizers.Split(tokenizers.Regex(pattern), "removed", invert=True),
            hf_pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return [e.tokens for e in tok.encode_batch(chunks(corpus_lines()))]


@pytest.fixture(scope="module")
def bert_tokens() -> list[list[str]]:
    vocab = shared_path("pretrained", "bert_base_uncased", "vocab.txt")
    from tokenizers.implementations import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(str(vocab), lowercase=True)
    return [e.tokens for e in tok.encode_batch(chunks(corpus_lines()), add_special_tokens=False)]


@pytest.fixture(scope="module")
def spm_pieces() -> list[list[str]]:
    """Mistral's SentencePiece BPE pieces (``▁`` for spaces, ``<0xNN>`` byte fallback)."""
    sentencepiece = pytest.importorskip("sentencepiece")
    model = shared_path("pretrained", "mistral", "tokenizer.model.v1")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    pieces = [sp.encode(text, out_type=str) for text in chunks(corpus_lines())]
    assert any(p.startswith("<0x") for ps in pieces for p in ps), "expected byte-fallback pieces"
    return pieces


# --- differential decode tests ----------------------------------------------------------------


def test_byte_level_on_gpt2_tokens(gpt2_tokens):
    assert_same_decode(hf_decoders.ByteLevel(), decoders.ByteLevel(), gpt2_tokens)


def test_byte_level_on_broken_utf8(gpt2_tokens):
    windows = broken_windows(gpt2_tokens, seed=1)
    # Also tokens outside the byte alphabet (kept as their UTF-8) mixed with byte tokens.
    windows += [["Ġhello", "âĤ", "x€", "¬"], ["<unk>", "Ġ", "ðŁĺ"], []]
    assert_same_decode(hf_decoders.ByteLevel(), decoders.ByteLevel(), windows)


def test_bpe_decoder_on_clip_tokens(clip_tokens):
    assert_same_decode(hf_decoders.BPEDecoder("</w>"), decoders.BPEDecoder("</w>"), clip_tokens)
    windows = broken_windows(clip_tokens, seed=2) + [[], ["a</w>b</w>"]]
    assert_same_decode(hf_decoders.BPEDecoder(), decoders.BPEDecoder(), windows)
    # An empty suffix (str.replace semantics) and a suffix that is not present.
    for suffix in ["", "@@"]:
        assert_same_decode(
            hf_decoders.BPEDecoder(suffix), decoders.BPEDecoder(suffix), windows[:50]
        )


@pytest.mark.parametrize("cleanup", [True, False])
def test_wordpiece_on_bert_tokens(bert_tokens, cleanup):
    hf = hf_decoders.WordPiece(prefix="##", cleanup=cleanup)
    tm = decoders.WordPiece(prefix="##", cleanup=cleanup)
    assert_same_decode(hf, tm, bert_tokens + broken_windows(bert_tokens, seed=3))


def llama_style(module, regex_cls=None):
    """The Llama/Mistral decoder: ▁→space, byte fallback, fuse, strip one leading space."""
    return module.Sequence(
        [module.Replace("▁", " "), module.ByteFallback(), module.Fuse(), module.Strip(" ", 1, 0)]
    )


def test_sentencepiece_decoders_on_mistral_pieces(spm_pieces):
    windows = spm_pieces + broken_windows(spm_pieces, seed=4, n=500)
    # Byte tokens that do not form valid UTF-8, and look-alikes that are not byte tokens.
    windows += [
        ["<0xE2>", "<0x82>", "a", "<0xE2>", "<0x82>", "<0xAC>"],
        ["<0x+1>", "<0xZZ>", "<0x4>", "<0x41>"],
    ]
    assert_same_decode(llama_style(hf_decoders), llama_style(decoders), windows)
    assert_same_decode(hf_decoders.ByteFallback(), decoders.ByteFallback(), windows)
    for scheme in ["always", "first", "never"]:
        assert_same_decode(
            hf_decoders.Metaspace(prepend_scheme=scheme),
            decoders.Metaspace(prepend_scheme=scheme),
            windows,
        )
    assert_same_decode(
        hf_decoders.Metaspace("_", "always", False),
        decoders.Metaspace("_", "always", False),
        windows[:50],
    )


def test_replace_strip_fuse_ctc(gpt2_tokens, bert_tokens):
    windows = broken_windows(gpt2_tokens, seed=5) + broken_windows(bert_tokens, seed=6)
    pairs = [
        (hf_decoders.Replace("Ġ", " "), decoders.Replace("Ġ", " ")),
        (hf_decoders.Replace("", "|"), decoders.Replace("", "|")),
        (
            hf_decoders.Replace(tokenizers.Regex(r"[aeiou]+"), "_"),
            decoders.Replace(tokenmill.Regex(r"[aeiou]+"), "_"),
        ),
        (
            hf_decoders.Replace(tokenizers.Regex(r"\b|#*"), "^"),
            decoders.Replace(tokenmill.Regex(r"\b|#*"), "^"),
        ),
        (hf_decoders.Strip("#", 1, 0), decoders.Strip("#", 1, 0)),
        (hf_decoders.Strip("Ġ", 0, 1), decoders.Strip("Ġ", 0, 1)),
        (hf_decoders.Strip("#", 3, 0), decoders.Strip("#", 3, 0)),
        (hf_decoders.Fuse(), decoders.Fuse()),
        (hf_decoders.CTC(), decoders.CTC()),
        (hf_decoders.CTC("[PAD]", "Ġ", False), decoders.CTC("[PAD]", "Ġ", False)),
        (
            hf_decoders.Sequence([hf_decoders.ByteLevel(), hf_decoders.Strip(" ", 1, 0)]),
            decoders.Sequence([decoders.ByteLevel(), decoders.Strip(" ", 1, 0)]),
        ),
    ]
    for hf, tm in pairs:
        assert_same_decode(hf, tm, windows)


def test_strip_does_not_panic_where_tokenizers_does():
    # tokenizers panics when asked to strip more characters than a token has from both sides;
    # tokenmill returns an empty token instead.
    assert decoders.Strip(" ", 0, 5).decode([" "]) == ""
    assert decoders.Strip(" ", 1, 1).decode([" ", "a"]) == "a"


# --- serialization ----------------------------------------------------------------------------

ALL_DECODERS = [
    lambda m, r: m.ByteLevel(),
    lambda m, r: m.BPEDecoder(suffix="@@"),
    lambda m, r: m.Metaspace(replacement="_", prepend_scheme="first", split=False),
    lambda m, r: m.ByteFallback(),
    lambda m, r: m.Fuse(),
    lambda m, r: m.Strip(content="x", left=2, right=1),
    lambda m, r: m.Replace("▁", " "),
    lambda m, r: m.Replace(r(r"\s+"), " "),
    lambda m, r: m.WordPiece(prefix="@@", cleanup=False),
    lambda m, r: m.CTC(pad_token="[PAD]", word_delimiter_token="_", cleanup=False),
    lambda m, r: m.Sequence([m.Replace("▁", " "), m.ByteFallback(), m.Fuse(), m.Strip(" ", 1, 0)]),
]


@pytest.mark.parametrize("build", ALL_DECODERS)
def test_json_round_trip_both_ways(build):
    hf = build(hf_decoders, tokenizers.Regex)
    tm = build(decoders, tokenmill.Regex)
    assert tm.__getstate__() == hf.__getstate__()
    assert repr(tm) == repr(hf)
    assert str(tm) == str(hf)
    # tokenizers' JSON → tokenmill, and tokenmill's JSON → tokenizers (through a tokenizer.json).
    loaded = pickle.loads(pickle.dumps(tm))
    assert type(loaded) is type(tm) and loaded.__getstate__() == hf.__getstate__()
    tok = tokenizers.Tokenizer(hf_models.BPE())
    tok.decoder = hf
    as_json = json.loads(tok.to_str())["decoder"]
    other = decoders.Fuse()
    other.__setstate__(json.dumps(as_json).encode())
    assert other.__getstate__() == hf.__getstate__()
    config = json.loads(tok.to_str())
    config["decoder"] = json.loads(tm.__getstate__())
    back = tokenizers.Tokenizer.from_str(json.dumps(config))
    assert back.decoder.__getstate__() == hf.__getstate__()


def test_bad_decoder_arguments_raise():
    with pytest.raises(ValueError):
        decoders.Metaspace(prepend_scheme="sometimes")
    with pytest.raises(TypeError):
        decoders.Replace(42, "x")
    with pytest.raises(TypeError):
        decoders.Sequence([decoders.Fuse(), "not a decoder"])


def test_attributes_match_tokenizers():
    for hf, tm, attrs in [
        (hf_decoders.Metaspace(), decoders.Metaspace(), ["replacement", "prepend_scheme", "split"]),
        (hf_decoders.Strip("x", 2, 3), decoders.Strip("x", 2, 3), ["content", "start", "stop"]),
        (hf_decoders.WordPiece(), decoders.WordPiece(), ["prefix", "cleanup"]),
        (hf_decoders.BPEDecoder(), decoders.BPEDecoder(), ["suffix"]),
        (hf_decoders.CTC(), decoders.CTC(), ["pad_token", "word_delimiter_token", "cleanup"]),
    ]:
        for a in attrs:
            assert getattr(tm, a) == getattr(hf, a), a
    m = decoders.Metaspace()
    m.prepend_scheme = "never"
    m.replacement = "_"
    assert m.decode(["_a", "_b"]) == hf_decoders.Metaspace("_", "never").decode(["_a", "_b"])
    seq = decoders.Sequence([decoders.Fuse(), decoders.Strip()])
    assert isinstance(seq[1], decoders.Strip) and len(seq) == 2
