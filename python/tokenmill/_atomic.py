"""Atomic file writes: a save either leaves the complete new file or the old one untouched.

The text goes to a temporary file in the destination's folder (so the final rename stays on
one file system) and replaces the destination only once it is completely written; on any
error the temporary file is removed and the destination is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
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
    fd, temporary = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates the file 0600; a saved file gets the usual permissions (umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
