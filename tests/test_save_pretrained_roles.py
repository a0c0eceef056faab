"""save_pretrained keeps the special tokens' roles: transformers.AutoTokenizer loads the saved
folder with the same ids and the same bos / eos / unk / sep / pad / cls / mask tokens as the
original folder, for GPT-2, BERT and a SentencePiece-style (Llama-like) tokenizer. Roles come
from what from_pretrained read; a tokenizer built without a folder gets them derived from its
post-processor and special tokens."""

from __future__ import annotations

import json
import shutil

import pytest
import tokenizers
import tokenmill
import tokenmill.sentencepiece  # noqa: F401  (a submodule, imported on demand)
from conftest import read_sample, shared_path

transformers = pytest.importorskip("transformers")

ROLES = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


@pytest.fixture(scope="module")
def lines():
    text = read_sample(
        shared_path("corpora", "gutenberg", "pg244_en_a_study_in_scarlet.txt"), 20_000
    )
    return [line for line in text.splitlines() if line.strip()][:80]


def write_config(folder, **config):
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")


def gpt2_folder(root):
    folder = root / "gpt2"
    folder.mkdir()
    src = shared_path("pretrained", "gpt2")
    shutil.copy(src / "encoder.json", folder / "vocab.json")
    shutil.copy(src / "vocab.bpe", folder / "merges.txt")
    write_config(
        folder,
        tokenizer_class="GPT2Tokenizer",
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        add_prefix_space=False,
    )
    return folder


def bert_folder(root):
    folder = root / "bert"
    folder.mkdir()
    shutil.copy(shared_path("pretrained", "bert_base_uncased", "vocab.txt"), folder / "vocab.txt")
    write_config(folder, tokenizer_class="BertTokenizer", do_lower_case=True)
    return folder


def llama_like_folder(root):
    """Mistral's SentencePiece BPE as a tokenizer.json with a `<s> $A` template."""
    folder = root / "llama"
    folder.mkdir()
    tok = tokenmill.sentencepiece.to_tokenizer(
        str(shared_path("pretrained", "mistral", "tokenizer.model.v1"))
    )
    tok.post_processor = tokenmill.processors.TemplateProcessing(
        single="<s>:0 $A:0",
        pair="<s>:0 $A:0 <s>:1 $B:1",
        special_tokens=[("<s>", tok.token_to_id("<s>"))],
    )
    tok.save(str(folder / "tokenizer.json"))
    write_config(
        folder,
        tokenizer_class="PreTrainedTokenizerFast",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )
    return folder


FOLDERS = {"gpt2": gpt2_folder, "bert": bert_folder, "llama": llama_like_folder}


def roles_of(tok):
    return {role: getattr(tok, role) for role in ROLES}


def ids_of(tok, lines):
    return [tok(line)["input_ids"] for line in lines]


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_save_pretrained_keeps_ids_and_roles(name, tmp_path, lines):
    original_dir = FOLDERS[name](tmp_path)
    original = transformers.AutoTokenizer.from_pretrained(str(original_dir))
    ours = tokenmill.Tokenizer.from_pretrained(original_dir)
    ours.save_pretrained(tmp_path / "saved")
    saved = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "saved"))
    assert roles_of(saved) == roles_of(original)
    assert ids_of(saved, lines) == ids_of(original, lines)
    assert [ours.encode(line).ids for line in lines] == ids_of(original, lines)


@pytest.mark.parametrize("name", ["bert", "llama"])
def test_roles_derived_without_from_pretrained(name, tmp_path, lines):
    """A tokenizer rebuilt from its JSON has no recorded roles: they come from its
    post-processor (BERT's [CLS] / [SEP], the `<s>` template), its model's unk token and the
    special tokens' text, and match the original's."""
    original_dir = FOLDERS[name](tmp_path)
    original = transformers.AutoTokenizer.from_pretrained(str(original_dir))
    rebuilt = tokenmill.Tokenizer.from_str(
        tokenmill.Tokenizer.from_pretrained(original_dir).to_str()
    )
    rebuilt.save_pretrained(tmp_path / "derived")
    saved = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "derived"))
    assert ids_of(saved, lines) == ids_of(original, lines)
    expected = roles_of(original)
    if name == "llama":
        # The folder named eos "</s>", which no post-processor uses: told from its text.
        assert expected["eos_token"] == "</s>"
    assert roles_of(saved) == expected


def test_derived_roles_follow_the_post_processor():
    from tokenmill.pretrained import processor_roles

    cases = [
        (
            tokenizers.processors.BertProcessing(("[SEP]", 102), ("[CLS]", 101)),
            {"cls_token": "[CLS]", "sep_token": "[SEP]"},
        ),
        (
            tokenizers.processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
            {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>"},
        ),
        (
            tokenizers.processors.TemplateProcessing(
                single="[CLS] $A [SEP]",
                pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
            ),
            {"cls_token": "[CLS]", "sep_token": "[SEP]"},
        ),
        (
            tokenizers.processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)]),
            {"bos_token": "<s>"},
        ),
        (
            tokenizers.processors.TemplateProcessing(
                single="$A <eos>", special_tokens=[("<eos>", 1)]
            ),
            {"eos_token": "<eos>"},
        ),
    ]
    for processor, expected in cases:
        assert processor_roles(json.loads(processor.__getstate__())) == expected
    assert processor_roles(None) == {}
