"""Atomic file writes: a save either leaves the complete new file or the old one untouched.

The text goes to a temporary file in the destination's folder (so the final rename stays on
one file system) and replaces the destination only once it is completely written; on any
error the temporary file is removed, the destination is left as it was, and the error names the
destination, not the temporary file.

This is the Python twin of the Rust core's helper (``tokenmill_core::utils::atomic``), with the
same rules, whose module documentation gives the reasons:

- A destination that is a symbolic link is resolved (through chains of links, a dangling one
  included) and the file it points to is replaced, in that file's folder: the link stays.
- When the temporary file cannot be created because the folder is not writable (``EACCES``,
  ``EPERM``, ``EROFS``) but the destination is an existing regular file that can be opened for
  writing, it is overwritten in place (truncated, written, flushed to disk), as a plain
  ``open(path, "w")`` would. **Such a save is not atomic**: one killed or failing half-way leaves
  a truncated file.
- The temporary file is named ``.{NAME}.tokenmill-tmp-{12 letters or digits}`` and its save holds
  an exclusive ``flock`` on it until the rename. Every save first removes the leftovers of killed
  saves of the same destination: files named so, regular, whose lock it can take (a dead process
  holds no lock; a live save, of this process or another, is never touched). Without ``fcntl``
  (Windows) or on a file system without locks, nothing is removed.
- Each file is atomic on its own: a save of several files killed between two of them leaves the
  first ones new and the others old.

The saved file gets the permissions a plain ``open(path, "w")`` gives a new file, ``0o666`` less
the umask: the temporary file is *created* with mode ``0o666`` and the kernel applies the umask.
``tempfile.mkstemp`` cannot do that (always ``0o600``), and reading the umask to chmod afterwards
needs ``os.umask``, which also sets it, for the whole process: another thread creating a file
between the two calls would get the wrong mode. A fresh random name opened with ``O_EXCL`` in the
destination's own folder keeps what ``mkstemp`` guarantees. A file overwritten in place keeps its
mode.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from typing import IO, Any, Optional, Union

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

PathLike = Union[str, "os.PathLike[str]"]

TEMPORARY_MARK = "tokenmill-tmp-"
_RANDOM_CHARS = 12
_MAX_LINKS = 40
_FOLDER_NOT_WRITABLE = (errno.EACCES, errno.EPERM, errno.EROFS)


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode, **kwargs)`` for writing, made atomic (see the module docstring)."""
    if not any(m in mode for m in "wx") or "+" in mode:
        raise ValueError(f"atomic_open writes a new file: mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    try:
        target = resolve_links(path)
    except OSError as e:
        raise _naming(e, path) from None
    folder = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(target)
    remove_stale_temporaries(folder, name)
    try:
        fd, temporary = _create_temporary(folder, name)
    except OSError as e:
        in_place = _open_in_place(target) if e.errno in _FOLDER_NOT_WRITABLE else None
        if in_place is None:
            raise _naming(e, path) from None
        with _errors_naming(path), os.fdopen(in_place, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        return
    try:
        with _errors_naming(path):
            with os.fdopen(fd, mode, **kwargs) as f:  # closing it releases the lock
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def resolve_links(path: str) -> str:
    """``path``, or the file it points to if it is a symbolic link (through chains of links; a
    dangling link gives the path it points to)."""
    for _ in range(_MAX_LINKS):
        if not os.path.islink(path):
            return path
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


def is_temporary_of(file_name: str, name: str) -> bool:
    """Whether ``file_name`` is the name of a temporary file of a save of ``name``."""
    prefix = f".{name}.{TEMPORARY_MARK}"
    tail = file_name[len(prefix) :]
    return (
        file_name.startswith(prefix)
        and len(tail) == _RANDOM_CHARS
        and tail.isascii()
        and tail.isalnum()
    )


def remove_stale_temporaries(folder: str, name: str) -> None:
    """Removes the temporary files (and folders, see :func:`temporary_folder`) that killed saves
    of ``folder/name`` left (module docstring); errors are ignored: a leftover stays until a
    later save."""
    if fcntl is None:
        return
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if not is_temporary_of(entry.name, name):
                continue
            is_folder = entry.is_dir(follow_symlinks=False)
            if not is_folder and not entry.is_file(follow_symlinks=False):
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live save: OSError
            if is_folder:
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            pass
        finally:
            os.close(fd)


@contextlib.contextmanager
def temporary_folder(path: PathLike) -> Iterator[str]:
    """A new empty folder ``.{NAME}.tokenmill-tmp-XXXXXXXXXXXX`` beside ``path``, for files to
    write (and check) before they replace ``path`` and its companions; removed on exit. It is
    locked as a temporary file is: one that a killed process left is removed by the next save
    of ``path`` (:func:`remove_stale_temporaries`), never one a live save holds."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    remove_stale_temporaries(folder, name)
    for _ in range(100):
        temporary = os.path.join(folder, f".{name}.{TEMPORARY_MARK}{secrets.token_hex(6)}")
        try:
            os.mkdir(temporary)
        except FileExistsError:
            continue
        fd = os.open(temporary, os.O_RDONLY)
        if _lock(fd):
            break
        os.close(fd)  # removed, or being removed, by another save's cleanup: start over
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary folder name", path)
    try:
        yield temporary
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
        os.close(fd)


def _create_temporary(folder: str, name: str) -> tuple[int, str]:
    """A new, locked file ``.{name}.tokenmill-tmp-XXXXXXXXXXXX`` in ``folder``, created ``0o666``
    less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temporary = os.path.join(folder, f".{name}.{TEMPORARY_MARK}{secrets.token_hex(6)}")
        try:
            fd = os.open(temporary, flags, 0o666)
        except FileExistsError:
            continue
        if _lock(fd):
            return fd, temporary
        os.close(fd)  # removed, or being removed, by another save's cleanup: start over
    raise FileExistsError(errno.EEXIST, "no free temporary file name", os.path.join(folder, name))


def _lock(fd: int) -> bool:
    """Locks the new temporary file (or folder) ``fd``; False if another save's cleanup removed
    it (or is removing it) in the instant since its creation."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True  # no locks on this file system: saved unlocked
    return os.fstat(fd).st_nlink > 0


def _open_in_place(target: str) -> Optional[int]:
    """The non-atomic fallback of a read-only folder: the existing regular file ``target``,
    opened for writing and truncated, if it can be."""
    try:
        if not stat.S_ISREG(os.stat(target).st_mode):
            return None
        return os.open(target, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_BINARY", 0))
    except OSError:
        return None


@contextlib.contextmanager
def _errors_naming(path: str) -> Iterator[None]:
    """Errors of writing, flushing and renaming the file name ``path``: the one the caller
    gave, not the temporary file (an ``OSError`` naming another file is left as it is)."""
    try:
        yield
    except OSError as e:
        if (
            e.errno is None
            or type(e).__module__ != "builtins"
            or e.filename not in (None, *_temporaries(e))
        ):
            raise
        raise _naming(e, path) from None


def _temporaries(e: OSError) -> tuple[str, ...]:
    """The names in ``e`` that are temporary files of a save."""
    return tuple(
        f
        for f in (e.filename, e.filename2)
        if isinstance(f, str) and TEMPORARY_MARK in os.path.basename(f)
    )


def _naming(e: OSError, path: str) -> OSError:
    """``e``, of the same class, naming ``path`` only."""
    return type(e)(e.errno, e.strerror, path)
