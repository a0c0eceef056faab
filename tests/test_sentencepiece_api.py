"""sentencepiece 0.2.3's API beyond encode/decode, differential against the real package:
the protobuf modules and return_type='proto', SentencePieceNormalizer, normalize offsets,
parallel_encode, the n-best timeout, read-only NumPy outputs, the trainer's pretokenizer /
pretokenization_delimiter / normalizer options, and the exceptions."""

from __future__ import annotations

import re

import pytest
import tokenmill.sentencepiece as tsp
from conftest import read_sample, shared_path

spm = pytest.importorskip("sentencepiece")
np = pytest.importorskip("numpy")
pytest.importorskip("google.protobuf")

MODELS = {
    "botchan_unigram": ("sentencepiece_test", "botchan_en_unigram_1000.model"),
    "botchan_bpe": ("sentencepiece_test", "botchan_en_bpe_1000.model"),
    "kyoto_unigram": ("sentencepiece_test", "kyoto_ja_unigram_8000.model"),
    "mistral_v1": ("mistral", "tokenizer.model.v1"),
    "mistral_v3": ("mistral", "mistral_instruct_tokenizer_240323.model.v3"),
}
BPE_MODELS = ["botchan_bpe", "mistral_v1", "mistral_v3"]
ODD = [
    "",
    " ",
    "  ",
    "\u3000",
    "  hello  world  ",
    "ＫＡＤＯＫＡＷＡABC",
    "㍻",
    "a\tb\nc",
    "😊吾輩は猫である。😊",
    "ﬁ ½ \u3000x",
    "<s> </s> <unk>",
    "x" * 300,
]


def model_path(name):
    return str(shared_path("pretrained", *MODELS[name]))


def pair(name):
    path = model_path(name)
    return spm.SentencePieceProcessor(model_file=path), tsp.SentencePieceProcessor(model_file=path)


@pytest.fixture(scope="module")
def lines():
    texts = []
    for lang in ("de", "ja", "ar", "zh", "ru"):
        for path in sorted((shared_path("corpora", "multilingual") / lang).glob("*.txt"))[:1]:
            texts += read_sample(path, 60_000).splitlines()[:150]
    for path in sorted(shared_path("corpora", "ud", "UD_English-EWT").glob("*.txt"))[:1]:
        texts += read_sample(path, 60_000).splitlines()[:150]
    return [t for t in texts if t.strip()] + ODD


@pytest.fixture(scope="module")
def long_text():
    return read_sample(
        shared_path("corpora", "multilingual", "de", "de_pg22367_kafka_die_verwandlung.txt"),
        150_000,
    )


# ------------------------------------------------------------------ protobuf modules
def field_table(descriptor):
    def repeated(f):  # protobuf 7 dropped FieldDescriptor.label
        return f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED

    return {
        f.name: (f.number, f.type, repeated(f), f.default_value if f.has_default_value else None)
        for f in descriptor.fields
    }


def test_pb2_messages_have_sentencepieces_fields():
    """Every field of sentencepiece 0.2.3's messages, with its number, type, label and default
    (ours may hold more: SelfTestData, which older models carry)."""
    from sentencepiece import sentencepiece_model_pb2 as real_model, sentencepiece_pb2 as real_text
    from tokenmill.sentencepiece import sentencepiece_model_pb2, sentencepiece_pb2

    pairs = [
        (real_text.SentencePieceText, sentencepiece_pb2.SentencePieceText),
        (real_text.NBestSentencePieceText, sentencepiece_pb2.NBestSentencePieceText),
        (real_model.ModelProto, sentencepiece_model_pb2.ModelProto),
        (real_model.ModelProto.SentencePiece, sentencepiece_model_pb2.ModelProto.SentencePiece),
        (real_model.TrainerSpec, sentencepiece_model_pb2.TrainerSpec),
        (real_model.NormalizerSpec, sentencepiece_model_pb2.NormalizerSpec),
    ]
    for real, ours in pairs:
        real_fields, our_fields = field_table(real.DESCRIPTOR), field_table(ours.DESCRIPTOR)
        for name, spec in real_fields.items():
            assert our_fields.get(name) == spec, (real.DESCRIPTOR.full_name, name)
        assert real.DESCRIPTOR.full_name == ours.DESCRIPTOR.full_name
    assert sentencepiece_model_pb2.TrainerSpec.WORD == real_model.TrainerSpec.WORD
    assert (
        sentencepiece_model_pb2.ModelProto.SentencePiece.BYTE
        == real_model.ModelProto.SentencePiece.BYTE
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_proto_parses_and_serializes_model_files_as_sentencepiece(name):
    from sentencepiece import sentencepiece_model_pb2 as real_model
    from tokenmill.sentencepiece import sentencepiece_model_pb2

    with open(model_path(name), "rb") as f:
        data = f.read()
    ours, real = sentencepiece_model_pb2.ModelProto(), real_model.ModelProto()
    ours.ParseFromString(data)
    real.ParseFromString(data)
    assert ours.SerializeToString() == real.SerializeToString() == data
    assert [(p.piece, p.score, p.type) for p in ours.pieces] == [
        (p.piece, p.score, p.type) for p in real.pieces
    ]
    assert ours.trainer_spec.model_type == real.trainer_spec.model_type
    # a changed message is read back by sentencepiece and loads in both processors
    ours.trainer_spec.vocab_size = 12345
    real.ParseFromString(ours.SerializeToString())
    assert real.trainer_spec.vocab_size == 12345
    assert tsp.SentencePieceProcessor(model_proto=ours).piece_size() == len(ours.pieces)


@pytest.mark.parametrize("name", ["botchan_unigram", "kyoto_unigram", "mistral_v1"])
def test_proto_return_type_matches_sentencepiece(name, lines):
    from tokenmill.sentencepiece import sentencepiece_pb2

    ref, ours = pair(name)
    texts = lines[:200]
    got = ours.encode(texts, return_type="proto")
    assert all(isinstance(m, sentencepiece_pb2.SentencePieceText) for m in got)
    assert [m.SerializeToString() for m in got] == [
        m.SerializeToString() for m in ref.encode(texts, return_type="proto")
    ]
    for text in texts[:20]:
        ids = ref.encode(text)
        assert (
            ours.decode(ids, return_type="proto").SerializeToString()
            == ref.decode(ids, return_type="proto").SerializeToString()
        )
    if name != "mistral_v1":
        nbest = ours.nbest_encode(
            "I saw a girl with a telescope.", nbest_size=5, return_type="proto"
        )
        assert isinstance(nbest, sentencepiece_pb2.NBestSentencePieceText)
        assert (
            nbest.SerializeToString()
            == ref.nbest_encode(
                "I saw a girl with a telescope.", nbest_size=5, return_type="proto"
            ).SerializeToString()
        )
    with pytest.raises(ValueError):
        ours.encode("x", return_type="immutable_proto")  # dropped in sentencepiece 0.2.3


# ------------------------------------------------------------------ normalization
@pytest.mark.parametrize("name", ["botchan_unigram", "kyoto_unigram", "mistral_v1"])
def test_processor_normalize_offsets_match(name, lines):
    """Character offsets for str input, byte offsets (and bytes) for bytes input."""
    ref, ours = pair(name)
    for text in lines:
        for x in (text, text.encode()):
            assert ours.normalize(x, with_offsets=True) == ref.normalize(x, with_offsets=True), x
    assert ours.normalize(lines[:20]) == ref.normalize(lines[:20])


FLAG_SETS = [
    {},
    {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False},
    {"add_dummy_prefix": False, "escape_whitespaces": False, "remove_extra_whitespaces": False},
    {"add_dummy_prefix": True, "escape_whitespaces": True, "remove_extra_whitespaces": True},
]


@pytest.mark.parametrize(
    "source", ["model", "nfkc", "nfkc_cf", "nmt_nfkc", "nmt_nfkc_cf", "identity"]
)
def test_normalizer_matches_sentencepiece(source, lines):
    for flags in FLAG_SETS:
        if source == "model":
            args = dict(model_file=model_path("kyoto_unigram"), **flags)
        else:
            args = dict(rule_name=source, **flags)
        ref, ours = spm.SentencePieceNormalizer(**args), tsp.SentencePieceNormalizer(**args)
        for text in lines[::2]:
            for x in (text, text.encode()):
                assert ours.normalize(x, with_offsets=True) == ref.normalize(
                    x, with_offsets=True
                ), (flags, x)
        if source == "model":
            assert ours.serialized_normalizer_spec() == ref.serialized_normalizer_spec()
        else:
            # the built-in charsmaps are tokenmill's own build of the same rules (rules.rs):
            # the same normalization, other bytes; the rest of the spec is the same
            from tokenmill.sentencepiece import sentencepiece_model_pb2

            specs = []
            for serialized in (ours.serialized_normalizer_spec(), ref.serialized_normalizer_spec()):
                spec = sentencepiece_model_pb2.NormalizerSpec()
                spec.ParseFromString(serialized)
                spec.ClearField("precompiled_charsmap")
                specs.append(spec)
            assert specs[0] == specs[1]
        again = tsp.SentencePieceNormalizer(normalizer_spec=ours.serialized_normalizer_spec())
        assert again.serialized_normalizer_spec() == ours.serialized_normalizer_spec()


def test_normalizer_map_tsv_and_decompile(tmp_path):
    rules = [("foo", "bar"), ("apple", "orange"), ("ß", "ss"), ("Ａ", "A")]
    for flags in FLAG_SETS:
        ref, ours = (
            spm.SentencePieceNormalizer(norm_map=rules, **flags),
            tsp.SentencePieceNormalizer(norm_map=rules, **flags),
        )
        for text in ["foo apple ß", "  foo  ", "banana", "ＡＡ foo", ""]:
            assert ours.normalize(text, with_offsets=True) == ref.normalize(text, with_offsets=True)
        assert ours.decompile() == ref.decompile() == sorted(rules)
    tsv = tmp_path / "rules.tsv"
    tsv.write_text("0041\t0042\n00DF\t0073 0073\n")
    ref, ours = (
        spm.SentencePieceNormalizer(rule_tsv=str(tsv)),
        tsp.SentencePieceNormalizer(rule_tsv=tsv),
    )
    assert ours.normalize("AßA x") == ref.normalize("AßA x")
    for bad in ([("", "x")], [("foo", "foo")], [("a", "b"), ("a", "c")], [(b"\xff", b"x")]):
        with pytest.raises(ValueError):
            spm.SentencePieceNormalizer(norm_map=bad)
        with pytest.raises(ValueError):
            tsp.SentencePieceNormalizer(norm_map=bad)


# ------------------------------------------------------------------ parallel_encode
@pytest.mark.parametrize("name", BPE_MODELS)
def test_parallel_encode_is_encode_and_sentencepieces_for_bpe(name, long_text):
    ref, ours = pair(name)
    for return_type in (int, str, "serialized_proto"):
        expected = ours.encode(long_text, return_type=return_type)
        assert expected == ref.encode(long_text, return_type=return_type)
        for chunk_len in (5, 1000, 20000):
            assert (
                ours.parallel_encode(
                    long_text, chunk_len=chunk_len, num_threads=2, return_type=return_type
                )
                == expected
            )
        assert ours.parallel_encode(
            [long_text[:5000], ""], chunk_len=100, return_type=return_type
        ) == ours.encode([long_text[:5000], ""], return_type=return_type)
        if name != "botchan_bpe":  # sentencepiece's own chunking fails on this model and text
            assert (
                ref.parallel_encode(
                    long_text, chunk_len=1000, num_threads=2, return_type=return_type
                )
                == expected
            )
    pool = tsp.ThreadPool(1)
    assert ours.parallel_encode(long_text, chunk_len=1000, thread_pool=pool) == ours.encode(
        long_text
    )
    assert ours.parallel_encode(
        long_text[:2000], chunk_len=100, add_bos=True, add_eos=True
    ) == ref.encode(long_text[:2000], add_bos=True, add_eos=True)


def test_parallel_encode_of_unigram_is_encode(long_text):
    """Unigram chunks could change the segmentation (sentencepiece's do on this text); ours
    is always encode's."""
    ours = tsp.SentencePieceProcessor(model_file=model_path("kyoto_unigram"))
    for return_type in (int, str):
        assert ours.parallel_encode(
            long_text, chunk_len=1000, return_type=return_type
        ) == ours.encode(long_text, return_type=return_type)
    with pytest.raises(ValueError):
        ours.parallel_encode("x", chunk_len=0)


# ------------------------------------------------------------------ global parameters
def test_nbest_timeout_falls_back_to_the_best_path():
    ref, ours = pair("botchan_unigram")
    text = "the" * 20000
    try:
        for module in (spm, tsp):
            module.set_nbest_timeout(1)
        assert (
            ours.nbest_encode(text, nbest_size=10)
            == ref.nbest_encode(text, nbest_size=10)
            == [ours.encode(text)]
        )
        tsp.SetNBestTimeout(0)
        assert len(ours.nbest_encode(text, nbest_size=10)) == 10
    finally:
        spm.set_nbest_timeout(30000)
        tsp.set_nbest_timeout(30000)
    tsp.SetMinLogLevel(2)
    tsp.SetRandomGeneratorSeed(3)
    tsp.set_data_dir("/nonexistent")


def test_numpy_outputs_are_read_only_as_sentencepieces():
    ref, ours = pair("botchan_unigram")
    outputs = [
        ours.encode("hello world", return_type="numpy"),
        *ours.encode(["a", "b c"], return_type="numpy"),
        *ours.nbest_encode("hello", nbest_size=2, return_type="numpy"),
        ours.parallel_encode("hello world", chunk_len=3, return_type="numpy"),
    ]
    for array in outputs:
        assert array.dtype == np.int32 and not array.flags.writeable
    assert outputs[0].tolist() == ref.encode("hello world", return_type="numpy").tolist()
    with pytest.raises(ValueError):
        outputs[0][0] = 1


# ------------------------------------------------------------------ errors
def test_errors_are_catchable_as_sentencepieces():
    ours = tsp.SentencePieceProcessor(model_file=model_path("botchan_unigram"))
    for module in (spm, tsp):
        with pytest.raises(RuntimeError):
            module.SentencePieceProcessor(model_file="/nonexistent/m.model")
        with pytest.raises(RuntimeError):
            module.SentencePieceProcessor(model_proto=b"garbage\xff")
        with pytest.raises(RuntimeError):
            module.SentencePieceNormalizer(rule_name="bogus")
    with pytest.raises(FileNotFoundError):
        tsp.SentencePieceProcessor(model_file="/nonexistent/m.model")
    with pytest.raises(FileNotFoundError):
        tsp.SentencePieceNormalizer(model_file="/nonexistent/m.model")
    with pytest.raises(OSError):
        tsp.SentencePieceTrainer.train(
            input="/nonexistent/c.txt", model_prefix="/tmp/never", vocab_size=10
        )
    # a lone surrogate is a ValueError (and RuntimeError), never a raw UnicodeEncodeError
    for call in (
        lambda: ours.encode("a\ud800"),
        lambda: ours.encode(["ok", "a\ud800"]),
        lambda: ours.encode("a\ud800", out_type=str),
        lambda: ours.normalize("a\ud800"),
        lambda: ours.parallel_encode("a\ud800", chunk_len=4),
        lambda: ours.piece_to_id("a\ud800"),
        lambda: tsp.SentencePieceNormalizer(rule_name="nfkc").normalize("\udc80"),
    ):
        with pytest.raises(ValueError) as caught:
            call()
        assert not isinstance(caught.value, UnicodeError)
        assert isinstance(caught.value, RuntimeError)


# ------------------------------------------------------------------ trainer options
PRETOKENIZER = re.compile(r"'[a-zA-Z]+|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d{1,3}|[^\w\s]|▁+|\s+")


@pytest.fixture(scope="module")
def botchan():
    return str(shared_path("peer-suites", "sentencepiece", "test", "botchan.txt"))


def test_pretokenizer_bounds_pieces(botchan, tmp_path):
    for model_type in ("unigram", "bpe"):
        prefix = str(tmp_path / model_type)
        tsp.SentencePieceTrainer.train(
            input=botchan,
            model_prefix=prefix,
            vocab_size=400,
            model_type=model_type,
            pretokenizer=PRETOKENIZER.findall,
        )
        sp = tsp.SentencePieceProcessor(model_file=prefix + ".model")
        for i in range(sp.vocab_size()):
            if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i)):
                assert len(PRETOKENIZER.findall(sp.id_to_piece(i))) == 1, sp.id_to_piece(i)


def test_pretokenizer_errors_as_sentencepiece(botchan, tmp_path):
    prefix = str(tmp_path / "m")
    args = {"input": botchan, "model_prefix": prefix, "vocab_size": 300, "hard_vocab_limit": False}
    for module in (spm, tsp):
        with pytest.raises((ValueError, RuntimeError)):
            module.SentencePieceTrainer.train(pretokenizer=lambda text: ["hello"], **args)
        with pytest.raises((ValueError, RuntimeError)):
            module.SentencePieceTrainer.train(
                pretokenizer=str.split, pretokenization_delimiter="|", **args
            )

    def fails(text):
        raise KeyError("boom")

    with pytest.raises(RuntimeError, match="Pretokenizer failed") as caught:
        tsp.SentencePieceTrainer.train(
            pretokenizer=fails, allow_inconsistent_pretokenization=True, **args
        )
    assert isinstance(caught.value.__cause__, KeyError)
    tsp.SentencePieceTrainer.train(
        pretokenizer=lambda text: ["hello"], allow_inconsistent_pretokenization=True, **args
    )


def test_pretokenization_delimiter_is_a_boundary(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"abc||||def ghi{i % 7}||||jkl\n" for i in range(300)))
    for module in (spm, tsp):
        prefix = str(tmp_path / module.__name__.replace(".", "_"))
        module.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=prefix,
            vocab_size=40,
            model_type="bpe",
            pretokenization_delimiter="||||",
            hard_vocab_limit=False,
        )
        sp = module.SentencePieceProcessor(model_file=prefix + ".model")
        pieces = [sp.id_to_piece(i) for i in range(sp.vocab_size())]
        assert not any("|" in p or "cd" in p or "lj" in p for p in pieces), (
            module.__name__,
            pieces,
        )


def test_trainer_with_normalizer_stores_its_spec(botchan, tmp_path):
    normalizer = tsp.SentencePieceNormalizer(norm_map=[("foo", "bar")], add_dummy_prefix=False)
    prefix = str(tmp_path / "m")
    tsp.SentencePieceTrainer.train(
        input=botchan, model_prefix=prefix, vocab_size=200, normalizer=normalizer
    )
    with open(prefix + ".model", "rb") as f:
        loaded = tsp.SentencePieceNormalizer(model_proto=f.read())
    assert loaded.serialized_normalizer_spec() == normalizer.serialized_normalizer_spec()
    assert spm.SentencePieceProcessor(model_file=prefix + ".model").normalize("foo x") == "bar▁x"
    with pytest.raises(ValueError):
        tsp.SentencePieceTrainer.train(
            input=botchan,
            model_prefix=prefix,
            vocab_size=200,
            normalizer=normalizer,
            add_dummy_prefix=True,
        )


def test_private_batch_decoders_read_the_batch_once():
    """sp._processor._DecodePiecesBatch & co. (private in sentencepiece, used by its test)."""
    ref, ours = pair("botchan_unigram")
    pieces = ref.encode("hello world", out_type=str)
    ids = ref.encode("hello world")

    class ChangingLen(list):
        calls = 0

        def __len__(self):
            ChangingLen.calls += 1
            return 64 if ChangingLen.calls > 1 else 3

    for method, batch, extra in [
        ("_DecodePiecesBatch", [pieces, [], pieces], ()),
        ("_DecodePiecesAsBytesBatch", [pieces], ()),
        ("_DecodePiecesAsSerializedProtoBatch", [pieces, pieces], ()),
        ("_DecodeIdsBatch", [ids, ids], ()),
        ("_DecodeAsOffsetMappingBatch", [ids], (False,)),
        ("_DecodeAsOffsetMappingBatch", [pieces], (True,)),
    ]:
        expected = getattr(ref._processor, method)(batch, 1, None, *extra)
        assert getattr(ours._processor, method)(batch, 1, None, *extra) == expected, method
        assert getattr(ours._processor, method)(ChangingLen(batch), 1, None, *extra) == expected, (
            method
        )


def test_decode_input_forms_match_sentencepiece():
    """Batches of unequal lengths, tuples, NumPy arrays, empty sequences, bytes pieces (which
    decode to bytes in sentencepiece)."""
    ref, ours = pair("botchan_unigram")
    ids = ref.encode(["hello world", "a", "this is longer text"])
    pieces = ref.encode(["hello", "world x"], out_type=str)
    as_bytes = [[p.encode() for p in seq] for seq in pieces]
    cases = [
        ids,
        tuple(ids),
        [tuple(i) for i in ids],
        [np.array(i) for i in ids],
        np.array([ids[0], ids[0]]),
        [[], ids[0]],
        [ids[0], []],
        [[]],
        [],
        None,
        ids[0][0],
        [np.int64(5), 6],
        [ids[1], np.array(ids[2])],
        pieces,
        as_bytes,
        as_bytes[0],
        [as_bytes[0], pieces[1]],
        [[], as_bytes[1]],
        np.array([], dtype=np.int32),
    ]
    for case in cases:
        for return_type in (str, bytes, "offset_mapping"):
            assert ours.decode(case, return_type=return_type) == ref.decode(
                case, return_type=return_type
            ), case
    for bad in (np.array([1.0]), np.array([[[1]]], dtype=np.int32)):
        with pytest.raises(TypeError):
            ours.decode(bad)


def test_short_nbest_searches_are_not_cut_by_a_tiny_timeout():
    """The clock is read only after 1024 expansions, so a short text's n-best (done in
    microseconds) is complete even with a 1 ms timeout on a busy machine."""
    try:
        tsp.set_nbest_timeout(1)
        for _ in range(50):
            fresh = tsp.SentencePieceProcessor(model_file=model_path("botchan_unigram"))
            assert len(fresh.nbest_encode("I saw a girl with a telescope.", nbest_size=10)) == 10
    finally:
        tsp.set_nbest_timeout(30000)
