"""A drop-in for OpenAI's ``tiktoken`` API, running on tokenmill's native byte-level BPE.

::

    from tokenmill import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")           # from local files; never downloads
    enc = tiktoken.encoding_for_model("gpt-4o")           # o200k_base
    enc.encode("hello world")

The modules are tiktoken's: ``core`` (``Encoding``), ``registry`` (``get_encoding``,
``list_encoding_names``), ``model`` (``encoding_for_model``, ``encoding_name_for_model``) and
``load`` (``load_tiktoken_bpe``, ``data_gym_to_mergeable_bpe_ranks``, ...); ``openai_public``
defines the encodings, as ``tiktoken_ext.openai_public``. Rank files are found in ``path=``,
``$TOKENMILL_TIKTOKEN_DIR`` or tiktoken's own cache folder (``$TIKTOKEN_CACHE_DIR``, see
``registry``); when one is missing, the error says which file to put where.

What lives here: the re-exports of tiktoken's top-level names. May import: the standard library,
``tokenmill._native`` (its ``tiktoken`` submodule: the rank files and the byte-level BPE core)
and these modules; ``regex`` only inside the functions that need it (optional, as in tiktoken).
"""

from __future__ import annotations

from tokenmill.tiktoken.core import (
    CoreBPE,
    Encoding,
    UnknownTokenError,
    raise_disallowed_special_token,
)
from tokenmill.tiktoken.load import dump_tiktoken_bpe, load_tiktoken_bpe
from tokenmill.tiktoken.model import encoding_for_model, encoding_name_for_model
from tokenmill.tiktoken.openai_public import (
    CL100K_PAT_STR,
    ENCODING_PATTERNS,
    ENDOFPROMPT,
    ENDOFTEXT,
    FIM_MIDDLE,
    FIM_PREFIX,
    FIM_SUFFIX,
    O200K_PAT_STR,
    R50K_PAT_STR,
)
from tokenmill.tiktoken.registry import get_encoding, list_encoding_names

__all__ = [
    "Encoding",
    "CoreBPE",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load_tiktoken_bpe",
    "dump_tiktoken_bpe",
    "UnknownTokenError",
    "raise_disallowed_special_token",
    "ENCODING_PATTERNS",
    "R50K_PAT_STR",
    "CL100K_PAT_STR",
    "O200K_PAT_STR",
    "ENDOFTEXT",
    "FIM_PREFIX",
    "FIM_MIDDLE",
    "FIM_SUFFIX",
    "ENDOFPROMPT",
]
