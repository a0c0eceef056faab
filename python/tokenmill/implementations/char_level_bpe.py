"""CharBPETokenizer: the original character-level BPE (Sennrich et al.) with ``</w>``."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import tokenmill
from tokenmill import decoders, normalizers, pre_tokenizers, trainers
from tokenmill.implementations.base_tokenizer import (
    BaseTokenizer,
    BPEFilesMixin,
    bpe_tokenizer,
    set_normalizers,
    training_methods,
)


def _trainer(
    vocab_size: int = 30000,
    min_frequency: int = 2,
    special_tokens: Sequence[Union[str, tokenmill.AddedToken]] = ("<unk>",),
    limit_alphabet: int = 1000,
    initial_alphabet: Sequence[str] = (),
    suffix: Optional[str] = "</w>",
    show_progress: bool = True,
) -> trainers.BpeTrainer:
    """The trainer of :meth:`CharBPETokenizer.train`: BPE whose words end with ``suffix``."""
    return trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(special_tokens),
        limit_alphabet=limit_alphabet,
        initial_alphabet=list(initial_alphabet),
        end_of_word_suffix=suffix,
        show_progress=show_progress,
    )


class CharBPETokenizer(BPEFilesMixin, BaseTokenizer):
    """Original BPE (https://arxiv.org/abs/1508.07909) with OpenAI GPT's defaults.

    Unlike Sennrich's subword-nmt, by default it cleans the text with the BERT normalizer
    (control characters removed, whitespace unified, spaces around CJK characters, accents kept
    unless ``lowercase``) — turn off with ``bert_normalizer=False`` — and splits on punctuation
    as well as whitespace — turn off with ``split_on_whitespace_only=True``. The last symbol of
    each word carries ``suffix`` (``</w>``).
    """

    def __init__(
        self,
        vocab: Optional[Union[str, Dict[str, int]]] = None,
        merges: Optional[Union[str, List[Tuple[str, str]]]] = None,
        unk_token: Union[str, tokenmill.AddedToken] = "<unk>",
        suffix: str = "</w>",
        dropout: Optional[float] = None,
        lowercase: bool = False,
        unicode_normalizer: Optional[str] = None,
        bert_normalizer: bool = True,
        split_on_whitespace_only: bool = False,
    ):
        tokenizer = bpe_tokenizer(
            vocab, merges, unk_token, dropout=dropout, end_of_word_suffix=suffix
        )

        bert = [normalizers.BertNormalizer(lowercase=False)] if bert_normalizer else []
        set_normalizers(tokenizer, unicode_normalizer, lowercase, *bert)

        if split_on_whitespace_only:
            tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        else:
            tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)

        parameters = {
            "model": "BPE",
            "unk_token": unk_token,
            "suffix": suffix,
            "dropout": dropout,
            "lowercase": lowercase,
            "unicode_normalizer": unicode_normalizer,
            "bert_normalizer": bert_normalizer,
            "split_on_whitespace_only": split_on_whitespace_only,
        }
        super().__init__(tokenizer, parameters)

    train, train_from_iterator = training_methods(_trainer)
