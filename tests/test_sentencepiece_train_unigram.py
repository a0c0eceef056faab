"""SentencePieceTrainer.train(model_type="unigram") — sentencepiece's default model type —
against `sentencepiece`'s trainer: the model tokenmill trains loads in `sentencepiece` and
encodes held-out text there exactly as tokenmill does (plain and n-best), its vocabulary is as
good as sentencepiece's (log-likelihood and bytes per token within 1%), options are honoured,
and impossible settings raise tokenmill exceptions."""

from __future__ import annotations

import pytest
from conftest import write_spm_training_corpus

spm = pytest.importorskip("sentencepiece")
import tokenmill  # noqa: E402
import tokenmill.sentencepiece as tsp  # noqa: E402

TRICKY = [
    "ﬁ ½ Ｈｅｌｌｏ　ｗｏｒｌｄ",
    "  spaced   out  ",
    "tab\there",
    "😀 x 漢字 ¤",
    "x<sep>y [MASK] 12345 <ctl>",
    "İstanbul",
    "a" + "\u0301" * 3,
    "",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """~330 kB of English and German lines, and held-out English/French lines."""
    return write_spm_training_corpus(
        tmp_path_factory.mktemp("spm_unigram") / "corpus.txt", (160_000, 130_000, 40_000), 15_000
    )


def train(prefix, corpus_path, library, **kwargs):
    if library is spm:
        kwargs["minloglevel"] = 2
    library.SentencePieceTrainer.train(input=str(corpus_path), model_prefix=str(prefix), **kwargs)
    return f"{prefix}.model"


def same_in_both(model_file: str, texts: list[str]):
    """The model encodes `texts` identically in sentencepiece and tokenmill."""
    ref, ours = (
        spm.SentencePieceProcessor(model_file=model_file),
        tsp.SentencePieceProcessor(model_file=model_file),
    )
    assert ours.get_piece_size() == ref.get_piece_size()
    assert ours.encode(texts) == ref.encode(texts)
    assert ours.encode(texts, out_type=str) == ref.encode(texts, out_type=str)
    assert ours.decode(ours.encode(texts)) == ref.decode(ref.encode(texts))
    return ref, ours


def quality(model_file: str, texts: list[str]) -> tuple[float, float]:
    """(Viterbi log-probability per byte, bytes per token) of held-out text under a model."""
    sp = spm.SentencePieceProcessor(model_file=model_file)
    ids = sp.encode(texts)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    log_prob = sum(sp.get_score(i) for seq in ids for i in seq)
    return log_prob / n_bytes, n_bytes / sum(map(len, ids))


@pytest.mark.parametrize("rule", ["identity", "nmt_nfkc"])
def test_unigram_model_loads_in_sentencepiece_and_is_as_good(tmp_path, corpus, rule):
    path, held_out = corpus
    ours = train(
        tmp_path / "ours",
        path,
        tsp,
        model_type="unigram",
        vocab_size=2000,
        normalization_rule_name=rule,
    )
    ref = train(
        tmp_path / "ref",
        path,
        spm,
        model_type="unigram",
        vocab_size=2000,
        normalization_rule_name=rule,
    )
    sp, tm = same_in_both(ours, held_out + TRICKY)
    assert sp.get_piece_size() == 2000
    for n in (2, 5):
        assert tm.nbest_encode(held_out[:150], nbest_size=n) == sp.nbest_encode(
            held_out[:150], nbest_size=n
        )
    (ll_ours, bpt_ours), (ll_ref, bpt_ref) = quality(ours, held_out), quality(ref, held_out)
    assert ll_ours == pytest.approx(ll_ref, rel=0.01)
    assert bpt_ours == pytest.approx(bpt_ref, rel=0.01)
    # most of sentencepiece's vocabulary is learned
    ours_pieces = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    ref_sp = spm.SentencePieceProcessor(model_file=ref)
    ref_pieces = {ref_sp.id_to_piece(i) for i in range(ref_sp.get_piece_size())}
    assert len(ours_pieces & ref_pieces) / len(ref_pieces) > 0.8
    vocab_lines = (tmp_path / "ours.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab_lines] == [
        sp.id_to_piece(i) for i in range(sp.get_piece_size())
    ]


def test_unigram_is_the_default_model_type(tmp_path, corpus):
    path, held_out = corpus
    model = train(tmp_path / "default", path, tsp, vocab_size=800)
    ours = tsp.SentencePieceProcessor(model_file=model)
    assert ours._model.model_type() == 1  # UNIGRAM
    same_in_both(model, held_out[:200])
    assert len(ours.nbest_encode("Hello world", nbest_size=3)) == 3


def test_unigram_options_byte_fallback_and_symbols(tmp_path, corpus):
    path, held_out = corpus
    model = train(
        tmp_path / "opts",
        path,
        tsp,
        model_type="unigram",
        vocab_size=1200,
        byte_fallback=True,
        split_digits=True,
        user_defined_symbols=["<sep>", "[MASK]"],
        control_symbols=["<ctl>"],
        character_coverage=0.98,
        pad_id=3,
        max_sentencepiece_length=6,
    )
    ref, ours = same_in_both(model, held_out[:300] + TRICKY)
    pieces = [ours.id_to_piece(i) for i in range(ours.get_piece_size())]
    assert ref.pad_id() == 3 and ours.piece_to_id("<sep>") != ours.unk_id()
    normal = [
        p
        for i, p in enumerate(pieces)
        if not (ours.is_byte(i) or ours.is_control(i) or ours.is_unknown(i))
    ]
    assert all(len(p) <= 6 for p in normal if p not in ("<sep>", "[MASK]"))
    assert all(len(p.lstrip("▁")) <= 1 for p in normal if any(c.isdigit() for c in p))
    # n-best and samples go through byte fallback and user-defined symbols as plain encode does
    texts = TRICKY + held_out[:60]
    for n in (1, 3, 8):
        assert ours.nbest_encode(texts, nbest_size=n) == ref.nbest_encode(texts, nbest_size=n)
        assert ours.nbest_encode(texts, nbest_size=n, out_type=str) == ref.nbest_encode(
            texts, nbest_size=n, out_type=str
        )
    for text in texts:
        plain = ref.decode(ref.encode(text))
        for nbest_size in (-1, 4):
            sampled = ours.encode(text, enable_sampling=True, alpha=0.3, nbest_size=nbest_size)
            assert ref.decode(sampled) == plain


@pytest.mark.parametrize(
    "options",
    [
        dict(treat_whitespace_as_suffix=True),
        dict(split_by_whitespace=False),
        dict(allow_whitespace_only_pieces=True, remove_extra_whitespaces=False),
        dict(split_by_unicode_script=False, split_by_number=False),
        dict(seed_sentencepiece_size=5000, shrinking_factor=0.6, num_sub_iterations=1),
    ],
)
def test_unigram_training_options_give_models_sentencepiece_agrees_with(tmp_path, corpus, options):
    path, held_out = corpus
    model = train(tmp_path / "m", path, tsp, model_type="unigram", vocab_size=1000, **options)
    same_in_both(model, held_out[:200] + TRICKY)


def test_vocab_size_limits(tmp_path, corpus):
    path, _ = corpus
    small = tmp_path / "small.txt"
    small.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 20, encoding="utf-8")
    for library in (spm, tsp):
        with pytest.raises(Exception, match="Vocabulary size too high"):
            train(tmp_path / "hard", small, library, model_type="unigram", vocab_size=500)
    model = train(
        tmp_path / "soft", small, tsp, model_type="unigram", vocab_size=500, hard_vocab_limit=False
    )
    ref, ours = same_in_both(model, ["the cat sat on the log", "a mat"])
    assert ours.get_piece_size() < 500
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(tokenmill.TokenmillError):
        train(tmp_path / "empty", empty, tsp, model_type="unigram", vocab_size=100)
    with pytest.raises(tokenmill.TokenmillError):
        train(tmp_path / "tiny", path, tsp, model_type="unigram", vocab_size=20)


def test_unigram_training_is_deterministic(tmp_path, corpus):
    path, _ = corpus
    a = train(tmp_path / "a", path, tsp, model_type="unigram", vocab_size=700)
    b = train(tmp_path / "b", path, tsp, model_type="unigram", vocab_size=700)

    def pieces(m):
        return [
            (m.id_to_piece(i), m.get_score(i), m.is_unknown(i)) for i in range(m.get_piece_size())
        ]

    assert pieces(tsp.SentencePieceProcessor(model_file=a)) == pieces(
        tsp.SentencePieceProcessor(model_file=b)
    )


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_file_input_streams_like_a_sentence_iterator_and_bad_utf8_trains_as_in_sentencepiece(
    tmp_path, corpus, model_type
):
    """`input=` files are read a line at a time (CR LF ends too) and give the same model as the
    same lines from `sentence_iterator`; invalid UTF-8 bytes become U+FFFD as in sentencepiece,
    whose trainer accepts such a file too, and the model still encodes identically there."""
    path, held_out = corpus
    lines = path.read_text(encoding="utf-8").splitlines()
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes("\r\n".join(lines).encode("utf-8"))
    options = dict(model_type=model_type, vocab_size=800, normalization_rule_name="identity")
    from_file, from_lines = [], []
    tsp.SentencePieceTrainer.train(input=str(crlf), model_writer=_Collect(from_file), **options)
    tsp.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=_Collect(from_lines), **options
    )
    # The models differ only in the trainer spec's `input` (the file's name).
    assert _pieces(from_file[0]) == _pieces(from_lines[0])
    bad = tmp_path / "bad.txt"
    raw = path.read_bytes()
    bad.write_bytes(raw[:5000] + b"caf\xe9 \xff\xfe bytes\n" + raw[5000:])
    ours = train(tmp_path / "ours", bad, tsp, **options)
    train(tmp_path / "ref", bad, spm, **options)  # sentencepiece accepts the file as well
    same_in_both(ours, held_out[:200] + ["caf\ufffd \ufffd\ufffd bytes"])


def _pieces(model: bytes) -> list:
    sp = tsp.SentencePieceProcessor(model_proto=model)
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


class _Collect:
    """A `model_writer` keeping the serialized model."""

    def __init__(self, out: list):
        self.out = out

    def write(self, model: bytes) -> None:
        self.out.append(model)
