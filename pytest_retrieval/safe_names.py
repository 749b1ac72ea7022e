"""User text turned into file names, shell lines and terminal lines: the one place that does it.

A suite or retriever name is whatever the YAML holds (``..``, ``a b``, ``-rf``, a newline, a
``;``). Every file name derived from one goes through :func:`file_name` (one path component,
never ``.``/``..``, never hidden, never an option, bounded) and, when several share a folder,
:func:`unique_file_names` (no two names equal, even on a case-insensitive file system). Every
line of a shell script goes through :func:`shell_line` (each argument ``shlex.quote``-d) or
:func:`shell_comment` (one line, control characters spelled out), so no name runs anything;
every terminal line and pytest node name through :func:`one_line`, so no name forges a line.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from typing import Dict, Hashable, Mapping, Sequence, TypeVar

__all__ = ["file_name", "one_line", "shell_comment", "shell_line", "unique_file_names"]

K = TypeVar("K", bound=Hashable)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_STEM = 80
# names Windows refuses whatever the extension (a CI artefact may be unpacked there)
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def file_name(text: str, *, fallback: str = "unnamed") -> str:
    """One safe path component for ``text``: ASCII letters, digits, ``.``, ``_`` and ``-``,
    not starting with ``.`` or ``-``, at most ``MAX_STEM`` characters. Unchanged when ``text``
    already is one; otherwise a short hash of ``text`` is appended, so ``a b`` and ``a_b`` (or
    ``a b`` and ``a\\tb``) never share a name."""
    text = str(text)
    safe = _UNSAFE.sub("_", text).lstrip(".-_")[:MAX_STEM].rstrip(".")
    if safe and safe == text and safe.split(".")[0].lower() not in _RESERVED:
        return safe
    return f"{safe or fallback}-{_digest(text)}"


def unique_file_names(texts: Mapping[K, str], *, fallback: str = "unnamed") -> Dict[K, str]:
    """key -> :func:`file_name` of its text, no two equal ignoring case (macOS and Windows
    file systems): a name taken already gets the hash of its key's text, then a counter."""
    taken: set = set()
    names: Dict[K, str] = {}
    for key, text in texts.items():
        name = file_name(text, fallback=fallback)
        if name.lower() in taken:
            name = f"{name}-{_digest(repr(key))}"
        n = 2
        base = name
        while name.lower() in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name.lower())
        names[key] = name
    return names


def shell_line(args: Sequence[str]) -> str:
    """A POSIX shell command line running ``args`` as they are: every argument quoted."""
    for a in args:
        if "\x00" in str(a):
            raise ValueError(f"a shell argument cannot hold a NUL byte: {str(a)!r}")
    return " ".join(shlex.quote(str(a)) for a in args)


def one_line(text: str) -> str:
    """``text`` as one terminal line: a newline, carriage return, escape sequence (``\\x1b``),
    bidirectional override or other non-printable character is written as its Python escape,
    so a name cannot end a line early, forge the next one or recolour the terminal."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shell_comment(text: str) -> str:
    """``# text`` on one line: a newline, carriage return or other control character in
    ``text`` is written as its escape, so the comment cannot end early and run the rest."""
    return f"# {one_line(text)}"
