"""trainers (see tokenmill._native.trainers)."""
from tokenmill import _native

_native_module = _native.trainers

