"""Added tokens with every flag (special, single_word, lstrip, rstrip, normalized), overlapping
ones and thousands of them, checked against `tokenizers` on real text: same encodings (ids,
tokens, offsets, words), same decoding with and without skipping specials, same vocabulary and
tokenizer.json; also with encode_special_tokens and through pairs and batches."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from conftest import SHERLOCK, corpus_text, gpt2, non_empty_lines

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

FLAGS = ["special", "single_word", "lstrip", "rstrip", "normalized"]


def gpt2_json(normalizer):
    hf = gpt2(tokenizers)
    if normalizer == "lowercase":
        hf.normalizer = tokenizers.normalizers.Lowercase()
    elif normalizer == "nfkc_lower":
        hf.normalizer = tokenizers.normalizers.Sequence(
            [tokenizers.normalizers.NFKC(), tokenizers.normalizers.Lowercase()]
        )
    return hf.to_str()


@pytest.fixture(scope="module")
def corpus():
    return non_empty_lines(corpus_text((SHERLOCK, 200_000)))


def tokens_with_all_flags(contents):
    """Each content with every combination of the five flags, cycling through them."""
    combos = list(itertools.product([False, True], repeat=len(FLAGS)))
    return [dict(zip(FLAGS, combos[i % len(combos)]), content=c) for i, c in enumerate(contents)]


def add_to_both(hf, tm, specs):
    for spec in specs:
        flags = {k: v for k, v in spec.items() if k != "content"}
        h = tokenizers.AddedToken(spec["content"], **flags)
        t = tokenmill.AddedToken(spec["content"], **flags)
        if spec["special"]:
            assert tm.add_special_tokens([t]) == hf.add_special_tokens([h])
        else:
            assert tm.add_tokens([t]) == hf.add_tokens([h])


def sprinkle(lines, contents, seed):
    """Real lines with added-token contents inserted at random places, with and without
    surrounding spaces (so lstrip / rstrip / single_word all get exercised)."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split(" ")
        for _ in range(3):
            token = rng.choice(contents)
            glue = rng.choice(["", " ", "  ", "\t"])
            at = rng.randrange(len(words) + 1)
            words.insert(at, glue + token + rng.choice(["", " ", "x"]))
        out.append(" ".join(words))
    return out


def same(hf, tm, texts, context):
    for text in texts:
        h, t = hf.encode(text), tm.encode(text)
        assert (t.ids, t.tokens, t.offsets, t.word_ids) == (
            h.ids,
            h.tokens,
            h.offsets,
            h.word_ids,
        ), (context, text)
        for skip in (True, False):
            assert tm.decode(t.ids, skip_special_tokens=skip) == hf.decode(
                h.ids, skip_special_tokens=skip
            ), (context, text)


# Contents stay distinct after lowercasing: two `normalized` tokens with the same normalized
# text make `tokenizers` pick one at random (its trie is built in hash-map order); tokenmill
# picks the lowest id, deterministically.
OVERLAPPING = [
    "<a>",
    "<a><b>",
    "<b>",
    "ab",
    "abc",
    "bc",
    "[MASK]",
    "[MA",
    "SK]",
    "Holmes",
    "olm",
    "the",
    " the",
    "ing",
    "İ",
    "ﬁ",
]


@pytest.mark.parametrize("normalizer", ["none", "lowercase", "nfkc_lower"])
def test_every_flag_combination_and_overlaps(normalizer, corpus):
    js = gpt2_json(normalizer)
    hf, tm = tokenizers.Tokenizer.from_str(js), tokenmill.Tokenizer.from_str(js)
    specs = tokens_with_all_flags(OVERLAPPING * 2)
    add_to_both(hf, tm, specs)
    assert tm.get_vocab_size() == hf.get_vocab_size()
    assert tm.get_vocab() == hf.get_vocab()
    assert {i: repr(t) for i, t in tm.get_added_tokens_decoder().items()} == {
        i: repr(t) for i, t in hf.get_added_tokens_decoder().items()
    }
    assert tm.to_str() == hf.to_str()
    texts = sprinkle(corpus[:120], OVERLAPPING, seed=1) + [
        "<a><b><a>bc abc the theing The İİ ﬁﬁ",
        "  [MASK]  ",
        "[MA[MASK]SK]",
    ]
    same(hf, tm, texts, normalizer)
    for lib in (hf, tm):
        lib.encode_special_tokens = True
    same(hf, tm, texts[:40], normalizer + " encode_special_tokens")
    for lib in (hf, tm):
        lib.encode_special_tokens = False
    pairs = list(zip(texts[:20:2], texts[1:20:2]))
    for h, t in zip(hf.encode_batch(pairs), tm.encode_batch(pairs)):
        assert (t.ids, t.offsets, t.sequence_ids) == (h.ids, h.offsets, h.sequence_ids)
    # reloading keeps each token's last flags only (a content once special is no longer so)
    hf_reloaded = tokenizers.Tokenizer.from_str(hf.to_str())
    same(
        hf_reloaded,
        tokenmill.Tokenizer.from_str(hf.to_str()),
        texts[:30],
        normalizer + " reloaded from tokenizers' json",
    )


@pytest.mark.parametrize("normalizer", ["none", "lowercase"])
def test_thousands_of_added_tokens(normalizer, corpus):
    js = gpt2_json(normalizer)
    hf, tm = tokenizers.Tokenizer.from_str(js), tokenmill.Tokenizer.from_str(js)
    # one spelling per lowercased word (see OVERLAPPING)
    words = sorted(
        {w.lower(): w for line in corpus for w in re.findall(r"[A-Za-z]{3,}", line)}.values()
    )
    rng = random.Random(7)
    rng.shuffle(words)
    contents = words[:3000] + [f"<extra_{i}>" for i in range(1000)]
    specs = tokens_with_all_flags(contents)
    # in one call each, as a user adding a big list would
    for special in (False, True):
        group = [s for s in specs if s["special"] == special]
        h = [
            tokenizers.AddedToken(s["content"], **{k: v for k, v in s.items() if k != "content"})
            for s in group
        ]
        t = [
            tokenmill.AddedToken(s["content"], **{k: v for k, v in s.items() if k != "content"})
            for s in group
        ]
        if special:
            assert tm.add_special_tokens(t) == hf.add_special_tokens(h)
        else:
            assert tm.add_tokens(t) == hf.add_tokens(h)
    assert tm.get_vocab_size() == hf.get_vocab_size()
    assert tm.to_str() == hf.to_str()
    texts = sprinkle(corpus[200:400], [f"<extra_{i}>" for i in range(0, 1000, 37)], seed=3)
    same(hf, tm, texts, f"{normalizer} 4000 added tokens")
    batch_h = hf.encode_batch(texts[:50])
    batch_t = tm.encode_batch(texts[:50])
    assert [e.ids for e in batch_t] == [e.ids for e in batch_h]
