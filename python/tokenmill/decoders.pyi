from typing import TYPE_CHECKING, Any, List, Optional, Tuple, Union

from tokenmill import Regex
from tokenmill._stage import Items, Pickled

class Decoder(Pickled):
    """Base class of all decoders."""
    def decode(self, tokens: List[str]) -> str: ...
    @staticmethod
    def custom(decoder: Any) -> Decoder:
        """A decoder written in Python: any object with ``decode_chain(self, tokens) -> list[str]``
        (decoding joins its pieces). A tokenizer holding it cannot be saved or pickled."""

class ByteLevel(Decoder):
    """GPT-2 byte-level tokens back to text."""
    def __init__(self, **kwargs: Any) -> None: ...

class BPEDecoder(Decoder):
    """The end-of-word suffix becomes a space."""
    def __init__(self, suffix: str = "</w>") -> None: ...
    suffix: str

class Metaspace(Decoder):
    """``▁`` back to spaces."""
    def __init__(
        self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True
    ) -> None: ...
    replacement: str
    prepend_scheme: str
    split: bool

class ByteFallback(Decoder):
    """``<0xNN>`` byte tokens back to text."""

class Fuse(Decoder):
    """All tokens into one."""

class Strip(Decoder):
    """Strips ``content`` from the ends of each token."""
    def __init__(self, content: str = " ", left: int = 0, right: int = 0) -> None: ...
    content: str
    start: int
    stop: int

class Replace(Decoder):
    """Replaces a string or regex in each token."""
    def __init__(self, pattern: Union[str, Regex], content: str) -> None: ...

class WordPiece(Decoder):
    """``##`` continuation tokens glued to the previous one, BERT's spaces cleaned up."""
    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None: ...
    prefix: str
    cleanup: bool

class CTC(Decoder):
    """CTC output: repeats collapsed, padding dropped, word delimiter to space."""
    def __init__(
        self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True
    ) -> None: ...
    pad_token: str
    word_delimiter_token: str
    cleanup: bool

class Sequence(Decoder, Items[Decoder]):
    """Decoders chained."""
    def __init__(self, decoders: List[Decoder]) -> None: ...

class DecodeStream:
    """Incremental decoding for generation: :meth:`step` returns the text the new ids complete,
    or None while a character (multi-byte UTF-8, a byte-fallback run) is unfinished; the pieces
    concatenate to ``tokenizer.decode(all_ids)``."""
    def __init__(
        self, ids: Optional[List[int]] = None, skip_special_tokens: bool = False
    ) -> None: ...
    def step(self, tokenizer: Tokenizer, id: Union[int, List[int]]) -> Optional[str]: ...
    def __copy__(self) -> DecodeStream: ...
    def __deepcopy__(self, memo: Any) -> DecodeStream: ...
    def __getstate__(self) -> Tuple[List[int], str, int, bool]: ...
    def __setstate__(self, state: Tuple[List[int], str, int, bool]) -> None: ...

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer
