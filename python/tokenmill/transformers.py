"""tokenmill as the backend of Hugging Face ``transformers`` fast tokenizers.

A ``transformers`` fast tokenizer (``PreTrainedTokenizerFast`` / ``TokenizersBackend`` and its
subclasses: ``BertTokenizerFast``, ``GPT2TokenizerFast``, ``LlamaTokenizerFast``...) keeps its
pipeline in ``tok._tokenizer``, a ``tokenizers.Tokenizer``. :func:`accelerate` swaps that for a
:class:`tokenmill.Tokenizer` loaded from the same tokenizer.json, so ``tok(...)``,
``batch_decode``, ``apply_chat_template``, ``add_tokens``, ``save_pretrained``... give the same
results with tokenmill doing the work. :func:`from_pretrained` loads a model directory that way.

``transformers`` keeps assigning ``tokenizers`` objects to the backend (a ``TemplateProcessing``
when ``add_bos_token`` changes, ``AddedToken`` objects in ``add_tokens``); tokenmill converts them
on the way in (see ``tokenmill._foreign``).

``transformers`` is an optional dependency: it is imported by this module only, never by
``import tokenmill``. ``train_new_from_iterator`` stays transformers' own code (it trains with
``tokenizers`` and returns a tokenizer backed by it); pass its result to :func:`accelerate`.
"""

from __future__ import annotations

import os
from typing import Any

from tokenmill.tokenizer import Tokenizer

__all__ = ["accelerate", "from_pretrained", "is_accelerated"]


def is_accelerated(tokenizer: Any) -> bool:
    """Whether the transformers tokenizer ``tokenizer`` already runs on tokenmill."""
    return isinstance(getattr(tokenizer, "_tokenizer", None), Tokenizer)


def accelerate(tokenizer: Any) -> Any:
    """Makes a transformers fast tokenizer run on tokenmill; returns the same object.

    The ``tokenizers`` backend (``tokenizer.backend_tokenizer``) is replaced by a
    :class:`tokenmill.Tokenizer` loaded from its tokenizer.json (model, normalizer,
    pre-tokenizer, post-processor, decoder, added tokens, truncation and padding), and the
    ``split_special_tokens`` setting is carried over; patches a tokenizer class makes to its
    backend object in ``__init__`` (CLIP's ``decode`` wrapper) are made again on the new one.
    Calling it again does nothing.

    Raises:
        TypeError: ``tokenizer`` is not a fast tokenizer (a "slow" Python or SentencePiece one
            has no backend to replace; load it with ``use_fast=True``), or its backend holds a
            custom Python component (RoFormer's Jieba pre-tokenizer), which tokenizer.json
            cannot hold.
    """
    if is_accelerated(tokenizer):
        return tokenizer
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or not callable(getattr(backend, "to_str", None)):
        raise TypeError(
            f"expected a transformers fast tokenizer (with a tokenizers backend), "
            f"got {type(tokenizer).__module__}.{type(tokenizer).__qualname__}"
        )
    try:
        state = backend.to_str()
    except Exception as error:  # tokenizers raises Exception for custom (Python) components
        raise TypeError(
            f"this tokenizer's backend cannot be saved as tokenizer.json, so not moved: {error}"
        ) from error
    replacement = Tokenizer.from_str(state)
    replacement.encode_special_tokens = backend.encode_special_tokens
    tokenizer._tokenizer = replacement
    _reapply_backend_patches(tokenizer)
    return tokenizer


# Methods of transformers tokenizer classes that patch the backend object itself in __init__
# (what tokenizer.json cannot carry), run again on the new backend. CLIPTokenizer wraps
# backend.decode to turn its "</w>" word ends into spaces.
_BACKEND_PATCH_HOOKS = ("_wrap_decode_method_backend_tokenizer",)


def _reapply_backend_patches(tokenizer: Any) -> None:
    for name in _BACKEND_PATCH_HOOKS:
        hook = getattr(tokenizer, name, None)
        if callable(hook):
            hook()


def from_pretrained(path: str | os.PathLike, **kwargs: Any) -> Any:
    """Loads the tokenizer of a model directory with ``transformers.AutoTokenizer`` (so the
    class it names in tokenizer_config.json: ``BertTokenizerFast``, ``LlamaTokenizerFast``...,
    else ``PreTrainedTokenizerFast``) and makes it run on tokenmill (:func:`accelerate`).

    Keyword arguments go to ``AutoTokenizer.from_pretrained``. Nothing is downloaded unless
    ``local_files_only=False`` is given: ``local_files_only`` defaults to True.

    Raises:
        ImportError: transformers is not installed.
        TypeError: transformers loaded a tokenizer with no fast backend.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as error:
        raise ImportError(
            "tokenmill.transformers.from_pretrained needs transformers installed"
        ) from error
    kwargs.setdefault("local_files_only", True)
    return accelerate(AutoTokenizer.from_pretrained(os.fspath(path), **kwargs))
