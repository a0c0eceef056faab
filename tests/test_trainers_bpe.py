"""BpeTrainer against tokenizers' BpeTrainer on real corpora: the same merges and vocabulary.

Words are cut with tokenizers' own pre-tokenizer and the same counts train both libraries, so any
difference comes from the trainer. tokenizers gives `##x` / `x</w>` tokens ids in hash order (its
tie-breaking varies run to run there), so those cases compare sets (see `assert_same_up_to_ties`).
"""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path

import pytest
from conftest import read_sample, shared_path

tokenizers = pytest.importorskip("tokenizers")
import tokenmill  # noqa: E402
from tokenmill import trainers  # noqa: E402

train_from_counts = tokenmill._native.trainers._train_bpe_from_word_counts

CORPORA = {
    "english": ("gutenberg", "pg244_en_a_study_in_scarlet.txt"),
    "german": ("gutenberg", "pg34811_de_buddenbrooks.txt"),
    "chinese": ("sighan2005", "pku_test.utf8"),
}


def corpus_lines(name: str, max_bytes: int = 400_000) -> list[str]:
    return read_sample(shared_path("corpora", *CORPORA[name]), max_bytes).splitlines(keepends=True)


def code_lines(max_bytes: int = 400_000) -> list[str]:
    """Python standard library sources (the code corpus of corpora/MANIFEST.md section 5)."""
    import os
    import sysconfig

    root = sysconfig.get_paths()["stdlib"]
    out, size = [], 0
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(
            x for x in dirs if x not in ("site-packages", "dist-packages", "__pycache__", "test")
        )
        for f in sorted(files):
            if f.endswith(".py") and size < max_bytes:
                text = Path(d, f).read_bytes().decode("utf-8", "replace")
                out += text.splitlines(keepends=True)
                size += len(text)
    return out


def reference(lines, pre_tok, **options):
    """tokenizers' trained vocab and merges, and the word counts it trained on."""
    tk = tokenizers.Tokenizer(tokenizers.models.BPE())
    tk.pre_tokenizer = pre_tok
    tk.train_from_iterator(lines, tokenizers.trainers.BpeTrainer(show_progress=False, **options))
    model = json.loads(tk.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    counts = Counter(w for line in lines for w, _ in pre_tok.pre_tokenize_str(line))
    return model["vocab"], merges, counts


def ours(counts, **options):
    return train_from_counts(trainers.BpeTrainer(show_progress=False, **options), counts)


def untied_limit(lines, pre_tok, near: int) -> int:
    """An alphabet limit close to `near` where the kept and dropped characters have different
    counts (tokenizers breaks ties there in hash order, so a tied cut would be a coin toss)."""
    chars = Counter()
    for line in lines:
        for w, _ in pre_tok.pre_tokenize_str(line):
            chars.update(w)
    freqs = sorted(chars.values(), reverse=True)
    return next(n for n in range(near, len(freqs)) if freqs[n - 1] != freqs[n])


def with_limit(options, lines, pre_tok):
    if "limit_alphabet" in options:
        options = dict(
            options, limit_alphabet=untied_limit(lines, pre_tok, options["limit_alphabet"])
        )
    return options


def forms_in_reference_order(vocab, options):
    """The `##x` / `x</w>` tokens in the id order tokenizers gave them (its hash order)."""
    prefix = options.get("continuing_subword_prefix") or ""
    suffix = options.get("end_of_word_suffix") or ""

    def is_form(t):
        core = t[len(prefix) :] if prefix and t.startswith(prefix) else t
        core = core[: -len(suffix)] if suffix and core.endswith(suffix) else core
        return len(core) == 1 and core != t

    return [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if is_form(t)]


@pytest.mark.parametrize("name", ["english", "german", "chinese", "code"])
def test_byte_level_same_merges_and_vocab(name):
    lines = code_lines() if name == "code" else corpus_lines(name)
    pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    options = dict(
        vocab_size=3000,
        min_frequency=2,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
    )
    vocab, merges, counts = reference(lines, pre, **options)
    result = ours(counts, **options)
    assert result["merges"] == merges
    assert result["vocab"] == vocab


@pytest.mark.parametrize(
    "options",
    [
        dict(vocab_size=2000, limit_alphabet=60, special_tokens=["[UNK]", "e", "[CLS]", "[UNK]"]),
        dict(vocab_size=2000, min_frequency=40),
        dict(vocab_size=2000, max_token_length=4),
        dict(vocab_size=2000, max_token_length=2),
        dict(vocab_size=100_000, min_frequency=1),
    ],
    ids=[
        "limit_alphabet+specials",
        "min_frequency",
        "max_token_length4",
        "max_token_length2",
        "to_exhaustion",
    ],
)
def test_classic_options_same_merges_and_vocab(options):
    lines = corpus_lines("german", 200_000)
    options = with_limit(options, lines, tokenizers.pre_tokenizers.Whitespace())
    vocab, merges, counts = reference(lines, tokenizers.pre_tokenizers.Whitespace(), **options)
    result = ours(counts, **options)
    assert result["merges"] == merges
    assert result["vocab"] == vocab


@pytest.mark.parametrize(
    "options",
    [
        dict(vocab_size=2500, continuing_subword_prefix="##"),
        dict(vocab_size=2500, end_of_word_suffix="</w>"),
        dict(
            vocab_size=2500,
            continuing_subword_prefix="##",
            end_of_word_suffix="</w>",
            limit_alphabet=70,
        ),
    ],
    ids=["prefix", "suffix", "both"],
)
@pytest.mark.parametrize("name", ["english", "german"])
def test_prefix_suffix_same_as_reference_and_deterministic(name, options):
    lines = corpus_lines(name, 300_000)
    options = with_limit(options, lines, tokenizers.pre_tokenizers.Whitespace())
    vocab, merges, counts = reference(lines, tokenizers.pre_tokenizers.Whitespace(), **options)
    # Replaying tokenizers' (hash) id order of the ##x / x</w> forms gives exactly its result.
    replay = train_from_counts(
        trainers.BpeTrainer(show_progress=False, **options),
        counts,
        forms_in_reference_order(vocab, options),
    )
    assert replay["merges"] == merges
    assert replay["vocab"] == vocab
    # By default those forms are in code-point order: deterministic, same initial tokens and size.
    result = ours(counts, **options)
    assert ours(dict(reversed(list(counts.items()))), **options) == result
    forms = forms_in_reference_order(result["vocab"], options)
    assert forms == sorted(forms)
    assert set(forms) == set(forms_in_reference_order(vocab, options))
    assert len(result["vocab"]) == len(vocab) and len(result["merges"]) == len(merges)


COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]


def test_course_corpus_first_merge_and_history():
    pre = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    vocab, merges, counts = reference(COURSE, pre, vocab_size=50)
    trainer = trainers.BpeTrainer(vocab_size=50, show_progress=False)
    result = train_from_counts(trainer, counts)
    assert result["merges"] == merges and result["vocab"] == vocab
    assert trainer.merge_history[0] == ("Ġ", "t", 7)
    assert [(a, b) for a, b, _ in trainer.merge_history] == merges


def test_attributes_and_pickle():
    t = trainers.BpeTrainer(
        vocab_size=123,
        min_frequency=4,
        special_tokens=["<s>", "</s>"],
        initial_alphabet=["ab", "c", ""],
        end_of_word_suffix="</w>",
    )
    assert isinstance(t, trainers.Trainer)
    assert (t.vocab_size, t.min_frequency, [s.content for s in t.special_tokens]) == (
        123,
        4,
        ["<s>", "</s>"],
    )
    assert t.initial_alphabet == ["a", "c"]
    t.vocab_size, t.max_token_length, t.continuing_subword_prefix = 77, 9, "##"
    t.special_tokens = [tokenizers.AddedToken("<pad>", special=True)]
    u = pickle.loads(pickle.dumps(t))
    assert type(u) is trainers.BpeTrainer
    changed = dict(vocab_size=77, max_token_length=9, continuing_subword_prefix="##")
    assert {name: getattr(u, name) for name in changed} == changed
    assert u.end_of_word_suffix == "</w>"
    assert [s.content for s in u.special_tokens] == ["<pad>"]
    reference = tokenizers.trainers.BpeTrainer(
        vocab_size=77,
        min_frequency=4,
        special_tokens=[tokenizers.AddedToken("<pad>", special=True)],
        initial_alphabet=["c"],
        end_of_word_suffix="</w>",
        continuing_subword_prefix="##",
        max_token_length=9,
    )
    u.initial_alphabet = ["c"]  # tokenizers prints its alphabet in hash order: compare one char
    assert repr(u) == repr(reference) and str(u) == str(reference)
    with pytest.raises(TypeError):
        trainers.BpeTrainer(special_tokens=[3])


needs_tokenizer = pytest.mark.skipif(
    not hasattr(tokenmill, "Tokenizer"),
    reason="tokenmill.Tokenizer is not built into this package yet",
)


@needs_tokenizer
@pytest.mark.parametrize("name", ["english", "chinese"])
def test_tokenizer_training_same_as_tokenizers(name, tmp_path):
    """Through the whole pipeline: Tokenizer.train(files) and train_from_iterator (batches too)."""
    lines = corpus_lines(name, 300_000)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(lines), encoding="utf-8")
    options = dict(vocab_size=2000, min_frequency=2, special_tokens=["<|endoftext|>"])
    models = []
    for lib in (tokenizers, tokenmill):
        for how in ("files", "iterator", "batches"):
            tk = lib.Tokenizer(lib.models.BPE())
            tk.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=False)
            trainer = lib.trainers.BpeTrainer(
                show_progress=False,
                initial_alphabet=lib.pre_tokenizers.ByteLevel.alphabet(),
                **options,
            )
            if how == "files":
                tk.train([str(path)], trainer)
            elif how == "iterator":
                tk.train_from_iterator(iter(lines), trainer, length=len(lines))
            else:
                tk.train_from_iterator(
                    [lines[i : i + 100] for i in range(0, len(lines), 100)], trainer
                )
            models.append(json.loads(tk.to_str())["model"])
    assert all(m == models[0] for m in models[1:])


@needs_tokenizer
def test_invalid_utf8_in_training_file_names_file_line_and_byte(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_bytes(b"fine\nalso fine\nnot \xc3\x28 fine\n")
    tk = tokenmill.Tokenizer(tokenmill.models.BPE())
    with pytest.raises(tokenmill.FormatError) as e:
        tk.train([str(path)], trainers.BpeTrainer(show_progress=False))
    message = str(e.value)
    assert "broken.txt" in message and "line 3" in message and "byte offset 19" in message
