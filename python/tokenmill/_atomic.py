"""Atomic file writes: a save either leaves the complete new file or the old one untouched.

The text goes to a temporary file in the destination's folder (so the final rename stays on
one file system) and replaces the destination only once it is completely written; on any
error the temporary file is removed and the destination is left as it was.

The saved file gets the permissions a plain ``open(path, "w")`` gives a new file, ``0o666`` less
the umask, like the saves of the Rust core (``tokenmill_core::utils::atomic``): the temporary file
is *created* with mode ``0o666`` and the kernel applies the umask. ``tempfile.mkstemp`` cannot do
that (always ``0o600``), and reading the umask to chmod afterwards needs ``os.umask``, which also
sets it, for the whole process: another thread creating a file between the two calls would get
the wrong mode. A fresh random name opened with ``O_EXCL`` in the destination's own folder keeps
what ``mkstemp`` guarantees.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from typing import IO, Any, Union

PathLike = Union[str, "os.PathLike[str]"]


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode, **kwargs)`` for writing, made atomic (see the module docstring)."""
    if not any(m in mode for m in "wx") or "+" in mode:
        raise ValueError(f"atomic_open writes a new file: mode must be 'w' or 'wb', got {mode!r}")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = _create_temporary(folder, path)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _create_temporary(folder: str, path: str) -> tuple[int, str]:
    """A new file ``.{name}.{random}.tmp`` beside `path` (in `folder`), created ``0o666`` less the
    umask; an error names `path`, not the temporary file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    name = os.path.basename(path)
    for _ in range(100):
        temporary = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue
        except OSError as e:
            raise type(e)(e.errno, e.strerror, path) from None
    raise FileExistsError(f"no free temporary file name for {path}")
