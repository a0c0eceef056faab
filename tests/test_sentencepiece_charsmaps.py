"""The precompiled charsmaps tokenmill's SentencePieceTrainer writes, for every built-in
normalization rule and for normalization_rule_tsv: the models load in `sentencepiece` (whose
loader validates the double array) and normalize and encode there exactly as in tokenmill, and
exactly as a model sentencepiece itself trained with the same rule."""

from __future__ import annotations

import io
import unicodedata

import pytest
from conftest import read_sample, shared_path

spm = pytest.importorskip("sentencepiece")
import tokenmill.sentencepiece as tsp  # noqa: E402

RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"]
SAMPLES = [
    "Ｈｅｌｌｏ　Ｗｏｒｌｄ！ １２３",
    "ﬁ ﬂ ½ ² ① ㍿ ㌀ Ⅻ ℌ",
    "  leading   and\ttrailing  \u3000 ",
    "İstanbul ıi ǅ Straße ΣΑΣ",
    "e\u0301 \u00e9 Å Å",
    "ｶﾀｶﾅ ﾊﾟﾋﾟ",
    "\u200b\u200d\ufeff x \u00a0y",
    "한국어 텍스트",
    "Привет, мир!",
    "مرحبا",
    "नमस्ते",
    "emoji 😀🎉 👨‍👩‍👧‍👦",
    "\x01\x7f ctrl",
    "",
]


def multilingual_lines() -> list[str]:
    lines = list(SAMPLES)
    root = shared_path("corpora", "multilingual")
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".md")[:12]:
        lines += [line for line in read_sample(path, 6_000).splitlines() if line.strip()][:25]
    return lines


def train_char_model(library, rule: str | None = None, **kwargs) -> bytes:
    """A small char model (fast to train) with the given normalization rule."""
    sentences = [s for s in SAMPLES if s.strip()] * 3
    buffer = io.BytesIO()
    if rule is not None:
        kwargs["normalization_rule_name"] = rule
    if library is spm:
        kwargs["minloglevel"] = 2
    library.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=buffer,
        model_type="char",
        vocab_size=200,
        hard_vocab_limit=False,
        **kwargs,
    )
    return buffer.getvalue()


@pytest.mark.parametrize("rule", RULES)
def test_builtin_rule_charsmaps_load_and_normalize_as_sentencepiece(rule):
    ours_model = train_char_model(tsp, rule)
    in_spm = spm.SentencePieceProcessor(
        model_proto=ours_model
    )  # sentencepiece accepts the charsmap
    in_tm = tsp.SentencePieceProcessor(model_proto=ours_model)
    spm_own_model = train_char_model(spm, rule)
    spm_own = spm.SentencePieceProcessor(model_proto=spm_own_model)
    # Densely packed, and common suffixes stored once as in sentencepiece's Darts-clone: about
    # sentencepiece's size (it was 48 times that before the packing, 8 times before the sharing).
    assert len(ours_model) <= 1.1 * len(spm_own_model) + 1_000, (
        rule,
        len(ours_model),
        len(spm_own_model),
    )
    lines = multilingual_lines()
    for text in lines:
        assert in_tm.normalize(text) == in_spm.normalize(text), (rule, text)
    # The same normalization as sentencepiece's own tables on precomposed text (tokenmill's
    # rules are per code point, so decomposed sequences such as "e\u0301" are a known gap).
    for text in lines:
        if unicodedata.is_normalized("NFC", text):
            assert in_tm.normalize(text) == spm_own.normalize(text), (rule, text)
    assert in_tm.encode(lines) == in_spm.encode(lines)
    assert in_tm.encode(lines, out_type=str) == in_spm.encode(lines, out_type=str)


def test_normalization_rule_tsv(tmp_path):
    tsv = tmp_path / "rules.tsv"
    # source code points <TAB> target code points (sentencepiece's format); a many-to-one rule,
    # a deletion-like rule (to a space) and a longer source than target.
    tsv.write_text("41\t61\n42 43\t78 79 7A\nFF21\t41\n3000\t20\n66 69\tFB01\n", encoding="utf-8")
    ours_model = train_char_model(tsp, normalization_rule_tsv=str(tsv))
    in_spm = spm.SentencePieceProcessor(model_proto=ours_model)
    in_tm = tsp.SentencePieceProcessor(model_proto=ours_model)
    spm_own = spm.SentencePieceProcessor(
        model_proto=train_char_model(spm, normalization_rule_tsv=str(tsv))
    )
    for text in ["ABC BC Ａ\u3000fi fix", "plain text", "A" * 50, ""] + SAMPLES:
        assert in_tm.normalize(text) == in_spm.normalize(text) == spm_own.normalize(text), text
