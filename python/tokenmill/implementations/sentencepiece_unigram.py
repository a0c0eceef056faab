"""SentencePieceUnigramTokenizer: Unigram with SentencePiece's whitespace handling (▁), as
``tokenizers.implementations.SentencePieceUnigramTokenizer``."""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

import tokenmill
from tokenmill import Regex, normalizers, trainers
from tokenmill.implementations.base_tokenizer import (
    BaseTokenizer,
    described,
    set_metaspace,
    training_methods,
)
from tokenmill.models import Unigram


def _trainer(
    vocab_size: int = 8000,
    show_progress: bool = True,
    special_tokens: Optional[List[Union[str, tokenmill.AddedToken]]] = None,
    initial_alphabet: Optional[List[str]] = None,
    unk_token: Optional[str] = None,
) -> trainers.UnigramTrainer:
    """The trainer of :meth:`SentencePieceUnigramTokenizer.train`."""
    return trainers.UnigramTrainer(
        vocab_size=vocab_size,
        special_tokens=special_tokens or [],
        show_progress=show_progress,
        initial_alphabet=initial_alphabet or [],
        unk_token=unk_token,
    )


class SentencePieceUnigramTokenizer(BaseTokenizer):
    """Unigram on Nmt + NFKC text with runs of spaces collapsed, spaces shown as
    ``replacement`` (▁) and a ▁ prepended (``add_prefix_space``): ``tokenizers``' class
    (constructor, ``train``, ``train_from_iterator``, ``from_spm``).

    ``from_spm`` differs on purpose: ``tokenizers``' version needs ``protobuf`` and drops parts
    of the model (piece types, ``remove_extra_whitespaces``, the exact dummy prefix), so its
    encodings can differ from sentencepiece's; tokenmill reads the ``.model`` itself and builds
    a tokenizer that encodes exactly as sentencepiece does."""

    def __init__(
        self,
        vocab: Optional[List[Tuple[str, float]]] = None,
        replacement: str = "▁",
        add_prefix_space: bool = True,
    ):
        parameters = described("SentencePieceUnigram", locals())
        tokenizer = tokenmill.Tokenizer(Unigram(vocab) if vocab is not None else Unigram())
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.Nmt(), normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        set_metaspace(tokenizer, replacement, add_prefix_space)
        super().__init__(tokenizer, parameters)

    train, train_from_iterator = training_methods(_trainer)

    @staticmethod
    def from_spm(filename) -> SentencePieceUnigramTokenizer:
        """A tokenizer that encodes exactly as the SentencePiece Unigram ``.model`` ``filename``
        (a path, serialized bytes or a ``SentencePieceProcessor``): precompiled charsmap, dummy
        prefix, extra-whitespace removal, byte fallback and unknown fusion as sentencepiece (see
        :func:`tokenmill.sentencepiece.to_tokenizer`)."""
        from tokenmill.sentencepiece import to_tokenizer

        obj = SentencePieceUnigramTokenizer.__new__(SentencePieceUnigramTokenizer)
        BaseTokenizer.__init__(obj, to_tokenizer(filename), {"model": "SentencePieceUnigram"})
        return obj
