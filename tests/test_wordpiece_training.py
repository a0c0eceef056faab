"""WordPieceTrainer against tokenizers' WordPieceTrainer on real text, and the likelihood
algorithm against a direct implementation of its definition.

tokenizers gives the `##x` tokens ids in hash order (so its tie-breaking varies from run to run);
replaying that order (`form_order`) must give exactly its vocabulary, and the default
(code-point order) the same alphabet, special tokens and size.
"""

from __future__ import annotations

import pickle
from collections import Counter
from fractions import Fraction

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from tokenmill import models, trainers  # noqa: E402
from tokenmill.implementations import BertWordPieceTokenizer  # noqa: E402

train_from_counts = tokenmill._native.trainers._train_wordpiece_from_word_counts

# The corpus of the Hugging Face course's WordPiece chapter, and BERT's special tokens.
COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def sample_lines(*parts, max_bytes=300_000):
    return read_sample(shared_path("corpora", *parts), max_bytes).splitlines()


def bert_word_counts(lines, lowercase=True):
    normalizer = tokenizers.normalizers.BertNormalizer(lowercase=lowercase)
    pre = tokenizers.pre_tokenizers.BertPreTokenizer()
    return Counter(
        w for line in lines for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(line))
    )


def reference_vocab(lines, lowercase=True, **options):
    tk = tokenizers.BertWordPieceTokenizer(lowercase=lowercase)
    tk.train_from_iterator(lines, show_progress=False, **options)
    return tk.get_vocab(with_added_tokens=False)


def prefix_forms_in_id_order(vocab, prefix="##"):
    return [
        t
        for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])
        if t.startswith(prefix) and len(t) == len(prefix) + 1
    ]


@pytest.mark.parametrize(
    "corpus,options",
    [
        (
            ("gutenberg", "en_novels", "pg11_en_alice_in_wonderland.txt"),
            dict(vocab_size=3000, min_frequency=2),
        ),
        (
            ("gutenberg", "pg34811_de_buddenbrooks.txt"),
            dict(vocab_size=4000, min_frequency=2, limit_alphabet=100_000),
        ),
        (
            ("sighan2005", "pku_test.utf8"),
            dict(vocab_size=3000, min_frequency=1, limit_alphabet=100_000),
        ),
    ],
    ids=["english", "german", "chinese"],
)
def test_same_vocab_as_tokenizers(corpus, options):
    lines = sample_lines(*corpus)
    reference = reference_vocab(lines, **options)
    counts = bert_word_counts(lines)
    kwargs = dict(options, special_tokens=SPECIALS, show_progress=False)
    kwargs.setdefault("limit_alphabet", 1000)  # BertWordPieceTokenizer.train's default
    trainer = trainers.WordPieceTrainer(**kwargs)
    # Replaying tokenizers' (hash) order of the ##x tokens gives exactly its vocabulary.
    replay = train_from_counts(trainer, counts, prefix_forms_in_id_order(reference))
    assert replay["vocab"] == reference
    # The default order is deterministic, with the same specials, alphabet and size.
    ours = train_from_counts(trainer, counts)["vocab"]
    assert train_from_counts(trainer, dict(reversed(list(counts.items()))))["vocab"] == ours
    # Where training stops on min_frequency, other tie choices can end it a merge earlier or later.
    if len(reference) == options["vocab_size"]:
        assert len(ours) == len(reference)
    assert abs(len(ours) - len(reference)) <= 0.01 * len(reference)
    assert len(set(ours) & set(reference)) >= 0.97 * len(reference)
    assert {t: i for t, i in ours.items() if i < 5} == {t: i for t, i in reference.items() if i < 5}
    assert set(prefix_forms_in_id_order(ours)) == set(prefix_forms_in_id_order(reference))
    assert sorted(t for t in ours if len(t) == 1) == sorted(t for t in reference if len(t) == 1)


def test_bert_tokenizer_trains_end_to_end(tmp_path):
    path = shared_path("corpora", "gutenberg", "en_novels", "pg84_en_frankenstein.txt")
    ours, theirs = BertWordPieceTokenizer(), tokenizers.BertWordPieceTokenizer()
    ours.train(str(path), vocab_size=2000, show_progress=False)
    theirs.train(str(path), vocab_size=2000, show_progress=False)
    mine, ref = ours.get_vocab(), theirs.get_vocab()
    assert len(mine) == len(ref) == 2000
    assert {t: mine[t] for t in SPECIALS} == {t: ref[t] for t in SPECIALS}
    # All but tie-dependent tokens agree (tokenizers' ties follow hash order).
    assert len(set(mine) & set(ref)) >= 0.98 * len(ref)
    # The trained model is a WordPiece with the prefix, and its vocab.txt loads in tokenizers.
    assert isinstance(ours._tokenizer.model, models.WordPiece)
    files = ours.save_model(str(tmp_path))
    assert [f.rsplit("/", 1)[-1] for f in files] == ["vocab.txt"]
    reloaded = tokenizers.BertWordPieceTokenizer(files[0])
    assert reloaded.get_vocab() == ours.get_vocab()
    text = read_sample(path, 20_000)
    assert BertWordPieceTokenizer(files[0]).encode(text).ids == reloaded.encode(text).ids
    # train_from_iterator gives the same as train on the same lines.
    again = BertWordPieceTokenizer()
    with open(path, encoding="utf-8") as f:
        again.train_from_iterator(f, vocab_size=2000, show_progress=False)
    assert again.get_vocab() == ours.get_vocab()


def likelihood_reference(word_counts, specials, vocab_size, prefix="##"):
    """The classic WordPiece algorithm, written from its definition (quadratic, small inputs):
    ids are specials, alphabet (code-point order), then prefixed forms (code-point order)."""
    splits = {w: [c if i == 0 else prefix + c for i, c in enumerate(w)] for w in word_counts}
    alphabet = sorted({c for w in word_counts for c in w})
    forms = sorted({s for split in splits.values() for s in split[1:]})
    vocab = list(dict.fromkeys(specials + alphabet + forms))
    ids = {t: i for i, t in enumerate(vocab)}
    history = []
    while len(vocab) < vocab_size:
        symbol, pair = Counter(), Counter()
        for w, n in word_counts.items():
            s = splits[w]
            for x in s:
                symbol[x] += n
            for a, b in zip(s, s[1:]):
                pair[(a, b)] += n
        if not pair:
            break
        best = max(
            pair,
            key=lambda p: (Fraction(pair[p], symbol[p[0]] * symbol[p[1]]), -ids[p[0]], -ids[p[1]]),
        )
        a, b = best
        history.append((a, b, pair[best] / (symbol[a] * symbol[b])))
        merged = a + b.removeprefix(prefix)
        if merged not in ids:
            ids[merged] = len(vocab)
            vocab.append(merged)
        for w in splits:
            s, out, i = splits[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            splits[w] = out
    return vocab, history


def test_likelihood_course_corpus_first_merge():
    tok = tokenmill.Tokenizer(models.WordPiece())
    tok.pre_tokenizer = tokenmill.pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=70, special_tokens=SPECIALS, algorithm="likelihood", show_progress=False
    )
    tok.train_from_iterator(COURSE, trainer)
    assert trainer.merge_history[0] == ("a", "##b", pytest.approx(0.2))
    counts = Counter(
        w
        for line in COURSE
        for w, _ in tokenizers.pre_tokenizers.BertPreTokenizer().pre_tokenize_str(line)
    )
    vocab, history = likelihood_reference(counts, SPECIALS, 70)
    assert [(a, b) for a, b, _ in trainer.merge_history] == [(a, b) for a, b, _ in history]
    assert [s for _, _, s in trainer.merge_history] == pytest.approx([s for _, _, s in history])
    assert tok.get_vocab() == {t: i for i, t in enumerate(vocab)}
    assert tok.encode("This is the Hugging Face Course.").tokens[0] in vocab


def test_likelihood_on_real_text_matches_its_definition():
    lines = sample_lines("gutenberg", "pg27729_pl_mickiewicz_bajki.txt", max_bytes=6_000)
    counts = bert_word_counts(lines)
    trainer = trainers.WordPieceTrainer(
        vocab_size=260, special_tokens=SPECIALS, algorithm="likelihood", show_progress=False
    )
    result = train_from_counts(trainer, counts)
    vocab, history = likelihood_reference(counts, SPECIALS, 260)
    assert result["vocab"] == {t: i for i, t in enumerate(vocab)}
    assert [(a, b) for a, b, _ in trainer.merge_history] == [(a, b) for a, b, _ in history]


def test_trainer_attributes_pickle_and_errors():
    t = trainers.WordPieceTrainer()
    assert (t.vocab_size, t.min_frequency, t.continuing_subword_prefix, t.algorithm) == (
        30000,
        0,
        "##",
        "bpe",
    )
    ref = tokenizers.trainers.WordPieceTrainer()
    assert (t.vocab_size, t.min_frequency, t.show_progress, t.continuing_subword_prefix) == (
        ref.vocab_size,
        ref.min_frequency,
        ref.show_progress,
        ref.continuing_subword_prefix,
    )
    changes = dict(vocab_size=500, min_frequency=3, limit_alphabet=50, algorithm="likelihood")
    for name, value in changes.items():
        setattr(t, name, value)
    t.special_tokens = ["[UNK]"]
    t.initial_alphabet = ["xyz", "q"]
    u = pickle.loads(pickle.dumps(t))
    assert isinstance(u, trainers.WordPieceTrainer)
    assert {name: getattr(u, name) for name in changes} == changes
    assert [s.content for s in u.special_tokens] == ["[UNK]"]
    assert sorted(u.initial_alphabet) == ["q", "x"]
    assert "WordPieceTrainer" in repr(u)
    with pytest.raises(tokenmill.InvalidArgumentError, match="likelihood"):
        trainers.WordPieceTrainer(algorithm="unigram")
    # A trainer trains its own kind of model only (as in tokenizers).
    bpe_tok = tokenmill.Tokenizer(models.BPE())
    with pytest.raises(tokenmill.InvalidArgumentError, match="WordPiece"):
        bpe_tok.train_from_iterator(COURSE, trainers.WordPieceTrainer(show_progress=False))
    # With no trainer, a WordPiece model gets a WordPieceTrainer.
    tok = tokenmill.Tokenizer(models.WordPiece())
    tok.train_from_iterator(COURSE)
    assert tok.token_to_id("##s") is not None and isinstance(
        tok.model.get_trainer(), trainers.WordPieceTrainer
    )
