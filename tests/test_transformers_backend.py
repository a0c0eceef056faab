"""tokenmill as the backend of `transformers` fast tokenizers.

Every tokenizer in ../shared/pretrained that transformers can load offline is built twice with
transformers' own classes (GPT-2 and RoBERTa from the GPT-2 vocab/merges, BERT uncased and
Chinese from vocab.txt, Llama from the Mistral SentencePiece models and the sentencepiece test
BPE model, T5 from the sentencepiece test unigram models, CLIP from its merges (its class wraps
the backend's decode, re-done on tokenmill's), cl100k_base (full battery), o200k_base,
p50k_base and r50k_base (basic calls) through the tokenizer.json transformers'
TikTokenConverter writes); one copy keeps its `tokenizers` backend, the other is
switched to tokenmill by `tokenmill.transformers.accelerate`. A differential battery then
compares them: calls with pairs, every truncation strategy, stride with overflowing tokens,
offsets, both padding sides, NumPy tensors, decoding, chat templates, added tokens and
save_pretrained round trips. Also: `tokenizers` components given to tokenmill setters and
Sequence constructors are converted through their JSON state.
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import shutil

import pytest
from conftest import SHERLOCK, corpus_text, read_sample, shared_path
from test_transformers_call import plain as values

os.environ.setdefault("HF_HUB_OFFLINE", "1")
tokenizers = pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
np = pytest.importorskip("numpy")
import tokenmill  # noqa: E402 (after importorskip)
import tokenmill.transformers as tm_transformers  # noqa: E402 (after importorskip)

CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{{ eos_token }}"
    "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)


def model_dir(tmp_path_factory, name, files):
    """A model folder holding copies of shared pretrained files under the names transformers
    looks for."""
    folder = tmp_path_factory.mktemp(name)
    for target, source in files.items():
        shutil.copyfile(shared_path("pretrained", *source.split("/")), folder / target)
    return str(folder)


@pytest.fixture(scope="session")
def cl100k_json(tmp_path_factory):
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = shared_path("pretrained", "cl100k_base", "cl100k_base.tiktoken")
    converter = TikTokenConverter(
        vocab_file=str(ranks), pattern=CL100K_PAT, extra_special_tokens=CL100K_SPECIALS
    )
    path = tmp_path_factory.mktemp("cl100k") / "tokenizer.json"
    converter.converted().save(str(path))
    return str(path)


# The other OpenAI rank files in ../shared/pretrained, converted by transformers'
# TikTokenConverter with the pattern and special tokens of their tiktoken encoding.
OPENAI_RANK_FILES = {
    "o200k": ("o200k_base", "o200k_base/o200k_base.tiktoken"),
    "p50k": ("p50k_base", "p50k_base/p50k_base.tiktoken"),
    "r50k_whisper": ("r50k_base", "whisper/gpt2.tiktoken"),
}


def openai_tokenizer(tmp_path_factory, kind):
    """A transformers fast tokenizer from a tiktoken rank file, as TikTokenConverter makes it."""
    import tokenmill.tiktoken as tm_tiktoken
    from transformers.convert_slow_tokenizer import TikTokenConverter

    name, file = OPENAI_RANK_FILES[kind]
    ranks = str(shared_path("pretrained", *file.split("/")))
    encoding = tm_tiktoken.get_encoding(name, path=ranks)
    converter = TikTokenConverter(
        vocab_file=ranks, pattern=encoding._pat_str, extra_special_tokens=encoding._special_tokens
    )
    path = tmp_path_factory.mktemp(kind) / "tokenizer.json"
    converter.converted().save(str(path))
    return transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(path), bos_token="<|endoftext|>", eos_token="<|endoftext|>"
    )


def clip_dir(tmp_path_factory):
    """vocab.json + merges.txt of OpenAI CLIP, built from its bpe_simple_vocab_16e6.txt.gz as
    CLIP's simple_tokenizer does (see pretrained/MANIFEST.md)."""
    import gzip

    from transformers.convert_slow_tokenizer import bytes_to_unicode

    with gzip.open(shared_path("pretrained", "clip", "bpe_simple_vocab_16e6.txt.gz")) as f:
        merges = f.read().decode("utf-8").split("\n")[1 : 49152 - 256 - 2 + 1]
    vocab = list(bytes_to_unicode().values())
    vocab += [v + "</w>" for v in vocab]
    vocab += ["".join(m.split()) for m in merges] + ["<|startoftext|>", "<|endoftext|>"]
    folder = tmp_path_factory.mktemp("clip")
    (folder / "vocab.json").write_text(
        json.dumps({t: i for i, t in enumerate(vocab)}), encoding="utf-8"
    )
    (folder / "merges.txt").write_text(
        "#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8"
    )
    return str(folder)


def _factories(tmp_path_factory, request):
    """name -> a function building a fresh stock transformers tokenizer."""
    t = transformers

    def load(cls, files, **kwargs):
        return lambda: cls.from_pretrained(
            model_dir(tmp_path_factory, cls.__name__, files), **kwargs
        )

    gpt2 = {"vocab.json": "gpt2/encoder.json", "merges.txt": "gpt2/vocab.bpe"}
    mistral = "mistral/tokenizer.model.v1"
    return {
        "gpt2": load(t.GPT2Tokenizer, gpt2),
        "roberta": load(t.RobertaTokenizer, gpt2),
        "bert": load(t.BertTokenizer, {"vocab.txt": "bert_base_uncased/vocab.txt"}),
        "bert_chinese": load(
            t.BertTokenizer, {"vocab.txt": "bert_base_chinese/vocab.txt"}, do_lower_case=False
        ),
        "mistral": load(
            t.LlamaTokenizer, {"tokenizer.model": mistral}, add_bos_token=True, add_eos_token=True
        ),
        "mistral_v3": load(
            t.LlamaTokenizer,
            {"tokenizer.model": "mistral/mistral_instruct_tokenizer_240323.model.v3"},
        ),
        "mistral_v7": load(
            t.LlamaTokenizer,
            {"tokenizer.model": "mistral/mistral_instruct_tokenizer_241114.model.v7"},
        ),
        "llama_botchan_bpe": load(
            t.LlamaTokenizer, {"tokenizer.model": "sentencepiece_test/botchan_en_bpe_1000.model"}
        ),
        "t5_unigram": load(
            t.T5Tokenizer,
            {"spiece.model": "sentencepiece_test/botchan_en_unigram_1000.model"},
            extra_ids=5,
        ),
        "t5_kyoto": load(
            t.T5Tokenizer,
            {"spiece.model": "sentencepiece_test/kyoto_ja_unigram_8000.model"},
            extra_ids=0,
        ),
        "clip": lambda: t.CLIPTokenizer.from_pretrained(clip_dir(tmp_path_factory)),
        "cl100k": lambda: t.PreTrainedTokenizerFast(
            tokenizer_file=request.getfixturevalue("cl100k_json"),
            bos_token="<|endoftext|>",
            eos_token="<|endoftext|>",
        ),
        **{
            kind: (lambda kind=kind: openai_tokenizer(tmp_path_factory, kind))
            for kind in OPENAI_RANK_FILES
        },
    }


# The full battery runs on these; the others get the basic calls only (same code paths).
KINDS = [
    "gpt2",
    "roberta",
    "bert",
    "bert_chinese",
    "mistral",
    "llama_botchan_bpe",
    "t5_unigram",
    "t5_kyoto",
    "clip",
    "cl100k",
]
# Mutating tests (added tokens, saving, training) rebuild nothing but copy, on one per family.
FAMILIES = ["gpt2", "bert", "mistral", "t5_unigram"]


@pytest.fixture(scope="module")
def pairs(request, tmp_path_factory):
    """kind -> (stock, tokenmill-backed) transformers tokenizers, built the same way, once."""
    factories = _factories(tmp_path_factory, request)
    built = {}

    def get(kind):
        if kind not in built:
            stock, fast = factories[kind](), factories[kind]()
            for tok in (stock, fast):
                tok.chat_template = CHAT_TEMPLATE
                if tok.pad_token is None:
                    tok.pad_token = tok.eos_token
            assert tm_transformers.accelerate(fast) is fast
            assert isinstance(fast.backend_tokenizer, tokenmill.Tokenizer)
            assert not tm_transformers.is_accelerated(stock)
            built[kind] = stock, fast
        return built[kind]

    return get


@pytest.fixture(scope="module", params=KINDS)
def pair(request, pairs):
    return pairs(request.param)


@pytest.fixture(scope="module")
def texts():
    english = corpus_text((SHERLOCK, 60_000))
    paragraphs = [" ".join(p.split()) for p in english.split("\n\n") if len(p.split()) > 5][20:30]
    others = []
    for lang, name in [
        ("fr", "fr_pg14155_flaubert_madame_bovary.txt"),
        ("ja", "ja_aozora_soseki_kokoro.txt"),
        ("zh", None),
        ("ru", None),
    ]:
        folder = shared_path("corpora", "multilingual", lang)
        path = folder / name if name else min(folder.iterdir())
        lines = [
            line.strip()
            for line in read_sample(path, 40_000).splitlines()
            if len(line.strip()) > 20
        ]
        others += lines[50:53]
    tricky = [
        "",
        " ",
        "  leading and trailing  ",
        "tabs\tand\nnewlines\r\n",
        "naïve café 123,456.78 😀👍🏽",
        "x" * 300,
    ]
    return paragraphs + others + tricky


def encodings_view(batch):
    """What the fast encodings expose per row (tokens, words, sequences, offsets)."""
    if batch.encodings is None:
        return None
    return [(e.tokens, e.word_ids, e.sequence_ids, e.offsets, e.ids) for e in batch.encodings]


def run(call):
    try:
        return "ok", call()
    except BaseException as error:
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return "error", f"{type(error).__name__}"


def assert_same(stock, fast, method, *args, **kwargs):
    expected = run(lambda: getattr(stock, method)(*args, **kwargs))
    got = run(lambda: getattr(fast, method)(*args, **kwargs))
    context = f"{method}({kwargs})"
    assert got[0] == expected[0], f"{context}: {got[1] if got[0] == 'error' else expected[1]}"
    if expected[0] == "error":
        return "error"
    if isinstance(expected[1], transformers.BatchEncoding):
        assert values(got[1]) == values(expected[1]), context
        assert encodings_view(got[1]) == encodings_view(expected[1]), context
    else:
        assert got[1] == expected[1], context
    return "ok"


@pytest.mark.parametrize("kind", ["mistral_v3", "mistral_v7", *OPENAI_RANK_FILES])
def test_basic_calls_other_models(pairs, kind, texts):
    test_basic_calls(pairs(kind), texts)


def test_basic_calls(pair, texts):
    stock, fast = pair
    assert len(fast) == len(stock)
    assert fast.get_vocab() == stock.get_vocab()
    assert fast.vocab_size == stock.vocab_size
    assert fast.all_special_ids == stock.all_special_ids
    assert {i: str(t) for i, t in fast.added_tokens_decoder.items()} == {
        i: str(t) for i, t in stock.added_tokens_decoder.items()
    }
    for text in texts[::3]:
        assert_same(stock, fast, "__call__", text)
        assert_same(stock, fast, "tokenize", text)
        assert_same(stock, fast, "encode", text, add_special_tokens=False)
    assert_same(stock, fast, "__call__", texts)
    assert_same(stock, fast, "__call__", texts[:6], texts[6:12], return_offsets_mapping=True)
    assert_same(
        stock,
        fast,
        "__call__",
        texts[:4],
        return_special_tokens_mask=True,
        return_length=True,
        return_token_type_ids=True,
        return_attention_mask=True,
    )
    assert_same(stock, fast, "__call__", [t.split() for t in texts[:4]], is_split_into_words=True)
    assert_same(
        stock, fast, "__call__", texts[0].split(), texts[1].split(), is_split_into_words=True
    )


@pytest.mark.parametrize("strategy", ["longest_first", "only_first", "only_second", True])
def test_truncation_strategies(pair, texts, strategy):
    """Short and long sequences in both orders, so that every strategy has room to cut (where
    it has none, both backends must refuse)."""
    stock, fast = pair
    short, long = [t[:30] for t in texts[:5]], texts[5:10]
    outcomes = set()
    for side in ("right", "left"):
        stock.truncation_side = fast.truncation_side = side
        for max_length in (8, 33):
            kwargs = {
                "truncation": strategy,
                "max_length": max_length,
                "return_offsets_mapping": True,
            }
            outcomes.add(assert_same(stock, fast, "__call__", short, long, **kwargs))
            outcomes.add(assert_same(stock, fast, "__call__", long, short, **kwargs))
            outcomes.add(assert_same(stock, fast, "__call__", texts[0], texts[-5], **kwargs))
            outcomes.add(assert_same(stock, fast, "__call__", long, **kwargs))
    stock.truncation_side = fast.truncation_side = "right"
    assert "ok" in outcomes


@pytest.mark.parametrize("strategy", ["longest_first", "only_second"])
def test_stride_and_overflowing_tokens(pair, texts, strategy):
    stock, fast = pair
    questions = [t[:60] for t in texts[:4]]
    kwargs = {
        "truncation": strategy,
        "max_length": 48,
        "stride": 12,
        "return_overflowing_tokens": True,
        "return_offsets_mapping": True,
        "padding": "max_length",
    }
    assert_same(stock, fast, "__call__", questions, texts[4:8], **kwargs)
    assert_same(stock, fast, "__call__", texts[1], **dict(kwargs, truncation=True))


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding(pair, texts, side):
    stock, fast = pair
    batch = texts[:3] + texts[-6:-3]
    assert_same(stock, fast, "__call__", batch, padding=True, padding_side=side)
    assert_same(
        stock,
        fast,
        "__call__",
        batch,
        padding="max_length",
        max_length=64,
        truncation=True,
        padding_side=side,
    )
    assert_same(
        stock, fast, "__call__", batch, padding=True, pad_to_multiple_of=16, padding_side=side
    )
    assert_same(
        stock,
        fast,
        "__call__",
        batch,
        batch[::-1],
        padding=True,
        return_tensors="np",
        padding_side=side,
    )
    assert_same(stock, fast, "pad", stock(batch), padding="longest", return_tensors="np")


def test_decoding(pair, texts):
    stock, fast = pair
    batch = stock(texts)["input_ids"]
    for skip in (False, True):
        assert_same(stock, fast, "batch_decode", batch, skip_special_tokens=skip)
        assert_same(stock, fast, "decode", batch[0], skip_special_tokens=skip)
    assert_same(stock, fast, "convert_ids_to_tokens", batch[1])
    assert_same(stock, fast, "convert_tokens_to_string", stock.convert_ids_to_tokens(batch[1]))
    assert_same(stock, fast, "batch_decode", batch, clean_up_tokenization_spaces=True)


def test_chat_template(pair):
    pytest.importorskip("jinja2")  # transformers renders chat templates with it
    stock, fast = pair
    chat = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hello, who wrote 'A Study in Scarlet'?"},
        {"role": "assistant", "content": "Arthur Conan Doyle."},
    ]
    for kwargs in (
        {"tokenize": False},
        {"tokenize": True},
        {"tokenize": True, "add_generation_prompt": True, "return_dict": True},
        {"tokenize": True, "return_tensors": "np", "padding": True, "return_dict": True},
    ):
        stock.apply_chat_template(chat, **kwargs)  # must work, not merely fail alike
        assert_same(stock, fast, "apply_chat_template", chat, **kwargs)


@pytest.mark.parametrize("kind", FAMILIES)
def test_added_tokens_and_save_round_trip(pairs, kind, texts, tmp_path):
    stock, fast = (copy.deepcopy(tok) for tok in pairs(kind))
    assert tm_transformers.is_accelerated(fast)
    assert_same(
        stock,
        fast,
        "add_tokens",
        ["tokenmillword", transformers.AddedToken(" spaced", lstrip=True)],
    )
    assert_same(
        stock, fast, "add_special_tokens", {"additional_special_tokens": ["<|tm_special|>"]}
    )
    assert_same(stock, fast, "add_tokens", ["<new_special>"], special_tokens=True)
    stock.add_bos_token = fast.add_bos_token = not getattr(stock, "add_bos_token", False)
    text = "A tokenmillword here <|tm_special|> and  spaced<new_special> too. " + texts[0][:80]
    assert_same(stock, fast, "__call__", [text, texts[1]], return_offsets_mapping=True)
    assert_same(stock, fast, "__call__", text, split_special_tokens=True)
    ids = stock(text)["input_ids"]
    assert_same(stock, fast, "decode", ids, skip_special_tokens=True)
    assert_same(stock, fast, "decode", ids)

    stock.save_pretrained(tmp_path / "stock")
    fast.save_pretrained(tmp_path / "fast")
    saved = {p.name for p in (tmp_path / "fast").iterdir()}
    assert saved == {p.name for p in (tmp_path / "stock").iterdir()}
    reference = json.loads((tmp_path / "stock" / "tokenizer_config.json").read_text())
    assert json.loads((tmp_path / "fast" / "tokenizer_config.json").read_text()) == reference
    # Whatever transformers' own round trip gives, both backends give alike, from both saves.
    reference = transformers.AutoTokenizer.from_pretrained(tmp_path / "stock")
    batch = [text] + texts[:3]
    reloaded = tm_transformers.from_pretrained(tmp_path / "fast")
    assert type(reloaded) is type(reference)
    assert tm_transformers.is_accelerated(reloaded)
    assert_same(reference, reloaded, "__call__", batch, padding=True)
    assert_same(
        reference, transformers.AutoTokenizer.from_pretrained(tmp_path / "fast"), "__call__", batch
    )

    copied = pickle.loads(pickle.dumps(fast))
    assert tm_transformers.is_accelerated(copied)
    assert_same(stock, copied, "__call__", [text] + texts[:3])


@pytest.mark.parametrize("kind", FAMILIES)
def test_train_new_from_iterator(pairs, kind, texts):
    """transformers trains with `tokenizers` whatever the backend (its code builds the trainer),
    from the backend's tokenizer.json; the result, accelerated, matches its stock twin. (Two
    stock trainings of WordPiece or Unigram can give different ids: ties are not ordered.)"""
    stock, fast = pairs(kind)
    corpus = [texts[i : i + 3] for i in range(0, len(texts), 3)] * 3
    trained = fast.train_new_from_iterator(iter(corpus), vocab_size=400)
    reference = stock.train_new_from_iterator(iter(corpus), vocab_size=400)
    assert type(trained) is type(reference)
    assert len(trained) == len(reference)
    assert trained.all_special_tokens == reference.all_special_tokens
    twin = tm_transformers.accelerate(copy.deepcopy(trained))
    assert_same(trained, twin, "__call__", texts[:5], texts[5:10], return_offsets_mapping=True)


def test_accelerate_is_idempotent_and_rejects_slow_tokenizers(pair):
    _, fast = pair
    backend = fast.backend_tokenizer
    assert tm_transformers.accelerate(fast).backend_tokenizer is backend
    with pytest.raises(TypeError, match="fast tokenizer"):
        tm_transformers.accelerate(object())


def test_accelerate_refuses_custom_components():
    class Words:
        def pre_tokenize(self, pretok):
            pretok.split(lambda i, piece: piece.split(" "))

    backend = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]")
    )
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]")
    tok.backend_tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.PreTokenizer.custom(Words())
    with pytest.raises(TypeError, match="cannot be saved"):
        tm_transformers.accelerate(tok)
    assert not tm_transformers.is_accelerated(tok)


def test_tokenizers_components_are_converted(tmp_path):
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = tokenmill.Tokenizer(
        models.WordPiece({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3}, unk_token="[UNK]")
    )
    assert isinstance(tok.model, tokenmill.models.WordPiece)
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits()]
    )
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    tok.decoder = decoders.WordPiece()
    assert isinstance(tok.normalizer, tokenmill.normalizers.Sequence)
    assert isinstance(tok.pre_tokenizer, tokenmill.pre_tokenizers.Sequence)
    assert isinstance(tok.post_processor, tokenmill.processors.TemplateProcessing)
    assert isinstance(tok.decoder, tokenmill.decoders.WordPiece)
    assert tok.encode("HELLO there").ids == [1, 3, 0, 2]
    assert tok.add_special_tokens([tokenizers.AddedToken("<x>", lstrip=True)]) == 1
    added = tok.get_added_tokens_decoder()[4]
    assert (added.content, added.lstrip, added.special) == ("<x>", True, True)
    # Sequences mixing both libraries, and a tokenizers trainer.
    tok.normalizer = tokenmill.normalizers.Sequence(
        [normalizers.NFKC(), tokenmill.normalizers.Lowercase()]
    )
    tok.decoder = tokenmill.decoders.Sequence([decoders.WordPiece()])
    tok.post_processor = tokenmill.processors.Sequence([processors.ByteLevel()])
    tok.pre_tokenizer[1] = pre_tokenizers.Punctuation()
    assert (
        tok.pre_tokenizer.__getstate__()
        == pre_tokenizers.Sequence(
            [pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation()]
        ).__getstate__()
    )
    trained = tokenmill.Tokenizer(tokenmill.models.BPE(unk_token="[UNK]"))
    trained.train_from_iterator(
        ["low lower lowest"] * 5,
        trainer=trainers.BpeTrainer(vocab_size=30, special_tokens=["[UNK]"]),
    )
    assert trained.token_to_id("[UNK]") == 0 and trained.get_vocab_size() <= 30
    # The wrong role, or a foreign object of no known kind, is a TypeError naming it.
    with pytest.raises(TypeError, match="tokenizers.pre_tokenizers.Whitespace"):
        tok.normalizer = pre_tokenizers.Whitespace()
    with pytest.raises(TypeError):
        tok.decoder = "not a decoder"
    with pytest.raises(TypeError, match="Custom"):
        tok.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(object())


def test_tokenmill_tokenizer_as_tokenizer_object(texts):
    """`PreTrainedTokenizerFast(tokenizer_object=...)` with a tokenmill Tokenizer works as with
    a tokenizers one (transformers deep-copies it and assigns tokenizers objects to it)."""
    vocab = shared_path("pretrained", "bert_base_uncased", "vocab.txt")
    results = []
    for lib in (tokenizers, tokenmill):
        backend = lib.Tokenizer(lib.models.WordPiece.from_file(str(vocab), unk_token="[UNK]"))
        backend.normalizer = lib.normalizers.BertNormalizer(lowercase=True)
        backend.pre_tokenizer = lib.pre_tokenizers.BertPreTokenizer()
        backend.decoder = lib.decoders.WordPiece()
        tok = transformers.PreTrainedTokenizerFast(
            tokenizer_object=backend,
            bos_token="[CLS]",
            eos_token="[SEP]",
            pad_token="[PAD]",
            add_bos_token=True,
            add_eos_token=True,
        )
        assert type(tok.backend_tokenizer).__module__.split(".")[0] == lib.__name__
        results.append(tok)
    assert_same(
        results[0],
        results[1],
        "__call__",
        texts[:5],
        texts[5:10],
        padding=True,
        return_offsets_mapping=True,
    )
    assert_same(
        results[0],
        results[1],
        "batch_decode",
        results[0](texts)["input_ids"],
        skip_special_tokens=True,
    )


def test_optional_dependencies_stay_unimported():
    """`import tokenmill` and tokenmill-only use import neither transformers nor tokenizers."""
    import subprocess
    import sys

    code = (
        "import sys, tokenmill\n"
        "t = tokenmill.Tokenizer(tokenmill.models.BPE())\n"
        "t.normalizer = tokenmill.normalizers.NFC()\n"
        "t.add_tokens(['a', tokenmill.AddedToken('b')])\n"
        "try:\n    t.decoder = 3\nexcept TypeError:\n    pass\n"
        "print(sorted(m for m in ('transformers', 'tokenizers') if m in sys.modules))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"
