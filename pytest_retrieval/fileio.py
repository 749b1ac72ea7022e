"""Atomic file writes: a reader never sees half a file, a crash never leaves one behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Union


def atomic_write(
    path: Union[str, os.PathLike[str]],
    write: Callable[[Any], object],
    *,
    newline: str = "\n",
    fsync: bool = True,
    binary: bool = False,
) -> Path:
    """Write through ``write(fh)`` to a temporary file beside ``path``, then rename it over
    ``path`` (keeping an existing file's permissions). ``path`` may be the file being read.
    ``fh`` is UTF-8 text, or bytes when ``binary``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (path.stat().st_mode & 0o777) if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=str(path.parent))
    try:
        fh: IO[Any]
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline=newline) as fh:
            write(fh)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
