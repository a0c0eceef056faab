"""ByteLevelBPETokenizer: GPT-2 style byte-level BPE."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import tokenmill
from tokenmill import decoders, pre_tokenizers, processors, trainers
from tokenmill.implementations.base_tokenizer import (
    BaseTokenizer,
    BPEFilesMixin,
    described,
    set_normalizers,
    training_methods,
)
from tokenmill.models import BPE


def _trainer(
    vocab_size: int = 30000,
    min_frequency: int = 2,
    show_progress: bool = True,
    special_tokens: Sequence[Union[str, tokenmill.AddedToken]] = (),
) -> trainers.BpeTrainer:
    """The trainer of :meth:`ByteLevelBPETokenizer.train`: the whole byte alphabet is always
    kept."""
    return trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        show_progress=show_progress,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )


class ByteLevelBPETokenizer(BPEFilesMixin, BaseTokenizer):
    """Byte-level BPE as introduced by OpenAI with GPT-2: text is mapped to bytes shown as
    printable characters (``ByteLevel`` pre-tokenizer), so no input is ever unknown.

    ``vocab``/``merges``: a dict and a list of pairs, or the paths of vocab.json and merges.txt;
    without them the model is empty (train it).
    """

    def __init__(
        self,
        vocab: Optional[Union[str, Dict[str, int]]] = None,
        merges: Optional[Union[str, List[Tuple[str, str]]]] = None,
        add_prefix_space: bool = False,
        lowercase: bool = False,
        dropout: Optional[float] = None,
        unicode_normalizer: Optional[str] = None,
        continuing_subword_prefix: Optional[str] = None,
        end_of_word_suffix: Optional[str] = None,
        trim_offsets: bool = False,
    ):
        parameters = described("ByteLevelBPE", locals())
        if vocab is not None and merges is not None:
            model = BPE(
                vocab,
                merges,
                dropout=dropout,
                continuing_subword_prefix=continuing_subword_prefix or "",
                end_of_word_suffix=end_of_word_suffix or "",
            )
        else:
            model = BPE()
        tokenizer = tokenmill.Tokenizer(model)

        set_normalizers(tokenizer, unicode_normalizer, lowercase)

        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)

        super().__init__(tokenizer, parameters)

    train, train_from_iterator = training_methods(_trainer)
