"""Word counting within a memory budget (sorted runs spilled to disk, merged exactly) and the
public counts: `trainers.count_words`, `WordCounts` (+, save / load, pickling) and training from
counts, which must give the model training on the corpus gives."""

import os
import pickle

import pytest
import tokenmill
from tokenmill import Tokenizer, models, normalizers, pre_tokenizers, trainers

from tests.conftest import corpus_text, non_empty_lines

# Small enough that counting a few hundred kB of text spills many runs (and merges them in
# several rounds); training's own check needs far more, so it is given to `count_words` only.
TINY = 64 * 1024


def corpus_lines(english=400_000, other=100_000):
    text = corpus_text(
        ("english_large/gutenberg_en_large_part1.txt", english),
        ("multilingual/ru", other),
        ("multilingual/ja", other),
    )
    return non_empty_lines(text)


def byte_level():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    return tokenizer


def bert(model=None):
    tokenizer = Tokenizer(model or models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer()
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tokenizer


def whitespace(model):
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


@pytest.mark.parametrize("make", [byte_level, bert, lambda: whitespace(models.BPE())])
def test_a_tiny_budget_counts_exactly_and_leaves_no_files(make, tmp_path):
    lines = corpus_lines()
    plain = trainers.count_words(iter(lines), make())
    spilled = trainers.count_words(iter(lines), make(), max_memory=TINY, spill_dir=tmp_path)
    assert len(plain) > 10_000
    assert spilled == plain
    assert spilled.items() == plain.items()
    assert os.listdir(tmp_path) == []


def test_files_count_as_training_reads_them(tmp_path):
    lines = corpus_lines(200_000, 20_000)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    spill = tmp_path / "spill"
    spill.mkdir()
    from_file = trainers.count_words(str(path), byte_level(), max_memory=TINY, spill_dir=spill)
    assert from_file == trainers.count_words([path], byte_level())
    assert os.listdir(spill) == []
    with_newlines = trainers.count_words(iter(line + "\n" for line in lines), byte_level())
    assert from_file == with_newlines


TRAINERS = [
    ("bpe", byte_level, lambda **o: trainers.BpeTrainer(vocab_size=600, **o)),
    ("wordpiece", bert, lambda **o: trainers.WordPieceTrainer(vocab_size=600, **o)),
    (
        "wordlevel",
        lambda: whitespace(models.WordLevel(unk_token="<unk>")),
        lambda **o: trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["<unk>"], **o),
    ),
    (
        "unigram",
        lambda: whitespace(models.Unigram()),
        lambda **o: trainers.UnigramTrainer(vocab_size=300, unk_token="<unk>", **o),
    ),
]


@pytest.mark.parametrize("name, make, trainer", TRAINERS, ids=[t[0] for t in TRAINERS])
def test_training_on_spilled_counts_gives_the_same_model(name, make, trainer, tmp_path):
    lines = corpus_lines(*((80_000, 0) if name == "unigram" else (300_000, 50_000)))
    reference = make()
    reference.train_from_iterator(lines, trainer(show_progress=False))
    counts = trainers.count_words(iter(lines), make(), max_memory=TINY, spill_dir=tmp_path)
    from_counts = make()
    budgeted = trainer(show_progress=False, max_memory="1GB", spill_dir=str(tmp_path))
    from_counts.train_from_counts(counts, budgeted)
    assert from_counts.to_str() == reference.to_str()
    # The trainer alone gives the model (default options) with the same vocabulary.
    model = trainer(show_progress=False).train_from_counts(counts)
    assert model.get_vocab() == reference.model.get_vocab()
    # A budget the counts fit in changes nothing either.
    budgeted_run = make()
    budgeted_run.train_from_iterator(lines, budgeted)
    assert budgeted_run.to_str() == reference.to_str()
    assert os.listdir(tmp_path) == []


def test_counts_of_two_halves_add_up_to_the_whole():
    lines = corpus_lines(200_000, 30_000)
    half = len(lines) // 2
    tokenizer = byte_level()
    whole = trainers.count_words(iter(lines), tokenizer)
    first = trainers.count_words(iter(lines[:half]), tokenizer)
    second = trainers.count_words(iter(lines[half:]), tokenizer, max_memory=TINY)
    assert first + second == whole
    first += second
    assert first == whole
    assert whole.total() == sum(n for _, n in whole.items())


def test_the_counts_object():
    counts = trainers.WordCounts({"b": 2, "a": 2, "é": 5, "c": 1})
    assert len(counts) == 4
    assert list(counts) == ["a", "b", "c", "é"]
    assert counts.items() == [("a", 2), ("b", 2), ("c", 1), ("é", 5)]
    assert counts.most_common() == [("é", 5), ("a", 2), ("b", 2), ("c", 1)]
    assert counts.most_common(2) == [("é", 5), ("a", 2)]
    assert counts["é"] == 5 and counts["zz"] == 0
    assert "a" in counts and "zz" not in counts
    assert counts.total() == 10
    assert trainers.WordCounts() == trainers.count_words(iter([]))
    # Without a tokenizer each text is one word.
    assert trainers.count_words(iter(["a b", "a b", "c"])).items() == [("a b", 2), ("c", 1)]
    big = trainers.WordCounts({"a": 2**64 - 1})
    assert (big + big)["a"] == 2**64 - 1  # saturates


def test_save_load_pickle_and_corrupt_files(tmp_path):
    counts = trainers.count_words(iter(corpus_lines(50_000, 10_000)), byte_level())
    path = tmp_path / "counts.tmwc"
    counts.save(path)
    assert trainers.WordCounts.load(str(path)) == counts
    assert pickle.loads(pickle.dumps(counts)) == counts
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(tokenmill.FormatError, match="counts.tmwc.*checksum"):
        trainers.WordCounts.load(path)
    path.write_bytes(b"TMWCOUNT")
    with pytest.raises(tokenmill.FormatError, match="counts.tmwc"):
        trainers.WordCounts.load(path)
    other = tmp_path / "vocab.json"
    other.write_text("{}")
    with pytest.raises(tokenmill.FormatError, match="vocab.json.*header"):
        trainers.WordCounts.load(other)


def test_runs_are_removed_when_counting_fails(tmp_path):
    lines = corpus_lines(200_000, 20_000)

    def failing():
        yield from lines
        raise RuntimeError("the corpus broke")

    with pytest.raises(RuntimeError, match="the corpus broke"):
        trainers.count_words(failing(), byte_level(), max_memory=TINY, spill_dir=tmp_path)
    assert os.listdir(tmp_path) == []


def test_the_budget_check_names_the_numbers():
    lines = corpus_lines(100_000, 10_000)
    tokenizer = byte_level()
    trainer = trainers.BpeTrainer(vocab_size=500, show_progress=False, max_memory=200_000)
    with pytest.raises(tokenmill.InvalidArgumentError, match=r"distinct words.*max_memory"):
        tokenizer.train_from_iterator(lines, trainer)
    unigram = whitespace(models.Unigram())
    trainer = trainers.UnigramTrainer(vocab_size=100, show_progress=False, max_memory="100kB")
    with pytest.raises(tokenmill.InvalidArgumentError, match=r"Unigram.*max_memory"):
        unigram.train_from_iterator(lines, trainer)


def test_memory_options_parse_and_pickle():
    trainer = trainers.BpeTrainer(max_memory="2GiB", spill_dir="/tmp")
    assert trainer.max_memory == 2 * 2**30 and trainer.spill_dir == "/tmp"
    trainer.max_memory = "1.5GB"
    assert trainer.max_memory == 1_500_000_000
    copy = pickle.loads(pickle.dumps(trainer))
    assert (copy.max_memory, copy.spill_dir) == (1_500_000_000, "/tmp")
    assert trainers.WordLevelTrainer(max_memory=1000).max_memory == 1000
    assert trainers.WordPieceTrainer().max_memory is None
    for bad in ["lots", "2XB", 0, -5]:
        with pytest.raises(tokenmill.InvalidArgumentError, match="max_memory"):
            trainers.UnigramTrainer(max_memory=bad)
    # Without the options the pickled state is tokenizers' layout, unchanged.
    assert b"max_memory" not in pickle.dumps(trainers.BpeTrainer())
