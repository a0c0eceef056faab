"""Ready-made tokenizers, as ``tokenizers.implementations``.

- :class:`ByteLevelBPETokenizer`: GPT-2 style byte-level BPE (``ByteLevel`` pre-tokenizer,
  decoder and post-processor).
- :class:`CharBPETokenizer`: the original (Sennrich) character BPE with an end-of-word suffix
  (``</w>``), BERT normalizer and pre-tokenizer by default.
- :class:`BertWordPieceTokenizer`: BERT's WordPiece tokenizer (BERT normalizer and
  pre-tokenizer, ``[CLS] … [SEP]``), from ``vocab.txt`` or trained.
- :class:`SentencePieceBPETokenizer`, :class:`SentencePieceUnigramTokenizer`: BPE / Unigram
  with SentencePiece's ▁ whitespace; ``from_spm`` builds one that encodes exactly as a
  sentencepiece ``.model``.
- :class:`BaseTokenizer`: wraps a :class:`tokenmill.Tokenizer` and forwards to it.

Each one can be built from its model files (``from_file``: ``vocab.json`` + ``merges.txt``, or
``vocab.txt`` for WordPiece), trained
(``train`` / ``train_from_iterator``) and saved (``save_model`` writes the model files, ``save``
the whole tokenizer.json).

What lives here: one module per tokenizer; ``base_tokenizer`` holds what they share (the
forwarding base class, the BPE model and normalizer set-up, the character BPE trainer, the
training methods, the parameters each records).
May import: the standard library and ``tokenmill``'s public modules (never ``tokenmill._native``
directly); a tokenizer module may import ``base_tokenizer``, not another tokenizer module.
"""

from tokenmill.implementations.base_tokenizer import BaseTokenizer
from tokenmill.implementations.bert_wordpiece import BertWordPieceTokenizer
from tokenmill.implementations.byte_level_bpe import ByteLevelBPETokenizer
from tokenmill.implementations.char_level_bpe import CharBPETokenizer
from tokenmill.implementations.sentencepiece_bpe import SentencePieceBPETokenizer
from tokenmill.implementations.sentencepiece_unigram import SentencePieceUnigramTokenizer

__all__ = [
    "BaseTokenizer",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
]
