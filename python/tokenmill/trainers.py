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
"""

from tokenmill import _native

_native_module = _native.trainers

Trainer = _native_module.Trainer
BpeTrainer = _native_module.BpeTrainer
WordPieceTrainer = _native_module.WordPieceTrainer
WordLevelTrainer = _native_module.WordLevelTrainer
UnigramTrainer = _native_module.UnigramTrainer

__all__ = ["Trainer", "BpeTrainer", "WordPieceTrainer", "WordLevelTrainer", "UnigramTrainer"]
