"""Bad pickled states and hostile use never crash the process: a corrupt or hand-edited state
(an `Encoding`, a `Tokenizer`, a model, a trainer, a pipeline stage, a words object) is refused
with a clear exception naming what is wrong, or loads into an object whose every method works;
never a `PanicException` (which `except Exception` misses), an abort or a segfault.

The mutation runs happen in a child process (a crash there fails the test instead of killing
pytest), seeded, so that a failure is reproduced by its seed and round.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest
import tokenmill
from conftest import child_env
from tokenmill import Encoding, Tokenizer, models

TESTS = Path(__file__).resolve().parent
# The same tokenmill as this process's (a wheel in CI, a development tree here).
CHILD_ENV = child_env()

TEXT = "Hello wörld, it's 2024! Naïve café — 東京 are 12,345 tokens.\nNew line  here"
LINES = [TEXT, "the quick brown fox jumps over the lazy dog", "a b c d e f", "lorem ipsum"] * 5


def run_child(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh Python with this module importable; fails on a crash."""
    prelude = f"import sys; sys.path.insert(0, {str(TESTS)!r})\n"
    child = subprocess.run(
        [sys.executable, "-c", prelude + code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=CHILD_ENV,
    )
    assert child.returncode == 0, (child.returncode, child.stdout[-3000:], child.stderr[-3000:])
    return child


# --- Encoding states --------------------------------------------------------------------------


def sample_encoding() -> Encoding:
    """A pair encoding with overflowing windows, padding and two sequences."""
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate("abcdefgh")}, unk_token="a"))
    tok.pre_tokenizer = tokenmill.pre_tokenizers.Whitespace()
    tok.post_processor = tokenmill.processors.TemplateProcessing(
        single="a $A h", pair="a $A h $B:1 h:1", special_tokens=[("a", 0), ("h", 7)]
    )
    tok.enable_truncation(9, stride=1)
    tok.enable_padding(length=10)
    return tok.encode("b c d e f g", "c d e")


def encoding_state(**changes) -> bytes:
    state = json.loads(sample_encoding().__getstate__())
    state.update(changes)
    return json.dumps(state).encode()


@pytest.mark.parametrize(
    ("field", "changes"),
    [
        ("type_ids", {"type_ids": [0]}),
        ("tokens", {"tokens": []}),
        ("words", {"words": [None] * 20}),
        ("offsets", {"offsets": [[0, 1]]}),
        ("special_tokens_mask", {"special_tokens_mask": [1, 0]}),
        ("attention_mask", {"attention_mask": [1] * 9}),
        ("offsets", {"offsets": [[5, 2]] * 8}),
        ("sequence_ranges", {"sequence_ranges": {"0": {"start": 3, "end": 1}}}),
        ("sequence_ranges", {"sequence_ranges": {"1": {"start": 0, "end": 11}}}),
    ],
)
def test_an_inconsistent_encoding_state_is_refused_naming_the_field(field, changes):
    encoding = Encoding()
    with pytest.raises(ValueError, match=field):
        encoding.__setstate__(encoding_state(**changes))


def test_an_inconsistent_overflowing_window_is_refused():
    state = json.loads(sample_encoding().__getstate__())
    assert state["overflowing"]
    state["overflowing"][-1]["ids"].append(3)
    with pytest.raises(ValueError, match=r"overflowing\[\d+\]: .*ids"):
        Encoding().__setstate__(json.dumps(state).encode())


def test_the_reported_encoding_state_no_longer_panics_in_truncate():
    # Arrays of different lengths were accepted; `truncate` then sliced past the shorter ones.
    encoding = Encoding()
    with pytest.raises(ValueError, match="attention_mask"):
        encoding.__setstate__(encoding_state(attention_mask=[1]))
    encoding.truncate(2)  # still the empty, valid encoding
    assert len(encoding) == 0


def test_a_valid_encoding_state_round_trips():
    encoding = sample_encoding()
    loaded = pickle.loads(pickle.dumps(encoding))
    assert (loaded.ids, loaded.offsets, loaded.sequence_ids) == (
        encoding.ids,
        encoding.offsets,
        encoding.sequence_ids,
    )
    assert [o.ids for o in loaded.overflowing] == [o.ids for o in encoding.overflowing]


# --- Mutated states of every pickled object ---------------------------------------------------
#
# Each round takes the pickled state of a sample object, mutates it (a JSON value replaced by a
# hostile one, a key or list item removed or repeated, bytes flipped, cut or repeated), loads
# it and, when it loads, calls what the object offers. Any `Exception` is a clean refusal; a
# `BaseException` that is not one (`PanicException`), a crash or a hang fails.

HOSTILE = [
    0, 1, -1, 2, 255, 256, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**63 - 1,
    2**63, 2**64 - 1, 2**64, -(2**63), 10**12, 0.5, -0.0, 1e308, -1e308, 1e-320, "", "a",
    "[UNK]", "Ġ", "\x00", "\ud7ff\ue000", "x" * 5000, "$A", "$B:1", "(", "\\", [], [0], [[]],
    {}, {"": 0}, None, True, False,
]  # fmt: skip


def hostile(rng: random.Random):
    return copy.deepcopy(rng.choice(HOSTILE))


def json_paths(value, path=()):
    """Every path into a JSON value (its containers first)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from json_paths(item, (*path, i))


def mutate_json(value, rng: random.Random):
    """One structural change at a random place of `value` (in place; returns the new root)."""
    path = rng.choice(list(json_paths(value)))
    if not path:
        return hostile(rng)
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key, old = path[-1], parent[path[-1]]
    action = rng.random()
    if action < 0.15:
        del parent[key]
    elif action < 0.3 and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(old) if rng.random() < 0.7 else hostile(rng))
    elif action < 0.4 and isinstance(old, list) and old:
        old.extend(copy.deepcopy(old[: rng.randint(1, len(old))]))
        rng.shuffle(old)
    elif action < 0.55 and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[key] = rng.choice([old + 1, old - 1, -old, old * 1000, old + 2**32])
    elif action < 0.6 and isinstance(parent, dict):
        parent[rng.choice(["", "0", "1", "type", "vocab", "x" * 300])] = copy.deepcopy(old)
    else:
        parent[key] = hostile(rng)
    return value


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    if not data:
        return bytes(rng.randbytes(4))
    i = rng.randrange(len(data))
    action = rng.random()
    if action < 0.4:
        data[i] ^= 1 << rng.randrange(8)
    elif action < 0.6:
        del data[i : i + rng.randint(1, 16)]
    elif action < 0.75:
        data[i:i] = data[i : i + rng.randint(1, 16)]
    elif action < 0.85:
        data[i:i] = rng.choice([b"9", b"-", b'"', b"[", b"{", b"}", b",", b"\\", b"\xff", b"e9"])
    else:
        del data[i:]
    return bytes(data)


def mutate(state, rng: random.Random):
    """A mutated copy of a state: bytes or str holding JSON, or a tuple whose first item does."""
    if isinstance(state, tuple):
        head = mutate(state[0], rng)
        rest = [not v if isinstance(v, bool) and rng.random() < 0.3 else v for v in state[1:]]
        return (head, *rest)
    text = state if isinstance(state, str) else state.decode()
    if rng.random() < 0.7:
        value = json.loads(text)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            value = mutate_json(value, rng)
        out = json.dumps(value, ensure_ascii=rng.random() < 0.5)
        out_bytes = out.encode("utf-8", "surrogatepass")
    else:
        out_bytes = text.encode()
        for _ in range(rng.choice([1, 1, 2, 4])):
            out_bytes = mutate_bytes(out_bytes, rng)
    if isinstance(state, str):
        return out_bytes.decode("utf-8", "replace")
    return out_bytes


def small_tokenizers():
    """Tokenizers of each model, trained on a few lines, with every pipeline stage set."""
    from tokenmill import AddedToken, decoders, normalizers, pre_tokenizers, processors, trainers

    bpe = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    bpe.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    bpe.decoder = decoders.ByteLevel()
    bpe.post_processor = processors.ByteLevel(trim_offsets=True)
    bpe.train_from_iterator(LINES, trainers.BpeTrainer(vocab_size=120, special_tokens=["[UNK]"]))
    bpe.add_tokens([AddedToken("naïve", single_word=True), "東京"])
    bpe.enable_truncation(12, stride=2)

    wordpiece = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wordpiece.decoder = decoders.WordPiece()
    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]"]
    trainer = trainers.WordPieceTrainer(vocab_size=150, special_tokens=specials)
    wordpiece.train_from_iterator(LINES, trainer)
    wordpiece.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    wordpiece.enable_padding(pad_id=3, pad_token="[PAD]", pad_to_multiple_of=8)

    unigram = Tokenizer(models.Unigram())
    unigram.pre_tokenizer = pre_tokenizers.Metaspace()
    unigram.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=80, special_tokens=["<unk>"], unk_token="<unk>")
    unigram.train_from_iterator(LINES, trainer)

    wordlevel = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2, "c": 3}, "[UNK]"))
    wordlevel.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.WhitespaceSplit()]
    )
    wordlevel.post_processor = processors.TemplateProcessing(
        single="[UNK] $A", pair="[UNK] $A $B:1", special_tokens=[("[UNK]", 0)]
    )
    wordlevel.add_special_tokens(["<mask>"])
    return [bpe, wordpiece, unigram, wordlevel]


def stage_objects():
    from tokenmill import Regex, decoders, normalizers, pre_tokenizers, processors

    return [
        normalizers.BertNormalizer(),
        normalizers.Sequence(
            [normalizers.NFD(), normalizers.StripAccents(), normalizers.Replace("a", "bb")]
        ),
        normalizers.Strip(left=True, right=False),
        normalizers.Prepend("▁"),
        pre_tokenizers.Split(Regex(r"\w+|\s+"), "isolated"),
        pre_tokenizers.Sequence([pre_tokenizers.Punctuation(), pre_tokenizers.Whitespace()]),
        pre_tokenizers.FixedLength(length=3),
        pre_tokenizers.CharDelimiterSplit("e"),
        pre_tokenizers.Metaspace(replacement="_", prepend_scheme="first"),
        pre_tokenizers.UnicodeScripts(),
        processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> $B:1 </s>:1",
            special_tokens=[("<s>", 0), ("</s>", 2)],
        ),
        processors.RobertaProcessing(("</s>", 2), ("<s>", 0)),
        processors.Sequence(
            [processors.ByteLevel(), processors.BertProcessing(("b", 1), ("a", 0))]
        ),
        decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]),
        decoders.CTC(),
        decoders.BPEDecoder(suffix="</w>"),
        decoders.Strip(content=" ", left=1, right=2),
        decoders.WordPiece(prefix="##"),
    ]  # fmt: skip


def words_objects():
    from tokenmill import words

    segmenter = words.ChineseSegmenter.empty()
    for word, freq in [("東京", 10), ("京都", 5), ("大学", 8)]:
        segmenter.add_word(word, freq)
    splitter = words.SentenceSplitter()
    splitter.add_abbreviations(["dr", "etc"])
    return [words.WordTokenizer(), words.WordTokenizer(penn_treebank=True), splitter, segmenter]


# Each `exercise_*` yields the calls to make on a loaded object; each runs whatever the ones
# before it raised.


def exercise_encoding(e):
    yield from exercise_lookups(e)
    yield lambda: (e.tokens, e.word_ids, e.type_ids, e.attention_mask, e.special_tokens_mask)
    yield lambda: (repr(e), e.n_sequences, pickle.loads(pickle.dumps(e)))
    for i in (1, 3, len(e) - 1, 2**40):
        yield lambda i=i: e.char_to_word(i)
        yield lambda i=i: e.token_to_word(i)
        yield lambda i=i: e.token_to_sequence(i)
        yield lambda i=i: e.word_to_tokens(i)
        yield lambda i=i: e.char_to_token(i, 1)
    yield lambda: Encoding.merge([e, e], growing_offsets=True)
    yield lambda: Encoding.merge([e, Encoding()], growing_offsets=False)
    for length, stride, direction in [(3, 1, "right"), (2, 0, "left"), (0, 0, "right")]:
        copy = pickle.loads(pickle.dumps(e))
        yield lambda c=copy, a=(length, stride, direction): c.truncate(*a)
        yield lambda c=copy: c.pad(6, direction="left")
        yield lambda c=copy: c.pad(4)
        yield from exercise_lookups(copy)
    yield lambda: e.pad(len(e) + 3, direction="left")
    yield lambda: e.set_sequence_id(1)
    yield from exercise_lookups(e)


def exercise_lookups(e):
    yield lambda: (e.ids, e.offsets, e.sequence_ids, len(e))
    yield lambda: [(o.ids, o.sequence_ids) for o in e.overflowing]
    for i in (0, 2, len(e)):
        yield lambda i=i: e.char_to_token(i)
        yield lambda i=i: e.word_to_chars(i)
        yield lambda i=i: e.word_to_chars(i, 1)
        yield lambda i=i: e.token_to_chars(i)
        yield lambda i=i: e.word_to_tokens(i, 1)


def exercise_tokenizer(tok):
    yield lambda: (tok.get_vocab_size(), tok.to_str(), repr(tok), tok.get_vocab())
    yield lambda: (tok.token_to_id("a"), tok.id_to_token(3), tok.id_to_token(2**31))
    yield lambda: (tok.num_special_tokens_to_add(True), tok.truncation, tok.padding)
    texts = [TEXT, "", "a b c a b c a b c a b c", "naïve 東京 <mask>"]
    for text in texts:
        yield lambda text=text: tok.decode(tok.encode(text).ids)
        yield lambda text=text: exhaust(exercise_lookups(tok.encode(text, "pair of words")))
    yield lambda: tok.decode_batch([e.ids for e in tok.encode_batch(texts + [("a b", "c")])])
    yield lambda: tok.decode([0, 1, 2, 2**31], skip_special_tokens=False)


def exhaust(calls):
    for call in calls:
        call()


def exercise_model(model):
    yield lambda: (model.tokenize("Hello wörld 12,345"), model.tokenize(""), repr(model))
    yield lambda: (model.get_vocab_size(), model.token_to_id("a"), model.id_to_token(0))
    yield lambda: model.id_to_token(2**31)
    yield lambda: model.get_trainer()
    yield from exercise_tokenizer(Tokenizer(model))


def exercise_trainer(trainer):
    yield lambda: (repr(trainer), str(trainer), trainer.vocab_size, trainer.special_tokens)
    kind = type(trainer).__name__.replace("Trainer", "")
    tok = Tokenizer(getattr(models, {"Bpe": "BPE"}.get(kind, kind))())
    yield lambda: tok.train_from_iterator(LINES[:4], trainer)
    yield lambda: tok.encode(TEXT)


def exercise_stage(stage):
    from tokenmill import decoders, normalizers, pre_tokenizers, processors

    yield lambda: (repr(stage), str(stage))
    tok = small_tokenizers_cache()[1]
    if isinstance(stage, normalizers.Normalizer):
        yield lambda: stage.normalize_str(TEXT)
        tok.normalizer = stage
    elif isinstance(stage, pre_tokenizers.PreTokenizer):
        yield lambda: stage.pre_tokenize_str(TEXT)
        tok.pre_tokenizer = stage
    elif isinstance(stage, processors.PostProcessor):
        yield lambda: stage.num_special_tokens_to_add(True)
        yield lambda: stage.process(tok.encode("a b"), tok.encode("c"))
        tok.post_processor = stage
    elif isinstance(stage, decoders.Decoder):
        yield lambda: stage.decode(["a", "<0x41>", "▁b", "##c", "</w>", "", "▁"])
        tok.decoder = stage
    yield from exercise_tokenizer(tok)


def exercise_words(obj):
    from tokenmill import words

    yield lambda: repr(obj)
    if isinstance(obj, words.WordTokenizer):
        yield lambda: (obj.tokenize(TEXT), obj.tokenize_with_offsets(TEXT))
        yield lambda: obj.tokenize_batch([TEXT, ""])
    elif isinstance(obj, words.SentenceSplitter):
        yield lambda: obj.split(TEXT + " Dr. Smith etc. and so on. Yes.")
        yield lambda: (obj.spans(TEXT), obj.to_json())
    else:
        yield lambda: (obj.cut("我在東京大学" + TEXT), obj.cut_with_offsets("京都大学"))
        yield lambda: (obj.total, obj.to_json(), obj.cut("東京大学", hmm=False))


_SMALL = []


def small_tokenizers_cache():
    if not _SMALL:
        _SMALL.extend(small_tokenizers())
    # Fresh copies: the exercise changes their stages.
    return [Tokenizer.from_str(t.to_str()) for t in _SMALL]


def samples(kind):
    """(state, make a fresh object of its class, exercise it) for each sample of `kind`."""

    def fresh(obj):
        return lambda: pickle.loads(pickle.dumps(obj))

    if kind == "encoding":
        encodings = [sample_encoding()]
        encodings += [t.encode(TEXT, "pair") for t in small_tokenizers_cache()]
        return [(e.__getstate__(), Encoding, exercise_encoding) for e in encodings]
    if kind == "tokenizer":
        return [(t.__getstate__(), fresh(t), exercise_tokenizer) for t in small_tokenizers_cache()]
    if kind == "model":
        models_ = [t.model for t in small_tokenizers_cache()]
        return [(m.__getstate__(), fresh(m), exercise_model) for m in models_]
    if kind == "trainer":
        from tokenmill import trainers

        trainers_ = [
            trainers.BpeTrainer(vocab_size=60, special_tokens=["<s>"], limit_alphabet=20),
            trainers.WordPieceTrainer(vocab_size=60, continuing_subword_prefix="##"),
            trainers.WordLevelTrainer(vocab_size=30, min_frequency=1),
            trainers.UnigramTrainer(vocab_size=40, unk_token="<unk>", special_tokens=["<unk>"]),
        ]
        return [(t.__getstate__(), fresh(t), exercise_trainer) for t in trainers_]
    if kind == "stage":
        return [(s.__getstate__(), fresh(s), exercise_stage) for s in stage_objects()]
    if kind == "words":
        return [(w.__getstate__(), fresh(w), exercise_words) for w in words_objects()]
    raise ValueError(kind)


def fuzz_states(kind: str, seed: int, rounds: int) -> None:
    """Runs `rounds` mutation rounds on the states of `kind`; prints what is not clean."""
    import faulthandler
    import resource

    # An allocation no check stopped fails here (an abort, seen as a crash of this child)
    # instead of filling the machine.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    faulthandler.enable()
    rng = random.Random(seed)
    cases = samples(kind)
    refused = loaded = 0
    for round_ in range(rounds):
        state, make, exercise = rng.choice(cases)
        mutated = mutate(state, rng)
        print(f"round {round_}", file=sys.stderr, flush=True)
        obj = make()
        try:
            obj.__setstate__(mutated)
        except Exception:
            refused += 1
            continue
        except BaseException as e:
            print(f"BAD setstate {kind} seed {seed} round {round_}: {e!r} {mutated!r:.300}")
            continue
        loaded += 1
        for call in exercise(obj):
            try:
                call()
            except Exception:
                pass
            except BaseException as e:
                print(f"BAD use {kind} seed {seed} round {round_}: {e!r} {mutated!r:.300}")
                break
    print(f"{kind}: {refused} refused, {loaded} loaded")


@pytest.mark.parametrize("kind", ["encoding", "tokenizer", "model", "trainer", "stage", "words"])
def test_mutated_states_are_refused_or_work(kind):
    rounds = {"encoding": 3000, "trainer": 600}.get(kind, 1500)
    child = run_child(
        "import test_bad_states as t; t.fuzz_states(sys.argv[1], 18, int(sys.argv[2]))",
        kind,
        str(rounds),
        timeout=300,
    )
    assert "BAD" not in child.stdout, child.stdout[-3000:]
    refused, loaded = map(int, child.stdout.split(":")[1].replace("refused,", "").split()[:2])
    assert refused + loaded == rounds
    assert loaded > rounds // 20, "the mutations should leave some states loadable"


# --- Re-entrance: a custom component that calls its own tokenizer -----------------------------

REENTRANT_CHILD = r"""
import sys, threading
import test_bad_states as t
from tokenmill import Tokenizer, TokenmillError, decoders, normalizers, pre_tokenizers

tok = t.small_tokenizers()[0]
TEXTS = [f"{t.TEXT} {i}" for i in range(40)]
local = threading.local()
seen = []  # (what, inner input, inner result) of the nested calls


def nested(depth_limit):
    # Calls tok from inside its own pipeline, `depth_limit` levels deep (None: without end).
    depth = getattr(local, "depth", 0)
    if depth_limit is None:
        # One call of each kind per level: the calls nest in a chain, not a tree.
        tok.encode_batch(["without end"])
        tok.decode_batch([[1, 2]])
        return
    if depth >= depth_limit:
        return
    local.depth = depth + 1
    try:
        texts = ["nested call", "a b c", "東京"]
        encodings = tok.encode_batch(texts)
        decoded = tok.decode_batch([e.ids for e in encodings])
        seen.append(("encode", texts[0], tok.encode(texts[0]).ids))
        seen.append(("encode_batch", texts, [e.ids for e in encodings]))
        seen.append(("decode_batch", [e.ids for e in encodings], decoded))
    finally:
        local.depth = depth


class PreTokenizer:
    def __init__(self, depth_limit):
        self.depth_limit = depth_limit
        self.inner = pre_tokenizers.ByteLevel(add_prefix_space=True)

    def pre_tokenize(self, pretok):
        nested(self.depth_limit)
        pretok.split(lambda i, n: n.split(" ", "merged_with_next"))


class Normalizer:
    def __init__(self, depth_limit):
        self.depth_limit = depth_limit

    def normalize(self, normalized):
        nested(self.depth_limit)
        normalized.lowercase()


class Decoder:
    def __init__(self, depth_limit):
        self.depth_limit = depth_limit

    def decode_chain(self, tokens):
        nested(self.depth_limit)
        return [token.upper() for token in tokens]


def install(component, depth_limit):
    # The component on `tok`, re-entering `depth_limit` levels deep (0: never) once set (the
    # setter runs a normalizer on the added tokens: re-entering then is an error, below).
    if component == "pre_tokenizer":
        obj = PreTokenizer(0)
        tok.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(obj)
    elif component == "normalizer":
        obj = Normalizer(0)
        tok.normalizer = normalizers.Normalizer.custom(obj)
    else:
        obj = Decoder(0)
        tok.decoder = decoders.Decoder.custom(obj)
    obj.depth_limit = depth_limit


# A normalizer that uses its tokenizer while being set (the setter normalizes the added
# tokens, the tokenizer changing in place): a RuntimeError, where it once waited for itself.
try:
    tok.normalizer = normalizers.Normalizer.custom(Normalizer(1))
except TokenmillError as e:
    assert "RuntimeError: the object is being changed by this thread" in str(e), str(e)
else:
    raise AssertionError("no error")
tok.encode("still usable")


def outputs():
    encodings = tok.encode_batch(TEXTS)
    single = [tok.encode(text).ids for text in TEXTS[:3]]
    return [e.ids for e in encodings], single, tok.decode_batch([e.ids for e in encodings])


def expected(what, arg):
    if what == "encode":
        return tok.encode(arg).ids
    if what == "encode_batch":
        return [e.ids for e in tok.encode_batch(arg)]
    return tok.decode_batch(arg)


for component in ["pre_tokenizer", "normalizer", "decoder"]:
    install(component, 0)
    reference = outputs()
    for depth_limit in [1, 3]:
        install(component, depth_limit)
        seen.clear()
        assert outputs() == reference, (component, depth_limit)
        assert seen, component
        calls = list(seen)
        install(component, 0)
        for what, arg, result in calls:
            assert result == expected(what, arg), (component, depth_limit, what)
        install(component, depth_limit)

    # Several Python threads at once, each re-entering.
    results = []
    threads = [threading.Thread(target=lambda: results.append(outputs())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert results == [reference] * 4, component

    # Without end: a clear error once the calls nest too deep, never a stack overflow.
    install(component, None)
    calls = {
        "outputs": (outputs, True),
        "encode": (lambda: tok.encode(TEXTS[0]), component != "decoder"),
        "decode": (lambda: tok.decode([1, 2, 3]), component == "decoder"),
    }
    for name, (call, reenters) in calls.items():
        try:
            call()
        except TokenmillError as e:
            assert "levels deep inside custom components" in str(e), str(e)[-300:]
        else:
            assert not reenters, (component, name)
    install(component, 0)
    print(component, "ok")
"""


def test_a_custom_component_may_call_its_own_tokenizer():
    # Once a segfault: a custom pre-tokenizer calling its tokenizer from inside `encode_batch`
    # recursed on a pool thread, whose stack overflowed long before Python's recursion limit.
    # Nested batch calls now run on the calling thread, and nesting is capped.
    child = run_child(REENTRANT_CHILD, timeout=180)
    assert child.stdout.split() == ["pre_tokenizer", "ok", "normalizer", "ok", "decoder", "ok"]


# --- A killed `tokenmill convert` -------------------------------------------------------------


def test_a_killed_convert_leaves_nothing_the_next_one_keeps(tmp_path):
    # It wrote into a `tempfile.TemporaryDirectory` beside the output, which a SIGKILL left
    # behind for good; the folder is now named and locked as the saves' temporary files, so the
    # next conversion to the same file removes what a killed one left.
    import signal
    import time

    source = tmp_path / "source.json"
    small_tokenizers()[0].save(str(source))
    output = tmp_path / "out.json"
    command = [sys.executable, "-m", "tokenmill", "convert", str(source), str(output)]
    killed = 0
    for _ in range(5):
        process = subprocess.Popen(command, env=CHILD_ENV, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        # Killed once its temporary folder exists: mid-conversion.
        while process.poll() is None and time.monotonic() < deadline:
            if any(".tokenmill-tmp-" in p.name for p in tmp_path.iterdir()):
                process.send_signal(signal.SIGKILL)
                killed += 1
                break
            time.sleep(0.001)
        process.wait(timeout=60)
    assert killed, "no conversion was caught mid-way"
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != source.name)
    assert leftovers, "a killed conversion left its temporary folder"
    assert all(name.startswith(".out.json.tokenmill-tmp-") for name in leftovers), leftovers
    finished = subprocess.run(command, env=CHILD_ENV, capture_output=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "source.json"]


# --- Sizes from arguments: a clean error where the allocation would abort ---------------------

# Each once aborted the process or may allocate from an argument; run in a child whose address
# space is capped (~2 GB), so that an allocation no check stopped shows as a crash there.
ALLOCATION_CASES = {
    # The windows of merged encodings multiply: 18 encodings of 2 windows asked for ~10^9.
    "merge": "e = t.encode('a a a'); e.truncate(1); Encoding.merge([e] * 18)",
    "truncate": "t.encode('a a a').truncate(2**62, 2**61)",
    "truncation": "t.enable_truncation(2**62, stride=2**61); t.encode('a a a')",
    "char_ngrams": "words.char_ngrams('abc def', 2**62)",
    "fixed_length": "pre_tokenizers.FixedLength(length=2**62).pre_tokenize_str('abc')",
    "strip": "decoders.Strip(content=' ', left=2**62, right=2**62).decode(['a', 'b'])",
    "id_to_token": "t.id_to_token(2**32 - 1)",
}


def allocation_case(case: str) -> None:
    """Runs `ALLOCATION_CASES[case]` (in a child process, its address space capped); prints the
    exception it raises, if any."""
    import resource

    from tokenmill import decoders, pre_tokenizers, words

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    t = Tokenizer(models.WordLevel({"a": 0, "[PAD]": 1, "[UNK]": 2}, unk_token="[UNK]"))
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    names = {"t": t, "Encoding": Encoding, "decoders": decoders, "words": words}
    try:
        exec(ALLOCATION_CASES[case], {**names, "pre_tokenizers": pre_tokenizers})
    except Exception as e:
        print(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("case", sorted(ALLOCATION_CASES))
def test_sizes_from_arguments_never_abort(case):
    pytest.importorskip("resource")
    child = run_child("import test_bad_states as t; t.allocation_case(sys.argv[1])", case)
    if case == "merge":
        assert child.stdout.startswith("InvalidArgumentError: merging these 18"), child.stdout
