"""tokenmill.sentencepiece against the real `sentencepiece` on the pretrained models of
../shared/pretrained (Mistral v1/v3/v7 BPE with byte fallback; sentencepiece's own botchan
BPE/Unigram and kyoto Japanese Unigram test models): ids, pieces, offsets and decoded text must
be identical on every corpus of ../shared/corpora and on adversarial strings."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from conftest import read_sample, shared_path

spm = pytest.importorskip("sentencepiece")
import tokenmill  # noqa: E402
import tokenmill.sentencepiece as tsp  # noqa: E402

MODELS = {
    "mistral_v1": "mistral/tokenizer.model.v1",
    "mistral_v3": "mistral/mistral_instruct_tokenizer_240323.model.v3",
    "mistral_v7": "mistral/mistral_instruct_tokenizer_241114.model.v7",
    "botchan_bpe": "sentencepiece_test/botchan_en_bpe_1000.model",
    "botchan_unigram": "sentencepiece_test/botchan_en_unigram_1000.model",
    "kyoto_unigram": "sentencepiece_test/kyoto_ja_unigram_8000.model",
}

ADVERSARIAL = [
    "",
    " ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "a",
    " a",
    "a ",
    "  a  b  ",
    "a\tb\nc\r\nd",
    "Hello world",
    "Hello World!",
    "HELLO",
    "1234567890",
    "3.14159 2,718 1e10",
    "x" * 5000,
    "▁",
    "▁▁",
    "a▁b",
    " ▁ ",
    "<s>",
    "</s>",
    "<unk>",
    "<pad>",
    "<0x41>",
    "<0xZZ>",
    "[INST] hi [/INST]",
    "\x00",
    "a\x00b",
    "\x01\x02\x7f",
    "\u200b",
    "a\u200bb",
    "\u00a0nbsp\u00a0",
    "\u3000ideographic\u3000space",
    "\ufeffBOM",
    "\ufffd",
    "\ud7ff",
    "\U0010ffff",
    "e\u0301",
    "\u00e9",
    "ﬁ ﬂ ½ ² ①",
    "Ｈｅｌｌｏ　ｗｏｒｌｄ",
    "日本語のテキストです。",
    "東京都に住んでいます",
    "ｶﾀｶﾅ",
    "한국어 텍스트",
    "Привет, мир!",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Γειά σου Κόσμε",
    "emoji 😀🎉 👨‍👩‍👧‍👦 🏳️‍🌈",
    "👍🏽",
    "def f(x):\n    return x**2  # ok",
    "https://example.com/a?b=c&d=e",
    "tab\tseparated\tvalues",
    "  leading and trailing  ",
    "mixed 日本 text 123",
    "\u2581\u2581hello",
    "a" + "\u0301" * 50,
    "🙂" * 300,
    "Ǆǅǆ ǈ",
    "ℌℍℑ",
    "㍿ ㌀",
    "İstanbul ıi",
]


def model_path(name: str) -> Path:
    return shared_path("pretrained", MODELS[name])


def corpus_lines(max_bytes_per_file: int = 12_000) -> list[str]:
    """Lines from a sample of every corpus file under ../shared/corpora."""
    root = shared_path("corpora")
    lines: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix not in {".md", ".tsv"}:
            lines.extend(read_sample(path, max_bytes_per_file).splitlines())
    assert len(lines) > 1000
    return lines


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return corpus_lines()


def pair(name: str):
    path = str(model_path(name))
    return spm.SentencePieceProcessor(model_file=path), tsp.SentencePieceProcessor(model_file=path)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_ids_pieces_and_decode_match_on_every_corpus(name, lines):
    ref, ours = pair(name)
    texts = lines + ADVERSARIAL
    ref_ids, our_ids = ref.encode(texts), ours.encode(texts)
    ref_pieces, our_pieces = ref.encode(texts, out_type=str), ours.encode(texts, out_type=str)
    for text, a, b, pa, pb in zip(texts, ref_ids, our_ids, ref_pieces, our_pieces):
        assert b == a, text
        assert pb == pa, text
    assert ours.decode(our_ids) == ref.decode(ref_ids)
    assert ours.decode(our_pieces) == ref.decode(ref_pieces)
    # one text at a time (the single-text path) agrees with the batch path
    for text in ADVERSARIAL:
        assert ours.encode(text) == ref.encode(text)
        assert ours.encode_as_pieces(text) == ref.encode_as_pieces(text)
        assert ours.decode(ours.encode(text)) == ref.decode(ref.encode(text))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_offsets_and_surfaces_match(name, lines):
    """serialized SentencePieceText (pieces, surfaces, byte offsets) byte for byte, and the
    offset_mapping dicts (character offsets)."""
    ref, ours = pair(name)
    texts = lines[::5][:2000] + ADVERSARIAL
    assert ours.encode(texts, return_type="serialized_proto") == ref.encode(
        texts, return_type="serialized_proto"
    )
    assert ours.encode(texts, return_type="offset_mapping") == ref.encode(
        texts, return_type="offset_mapping"
    )
    assert ours.encode(texts, return_type="offset_mapping", return_bytes=True) == ref.encode(
        texts, return_type="offset_mapping", return_bytes=True
    )
    for text in ADVERSARIAL:
        assert ours.encode(text, return_type="serialized_proto") == ref.encode(
            text, return_type="serialized_proto"
        )
        # the message form (sentencepiece_pb2.SentencePieceText) carries the same pieces,
        # surfaces and byte offsets
        mapping = ref.encode(text, return_type="offset_mapping", return_bytes=True)
        result = ours.encode(text, return_type="proto")
        assert [p.id for p in result.pieces] == mapping["ids"]
        assert [(p.begin, p.end) for p in result.pieces] == mapping["offsets"]
        assert (
            result.SerializeToString() == ref.encode(text, return_type="proto").SerializeToString()
        )


def test_numpy_and_bytes_return_types_match():
    ref, ours = pair("mistral_v1")
    texts = ADVERSARIAL
    for a, b in zip(
        ref.encode(texts, return_type="numpy"), ours.encode(texts, return_type="numpy")
    ):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert ours.encode(texts, return_type=bytes) == ref.encode(texts, return_type=bytes)
    assert ours.encode_as_pieces(texts[10]) == ref.encode_as_pieces(texts[10])
    assert ours.tokenize(texts[10]) == ref.tokenize(texts[10])
    assert ours.detokenize(ours.tokenize(texts[10])) == ref.detokenize(ref.tokenize(texts[10]))
    with pytest.raises(ValueError):
        ours.encode("x", return_type="immutable", out_type=int)
    with pytest.raises(ValueError):
        ours.encode("x", return_type=float)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_options_bos_eos_reverse_unk(name):
    ref, ours = pair(name)
    texts = ADVERSARIAL[:40]
    for kwargs in [
        dict(add_bos=True),
        dict(add_eos=True),
        dict(add_bos=True, add_eos=True, reverse=True),
        dict(reverse=True),
        dict(emit_unk_piece=True),
        dict(emit_unk_piece=True, add_bos=True),
    ]:
        for out_type in (int, str):
            assert ours.encode(texts, out_type=out_type, **kwargs) == ref.encode(
                texts, out_type=out_type, **kwargs
            ), kwargs
    # the constructor's keywords are the defaults of encode()
    path = str(model_path(name))
    a = spm.SentencePieceProcessor(model_file=path, add_bos=True, out_type=str, reverse=True)
    b = tsp.SentencePieceProcessor(model_file=path, add_bos=True, out_type=str, reverse=True)
    assert b.encode(texts) == a.encode(texts)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_vocabulary_queries_match(name):
    ref, ours = pair(name)
    n = ref.get_piece_size()
    assert ours.get_piece_size() == ours.vocab_size() == len(ours) == n
    assert (ours.unk_id(), ours.bos_id(), ours.eos_id(), ours.pad_id()) == (
        ref.unk_id(),
        ref.bos_id(),
        ref.eos_id(),
        ref.pad_id(),
    )
    ids = list(range(n))
    assert ours.id_to_piece(ids) == ref.id_to_piece(ids)
    assert ours.get_score(ids) == ref.get_score(ids)
    for query in ("is_unknown", "is_control", "is_unused", "is_byte"):
        assert getattr(ours, query)(ids) == getattr(ref, query)(ids), query
    pieces = ref.id_to_piece(ids) + ["not-a-piece", "▁the", "<0x0A>", "<s>"]
    assert ours.piece_to_id(pieces) == ref.piece_to_id(pieces)
    assert ours["▁the"] == ref["▁the"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_decode_of_arbitrary_ids_and_pieces_matches(name):
    """Random id sequences (control, unknown and byte pieces included, invalid UTF-8 byte runs)."""
    ref, ours = pair(name)
    rng = random.Random(7)
    n = ref.get_piece_size()
    special = [i for i in range(n) if ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i)][
        :300
    ]
    seqs = [
        [
            rng.choice(special) if rng.random() < 0.4 else rng.randrange(n)
            for _ in range(rng.randrange(0, 30))
        ]
        for _ in range(400)
    ]
    assert ours.decode(seqs) == ref.decode(seqs)
    piece_seqs = [ref.id_to_piece(s) for s in seqs if s]
    assert ours.decode(piece_seqs) == ref.decode(piece_seqs)
    assert ours.decode(piece_seqs[0] + ["unknown-piece", "▁x▁y"]) == ref.decode(
        piece_seqs[0] + ["unknown-piece", "▁x▁y"]
    )
    for return_type in ("serialized_proto", "offset_mapping"):
        assert ours.decode(seqs, return_type=return_type) == ref.decode(
            seqs, return_type=return_type
        )
        assert ours.decode(piece_seqs, return_type=return_type) == ref.decode(
            piece_seqs, return_type=return_type
        )
    assert ours.decode(seqs, return_type="offset_mapping", return_bytes=True) == ref.decode(
        seqs, return_type="offset_mapping", return_bytes=True
    )
    assert ours.decode(seqs[1], out_type=bytes) == ref.decode(seqs[1], out_type=bytes)
    for bad in ([n], [-1], [[1], [n + 5]]):
        with pytest.raises(IndexError):
            ref.decode(bad)
        with pytest.raises(tokenmill.TokenmillError):
            ours.decode(bad)
        with pytest.raises(IndexError):
            ours.decode(bad)
    with pytest.raises(IndexError):
        ours.id_to_piece(n)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_serialized_model_round_trips(name, tmp_path):
    ref, ours = pair(name)
    data = ours.serialized_model_proto()
    assert data == ref.serialized_model_proto()
    reloaded = spm.SentencePieceProcessor(model_proto=data)
    again = tsp.SentencePieceProcessor(model_proto=data)
    texts = ADVERSARIAL
    assert again.encode(texts) == reloaded.encode(texts) == ref.encode(texts)
    import pickle

    assert pickle.loads(pickle.dumps(ours)).encode(texts) == ref.encode(texts)


def test_normalize_matches():
    for name in ("botchan_bpe", "botchan_unigram", "mistral_v1"):
        ref, ours = pair(name)
        for text in ADVERSARIAL:
            assert ours.normalize(text) == ref.normalize(text), text


def test_bpe_dropout_extremes_match():
    ref, ours = pair("mistral_v1")
    text = "Hello world, this is a test of BPE-dropout."
    # alpha=1 skips every merge: characters (and byte pieces) only, as sentencepiece
    assert ours.encode(
        text, out_type=str, enable_sampling=True, alpha=1.0, nbest_size=-1
    ) == ref.encode(text, out_type=str, enable_sampling=True, alpha=1.0, nbest_size=-1)
    assert ours.encode(text, enable_sampling=True, alpha=0.0, nbest_size=-1) == ref.encode(text)
    sampled = ours.encode([text] * 50, out_type=str, enable_sampling=True, alpha=0.3, nbest_size=-1)
    assert all("".join(s) == "".join(ref.encode(text, out_type=str)) for s in sampled)
    assert len({tuple(s) for s in sampled}) > 1
    tsp.set_random_generator_seed(3)
    first = ours.encode([text] * 5, enable_sampling=True, alpha=0.3, nbest_size=-1)
    tsp.set_random_generator_seed(3)
    assert ours.encode([text] * 5, enable_sampling=True, alpha=0.3, nbest_size=-1) == first


# ------------------------------------------------------------------------------ bad input
def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(tag: int, value) -> bytes:
    if isinstance(value, (bytes, str)):
        data = value.encode() if isinstance(value, str) else value
        return _varint(tag << 3 | 2) + _varint(len(data)) + data
    if isinstance(value, float):
        return _varint(tag << 3 | 5) + struct.pack("<f", value)
    return _varint(tag << 3) + _varint(value)


def _model(pieces, trainer: bytes = b"", normalizer: bytes = b"") -> bytes:
    """A ModelProto in protobuf wire format: pieces are (piece, score, type)."""
    body = b"".join(_field(1, _field(1, p) + _field(2, s) + _field(3, t)) for p, s, t in pieces)
    if trainer:
        body += _field(2, trainer)
    if normalizer:
        body += _field(3, normalizer)
    return body


GOOD = [
    ("<unk>", 0.0, 2),
    ("<s>", 0.0, 3),
    ("</s>", 0.0, 3),
    ("▁a", -1.0, 1),
    ("a", -2.0, 1),
    ("▁", -3.0, 1),
    ("b", -2.5, 1),
]


def _both_reject(data: bytes):
    with pytest.raises(Exception):  # noqa: B017 (the peer raises a plain Exception)
        spm.SentencePieceProcessor(model_proto=data)
    with pytest.raises(tokenmill.FormatError):
        tsp.SentencePieceProcessor(model_proto=data)


def test_hand_built_model_works_like_sentencepiece():
    for model_type in (1, 2, 3, 4):
        data = _model(GOOD, trainer=_field(3, model_type))
        ref, ours = (
            spm.SentencePieceProcessor(model_proto=data),
            tsp.SentencePieceProcessor(model_proto=data),
        )
        for text in ["a b ab ba", "aaa bbb", "c", ""]:
            assert ours.encode(text, out_type=str) == ref.encode(text, out_type=str)
            assert ours.encode(text) == ref.encode(text)


@pytest.mark.parametrize(
    "case",
    [
        "empty_piece",
        "duplicate",
        "two_unk",
        "no_unk",
        "byte_without_fallback",
        "bad_byte_piece",
        "missing_bytes",
        "bad_model_type",
    ],
)
def test_invalid_models_raise_format_error(case):
    pieces, trainer = list(GOOD), b""
    if case == "empty_piece":
        pieces.append(("", 0.0, 1))
    elif case == "duplicate":
        pieces.append(("a", -4.0, 1))
    elif case == "two_unk":
        pieces.append(("<unk2>", 0.0, 2))
    elif case == "no_unk":
        pieces = pieces[1:]
    elif case == "byte_without_fallback":
        pieces.append(("<0x41>", 0.0, 6))
    elif case == "bad_byte_piece":
        pieces.append(("<0xZZ>", 0.0, 6))
        trainer = _field(35, 1)
    elif case == "missing_bytes":
        pieces.append(("<0x41>", 0.0, 6))
        trainer = _field(35, 1)
    elif case == "bad_model_type":
        trainer = _field(3, 9)
    data = _model(pieces, trainer)
    if case == "bad_model_type":
        # sentencepiece keeps an unknown enum value as an unknown field and reads the default
        # (UNIGRAM); so does tokenmill
        ref = spm.SentencePieceProcessor(model_proto=data)
        ours = tsp.SentencePieceProcessor(model_proto=data)
        assert ours.encode("ab ba") == ref.encode("ab ba")
        return
    _both_reject(data)


def test_unknown_piece_type_is_normal_as_in_sentencepiece():
    data = _model(GOOD + [("x", 0.0, 17)])
    ref, ours = (
        spm.SentencePieceProcessor(model_proto=data),
        tsp.SentencePieceProcessor(model_proto=data),
    )
    assert ours.encode("x a x") == ref.encode("x a x")


@pytest.mark.parametrize("name", ["mistral_v1", "botchan_unigram", "kyoto_unigram"])
def test_truncated_and_corrupted_files_never_crash(name, tmp_path):
    data = model_path(name).read_bytes()
    rng = random.Random(11)
    for cut in [1, 2, 10, 100, 1000, len(data) // 3, len(data) // 2, len(data) - 1]:
        try:
            ref = spm.SentencePieceProcessor(model_proto=data[:cut])
        except Exception:
            with pytest.raises(tokenmill.FormatError):
                tsp.SentencePieceProcessor(model_proto=data[:cut])
        else:  # a cut on a message boundary is a valid (smaller) model
            assert tsp.SentencePieceProcessor(model_proto=data[:cut]).encode(
                ADVERSARIAL
            ) == ref.encode(ADVERSARIAL)
    for _ in range(60):
        corrupted = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            corrupted[rng.randrange(len(corrupted))] = rng.randrange(256)
        try:
            model = tsp.SentencePieceProcessor(model_proto=bytes(corrupted))
        except tokenmill.TokenmillError:
            continue
        # a corruption that still parses must still encode and decode without crashing
        ids = model.encode(ADVERSARIAL)
        model.decode(ids)
    path = tmp_path / "truncated.model"
    path.write_bytes(data[:999])
    with pytest.raises(tokenmill.FormatError, match="truncated.model"):
        tsp.SentencePieceProcessor(model_file=str(path))
    with pytest.raises(tokenmill.TokenmillIOError):
        tsp.SentencePieceProcessor(model_file=str(tmp_path / "missing.model"))


def test_sampling_argument_checks_match():
    ref, ours = pair("botchan_unigram")
    for bad in (dict(enable_sampling=True, nbest_size=1), dict(enable_sampling=True, nbest_size=0)):
        with pytest.raises(ValueError):
            ref.encode("hello", **bad)
        with pytest.raises(ValueError):
            ours.encode("hello", **bad)
    with pytest.raises(TypeError):
        ours.encode("hello", num_threads="2")
    for kwargs in (dict(add_bos=True), dict(reverse=True)):
        with pytest.raises(RuntimeError):
            ref.encode("hello", return_type="serialized_proto", **kwargs)
        with pytest.raises(RuntimeError):
            ours.encode("hello", return_type="serialized_proto", **kwargs)


# The ids-only path has fast paths: ASCII runs copied without a charsmap lookup, BPE word by
# word through a per-thread word cache (when no piece holds ▁ after another character), buffers
# reused per thread. These cases sit on their edges: ASCII next to characters the charsmap
# rewrites or composes with, repeated words (cache hits, in one batch and across calls), and
# two threads.
FAST_PATH_EDGES = [
    "cafe\u0301 au lait",
    "e\u0301e\u0301e",
    "abc\u00a0def",
    "x\u200by",
    "Hello\tWorld",
    "a\x00b c\x00",
    "ﬁne ﬁne ﬁne",
    "Ａ a Ａ",
    "one  two   three    four",
    "the the the the the",
    "word\u2581word",
    "end with space ",
    "x" * 300 + " y",
    "the cat sat on the mat and the cat sat again",
    "I" * 40 + " " + "I" * 40,
    "\u0301leading combining",
    "trailing combining e\u0301",
]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fast_paths_match(name, lines):
    ref, ours = pair(name)
    texts = FAST_PATH_EDGES + lines[:2000]
    expected = ref.encode(texts)
    assert ours.encode(texts, num_threads=1) == expected
    assert ours.encode(texts, num_threads=2) == expected
    assert ours.encode(texts[::-1], num_threads=1) == expected[::-1]  # warm word cache
    for text in FAST_PATH_EDGES:
        assert ours.encode(text) == ref.encode(text), text


@pytest.mark.parametrize(
    "options",
    [
        {"treat_whitespace_as_suffix": True},  # pieces end with ▁: whole-text BPE
        {"split_by_whitespace": False},  # pieces may span words: whole-text BPE
        {"user_defined_symbols": ["<sep>", "ab"]},  # the normalizer's full lookup at every byte
    ],
)
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_models_outside_the_fast_paths_match(options, model_type, lines, tmp_path):
    text = "\n".join(lines[:3000])
    prefix = str(tmp_path / "m")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text.splitlines()),
        model_prefix=prefix,
        model_type=model_type,
        vocab_size=800,
        minloglevel=2,
        **options,
    )
    ref = spm.SentencePieceProcessor(model_file=prefix + ".model")
    ours = tsp.SentencePieceProcessor(model_file=prefix + ".model")
    texts = FAST_PATH_EDGES + lines[:1500] + ["a<sep>b ab<sep>", "xab yab ab"]
    assert ours.encode(texts) == ref.encode(texts)
    assert ours.encode(texts, out_type=str) == ref.encode(texts, out_type=str)


def test_batches_take_str_and_utf8_bytes_and_reject_other_items():
    ref, ours = pair("botchan_unigram")
    batch = ["h\u00e9llo world", "w\u00e9rld".encode(), "", b"", "plain"]
    assert ours.encode(batch) == ref.encode(batch)
    assert ours.encode(batch, num_threads=2, out_type=str) == ref.encode(batch, out_type=str)
    for bad, index, kind in (
        (["ok", None], 1, "NoneType"),
        ([3], 0, "int"),
        (["a", b"b", ["c"]], 2, "list"),
    ):
        with pytest.raises(TypeError):
            ref.encode(bad)
        with pytest.raises(TypeError, match=f"item {index} is {kind}"):
            ours.encode(bad)


def test_a_bad_item_deep_in_a_large_batch_stops_both_threads_cleanly(lines):
    # The texts are read while the other thread already encodes the first chunks: an error
    # met there must end the call (no thread left waiting), and the processor stays usable.
    ref, ours = pair("botchan_unigram")
    texts = list(lines)
    while sum(map(len, texts)) <= 4 * 32 * 1024:  # several chunks before the bad item
        texts += lines
    # A lone surrogate is sentencepiece's kind of error (an ArgumentError, also a ValueError and
    # a RuntimeError), never a raw UnicodeEncodeError.
    surrogate = ("lone \ud800 surrogate", tsp.ArgumentError)
    for bad, error in ((None, TypeError), surrogate, (b"\xff bytes", UnicodeDecodeError)):
        for threads in (1, 2):
            with pytest.raises(error):
                ours.encode(texts + [bad] + texts, num_threads=threads)
    assert ours.encode(texts, num_threads=2) == ref.encode(texts)
