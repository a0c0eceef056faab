"""Encoding alignment: offsets, word ids, sequence ids and every lookup (token_to_chars /
token_to_word / token_to_sequence, char_to_token / char_to_word, word_to_tokens /
word_to_chars, with sequence_index for pairs) checked against `tokenizers` on real multilingual
text and on strings whose normalization changes length (NFKC ligatures, "İ" lowercasing to two
chars, StripAccents, Hangul decomposition, ...); Encoding.merge, set_sequence_id and pickling."""

from __future__ import annotations

import pickle

import pytest
from conftest import gpt2_model, read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

ADVERSARIAL = [
    "İstanbul İİ iİi",
    "ﬁnancial ﬀ oﬃce ﬄ",
    "Å Ω ① ② ⑳ ㎏ ™ ½",
    "ǅemal ǈ ß ŉ ẞ",
    "e\u0301te\u0301 cafe\u0301 n\u0303o",
    "한국어 텍스트 각",
    "ﾊﾝｶｸ ｶﾀｶﾅ ＡＢＣ１２３",
    "👩‍👩‍👧‍👦 family 🇫🇷 flags",
    "ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ",
    "  leading and trailing  ",
    "",
]

NORMALIZERS = {
    "none": lambda n: None,
    "nfkc": lambda n: n.NFKC(),
    "nfkd": lambda n: n.NFKD(),
    "lowercase": lambda n: n.Lowercase(),
    "nfd_strip_accents": lambda n: n.Sequence([n.NFD(), n.StripAccents()]),
    "nfkd_strip_lower": lambda n: n.Sequence([n.NFKD(), n.StripAccents(), n.Lowercase()]),
    "bert": lambda n: n.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True
    ),
    "replace_prepend_strip": lambda n: n.Sequence(
        [n.Strip(), n.Replace("ﬁ", "fi"), n.Prepend("▁")]
    ),
}


@pytest.fixture(scope="module")
def gpt2_json():
    hf = tokenizers.Tokenizer(gpt2_model(tokenizers))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Whitespace(),
            tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.post_processor = tokenizers.processors.TemplateProcessing(
        single="<|endoftext|> $A <|endoftext|>",
        pair="<|endoftext|> $A <|endoftext|> $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", 50256)],
    )
    return hf.to_str()


@pytest.fixture(scope="module")
def texts():
    out = list(ADVERSARIAL)
    for lang, name in [
        ("de", "de_pg22367_kafka_die_verwandlung.txt"),
        ("fr", "fr_pg14155_flaubert_madame_bovary.txt"),
        ("pl", "pl_pg31536_mickiewicz_pan_tadeusz_t1.txt"),
        ("ru", "ru_ruslit_tolstoy_anna_karenina.txt"),
        ("ar", "ar_ud_pud_test_text.txt"),
        ("hi", "hi_ud_pud_test_text.txt"),
        ("ja", "ja_aozora_soseki_kokoro.txt"),
        ("zh", "zh_debian_fortunes-zh_2.98.txt"),
        ("eo", "eo_pg8224_zamenhof_fundamenta_krestomatio_unicode.txt"),
    ]:
        sample = read_sample(shared_path("corpora", "multilingual", lang, name), 60_000)
        lines = [line for line in sample.splitlines() if line.strip()]
        out += lines[len(lines) // 3 :: max(1, len(lines) // 5)][:5]
    return out


def pair_of(gpt2_json, normalizer):
    hf = tokenizers.Tokenizer.from_str(gpt2_json)
    hf.normalizer = NORMALIZERS[normalizer](tokenizers.normalizers)
    return hf, tokenmill.Tokenizer.from_str(hf.to_str())


def lookups(e, text_lengths):
    """Every alignment lookup an Encoding answers, over all positions of each sequence."""
    n = len(e)
    words = [w for w in e.word_ids if w is not None]
    max_word = max(words) + 2 if words else 2
    out = {
        "fields": (
            e.ids,
            e.tokens,
            e.offsets,
            e.word_ids,
            e.sequence_ids,
            e.type_ids,
            e.special_tokens_mask,
            e.n_sequences,
        ),
        "token": [
            (e.token_to_chars(i), e.token_to_word(i), e.token_to_sequence(i)) for i in range(n + 2)
        ],
    }
    for seq, length in enumerate(text_lengths):
        out[f"char{seq}"] = [
            (e.char_to_token(c, seq), e.char_to_word(c, seq)) for c in range(length + 2)
        ]
        out[f"word{seq}"] = [
            (e.word_to_tokens(w, seq), e.word_to_chars(w, seq)) for w in range(max_word)
        ]
    return out


@pytest.mark.parametrize("normalizer", sorted(NORMALIZERS))
def test_offsets_and_lookups_match_tokenizers(normalizer, gpt2_json, texts):
    hf, tm = pair_of(gpt2_json, normalizer)
    for text in texts:
        h, t = hf.encode(text), tm.encode(text)
        assert lookups(t, [len(text)]) == lookups(h, [len(text)]), (normalizer, text)
    for first, second in zip(texts[::3], texts[1::3]):
        h, t = hf.encode(first, second), tm.encode(first, second)
        assert lookups(t, [len(first), len(second)]) == lookups(h, [len(first), len(second)]), (
            normalizer,
            first,
            second,
        )


@pytest.mark.parametrize("normalizer", ["nfkc", "nfkd_strip_lower"])
def test_pretokenized_and_batch_alignment(normalizer, gpt2_json, texts):
    hf, tm = pair_of(gpt2_json, normalizer)
    words = [t.split() for t in texts if t.split()]
    for a, b in zip(words[::2], words[1::2]):
        h = hf.encode(a, b, is_pretokenized=True)
        t = tm.encode(a, b, is_pretokenized=True)
        longest = max(len(w) for w in a + b)
        assert lookups(t, [longest, longest]) == lookups(h, [longest, longest])
    batch = [(a, b) for a, b in zip(texts[::2], texts[1::2])]
    for h, t in zip(hf.encode_batch(batch), tm.encode_batch(batch)):
        assert lookups(t, [200, 200]) == lookups(h, [200, 200])


def test_merge_set_sequence_id_and_pickle(gpt2_json, texts):
    hf, tm = pair_of(gpt2_json, "nfkc")
    chunks = texts[11:15]
    for growing in (True, False):
        h = tokenizers.Encoding.merge([hf.encode(c) for c in chunks], growing_offsets=growing)
        t = tokenmill.Encoding.merge([tm.encode(c) for c in chunks], growing_offsets=growing)
        assert lookups(t, [300]) == lookups(h, [300])
    hf.enable_truncation(6, stride=2)
    tm.enable_truncation(6, stride=2)
    h = tokenizers.Encoding.merge([hf.encode(chunks[0]), hf.encode(chunks[1])])
    t = tokenmill.Encoding.merge([tm.encode(chunks[0]), tm.encode(chunks[1])])
    assert [o.ids for o in t.overflowing] == [o.ids for o in h.overflowing]
    assert [o.offsets for o in t.overflowing] == [o.offsets for o in h.overflowing]
    # without a post-processor there are no sequence ranges yet, so set_sequence_id(1) is the
    # only one (on a processed encoding it would overlap sequence 0's range, which tokenizers
    # resolves in hash-map order, at random, and tokenmill to the lowest id)
    hf.post_processor = None
    tm.post_processor = None
    h, t = hf.encode(chunks[2]), tm.encode(chunks[2])
    h.set_sequence_id(1)
    t.set_sequence_id(1)
    assert lookups(t, [100, 100]) == lookups(h, [100, 100])
    back = pickle.loads(pickle.dumps(t))
    assert lookups(back, [100, 100]) == lookups(t, [100, 100])
    assert [o.ids for o in back.overflowing] == [o.ids for o in t.overflowing]
    assert repr(t) == repr(h) and len(t) == len(h)
    empty = tokenmill.Encoding()
    assert len(empty) == 0 and empty.n_sequences == 1 and empty.char_to_token(0) is None


def test_out_of_range_lookups_are_none_not_errors(gpt2_json):
    hf, tm = pair_of(gpt2_json, "none")
    e, h = tm.encode("hello world", "pair"), hf.encode("hello world", "pair")
    assert e.token_to_chars(10**9) is None
    assert e.char_to_token(10**9, 1) is None
    assert e.word_to_tokens(10**6, 0) is None
    # a sequence index the encoding does not have means the whole encoding, as in tokenizers
    assert [e.char_to_token(c, 7) for c in range(12)] == [h.char_to_token(c, 7) for c in range(12)]
    with pytest.raises(OverflowError):
        e.token_to_chars(-1)
