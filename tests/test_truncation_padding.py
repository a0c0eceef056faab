"""Truncation (max_length, stride, strategy, direction, overflowing windows) and padding (batch
longest / fixed, pad_to_multiple_of, direction, pad id / type id / token), checked against
`tokenizers` on real text: same encodings, overflowing windows included, for singles, pairs,
pre-tokenized input and batches; the same settings refused; tokenizer.json read and written
alike. Where `tokenizers` fails (an error or a Rust panic), tokenmill raises a TokenmillError."""

from __future__ import annotations

import itertools
import pickle
from functools import partial

import pytest
from conftest import STUDY_IN_SCARLET, corpus_text, gpt2

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402


def full(e):
    """Everything an Encoding holds, overflowing windows recursively."""
    return (
        e.ids,
        e.type_ids,
        e.tokens,
        e.offsets,
        e.word_ids,
        e.sequence_ids,
        e.special_tokens_mask,
        e.attention_mask,
        e.n_sequences,
        [full(o) for o in e.overflowing],
    )


def outcome(fn):
    """`full` of what `fn` returns, or "error" if it raises anything (tokenizers panics too)."""
    try:
        result = fn()
    except BaseException as error:  # noqa: BLE001 - a PanicException is a BaseException
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return "error", error
    if result is None:
        return None, None
    if isinstance(result, list):
        return [full(e) for e in result], None
    return full(result), None


def assert_same(hf_call, tm_call, context):
    expected, _ = outcome(hf_call)
    got, error = outcome(tm_call)
    if expected == "error":
        assert got == "error", f"{context}: tokenizers fails, tokenmill does not"
        assert isinstance(error, tokenmill.TokenmillError), f"{context}: {type(error)} {error}"
    else:
        assert got != "error", f"{context}: tokenmill raised {error!r}"
        assert got == expected, context


def gpt2_pair(template: bool):
    hf = gpt2(tokenizers)
    if template:
        hf.post_processor = tokenizers.processors.TemplateProcessing(
            single="<|endoftext|> $A <|endoftext|>",
            pair="<|endoftext|> $A <|endoftext|> $B:1 <|endoftext|>:1",
            special_tokens=[("<|endoftext|>", 50256)],
        )
    else:
        hf.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    return hf, tokenmill.Tokenizer.from_str(hf.to_str())


def normalized_word_level():
    """A non-byte-level pipeline with a length-changing normalizer and BERT-style specials."""
    hf, _ = gpt2_pair(template=False)
    hf.normalizer = tokenizers.normalizers.Sequence(
        [tokenizers.normalizers.NFKD(), tokenizers.normalizers.Lowercase()]
    )
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Whitespace(),
            tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
        ]
    )
    hf.post_processor = tokenizers.processors.RobertaProcessing(
        ("<|endoftext|>", 50256), ("<|endoftext|>", 50256)
    )
    return hf, tokenmill.Tokenizer.from_str(hf.to_str())


@pytest.fixture(scope="module")
def paragraphs():
    chunks = []
    for sample in (
        (STUDY_IN_SCARLET, 120_000),
        ("multilingual/fr/fr_pg14155_flaubert_madame_bovary.txt", 40_000),
        ("multilingual/ru/ru_ruslit_chekhov_drama_na_okhote.txt", 30_000),
    ):
        chunks += [p.strip() for p in corpus_text(sample).split("\n\n") if len(p.strip()) > 20]
    # long and short paragraphs, from every language (capped: a pair truncated to a few tokens
    # has about len(first) * len(second) overflowing windows)
    chunks = sorted(c[:600] for c in chunks)
    chunks.sort(key=len)
    return chunks[:: max(1, len(chunks) // 40)]


BUILDERS = {
    "gpt2_template": lambda: gpt2_pair(True),
    "gpt2_bytelevel": lambda: gpt2_pair(False),
    "nfkd_lower_roberta": normalized_word_level,
}
_BUILT: dict = {}


def pipeline_pair(name):
    """The (tokenizers, tokenmill) pair for `name`, built once (loading GPT-2 takes a second)
    and handed out with truncation and padding off."""
    if name not in _BUILT:
        _BUILT[name] = BUILDERS[name]()
    hf, tm = _BUILT[name]
    for lib in (hf, tm):
        lib.no_truncation()
        lib.no_padding()
    return hf, tm


PIPELINES = {name: (lambda name=name: pipeline_pair(name)) for name in BUILDERS}

TRUNCATIONS = [
    dict(max_length=m, stride=s, strategy=st, direction=d)
    for m, s, st, d in itertools.product(
        [3, 17], [0, 2], ["longest_first", "only_first", "only_second"], ["right", "left"]
    )
]


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_truncation_matches_tokenizers(pipeline, paragraphs):
    hf, tm = PIPELINES[pipeline]()
    pairs = list(zip(paragraphs[::2], paragraphs[1::2]))
    for params in TRUNCATIONS:
        hf_ok, tm_ok = (
            outcome(partial(hf.enable_truncation, **params)),
            outcome(partial(tm.enable_truncation, **params)),
        )
        assert (hf_ok[0] == "error") == (tm_ok[0] == "error"), params
        if hf_ok[0] == "error":
            assert isinstance(tm_ok[1], tokenmill.InvalidArgumentError)
            continue
        assert tm.truncation == hf.truncation
        for special in (True, False):
            for first, second in pairs[:4]:
                ctx = f"{pipeline} {params} special={special}"
                for inputs in ((first,), (first, second)):
                    added = tm.num_special_tokens_to_add(len(inputs) == 2) if special else 0
                    if params["max_length"] < added:
                        # tokenizers wraps `max_length - added` around and stops truncating
                        # silently; tokenmill says what is wrong.
                        with pytest.raises(tokenmill.InvalidArgumentError, match="special tokens"):
                            tm.encode(*inputs, add_special_tokens=special)
                        continue
                    assert_same(
                        partial(hf.encode, *inputs, add_special_tokens=special),
                        partial(tm.encode, *inputs, add_special_tokens=special),
                        f"{ctx} {len(inputs)} sequence(s)",
                    )
        if params["max_length"] < tm.num_special_tokens_to_add(True):
            continue
        words = [p.split() for p in paragraphs[:4]]
        assert_same(
            partial(hf.encode, words[0], words[1], is_pretokenized=True),
            partial(tm.encode, words[0], words[1], is_pretokenized=True),
            f"{pipeline} {params} pre-tokenized pair",
        )
        assert_same(
            lambda: hf.encode_batch(pairs[4:8]),
            lambda: tm.encode_batch(pairs[4:8]),
            f"{pipeline} {params} batch",
        )


PADDINGS = [
    dict(),
    dict(direction="left", pad_id=3, pad_type_id=1, pad_token="<pad>"),
    dict(length=40),
    dict(length=7, pad_to_multiple_of=4, direction="left"),
    dict(pad_to_multiple_of=16),
    dict(pad_to_multiple_of=0, pad_id=50256, pad_token="<|endoftext|>"),
]


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("padding", PADDINGS, ids=str)
def test_padding_matches_tokenizers(pipeline, padding, paragraphs):
    hf, tm = PIPELINES[pipeline]()
    hf.enable_padding(**padding)
    tm.enable_padding(**padding)
    assert tm.padding == hf.padding
    assert tm.to_str() == hf.to_str()
    batch = paragraphs[:12]
    pairs = list(zip(batch[::2], batch[1::2]))
    for with_truncation in (False, True):
        if with_truncation:
            hf.enable_truncation(24, stride=4, strategy="longest_first")
            tm.enable_truncation(24, stride=4, strategy="longest_first")
        ctx = f"{pipeline} {padding} truncation={with_truncation}"
        assert_same(lambda: hf.encode(batch[0]), lambda: tm.encode(batch[0]), ctx)
        assert_same(lambda: hf.encode(*pairs[0]), lambda: tm.encode(*pairs[0]), ctx + " pair")
        assert_same(lambda: hf.encode_batch(batch), lambda: tm.encode_batch(batch), ctx + " batch")
        assert_same(
            lambda: hf.encode_batch(pairs), lambda: tm.encode_batch(pairs), ctx + " pair batch"
        )
        assert_same(
            lambda: hf.encode_batch([b.split() for b in batch], is_pretokenized=True),
            lambda: tm.encode_batch([b.split() for b in batch], is_pretokenized=True),
            ctx + " pre-tokenized batch",
        )


def test_tokenizer_json_fields_round_trip(paragraphs):
    hf, _ = pipeline_pair("gpt2_template")
    hf.enable_truncation(40, stride=3, strategy="only_second", direction="left")
    hf.enable_padding(
        length=44, direction="left", pad_id=50256, pad_token="<|endoftext|>", pad_to_multiple_of=8
    )
    tm = tokenmill.Tokenizer.from_str(hf.to_str())
    assert tm.truncation == hf.truncation and tm.padding == hf.padding
    assert tm.to_str() == hf.to_str()
    assert tm.to_str(pretty=True) == hf.to_str(pretty=True)
    pair = (paragraphs[3], paragraphs[-2])
    assert full(tm.encode(*pair)) == full(hf.encode(*pair))
    back = pickle.loads(pickle.dumps(tm))
    assert back.truncation == hf.truncation and full(back.encode(*pair)) == full(hf.encode(*pair))
    tm.no_truncation()
    tm.no_padding()
    hf.no_truncation()
    hf.no_padding()
    assert tm.truncation is None and tm.padding is None
    assert tm.to_str() == hf.to_str()


def test_post_process_truncates_and_pads_like_tokenizers(paragraphs):
    hf, tm = pipeline_pair("gpt2_template")
    for lib in (hf, tm):
        lib.enable_truncation(12, stride=2)
        lib.enable_padding(length=16)
    for add_special in (True, False):
        a, b = paragraphs[5], paragraphs[9]
        hf_out = hf.post_process(
            hf.encode(a, add_special_tokens=False),
            hf.encode(b, add_special_tokens=False),
            add_special,
        )
        tm_out = tm.post_process(
            tm.encode(a, add_special_tokens=False),
            tm.encode(b, add_special_tokens=False),
            add_special,
        )
        assert full(tm_out) == full(hf_out)


def test_encoding_truncate_and_pad_methods(paragraphs):
    hf, tm = pipeline_pair("gpt2_bytelevel")
    text = paragraphs[-1]
    for max_length, stride, direction in [
        (5, 0, "right"),
        (7, 3, "left"),
        (1, 0, "right"),
        (0, 0, "left"),
        (10_000, 0, "right"),
    ]:
        h, t = hf.encode(text), tm.encode(text)
        h.truncate(max_length, stride=stride, direction=direction)
        t.truncate(max_length, stride=stride, direction=direction)
        assert full(t) == full(h)
        h.pad(9, direction="left", pad_id=5, pad_type_id=2, pad_token="<p>")
        t.pad(9, direction="left", pad_id=5, pad_type_id=2, pad_token="<p>")
        assert full(t) == full(h)
    t = tm.encode(text)
    with pytest.raises(tokenmill.InvalidArgumentError, match="stride"):
        t.truncate(4, stride=4)
    with pytest.raises(tokenmill.InvalidArgumentError, match="direction"):
        t.truncate(4, direction="up")
    with pytest.raises(tokenmill.InvalidArgumentError, match="direction"):
        t.pad(4, direction="middle")


def test_invalid_settings_raise_clear_errors(paragraphs):
    _, tm = pipeline_pair("gpt2_template")
    with pytest.raises(tokenmill.InvalidArgumentError, match="strategy"):
        tm.enable_truncation(10, strategy="shortest_first")
    with pytest.raises(tokenmill.InvalidArgumentError, match="direction"):
        tm.enable_truncation(10, direction="middle")
    with pytest.raises(tokenmill.InvalidArgumentError, match="max_length"):
        tm.enable_truncation(-1)
    with pytest.raises(tokenmill.InvalidArgumentError, match="stride"):
        tm.enable_truncation(10, stride=-2)
    with pytest.raises(tokenmill.InvalidArgumentError, match="stride"):
        tm.enable_truncation(6, stride=5)  # 6 - 2 special tokens leaves 4 < 5
    assert tm.truncation is None
    with pytest.raises(tokenmill.InvalidArgumentError, match="direction"):
        tm.enable_padding(direction="up")
    with pytest.raises(tokenmill.InvalidArgumentError, match="length"):
        tm.enable_padding(length=-3)
    with pytest.raises(tokenmill.InvalidArgumentError, match="pad_to_multiple_of"):
        tm.enable_padding(pad_to_multiple_of=-8)
    assert tm.padding is None
    # tokenizers wraps `max_length - special tokens` around and silently stops truncating;
    # tokenmill says what is wrong.
    tm.enable_truncation(1)
    with pytest.raises(tokenmill.InvalidArgumentError, match="special tokens"):
        tm.encode(paragraphs[0])
    assert len(tm.encode(paragraphs[0], add_special_tokens=False)) == 1
    tm.enable_truncation(10, strategy="only_second")
    with pytest.raises(tokenmill.InvalidArgumentError, match="pair"):
        tm.encode(paragraphs[-1])


@pytest.mark.parametrize("bad", [42, 3.5, None, b"bytes", ["a", 1]])
def test_text_that_is_not_a_string(bad):
    _, tm = pipeline_pair("gpt2_template")
    with pytest.raises(tokenmill.InputTypeError):
        tm.encode(bad)
    if bad is not None:  # a None pair is no pair
        with pytest.raises(tokenmill.InputTypeError):
            tm.encode("fine", bad)
    with pytest.raises(tokenmill.InputTypeError):
        tm.encode_batch(["fine", bad])
    with pytest.raises(TypeError):  # InputTypeError is a TypeError too, like tokenizers' error
        tm.encode_batch_ids([bad])


def test_ids_out_of_range_in_decode():
    hf, tm = pipeline_pair("gpt2_template")
    ids = tm.encode("Hello world").ids
    # ids that no vocabulary holds (but fit in u32) are skipped, as in tokenizers
    assert tm.decode(ids + [4_000_000_000]) == hf.decode(ids + [4_000_000_000])
    for bad in (-1, 2**32, 2**70):
        with pytest.raises(tokenmill.IdOutOfRangeError, match=f"{bad} at position 2"):
            tm.decode(ids[:2] + [bad])
        with pytest.raises(OverflowError):  # also what tokenizers raises
            tm.decode_batch([ids, [bad]])
    with pytest.raises(tokenmill.InputTypeError, match="position 1"):
        tm.decode([ids[0], "x"])
    with pytest.raises(tokenmill.InputTypeError):
        tm.decode(17)
