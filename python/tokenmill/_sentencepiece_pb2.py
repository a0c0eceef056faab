"""Protobuf message classes of SentencePiece's two schemas, built at import time.

``tokenmill.sentencepiece.sentencepiece_pb2`` (``SentencePieceText``,
``NBestSentencePieceText``: what ``encode(..., return_type='proto')`` returns) and
``tokenmill.sentencepiece.sentencepiece_model_pb2`` (``ModelProto``, ``TrainerSpec``,
``NormalizerSpec``: the ``.model`` file) come from here. The schemas are data, in
``data/sentencepiece_schema.json``: per file, its messages as lists of fields
``[name, number, type, default or null]`` (``"repeated <type>"`` for repeated fields; a type that
is not a scalar names a message, or with ``"enum "`` an enum, by its full name) and its enums as
``[name, number]`` lists. They are turned into descriptors with ``descriptor_pb2``, so no
``protoc`` output is shipped. The field names, numbers and types are SentencePiece's, so the
messages serialize byte for byte as ``sentencepiece``'s do and each parses the other's
(``tests/test_sentencepiece_api.py`` checks both against the real package).

The descriptors live in a private ``DescriptorPool``: the classes can coexist with
``sentencepiece``'s own in one process (same message names, separate pools).

Needs the ``protobuf`` package (an optional dependency of tokenmill); importing this module
without it raises ``ImportError`` with the ``pip install`` line to run.

May import: the standard library and ``google.protobuf``.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the protobuf package is required for sentencepiece_pb2 / "
        "sentencepiece_model_pb2 and return_type='proto': pip install protobuf"
    ) from e

_SCHEMA = Path(__file__).resolve().parent / "data" / "sentencepiece_schema.json"
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    name: getattr(_F, "TYPE_" + name.upper())
    for name in ("string", "bytes", "bool", "float", "int32", "uint32", "int64", "uint64")
}
# Both schemas reserve field numbers 200 and up for extensions.
_EXTENSIONS = (200, 536870912)


def _field(name: str, number: int, kind: str, default) -> descriptor_pb2.FieldDescriptorProto:
    field = _F(name=name, number=number, json_name=_json_name(name), label=_F.LABEL_OPTIONAL)
    if kind.startswith("repeated "):
        field.label = _F.LABEL_REPEATED
        kind = kind[len("repeated ") :]
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    elif kind.startswith("enum "):
        field.type, field.type_name = _F.TYPE_ENUM, kind[len("enum ") :]
    else:
        field.type, field.type_name = _F.TYPE_MESSAGE, kind
    if default is not None:
        field.default_value = default
    return field


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _file(name: str, messages: dict, enums: dict) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto(name=name, package="sentencepiece", syntax="proto2")
    proto.options.optimize_for = descriptor_pb2.FileOptions.LITE_RUNTIME
    built: dict = {}
    for path, fields in messages.items():  # parents come before their nested messages
        parent, _, leaf = path.rpartition(".")
        container = built[parent].nested_type if parent else proto.message_type
        message = container.add(name=leaf)
        message.field.extend(_field(*f) for f in fields)
        message.extension_range.add(start=_EXTENSIONS[0], end=_EXTENSIONS[1])
        built[path] = message
    for path, values in enums.items():
        parent, _, leaf = path.rpartition(".")
        enum = built[parent].enum_type.add(name=leaf)
        enum.value.extend(
            descriptor_pb2.EnumValueDescriptorProto(name=n, number=v) for n, v in values
        )
    return proto


def _message_class(pool, full_name: str):
    descriptor = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


def _module(name: str, file_name: str, exported) -> types.ModuleType:
    pool = descriptor_pool.DescriptorPool()
    file_descriptor = pool.Add(_file(file_name, **_schemas[file_name]))
    module = types.ModuleType(
        name, f"SentencePiece's {file_name} messages (tokenmill's construction)."
    )
    module.DESCRIPTOR = file_descriptor  # type: ignore[attr-defined]
    for message in exported:
        setattr(module, message, _message_class(pool, "sentencepiece." + message))
    return module


with open(_SCHEMA, encoding="utf-8") as _f:
    _schemas = json.load(_f)

sentencepiece_pb2 = _module(
    "tokenmill.sentencepiece.sentencepiece_pb2",
    "sentencepiece.proto",
    ["SentencePieceText", "NBestSentencePieceText"],
)
sentencepiece_model_pb2 = _module(
    "tokenmill.sentencepiece.sentencepiece_model_pb2",
    "sentencepiece_model.proto",
    ["TrainerSpec", "NormalizerSpec", "SelfTestData", "ModelProto"],
)
