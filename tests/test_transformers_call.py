"""`tokenizer(text, text_pair, ...)` in the style of transformers: the BatchEncoding values and
alignment methods equal `transformers`' on real text, for single texts, pairs, batches,
pre-tokenized input and SQuAD-style question/context windows (truncation="only_second",
max_length=384, stride=128, overflowing tokens, offsets, padding="max_length"); first with a
GPT-2 BPE tokenizer wrapped in `PreTrainedTokenizerFast`, then with `BertTokenizerFast` built from
bert_base_uncased/vocab.txt (no network)."""

from __future__ import annotations

import pytest
from conftest import SHERLOCK, corpus_text, gpt2, shared_path

tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
np = pytest.importorskip("numpy")
import tokenmill  # noqa: E402


def plain(batch):
    """A BatchEncoding's values as plain lists (NumPy arrays too, with their dtype)."""
    out = {}
    for key, value in batch.items():
        if isinstance(value, np.ndarray):
            out[key] = ("ndarray", str(value.dtype), value.shape, value.tolist())
        else:
            out[key] = value
    return out


def alignment(batch, rows):
    """Every alignment method of a BatchEncoding on each row (a sample of positions)."""
    out = []
    for i in range(rows):
        length = len(batch.tokens(i))
        out.append(
            (
                batch.tokens(i),
                batch.word_ids(i),
                batch.sequence_ids(i),
                [batch.token_to_sequence(i, t) for t in range(0, length, 3)],
                [batch.token_to_word(i, t) for t in range(0, length, 3)],
                [batch.token_to_chars(i, t) for t in range(0, length, 3)],
                [batch.char_to_token(i, c, s) for s in (0, 1) for c in range(0, 400, 7)],
                [batch.char_to_word(i, c, s) for s in (0, 1) for c in range(0, 400, 7)],
                [batch.word_to_tokens(i, w, s) for s in (0, 1) for w in range(0, 60, 2)],
            )
        )
    return out


def outcome(call):
    try:
        return "ok", call()
    except BaseException as error:  # noqa: BLE001 - transformers raises Exception, ValueError, or tokenizers panics
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return "error", error


def assert_same_call(reference, tm, args, kwargs):
    status, expected = outcome(lambda: reference(*args, **kwargs))
    got_status, got = outcome(lambda: tm(*args, **kwargs))
    context = f"{kwargs} on {[type(a).__name__ for a in args]}"
    if status == "error":
        assert got_status == "error", (
            f"{context}: transformers raises {expected!r}, tokenmill does not"
        )
        assert isinstance(got, tokenmill.TokenmillError), f"{context}: {got!r}"
        return
    assert got_status == "ok", f"{context}: tokenmill raised {got!r}"
    assert plain(got) == plain(expected), context
    rows = len(expected.encodings)
    assert len(got.encodings) == rows, context
    assert alignment(got, rows) == alignment(expected, rows), context
    assert got.n_sequences == expected.n_sequences, context


@pytest.fixture(scope="module")
def texts():
    novel = corpus_text((SHERLOCK, 400_000))
    paragraphs = [" ".join(p.split()) for p in novel.split("\n\n") if len(p.split()) > 5]
    questions = [p for p in paragraphs if 20 < len(p) < 120][:12]
    contexts = sorted((p for p in paragraphs if len(p) > 1500), key=len)[-6:]
    french = corpus_text(("multilingual/fr/fr_pg14155_flaubert_madame_bovary.txt", 60_000))
    accented = [" ".join(p.split()) for p in french.split("\n\n") if 40 < len(p) < 600][:6]
    return {
        "questions": questions,
        "contexts": contexts,
        "short": paragraphs[100:112],
        "accented": accented,
    }


def kwarg_grid():
    return [
        {},
        {"padding": True},
        {
            "padding": "longest",
            "pad_to_multiple_of": 8,
            "return_special_tokens_mask": True,
            "return_length": True,
        },
        {"truncation": True, "max_length": 16},
        {"max_length": 12},
        {
            "truncation": "longest_first",
            "max_length": 20,
            "padding": "max_length",
            "return_offsets_mapping": True,
        },
        {
            "truncation": "only_first",
            "max_length": 40,
            "stride": 4,
            "return_overflowing_tokens": True,
        },
        {
            "truncation": True,
            "max_length": 32,
            "padding": True,
            "padding_side": "left",
            "return_tensors": "np",
        },
        {
            "padding": True,
            "return_tensors": "np",
            "return_offsets_mapping": True,
            "return_attention_mask": False,
        },
        {"add_special_tokens": False, "return_token_type_ids": True, "padding": True},
    ]


def run_grid(reference, tm, texts):
    short, accented = texts["short"], texts["accented"]
    inputs = [
        (short[0],),
        (short[1], accented[0]),
        (short[:6],),
        (short[:4], accented[:4]),
        (accented,),
    ]
    for kwargs in kwarg_grid():
        for args in inputs:
            assert_same_call(reference, tm, args, kwargs)
    words = [s.split() for s in short[:4]]
    for kwargs in (
        {},
        {"padding": True, "truncation": True, "max_length": 24, "return_offsets_mapping": True},
    ):
        assert_same_call(reference, tm, (words,), {"is_split_into_words": True, **kwargs})
        assert_same_call(
            reference, tm, (words[0], words[1]), {"is_split_into_words": True, **kwargs}
        )


def run_squad(reference, tm, texts):
    """Question answering preprocessing, as in the transformers QA examples."""
    questions, contexts = texts["questions"][: len(texts["contexts"])], texts["contexts"]
    kwargs = dict(
        truncation="only_second",
        max_length=384,
        stride=128,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding="max_length",
    )
    assert_same_call(reference, tm, (questions, contexts), kwargs)
    assert_same_call(reference, tm, (questions, contexts), {**kwargs, "return_tensors": "np"})
    assert_same_call(reference, tm, (questions[0], contexts[-1]), kwargs)
    got = tm(questions, contexts, **kwargs)
    assert len(set(got["overflow_to_sample_mapping"])) == len(contexts)
    assert max(got["overflow_to_sample_mapping"]) == len(contexts) - 1


# ---- GPT-2 BPE through PreTrainedTokenizerFast (runs without WordPiece) ----


@pytest.fixture(scope="module")
def gpt2_pair():
    hf = gpt2(tokenizers, add_prefix_space=True)
    hf.add_special_tokens(["<pad>", "<cls>", "<sep>"])
    cls, sep = hf.token_to_id("<cls>"), hf.token_to_id("<sep>")
    hf.post_processor = tokenizers.processors.Sequence(
        [
            tokenizers.processors.ByteLevel(trim_offsets=True),
            tokenizers.processors.TemplateProcessing(
                single="<cls> $A <sep>",
                pair="<cls> $A <sep> $B:1 <sep>:1",
                special_tokens=[("<cls>", cls), ("<sep>", sep)],
            ),
        ]
    )
    tm = tokenmill.Tokenizer.from_str(hf.to_str())
    reference = transformers.PreTrainedTokenizerFast(
        tokenizer_object=hf,
        pad_token="<pad>",
        cls_token="<cls>",
        sep_token="<sep>",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    return reference, tm


def test_gpt2_call_matches_transformers(gpt2_pair, texts):
    run_grid(*gpt2_pair, texts)


def test_gpt2_squad_windows_match_transformers(gpt2_pair, texts):
    run_squad(*gpt2_pair, texts)


def test_call_leaves_the_tokenizer_unchanged(gpt2_pair, texts):
    _, tm = gpt2_pair
    before = tm.to_str()
    tm(texts["short"][:3], truncation=True, max_length=8, padding="max_length")
    assert tm.to_str() == before and tm.truncation is None and tm.padding is None


def test_token_type_ids_default_follows_segments(gpt2_pair, texts):
    """Without return_token_type_ids, type ids come back only for a tokenizer with BERT-style
    segments (as transformers' model_input_names of BERT vs GPT-2)."""
    reference, tm = gpt2_pair
    assert "token_type_ids" in tm(texts["short"][0])
    plain_gpt2 = tokenmill.Tokenizer.from_str(tm.to_str())
    plain_gpt2.post_processor = tokenmill.processors.ByteLevel()
    assert "token_type_ids" not in plain_gpt2(texts["short"][0])


def test_bad_calls_raise_tokenmill_errors(gpt2_pair, texts):
    _, tm = gpt2_pair
    text = texts["short"][0]
    with pytest.raises(tokenmill.InvalidArgumentError, match="padding"):
        tm(text, padding="sideways")
    with pytest.raises(tokenmill.InvalidArgumentError, match="truncation"):
        tm(text, truncation="middle_out", max_length=5)
    with pytest.raises(tokenmill.InvalidArgumentError, match="max_length"):
        tm(text, max_length=-5)
    with pytest.raises(tokenmill.InvalidArgumentError, match="multiple"):
        tm(text, truncation=True, max_length=10, padding="max_length", pad_to_multiple_of=8)
    with pytest.raises(tokenmill.InvalidArgumentError, match="return_tensors"):
        tm(text, return_tensors="pt")
    with pytest.raises(tokenmill.InvalidArgumentError, match="different lengths"):
        tm(texts["short"][:3], return_tensors="np")
    with pytest.raises(tokenmill.InvalidArgumentError, match="text_pair"):
        tm(texts["short"][:3], texts["short"][:2])
    with pytest.raises(tokenmill.InvalidArgumentError, match="pair"):
        tm(texts["short"][-1], truncation="only_second", max_length=8)
    for bad in (42, [1, 2], {"text": "x"}, b"bytes"):
        with pytest.raises(tokenmill.InputTypeError):
            tm(bad)
    no_pad = tokenmill.Tokenizer.from_str(tm.to_str().replace('"<pad>"', '"<nopad>"'))
    with pytest.raises(tokenmill.InvalidArgumentError, match="padding token"):
        no_pad(texts["short"][:2], padding=True)


def test_encode_batch_arrays_match_transformers_numpy(gpt2_pair, texts):
    reference, tm = gpt2_pair
    batch = list(zip(texts["short"][:6], texts["accented"][:6]))
    tm.enable_truncation(48, stride=0, strategy="longest_first")
    tm.enable_padding(pad_id=reference.pad_token_id, pad_token="<pad>", pad_to_multiple_of=16)
    try:
        arrays = tm.encode_batch_arrays(batch)
    finally:
        tm.no_truncation()
        tm.no_padding()
    expected = reference(
        [a for a, _ in batch],
        [b for _, b in batch],
        truncation=True,
        max_length=48,
        padding=True,
        pad_to_multiple_of=16,
        return_tensors="np",
    )
    assert set(arrays) == {"input_ids", "attention_mask", "token_type_ids"}
    for key in arrays:
        assert arrays[key].dtype == expected[key].dtype
        assert arrays[key].tolist() == expected[key].tolist(), key


# ---- BERT: BertTokenizerFast from vocab.txt ----


@pytest.fixture(scope="module")
def bert_pair():
    vocab = shared_path("pretrained", "bert_base_uncased", "vocab.txt")
    reference = transformers.BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
    try:
        tm = tokenmill.Tokenizer.from_str(reference.backend_tokenizer.to_str())
    except tokenmill.TokenmillError as error:
        pytest.skip(
            "this tokenmill build cannot load BERT's tokenizer.json yet (WordPiece pipeline): "
            f"{error}"
        )
    return reference, tm


def test_bert_call_matches_transformers(bert_pair, texts):
    run_grid(*bert_pair, texts)


def test_bert_squad_windows_match_transformers(bert_pair, texts):
    run_squad(*bert_pair, texts)
