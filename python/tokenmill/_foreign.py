"""Objects of Hugging Face ``tokenizers`` turned into their tokenmill equivalents.

``transformers`` builds its fast tokenizers out of ``tokenizers`` objects and hands them to the
backend (``backend.post_processor = tokenizers.processors.TemplateProcessing(...)``,
``backend.add_tokens([tokenizers.AddedToken(...)])``). The tokenmill setters, ``Tokenizer(model)``,
the ``Sequence`` constructors, ``add_tokens`` / ``add_special_tokens`` and the ``trainer``
arguments call :func:`adopt` with what they were given when it is not a tokenmill object.

An object is recognised as coming from ``tokenizers`` by the module of its type, so
``tokenizers`` is never imported here: only objects the caller built with it are touched. The
conversion goes through the object's JSON state (``__getstate__``), the form ``tokenizer.json``
stores, so whatever ``tokenizers`` can serialise and tokenmill can load is carried over
exactly. The result is a copy: changing the ``tokenizers`` object afterwards does not change
the tokenmill one.
"""

from __future__ import annotations

import json

from tokenmill import _native

__all__ = ["adopt", "is_foreign"]

# The pipeline roles and the ``tokenizers`` module each one's objects come from.
_COMPONENT_MODULES = {
    "normalizer": "tokenizers.normalizers",
    "pre_tokenizer": "tokenizers.pre_tokenizers",
    "model": "tokenizers.models",
    "post_processor": "tokenizers.processors",
    "decoder": "tokenizers.decoders",
}

# A model that holds nothing, to load a lone component through a tokenizer.json.
_EMPTY_MODEL = {"type": "BPE", "vocab": {}, "merges": []}


def is_foreign(obj: object) -> bool:
    """Whether ``obj`` is an object of the Hugging Face ``tokenizers`` package."""
    module = getattr(type(obj), "__module__", None) or ""
    return module == "tokenizers" or module.startswith("tokenizers.")


def adopt(obj: object, role: str) -> object:
    """The tokenmill equivalent of ``obj`` in ``role``, or ``obj`` itself when it does not come
    from ``tokenizers`` (the caller then raises its usual type error).

    ``role`` is one of ``"normalizer"``, ``"pre_tokenizer"``, ``"model"``, ``"post_processor"``,
    ``"decoder"``, ``"trainer"``, ``"added_token"`` or ``"tokenizer"``.

    Raises:
        TypeError: ``obj`` comes from ``tokenizers`` but plays another role (a pre-tokenizer
            given as a normalizer, say), or is a custom component (``tokenizers`` cannot
            serialise those).
        tokenmill.FormatError: tokenmill cannot load the object's JSON state.
    """
    if not is_foreign(obj):
        return obj
    if role == "added_token":
        return _added_token(obj)
    if role == "tokenizer":
        return _native.Tokenizer.from_str(_expect(obj, "tokenizers", "Tokenizer").to_str())
    if role == "trainer":
        return _trainer(obj)
    if role in _COMPONENT_MODULES:
        return _component(obj, role)
    raise ValueError(f"unknown role {role!r}")


def _expect(obj: object, module: str, what: str) -> object:
    """``obj`` when its type lives in ``module``; a TypeError naming both otherwise."""
    found = type(obj).__module__
    if found != module:
        raise TypeError(f"expected a {what}, got {found}.{type(obj).__qualname__}")
    return obj


def _state(obj: object) -> dict:
    """The JSON state of a ``tokenizers`` component, as a dict."""
    try:
        state = obj.__getstate__()
    except Exception as error:  # custom components refuse to serialise
        raise TypeError(
            f"{type(obj).__module__}.{type(obj).__qualname__} cannot be converted to tokenmill: "
            f"its state cannot be serialised ({error})"
        ) from error
    return json.loads(state)


def _component(obj: object, role: str) -> object:
    """A pipeline component, loaded by tokenmill from a tokenizer.json holding only it."""
    module = _COMPONENT_MODULES[role]
    _expect(obj, module, f"{module[len('tokenizers.') :].rstrip('s')} of tokenizers")
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": None,
        "model": _EMPTY_MODEL,
    }
    document[role] = _state(obj)
    return getattr(_native.Tokenizer.from_str(json.dumps(document)), role)


def _added_token(obj: object) -> object:
    """A ``tokenizers.AddedToken`` as a tokenmill AddedToken with the same flags."""
    _expect(obj, "tokenizers", "AddedToken")
    state = obj.__getstate__()
    content = state.pop("content")
    return _native.AddedToken(content, **state)


def _trainer(obj: object) -> object:
    """A trainer of the same class, given the ``tokenizers`` trainer's settings."""
    _expect(obj, "tokenizers.trainers", "trainer of tokenizers")
    cls = getattr(_native.trainers, type(obj).__name__, None)
    if cls is None:
        raise TypeError(f"tokenmill has no trainers.{type(obj).__name__}")
    trainer = cls()
    trainer.__setstate__(obj.__getstate__())
    return trainer
