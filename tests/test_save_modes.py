"""Every public save honours the umask: a saved file is ``0o666`` less the umask (0644 under 022,
0640 under 027), as ``open(path, "w")`` and ``tokenizers`` give, never owner-only.

The umask is process-wide, so each case saves everything in a subprocess started with that
umask; the subprocess reports the mode of every file it saved.
"""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes and the umask are POSIX")

# Saves through every public save path into the folder argv[1]; prints {file name: mode}.
SAVE_EVERYTHING = r"""
import json, os, stat, subprocess, sys
from pathlib import Path

out = Path(sys.argv[1])
texts = [f"the cat number {i} sat on the mat of the rat {i % 7}" for i in range(200)]
corpus = out.parent / "corpus.txt"
corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")

from tokenmill import Tokenizer, models, pre_tokenizers, trainers

tokenizer = Tokenizer(models.BPE())
tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=60, show_progress=False))
tokenizer.save(str(out / "tokenizer.json"))
tokenizer.model.save(str(out), "bpe")
tokenizer.save_pretrained(str(out / "pretrained"))
models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}).save(str(out), "wordpiece")
models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>").save(str(out), "wordlevel")
models.Unigram([("<unk>", 0.0), ("a", -1.0)], 0).save(str(out), "unigram")

from tokenmill.implementations import ByteLevelBPETokenizer

implementation = ByteLevelBPETokenizer()
implementation.train_from_iterator(texts, vocab_size=300, show_progress=False)
implementation.save(str(out / "implementation.json"))
implementation.save_model(str(out), "implementation")

from tokenmill.sentencepiece import SentencePieceTrainer, convert_to_flatbuffer

SentencePieceTrainer.train(
    sentence_iterator=iter(texts), model_prefix=str(out / "sp"), vocab_size=40, model_type="bpe"
)
convert_to_flatbuffer(model_file=str(out / "sp.model"), output_file=str(out / "sp.fb"))

from tokenmill.tiktoken import dump_tiktoken_bpe

dump_tiktoken_bpe({b"a": 0, b"b": 1}, str(out / "ranks.tiktoken"))

from tokenmill.collocations import BigramAssocMeasures, BigramCollocationFinder, to_csv

words = " ".join(texts).split()
finder = BigramCollocationFinder.from_words(words)
to_csv(finder.score_ngrams(BigramAssocMeasures.raw_freq), str(out / "bigrams.csv"))

from tokenmill.words import ChineseSegmenter, SentenceSplitter

SentenceSplitter("en").save(str(out / "splitter.json"))
ChineseSegmenter.empty("zh").save(str(out / "segmenter.json"))

cli = [sys.executable, "-m", "tokenmill", "train", str(corpus), "--model", "bpe"]
cli += ["--vocab-size", "60", "--no-progress", "-o", str(out / "cli.json")]
subprocess.run(cli, check=True, stdout=subprocess.DEVNULL)

modes = {
    str(p.relative_to(out)): stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()
}
print(json.dumps(modes))
"""

EXPECTED_FILES = {
    "tokenizer.json",
    "bpe-vocab.json",
    "bpe-merges.txt",
    "pretrained/tokenizer.json",
    "pretrained/tokenizer_config.json",
    "pretrained/special_tokens_map.json",
    "wordpiece-vocab.txt",
    "wordlevel-vocab.json",
    "unigram-unigram.json",
    "implementation.json",
    "implementation-vocab.json",
    "implementation-merges.txt",
    "sp.model",
    "sp.vocab",
    "sp.fb",
    "ranks.tiktoken",
    "bigrams.csv",
    "splitter.json",
    "segmenter.json",
    "cli.json",
}


@pytest.mark.parametrize(
    ("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)], ids=["umask-022", "umask-027"]
)
def test_every_save_gets_the_umask_mode(tmp_path, umask, mode):
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", SAVE_EVERYTHING, str(out)],
        preexec_fn=lambda: os.umask(umask),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    modes = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(modes) == EXPECTED_FILES  # every save, and no temporary file left behind
    wrong = {name: oct(m) for name, m in modes.items() if m != mode}
    assert not wrong, f"expected {oct(mode)} under umask {umask:03o}"
