"""Training progress bars: none when stderr is not a terminal; on a terminal, a finished bar ends
its line, so what is printed next starts on a line of its own."""

import os
import subprocess
import sys

import pytest

# Trains with progress bars asked for (from an iterator and from a file), then prints REPORT.
TRAIN = r"""
import sys
from tokenmill import Tokenizer, models, pre_tokenizers, trainers

texts = [f"the cat number {i} sat on the mat of the rat {i % 7}" for i in range(2000)]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("\n".join(texts))
for train in (
    lambda t, trainer: t.train_from_iterator(texts, trainer),
    lambda t, trainer: t.train([sys.argv[1]], trainer),
):
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    train(tokenizer, trainers.BpeTrainer(vocab_size=200, show_progress=True))
    print("REPORT", flush=True)
"""


def test_no_bar_when_stderr_is_not_a_terminal(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", TRAIN, str(tmp_path / "corpus.txt")],
        capture_output=True,
        check=True,
    )
    assert result.stderr == b""
    assert result.stdout == b"REPORT\n" * 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pseudo-terminal")
def test_a_finished_bar_ends_its_line(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    main, secondary = pty.openpty()
    # An 80-column terminal, so the bar's width (and its padding) is known.
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-c", TRAIN, str(tmp_path / "corpus.txt")],
        stdin=subprocess.DEVNULL,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert child.wait(timeout=60) == 0, output.decode(errors="replace")
    assert b"Compute merges" in output  # the bars were drawn
    before_reports = output.split(b"REPORT")[:-1]
    assert len(before_reports) == 2
    for before in before_reports:
        # The terminal turns "\n" into "\r\n"; the bar is padded with spaces up to the width.
        assert before.endswith(b"\n"), before[-160:]
