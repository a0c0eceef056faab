"""Models: turn one pre-tokenized piece of text (a word) into tokens.

Same classes and arguments as ``tokenizers.models``:

- :class:`Model`: the base class (``tokenize``, ``token_to_id``, ``id_to_token``, ``get_vocab``,
  ``get_vocab_size``, ``save``).
- :class:`BPE`: byte-pair encoding, classic (``end_of_word_suffix="</w>"`` or
  ``continuing_subword_prefix="##"``) or byte-level (with the ``ByteLevel`` pre-tokenizer), with
  ``unk_token``, ``fuse_unk``, ``byte_fallback`` (``<0xNN>`` tokens), ``dropout`` (tokenmill adds
  ``dropout_seed`` for reproducible dropout), ``ignore_merges`` and a per-thread word cache.
  ``BPE.from_file`` / ``BPE.read_file`` read ``vocab.json`` + ``merges.txt`` (or the data-gym
  ``encoder.json`` + ``vocab.bpe``); ``save`` writes them atomically.
- :class:`WordPiece`: BERT's greedy longest-match-first subwords (``unk_token``,
  ``continuing_subword_prefix``, ``max_input_chars_per_word``), in time linear in the word
  length. ``WordPiece.from_file`` / ``WordPiece.read_file`` read ``vocab.txt`` (a duplicated
  token, invalid UTF-8 or — for ``from_file`` — a missing unk token raise ``FormatError``
  naming the file and line; ``tokenizers`` keeps the later id of a duplicate silently);
  ``save`` writes ``vocab.txt`` in id order.
- :class:`WordLevel`: each word is one token, looked up whole (``unk_token``, default
  ``"<unk>"``; a word outside the vocabulary raises when the vocabulary lacks the unk token,
  with ``tokenizers``' message). ``WordLevel.from_file`` / ``WordLevel.read_file`` read
  ``vocab.json`` (malformed JSON or a non-integer id raise ``FormatError`` naming the file and
  line; ``tokenizers`` skips non-number ids); ``save`` writes ``vocab.json`` in id order.
- :class:`Unigram`: SentencePiece's unigram language model (``vocab`` of (piece, log-prob),
  ``unk_id``, ``byte_fallback``); the best segmentation exactly as ``tokenizers``, plus
  ``nbest`` (sentencepiece's n-best), ``sample`` (subword regularization from the n best or the
  whole lattice, seedable), ``entropy`` and ``log_likelihood``.
- :class:`Token`: ``id``, ``value``, ``offsets`` (byte offsets within the piece, as
  ``tokenizers`` gives them from ``Model.tokenize``).

Merge order: the lowest-ranked merge applies first; among equal ranks the leftmost pair.
"""

from tokenmill import _native

_native_module = _native.models

Model = _native_module.Model
BPE = _native_module.BPE
WordPiece = _native_module.WordPiece
WordLevel = _native_module.WordLevel
Unigram = _native_module.Unigram
Token = _native_module.Token

__all__ = ["Model", "BPE", "WordPiece", "WordLevel", "Unigram", "Token"]
