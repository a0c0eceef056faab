from typing import Any, Dict, List, Optional, Tuple, Union

from tokenmill import Encoding
from tokenmill._stage import MutableItems, Pickled

Template = Union[str, List[str]]
SpecialTokenSpec = Union[Tuple[str, int], Tuple[int, str], Dict[str, Any]]

class PostProcessor(Pickled):
    """Base class of all post-processors."""
    def num_special_tokens_to_add(self, is_pair: bool) -> int: ...
    def process(
        self, encoding: Encoding, pair: Optional[Encoding] = None, add_special_tokens: bool = True
    ) -> Encoding: ...

class BertProcessing(PostProcessor):
    """``[CLS] A [SEP] B [SEP]``, type ids 0 then 1."""
    def __init__(self, sep: Tuple[str, int], cls: Tuple[str, int]) -> None: ...
    sep: Tuple[str, int]
    cls: Tuple[str, int]

class RobertaProcessing(PostProcessor):
    """``<s> A </s> </s> B </s>``, type ids 0, offsets trimmed of whitespace."""
    def __init__(
        self,
        sep: Tuple[str, int],
        cls: Tuple[str, int],
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
    ) -> None: ...
    sep: Tuple[str, int]
    cls: Tuple[str, int]
    trim_offsets: bool
    add_prefix_space: bool

class ByteLevel(PostProcessor):
    """Trims the spaces of byte-level tokens out of their offsets."""
    def __init__(
        self,
        add_prefix_space: Optional[bool] = None,
        trim_offsets: Optional[bool] = None,
        use_regex: Optional[bool] = None,
        **kwargs: Any,
    ) -> None: ...
    add_prefix_space: bool
    trim_offsets: bool
    use_regex: bool

class TemplateProcessing(PostProcessor):
    """Special tokens placed by templates such as ``"[CLS] $A [SEP] $B:1 [SEP]:1"``."""
    def __init__(
        self,
        single: Optional[Template] = None,
        pair: Optional[Template] = None,
        special_tokens: Optional[List[SpecialTokenSpec]] = None,
    ) -> None: ...
    @property
    def single(self) -> str: ...
    @single.setter
    def single(self, value: Template) -> None: ...

class Sequence(PostProcessor, MutableItems[PostProcessor]):
    """Post-processors applied in order."""
    def __init__(self, processors: List[PostProcessor]) -> None: ...
