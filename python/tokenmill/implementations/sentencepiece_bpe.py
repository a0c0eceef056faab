"""SentencePieceBPETokenizer: BPE with SentencePiece's whitespace handling (▁), as
``tokenizers.implementations.SentencePieceBPETokenizer``, plus ``from_spm``."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Union

import tokenmill
from tokenmill.implementations.base_tokenizer import (
    BaseTokenizer,
    BPEFilesMixin,
    bpe_tokenizer,
    bpe_trainer,
    described,
    set_metaspace,
    training_methods,
)
from tokenmill.normalizers import NFKC


class SentencePieceBPETokenizer(BPEFilesMixin, BaseTokenizer):
    """BPE on NFKC text where spaces become ``replacement`` (▁) and a ▁ is prepended
    (``add_prefix_space``): the constructor, ``from_file``, ``train`` and
    ``train_from_iterator`` of ``tokenizers``' class. ``from_spm`` builds one that encodes
    exactly as a SentencePiece BPE ``.model`` does (``tokenizers`` has no such method)."""

    def __init__(
        self,
        vocab: Optional[Union[str, Dict[str, int]]] = None,
        merges: Optional[Union[str, List[Tuple[str, str]]]] = None,
        unk_token: Union[str, tokenmill.AddedToken] = "<unk>",
        replacement: str = "▁",
        add_prefix_space: bool = True,
        dropout: Optional[float] = None,
        fuse_unk: Optional[bool] = False,
    ):
        parameters = described("SentencePieceBPE", locals(), "fuse_unk")
        tokenizer = bpe_tokenizer(vocab, merges, unk_token, dropout=dropout, fuse_unk=fuse_unk)
        tokenizer.normalizer = NFKC()
        set_metaspace(tokenizer, replacement, add_prefix_space)
        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_spm(filename) -> SentencePieceBPETokenizer:
        """A tokenizer that encodes exactly as the SentencePiece BPE ``.model`` ``filename`` (a
        path, serialized bytes or a ``SentencePieceProcessor``): its charsmap, dummy prefix,
        byte fallback and user-defined symbols are kept (see
        :func:`tokenmill.sentencepiece.to_tokenizer`)."""
        from tokenmill.sentencepiece import to_tokenizer

        obj = SentencePieceBPETokenizer.__new__(SentencePieceBPETokenizer)
        BaseTokenizer.__init__(obj, to_tokenizer(filename), {"model": "SentencePieceBPE"})
        return obj

    train, train_from_iterator = training_methods(bpe_trainer, fixed={"suffix": None})
