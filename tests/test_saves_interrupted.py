"""Saves that are killed, go through symbolic links, land in read-only folders or fail: the
leftovers of killed saves are removed by the next save of the same file, a link stays a link,
a writable file in a read-only folder is overwritten in place, and errors name the destination.

Both save helpers are covered, the Rust core's (``Tokenizer.save``) and Python's
(``tokenmill._atomic.atomic_open``, used by e.g. the SentencePiece trainer): they share the name
scheme of their temporary files, so each removes the other's leftovers.
"""

import errno
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from tokenmill import Tokenizer, models
from tokenmill._atomic import TEMPORARY_MARK, atomic_open, is_temporary_of

fcntl = pytest.importorskip("fcntl", reason="the leftover cleanup relies on flock (POSIX)")

PYTHON_DIR = str(Path(__import__("tokenmill").__file__).resolve().parent.parent)


def temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if TEMPORARY_MARK in p.name)


def save_tokenizer(path: Path) -> None:
    """A save through the Rust core's helper."""
    Tokenizer(models.WordLevel({"<unk>": 0, "a": 1}, unk_token="<unk>")).save(str(path))


def save_text(path: Path) -> None:
    """A save through the Python helper."""
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write("new\n")


SAVES = pytest.mark.parametrize("save", [save_tokenizer, save_text], ids=["rust", "python"])


@SAVES
def test_leftovers_of_killed_saves_are_removed_and_live_saves_kept(tmp_path, save):
    target = tmp_path / "tokenizer.json"
    stale = tmp_path / f".tokenizer.json.{TEMPORARY_MARK}0123456789ab"
    stale.write_bytes(b"x" * 100_000)
    os.utime(stale, (1_000_000_000, 1_000_000_000))  # 2001
    fresh_dead = tmp_path / f".tokenizer.json.{TEMPORARY_MARK}abcdefABCDEF"
    fresh_dead.write_bytes(b"a save killed a moment ago")
    live = tmp_path / f".tokenizer.json.{TEMPORARY_MARK}fedcba987654"
    live.write_bytes(b"a save in progress")
    os.utime(live, (1_000_000_000, 1_000_000_000))  # old, but its writer lives
    others = [
        tmp_path / f".other.json.{TEMPORARY_MARK}0123456789ab",  # another file's
        tmp_path / f".tokenizer.json.{TEMPORARY_MARK}0123",  # not the scheme
        tmp_path / ".tokenizer.json.0123456789ab.tmp",  # not ours
    ]
    for other in others:
        other.write_bytes(b"")
    os.symlink(stale.name, tmp_path / f".tokenizer.json.{TEMPORARY_MARK}link12345678")
    with open(live, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the live save holds it
        save(target)
        assert live.exists()
    assert not stale.exists()
    assert not fresh_dead.exists()
    assert all(other.exists() for other in others)
    assert (tmp_path / f".tokenizer.json.{TEMPORARY_MARK}link12345678").is_symlink()
    assert target.exists()


def test_the_name_scheme():
    assert is_temporary_of(f".m.model.{TEMPORARY_MARK}0123456789ab", "m.model")
    assert not is_temporary_of(f".m.model.{TEMPORARY_MARK}0123456789a", "m.model")
    assert not is_temporary_of(f".m.model.{TEMPORARY_MARK}0123456789a-", "m.model")
    assert not is_temporary_of(f".m.vocab.{TEMPORARY_MARK}0123456789ab", "m.model")


KILLED_MID_SAVE = textwrap.dedent(
    """
    import sys, time
    from tokenmill._atomic import atomic_open
    with atomic_open(sys.argv[1], "wb") as f:
        f.write(b"x" * 3_500_000)
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
    """
)


@SAVES
def test_a_save_killed_with_sigkill_leaves_a_leftover_the_next_save_removes(tmp_path, save):
    target = tmp_path / "tokenizer.json"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_SAVE, str(target)], stdout=subprocess.PIPE, env=env
    )
    try:
        assert child.stdout.readline() == b"writing\n"
        assert len(temporaries(tmp_path)) == 1
        save(target)  # the child still writes: its temporary file stays
        assert len(temporaries(tmp_path)) == 1
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert len(temporaries(tmp_path)) == 1
    save(target)
    assert temporaries(tmp_path) == []
    assert sorted(os.listdir(tmp_path)) == ["tokenizer.json"]


@SAVES
def test_a_symbolic_link_is_written_through(tmp_path, save):
    real = tmp_path / "real"
    real.mkdir()
    (real / "tokenizer.json").write_text("old\n")
    link = tmp_path / "tokenizer.json"
    os.symlink("real/tokenizer.json", link)
    chained = tmp_path / "chained.json"
    os.symlink(link.name, chained)
    save(chained)
    assert chained.is_symlink() and link.is_symlink()
    assert (real / "tokenizer.json").read_text() != "old\n"
    assert sorted(os.listdir(real)) == ["tokenizer.json"]
    assert sorted(os.listdir(tmp_path)) == ["chained.json", "real", "tokenizer.json"]

    dangling = tmp_path / "dangling.json"
    os.symlink("real/new.json", dangling)
    save(dangling)
    assert dangling.is_symlink() and (real / "new.json").is_file()


@SAVES
def test_a_symbolic_link_loop_is_an_error_naming_the_link(tmp_path, save):
    looping = tmp_path / "loop.json"
    os.symlink(looping.name, looping)
    with pytest.raises(Exception, match="loop.json") as info:
        save(looping)
    assert TEMPORARY_MARK not in str(info.value)
    assert looping.is_symlink()


IN_A_READ_ONLY_FOLDER = textwrap.dedent(
    """
    import os, sys
    from tokenmill import Tokenizer, models
    from tokenmill._atomic import atomic_open
    folder = sys.argv[1]
    os.setgid(65534)
    os.setuid(65534)  # root ignores permissions: save as nobody (Python's files are root's)
    Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")).save(folder + "/tokenizer.json")
    with atomic_open(folder + "/notes.txt", "w") as f:
        f.write("new\\n")
    for name in ("missing.json", "locked.txt"):
        try:
            with atomic_open(os.path.join(folder, name), "w") as f:
                f.write("x")
        except PermissionError as e:
            print(name, e.filename, flush=True)
    """
)


def test_a_writable_file_in_a_read_only_folder_is_overwritten_in_place():
    if os.geteuid() != 0:
        pytest.skip("needs root, to save as another user (root ignores permissions)")
    # Not tmp_path: pytest's base folder is root's own (0o700), closed to nobody.
    with tempfile.TemporaryDirectory() as top:
        os.chmod(top, 0o755)
        check_the_read_only_folder(Path(top) / "read-only")


def check_the_read_only_folder(folder):
    folder.mkdir()
    for name in ("tokenizer.json", "notes.txt", "locked.txt"):
        (folder / name).write_text("old\n")
    os.chmod(folder / "tokenizer.json", 0o666)
    os.chmod(folder / "notes.txt", 0o666)
    os.chmod(folder / "locked.txt", 0o644)
    os.chmod(folder, 0o755)  # nobody may not create files in it
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    result = subprocess.run(
        [sys.executable, "-c", IN_A_READ_ONLY_FOLDER, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    assert '"WordLevel"' in (folder / "tokenizer.json").read_text()
    assert (folder / "notes.txt").read_text() == "new\n"
    assert (folder / "locked.txt").read_text() == "old\n"
    assert result.stdout.splitlines() == [
        f"missing.json {folder / 'missing.json'}",
        f"locked.txt {folder / 'locked.txt'}",
    ]
    assert sorted(os.listdir(folder)) == ["locked.txt", "notes.txt", "tokenizer.json"]


def test_the_python_helper_falls_back_to_writing_in_place(tmp_path, monkeypatch):
    """The fallback, without needing root: creating the temporary file is refused."""
    import tokenmill._atomic as atomic

    def refused(folder, name):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(folder, "x"))

    monkeypatch.setattr(atomic, "_create_temporary", refused)
    path = tmp_path / "notes.txt"
    path.write_text("old contents\n")
    os.chmod(path, 0o640)
    save_text(path)
    assert path.read_text() == "new\n"
    assert (path.stat().st_mode & 0o777) == 0o640
    with pytest.raises(PermissionError) as info:
        save_text(tmp_path / "missing.txt")
    assert info.value.filename == str(tmp_path / "missing.txt")


TRAIN = {"vocab_size": 20, "model_type": "bpe"}


def sentences():
    return iter(["hello world this is a test"] * 50 + ["another line of text"] * 30)


@pytest.mark.parametrize("problem", ["parent is a file", "target is a folder", "no folder"])
def test_sentencepiece_trainer_errors_name_the_target(tmp_path, problem):
    from tokenmill.sentencepiece import SentencePieceTrainer

    if problem == "parent is a file":
        (tmp_path / "file").write_text("")
        prefix = tmp_path / "file" / "m"
    elif problem == "target is a folder":
        (tmp_path / "m.model").mkdir()
        prefix = tmp_path / "m"
    else:
        prefix = tmp_path / "no-such-folder" / "m"
    with pytest.raises(RuntimeError) as info:  # as sentencepiece: a RuntimeError
        SentencePieceTrainer.train(sentence_iterator=sentences(), model_prefix=str(prefix), **TRAIN)
    assert isinstance(info.value, OSError)
    message = str(info.value)
    assert repr(f"{prefix}.model") in message
    assert TEMPORARY_MARK not in message and ".tmp" not in message
    assert temporaries(tmp_path) == []


def test_errors_of_the_python_helper_name_the_destination(tmp_path):
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        save_text(tmp_path / "folder.json")
    assert info.value.filename == str(tmp_path / "folder.json")
    assert info.value.filename2 is None
    assert temporaries(tmp_path) == []


@SAVES
def test_errors_name_the_destination_not_the_temporary_file(tmp_path, save):
    target = tmp_path / "no-such-folder" / "tokenizer.json"
    with pytest.raises(OSError, match="No such file") as info:
        save(target)
    assert str(target) in str(info.value)
    assert TEMPORARY_MARK not in str(info.value)
