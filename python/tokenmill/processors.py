"""Post-processors: add special tokens and join the encodings of a pair of inputs.

Same classes and arguments as ``tokenizers.processors``:

- :class:`PostProcessor`: the base class (``num_special_tokens_to_add(is_pair)``,
  ``process(encoding, pair=None, add_special_tokens=True)``, pickling).
- :class:`TemplateProcessing`: special tokens placed by templates such as
  ``"[CLS] $A [SEP] $B:1 [SEP]:1"``, with per-piece type ids and specials that stand for
  one or several tokens.
- :class:`BertProcessing`: ``[CLS] A [SEP] B [SEP]``, type ids 0 then 1.
- :class:`RobertaProcessing`: ``<s> A </s> </s> B </s>``, type ids 0, offsets trimmed.
- :class:`ByteLevel`: trims the spaces of byte-level tokens out of their offsets.
- :class:`Sequence`: post-processors applied in order.

Added special tokens have no word (``word_ids`` gives ``None``), offsets ``(0, 0)`` and are
marked in ``special_tokens_mask``; overflowing windows (from truncation) are processed too.
"""

from tokenmill._native.processors import (
    BertProcessing,
    ByteLevel,
    PostProcessor,
    RobertaProcessing,
    Sequence,
    TemplateProcessing,
)

__all__ = [
    "PostProcessor",
    "BertProcessing",
    "RobertaProcessing",
    "ByteLevel",
    "TemplateProcessing",
    "Sequence",
]
