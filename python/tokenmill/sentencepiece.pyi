import os
from collections.abc import Sequence
from typing import Any, List, Optional, Protocol, Tuple, Union

from tokenmill import FormatError, InvalidArgumentError, Tokenizer, TokenmillIOError, UnknownIdError

class OutOfRangeError(UnknownIdError, IndexError): ...
class ArgumentError(InvalidArgumentError, ValueError, RuntimeError): ...

__version__: str

class ModelFormatError(FormatError, RuntimeError): ...
class ModelFileError(TokenmillIOError, OSError, RuntimeError): ...
class ModelFileNotFoundError(ModelFileError, FileNotFoundError): ...

def set_random_generator_seed(seed: int) -> None: ...
def set_min_log_level(level: int) -> None: ...
def set_nbest_timeout(timeout_ms: int) -> None: ...
def set_data_dir(data_dir: Union[str, os.PathLike]) -> None: ...

SetRandomGeneratorSeed = set_random_generator_seed
SetMinLogLevel = set_min_log_level
SetNBestTimeout = set_nbest_timeout
SetDataDir = set_data_dir

class ThreadPool:
    def __init__(self, num_threads: int) -> None: ...
    def num_threads(self) -> int: ...

# Built on first use from tokenmill._sentencepiece_pb2 (needs the protobuf package).
sentencepiece_pb2: Any
sentencepiece_model_pb2: Any

_Text = Union[str, bytes]
_Input = Union[_Text, List[_Text]]

# The methods that ``sentencepiece.py`` makes with factories: a method with its ``return_type``
# fixed (``EncodeAsIds``, ``SampleEncodeAsPieces``, ``NBestEncodeAsProto``, ...), typed once per
# kind as a callable attribute.
class _EncodeAs(Protocol):
    def __call__(self, input: _Input, **kwargs: Any) -> Any: ...

class _SampleEncodeAs(Protocol):
    def __call__(
        self,
        input: _Input,
        nbest_size: Optional[int] = ...,
        alpha: Optional[float] = ...,
        **kwargs: Any,
    ) -> Any: ...

class _NBestEncodeAs(Protocol):
    def __call__(self, input: _Input, nbest_size: Optional[int] = ..., **kwargs: Any) -> Any: ...

class SentencePieceProcessor:
    def __init__(
        self,
        model_file: Optional[Union[str, os.PathLike]] = ...,
        model_proto: Optional[bytes] = ...,
        out_type: Any = ...,
        add_bos: bool = ...,
        add_eos: bool = ...,
        reverse: bool = ...,
        emit_unk_piece: bool = ...,
        enable_sampling: bool = ...,
        nbest_size: int = ...,
        alpha: float = ...,
        num_threads: int = ...,
        return_type: Any = ...,
    ) -> None: ...
    @classmethod
    def from_file(
        cls, model_file: Union[str, os.PathLike], **kwargs: Any
    ) -> SentencePieceProcessor: ...
    @classmethod
    def from_proto(cls, model_proto: bytes, **kwargs: Any) -> SentencePieceProcessor: ...
    def Load(
        self,
        model_file: Optional[Union[str, os.PathLike]] = ...,
        model_proto: Optional[bytes] = ...,
    ) -> bool: ...
    def LoadFromFile(self, filename: Union[str, os.PathLike]) -> bool: ...
    def LoadFromSerializedProto(self, serialized: bytes) -> bool: ...
    def Encode(
        self,
        input: _Input,
        add_bos: Optional[bool] = ...,
        add_eos: Optional[bool] = ...,
        reverse: Optional[bool] = ...,
        emit_unk_piece: Optional[bool] = ...,
        enable_sampling: Optional[bool] = ...,
        nbest_size: Optional[int] = ...,
        alpha: Optional[float] = ...,
        num_threads: Optional[int] = ...,
        thread_pool: Any = ...,
        return_type: Any = ...,
        out_type: Any = ...,
        return_bytes: Optional[bool] = ...,
    ) -> Any: ...
    EncodeAsPieces: _EncodeAs
    EncodeAsIds: _EncodeAs
    EncodeAsNumpy: _EncodeAs
    EncodeAsProto: _EncodeAs
    EncodeAsOffsetMapping: _EncodeAs
    SampleEncodeAsPieces: _SampleEncodeAs
    SampleEncodeAsIds: _SampleEncodeAs
    SampleEncodeAsNumpy: _SampleEncodeAs
    SampleEncodeAsProto: _SampleEncodeAs
    def NBestEncode(
        self,
        input: _Input,
        add_bos: Optional[bool] = ...,
        add_eos: Optional[bool] = ...,
        reverse: Optional[bool] = ...,
        emit_unk_piece: Optional[bool] = ...,
        nbest_size: Optional[int] = ...,
        return_type: Any = ...,
        out_type: Any = ...,
    ) -> Any: ...
    NBestEncodeAsPieces: _NBestEncodeAs
    NBestEncodeAsIds: _NBestEncodeAs
    NBestEncodeAsNumpy: _NBestEncodeAs
    NBestEncodeAsProto: _NBestEncodeAs
    def SampleEncodeAndScore(
        self,
        input: _Input,
        add_bos: Optional[bool] = ...,
        add_eos: Optional[bool] = ...,
        reverse: Optional[bool] = ...,
        emit_unk_piece: Optional[bool] = ...,
        num_samples: Optional[int] = ...,
        alpha: Optional[float] = ...,
        wor: Optional[bool] = ...,
        include_best: Optional[bool] = ...,
        return_type: Any = ...,
        out_type: Any = ...,
    ) -> Any: ...
    def CalculateEntropy(
        self, input: _Input, alpha: float, num_threads: Optional[int] = ...
    ) -> Any: ...
    def SetRandomGeneratorSeed(self, seed: Optional[int]) -> None: ...
    def ParallelEncode(
        self,
        input: _Input,
        add_bos: Optional[bool] = ...,
        add_eos: Optional[bool] = ...,
        reverse: Optional[bool] = ...,
        emit_unk_piece: Optional[bool] = ...,
        chunk_len: Optional[int] = ...,
        num_threads: Optional[int] = ...,
        thread_pool: Optional[ThreadPool] = ...,
        return_type: Any = ...,
        out_type: Any = ...,
    ) -> Any: ...
    ParallelEncodeAsPieces: _EncodeAs
    ParallelEncodeAsIds: _EncodeAs
    ParallelEncodeAsNumpy: _EncodeAs
    ParallelEncodeAsProto: _EncodeAs
    def Decode(
        self,
        input: Any,
        return_type: Any = ...,
        out_type: Any = ...,
        num_threads: Optional[int] = ...,
        thread_pool: Any = ...,
        return_bytes: Optional[bool] = ...,
    ) -> Any: ...
    def DecodePieces(self, input: Any, return_type: Any = ..., **kwargs: Any) -> Any: ...
    def DecodeIds(self, input: Any, return_type: Any = ..., **kwargs: Any) -> Any: ...
    def DecodePiecesAsProto(self, input: Any, **kwargs: Any) -> Any: ...
    def DecodeIdsAsProto(self, input: Any, **kwargs: Any) -> Any: ...
    def Normalize(self, input: _Input, with_offsets: Optional[bool] = ...) -> Any: ...
    def GetPieceSize(self) -> int: ...
    def piece_size(self) -> int: ...
    def vocab_size(self) -> int: ...
    def __len__(self) -> int: ...
    def __getitem__(self, piece: str) -> int: ...
    def PieceToId(self, piece: Union[str, Sequence[str]]) -> Any: ...
    def IdToPiece(self, id: Union[int, Sequence[int]]) -> Any: ...
    def GetScore(self, id: Union[int, Sequence[int]]) -> Any: ...
    def IsUnknown(self, id: Union[int, Sequence[int]]) -> Any: ...
    def IsControl(self, id: Union[int, Sequence[int]]) -> Any: ...
    def IsUnused(self, id: Union[int, Sequence[int]]) -> Any: ...
    def IsByte(self, id: Union[int, Sequence[int]]) -> Any: ...
    def unk_id(self) -> int: ...
    def bos_id(self) -> int: ...
    def eos_id(self) -> int: ...
    def pad_id(self) -> int: ...
    def serialized_model_proto(self) -> bytes: ...
    # snake_case aliases (as in sentencepiece)
    load = Load
    load_from_file = LoadFromFile
    load_from_serialized_proto = LoadFromSerializedProto
    encode = Encode
    tokenize = Encode
    Tokenize = Encode
    encode_as_pieces = EncodeAsPieces
    encode_as_ids = EncodeAsIds
    encode_as_numpy = EncodeAsNumpy
    encode_as_proto = EncodeAsProto
    encode_as_offset_mapping = EncodeAsOffsetMapping
    sample_encode_as_pieces = SampleEncodeAsPieces
    sample_encode_as_ids = SampleEncodeAsIds
    sample_encode_as_numpy = SampleEncodeAsNumpy
    sample_encode_as_proto = SampleEncodeAsProto
    nbest_encode = NBestEncode
    nbest_encode_as_pieces = NBestEncodeAsPieces
    nbest_encode_as_ids = NBestEncodeAsIds
    nbest_encode_as_numpy = NBestEncodeAsNumpy
    nbest_encode_as_proto = NBestEncodeAsProto
    parallel_encode = ParallelEncode
    parallel_encode_as_pieces = ParallelEncodeAsPieces
    parallel_encode_as_ids = ParallelEncodeAsIds
    parallel_encode_as_numpy = ParallelEncodeAsNumpy
    parallel_encode_as_proto = ParallelEncodeAsProto
    sample_encode_and_score = SampleEncodeAndScore
    calculate_entropy = CalculateEntropy
    set_random_generator_seed = SetRandomGeneratorSeed
    decode = Decode
    detokenize = Decode
    Detokenize = Decode
    decode_pieces = DecodePieces
    decode_ids = DecodeIds
    decode_pieces_as_proto = DecodePiecesAsProto
    decode_ids_as_proto = DecodeIdsAsProto
    normalize = Normalize
    get_piece_size = GetPieceSize
    piece_to_id = PieceToId
    id_to_piece = IdToPiece
    get_score = GetScore
    is_unknown = IsUnknown
    is_control = IsControl
    is_unused = IsUnused
    is_byte = IsByte

class SentencePieceNormalizer:
    def __init__(
        self,
        model_file: Optional[Union[str, os.PathLike]] = ...,
        model_proto: Any = ...,
        normalizer_spec: Any = ...,
        rule_tsv: Optional[Union[str, os.PathLike]] = ...,
        rule_name: Optional[str] = ...,
        norm_map: Optional[Sequence[Tuple[_Text, _Text]]] = ...,
        add_dummy_prefix: Optional[bool] = ...,
        escape_whitespaces: Optional[bool] = ...,
        remove_extra_whitespaces: Optional[bool] = ...,
    ) -> None: ...
    def Normalize(self, input: _Input, with_offsets: Optional[bool] = ...) -> Any: ...
    def Decompile(self) -> List[Tuple[str, str]]: ...
    def serialized_normalizer_spec(self) -> bytes: ...
    def serialized_model_proto(self) -> bytes: ...
    normalize = Normalize
    decompile = Decompile

class SentencePieceTrainer:
    @staticmethod
    def Train(arg: Optional[str] = ..., logstream: Any = ..., **kwargs: Any) -> None: ...
    @staticmethod
    def train(arg: Optional[str] = ..., logstream: Any = ..., **kwargs: Any) -> None: ...

def to_tokenizer(model: Union[str, os.PathLike, bytes, SentencePieceProcessor]) -> Tokenizer: ...
def from_tokenizer(tokenizer: Union[str, os.PathLike, Tokenizer, Any]) -> bytes: ...
def convert_to_flatbuffer(
    model_file: Union[str, bytes, os.PathLike, None] = ...,
    model_proto: Any = ...,
    serialized_model_proto: Optional[bytes] = ...,
    output_file: Union[str, bytes, os.PathLike, None] = ...,
    skip_char_bigrams: bool = ...,
    treat_null_byte_as_unused: bool = ...,
    allow_unsupported_model_type: bool = ...,
) -> Optional[bytes]: ...

ConvertToFlatbuffer = convert_to_flatbuffer
