"""BertWordPieceTokenizer: BERT's tokenizer (WordPiece with the BERT normalizer and
pre-tokenizer)."""

from __future__ import annotations

import os
from typing import Dict, Optional, Sequence, Union

import tokenmill
from tokenmill import decoders, trainers
from tokenmill.implementations.base_tokenizer import BaseTokenizer, described, training_methods
from tokenmill.models import WordPiece
from tokenmill.normalizers import BertNormalizer
from tokenmill.pre_tokenizers import BertPreTokenizer
from tokenmill.processors import BertProcessing

_DEFAULT_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _trainer(
    vocab_size: int = 30000,
    min_frequency: int = 2,
    limit_alphabet: int = 1000,
    initial_alphabet: Sequence[str] = (),
    special_tokens: Sequence[Union[str, tokenmill.AddedToken]] = tuple(_DEFAULT_SPECIAL_TOKENS),
    show_progress: bool = True,
    wordpieces_prefix: str = "##",
    algorithm: str = "bpe",
) -> trainers.WordPieceTrainer:
    """The trainer of :meth:`BertWordPieceTokenizer.train` (``algorithm``: see
    :class:`tokenmill.trainers.WordPieceTrainer`)."""
    return trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        limit_alphabet=limit_alphabet,
        initial_alphabet=list(initial_alphabet),
        special_tokens=list(special_tokens),
        show_progress=show_progress,
        continuing_subword_prefix=wordpieces_prefix,
        algorithm=algorithm,
    )


class BertWordPieceTokenizer(BaseTokenizer):
    """BERT's WordPiece tokenizer, as ``tokenizers.implementations.BertWordPieceTokenizer``.

    ``vocab`` is a ``vocab.txt`` path or a dict token → id (or None, to train one). The text is
    cleaned by :class:`~tokenmill.normalizers.BertNormalizer` (``clean_text``,
    ``handle_chinese_chars``, ``strip_accents`` — None means "when lowercasing" — and
    ``lowercase``), split by :class:`~tokenmill.pre_tokenizers.BertPreTokenizer`, and each word
    cut into WordPiece tokens (``wordpieces_prefix`` marks continuations). With a vocabulary,
    ``[CLS] … [SEP]`` are added by :class:`~tokenmill.processors.BertProcessing` and the special
    tokens present in it are registered.

    Reading a ``vocab.txt`` checks it: a duplicated token, invalid UTF-8, or an ``unk_token``
    missing from it raise :class:`tokenmill.FormatError` naming the file (and line).
    """

    def __init__(
        self,
        vocab: Optional[Union[str, os.PathLike, Dict[str, int]]] = None,
        unk_token: Union[str, tokenmill.AddedToken] = "[UNK]",
        sep_token: Union[str, tokenmill.AddedToken] = "[SEP]",
        cls_token: Union[str, tokenmill.AddedToken] = "[CLS]",
        pad_token: Union[str, tokenmill.AddedToken] = "[PAD]",
        mask_token: Union[str, tokenmill.AddedToken] = "[MASK]",
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: Optional[bool] = None,
        lowercase: bool = True,
        wordpieces_prefix: str = "##",
    ):
        parameters = described("BertWordPiece", locals())
        if isinstance(vocab, (str, os.PathLike)):
            model = WordPiece.from_file(
                vocab, unk_token=str(unk_token), continuing_subword_prefix=wordpieces_prefix
            )
        elif vocab is not None:
            model = WordPiece(
                vocab, unk_token=str(unk_token), continuing_subword_prefix=wordpieces_prefix
            )
        else:
            model = WordPiece(unk_token=str(unk_token), continuing_subword_prefix=wordpieces_prefix)
        tokenizer = tokenmill.Tokenizer(model)

        # Register the special tokens that are part of the vocabulary.
        for token in (unk_token, sep_token, cls_token, pad_token, mask_token):
            if tokenizer.token_to_id(str(token)) is not None:
                tokenizer.add_special_tokens([str(token)])

        tokenizer.normalizer = BertNormalizer(
            clean_text=clean_text,
            handle_chinese_chars=handle_chinese_chars,
            strip_accents=strip_accents,
            lowercase=lowercase,
        )
        tokenizer.pre_tokenizer = BertPreTokenizer()

        if vocab is not None:
            sep_token_id = tokenizer.token_to_id(str(sep_token))
            if sep_token_id is None:
                raise TypeError("sep_token not found in the vocabulary")
            cls_token_id = tokenizer.token_to_id(str(cls_token))
            if cls_token_id is None:
                raise TypeError("cls_token not found in the vocabulary")
            tokenizer.post_processor = BertProcessing(
                (str(sep_token), sep_token_id), (str(cls_token), cls_token_id)
            )
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)

        super().__init__(tokenizer, parameters)

    @staticmethod
    def from_file(vocab: Union[str, os.PathLike], **kwargs) -> BertWordPieceTokenizer:
        """A tokenizer from ``vocab.txt`` (one token per line, the line number is the id)."""
        return BertWordPieceTokenizer(vocab, **kwargs)

    train, train_from_iterator = training_methods(_trainer, length_before="algorithm")
