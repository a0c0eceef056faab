"""Hugging Face model directories: ``Tokenizer.from_pretrained``, ``Tokenizer.save_pretrained``
and ``Tokenizer.train_new_from_iterator`` (these methods call the functions here).

- :func:`from_pretrained` reads a model directory or a hub-cache snapshot from disk
  (``models--org--name/snapshots/<revision>/``): ``tokenizer.json``, or GPT-2/RoBERTa-style
  ``vocab.json`` + ``merges.txt`` with ``tokenizer_config.json`` / ``special_tokens_map.json``.
  It never touches the network unless asked with ``download=True`` (which needs
  ``huggingface_hub``).
- :func:`save_pretrained` writes ``tokenizer.json``, ``tokenizer_config.json`` and
  ``special_tokens_map.json`` that ``transformers.AutoTokenizer.from_pretrained`` loads as a
  ``PreTrainedTokenizerFast`` giving the same ids. The special tokens' roles (bos, eos, unk,
  sep, pad, cls, mask) are those recorded when the tokenizer came from :func:`from_pretrained`;
  otherwise they are derived from the pipeline (see :func:`derived_roles`).
- :func:`train_new_from_iterator` retrains a tokenizer's whole pipeline (normalizer,
  pre-tokenizer, model type and options, special tokens, post-processor) on a new corpus, as
  ``transformers``' ``PreTrainedTokenizerFast.train_new_from_iterator`` does.

The file formats are JSON handled in Python; only training and tokenization run in Rust.
"""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from tokenmill import _native
from tokenmill._atomic import atomic_open

TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_FILE = "special_tokens_map.json"
# What a model directory needs for a tokenizer (downloads fetch only these).
TOKENIZER_FILES = [
    TOKENIZER_FILE,
    CONFIG_FILE,
    SPECIAL_TOKENS_FILE,
    "vocab.json",
    "merges.txt",
    "vocab.txt",
    "added_tokens.json",
]
# The roles transformers gives special tokens, in its order.
ROLES = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]

PathLike = Union[str, "os.PathLike[str]"]

# The roles read by from_pretrained, by tokenizer (for save_pretrained).
_RECORDED_ROLES: weakref.WeakKeyDictionary[Any, Dict[str, str]] = weakref.WeakKeyDictionary()


# ---- finding the files ----


def hub_cache_dirs(cache_dir: Optional[PathLike]) -> List[Path]:
    """Where the Hugging Face hub cache may be, in the order huggingface_hub looks."""
    if cache_dir is not None:
        return [Path(cache_dir)]
    dirs = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        dirs.append(Path(os.environ["HUGGINGFACE_HUB_CACHE"]))
    home = Path(
        os.environ.get(
            "HF_HOME",
            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface",
        )
    )
    dirs.append(home / "hub")
    return dirs


def snapshot_in_repo_cache(repo_dir: Path, revision: Optional[str]) -> Optional[Path]:
    """The snapshot folder of a ``models--org--name`` cache folder: ``refs/<revision>`` (default
    ``main``) names it, or ``revision`` is a snapshot (commit) name; with no ref and one snapshot,
    that one."""
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    wanted = revision or "main"
    ref = repo_dir / "refs" / wanted
    if ref.is_file():
        commit = ref.read_text(encoding="utf-8").strip()
        if (snapshots / commit).is_dir():
            return snapshots / commit
    if (snapshots / wanted).is_dir():
        return snapshots / wanted
    available = sorted(p for p in snapshots.iterdir() if p.is_dir())
    if revision is None and len(available) == 1:
        return available[0]
    return None


def resolve_model_dir(
    identifier: PathLike,
    revision: Optional[str] = None,
    cache_dir: Optional[PathLike] = None,
    download: bool = False,
    token: Optional[str] = None,
) -> Path:
    """The local folder that holds the tokenizer files of ``identifier`` (a folder, a
    ``models--org--name`` cache folder, or a hub id ``org/name`` looked up in the cache)."""
    path = Path(identifier)
    if path.is_dir():
        if (path / "snapshots").is_dir():
            snapshot = snapshot_in_repo_cache(path, revision)
            if snapshot is None:
                raise FileNotFoundError(
                    f"{path} is a hub cache folder without a snapshot for revision "
                    f"{revision or 'main'!r}"
                )
            return snapshot
        return path
    looked = []
    name = str(identifier)
    if "/" in name.strip("/") and not path.is_absolute():
        folder = "models--" + name.strip("/").replace("/", "--")
        for cache in hub_cache_dirs(cache_dir):
            looked.append(str(cache / folder))
            snapshot = snapshot_in_repo_cache(cache / folder, revision)
            if snapshot is not None:
                return snapshot
    if download:
        return download_snapshot(name, revision, cache_dir, token)
    where = f" (looked in {', '.join(looked)})" if looked else ""
    raise FileNotFoundError(
        f"no tokenizer found for {name!r}: not a folder and not in the Hugging Face cache{where}. "
        "tokenmill does not download unless asked: pass download=True (needs huggingface_hub)."
    )


def download_snapshot(
    repo_id: str, revision: Optional[str], cache_dir: Optional[PathLike], token: Optional[str]
) -> Path:
    """Fetches only the tokenizer files of ``repo_id`` into the hub cache (explicitly asked for)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:
        raise ImportError(
            "download=True needs the huggingface_hub package (pip install huggingface_hub)"
        ) from e
    folder = snapshot_download(
        repo_id, revision=revision, cache_dir=cache_dir, token=token, allow_patterns=TOKENIZER_FILES
    )
    return Path(folder)


def read_json(path: Path) -> Dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except json.JSONDecodeError as e:
        raise _native.FormatError(f"{path}: line {e.lineno}, column {e.colno}: {e.msg}") from None
    if not isinstance(value, dict):
        raise _native.FormatError(f"{path}: expected a JSON object")
    return value


def token_content(value: Any) -> Optional[str]:
    """A special token as written in the configs: a str or ``{"content": ...}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def added_token(value: Any, special: bool = True) -> Any:
    if isinstance(value, dict):
        fields = {
            k: value[k] for k in ("single_word", "lstrip", "rstrip", "normalized") if k in value
        }
        return _native.AddedToken(value["content"], special=value.get("special", special), **fields)
    return _native.AddedToken(value, special=special)


# ---- from_pretrained ----


def from_pretrained(*where: Any, **options: Any):
    """Loads the tokenizer of a Hugging Face model from disk (see the module docs); the
    arguments say where, as :func:`resolve_model_dir`'s do."""
    folder = resolve_model_dir(*where, **options)
    config = read_json(folder / CONFIG_FILE)
    special_map = read_json(folder / SPECIAL_TOKENS_FILE)
    if (folder / TOKENIZER_FILE).is_file():
        tokenizer = _native.Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        defaults: Dict[str, str] = {}
    elif (folder / "vocab.json").is_file() and (folder / "merges.txt").is_file():
        tokenizer = byte_level_bpe_from_files(folder, config, special_map)
        add_configured_tokens(tokenizer, config, special_map)
        defaults = CLASS_ROLES[
            "Roberta" if str(config.get("tokenizer_class", "")).startswith("Roberta") else "GPT2"
        ]
    elif (folder / "vocab.txt").is_file():
        tokenizer = wordpiece_from_files(folder, config, special_map)
        add_configured_tokens(tokenizer, config, special_map)
        defaults = CLASS_ROLES["Bert"]
    else:
        raise FileNotFoundError(
            f"{folder} holds no tokenizer.json, vocab.json + merges.txt or vocab.txt"
        )
    record_roles(tokenizer, configured_roles(config, special_map, defaults))
    return tokenizer


# The roles transformers' tokenizer classes give by default, for the folders that
# from_pretrained builds a pipeline for (BERT's vocab.txt, GPT-2's / RoBERTa's vocab.json).
CLASS_ROLES = {
    "Bert": {
        "unk_token": "[UNK]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
    },
    "GPT2": {
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>",
    },
    "Roberta": {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "sep_token": "</s>",
        "pad_token": "<pad>",
        "cls_token": "<s>",
        "mask_token": "<mask>",
    },
}


def configured_roles(
    config: Dict[str, Any], special_map: Dict[str, Any], defaults: Dict[str, str]
) -> Dict[str, str]:
    """The role → token text of a model folder: its configuration files, else ``defaults``
    (a role set to null in the files has no token)."""
    roles = {}
    for role in ROLES:
        token = special(config, special_map, role, defaults.get(role))
        if token is not None:
            roles[role] = token
    return roles


def record_roles(tokenizer, roles: Dict[str, str]) -> None:
    """Remembers the roles of a loaded tokenizer for save_pretrained (for as long as it lives)."""
    # An object that cannot be weakly referenced (TypeError): its roles are derived instead.
    with contextlib.suppress(TypeError):
        _RECORDED_ROLES[tokenizer] = dict(roles)


def special(
    config: Dict[str, Any], special_map: Dict[str, Any], role: str, default: Optional[str]
) -> Optional[str]:
    """A special token of a role: special_tokens_map.json wins over tokenizer_config.json."""
    for source in (special_map, config):
        if role in source:
            return token_content(source[role])
    return default


def byte_level_bpe_from_files(folder: Path, config: Dict[str, Any], special_map: Dict[str, Any]):
    """The GPT-2 / RoBERTa pipeline that transformers builds from vocab.json + merges.txt."""
    from tokenmill import decoders, models, pre_tokenizers, processors

    vocab, merges = models.BPE.read_file(str(folder / "vocab.json"), str(folder / "merges.txt"))
    add_prefix_space = bool(config.get("add_prefix_space", False))
    tokenizer = _native.Tokenizer(
        models.BPE(
            vocab,
            merges,
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
        )
    )
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer_class = str(config.get("tokenizer_class", ""))
    if tokenizer_class.startswith("Roberta"):
        sep = special(config, special_map, "sep_token", "</s>")
        cls = special(config, special_map, "cls_token", "<s>")
        tokenizer.post_processor = processors.RobertaProcessing(
            (sep, vocab[sep]),
            (cls, vocab[cls]),
            add_prefix_space=add_prefix_space,
            trim_offsets=bool(config.get("trim_offsets", True)),
        )
    elif config.get("add_bos_token"):
        bos = special(config, special_map, "bos_token", "<|endoftext|>")
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos}:0 $A:0", pair=f"{bos}:0 $A:0 $B:1", special_tokens=[(bos, vocab[bos])]
        )
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer


def wordpiece_from_files(folder: Path, config: Dict[str, Any], special_map: Dict[str, Any]):
    """The BERT pipeline that transformers builds from vocab.txt."""
    from tokenmill import decoders, models, normalizers, pre_tokenizers, processors

    if not hasattr(models, "WordPiece"):
        raise NotImplementedError(
            f"{folder / 'vocab.txt'} needs tokenmill.models.WordPiece, which this build does not "
            "have"
        )
    unk = special(config, special_map, "unk_token", "[UNK]")
    tokenizer = _native.Tokenizer(
        models.WordPiece.from_file(str(folder / "vocab.txt"), unk_token=unk)
    )
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True,
        handle_chinese_chars=bool(config.get("tokenize_chinese_chars", True)),
        strip_accents=config.get("strip_accents"),
        lowercase=bool(config.get("do_lower_case", True)),
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls = special(config, special_map, "cls_token", "[CLS]")
    sep = special(config, special_map, "sep_token", "[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls}:0 $A:0 {sep}:0",
        pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
        special_tokens=[(cls, tokenizer.token_to_id(cls)), (sep, tokenizer.token_to_id(sep))],
    )
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


def add_configured_tokens(tokenizer, config: Dict[str, Any], special_map: Dict[str, Any]) -> None:
    """The added tokens of tokenizer_config.json (in id order), then the special tokens of
    every role and the additional special tokens."""
    decoder = config.get("added_tokens_decoder") or {}
    tokens = [
        added_token(decoder[k]) for k in sorted(decoder, key=int) if isinstance(decoder[k], dict)
    ]
    if tokens:
        tokenizer.add_tokens([t for t in tokens if not t.special])
        tokenizer.add_special_tokens([t for t in tokens if t.special])
    roles = []
    for role in ROLES:
        for source in (special_map, config):
            if token_content(source.get(role)) is not None:
                roles.append(added_token(source[role]))
                break
    extra = (
        special_map.get("additional_special_tokens")
        or config.get("additional_special_tokens")
        or []
    )
    roles.extend(added_token(t) for t in extra if token_content(t) is not None)
    known = tokenizer.get_vocab()
    missing = [t for t in roles if t.content not in known]
    if missing:
        tokenizer.add_special_tokens(missing)


# ---- save_pretrained ----

# Special tokens whose role can be told from their text (the common vocabularies), most
# likely first. sep / cls come from the post-processor, except for BERT's own names.
ROLE_GUESSES = {
    "bos_token": ["<s>", "<|begin_of_text|>", "<bos>", "<|startoftext|>"],
    "eos_token": ["</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", "<|im_end|>"],
    "unk_token": ["<unk>", "[UNK]", "<|unk|>"],
    "sep_token": ["[SEP]"],
    "pad_token": ["<pad>", "[PAD]", "<|pad|>"],
    "cls_token": ["[CLS]"],
    "mask_token": ["[MASK]", "<mask>"],
}


def processor_roles(processor: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """Roles that a post-processor (its tokenizer.json form) gives its special tokens:
    ``BertProcessing`` cls / sep; ``RobertaProcessing`` cls = bos and sep = eos; a
    ``TemplateProcessing`` whose single template puts special tokens on both sides of ``$A``
    cls (the first) / sep (the last), on the left only bos, on the right only eos; a
    ``Sequence`` the roles of its processors, the first one winning."""
    if not processor:
        return {}
    kind = processor.get("type")
    if kind == "BertProcessing":
        return {"cls_token": processor["cls"][0], "sep_token": processor["sep"][0]}
    if kind == "RobertaProcessing":
        cls, sep = processor["cls"][0], processor["sep"][0]
        return {"bos_token": cls, "eos_token": sep, "sep_token": sep, "cls_token": cls}
    if kind == "Sequence":
        roles: Dict[str, str] = {}
        for inner in processor.get("processors", []):
            for role, token in processor_roles(inner).items():
                roles.setdefault(role, token)
        return roles
    if kind != "TemplateProcessing":
        return {}
    pieces = processor.get("single", [])
    sequences = [i for i, piece in enumerate(pieces) if "Sequence" in piece]
    if not sequences:
        return {}
    before = [p["SpecialToken"]["id"] for p in pieces[: sequences[0]] if "SpecialToken" in p]
    after = [p["SpecialToken"]["id"] for p in pieces[sequences[-1] + 1 :] if "SpecialToken" in p]
    if before and after:
        return {"cls_token": before[0], "sep_token": after[-1]}
    if before:
        return {"bos_token": before[0]}
    if after:
        return {"eos_token": after[-1]}
    return {}


def derived_roles(tokenizer) -> Dict[str, str]:
    """Roles of the tokenizer's special tokens, derived from its pipeline, in this order (an
    earlier source wins): the post-processor (:func:`processor_roles`), the model's unk token,
    the padding's pad token, then the text of the added special tokens, then of vocabulary
    tokens (``ROLE_GUESSES``, candidates in order). Deterministic: the same pipeline gives the
    same roles."""
    specials = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    roles = {
        role: token
        for role, token in processor_roles(
            json.loads(tokenizer.to_str()).get("post_processor")
        ).items()
        if tokenizer.token_to_id(token) is not None
    }
    unk = getattr(tokenizer.model, "unk_token", None)
    if unk and tokenizer.token_to_id(unk) is not None:
        roles.setdefault("unk_token", unk)
    padding = tokenizer.padding
    if padding and tokenizer.token_to_id(padding["pad_token"]) is not None:
        roles.setdefault("pad_token", padding["pad_token"])
    for role, candidates in ROLE_GUESSES.items():
        if role not in roles:
            found = next((c for c in candidates if c in specials), None)
            if found is None:
                found = next((c for c in candidates if tokenizer.token_to_id(c) is not None), None)
            if found is not None:
                roles[role] = found
    return {role: roles[role] for role in ROLES if role in roles}


def special_token_roles(tokenizer) -> Dict[str, str]:
    """The roles save_pretrained writes: those recorded by from_pretrained (whose token is
    still in the vocabulary), and for the other roles those derived from the pipeline
    (:func:`derived_roles`, e.g. a pad token added since)."""
    try:
        recorded = _RECORDED_ROLES.get(tokenizer) or {}
    except TypeError:
        recorded = {}
    roles = derived_roles(tokenizer)
    roles.update(
        {
            role: token
            for role, token in recorded.items()
            if tokenizer.token_to_id(token) is not None
        }
    )
    return {role: roles[role] for role in ROLES if role in roles}


def save_pretrained(
    tokenizer,
    save_directory: PathLike,
    special_tokens_map: Optional[Dict[str, str]] = None,
    model_max_length: Optional[int] = None,
) -> Tuple[str, str, str]:
    """Writes tokenizer.json, tokenizer_config.json and special_tokens_map.json into
    ``save_directory`` (created if needed) and returns their paths. ``special_tokens_map``
    gives roles (``{"eos_token": "</s>", ...}``); the others are those recorded by
    :func:`from_pretrained`, or derived from the pipeline (:func:`special_token_roles`).
    Each file is saved atomically, in that order: a save killed between two files leaves the
    first ones new and the rest old."""
    folder = Path(save_directory)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} exists and is not a directory")
    folder.mkdir(parents=True, exist_ok=True)
    roles = special_token_roles(tokenizer)
    roles.update(special_tokens_map or {})
    added = tokenizer.get_added_tokens_decoder()
    role_tokens = set(roles.values())
    extra = [t.content for t in added.values() if t.special and t.content not in role_tokens]
    config: Dict[str, Any] = {
        "added_tokens_decoder": {
            str(i): {
                "content": t.content,
                "lstrip": t.lstrip,
                "normalized": t.normalized,
                "rstrip": t.rstrip,
                "single_word": t.single_word,
                "special": t.special,
            }
            for i, t in sorted(added.items())
        },
        "clean_up_tokenization_spaces": False,
        "model_max_length": model_max_length if model_max_length is not None else int(1e30),
        "tokenizer_class": "PreTrainedTokenizerFast",
    }
    config.update(roles)
    if extra:
        config["extra_special_tokens"] = extra
    special_map: Dict[str, Any] = dict(roles)
    if extra:
        special_map["additional_special_tokens"] = extra
    paths = (folder / TOKENIZER_FILE, folder / CONFIG_FILE, folder / SPECIAL_TOKENS_FILE)
    tokenizer.save(str(paths[0]))
    write_json_atomically(paths[1], config)
    write_json_atomically(paths[2], special_map)
    return tuple(str(p) for p in paths)  # type: ignore[return-value]


def write_json_atomically(path: Path, value: Dict[str, Any]) -> None:
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ---- train_new_from_iterator ----


def trainer_class(model_type: str):
    """The trainer of a model type (``BPE`` → ``BpeTrainer``, ...), if this build has it."""
    from tokenmill import trainers

    name = {
        "BPE": "BpeTrainer",
        "WordPiece": "WordPieceTrainer",
        "Unigram": "UnigramTrainer",
        "WordLevel": "WordLevelTrainer",
    }.get(model_type)
    cls = getattr(trainers, name, None) if name else None
    if cls is None:
        raise ValueError(
            f"train_new_from_iterator does not support {model_type} models (only BPE, Unigram, "
            "WordLevel and WordPiece)"
        )
    return cls


def is_byte_level(pre_tokenizer: Optional[Dict[str, Any]]) -> bool:
    if pre_tokenizer is None:
        return False
    if pre_tokenizer.get("type") == "ByteLevel":
        return True
    return pre_tokenizer.get("type") == "Sequence" and any(
        p.get("type") == "ByteLevel" for p in pre_tokenizer.get("pretokenizers", [])
    )


def train_new_from_iterator(
    tokenizer,
    text_iterator: Iterable[Union[str, Sequence[str]]],
    vocab_size: int,
    length: Optional[int] = None,
    new_special_tokens: Optional[List[Any]] = None,
    special_tokens_map: Optional[Dict[str, str]] = None,
    **kwargs: Any,
):
    """A new tokenizer with ``tokenizer``'s pipeline (normalizer, pre-tokenizer, model type and
    options, decoder) and special tokens, its model trained on ``text_iterator`` (str or batches
    of str) to ``vocab_size``; the post-processor is kept with its special token ids updated.
    ``special_tokens_map`` renames special tokens (old → new); ``new_special_tokens`` adds
    some; other keyword arguments go to the trainer. Same steps and results as transformers'
    ``PreTrainedTokenizerFast.train_new_from_iterator``."""
    renames = special_tokens_map or {}
    data = json.loads(tokenizer.to_str())
    added_tokens = data.pop("added_tokens")
    post_processor = data.pop("post_processor")
    model = data["model"]
    model_type = model.get("type")
    unk_token = None
    if model_type == "BPE":
        model["vocab"], model["merges"] = {}, []
    elif model_type == "Unigram":
        if model.get("unk_id") is not None:
            unk_token = renames.get(
                model["vocab"][model["unk_id"]][0], model["vocab"][model["unk_id"]][0]
            )
            model["unk_id"] = 0
            model["vocab"] = [[unk_token, 0.0]]
    elif model_type in ("WordLevel", "WordPiece"):
        model["vocab"] = {}
    else:
        raise ValueError(
            f"train_new_from_iterator does not support {model_type} models (only BPE, Unigram, "
            "WordLevel and WordPiece)"
        )
    if model.get("unk_token") in renames:
        model["unk_token"] = renames[model["unk_token"]]
    fresh = _native.Tokenizer.from_str(json.dumps(data))

    special_tokens = []
    for token in added_tokens:
        is_special = token.pop("special", None)
        token.pop("id", None)
        if model_type != "Unigram" and not is_special:
            continue
        token["content"] = renames.get(token["content"], token["content"])
        special_tokens.append(_native.AddedToken(**token))
    special_tokens.extend(new_special_tokens or [])
    if model_type == "BPE":
        for option in ("continuing_subword_prefix", "end_of_word_suffix"):
            if option not in kwargs and model.get(option) is not None:
                kwargs[option] = model[option]
    if model_type == "Unigram" and unk_token is not None:
        kwargs["unk_token"] = unk_token
    if is_byte_level(data.get("pre_tokenizer")):
        from tokenmill import pre_tokenizers

        kwargs["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainer_class(model_type)(
        vocab_size=vocab_size, special_tokens=special_tokens, **kwargs
    )
    fresh.train_from_iterator(text_iterator, trainer=trainer, length=length)

    if post_processor is None:
        return fresh
    update_post_processor(post_processor, fresh, renames)
    trained = json.loads(fresh.to_str())
    trained["post_processor"] = post_processor
    return _native.Tokenizer.from_str(json.dumps(trained))


def update_post_processor(processor: Dict[str, Any], tokenizer, renames: Dict[str, str]) -> None:
    """Points the post-processor's special tokens (renamed) at their ids in the new vocabulary;
    also inside a Sequence of post-processors."""

    def id_of(token: str) -> int:
        token_id = tokenizer.token_to_id(token)
        if token_id is None:
            raise ValueError(
                f"the post-processor uses the token {token!r}, which the new vocabulary does not "
                "have"
            )
        return token_id

    for item in processor.get("processors", []) or []:
        update_post_processor(item, tokenizer, renames)
    for entry in (processor.get("special_tokens") or {}).values():
        tokens = [renames.get(t, t) for t in entry["tokens"]]
        entry["tokens"] = tokens
        entry["ids"] = [id_of(t) for t in tokens]
    for role in ("cls", "sep"):
        if role in processor:
            token = renames.get(processor[role][0], processor[role][0])
            processor[role] = [token, id_of(token)]
