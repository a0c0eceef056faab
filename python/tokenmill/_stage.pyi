"""Stub-only bases of the pipeline components' stubs (no module ``tokenmill._stage`` exists at
run time): what the normalizer, pre-tokenizer, post-processor and decoder classes share.

May import only ``typing``."""

from typing import Generic, TypeVar, Union

_Component = TypeVar("_Component")

class Pickled:
    """A component pickles as its tokenizer.json form (``__setstate__`` takes it as bytes or
    str)."""
    def __getstate__(self) -> bytes: ...
    def __setstate__(self, state: Union[bytes, str]) -> None: ...

class Items(Generic[_Component]):
    """A ``Sequence`` component's items: ``len`` and indexing (an item is shared)."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> _Component: ...

class MutableItems(Items[_Component]):
    """``Items`` that can be replaced: ``seq[i] = component``."""
    def __setitem__(self, index: int, value: _Component) -> None: ...
