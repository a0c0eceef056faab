"""OpenAI's public encodings (what ``tiktoken_ext.openai_public`` defines): split patterns,
special tokens, and where each rank file comes from (URL, sha256, local names)."""

from __future__ import annotations

from dataclasses import dataclass

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

R50K_PAT_STR = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
    r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

#: name → split pattern of the built-in encodings (in tiktoken's order).
ENCODING_PATTERNS = {
    "gpt2": R50K_PAT_STR,
    "r50k_base": R50K_PAT_STR,
    "p50k_base": R50K_PAT_STR,
    "p50k_edit": R50K_PAT_STR,
    "cl100k_base": CL100K_PAT_STR,
    "o200k_base": O200K_PAT_STR,
    "o200k_harmony": O200K_PAT_STR,
}

_BLOB = "https://openaipublic.blob.core.windows.net/"


@dataclass(frozen=True)
class RankFile:
    """A ``.tiktoken`` file: tiktoken's URL and sha256, and the names tokenmill also tries in a
    folder (``<name>.tiktoken``, ``<name>/<name>.tiktoken``, ...)."""

    url: str
    sha256: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class DataGymFiles:
    """GPT-2's original ``vocab.bpe`` + ``encoder.json`` (tiktoken's source for ``gpt2``)."""

    vocab_bpe_url: str
    vocab_bpe_sha256: str
    encoder_json_url: str
    encoder_json_sha256: str
    names: tuple[tuple[str, str], ...]


def _encoding_file(name: str, sha256: str, *more_names: str) -> RankFile:
    """The rank file of encoding ``name`` (``encodings/<name>.tiktoken`` on OpenAI's blob store),
    found locally as ``<name>.tiktoken``, ``<name>/<name>.tiktoken`` or ``more_names``."""
    file = f"{name}.tiktoken"
    return RankFile(_BLOB + "encodings/" + file, sha256, (file, f"{name}/{file}", *more_names))


_R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
R50K = _encoding_file("r50k_base", _R50K_SHA256, "gpt2.tiktoken", "whisper/gpt2.tiktoken")
P50K = _encoding_file(
    "p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
)
CL100K = _encoding_file(
    "cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
)
O200K = _encoding_file(
    "o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
)
GPT2_DATA_GYM = DataGymFiles(
    _BLOB + "gpt-2/encodings/main/vocab.bpe",
    "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    _BLOB + "gpt-2/encodings/main/encoder.json",
    "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    (("vocab.bpe", "encoder.json"), ("gpt2/vocab.bpe", "gpt2/encoder.json")),
)


@dataclass(frozen=True)
class PlusSpaceRuns:
    """Another rank file plus the runs of 2 to 25 spaces at ranks 50257-50280: p50k's ranks
    are r50k's plus those 24 tokens."""

    base: RankFile

    def extra_ranks(self) -> dict[bytes, int]:
        return {b" " * n: 50255 + n for n in range(2, 26)}


#: name → the rank sources tried in order. gpt2's ranks are r50k's; tiktoken builds them from
#: the data-gym files, which are tried when no r50k file is found. p50k falls back to r50k's
#: file plus the space runs.
ENCODING_SOURCES: dict[str, tuple[RankFile | DataGymFiles | PlusSpaceRuns, ...]] = {
    "gpt2": (R50K, GPT2_DATA_GYM),
    "r50k_base": (R50K,),
    "p50k_base": (P50K, PlusSpaceRuns(R50K)),
    "p50k_edit": (P50K, PlusSpaceRuns(R50K)),
    "cl100k_base": (CL100K,),
    "o200k_base": (O200K,),
    "o200k_harmony": (O200K,),
}

#: Encodings whose ``explicit_n_vocab`` tiktoken checks.
EXPLICIT_N_VOCAB = {"gpt2": 50257, "r50k_base": 50257, "p50k_base": 50281}


def special_tokens(name: str) -> dict[str, int]:
    """The special tokens of a built-in encoding."""
    if name in ("gpt2", "r50k_base", "p50k_base"):
        return {ENDOFTEXT: 50256}
    if name == "p50k_edit":
        return {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}
    if name == "cl100k_base":
        return {
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        }
    if name == "o200k_base":
        return {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
    if name == "o200k_harmony":
        # As tiktoken_ext.openai_public: id 200018 is both <|endofprompt|> and <|reserved_200018|>.
        named = {
            ENDOFTEXT: 199999,
            ENDOFPROMPT: 200018,
            "<|startoftext|>": 199998,
            "<|reserved_200000|>": 200000,
            "<|reserved_200001|>": 200001,
            "<|return|>": 200002,
            "<|constrain|>": 200003,
            "<|reserved_200004|>": 200004,
            "<|channel|>": 200005,
            "<|start|>": 200006,
            "<|end|>": 200007,
            "<|message|>": 200008,
            "<|reserved_200009|>": 200009,
            "<|reserved_200010|>": 200010,
            "<|reserved_200011|>": 200011,
            "<|call|>": 200012,
        }
        return {**named, **{f"<|reserved_{i}|>": i for i in range(200013, 201088)}}
    raise ValueError(f"Unknown encoding {name}")
