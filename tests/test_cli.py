"""The `tokenmill` command line, mostly in-process through `tokenmill.cli.main(argv)` (plus two
real subprocess runs): every model type trains on a small corpus and round-trips, the peers load
what it writes, conversions give the original ids, and every error is one line with the right
exit status (2: usage, 1: failure) and no traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tokenmill
from conftest import SHARED, read_sample
from tokenmill.cli import main, stdlib_files
from tokenmill.cli.train import MODELS

# The subprocess must import the same tokenmill as this process (an installed wheel in CI, a
# `maturin develop` tree in development), so put that package's parent first on its path.
TOKENMILL_ROOT = Path(tokenmill.__file__).resolve().parent.parent
SENTENCE = "the value of this is not what you think it is"


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None):
    """(exit status, stdout, stderr) of `tokenmill argv` run in this process."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys, *argv: str, **kw) -> str:
    code, out, err = run(capsys, *argv, **kw)
    assert code == 0, err
    return out


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(
        os.environ, PYTHONPATH=str(TOKENMILL_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    return subprocess.run(
        [sys.executable, "-m", "tokenmill", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """About 300 kB of English: a Gutenberg novel from ../shared when present, else the
    docstrings and comments of standard-library sources (so the tests run without ../shared)."""
    novel = SHARED / "corpora" / "gutenberg" / "pg244_en_a_study_in_scarlet.txt"
    if novel.exists():
        text = read_sample(novel, 300_000)
    else:
        lines = []
        for path in stdlib_files()[:400]:
            try:
                lines += Path(path).read_text(encoding="utf-8").splitlines()
            except UnicodeDecodeError:
                continue
        text = "\n".join(line.strip(" #") for line in lines if line.strip())[:300_000] + "\n"
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def lines(corpus) -> list:
    """Corpus lines whose every character is in the corpus's 100 most frequent ones."""
    text = corpus.read_text(encoding="utf-8")
    common = {c for c, _ in __import__("collections").Counter(text).most_common(100)}
    return [line for line in text.splitlines() if line.strip() and set(line) <= common][:200]


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory) -> dict:
    """model type → (its file, the report printed), each trained on `corpus` with vocab 600."""
    folder = tmp_path_factory.mktemp("trained")
    out = {}
    for model in MODELS:
        path = folder / (model + (".model" if model.startswith("sentencepiece") else ".json"))
        capture = io.StringIO()
        stdout, sys.stdout = sys.stdout, capture
        try:
            code = main(
                ["train", str(corpus), "--model", model, "--vocab-size", "600", "-o", str(path)]
            )
        finally:
            sys.stdout = stdout
        assert code == 0
        out[model] = (path, capture.getvalue())
    return out


def ids_of(capsys, tokenizer: Path, texts: list, *options: str, **kw) -> list:
    out = ok(capsys, "encode", "-t", tokenizer, "--no-special-tokens", *options, *texts, **kw)
    return [[int(i) for i in line.split()] for line in out.splitlines()]


# ---- train ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", MODELS)
def test_each_model_type_trains_reports_and_round_trips(model, trained, capsys, lines, monkeypatch):
    path, report = trained[model]
    assert path.is_file()
    assert "vocabulary size: 600" in report
    assert "held-out compression (" in report and "this tokenizer" in report
    assert f"saved {path.resolve()}" in report
    assert f"next: tokenmill encode --tokenizer {path.resolve()}" in report
    ids = ids_of(capsys, path, [SENTENCE])[0]
    assert ok(capsys, "decode", "-t", path, *map(str, ids)) == SENTENCE + "\n"
    if model in ("bytelevel-bpe", "bpe", "unigram"):  # every space and character comes back
        batch = ids_of(capsys, path, lines[:50])
        decoded = ok(
            capsys,
            "decode",
            "-t",
            path,
            stdin="\n".join(" ".join(map(str, i)) for i in batch),
            monkeypatch=monkeypatch,
        )
        assert decoded.splitlines() == lines[:50]


def test_peers_load_what_train_writes(trained, lines):
    tokenizers = pytest.importorskip("tokenizers")
    spm = pytest.importorskip("sentencepiece")
    for model, (path, _) in trained.items():
        ours = tokenmill.cli.formats.load(str(path))
        want = ours.encode(lines, add_special_tokens=False)
        if model.startswith("sentencepiece"):
            theirs = spm.SentencePieceProcessor(model_file=str(path)).encode(lines)
        else:
            peer = tokenizers.Tokenizer.from_file(str(path))
            theirs = [e.ids for e in peer.encode_batch(lines, add_special_tokens=False)]
        assert theirs == want, model


def test_bytelevel_matches_tokenizers_training(corpus, tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers")
    out = tmp_path / "tok.json"
    ok(
        capsys,
        "train",
        corpus,
        "-o",
        out,
        "--vocab-size",
        "700",
        "--special-tokens",
        "<|endoftext|>",
        "--held-out-every",
        "0",
    )
    reference = tokenizers.Tokenizer(tokenizers.models.BPE())
    reference.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    reference.train(
        [str(corpus)],
        tokenizers.trainers.BpeTrainer(
            vocab_size=700,
            min_frequency=2,
            show_progress=False,
            special_tokens=["<|endoftext|>"],
            initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    assert json.loads(out.read_text())["model"] == json.loads(reference.to_str())["model"]


def test_options_reach_the_trainer_and_pipeline(corpus, tmp_path, capsys):
    wp = tmp_path / "wp.json"
    ok(
        capsys,
        "train",
        corpus,
        "--model",
        "wordpiece",
        "--vocab-size",
        "500",
        "--prefix",
        "@@",
        "--lowercase",
        "-o",
        wp,
    )
    info = ok(capsys, "info", wp)
    assert "model:" in info and "WordPiece" in info and "@@" in info and "[CLS]=2" in info
    assert "post-processor:  TemplateProcessing" in info.replace("  ", " ").replace(" :", ":") or (
        "TemplateProcessing" in info
    )
    config = json.loads(wp.read_text())
    assert config["normalizer"]["lowercase"] is True
    assert config["decoder"] == {**config["decoder"], "type": "WordPiece", "prefix": "@@"}
    bpe = tmp_path / "bpe.json"
    ok(
        capsys,
        "train",
        corpus,
        "--model",
        "bpe",
        "--vocab-size",
        "500",
        "--suffix",
        "</w>",
        "--unk-token",
        "[?]",
        "--special-tokens",
        "<s>,</s>",
        "-o",
        bpe,
    )
    config = json.loads(bpe.read_text())
    assert config["model"]["end_of_word_suffix"] == "</w>"
    assert [t["content"] for t in config["added_tokens"]] == ["[?]", "<s>", "</s>"]
    ids = ids_of(capsys, bpe, [SENTENCE])[0]
    assert ok(capsys, "decode", "-t", bpe, *map(str, ids)) == SENTENCE + "\n"
    sp = tmp_path / "sp.model"
    ok(
        capsys,
        "train",
        corpus,
        "--model",
        "sentencepiece-unigram",
        "--vocab-size",
        "500",
        "--byte-fallback",
        "--character-coverage",
        "0.99",
        "--sp-option",
        "split_digits=true",
        "-o",
        sp,
    )
    info = ok(capsys, "info", sp)
    assert "byte fallback:   yes" in info and "Unigram" in info


def test_compare_puts_references_beside_the_new_tokenizer(trained, corpus, tmp_path, capsys):
    references = [trained["sentencepiece-bpe"][0], trained["bytelevel-bpe"][0]]
    cl100k = SHARED / "pretrained" / "cl100k_base" / "cl100k_base.tiktoken"
    if cl100k.exists():
        references.append(cl100k)
    out = ok(
        capsys,
        "train",
        corpus,
        "--model",
        "unigram",
        "--vocab-size",
        "500",
        "-o",
        tmp_path / "u.json",
        "--compare",
        *references,
    )
    table = out[out.index("held-out compression") :].splitlines()
    assert table[1].split()[:2] == ["tokenizer", "vocab"]
    assert table[2].startswith("  this tokenizer")
    for i, reference in enumerate(references):
        row = table[3 + i].split()
        assert row[0] == str(reference) and float(row[-1]) > 1.0


# ---- encode, decode ------------------------------------------------------------------------


def test_encode_and_decode_inputs(trained, tmp_path, capsys, monkeypatch):
    path = trained["bytelevel-bpe"][0]
    texts = ["first line", "second, line"]
    want = ids_of(capsys, path, texts)
    file = tmp_path / "texts.txt"
    file.write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert ids_of(capsys, path, [], "--file", file) == want
    assert (
        ids_of(capsys, path, [], stdin="first line\nsecond, line\n", monkeypatch=monkeypatch)
        == want
    )
    jsonl = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = ok(capsys, "encode", "-t", path, "--jsonl", stdin=jsonl, monkeypatch=monkeypatch)
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["ids"] for r in records] == want and len(records[0]["tokens"]) == len(want[0])
    decoded = ok(capsys, "decode", "-t", path, "--jsonl", stdin=out, monkeypatch=monkeypatch)
    assert [json.loads(line)["text"] for line in decoded.splitlines()] == texts
    assert ok(capsys, "decode", "-t", path, json.dumps(want[1])) == texts[1] + "\n"
    tokens = ok(capsys, "encode", "-t", path, "--tokens", texts[0])
    assert tokens == " ".join(records[0]["tokens"]) + "\n"


# ---- convert, info -------------------------------------------------------------------------


def converted_ids(capsys, source, target, lines, *options):
    ok(capsys, "convert", source, target, *options)
    return (
        tokenmill.cli.formats.load(str(source)).encode(lines, add_special_tokens=False),
        tokenmill.cli.formats.load(str(target)).encode(lines, add_special_tokens=False),
    )


def test_convert_round_trips_keep_the_ids(trained, tmp_path, capsys, lines):
    bytelevel = trained["bytelevel-bpe"][0]
    for target in ("bl.tiktoken", "vocab.json"):
        want, got = converted_ids(capsys, bytelevel, tmp_path / target, lines)
        assert got == want, target
    back = tmp_path / "back.json"
    want, got = converted_ids(capsys, tmp_path / "bl.tiktoken", back, lines)
    assert got == want
    unigram = trained["sentencepiece-unigram"][0]
    want, got = converted_ids(capsys, unigram, tmp_path / "u.json", lines)
    assert got == want
    want, got = converted_ids(capsys, tmp_path / "u.json", tmp_path / "u.model", lines)
    assert got == want
    sub = tmp_path / "bert"
    sub.mkdir()
    want, got = converted_ids(capsys, trained["wordpiece"][0], sub / "vocab.txt", lines)
    assert got == want


def test_convert_pretrained_files(tmp_path, capsys, lines):
    mistral = SHARED / "pretrained" / "mistral" / "tokenizer.model.v1"
    if not mistral.exists():
        pytest.skip(f"needs {mistral} (the ../shared data beside the repo), which is absent")
    want, got = converted_ids(capsys, mistral, tmp_path / "mistral.json", lines)
    assert got == want
    info = ok(capsys, "info", mistral)
    assert "vocabulary size: 32000" in info and "BPE" in info


def test_converting_tiktoken_keeps_the_special_token_ids(tmp_path, capsys):
    """cl100k has no rank 100256: its special tokens (100257...) were added tokens absent from
    the converted model, which gives them the next free id on loading (100256...)."""
    cl100k = SHARED / "pretrained" / "cl100k_base" / "cl100k_base.tiktoken"
    if not cl100k.exists():
        pytest.skip(f"needs {cl100k} (the ../shared data beside the repo), which is absent")
    tokenizers = pytest.importorskip("tokenizers")
    target = tmp_path / "cl100k.json"
    ok(capsys, "convert", cl100k, target)
    encoding = tokenmill.cli.formats.load(str(cl100k)).enc
    specials = encoding._special_tokens
    assert specials["<|endoftext|>"] == 100257
    text = "a<|endoftext|>b<|fim_prefix|>c<|endofprompt|>"
    want = encoding.encode(text, allowed_special="all")
    for tok in (
        tokenmill.Tokenizer.from_file(str(target)),
        tokenizers.Tokenizer.from_file(str(target)),
    ):
        assert {t: tok.token_to_id(t) for t in specials} == specials
        assert tok.encode(text).ids == want


def test_info_names_model_vocabulary_specials_and_pipeline(trained, capsys):
    info = ok(capsys, "info", trained["bytelevel-bpe"][0])
    for line in (
        "model:           BPE",
        "vocabulary size: 600",
        "pre-tokenizer:   ByteLevel",
        "decoder:         ByteLevel",
        "post-processor:  ByteLevel",
        "normalizer:      none",
    ):
        assert line in info


# ---- errors --------------------------------------------------------------------------------


def error_cases(tmp_path, trained, corpus):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good line\nbad \xff byte\n")
    tok = trained["bpe"][0]
    out = str(tmp_path / "out.json")
    return [
        (
            ["train", corpus, "--vocab-size", "-5", "-o", out],
            2,
            "--vocab-size: expected a positive",
        ),
        (["train", corpus, "--vocab-size", "99999999999", "-o", out], 2, "below 2**32"),
        (
            ["train", corpus, "--prefix", "##", "-o", out],
            2,
            "--prefix does not apply to bytelevel-bpe",
        ),
        (["train", corpus, "--model", "unigram", "--min-frequency", "3", "-o", out], 2, "unigram"),
        (["train", corpus, "--model", "sentencepiece-bpe", "-o", out], 2, "*.model"),
        (["train", corpus, "-o", tmp_path / "missing" / "x.json"], 1, "does not exist"),
        (["train", tmp_path / "absent.txt", "-o", out], 1, "absent.txt: No such file"),
        (["train", tmp_path / "nothing*.txt", "-o", out], 1, "no file matches"),
        (["train", bad, "-o", out], 1, "bad.txt: line 2 is not UTF-8"),
        (["train", corpus, "-o", out, "--compare", tmp_path / "ref.xyz"], 1, "ref.xyz"),
        (["decode", "-t", tok, "5", "99999999"], 1, "id 99999999 is not in the vocabulary"),
        (["decode", "-t", tok, "5", "x"], 1, "ids must be integers"),
        (["encode", "-t", tmp_path / "none.json", "hi"], 1, "none.json: no such file"),
        (
            ["convert", trained["sentencepiece-bpe"][0], tmp_path / "x.tiktoken"],
            1,
            "text, not byte",
        ),
        (["convert", trained["wordpiece"][0], tmp_path / "x.model"], 1, "BPE and Unigram"),
        (["trian"], 2, "did you mean train?"),
    ]


def test_every_error_is_one_line_with_its_exit_status(trained, corpus, tmp_path, capsys):
    for argv, status, fragment in error_cases(tmp_path, trained, corpus):
        code, out, err = run(capsys, *argv)
        assert code == status, (argv, err)
        lines = err.splitlines()
        assert len(lines) == 1, (argv, err)
        assert lines[0].startswith(f"tokenmill {argv[0]}: error: ".replace(" trian", "")), err
        assert fragment in lines[0], (argv, err)
    assert not (tmp_path / "out.json").exists()  # nothing was trained


def test_misspelled_option_shows_the_commands_usage_and_a_suggestion(capsys):
    code, _, err = run(capsys, "train", "--vocab-sise", "100")
    assert code == 2
    assert err.startswith("usage: tokenmill train ")
    assert err.splitlines()[-1] == (
        "tokenmill train: error: unrecognized arguments: --vocab-sise (did you mean --vocab-size?)"
    )


def test_unreadable_input_is_refused_before_training(corpus, tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    locked = tmp_path / "locked.txt"
    locked.write_text("text\n")
    locked.chmod(0)
    code, _, err = run(capsys, "train", corpus, locked, "-o", tmp_path / "t.json")
    assert code == 1 and "Permission denied" in err and len(err.splitlines()) == 1


def test_version_and_help_with_defaults(capsys):
    assert ok(capsys, "--version") == f"tokenmill {tokenmill.__version__}\n"
    text = " ".join(ok(capsys, "train", "--help").split())
    for default in (
        "(default: 32000)",
        "(default: bytelevel-bpe)",
        "(default: 20)",
        "default: 2; BPE and WordPiece",
        "default: 0.9995",
    ):
        assert default in text
    assert "(default: tokenizer.json)" in " ".join(ok(capsys, "encode", "--help").split())


def test_missing_tiktoken_rank_file_says_where_to_get_and_put_it(tmp_path, monkeypatch):
    from tokenmill.tiktoken import registry

    monkeypatch.setattr(registry, "ENCODINGS", {})
    monkeypatch.delenv("TOKENMILL_TIKTOKEN_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(tokenmill.TokenmillIOError) as error:
        tokenmill.tiktoken.get_encoding("cl100k_base")
    message = str(error.value)
    for part in (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "TOKENMILL_TIKTOKEN_DIR",
        "$TIKTOKEN_CACHE_DIR",
        str(tmp_path),
        "cl100k_base.tiktoken",
        "path=",
    ):
        assert part in message


# ---- real processes ------------------------------------------------------------------------


def test_subprocess_train_encode_and_a_usage_error(corpus, tmp_path):
    out = tmp_path / "tok.json"
    proc = cli("train", str(corpus), "-o", str(out), "--vocab-size", "400")
    assert proc.returncode == 0, proc.stderr
    assert f"saved {out}" in proc.stdout and "Traceback" not in proc.stderr
    proc = cli("encode", "-t", str(out), stdin="hello there\n")
    assert proc.returncode == 0 and proc.stdout.strip()
    proc = cli("decode", "-t", str(out), "99999999")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("tokenmill decode: error: id 99999999")
    assert "Traceback" not in proc.stderr
