"""Chinese / Japanese word segmentation (tokenmill.words.ChineseSegmenter), checked against jieba.

- The core algorithm (word graph + maximum-probability path + tie rule) is differential: with the
  same jieba-format dictionary and no HMM, cuts of Han runs equal jieba's ``cut(HMM=False)``.
- The whole segmenter (dictionary path + HMM + number rules) is checked by word-boundary F1
  against SIGHAN 2005 gold, trained only from the closed-track word list, against jieba given the
  same word list as its dictionary.
- The built-in dictionary (CC-CEDICT word list, package data) is tested without ../shared.
"""

from __future__ import annotations

import logging
import pickle
import random
import re

import pytest
from conftest import random_strings, read_sample, shared_path
from tokenmill import FormatError
from tokenmill.words import ChineseSegmenter, JapaneseSegmenter, WordTokenizer, evaluate

jieba = pytest.importorskip("jieba", reason="jieba is a test dependency (pyproject test extra)")
jieba.setLogLevel(logging.WARNING)

# jieba's Han block (re_han_default without the ASCII part): runs it cuts with its word graph.
HAN_RUN = re.compile(r"[\u4E00-\u9FD5]+")
JIEBA_WORD_FREQ = 3  # the frequency written for every word of a SIGHAN word list (jieba needs one)


def han_runs(text: str, limit: int):
    runs = HAN_RUN.findall(text)
    return runs[:limit]


def write_dictionary(path, words, seed=5):
    """A jieba-format dictionary with varied frequencies (so that the path scores really differ)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for w in words:
            f.write(f"{w} {rng.choice([1, 1, 2, 3, 5, 8, 13, 50, 400, 3000])}\n")
    return path


def sighan_words(corpus):
    path = shared_path("corpora", "sighan2005", f"{corpus}_training_words.utf8")
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def assert_covers_text(text, tokens):
    pos = 0
    for word, start, end in tokens:
        assert pos <= start < end <= len(text), (word, start, end, pos)
        gap = text[pos:start]
        assert gap == "" or gap.isspace(), f"uncovered {gap!r} before {start}"
        assert word == text[start:end]
        assert not word.isspace()
        pos = end
    assert text[pos:] == "" or text[pos:].isspace()


@pytest.fixture(scope="module")
def pku_dictionary(tmp_path_factory):
    return write_dictionary(tmp_path_factory.mktemp("zh") / "pku_dict.txt", sighan_words("pku"))


@pytest.mark.parametrize(
    "corpus",
    [("sighan2005", "pku_test.utf8"), ("multilingual", "zh", "zh_debian_fortunes-zh_2.98.txt")],
    ids=["pku_test", "fortunes_zh"],
)
def test_max_probability_path_equals_jieba_without_hmm(pku_dictionary, corpus):
    ours = ChineseSegmenter(str(pku_dictionary), hmm=False, numbers=False)
    theirs = jieba.Tokenizer(dictionary=str(pku_dictionary))
    runs = han_runs(read_sample(shared_path("corpora", *corpus), 300_000), 6000)
    assert len(runs) > 1000
    mismatches = [
        (r, ours.cut(r), list(theirs.cut(r, HMM=False)))
        for r in runs
        if ours.cut(r) != list(theirs.cut(r, HMM=False))
    ]
    assert not mismatches, mismatches[:3]


def test_user_dictionary_equals_jieba_load_userdict(pku_dictionary, tmp_path):
    words = [
        w for w in sighan_words("pku") if HAN_RUN.fullmatch(w)
    ]  # jieba cuts other text by its own rules
    rng = random.Random(11)
    # Some new words with a frequency, some without (jieba then suggests one), some tagged.
    pairs = [rng.choice(words) + rng.choice(words) for _ in range(300)]
    user = tmp_path / "user.txt"
    with open(user, "w", encoding="utf-8") as f:
        for i, w in enumerate(pairs):
            f.write(
                [f"{w} {rng.randint(1, 500)}\n", f"{w}\n", f"{w} {rng.randint(1, 50)} nz\n"][i % 3]
            )
    ours = ChineseSegmenter(str(pku_dictionary), hmm=False, numbers=False)
    theirs = jieba.Tokenizer(dictionary=str(pku_dictionary))
    theirs.initialize()
    assert ours.load_dictionary(str(user)) == len(pairs)
    theirs.load_userdict(str(user))
    assert ours.total == theirs.total
    runs = han_runs(
        read_sample(shared_path("corpora", "sighan2005", "pku_test.utf8"), 200_000), 3000
    )
    runs += pairs
    mismatches = [
        (r, ours.cut(r), list(theirs.cut(r, HMM=False)))
        for r in runs
        if ours.cut(r) != list(theirs.cut(r, HMM=False))
    ]
    assert not mismatches, mismatches[:3]
    for w in pairs[:50]:
        assert ours.freq(w) == theirs.FREQ[w], w


def jieba_with_word_list(tmp_path, corpus):
    path = tmp_path / f"{corpus}_jieba.txt"
    path.write_text(
        "".join(f"{w} {JIEBA_WORD_FREQ}\n" for w in sighan_words(corpus)), encoding="utf-8"
    )
    t = jieba.Tokenizer(dictionary=str(path))
    t.initialize()
    return t


@pytest.mark.parametrize("corpus", ["pku", "msr"])
def test_sighan_f1_at_least_jieba_with_the_same_word_list(tmp_path, corpus):
    gold = shared_path("corpora", "sighan2005", f"{corpus}_test_gold.utf8")
    ours = ChineseSegmenter()
    ours.train(
        str(shared_path("corpora", "sighan2005", f"{corpus}_training_words.utf8")), format="words"
    )
    theirs = jieba_with_word_list(tmp_path, corpus)
    ours_f1 = evaluate(ours, gold).f1
    jieba_f1 = evaluate(lambda s: list(theirs.cut(s)), gold).f1
    assert ours_f1 >= jieba_f1, (ours_f1, jieba_f1)


def test_training_from_a_segmented_corpus_beats_jieba_on_held_out_text(tmp_path):
    lines = read_sample(
        shared_path("corpora", "sighan2005", "pku_test_gold.utf8"), 2_000_000
    ).splitlines()
    train, held_out = lines[:1300], [line for line in lines[1300:] if line.split()]
    ours = ChineseSegmenter.empty()
    ours.train_from_iterator(train)
    assert ours.has_hmm_model and len(ours) > 1000
    words = sorted({w for line in train for w in line.split()})
    dictionary = tmp_path / "train_words.txt"
    dictionary.write_text("".join(f"{w} {JIEBA_WORD_FREQ}\n" for w in words), encoding="utf-8")
    theirs = jieba.Tokenizer(dictionary=str(dictionary))
    gold = tmp_path / "held_out.utf8"
    gold.write_text("\n".join(held_out) + "\n", encoding="utf-8")
    ours_f1 = evaluate(ours, gold).f1
    jieba_f1 = evaluate(lambda s: list(theirs.cut(s)), gold).f1
    assert ours_f1 >= jieba_f1, (ours_f1, jieba_f1)
    # Corpus counts are frequencies: the trained dictionary agrees with the text.
    counted = sum(line.split().count(words[0]) for line in train)
    assert ours.freq(words[0]) == counted


# ---- built-in dictionary: no ../shared needed ----

DEFAULT_TEXT = (
    "我来到北京清华大学，在计算机系学习自然语言处理。"
    "今天天气很好，我们一起去公园散步吧！"
    "中华人民共和国成立于一九四九年，首都是北京。"
    "他说这个问题很重要，我们必须认真研究解决办法。"
    "经济发展和社会进步需要全体人民的共同努力。"
)


def boundary_f1(predicted, reference):
    def spans(words):
        out, pos = set(), 0
        for w in words:
            out.add((pos, pos + len(w)))
            pos += len(w)
        return out

    p, r = spans(predicted), spans(reference)
    correct = len(p & r)
    return 2 * correct / (len(p) + len(r))


def test_default_dictionary_segments_sensibly_like_jieba():
    seg = ChineseSegmenter()
    assert len(seg) > 100_000 and seg.has_hmm_model
    ours = seg.cut(DEFAULT_TEXT)
    theirs = list(jieba.cut(DEFAULT_TEXT))  # jieba with its own (much larger, weighted) dictionary
    assert boundary_f1(ours, theirs) >= 0.8, (ours, theirs)
    assert len(ours) < 0.7 * len(DEFAULT_TEXT)  # words, not characters


def test_word_tokenizer_zh_and_ja_use_the_segmenter():
    assert WordTokenizer("zh").tokenize_with_offsets(
        DEFAULT_TEXT
    ) == ChineseSegmenter().cut_with_offsets(DEFAULT_TEXT)
    ja = "東京タワーへ行きました。コンピューターを使います"
    assert WordTokenizer("ja").tokenize_with_offsets(ja) == JapaneseSegmenter().cut_with_offsets(ja)
    assert pickle.loads(pickle.dumps(WordTokenizer("zh"))).tokenize(
        DEFAULT_TEXT
    ) == ChineseSegmenter().cut(DEFAULT_TEXT)


def adversarial_texts():
    rng = random.Random(99)
    yield "中国人民" * 250_000 + "１２３" * 1000  # 3 MB without a space
    yield "二○○一年" * 50_000 + "——" * 10_000 + "……" * 10_000
    yield "a\ud800中\udfff国 \ud83d\ude00 x\udc00"
    yield (
        "mixed: русский 中文日本語カタカナ العربية 👩🏽‍💻🇵🇱 e\u0301\u0301 "
        "２８．３％ 1,000.5% www.example.com"
    )
    ranges = [(0, 0x7F), (0x3000, 0x9FFF), (0xD800, 0xDFFF), (0xFF00, 0xFFEF), (0, 0x10FFFF)]
    yield from random_strings(rng, 300, 60, ranges)


@pytest.mark.parametrize(
    "make",
    [ChineseSegmenter, JapaneseSegmenter, lambda: ChineseSegmenter(hmm=False, numbers=False)],
    ids=["zh", "ja", "zh-plain"],
)
def test_offsets_cover_adversarial_input(make):
    seg = make()
    for text in adversarial_texts():
        tokens = seg.cut_with_offsets(text)
        assert_covers_text(text, tokens)
        assert [w for w, _, _ in tokens] == seg.cut(text)


def test_ten_megabytes_without_a_space():
    text = "的" * 3_500_000  # 10.5 MB of UTF-8 in one line
    words = ChineseSegmenter().cut(text)
    assert "".join(words) == text


def test_batch_forms_equal_single_calls():
    seg = ChineseSegmenter()
    texts = [DEFAULT_TEXT[i : i + 37] for i in range(0, len(DEFAULT_TEXT), 37)] + ["", "  "]
    assert seg.cut_batch(texts) == [seg.cut(t) for t in texts]
    assert seg.cut_with_offsets_batch(texts) == [seg.cut_with_offsets(t) for t in texts]


def test_results_do_not_depend_on_earlier_calls():
    # A segmenter keeps the str objects of recent words between calls: whatever it cut before
    # (including colliding cache slots), each result equals a fresh segmenter's.
    lines = read_sample(
        shared_path("corpora", "sighan2005", "pku_test.utf8"), 200_000
    ).splitlines()[:1500]
    seg = ChineseSegmenter()
    warm = [seg.cut_with_offsets(line) for line in reversed(lines)][::-1]
    fresh = ChineseSegmenter.from_json(seg.to_json())
    assert warm == [fresh.cut_with_offsets(line) for line in lines]
    assert [seg.cut(line) for line in lines] == [[w for w, _, _ in tokens] for tokens in warm]
    for line, tokens in zip(lines, warm):
        assert_covers_text(line, tokens)


def test_cut_leaves_the_garbage_collector_switch_as_it_was():
    # The cyclic GC is paused while (word, start, end) tuples are built, and only then.
    import gc

    seg = ChineseSegmenter()
    assert gc.isenabled()
    seg.cut_with_offsets(DEFAULT_TEXT)
    seg.cut_with_offsets_batch([DEFAULT_TEXT, DEFAULT_TEXT[:20]])
    assert gc.isenabled()
    gc.disable()
    try:
        seg.cut_with_offsets(DEFAULT_TEXT)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_save_load_and_pickle_cut_the_same(tmp_path):
    seg = ChineseSegmenter.empty()
    seg.train_from_iterator(
        ["我们 喜欢 北京 的 天安门", "他们 在 北京 工作 ， 我们 在 上海 学习"] * 20
    )
    seg.add_word("天安门广场", 7)
    path = tmp_path / "seg.json"
    seg.save(str(path))
    for other in (
        ChineseSegmenter.load(str(path)),
        pickle.loads(pickle.dumps(seg)),
        ChineseSegmenter.from_json(seg.to_json()),
    ):
        assert other.to_json() == seg.to_json()
        assert other.cut(DEFAULT_TEXT) == seg.cut(DEFAULT_TEXT)
    ja = pickle.loads(pickle.dumps(JapaneseSegmenter()))
    assert ja.language == "ja"


def test_japanese_segmenter_keeps_its_class_through_save_and_load(tmp_path):
    seg = JapaneseSegmenter()
    seg.train_from_iterator(["東京 に 行き まし た", "京都 の お 寺 を 見 まし た"] * 5)
    path = tmp_path / "ja.json"
    seg.save(str(path))
    text = "東京に行きました。京都のお寺を見ました。"
    for other in (
        JapaneseSegmenter.load(str(path)),
        ChineseSegmenter.load(str(path)),
        ChineseSegmenter.from_json(seg.to_json()),
        JapaneseSegmenter.from_json(seg.to_json()),
        pickle.loads(pickle.dumps(seg)),
    ):
        assert type(other) is JapaneseSegmenter
        assert other.language == "ja" and other.to_json() == seg.to_json()
        assert other.cut_with_offsets(text) == seg.cut_with_offsets(text)
    assert type(ChineseSegmenter.load(str(path))) is JapaneseSegmenter
    zh = ChineseSegmenter.empty()
    zh.save(str(tmp_path / "zh.json"))
    assert type(ChineseSegmenter.load(str(tmp_path / "zh.json"))) is ChineseSegmenter


@pytest.mark.parametrize(
    "content,line",
    [
        ("好 3\n坏 x y z\n", 2),
        ("好 3\n\n词 -5\n", 3),
        ("好 1.5\n", 1),
    ],
)
def test_malformed_dictionary_names_file_and_line(tmp_path, content, line):
    path = tmp_path / "bad_dict.txt"
    path.write_text(content, encoding="utf-8")
    seg = ChineseSegmenter.empty()
    with pytest.raises(FormatError, match=rf"bad_dict.txt:line {line}"):
        seg.load_dictionary(str(path))
    with pytest.raises(FormatError, match=rf"bad_dict.txt:line {line}"):
        ChineseSegmenter(str(path))
    path.write_bytes(b"ok 1\n\xff\xfe 2\n")
    with pytest.raises(FormatError, match="line 2"):
        seg.load_dictionary(str(path))


def japanese_gold_sentences():
    conllu = shared_path("corpora", "ud", "UD_Japanese-GSD", "ja_gsd-ud-test.conllu")
    sentences, words = [], []
    with open(conllu, encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                if not line.strip() and words:
                    sentences.append(words)
                    words = []
                continue
            cols = line.split("\t")
            if cols[0].isdigit():
                words.append(cols[1])
    return sentences


def test_japanese_dictionary_from_ud_improves_on_character_types(tmp_path):
    sentences = japanese_gold_sentences()
    train, held_out = sentences[: len(sentences) // 2], sentences[len(sentences) // 2 :]
    gold = tmp_path / "ja_held_out.txt"
    gold.write_text("".join(" ".join(s) + "\n" for s in held_out), encoding="utf-8")
    types_only = evaluate(ChineseSegmenter.empty("ja"), gold).f1
    trained = JapaneseSegmenter()
    trained.train_from_iterator([" ".join(s) for s in train])
    assert evaluate(trained, gold).f1 > types_only + 0.1


def test_built_in_japanese_dictionary_segments_sensibly(tmp_path):
    # No user dictionary: the built-in IPADIC word list against UD Japanese-GSD's gold words
    # (a sample), compared with cutting at changes of character type alone.
    gold = tmp_path / "ja_gold.txt"
    gold.write_text(
        "".join(" ".join(s) + "\n" for s in japanese_gold_sentences()[:300]), encoding="utf-8"
    )
    types_only = evaluate(ChineseSegmenter.empty("ja"), gold)
    built_in = evaluate(JapaneseSegmenter(), gold)
    assert JapaneseSegmenter().cut("東京") == ["東京"] and len(JapaneseSegmenter()) > 300_000
    assert built_in.f1 > types_only.f1 + 0.2, (built_in, types_only)
