"""Saves are atomic: a failed write leaves the old file as it was and no temporary file behind."""

import os
import stat

import pytest
from tokenmill._atomic import atomic_open
from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder, to_csv


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "saved.txt"
    path.write_text("old contents\n")
    with (
        pytest.raises(RuntimeError, match="disk full"),
        atomic_open(path, "w", encoding="utf-8") as f,
    ):
        f.write("half of the new")
        raise RuntimeError("disk full")
    assert path.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == ["saved.txt"]


def test_a_finished_write_replaces_the_file_with_usual_permissions(tmp_path):
    path = tmp_path / "saved.bin"
    path.write_bytes(b"old")
    with atomic_open(str(path), "wb") as f:
        f.write(b"new contents")
    assert path.read_bytes() == b"new contents"
    assert sorted(os.listdir(tmp_path)) == ["saved.bin"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_reading_modes_are_refused(tmp_path):
    with pytest.raises(ValueError, match="mode"), atomic_open(tmp_path / "x", "r"):
        pass


def test_collocation_csv_and_sentencepiece_training_leave_only_their_files(tmp_path):
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        "and",
        "the",
        "cat",
        "ate",
        "the",
        "rat",
        "on",
        "the",
        "mat",
    ] * 20
    scored = BigramCollocationFinder.from_words(words).score_ngrams(BigramAssocMeasures.raw_freq)
    csv_path = tmp_path / "bigrams.csv"
    to_csv(scored, str(csv_path))
    assert csv_path.read_text(encoding="utf-8") == to_csv(scored)

    from tokenmill.sentencepiece import SentencePieceProcessor, SentencePieceTrainer

    sentences = [f"sentence number {i} about cats, mats and rats" for i in range(300)]
    prefix = tmp_path / "m"
    SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_prefix=str(prefix), vocab_size=60, model_type="bpe"
    )
    assert sorted(os.listdir(tmp_path)) == ["bigrams.csv", "m.model", "m.vocab"]
    processor = SentencePieceProcessor(model_file=str(prefix) + ".model")
    vocab_lines = (tmp_path / "m.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab_lines] == [
        processor.id_to_piece(i) for i in range(processor.get_piece_size())
    ]
