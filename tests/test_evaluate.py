"""tokenmill.evaluate and `tokenmill eval`: metrics hand-computed on toy tokenizers, Rényi
efficiency equal to the tokenization-scorer package's, unreachable tokens of real vocabularies
(byte-level and SentencePiece ▁ spellings), parity on the UDHR, and the HTML report: well-formed,
with no network reference, rendered by headless Chromium."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
from conftest import shared_path
from tokenmill import Tokenizer, models, pre_tokenizers
from tokenmill.cli import main
from tokenmill.evaluate import (
    Corpus,
    as_evaluated,
    evaluate,
    renyi_efficiency,
    unreachable_tokens,
    word_definition,
)

CATS = ["the cat sat", "the dog sat on the mat"]


def wordlevel() -> Tokenizer:
    vocab = {"[UNK]": 0, "the": 1, "cat": 2, "sat": 3, "on": 4, "mat": 5, "dog": 6}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens(["[UNK]"])
    return tok


def toy_bpe() -> Tokenizer:
    """ "abc" is in the vocabulary (merge a + bc) but "abc" encodes as ab + c: merge (a, b)
    comes first, and (ab, c) is no merge."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    tok = Tokenizer(models.BPE(vocab, [("a", "b"), ("b", "c"), ("a", "bc")]))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok


def test_wordlevel_metrics_by_hand():
    ev = evaluate({"words": wordlevel()}, {"cats": CATS})
    (r,) = ev.results
    assert (r.bytes, r.characters, r.tokens, r.words, r.documents) == (33, 33, 9, 9, 2)
    assert r.bytes_per_token == 33 / 9 and r.characters_per_token == 33 / 9
    assert r.fertility == 1.0 and r.split_share == 0.0
    assert r.vocabulary_used == 6 and r.utilization == 6 / 7
    assert (r.lengths.mean, r.lengths.median, r.lengths.max) == (4.5, 4.5, 6)
    (t,) = ev.tokenizers
    assert (t.vocab_size, t.special, t.checked, t.unreachable) == (7, 1, 6, 0)
    assert r.under_trained == 4  # cat, on, mat, dog: once each ([UNK] is special)


def test_bpe_metrics_and_unreachable_by_hand():
    ev = evaluate([toy_bpe()], [["ab c", "bc abc"]], rare=1)
    (r,) = ev.results
    # ab | c ; bc | ab c
    assert (r.bytes, r.tokens, r.words) == (10, 5, 4)
    assert r.bytes_per_token == 2.0
    assert r.fertility == 5 / 4
    assert r.split_share == 1 / 4  # "abc" alone takes two tokens
    assert r.vocabulary_used == 3 and r.utilization == 0.5
    # produced at most once: a, b (never), bc (once), abc (never)
    assert r.under_trained == 4
    (t,) = ev.tokenizers
    assert t.unreachable == 1 and t.checked == 6
    (u,) = t.unreachable_examples
    assert (u.id, u.token, u.encodes_as) == (5, "abc", [3, 2])
    assert t.longest[0] == (5, "abc", 3)


def test_renyi_efficiency_equals_tokenization_scorer():
    scorer = pytest.importorskip("tokenization_scorer", reason="pip install tokenization-scorer")
    tok = as_evaluated(toy_bpe())
    texts = ["ab c abc bc", "abc abc c", "a b c ab", "bc bc bc ab"] * 3 + ["c"]
    ids, offsets = tok.encode_flat(texts)
    lines = [" ".join(map(str, ids[a:b].tolist())) for a, b in zip(offsets[:-1], offsets[1:])]
    counts = np.bincount(ids.astype(np.int64))
    for power in (2.5, 3.0, 1.5):
        want = scorer.score(lines, metric="renyi", power=power)
        assert abs(renyi_efficiency(counts, power) - want) < 1e-9
    # and on a real vocabulary and text, through evaluate
    ev = evaluate({"bpe": toy_bpe()}, {"t": texts})
    assert (
        abs(ev.results[0].renyi_efficiency - scorer.score(lines, metric="renyi", power=2.5)) < 1e-9
    )
    assert math.isnan(renyi_efficiency(np.array([0, 5, 0])))


def test_word_definitions_are_stated_per_language():
    assert "WordTokenizer('en')" in word_definition("en")
    assert "Chinese segmenter" in word_definition("cmn_hans")
    assert "Japanese segmenter" in word_definition("jpn")
    assert "characters" in word_definition("tha")


def test_corpora_from_files_globs_and_texts(tmp_path):
    (tmp_path / "a.txt").write_text("the cat sat\n\nthe dog sat on the mat\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("the mat\n", encoding="utf-8")
    ev = evaluate([wordlevel()], [str(tmp_path / "*.txt"), CATS, Corpus("c", ["on"], "en")])
    assert [c["name"] for c in ev.corpora] == [str(tmp_path / "*.txt"), "texts2", "c"]
    assert [r.documents for r in ev.results] == [3, 2, 1]
    with pytest.raises(TypeError, match="list of texts"):
        evaluate([wordlevel()], [[1, 2]])
    with pytest.raises(ValueError, match="nothing to evaluate"):
        evaluate([wordlevel()])


def test_unreachable_byte_level_and_sentencepiece_spellings():
    """Real vocabularies: GPT-2 as tiktoken ranks and as a byte-level tokenizer.json (Ġ
    spellings, parts of characters) and Mistral's SentencePiece model (▁ spellings, the dummy
    prefix) produce every entry from its own text; o200k_base has a few entries its split
    pattern never leaves whole."""
    from tokenmill.cli import formats

    gpt2 = formats.load(str(shared_path("pretrained", "whisper", "gpt2.tiktoken")))
    assert unreachable_tokens(gpt2) == ([], 50256)
    assert unreachable_tokens(gpt2.to_tokenizer()) == ([], 50256)
    mistral = shared_path("pretrained", "mistral", "tokenizer.model.v1")
    bad, checked = unreachable_tokens(str(mistral))
    assert (bad, checked) == ([], 32000 - 259)  # 3 control/unknown and 256 byte pieces left out
    bad, checked = unreachable_tokens(
        str(shared_path("pretrained", "o200k_base", "o200k_base.tiktoken"))
    )
    assert 0 < len(bad) < 100 and checked == 199998
    assert " I'" in {u.token for u in bad}


UDHR_LANGUAGES = ["eng", "deu", "rus", "hin", "amh", "cmn_hans", "tha"]


def udhr_eval_tokenizers() -> dict:
    gpt2 = shared_path("pretrained", "whisper", "gpt2.tiktoken")
    cl100k = shared_path("pretrained", "cl100k_base", "cl100k_base.tiktoken")
    return {"gpt2": str(gpt2), "cl100k": str(cl100k), "toy": toy_bpe()}


@pytest.fixture(scope="module")
def udhr_eval():
    folder = shared_path("corpora", "udhr")
    return evaluate(
        udhr_eval_tokenizers(), {"cats": CATS}, parallel=folder, languages=UDHR_LANGUAGES
    )


def test_udhr_parity(udhr_eval):
    p = udhr_eval.parity
    by = {r.language: r for r in p.rows}
    assert sorted(by) == sorted(UDHR_LANGUAGES)
    assert by["eng"].premium == {"gpt2": 1.0, "cl100k": 1.0, "toy": 1.0}
    assert [by[x].script for x in ("eng", "rus", "hin", "amh", "cmn_hans", "tha")] == [
        "Latin", "Cyrillic", "Devanagari", "Ethiopic", "Han", "Thai",
    ]  # fmt: skip
    for name in ("gpt2", "cl100k"):
        for lang in ("hin", "amh", "tha"):
            assert by[lang].premium[name] > 2.5, (name, lang)
        assert by["deu"].premium[name] > 1.0
    assert by["hin"].premium["gpt2"] > by["hin"].premium["cl100k"]
    premiums = [r.premium["gpt2"] for r in p.rows]
    assert premiums == sorted(premiums, reverse=True)
    # the token view: a character split over several byte-level tokens is one piece
    hindi = next(s for s in udhr_eval.samples if s.label == "hin")
    for name in ("gpt2", "cl100k"):
        pieces = hindi.tokens[name]
        assert "".join(text for _, text in pieces) == hindi.text
        assert any(len(ids) > 1 for ids, _ in pieces)
        ids = [i for group, _ in pieces for i in group]
        assert (
            ids == as_evaluated(udhr_eval_tokenizers()[name]).encode_flat([hindi.text])[0].tolist()
        )
    table = udhr_eval.table()
    assert "Parity on 7 languages" in table and "Devanagari" in table


class _Balanced(HTMLParser):
    VOID = {"meta", "br", "img", "hr", "input", "link", "col", "area", "base", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def test_html_report_well_formed_offline_and_rendered(udhr_eval, tmp_path):
    page = udhr_eval.to_html()
    checker = _Balanced()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    svgs = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
    assert len(svgs) >= 2 + 3  # length and rank plots, one parity chart per tokenizer
    for svg in svgs:
        ET.fromstring(svg)
    # no resource from the network: no URL at all, no import, no script
    assert not re.search(r"https?:|//[a-z]|@import|<script|<link|<img", page, flags=re.I)
    assert 'title="id ' in page and "Token view" in page
    path = tmp_path / "report.html"
    udhr_eval.save_html(path)
    assert path.read_text(encoding="utf-8") == page

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium binary (Debian package chromium) to render the report")
    # no network: in a network namespace of its own where unshare works, and proxied to nowhere
    isolate = ["unshare", "-n"] if _unshare_works() else []
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--proxy-server=127.0.0.1:9",
        "--window-size=1200,2400",
    ]
    shot = tmp_path / "report.png"
    done = subprocess.run(
        [*isolate, browser, *flags, f"--screenshot={shot}", path.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000, done.stderr[-2000:]
    dom = subprocess.run(
        [*isolate, browser, *flags, "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    assert dom.count("<svg") == len(svgs)
    assert "Parity across 7 languages" in dom


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


def test_json_round_trips(udhr_eval):
    data = json.loads(udhr_eval.to_json())
    assert data["parity"]["reference"] == "eng"
    assert {r["corpus"] for r in data["results"]} == {"cats"}
    assert data["tokenizers"][2]["unreachable_examples"][0]["encodes_as"] == [3, 2]


def test_cli_eval(tmp_path, capsys):
    toy = tmp_path / "toy.json"
    toy_bpe().save(str(toy))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("ab c\nbc abc\n", encoding="utf-8")
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    code = main(
        ["eval", str(toy), "--corpus", str(corpus), "--json", str(out_json), "--html",
         str(out_html)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "bytes/tok" in out and "1 of 6" in out
    assert json.loads(out_json.read_text())["results"][0]["tokens"] == 5
    assert out_html.read_text().startswith("<!DOCTYPE html>")
    assert main(["eval", str(tmp_path / "missing.json"), "--corpus", str(corpus)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.json: no such file" in err
    assert main(["eval", str(toy)]) == 1
    assert "nothing to evaluate on" in capsys.readouterr().err
    assert main(["eval", str(toy), "--corpus", str(corpus), "--languages", "eng"]) == 1
    assert "--languages applies to --udhr" in capsys.readouterr().err
