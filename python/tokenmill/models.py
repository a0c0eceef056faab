"""models (see tokenmill._native.models)."""
from tokenmill import _native

_native_module = _native.models

