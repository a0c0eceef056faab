"""CharBPETokenizer: the original character-level BPE (Sennrich et al.) with ``</w>``."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Union

import tokenmill
from tokenmill import decoders, normalizers, pre_tokenizers
from tokenmill.implementations.base_tokenizer import (
    BaseTokenizer,
    BPEFilesMixin,
    bpe_tokenizer,
    bpe_trainer,
    described,
    set_normalizers,
    training_methods,
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
        parameters = described("BPE", locals())
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

        super().__init__(tokenizer, parameters)

    train, train_from_iterator = training_methods(bpe_trainer)
