"""The BERT normalizer + pre-tokenizer fast path of `encode`, against Hugging Face `tokenizers`.

tokenmill encodes text under `BertNormalizer` + `BertPreTokenizer` word by word without its
general alignment machinery when the text is printable ASCII, and sends every other
whitespace-delimited segment through the general machinery alone. These tests check that the
result is exactly `tokenizers`' (ids, tokens, offsets, word ids) on every corpus file and on
adversarial strings, for every BertNormalizer option. The model is a small BPE that
`tokenizers` trains on a corpus sample with the same normalizer and pre-tokenizer (so that the
test does not depend on the WordPiece model), saved as tokenizer.json and loaded by both.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SHARED, corpus_files, documents, read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402

SAMPLE_BYTES = 12_000  # per corpus file

ADVERSARIAL = [
    "",
    " ",
    "Hello, World! THE end.",
    "  leading\tand trailing \r\n",
    "ctrl\x01inside, vertical\x0btab, form\x0cfeed, next\x85line, no\xa0break, "
    "ideographic\u3000space",
    "Café naïve ÉCOLE e\u0301 ﬁ İstanbul ǅ Ⅻ ß ΣΑΣ",
    "中文字 mixed中x 한국어 日本語テキスト",
    "\x00\ufffd a\x7fb «quoted» — dash … ellipsis ¿qué? ¡sí!",
    "x\u0300\u0301 a\u0334\u0301b \u0301start",
    "[SEP]glued[SEP] [CLS] x [MASK]y",
    "don't stop-believing: e-mail@example.com (1,234.56) #tag $5 100%",
    "🙂 emoji 👍🏽 and symbols ™ © ±",
]


def _train(tmp_path: Path, name: str, **options) -> Path:
    """A BPE tokenizer.json trained by `tokenizers` with BERT's normalizer and pre-tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers

    corpus = shared_path("corpora", "english_large", "gutenberg_en_large_part1.txt")
    multilingual = shared_path(
        "corpora", "multilingual", "fr", "fr_pg14155_flaubert_madame_bovary.txt"
    )
    lines = (read_sample(corpus, 150_000) + read_sample(multilingual, 50_000)).splitlines()
    t = Tokenizer(models.BPE(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer(**options)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=1500, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False
    )
    t.train_from_iterator(lines, trainer)
    t.post_processor = processors.BertProcessing(
        ("[SEP]", t.token_to_id("[SEP]")), ("[CLS]", t.token_to_id("[CLS]"))
    )
    path = tmp_path / f"{name}.json"
    t.save(str(path))
    return path


OPTIONS = {
    "uncased": {},
    "cased": {"lowercase": False},
    "raw": {
        "clean_text": False,
        "handle_chinese_chars": False,
        "strip_accents": False,
        "lowercase": False,
    },
    "accents_kept": {"strip_accents": False},
}


@pytest.fixture(scope="module", params=sorted(OPTIONS))
def pair(request, tmp_path_factory):
    path = _train(
        tmp_path_factory.mktemp("bert_fast_path"), request.param, **OPTIONS[request.param]
    )
    return tokenizers.Tokenizer.from_file(str(path)), tokenmill.Tokenizer.from_file(str(path))


def _assert_same(theirs, ours, texts):
    expected = theirs.encode_batch(texts)
    got = ours.encode_batch(texts)
    for text, e, g in zip(texts, expected, got):
        assert g.ids == e.ids, repr(text[:200])
        assert g.tokens == e.tokens, repr(text[:200])
        assert g.offsets == e.offsets, repr(text[:200])
        assert g.word_ids == e.word_ids, repr(text[:200])


def test_adversarial_strings(pair):
    _assert_same(*pair, ADVERSARIAL)


def test_every_corpus_file(pair):
    files = corpus_files()
    if not files:
        pytest.skip(f"needs the corpora under {SHARED / 'corpora'}, which are absent")
    for path in files:
        _assert_same(*pair, documents(read_sample(path, SAMPLE_BYTES)))


def test_ids_only_path(pair):
    theirs, ours = pair
    texts = ADVERSARIAL + documents(
        read_sample(shared_path("corpora", "english_large", "gutenberg_en_large_part2.txt"), 30_000)
    )
    flat, bounds = ours.encode_batch_ids(texts)
    flat = flat.tolist()
    for i, e in enumerate(theirs.encode_batch(texts)):
        assert flat[bounds[i] : bounds[i + 1]] == e.ids, repr(texts[i][:200])
