"""tokenmill.sentencepiece.SentencePieceTrainer against `sentencepiece`'s trainer: models that
tokenmill trains load in `sentencepiece` and encode identically there; char and word models
(deterministic algorithms) are the same as sentencepiece's; BPE learns (nearly) the same pieces;
bad settings and corpora raise tokenmill exceptions."""

from __future__ import annotations

import io

import pytest
from conftest import write_spm_training_corpus

spm = pytest.importorskip("sentencepiece")
import tokenmill  # noqa: E402
import tokenmill.sentencepiece as tsp  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """~400 kB of English and ~60 kB of German/French lines, and held-out text."""
    path, held_out = write_spm_training_corpus(
        tmp_path_factory.mktemp("spm") / "corpus.txt", (220_000, 150_000, 40_000), 20_000
    )
    return path, held_out + [
        "ﬁ ½ Ｈｅｌｌｏ",
        "  spaced   out  ",
        "tab\there",
        "😀 x",
    ]


def train_ours(corpus_path, prefix, **kwargs) -> str:
    """Trains tokenmill's model on a file into `prefix`.model and .vocab; returns the .model's
    path."""
    tsp.SentencePieceTrainer.train(input=str(corpus_path), model_prefix=str(prefix), **kwargs)
    return f"{prefix}.model"


def train_both(tmp_path, corpus_path, **kwargs):
    ours_prefix, ref_prefix = tmp_path / "ours", tmp_path / "ref"
    train_ours(corpus_path, ours_prefix, **kwargs)
    spm.SentencePieceTrainer.train(
        input=str(corpus_path), model_prefix=str(ref_prefix), minloglevel=2, **kwargs
    )
    return ours_prefix, ref_prefix


def pieces_of(path) -> list[str]:
    model = spm.SentencePieceProcessor(model_file=str(path))
    return [model.id_to_piece(i) for i in range(model.get_piece_size())]


@pytest.mark.parametrize("model_type", ["char", "word"])
def test_char_and_word_models_equal_sentencepiece(tmp_path, corpus, model_type):
    path, held_out = corpus
    ours, ref = train_both(
        tmp_path,
        path,
        model_type=model_type,
        vocab_size=400,
        normalization_rule_name="identity",
        hard_vocab_limit=False,
    )
    assert pieces_of(f"{ours}.model") == pieces_of(f"{ref}.model")
    # the same .vocab file, scores printed as sentencepiece prints them
    assert (tmp_path / "ours.vocab").read_bytes() == (tmp_path / "ref.vocab").read_bytes()
    a = spm.SentencePieceProcessor(model_file=f"{ours}.model")
    b = spm.SentencePieceProcessor(model_file=f"{ref}.model")
    assert a.encode(held_out) == b.encode(held_out)


# nmt_nfkc is the default rule (its embedded charsmap); test_sentencepiece_charsmaps.py checks
# every built-in rule's charsmap in sentencepiece.
@pytest.mark.parametrize("rule", ["identity", "nmt_nfkc"])
def test_bpe_model_loads_in_sentencepiece_and_encodes_identically(tmp_path, corpus, rule):
    path, held_out = corpus
    ours, ref = train_both(
        tmp_path, path, model_type="bpe", vocab_size=1000, normalization_rule_name=rule
    )
    in_spm = spm.SentencePieceProcessor(model_file=f"{ours}.model")
    in_tm = tsp.SentencePieceProcessor(model_file=f"{ours}.model")
    assert in_tm.get_piece_size() == in_spm.get_piece_size() == 1000
    assert in_tm.encode(held_out) == in_spm.encode(held_out)
    assert in_tm.encode(held_out, out_type=str) == in_spm.encode(held_out, out_type=str)
    assert in_tm.decode(in_tm.encode(held_out)) == in_spm.decode(in_spm.encode(held_out))
    # the learned vocabulary is sentencepiece's, up to its approximate best-pair search
    ours_pieces, ref_pieces = set(pieces_of(f"{ours}.model")), set(pieces_of(f"{ref}.model"))
    assert len(ours_pieces & ref_pieces) / len(ref_pieces) > 0.9
    vocab_lines = (tmp_path / "ours.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab_lines] == pieces_of(f"{ours}.model")


def test_bpe_options_string_form_iterator_and_writer(tmp_path, corpus):
    path, held_out = corpus
    flags = (
        f"--input={path} --model_prefix={tmp_path / 'flags'} --model_type=bpe --vocab_size=800 "
        "--byte_fallback=true --split_digits=true --user_defined_symbols=<sep>,[MASK] "
        "--control_symbols=<ctl> --character_coverage=0.98 --pad_id=3 "
        "--normalization_rule_name=identity"
    )
    tsp.SentencePieceTrainer.train(flags)
    model = spm.SentencePieceProcessor(model_file=str(tmp_path / "flags.model"))
    ours = tsp.SentencePieceProcessor(model_file=str(tmp_path / "flags.model"))
    assert model.pad_id() == 3 and model.piece_to_id("<sep>") != model.unk_id()
    assert all(
        not any(ch.isdigit() for ch in p) or len(p.lstrip("▁")) == 1
        for p in (model.id_to_piece(i) for i in range(model.get_piece_size()))
        if not model.is_byte(model.piece_to_id(p))
    )
    tricky = held_out[:50] + ["x<sep>y [MASK] 12345 ¤ 漢字 <ctl>"]
    assert ours.encode(tricky) == model.encode(tricky)
    assert ours.decode(ours.encode(tricky)) == model.decode(model.encode(tricky))
    lines = path.read_text(encoding="utf-8").splitlines()
    buffer = io.BytesIO()
    options = dict(model_type="bpe", vocab_size=600, normalization_rule_name="identity")
    tsp.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buffer, **options)
    from_iterator = spm.SentencePieceProcessor(model_proto=buffer.getvalue())
    from_file = spm.SentencePieceProcessor(
        model_file=train_ours(path, tmp_path / "same", **options)
    )
    assert from_iterator.encode(held_out) == from_file.encode(held_out)


@pytest.mark.parametrize(
    "rule, normalized",
    [("nmt_nfkc", "▁fi▁Hello"), ("nfkc_cf", "▁fi▁hello")],
    ids=["nmt_nfkc", "nfkc_cf"],
)
def test_builtin_rule_models_load_and_encode_in_tokenmill(tmp_path, corpus, rule, normalized):
    path, held_out = corpus
    trained = train_ours(
        path, tmp_path / rule, model_type="bpe", vocab_size=800, normalization_rule_name=rule
    )
    model = tsp.SentencePieceProcessor(model_file=trained)
    assert model.normalize("ﬁ Ｈｅｌｌｏ") == normalized
    assert model.decode(model.encode(held_out)) == [model.decode(model.encode(t)) for t in held_out]


def test_training_is_deterministic(tmp_path, corpus):
    path, _ = corpus
    out = []
    for name in ("a", "b"):
        trained = train_ours(
            path,
            tmp_path / name,
            model_type="bpe",
            vocab_size=700,
            input_sentence_size=2000,
            shuffle_input_sentence=True,
            normalization_rule_name="identity",
        )
        out.append(pieces_of(trained))
    assert out[0] == out[1]


def test_bad_settings_and_corpora_raise(tmp_path, corpus):
    path, _ = corpus
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    cases = [
        dict(input=str(empty), model_type="bpe", vocab_size=100),  # empty corpus
        dict(input=str(path), model_type="bpe", vocab_size=20),  # fewer than the characters
        dict(input=str(path), model_type="bpe", vocab_size=200_000),  # hard_vocab_limit
        dict(input=str(path), model_type="bpe", vocab_size=100, no_such_flag=1),  # unknown option
        dict(input=str(path), model_type="nope", vocab_size=100),
        dict(input=str(path), model_type="bpe", vocab_size=100, unk_id=-1),
        dict(
            input=str(path), model_type="bpe", vocab_size=100, user_defined_symbols=["<x>", "<x>"]
        ),
        dict(input=str(path), model_type="bpe", vocab_size=100, normalization_rule_name="nope"),
        dict(input=str(tmp_path / "missing.txt"), model_type="bpe", vocab_size=100),
    ]
    for kwargs in cases:
        with pytest.raises(Exception):  # noqa: B017 (the peer raises a plain Exception)
            spm.SentencePieceTrainer.train(
                model_prefix=str(tmp_path / "ref"), minloglevel=2, **kwargs
            )
        with pytest.raises(tokenmill.TokenmillError):
            tsp.SentencePieceTrainer.train(model_prefix=str(tmp_path / "ours"), **kwargs)
    # without hard_vocab_limit a too-large vocabulary shrinks to what the corpus supports
    tsp.SentencePieceTrainer.train(
        input=str(path),
        model_prefix=str(tmp_path / "soft"),
        model_type="word",
        vocab_size=200_000,
        hard_vocab_limit=False,
        normalization_rule_name="identity",
    )
    assert (
        1000
        < spm.SentencePieceProcessor(model_file=str(tmp_path / "soft.model")).get_piece_size()
        < 200_000
    )


@pytest.mark.parametrize(
    "lines",
    [
        ["a" * 10],
        ["a" * 17],
        ["a" * 100_000],
        ["a", "a" * 29, "aa"],
        ["babbb", "aababbcacbbcacabaaaccabca", "bccabbcbcbcabacbbcabccccbabccaacb"],
    ],
    ids=["run10", "run17", "run100k", "runs", "abc"],
)
@pytest.mark.parametrize("split", [True, False])
def test_bpe_goes_on_with_gone_pairs_as_sentencepiece(tmp_path, lines, split):
    # When no pair occurs any more, sentencepiece learns the pairs that occurred once and are
    # gone ("aaa", "▁aa" on a run of "a"), by length then text, until the vocabulary is full.
    path = tmp_path / "runs.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for vocab_size in (20, 40, 80):
        options = dict(
            model_type="bpe",
            vocab_size=vocab_size,
            hard_vocab_limit=False,
            character_coverage=1.0,
            max_sentence_length=10**6,
            split_by_whitespace=split,
        )
        ours, ref = train_both(tmp_path, path, **options)
        assert pieces_of(f"{ours}.model") == pieces_of(f"{ref}.model"), vocab_size
    # With the hard limit, both fill the same vocabulary or refuse the same size.
    options.update(hard_vocab_limit=True, vocab_size=len(pieces_of(f"{ref}.model")))
    ours, ref = train_both(tmp_path, path, **options)
    assert pieces_of(f"{ours}.model") == pieces_of(f"{ref}.model")
