"""Every tokenizer file the CLI reads, behind one interface, and the conversions between them.

- ``tokenizer.json`` (Hugging Face ``tokenizers``), or a model folder holding one, or
  ``vocab.json`` + ``merges.txt`` (GPT-2's byte-level BPE), or ``vocab.txt`` (BERT's WordPiece):
  a :class:`tokenmill.Tokenizer`.
- ``.model`` (SentencePiece): :class:`tokenmill.sentencepiece.SentencePieceProcessor`, so ids are
  exactly sentencepiece's.
- ``.tiktoken`` (OpenAI's rank files): a :mod:`tokenmill.tiktoken` ``Encoding``. The file holds
  only the ranks; the split pattern and special tokens are those of the encoding named by
  ``--encoding``, else by the file name (``cl100k_base.tiktoken``), else r50k_base's split
  pattern (GPT-2's, which is also byte-level BPE's) and no special tokens.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tokenmill import (
    Regex,
    Tokenizer,
    TokenmillError,
    decoders,
    models,
    pre_tokenizers,
    pretrained as hf,
    processors,
    sentencepiece as spm,
)
from tokenmill._atomic import atomic_open, temporary_folder
from tokenmill.tiktoken import load as tiktoken_load, openai_public
from tokenmill.tiktoken.core import Encoding


class Failure(TokenmillError):
    """A failure the CLI reports in one line (exit status 1). The library functions that load
    tokenizer files through this module (``tokenmill.data``, ``tokenmill.evaluate``) raise it
    too: callers catch it as ``tokenmill.TokenmillError``."""


#: Text every conversion is checked on: the converted file must give the same ids.
CHECK_TEXT = (
    "Hello world! It's 2024: naïve café, Größe 123456 über.\n"
    "  Two  spaces,\ttab and newline\n"
    "def f(x):\n    return x ** 2  # code\n"
    "Здравствуй, мир. 你好，世界！ こんにちは 안녕하세요 مرحبا 🙂👍"
)

TIKTOKEN_DEFAULT = "r50k_base"
FORMAT_NAMES = {
    "json": "tokenizer.json",
    "model": "SentencePiece .model",
    "tiktoken": ".tiktoken",
    "vocab.txt": "vocab.txt",
    "vocab.json": "vocab.json + merges.txt",
}


def kind_of(path: str) -> str:
    """The format a path names: ``json``, ``model``, ``tiktoken``, ``vocab.txt``,
    ``vocab.json`` or ``folder``."""
    name = os.path.basename(path)
    if os.path.isdir(path):
        return "folder"
    if name.endswith("vocab.txt"):
        return "vocab.txt"
    if name.endswith("vocab.json") or name.endswith("merges.txt"):
        return "vocab.json"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if name.endswith(".json"):
        return "json"
    if ".model" in name:  # tokenizer.model, m.model, tokenizer.model.v3
        return "model"
    raise Failure(
        f"{path}: unknown format (expected tokenizer.json, .model, .tiktoken, vocab.txt, "
        "vocab.json + merges.txt or a model folder)"
    )


def describe(component) -> str:
    """A pipeline component of tokenizer.json (a dict or None) in a few words."""
    if not component:
        return "none"
    kind = component.get("type", "?")
    children = component.get("normalizers") or component.get("pretokenizers")
    children = children or component.get("decoders") or component.get("processors")
    if children:
        return f"{kind}[{', '.join(describe(c) for c in children)}]"
    return kind


class Loaded:
    """A tokenizer read from a file, whatever its format."""

    path: str
    kind: str

    def encode(self, texts: Sequence[str], add_special_tokens: bool = True) -> List[List[int]]:
        raise NotImplementedError

    def tokens(self, ids: Sequence[int]) -> List[str]:
        raise NotImplementedError

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        raise NotImplementedError

    def vocab_size(self) -> int:
        raise NotImplementedError

    def has_id(self, i: int) -> bool:
        raise NotImplementedError

    def info(self) -> List[Tuple[str, str]]:
        raise NotImplementedError

    def pipeline(self) -> str:
        """`` (normalizer ..., pre-tokenizer ...)`` where the file has such a pipeline."""
        return ""

    def check_ids(self, ids: Sequence[int]) -> None:
        for i in ids:
            if not self.has_id(i):
                raise Failure(
                    f"id {i} is not in the vocabulary of {self.path} "
                    f"(ids 0..{self.vocab_size() - 1})"
                )

    # Conversions: each returns what the target format stores, or raises Failure saying why not.
    def to_tokenizer(self):
        raise NotImplementedError

    def to_sentencepiece(self) -> bytes:
        return spm.from_tokenizer(self.to_tokenizer())

    def to_tiktoken(self) -> Tuple[Dict[bytes, int], str]:
        raise NotImplementedError


class HfLoaded(Loaded):
    def __init__(self, path: str, kind: str, tokenizer) -> None:
        self.path, self.kind, self.tokenizer = path, kind, tokenizer
        self.config = json.loads(tokenizer.to_str())

    def encode(self, texts, add_special_tokens=True):
        batch = self.tokenizer.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return [e.ids for e in batch]

    def tokens(self, ids):
        return [self.tokenizer.id_to_token(i) for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        return self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def vocab_size(self):
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    def has_id(self, i):
        return i >= 0 and self.tokenizer.id_to_token(i) is not None

    def info(self):
        c = self.config
        model = c.get("model") or {}
        special = [t for t in c.get("added_tokens") or [] if t.get("special")]
        rows = [
            ("format", self.kind),
            ("model", model.get("type", "?")),
            ("vocabulary size", str(self.vocab_size())),
            ("special tokens", " ".join(f"{t['content']}={t['id']}" for t in special) or "none"),
        ]
        unk = model.get("unk_token")
        if unk is None and model.get("unk_id") is not None:
            unk = self.tokenizer.id_to_token(model["unk_id"])
        rows.append(("unknown token", unk or "none"))
        for key in ("continuing_subword_prefix", "end_of_word_suffix"):
            if model.get(key):
                rows.append((key.replace("_", " "), model[key]))
        if model.get("byte_fallback"):
            rows.append(("byte fallback", "yes"))
        for key in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
            rows.append((key.replace("_", "-"), describe(c.get(key))))
        return rows

    def to_tokenizer(self):
        return self.tokenizer

    def pipeline(self):
        c = self.config
        return (
            f" (normalizer {describe(c.get('normalizer'))}, pre-tokenizer "
            f"{describe(c.get('pre_tokenizer'))})"
        )

    def to_tiktoken(self):
        """The ranks of a byte-level BPE (rank = id) and the tiktoken encoding whose split
        pattern the pre-tokenizer uses."""
        model = self.config.get("model") or {}
        if model.get("type") != "BPE" or not _is_byte_level(self.config.get("decoder")):
            raise Failure(
                f"{self.path} is not a byte-level BPE (model {model.get('type')}, decoder "
                f"{describe(self.config.get('decoder'))}): a .tiktoken file holds byte ranks"
            )
        byte_of = tiktoken_load._data_gym_byte_table()
        pattern = _split_pattern(self.config.get("pre_tokenizer"))
        names = [n for n, p in openai_public.ENCODING_PATTERNS.items() if _same(p, pattern)]
        if not names:
            raise Failure(
                f"{self.path} splits words with a pattern no tiktoken encoding has; a .tiktoken "
                "file stores no pattern"
            )
        try:
            ranks = {bytes(byte_of[ch] for ch in t): i for t, i in model["vocab"].items()}
        except KeyError as e:
            raise Failure(f"{self.path}: token with {e} is not byte-level") from None
        return ranks, ("r50k_base" if "r50k_base" in names else names[0])


GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _same(tiktoken_pattern: str, pattern: Optional[str]) -> bool:
    return pattern is not None and hf_pattern(tiktoken_pattern) == pattern


def hf_pattern(tiktoken_pattern: str) -> str:
    """A tiktoken split pattern as tokenizer.json's Split writes it (Oniguruma syntax): GPT-2's
    own for r50k's; ``{1,3}+`` (possessive in tiktoken's regex crate, a repeated group in
    Oniguruma) loses its ``+``."""
    if tiktoken_pattern == openai_public.R50K_PAT_STR:
        return GPT2_PATTERN
    return tiktoken_pattern.replace("{1,3}+", "{1,3}")


def _split_pattern(pre_tokenizer) -> Optional[str]:
    """The split pattern of a byte-level pre-tokenizer (ByteLevel with its regex, or a Split
    followed by ByteLevel without one)."""
    if not pre_tokenizer:
        return None
    if pre_tokenizer.get("type") == "ByteLevel":
        return GPT2_PATTERN if pre_tokenizer.get("use_regex", True) else None
    steps = pre_tokenizer.get("pretokenizers") or []
    if (
        pre_tokenizer.get("type") == "Sequence"
        and len(steps) == 2
        and steps[0].get("type") == "Split"
        and steps[1].get("type") == "ByteLevel"
        and not steps[1].get("use_regex", True)
    ):
        return (steps[0].get("pattern") or {}).get("Regex")
    return None


def _is_byte_level(component) -> bool:
    if not component:
        return False
    if component.get("type") == "ByteLevel":
        return True
    return any(_is_byte_level(c) for c in component.get("decoders") or [])


class SentencePieceLoaded(Loaded):
    KINDS = {1: "Unigram", 2: "BPE", 3: "word", 4: "char"}

    def __init__(self, path: str, processor) -> None:
        self.path, self.kind, self.sp = path, "SentencePiece .model", processor

    def encode(self, texts, add_special_tokens=True):
        return self.sp.encode(list(texts))

    def tokens(self, ids):
        return [self.sp.id_to_piece(i) for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        return self.sp.decode(list(ids))

    def vocab_size(self):
        return self.sp.get_piece_size()

    def has_id(self, i):
        return 0 <= i < self.sp.get_piece_size()

    def info(self):

        sp = self.sp
        n = sp.get_piece_size()
        special = [
            f"{sp.id_to_piece(i)}={i}"
            for i in range(n)
            if sp.is_control(i) or sp.is_unknown(i) or _native_user_defined(sp, i)
        ]
        charsmap, dummy, remove_extra, _ = spm._native.normalizer_settings(
            sp.serialized_model_proto()
        )
        normalizer = ("precompiled charsmap" if charsmap else "identity") + (
            ", collapse extra spaces" if remove_extra else ""
        )
        return [
            ("format", self.kind),
            ("model", self.KINDS.get(sp._model.model_type(), "?")),
            ("vocabulary size", str(n)),
            ("special tokens", " ".join(special) or "none"),
            ("unknown token", sp.id_to_piece(sp.unk_id()) if sp.unk_id() >= 0 else "none"),
            ("byte fallback", "yes" if any(sp.is_byte(i) for i in range(n)) else "no"),
            ("normalizer", normalizer),
            ("pre-tokenizer", "spaces as ▁" + (", dummy prefix ▁" if dummy else "")),
            ("post-processor", "none (add_bos / add_eos are options of encode)"),
            ("decoder", "▁ to spaces, byte pieces to bytes"),
        ]

    def to_tokenizer(self):

        return spm.to_tokenizer(self.sp)

    def to_sentencepiece(self):
        return self.sp.serialized_model_proto()

    def to_tiktoken(self):
        raise Failure(
            f"{self.path} is a SentencePiece model: its pieces are text, not byte ranks, so it "
            "has no .tiktoken form"
        )


def _native_user_defined(sp, i: int) -> bool:
    return sp._model.piece_type(i) == 4  # USER_DEFINED in sentencepiece's ModelProto


class TiktokenLoaded(Loaded):
    def __init__(self, path: str, encoding, ranks: Dict[bytes, int], assumed: bool) -> None:
        self.path, self.kind, self.enc, self.ranks = path, "tiktoken rank file", encoding, ranks
        self.assumed = assumed
        self.by_id = {i: t for t, i in ranks.items()}
        self.by_id.update({i: t.encode() for t, i in encoding._special_tokens.items()})

    def encode(self, texts, add_special_tokens=True):
        return self.enc.encode_batch(list(texts), allowed_special="all")

    def tokens(self, ids):
        return [self.by_id[i].decode("utf-8", errors="backslashreplace") for i in ids]

    def decode(self, ids, skip_special_tokens=False):
        if skip_special_tokens:
            ids = [i for i in ids if not self.enc.is_special_token(i)]
        return self.enc.decode(list(ids))

    def vocab_size(self):
        return max(self.by_id) + 1

    def has_id(self, i):
        return i in self.by_id

    def info(self):
        by_id = sorted(self.enc._special_tokens.items(), key=lambda x: x[1])
        specials = " ".join(f"{t}={i}" for t, i in by_id)
        return [
            ("format", self.kind),
            ("model", "byte-level BPE (tiktoken)"),
            (
                "encoding",
                self.enc.name
                + (
                    " split pattern, assumed (name the file <encoding>.tiktoken or pass --encoding)"
                    if self.assumed
                    else " (its split pattern and special tokens)"
                ),
            ),
            ("vocabulary size", str(self.vocab_size())),
            ("special tokens", specials or "none"),
            ("unknown token", "none (byte-level: every text encodes)"),
            ("normalizer", "none"),
            ("pre-tokenizer", "split pattern " + self.enc._pat_str),
            ("post-processor", "none"),
            ("decoder", "ranks to bytes, UTF-8"),
        ]

    def to_tiktoken(self):
        return dict(self.ranks), self.enc.name

    def to_tokenizer(self):
        """tiktoken's encoding as a tokenizer.json byte-level BPE: the merges are rebuilt from
        the ranks (each token of two or more bytes from its splits into two ranked tokens, in
        rank order), whole pieces in the vocabulary are taken as is (``ignore_merges``), as
        tiktoken does, and the special tokens keep their ids."""
        char_of = {b: ch for ch, b in tiktoken_load._data_gym_byte_table().items()}

        def text(token: bytes) -> str:
            return "".join(char_of[b] for b in token)

        ranks = self.ranks
        merges = []
        for token, rank in ranks.items():
            splits = [
                (ranks[token[:k]], ranks[token[k:]], k)
                for k in range(1, len(token))
                if ranks.get(token[:k], rank) < rank and ranks.get(token[k:], rank) < rank
            ]
            merges += [(rank, a, b, token[:k], token[k:]) for a, b, k in sorted(splits)]
        merges.sort()
        vocab = {text(t): i for t, i in ranks.items()}
        # The special tokens are in the model's vocabulary too: an added token the model lacks
        # gets the next free id on loading (in `tokenizers` too), not the id it is saved with.
        vocab.update(self.enc._special_tokens)
        tok = Tokenizer(
            models.BPE(
                vocab,
                [(text(m[3]), text(m[4])) for m in merges],
                ignore_merges=True,
            )
        )
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(hf_pattern(self.enc._pat_str)), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        config = json.loads(tok.to_str())
        config["added_tokens"] = [
            {
                "id": i,
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t, i in sorted(self.enc._special_tokens.items(), key=lambda x: x[1])
        ]
        return Tokenizer.from_str(json.dumps(config))


def load(path: str, encoding: Optional[str] = None) -> Loaded:
    """The tokenizer in ``path`` (any format the CLI reads, see the module docstring)."""
    if not os.path.exists(path):
        raise Failure(f"{path}: no such file or folder")
    kind = kind_of(path)
    if encoding is not None and kind != "tiktoken":
        raise Failure(f"--encoding applies to .tiktoken files, not to {path}")
    if kind == "model":
        return SentencePieceLoaded(path, spm.SentencePieceProcessor(model_file=path))
    if kind == "tiktoken":
        return load_tiktoken(path, encoding)
    if kind == "json":
        return HfLoaded(path, "tokenizer.json", Tokenizer.from_file(path))
    if kind == "folder":
        return HfLoaded(path, "model folder", hf.from_pretrained(path))
    folder = Path(path).parent
    config, special_map = (
        hf.read_json(folder / hf.CONFIG_FILE),
        hf.read_json(folder / hf.SPECIAL_TOKENS_FILE),
    )
    if kind == "vocab.txt":
        if Path(path).name != "vocab.txt":
            raise Failure(f"{path}: a WordPiece vocabulary is read as vocab.txt (rename it)")
        return HfLoaded(path, "vocab.txt", hf.wordpiece_from_files(folder, config, special_map))
    if not ((folder / "vocab.json").is_file() and (folder / "merges.txt").is_file()):
        raise Failure(f"{path}: a byte-level BPE needs vocab.json and merges.txt in {folder}")
    tokenizer = hf.byte_level_bpe_from_files(folder, config, special_map)
    return HfLoaded(path, "vocab.json + merges.txt", tokenizer)


def load_tiktoken(path: str, encoding: Optional[str]) -> TiktokenLoaded:
    """A rank file with the split pattern and special tokens of ``encoding``, else of the
    encoding the file is named after; else r50k_base's pattern and no special tokens."""
    name = encoding or Path(path).name[: -len(".tiktoken")]
    if name not in openai_public.ENCODING_PATTERNS:
        if encoding is not None:
            raise Failure(
                f"unknown encoding {encoding!r} "
                f"(one of {', '.join(openai_public.ENCODING_PATTERNS)})"
            )
        name = TIKTOKEN_DEFAULT
        specials = {}
    else:
        specials = openai_public.special_tokens(name)
    ranks = tiktoken_load.load_tiktoken_bpe(path)
    taken = set(ranks.values())
    specials = {t: i for t, i in specials.items() if i not in taken}
    enc = Encoding(
        name,
        pat_str=openai_public.ENCODING_PATTERNS[name],
        mergeable_ranks=ranks,
        special_tokens=specials,
    )
    return TiktokenLoaded(path, enc, ranks, assumed=not specials and encoding is None)


# ---- writing ----------------------------------------------------------------------------


def target_kind(path: str) -> str:
    kind = kind_of(path) if not os.path.isdir(path) else "folder"
    if kind == "folder":
        raise Failure(f"{path} is a folder: name the file to write (tokenizer.json, ...)")
    return kind


def write_converted(source: Loaded, output: str, encoding: Optional[str] = None) -> List[str]:
    """Writes ``source`` in the format ``output`` names, after checking that the written files
    give the same ids as ``source`` on :data:`CHECK_TEXT`; the paths written."""
    kind = target_kind(output)
    if kind == "tiktoken" and encoding is None:
        encoding = source.to_tiktoken()[1]
    folder = os.path.dirname(os.path.abspath(output))
    # Beside the output, named and locked as the temporary files of saves: what a killed
    # conversion leaves is removed by the next one (a TemporaryDirectory would stay forever).
    with temporary_folder(output) as tmp:
        name = os.path.basename(output)
        written = _write(source, kind, os.path.join(tmp, name))
        again = load(os.path.join(tmp, name), encoding if kind == "tiktoken" else None)
        want = source.encode([CHECK_TEXT], add_special_tokens=False)[0]
        got = again.encode([CHECK_TEXT], add_special_tokens=False)[0]
        if want != got:
            at = next(
                (k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got))
            )
            raise Failure(
                f"{source.path} has no exact {FORMAT_NAMES[kind]} form{source.pipeline()}: "
                f"converted, it encodes a test text otherwise (token {at}: "
                f"{source.tokens(want[at : at + 3])} vs {again.tokens(got[at : at + 3])})"
            )
        paths = []
        for file in written:
            target = os.path.join(folder, file)
            os.replace(os.path.join(tmp, file), target)
            paths.append(os.path.abspath(target))
    return paths


def _write(source: Loaded, kind: str, path: str) -> List[str]:
    """Writes the files of ``kind`` for ``path``; their names (relative to its folder)."""
    name = os.path.basename(path)
    folder = os.path.dirname(path)
    if kind == "json":
        text = source.to_tokenizer().to_str(pretty=True)
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return [name]
    if kind == "model":
        with atomic_open(path, "wb") as f:
            f.write(source.to_sentencepiece())
        return [name]
    if kind == "tiktoken":
        ranks, _ = source.to_tiktoken()
        tiktoken_load.dump_tiktoken_bpe(ranks, path)
        _honour_umask(path)
        return [name]
    config = json.loads(source.to_tokenizer().to_str())
    model = config.get("model") or {}
    if kind == "vocab.txt":
        if model.get("type") != "WordPiece":
            raise Failure(f"{source.path} is a {model.get('type')} model; vocab.txt is WordPiece's")
        ordered = sorted(model["vocab"].items(), key=lambda x: x[1])
        with atomic_open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(t + "\n" for t, _ in ordered))
        bert = _bert_settings(config)
        with atomic_open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
            json.dump(bert, f, indent=2)
        return [name, "tokenizer_config.json"]
    if model.get("type") != "BPE":
        raise Failure(f"{source.path} is a {model.get('type')} model; vocab.json is BPE's")
    if name != "vocab.json":
        raise Failure(f"write vocab.json (merges.txt goes beside it), not {name}")
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    with atomic_open(path, "w", encoding="utf-8") as f:
        json.dump(model["vocab"], f, ensure_ascii=False)
    with atomic_open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(m + "\n" for m in merges))
    return [name, "merges.txt"]


def _bert_settings(config) -> dict:
    """tokenizer_config.json for a WordPiece tokenizer.json: the BERT settings of its
    normalizer, so that vocab.txt loads back with the same pipeline."""
    normalizer = config.get("normalizer") or {}
    model = config["model"]
    if normalizer.get("type") != "BertNormalizer":
        raise Failure(
            "vocab.txt loads with BERT's pipeline; this tokenizer's normalizer is "
            f"{describe(normalizer)}, not BertNormalizer"
        )
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(normalizer.get("lowercase")),
        "strip_accents": normalizer.get("strip_accents"),
        "tokenize_chinese_chars": bool(normalizer.get("handle_chinese_chars", True)),
        "unk_token": model.get("unk_token", "[UNK]"),
    }


def _honour_umask(path: str) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
