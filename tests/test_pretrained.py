"""Hugging Face interop: Tokenizer.from_pretrained (model folders and hub-cache snapshots, no
network), save_pretrained (loaded by transformers.AutoTokenizer with the same ids) and
train_new_from_iterator (same vocabulary and merges as transformers' on the same corpus)."""

from __future__ import annotations

import json
import shutil
import sysconfig
from pathlib import Path

import pytest
import tokenizers
import tokenmill
from conftest import STUDY_IN_SCARLET, corpus_text, gpt2, non_empty_lines, shared_path

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def lines():
    samples = [(STUDY_IN_SCARLET, 30_000)]
    samples += [(f"multilingual/{lang}", 10_000) for lang in ["de", "zh", "ru"]]
    return [line for sample in samples for line in non_empty_lines(corpus_text(sample))][::4][:150]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """A GPT-2 model folder as on the hub: tokenizer.json (built by tokenizers), vocab.json,
    merges.txt, tokenizer_config.json."""
    folder = tmp_path_factory.mktemp("gpt2")
    src = shared_path("pretrained", "gpt2")
    tok = gpt2(tokenizers)
    tok.post_processor = tokenizers.processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens(["<|endoftext|>"])
    tok.save(str(folder / "tokenizer.json"))
    shutil.copy(src / "encoder.json", folder / "vocab.json")
    merges = (src / "vocab.bpe").read_text(encoding="utf-8")
    (folder / "merges.txt").write_text(merges, encoding="utf-8")
    config = {
        "tokenizer_class": "GPT2Tokenizer",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "unk_token": "<|endoftext|>",
        "add_prefix_space": False,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def hf_ids(tok, lines):
    return [tok(line)["input_ids"] for line in lines]


def test_from_pretrained_folder_and_hub_cache(gpt2_dir, tmp_path, lines):
    theirs = transformers.AutoTokenizer.from_pretrained(str(gpt2_dir))
    ours = tokenmill.Tokenizer.from_pretrained(gpt2_dir)
    assert [ours.encode(line).ids for line in lines] == hf_ids(theirs, lines)
    # The hub cache layout, found by id with no network.
    repo = tmp_path / "models--openai--gpt2"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    shutil.copytree(gpt2_dir, repo / "snapshots" / "abc123")
    cached = tokenmill.Tokenizer.from_pretrained("openai/gpt2", cache_dir=tmp_path)
    assert cached.encode(lines[0]).ids == ours.encode(lines[0]).ids
    with pytest.raises(FileNotFoundError, match="download=True"):
        tokenmill.Tokenizer.from_pretrained("nobody/nothing", cache_dir=tmp_path)


def test_from_pretrained_vocab_and_merges(gpt2_dir, tmp_path, lines):
    """Without tokenizer.json: the pipeline transformers builds from vocab.json + merges.txt."""
    folder = tmp_path / "slow"
    folder.mkdir()
    for name in ["vocab.json", "merges.txt", "tokenizer_config.json"]:
        shutil.copy(gpt2_dir / name, folder / name)
    theirs = transformers.AutoTokenizer.from_pretrained(str(folder))
    ours = tokenmill.Tokenizer.from_pretrained(folder)
    assert [ours.encode(line).ids for line in lines] == hf_ids(theirs, lines)
    assert ours.token_to_id("<|endoftext|>") == theirs.convert_tokens_to_ids("<|endoftext|>")


def test_save_pretrained_loads_in_transformers(gpt2_dir, tmp_path, lines):
    ours = tokenmill.Tokenizer.from_pretrained(gpt2_dir)
    ours.add_special_tokens(["<pad>"])
    paths = ours.save_pretrained(tmp_path / "saved")
    assert sorted(Path(p).name for p in paths) == [
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "saved"))
    assert hf_ids(theirs, lines) == [ours.encode(line).ids for line in lines]
    assert theirs.eos_token == "<|endoftext|>" and theirs.pad_token == "<pad>"
    assert theirs.decode(ours.encode(lines[1]).ids) == ours.decode(ours.encode(lines[1]).ids)


def python_code(max_bytes=400_000):
    """Python standard library sources (always there), in a fixed order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out, size = [], 0
    for path in sorted(root.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append(text)
        size += len(text)
        if size >= max_bytes:
            break
    return out


def test_train_new_from_iterator_like_transformers(gpt2_dir):
    corpus = python_code()
    theirs = transformers.AutoTokenizer.from_pretrained(str(gpt2_dir)).train_new_from_iterator(
        corpus, vocab_size=800
    )
    ours = tokenmill.Tokenizer.from_pretrained(gpt2_dir).train_new_from_iterator(
        corpus, vocab_size=800, show_progress=False
    )
    assert ours.get_vocab() == theirs.get_vocab()
    their_json = json.loads(theirs.backend_tokenizer.to_str())
    our_json = json.loads(ours.to_str())
    assert our_json["model"]["merges"] == their_json["model"]["merges"]
    for key in ["normalizer", "pre_tokenizer", "post_processor", "decoder"]:
        assert our_json[key] == their_json[key], key
    sample = corpus[0][:2000]
    assert ours.encode(sample).ids == theirs(sample)["input_ids"]


def test_invalid_argument_error_is_a_value_error():
    """Where tokenizers raises ValueError (e.g. an unknown split behavior), tokenmill's
    InvalidArgumentError is caught by ``except ValueError`` too."""
    with pytest.raises(ValueError):
        tokenizers.pre_tokenizers.Split(" ", "sideways")
    with pytest.raises(ValueError) as raised:
        tokenmill.pre_tokenizers.Split(" ", "sideways")
    assert isinstance(raised.value, tokenmill.InvalidArgumentError)
    assert issubclass(tokenmill.InvalidArgumentError, tokenmill.TokenmillError)
