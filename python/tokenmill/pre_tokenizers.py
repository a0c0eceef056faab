"""pre-tokenizers (see tokenmill._native.pre_tokenizers)."""
from tokenmill import _native

_native_module = _native.pre_tokenizers

