"""Type stubs for tokenmill.normalizers (the classes live in tokenmill._native.normalizers)."""

from typing import Any, Dict, List, Optional, Type, Union

from tokenmill import NormalizedString, Regex
from tokenmill._stage import MutableItems, Pickled

class Normalizer(Pickled):
    """Base class of all normalizers; build one of the subclasses."""

    def normalize(self, normalized: NormalizedString) -> None:
        """Normalizes a NormalizedString in place, keeping its alignments."""
    def normalize_str(self, sequence: str) -> str:
        """Normalizes a string and returns the result."""
    @staticmethod
    def custom(normalizer: Any) -> Normalizer:
        """A normalizer written in Python: any object with ``normalize(self, normalized:
        NormalizedString)``
        editing it in place. A tokenizer holding it cannot be saved or pickled."""

class BertNormalizer(Normalizer):
    clean_text: bool
    handle_chinese_chars: bool
    strip_accents: Optional[bool]
    lowercase: bool
    def __init__(
        self,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: Optional[bool] = None,
        lowercase: bool = True,
    ) -> None: ...

class NFD(Normalizer): ...
class NFKD(Normalizer): ...
class NFC(Normalizer): ...
class NFKC(Normalizer): ...
class Lowercase(Normalizer): ...
class StripAccents(Normalizer): ...
class Nmt(Normalizer): ...

class ByteLevel(Normalizer):
    @staticmethod
    def alphabet() -> List[str]: ...

class Strip(Normalizer):
    left: bool
    right: bool
    def __init__(self, left: bool = True, right: bool = True) -> None: ...

class Prepend(Normalizer):
    prepend: str
    def __init__(self, prepend: str = "▁") -> None: ...

class Replace(Normalizer):
    pattern: Union[str, Regex]
    content: str
    def __init__(self, pattern: Union[str, Regex], content: str) -> None: ...

class Precompiled(Normalizer):
    def __init__(self, precompiled_charsmap: bytes) -> None: ...

class Sequence(Normalizer, MutableItems[Normalizer]):
    def __init__(self, normalizers: List[Normalizer]) -> None: ...

NORMALIZERS: Dict[str, Type[Normalizer]]

def unicode_normalizer_from_str(normalizer: str) -> Normalizer: ...
