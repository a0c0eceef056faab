"""normalizers (see tokenmill._native.normalizers)."""
from tokenmill import _native

_native_module = _native.normalizers

