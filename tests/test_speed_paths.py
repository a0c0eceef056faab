"""The throughput paths against Hugging Face `tokenizers` (and `transformers`' call semantics):

- the per-thread word caches: WordPiece caches matched words, BPE caches words by their raw bytes
  (byte-level) or text; cached and uncached answers must be the same, also after the model's
  options change and for words the cache does not keep (long, many tokens, unknown);
- BPE's merge of short words on small arrays (`merge_small`), used for every word the cache has
  not seen, against the heap path's results as `tokenizers` gives them (cache off, fresh models,
  words around the 32-symbol boundary);
- one-thread batches, which run on the calling thread: same encodings as with the pool;
- `tok(..., return_tensors="np")`, which encodes, pads and fills the arrays in one native call
  and makes the rows' Encoding objects only when asked: arrays, alignment methods, overflow rows,
  lengths, pickling.

Every comparison is with the reference library on corpus samples and adversarial strings.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest
from conftest import SHARED, documents, gpt2, gpt2_model, read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
np = pytest.importorskip("numpy")
import tokenmill  # noqa: E402

SAMPLE_BYTES = 60_000

ADVERSARIAL = [
    "",
    "a",
    "The the THE tHe the. the, the",
    "unaffable unaffable Unaffable",
    "x" * 31 + " " + "y" * 32 + " " + "z" * 33 + " " + "ab" * 40,
    "supercalifragilisticexpialidocious " * 3,
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    "a" * 300 + " " + "é" * 120 + " " + "a" * 101,
    "Café naïve ÉCOLE e\u0301 中文字 mixed中x 🙂👍🏽 ™",
    "\x00\ufffd a\x7fb «quoted» — dash … ellipsis",
    "don't stop-believing: e-mail@example.com (1,234.56) #tag $5 100%",
    "  leading\tand trailing \r\n  \n\n",
    "0123456789" * 12,
]


def _docs(path, n_bytes=SAMPLE_BYTES, doc_bytes=1000):
    return documents(read_sample(path, n_bytes), doc_bytes)


def _english():
    return _docs(shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt"))


def _multilingual():
    root = SHARED / "corpora" / "multilingual"
    if not root.exists():
        pytest.skip(f"needs {root}")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".txt", "") and p.stat().st_size > 0
    )
    return [d for p in files[:6] for d in _docs(p, 8_000)]


def _assert_same(ours, theirs, texts, what=""):
    assert len(ours) == len(theirs)
    for text, a, b in zip(texts, ours, theirs):
        assert a.ids == b.ids, (what, text[:80])
        assert a.tokens == b.tokens, (what, text[:80])
        assert a.offsets == b.offsets, (what, text[:80])
        assert a.word_ids == b.word_ids, (what, text[:80])
        assert a.type_ids == b.type_ids and a.attention_mask == b.attention_mask, (what, text[:80])


@pytest.fixture(scope="module")
def gpt2_json(tmp_path_factory):
    t = gpt2(tokenizers)
    t.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    t.add_special_tokens(["<|endoftext|>"])
    path = tmp_path_factory.mktemp("gpt2") / "tokenizer.json"
    t.save(str(path))
    return str(path)


# ---- word caches ----


def _cold_then_warm(tokenizer_json, texts):
    """A fresh tokenmill tokenizer for `tokenizer_json` (its caches empty) after two batches of
    `texts`, each checked against tokenizers' encodings (returned too): the first pass fills
    this thread's cache, the second replays it."""
    theirs = tokenizers.Tokenizer.from_file(tokenizer_json).encode_batch(texts)
    ours = tokenmill.Tokenizer.from_file(tokenizer_json)
    _assert_same(ours.encode_batch(texts), theirs, texts, "cold")
    _assert_same(ours.encode_batch(texts), theirs, texts, "warm")
    return ours, theirs


def test_wordpiece_cached_and_fresh_answers_agree(bert_json):
    texts = _english() + _multilingual() + ADVERSARIAL
    ours, theirs = _cold_then_warm(bert_json, texts)
    _assert_same([ours.encode(t) for t in texts], theirs, texts, "single")


def test_wordpiece_cache_follows_option_changes(bert_json):
    texts = ADVERSARIAL + _english()[:20]
    ours = tokenmill.Tokenizer.from_file(bert_json)
    theirs = tokenizers.Tokenizer.from_file(bert_json)
    ours.encode_batch(texts)  # fill the cache
    for name, value in (
        ("max_input_chars_per_word", 5),
        ("unk_token", "[MASK]"),
        ("continuing_subword_prefix", "@@"),
    ):
        for tok in (ours, theirs):
            model = tok.model
            setattr(model, name, value)
            tok.model = model
        _assert_same(ours.encode_batch(texts), theirs.encode_batch(texts), texts, name)


def test_byte_level_bpe_cached_uncached_and_fresh(gpt2_json):
    texts = _english() + _multilingual() + ADVERSARIAL
    _, theirs = _cold_then_warm(gpt2_json, texts)
    uncached = tokenmill.Tokenizer.from_file(gpt2_json)
    uncached.model = gpt2_model(tokenmill, cache_capacity=0)
    _assert_same(uncached.encode_batch(texts), theirs, texts, "no cache")


def test_bpe_small_word_merges_on_a_trained_model():
    """A classic (non byte-level) BPE trained by tokenizers, with suffix and unk, cache off:
    every word goes through the small-array merge (or the heap above 32 symbols)."""
    sample = "".join(_english()[:40])
    ref = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    ref.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=2000, special_tokens=["[UNK]"], end_of_word_suffix="</w>", show_progress=False
    )
    ref.train_from_iterator([sample], trainer=trainer)
    ours = tokenmill.Tokenizer.from_str(ref.to_str())
    vocab, merges = _bpe_parts(ref)
    ours.model = tokenmill.models.BPE(
        vocab, merges, cache_capacity=0, unk_token="[UNK]", end_of_word_suffix="</w>"
    )
    texts = _english()[40:80] + ADVERSARIAL
    _assert_same(ours.encode_batch(texts), ref.encode_batch(texts), texts)


def _bpe_parts(tok):
    import json

    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return model["vocab"], merges


# ---- one thread on the calling thread ----


def test_one_thread_batches_equal_the_pool(bert_json, gpt2_json, tmp_path):
    """With RAYON_NUM_THREADS=1 batches run on the calling thread: same results as two threads."""
    script = (
        "import sys, tokenmill\n"
        "texts = open(sys.argv[2], encoding='utf-8').read().split('\\n\\n')\n"
        "t = tokenmill.Tokenizer.from_file(sys.argv[1])\n"
        "t.enable_padding(pad_id=0, pad_token='[PAD]')\n"
        "print(repr([(e.ids, e.offsets, e.word_ids, e.attention_mask) for e in "
        "t.encode_batch(texts)]))\n"
        "ids, bounds = t.encode_batch_ids(texts)\n"
        "print(repr((ids.tolist(), bounds.tolist())))\n"
        "print(repr({k: v.tolist() for k, v in t(texts, padding=True, truncation=True, "
        "max_length=64, return_tensors='np').items()}))\n"
    )
    sample = tmp_path / "sample.txt"
    sample.write_text("\n\n".join(_english()[:150] + ADVERSARIAL), encoding="utf-8")
    for tokenizer_json in (bert_json, gpt2_json):
        outputs = []
        for threads in ("1", "2"):
            env = dict(os.environ, RAYON_NUM_THREADS=threads)
            run = subprocess.run(
                [sys.executable, "-c", script, tokenizer_json, str(sample)],
                env=env,
                capture_output=True,
                text=True,
            )
            assert run.returncode == 0, run.stderr
            outputs.append(run.stdout)
        assert outputs[0] == outputs[1]


# ---- tok(..., return_tensors="np") ----


def _lists(batch):
    """Values as nested lists (offset pairs as lists too)."""
    return {k: np.asarray(v).tolist() for k, v in batch.items()}


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(truncation=True, max_length=256, padding="longest"),
        dict(
            truncation=True,
            max_length=64,
            padding="max_length",
            return_offsets_mapping=True,
            return_special_tokens_mask=True,
        ),
        dict(
            truncation=True,
            max_length=48,
            stride=8,
            padding=True,
            return_overflowing_tokens=True,
            return_length=True,
        ),
        dict(
            padding=True,
            pad_to_multiple_of=8,
            return_attention_mask=False,
            return_token_type_ids=True,
        ),
    ],
)
def test_numpy_call_equals_the_list_call_and_tokenizers(bert_json, kwargs):
    texts = _english()[:60] + [t for t in ADVERSARIAL if t]
    ours = tokenmill.Tokenizer.from_file(bert_json)
    arrays = ours(texts, return_tensors="np", **kwargs)
    lists = ours(texts, **kwargs)
    assert all(isinstance(v, np.ndarray) and v.dtype == np.int64 for v in arrays.values())
    assert _lists(arrays) == _lists(lists)
    # the rows' encodings, made lazily, equal the list call's
    assert len(arrays.encodings) == len(lists.encodings)
    for i in (0, 1, len(lists.encodings) - 1, -1):
        assert arrays.tokens(i) == lists.tokens(i)
        assert arrays.word_ids(i) == lists.word_ids(i)
        assert arrays.sequence_ids(i) == lists.sequence_ids(i)
        assert arrays[i].offsets == lists[i].offsets
        assert arrays[i] is arrays[i], "a row is made once and kept"
    assert arrays.char_to_token(1, 3) == lists.char_to_token(1, 3)
    # and against tokenizers' own truncation + padding (input ids and masks)
    theirs = tokenizers.Tokenizer.from_file(bert_json)
    max_length = kwargs.get("max_length")
    if max_length is not None:
        theirs.enable_truncation(max_length, stride=kwargs.get("stride", 0))
    length = max_length if kwargs.get("padding") == "max_length" else None
    theirs.enable_padding(length=length, pad_to_multiple_of=kwargs.get("pad_to_multiple_of"))
    encodings = theirs.encode_batch(texts)
    if kwargs.get("return_overflowing_tokens"):
        encodings = [row for e in encodings for row in [e] + e.overflowing]
    assert arrays["input_ids"].tolist() == [e.ids for e in encodings]


def test_numpy_call_pairs_pickling_and_errors(bert_json):
    texts = _english()[:10]
    questions = [t.split(".")[0][:80] for t in texts]
    ours = tokenmill.Tokenizer.from_file(bert_json)
    kwargs = dict(
        truncation="only_second",
        max_length=96,
        stride=16,
        padding="max_length",
        return_overflowing_tokens=True,
    )
    arrays = ours(questions, texts, return_tensors="np", **kwargs)
    lists = ours(questions, texts, **kwargs)
    assert _lists(arrays) == _lists(lists)
    assert arrays.n_sequences == 2
    restored = pickle.loads(pickle.dumps(arrays))
    assert _lists(restored) == _lists(arrays)
    assert [e.ids for e in restored.encodings] == [e.ids for e in lists.encodings]
    single = ours("one text only", return_tensors="np")
    assert single["input_ids"].shape == (1, len(ours.encode("one text only").ids))
    with pytest.raises(tokenmill.InvalidArgumentError):
        ours(["short", "a much longer text than the other one"], return_tensors="np")
    with pytest.raises(tokenmill.InvalidArgumentError):
        ours(["x"], return_tensors="pt")
