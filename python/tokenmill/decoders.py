"""decoders (see tokenmill._native.decoders)."""
from tokenmill import _native

_native_module = _native.decoders

