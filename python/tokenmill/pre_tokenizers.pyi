"""Type stubs for tokenmill.pre_tokenizers (mirrors tokenizers.pre_tokenizers)."""

from typing import Any, List, Literal, Tuple, Union

from tokenmill import PreTokenizedString
from tokenmill._stage import MutableItems, Pickled

Offsets = Tuple[int, int]
Behavior = Literal["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]

class PreTokenizer(Pickled):
    """Base class of all pre-tokenizers."""
    def pre_tokenize_str(self, sequence: str) -> List[Tuple[str, Offsets]]:
        """The pieces of ``sequence`` with their (character) offsets."""
    def pre_tokenize(self, pretok: PreTokenizedString) -> None:
        """Pre-tokenizes a PreTokenizedString in place."""
    @staticmethod
    def custom(pre_tokenizer: Any) -> PreTokenizer:
        """A pre-tokenizer written in Python: any object with ``pre_tokenize(self, pretok:
        PreTokenizedString)``
        splitting it in place (``pretok.split(func)``). A tokenizer holding it cannot be saved or
        pickled."""

class ByteLevel(PreTokenizer):
    add_prefix_space: bool
    trim_offsets: bool
    use_regex: bool
    def __init__(
        self,
        add_prefix_space: bool = True,
        trim_offsets: bool = True,
        use_regex: bool = True,
        **kwargs: Any,
    ) -> None: ...
    @staticmethod
    def alphabet() -> List[str]:
        """The 256 characters bytes are mapped to, in byte order."""

class Whitespace(PreTokenizer): ...
class WhitespaceSplit(PreTokenizer): ...
class BertPreTokenizer(PreTokenizer): ...

class Split(PreTokenizer):
    @property
    def pattern(self) -> Any:
        """The pattern: a str for a literal, a ``tokenmill.Regex`` for a regex."""
    behavior: str
    invert: bool
    def __init__(
        self, pattern: Union[str, Any], behavior: Behavior, invert: bool = False
    ) -> None: ...

class Punctuation(PreTokenizer):
    behavior: str
    def __init__(self, behavior: Behavior = "isolated") -> None: ...

class Digits(PreTokenizer):
    individual_digits: bool
    def __init__(self, individual_digits: bool = False) -> None: ...

class Metaspace(PreTokenizer):
    replacement: str
    prepend_scheme: Literal["always", "never", "first"]
    split: bool
    def __init__(
        self,
        replacement: str = "▁",
        prepend_scheme: Literal["always", "never", "first"] = "always",
        split: bool = True,
    ) -> None: ...

class CharDelimiterSplit(PreTokenizer):
    delimiter: str
    def __init__(self, delimiter: str) -> None: ...

class UnicodeScripts(PreTokenizer):
    """Splits where the Unicode script changes (Hiragana, Katakana and ``ー`` count as Han);
    spaces stay with the piece before them. Scripts are tokenizers' Unicode 9.0 ones: chars
    assigned since have none and never cause a split (U+0589 ARMENIAN FULL STOP is Common)."""
    def __init__(self) -> None: ...

class FixedLength(PreTokenizer):
    length: int
    def __init__(self, length: int = 5) -> None: ...

class Sequence(PreTokenizer, MutableItems[PreTokenizer]):
    def __init__(self, pretokenizers: List[PreTokenizer]) -> None: ...
