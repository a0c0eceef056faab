"""processors (see tokenmill._native.processors)."""
from tokenmill import _native

_native_module = _native.processors

