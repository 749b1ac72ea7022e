"""Atomic file writes: a reader never sees half a file, a crash never leaves one behind. And
the one check that a path given as a file is a regular file (a folder, FIFO or device is one
clear ``OSError``, never a hang or a replaced ``/dev/null``)."""

from __future__ import annotations

import errno
import os
import stat
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
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        mode = 0o644
    else:
        _refuse_special(path, existing.st_mode)
        mode = existing.st_mode & 0o777
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


class NotARegularFile(OSError):
    """A path given as a file is a folder, a FIFO, a device or a socket."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def _refuse_special(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        raise NotARegularFile(code, f"{_kind(mode)}, not a regular file", str(path))


def read_regular_file(path: Union[str, os.PathLike[str]]) -> bytes:
    """The bytes of ``path``, which must be a regular file: opened without blocking (a FIFO with
    no writer would wait forever) and checked on the open descriptor (no race with a swap)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        _refuse_special(Path(path), os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def open_regular_for_append(path: Union[str, os.PathLike[str]]) -> IO[str]:
    """``path`` opened to append UTF-8 text (created if missing); a FIFO, device or folder is
    refused without waiting for a reader."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:  # ENXIO: a FIFO no one reads (POSIX open(), O_NONBLOCK)
        if exc.errno == errno.ENXIO:
            raise NotARegularFile(errno.EINVAL, "a FIFO, not a regular file", str(path)) from None
        raise
    try:
        _refuse_special(Path(path), os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "a", encoding="utf-8")
