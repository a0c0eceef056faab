"""tokenmill.words: word tokenizer, sentence splitter, char n-grams, evaluate.

Differential checks against NLTK (PTB tokenization, Punkt learning, UD F1) on real text, the
offsets invariant on every corpus sample and on adversarial input, and evaluate's handling of
gold files (multi-word tokens, malformed files).
"""

from __future__ import annotations

import pickle
import random

import pytest
from conftest import random_strings, read_sample, shared_path
from tokenmill import FormatError
from tokenmill.words import (
    LANGUAGES,
    SentenceSplitter,
    WordTokenizer,
    _spans_of,  # the aligner evaluate uses, for NLTK's string tokens
    char_ngrams,
    evaluate,
)

nltk_tokenize = pytest.importorskip(
    "nltk.tokenize", reason="nltk is a test dependency (pyproject test extra)"
)

# (corpus file, language) pairs: every running-text sample in the shared corpora.
CORPORA = [
    (("gutenberg", "pg244_en_a_study_in_scarlet.txt"), "en"),
    (("gutenberg", "en_novels", "pg4300_en_ulysses.txt"), "en"),
    (("gutenberg", "pg34811_de_buddenbrooks.txt"), "de"),
    (("multilingual", "de", "de_debian_fortunes-de_0.35-1.txt"), "de"),
    (("gutenberg", "pg13951_fr_les_trois_mousquetaires.txt"), "fr"),
    (("multilingual", "fr", "fr_pg14155_flaubert_madame_bovary.txt"), "fr"),
    (("multilingual", "pl", "pl_debian_fortunes-pl_0.0.20130525-3.txt"), "pl"),
    (("gutenberg", "pg27729_pl_mickiewicz_bajki.txt"), "pl"),
    (("multilingual", "ru", "ru_ruslit_tolstoy_anna_karenina.txt"), "ru"),
    (("multilingual", "zh", "zh_debian_fortunes-zh_2.98.txt"), "zh"),
    (("multilingual", "ja", "ja_aozora_soseki_kokoro.txt"), "ja"),
    (("multilingual", "ar", "ar_ud_pud_test_text.txt"), "ar"),
    (("multilingual", "hi", "hi_ltrc_premchand_sevasadan.txt"), "hi"),
    (("multilingual", "eo", "eo_pg8224_zamenhof_fundamenta_krestomatio_unicode.txt"), "eo"),
    (("english_large", "gutenberg_en_large_part2.txt"), "en"),
]

UD_TREEBANKS = {
    "en": "UD_English-EWT",
    "de": "UD_German-GSD",
    "fr": "UD_French-GSD",
    "pl": "UD_Polish-PDB",
    "pl-lfg": "UD_Polish-LFG",
    "ar": "UD_Arabic-PUD",
    "hi": "UD_Hindi-PUD",
}


def assert_covers_text(text, tokens, replaced=("``", "''")):
    """Tokens in order, non-empty, each non-whitespace char covered exactly once, gaps are
    spaces."""
    pos = 0
    for tok, start, end in tokens:
        assert pos <= start < end <= len(text), (tok, start, end, pos)
        gap = text[pos:start]
        assert gap == "" or gap.isspace(), f"uncovered {gap!r} before {start}"
        assert tok == text[start:end] or tok in replaced, (tok, text[start:end])
        assert not text[start:end].isspace()
        pos = end
    rest = text[pos:]
    assert rest == "" or rest.isspace(), f"uncovered tail {rest[:40]!r}"


@pytest.mark.parametrize("parts,lang", CORPORA, ids=[p[-1] for p, _ in CORPORA])
def test_offsets_cover_every_corpus(parts, lang):
    text = read_sample(shared_path("corpora", *parts), 300_000)
    for tok in (
        WordTokenizer(lang),
        WordTokenizer(lang, split_clitics=False),
        WordTokenizer("en", penn_treebank=True),
    ):
        tokens = tok.tokenize_with_offsets(text)
        assert tokens
        assert_covers_text(text, tokens)
        assert [t for t, _, _ in tokens] == tok.tokenize(text)


def adversarial_texts(huge=True):
    rng = random.Random(1234)
    yield "".join(chr(c) for c in range(0, 0x250))
    yield "\x00\x01\x1b[31mred\x1b[0m\x7f\u200b\u200d\u2060\ufeff\u00ad"
    # lone surrogates (and a valid pair written as two)
    yield "a\ud800b \udfff \ud83d\ude00 x\udc00"
    if huge:
        yield "x" * 10_000_000  # 10 MB without a space
    yield ("ab.cd-ef'gh,12:30/" * 60_000)  # 1 MB without a space, full of rule triggers
    yield "." * 200_000 + "-" * 200_000 + "'" * 100_000 + "!?" * 50_000
    yield "https://" + "a." * 100_000 + " #" + "b" * 100_000 + " @" * 1000
    yield "mixed: русский 中文日本語 العربية हिन्दी ελληνικά 👩🏽‍💻🇵🇱🏳️‍🌈 e\u0301\u0301"
    ranges = [(0, 0x7F), (0x80, 0x2FFF), (0xD800, 0xDFFF), (0x1F300, 0x1FAFF), (0, 0x10FFFF)]
    yield from random_strings(rng, 300, 60, ranges)


@pytest.mark.parametrize(
    "lang,penn_treebank", [("en", False), ("en", True), ("fr", False), ("pl", False), ("xx", False)]
)
def test_offsets_cover_adversarial_input(lang, penn_treebank):
    tok = WordTokenizer(lang, penn_treebank=penn_treebank)
    for text in adversarial_texts(huge=lang == "en"):
        tokens = tok.tokenize_with_offsets(text)
        assert_covers_text(text, tokens)
        assert [t for t, _, _ in tokens] == tok.tokenize(text)


def test_sentence_splitter_survives_adversarial_input():
    splitter = SentenceSplitter("en")
    for text in adversarial_texts():
        spans = splitter.spans(text)
        assert spans == sorted(spans)
        assert all(0 <= s <= e <= len(text) for s, e in spans)
        assert splitter.split(text) == [text[s:e] for s, e in spans]
        covered = "".join(text[s:e] for s, e in spans)
        assert "".join(text.split()) == "".join(covered.split())


@pytest.mark.parametrize("parts,lang", CORPORA[::3], ids=[p[-1] for p, _ in CORPORA[::3]])
def test_long_texts_blockwise_and_spans_equal_one_pass(parts, lang):
    """A long text is tokenized in 64 kB blocks cut at spaces; the batch form tokenizes each text
    in one pass: both must agree, and tokenize_spans must give the same offsets."""
    import numpy as np

    text = read_sample(shared_path("corpora", *parts), 300_000)
    for tok in (WordTokenizer(lang), WordTokenizer("en", penn_treebank=True)):
        tokens = tok.tokenize_with_offsets(text)
        assert tokens == tok.tokenize_with_offsets_batch([text])[0]
        assert tok.tokenize(text) == tok.tokenize_batch([text])[0]
        starts, ends = tok.tokenize_spans(text)
        assert starts.dtype == np.int64 and ends.dtype == np.int64
        assert list(zip(starts.tolist(), ends.tolist())) == [(s, e) for _, s, e in tokens]


def test_spans_of_adversarial_input_match_offsets():
    tok = WordTokenizer("en")
    for text in adversarial_texts(huge=False):
        starts, ends = tok.tokenize_spans(text)
        assert list(zip(starts.tolist(), ends.tolist())) == [
            (s, e) for _, s, e in tok.tokenize_with_offsets(text)
        ]


def test_batch_forms_equal_single_calls():
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 200_000
    )
    paras = [p for p in text.split("\n\n") if p.strip()][:300] + ["a\ud800b"]
    tok = WordTokenizer("en")
    assert tok.tokenize_batch(paras) == [tok.tokenize(p) for p in paras]
    assert tok.tokenize_with_offsets_batch(paras) == [tok.tokenize_with_offsets(p) for p in paras]
    splitter = SentenceSplitter("en")
    assert splitter.split_batch(paras) == [splitter.split(p) for p in paras]
    assert splitter.spans_batch(paras) == [splitter.spans(p) for p in paras]


def test_char_ngrams_example():
    assert char_ngrams("teach multtimedia", 3) == [
        "#tea",
        "eac",
        "ach",
        "#mul",
        "ult",
        "ltt",
        "tti",
        "tim",
        "ime",
        "med",
        "edi",
        "dia",
    ]
    grams = char_ngrams("Zażółć gęślą", 2, mark="^")
    assert grams[0] == "^Za" and "^gę" in grams and all(len(g.lstrip("^")) == 2 for g in grams)


def test_rules_from_the_issue():
    en = WordTokenizer("en")
    abbreviations = ["the", "U.K.", "and", "Dr.", "Mrs.", "e.g.", "w.r.o.n.g."]
    assert en.tokenize("the U.K. and Dr. Mrs. e.g. w.r.o.n.g.") == abbreviations
    unsplit = ["can't", "parents", "'", "Watson's"]
    assert WordTokenizer("en", split_clitics=False).tokenize("can't parents' Watson's") == unsplit
    elided = ["l'", "hôtel", "d'", "Artagnan", "jusqu'", "à"]
    assert WordTokenizer("fr").tokenize("l'hôtel d'Artagnan jusqu'à") == elided
    quotes = ["„", "Ja", "“", "»", "nein", "«", "«", "oui", "»", "“", "yes", "”"]
    starts = [0, 1, 3, 5, 6, 10, 12, 14, 18, 20, 21, 24]
    ends = [1, 3, 4, 6, 10, 11, 13, 17, 19, 21, 24, 25]
    assert en.tokenize_with_offsets("„Ja“ »nein« « oui » “yes”") == list(zip(quotes, starts, ends))
    custom = WordTokenizer("en", abbreviations=["approx", "Fig"])
    assert custom.tokenize("approx. 3 in Fig. 2") == ["approx.", "3", "in", "Fig.", "2"]
    assert set(LANGUAGES) >= {"en", "de", "fr", "pl", "es", "it", "nl", "pt", "ru"}


def test_pickle_roundtrip():
    tok = WordTokenizer("fr", penn_treebank=False, abbreviations=["bzw"])
    clone = pickle.loads(pickle.dumps(tok))
    assert clone.rules_json() == tok.rules_json()
    assert repr(clone) == repr(tok)
    splitter = SentenceSplitter("de")
    assert pickle.loads(pickle.dumps(splitter)).to_json() == splitter.to_json()


def english_sentences(max_bytes=400_000):
    texts = [
        read_sample(shared_path("corpora", "gutenberg", "en_novels", name), max_bytes // 2)
        for name in (
            "pg1661_en_adventures_of_sherlock_holmes.txt",
            "pg1342_en_pride_and_prejudice.txt",
        )
    ]
    splitter = SentenceSplitter("en")
    sentences = []
    for text in texts:
        for para in text.split("\n\n"):
            sentences.extend(splitter.split(" ".join(para.split())))
    return [s for s in sentences if s]


def span_agreement(reference_tokens, ours, sentences):
    """F1 of our token spans against the reference's, over all sentences."""
    correct = ref_total = our_total = 0
    for sentence, ref, mine in zip(sentences, reference_tokens, ours):
        ref_spans = set(_spans_of(sentence, ref))
        our_spans = {(s, e) for _, s, e in mine}
        correct += len(ref_spans & our_spans)
        ref_total += len(ref_spans)
        our_total += len(our_spans)
    p, r = correct / our_total, correct / ref_total
    return 2 * p * r / (p + r)


@pytest.mark.parametrize("reference", ["NLTKWordTokenizer", "TreebankWordTokenizer"])
def test_penn_treebank_mode_agrees_with_nltk(reference):
    sentences = english_sentences()
    if reference == "TreebankWordTokenizer":
        # It treats only ASCII quotes as quotes and only the text-final period as a sentence end.
        sentences = [s for s in sentences if s.isascii()]
    ref = getattr(nltk_tokenize, reference)()
    ptb = WordTokenizer("en", penn_treebank=True)
    reference_tokens = [ref.tokenize(s) for s in sentences]
    ours = ptb.tokenize_with_offsets_batch(sentences)
    identical = sum(r == [t for t, _, _ in o] for r, o in zip(reference_tokens, ours)) / len(
        sentences
    )
    agreement = span_agreement(reference_tokens, ours, sentences)
    # PTB spellings: our `` and '' must sit where NLTK puts them.
    quotes_ref = sum(t in ("``", "''") for r in reference_tokens for t in r)
    quotes_ours = sum(t in ("``", "''") for o in ours for t, _, _ in o)
    assert agreement >= 0.985, (reference, agreement, identical)
    assert identical >= 0.75, (reference, agreement, identical)
    assert abs(quotes_ref - quotes_ours) <= 0.02 * max(quotes_ref, 1)


def nltk_span_tokenizers():
    return {
        name: getattr(nltk_tokenize, name)().tokenize
        for name in ("TreebankWordTokenizer", "NLTKWordTokenizer")
    }


@pytest.mark.parametrize("key", list(UD_TREEBANKS))
def test_ud_f1_at_least_nltk(key):
    lang = key.split("-")[0]
    files = sorted(shared_path("corpora", "ud", UD_TREEBANKS[key]).glob("*.conllu"))
    ours = evaluate(WordTokenizer(lang), files)
    assert ours.sentences > 400 and ours.gold > 9_000
    for name, fn in nltk_span_tokenizers().items():
        theirs = evaluate(fn, files)
        assert ours.f1 >= theirs.f1, (key, name, ours, theirs)


def test_evaluate_gold_against_itself_scores_one(tmp_path):
    conllu = shared_path("corpora", "ud", "UD_English-EWT", "en_ewt-ud-test.conllu")
    # A "tokenizer" that returns the gold surface tokens must score exactly 1.
    gold_tokens = {}
    text, tokens, skip_until = None, [], 0
    for line in conllu.read_text(encoding="utf-8").splitlines() + [""]:
        if line.startswith("# text ="):
            text = line.split("=", 1)[1].strip()
        elif not line.strip():
            if text is not None:
                gold_tokens[text] = tokens
            text, tokens, skip_until = None, [], 0
        elif not line.startswith("#"):
            cols = line.split("\t")
            if "." in cols[0]:
                continue
            if "-" in cols[0]:
                skip_until = int(cols[0].split("-")[1])
                tokens.append(cols[1])
            elif int(cols[0]) > skip_until:
                tokens.append(cols[1])
    scores = evaluate(lambda t: gold_tokens[t], conllu)
    assert (scores.precision, scores.recall, scores.f1) == (1.0, 1.0, 1.0)

    sighan = shared_path("corpora", "sighan2005", "pku_test_gold.utf8")
    lines = [
        line.split() for line in sighan.read_text(encoding="utf-8").splitlines() if line.split()
    ]
    by_text = {"".join(words): words for words in lines}
    assert evaluate(lambda t: by_text[t], sighan, format="sighan").f1 == 1.0
    # One token per character: recall is the share of one-character gold words, exactly.
    chars = evaluate(lambda t: list(t), sighan, format="sighan")
    single = sum(len(w) == 1 for words in lines for w in words)
    assert chars.correct == single and chars.gold == sum(map(len, lines))


def test_evaluate_accepts_either_segmentation_of_a_multiword_token(tmp_path):
    path = tmp_path / "mwt.conllu"
    path.write_text(
        "# text = I don't know.\n"
        "1\tI\tI\tPRON\t_\t_\t0\troot\t_\t_\n"
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tdo\tdo\tAUX\t_\t_\t0\troot\t_\t_\n"
        "3\tn't\tnot\tPART\t_\t_\t0\troot\t_\t_\n"
        "4\tknow\tknow\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
        "5\t.\t.\tPUNCT\t_\t_\t0\troot\t_\t_\n\n",
        encoding="utf-8",
    )
    whole = evaluate(lambda t: ["I", "don't", "know", "."], path)
    split = evaluate(lambda t: ["I", "do", "n't", "know", "."], path)
    wrong = evaluate(lambda t: ["I", "don", "'t", "know", "."], path)
    assert whole.f1 == 1.0 and split.f1 == 1.0 and wrong.f1 < 1.0


@pytest.mark.parametrize(
    "content,line",
    [
        ("# text = a b\n1\ta\n", 2),
        ("# text = a b\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tc\tc\tX\t_\t_\t0\troot\t_\t_\n", 3),
        ("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n", 1),
        ("# text = a\nx-y\ta\ta\tX\t_\t_\t0\troot\t_\t_\n", 2),
        (b"# text = a\n1\t\xff\ta\tX\t_\t_\t0\troot\t_\t_\n", 2),
    ],
)
def test_malformed_gold_names_file_and_line(tmp_path, content, line):
    path = tmp_path / "bad.conllu"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=rf"bad\.conllu:line {line}:"):
        evaluate(WordTokenizer("en"), path)


def punkt_training_text():
    return "".join(
        read_sample(shared_path("corpora", *parts), 400_000)
        for parts in [
            ("gutenberg", "pg244_en_a_study_in_scarlet.txt"),
            ("gutenberg", "en_novels", "pg1184_en_count_of_monte_cristo.txt"),
            ("gutenberg", "en_novels", "pg4300_en_ulysses.txt"),
        ]
    )


def test_punkt_learner_agrees_with_nltk():
    from nltk.tokenize.punkt import PunktSentenceTokenizer, PunktTrainer

    text = punkt_training_text()
    trainer = PunktTrainer()
    trainer.train(text)
    params = trainer.get_params()
    ours = SentenceSplitter(language=None)
    ours.train(text)

    def jaccard(a, b):
        a, b = set(a), set(b)
        return len(a & b) / max(1, len(a | b))

    assert len(params.abbrev_types) > 20
    assert jaccard(ours.abbreviations, params.abbrev_types) >= 0.95, (
        set(ours.abbreviations) ^ params.abbrev_types
    )
    assert jaccard(ours.sentence_starters, params.sent_starters) >= 0.9
    assert jaccard(ours.collocations, params.collocations) >= 0.9

    # Boundaries on held-out text, each side with its own learned parameters.
    held_out = read_sample(
        shared_path(
            "corpora", "gutenberg", "en_novels", "pg1661_en_adventures_of_sherlock_holmes.txt"
        ),
        300_000,
    )
    nltk_ends = {e for _, e in PunktSentenceTokenizer(params).span_tokenize(held_out)}
    our_ends = {e for _, e in ours.spans(held_out)}
    agreement = 2 * len(nltk_ends & our_ends) / (len(nltk_ends) + len(our_ends))
    assert len(nltk_ends) > 1000 and agreement >= 0.98, agreement


def test_sentence_splitter_save_load_and_training_accumulates(tmp_path):
    splitter = SentenceSplitter("en")
    splitter.train(
        ["It was approx. five. Then he left.", "Dr. No met Mr. Big. They talked."], finalize=False
    )
    splitter.finalize_training()
    path = tmp_path / "punkt.json"
    splitter.save(path)
    loaded = SentenceSplitter.load(path)
    assert loaded.to_json() == splitter.to_json()
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 100_000
    )
    assert loaded.spans(text) == splitter.spans(text)
    (tmp_path / "broken.json").write_text('{"language": "en",\n "params": [1, 2}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"broken\.json.*line 2"):
        SentenceSplitter.load(tmp_path / "broken.json")


@pytest.mark.parametrize(
    "lang,parts",
    [
        ("de", ("gutenberg", "pg34811_de_buddenbrooks.txt")),
        ("fr", ("gutenberg", "pg13951_fr_les_trois_mousquetaires.txt")),
        ("ru", ("multilingual", "ru", "ru_ruslit_tolstoy_anna_karenina.txt")),
    ],
)
def test_punkt_boundaries_agree_with_nltk_in_other_languages(lang, parts):
    from nltk.tokenize.punkt import PunktSentenceTokenizer, PunktTrainer

    text = read_sample(shared_path("corpora", *parts), 400_000)
    trainer = PunktTrainer()
    trainer.train(text)
    ours = SentenceSplitter(language=None)
    ours.train(text)
    nltk_ends = {e for _, e in PunktSentenceTokenizer(trainer.get_params()).span_tokenize(text)}
    our_ends = {e for _, e in ours.spans(text)}
    agreement = 2 * len(nltk_ends & our_ends) / (len(nltk_ends) + len(our_ends))
    assert agreement >= 0.98, (lang, agreement)
