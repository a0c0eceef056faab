"""Trainers: learn a model's vocabulary from a corpus.

``BpeTrainer`` has the constructor, attributes and results of ``tokenizers.trainers.BpeTrainer``
(the same merges and vocabulary on the same corpus). Use it with
``Tokenizer.train(files, trainer)`` or ``Tokenizer.train_from_iterator(iterator, trainer)``.

Tie-breaking (deterministic): at each step the pair with the highest count is merged; ties go to
the lowest pair of ids. Ids go to the special tokens first, then the alphabet in code-point order,
then the ``##x`` / ``x</w>`` forms of characters in code-point order of their text, then merged
tokens in the order they are learned. With ``limit_alphabet`` the most frequent characters are
kept, the lower code points among equally frequent ones.

``UnigramTrainer`` has the options of ``tokenizers.trainers.UnigramTrainer`` and follows
SentencePiece's algorithm (suffix-array seeds, EM with digamma updates, pruning by likelihood
loss); it is deterministic (ties go to the lexicographically smaller piece).

``WordLevelTrainer`` has the options of ``tokenizers.trainers.WordLevelTrainer`` and learns the
same vocabulary: the special tokens first, then the words by decreasing count, **words of equal
count in increasing byte (code-point) order**, cut at ``vocab_size``; words seen fewer than
``min_frequency`` times are left out. As in ``tokenizers``, a special token that is also a
corpus word keeps the word's (later) id, leaving its own id unused.

Every trainer's ``special_tokens`` gives ``AddedToken`` objects (special, and not normalized
unless set so), and accepts ``str`` or ``AddedToken``. A trainer only trains its own kind of
model: another kind raises before anything is read (``tokenizers``' message, e.g.
``UnigramTrainer can only train a Unigram``).

After training, ``BpeTrainer.merge_history`` lists every merge as ``(left, right, count)``.

``WordPieceTrainer`` has the options of ``tokenizers.trainers.WordPieceTrainer`` and two
algorithms: ``algorithm="bpe"`` (default) is what ``tokenizers`` does — BPE training with the
``##`` prefix, keeping the vocabulary (the same vocabulary, same tie rules as above);
``algorithm="likelihood"`` is classic WordPiece: merge the pair with the highest
``count(ab) / (count(a) * count(b))`` (exact comparison; ties to the lowest pair of ids; pairs
seen fewer than ``min_frequency`` times never merge). Its ``merge_history`` gives
``(left, right, count)`` or ``(left, right, score)``.

Memory: every trainer takes ``max_memory`` (bytes, or ``"2GB"``, ``"512MiB"``...; default half
of the RAM) and ``spill_dir``. Counting keeps its table of distinct words within the budget by
spilling sorted runs to disk and merging them exactly (the same counts, hence the same model);
training checks up front that its own tables fit in the budget and raises
``InvalidArgumentError`` naming the sizes if they do not. :func:`count_words` counts on its own
and gives a mergeable :class:`WordCounts` (``+``, ``save`` / ``load``, pickling), which
``trainer.train_from_counts`` and ``Tokenizer.train_from_counts`` train on.
"""

import os

from tokenmill import _native

_native_module = _native.trainers

Trainer = _native_module.Trainer
BpeTrainer = _native_module.BpeTrainer
WordPieceTrainer = _native_module.WordPieceTrainer
WordLevelTrainer = _native_module.WordLevelTrainer
UnigramTrainer = _native_module.UnigramTrainer
WordCounts = _native_module.WordCounts


def count_words(files_or_iterator, tokenizer=None, *, max_memory=None, spill_dir=None):
    """Counts the words training would count, exactly, within a memory budget.

    ``files_or_iterator``: a path, or a list or tuple of paths (text files, read line by line
    as ``Tokenizer.train`` reads them), or any other iterable of ``str`` (or of batches of
    ``str``), as ``Tokenizer.train_from_iterator`` takes. A list of texts is read as paths:
    pass ``iter(texts)``. ``tokenizer`` cuts the text into words (its normalizer,
    pre-tokenizer and added tokens, as training does); None cuts nothing (each line or text is
    one word, as a tokenizer without a pre-tokenizer). ``max_memory`` (bytes, or a size such as
    ``"2GB"``; default half of the RAM) bounds the table of distinct words: beyond it, sorted
    runs are spilled to a temporary folder in ``spill_dir`` (default: the system's) and merged
    at the end. Returns a :class:`WordCounts`; ``trainer.train_from_counts(counts)`` or
    ``Tokenizer.train_from_counts(counts, trainer)`` train on it.
    """
    if tokenizer is None:
        from tokenmill.models import BPE
        from tokenmill.tokenizer import Tokenizer

        tokenizer = Tokenizer(BPE())
    source = files_or_iterator
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    if isinstance(source, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in source):
        files, iterator = [os.fspath(p) for p in source], None
    else:
        files, iterator = None, source
    return tokenizer._count_words(files, iterator, max_memory, spill_dir)


__all__ = [
    "Trainer",
    "BpeTrainer",
    "WordPieceTrainer",
    "WordLevelTrainer",
    "UnigramTrainer",
    "WordCounts",
    "count_words",
]
