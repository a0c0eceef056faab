"""Protobuf message classes of SentencePiece's two schemas, built at import time.

``tokenmill.sentencepiece.sentencepiece_pb2`` (``SentencePieceText``,
``NBestSentencePieceText``: what ``encode(..., return_type='proto')`` returns) and
``tokenmill.sentencepiece.sentencepiece_model_pb2`` (``ModelProto``, ``TrainerSpec``,
``NormalizerSpec``: the ``.model`` file) come from here. The schemas are written below as
tables (field name, number, type, label, default) and turned into descriptors with
``descriptor_pb2``, so no ``protoc`` output is shipped. The field names, numbers and types are
SentencePiece's, so the messages serialize byte for byte as ``sentencepiece``'s do and each
parses the other's (``tests/test_sentencepiece_pb2.py`` checks both against the real package).

The descriptors live in a private ``DescriptorPool``: the classes can coexist with
``sentencepiece``'s own in one process (same message names, separate pools).

Needs the ``protobuf`` package (an optional dependency of tokenmill); importing this module
without it raises ``ImportError`` with the ``pip install`` line to run.
"""
from __future__ import annotations

import types

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the protobuf package is required for sentencepiece_pb2 / "
                      "sentencepiece_model_pb2 and return_type='proto': pip install protobuf") from e

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_TYPES = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "bool": _F.TYPE_BOOL, "float": _F.TYPE_FLOAT,
    "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32, "uint64": _F.TYPE_UINT64,
    "int64": _F.TYPE_INT64,
}
# Both schemas reserve field numbers 200 and up for extensions.
_EXTENSIONS = (200, 536870912)

# (name, number, type, default or None); "repeated <type>" for repeated fields; a type that is
# not a scalar names a message or enum ("." + full name).
_SENTENCEPIECE_TEXT = {
    "SentencePieceText": [
        ("text", 1, "string", None),
        ("pieces", 2, "repeated .sentencepiece.SentencePieceText.SentencePiece", None),
        ("score", 3, "float", None),
    ],
    "SentencePieceText.SentencePiece": [
        ("piece", 1, "string", None),
        ("id", 2, "uint32", None),
        ("surface", 3, "string", None),
        ("begin", 4, "uint32", None),
        ("end", 5, "uint32", None),
    ],
    "NBestSentencePieceText": [
        ("nbests", 1, "repeated .sentencepiece.SentencePieceText", None),
    ],
}

_MODEL = {
    "TrainerSpec": [
        ("input", 1, "repeated string", None),
        ("input_format", 7, "string", None),
        ("model_prefix", 2, "string", None),
        ("model_type", 3, "enum .sentencepiece.TrainerSpec.ModelType", "UNIGRAM"),
        ("vocab_size", 4, "int32", "8000"),
        ("accept_language", 5, "repeated string", None),
        ("self_test_sample_size", 6, "int32", "0"),
        ("character_coverage", 10, "float", "0.9995"),
        ("input_sentence_size", 11, "uint64", "0"),
        ("shuffle_input_sentence", 19, "bool", "true"),
        ("mining_sentence_size", 12, "int32", None),
        ("training_sentence_size", 13, "int32", None),
        ("seed_sentencepiece_size", 14, "int32", "1000000"),
        ("shrinking_factor", 15, "float", "0.75"),
        ("max_sentence_length", 18, "int32", "4192"),
        ("num_threads", 16, "int32", "16"),
        ("num_sub_iterations", 17, "int32", "2"),
        ("max_sentencepiece_length", 20, "int32", "16"),
        ("split_by_unicode_script", 21, "bool", "true"),
        ("split_by_number", 23, "bool", "true"),
        ("split_by_whitespace", 22, "bool", "true"),
        ("treat_whitespace_as_suffix", 24, "bool", "false"),
        ("allow_whitespace_only_pieces", 26, "bool", "false"),
        ("split_digits", 25, "bool", "false"),
        ("pretokenization_delimiter", 53, "string", ""),
        ("control_symbols", 30, "repeated string", None),
        ("user_defined_symbols", 31, "repeated string", None),
        ("required_chars", 36, "string", None),
        ("byte_fallback", 35, "bool", "false"),
        ("vocabulary_output_piece_score", 32, "bool", "true"),
        ("hard_vocab_limit", 33, "bool", "true"),
        ("use_all_vocab", 34, "bool", "false"),
        ("unk_id", 40, "int32", "0"),
        ("bos_id", 41, "int32", "1"),
        ("eos_id", 42, "int32", "2"),
        ("pad_id", 43, "int32", "-1"),
        ("unk_piece", 45, "string", "<unk>"),
        ("bos_piece", 46, "string", "<s>"),
        ("eos_piece", 47, "string", "</s>"),
        ("pad_piece", 48, "string", "<pad>"),
        ("unk_surface", 44, "string", " \u2047 "),
        ("train_extremely_large_corpus", 49, "bool", "false"),
        ("enable_differential_privacy", 50, "bool", "false"),
        ("differential_privacy_noise_level", 51, "float", "0"),
        ("differential_privacy_clipping_threshold", 52, "uint64", "0"),
        ("seed_sentencepieces_file", 54, "string", ""),
        ("auto_character_coverage", 55, "bool", "false"),
    ],
    "NormalizerSpec": [
        ("name", 1, "string", None),
        ("precompiled_charsmap", 2, "bytes", None),
        ("add_dummy_prefix", 3, "bool", "true"),
        ("remove_extra_whitespaces", 4, "bool", "true"),
        ("escape_whitespaces", 5, "bool", "true"),
        ("normalization_rule_tsv", 6, "string", None),
    ],
    "SelfTestData": [
        ("samples", 1, "repeated .sentencepiece.SelfTestData.Sample", None),
    ],
    "SelfTestData.Sample": [
        ("input", 1, "string", None),
        ("expected", 2, "string", None),
    ],
    "ModelProto": [
        ("pieces", 1, "repeated .sentencepiece.ModelProto.SentencePiece", None),
        ("trainer_spec", 2, ".sentencepiece.TrainerSpec", None),
        ("normalizer_spec", 3, ".sentencepiece.NormalizerSpec", None),
        ("self_test_data", 4, ".sentencepiece.SelfTestData", None),
        ("denormalizer_spec", 5, ".sentencepiece.NormalizerSpec", None),
    ],
    "ModelProto.SentencePiece": [
        ("piece", 1, "string", None),
        ("score", 2, "float", None),
        ("type", 3, "enum .sentencepiece.ModelProto.SentencePiece.Type", "NORMAL"),
    ],
}

_ENUMS = {
    "TrainerSpec.ModelType": [("UNIGRAM", 1), ("BPE", 2), ("WORD", 3), ("CHAR", 4)],
    "ModelProto.SentencePiece.Type": [("NORMAL", 1), ("UNKNOWN", 2), ("CONTROL", 3),
                                      ("USER_DEFINED", 4), ("BYTE", 6), ("UNUSED", 5)],
}


def _field(name: str, number: int, kind: str, default) -> descriptor_pb2.FieldDescriptorProto:
    field = _F(name=name, number=number, json_name=_json_name(name))
    field.label = _OPTIONAL
    if kind.startswith("repeated "):
        field.label = _REPEATED
        kind = kind[len("repeated "):]
    if kind in _TYPES:
        field.type = _TYPES[kind]
    elif kind.startswith("enum "):
        field.type, field.type_name = _F.TYPE_ENUM, kind[len("enum "):]
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
    built = {}
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
        enum.value.extend(descriptor_pb2.EnumValueDescriptorProto(name=n, number=v) for n, v in values)
    return proto


def _message_class(pool, full_name: str):
    descriptor = pool.FindMessageTypeByName(full_name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf < 4.22


def _module(name: str, file_name: str, messages: dict, enums: dict, exported) -> types.ModuleType:
    pool = descriptor_pool.DescriptorPool()
    file_descriptor = pool.Add(_file(file_name, messages, enums))
    module = types.ModuleType(name, f"SentencePiece's {file_name} messages (tokenmill's construction).")
    module.DESCRIPTOR = file_descriptor
    for message in exported:
        setattr(module, message, _message_class(pool, "sentencepiece." + message))
    return module


sentencepiece_pb2 = _module("tokenmill.sentencepiece.sentencepiece_pb2", "sentencepiece.proto",
                            _SENTENCEPIECE_TEXT, {}, ["SentencePieceText", "NBestSentencePieceText"])
sentencepiece_model_pb2 = _module(
    "tokenmill.sentencepiece.sentencepiece_model_pb2", "sentencepiece_model.proto", _MODEL, _ENUMS,
    ["TrainerSpec", "NormalizerSpec", "SelfTestData", "ModelProto"])
