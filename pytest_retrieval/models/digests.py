"""Digests that name a model's output in caches and baseline fingerprints: of model files,
of the source file of a Python callable, and of the options that change the output."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional


def file_digest(*paths: Optional[Path]) -> str:
    """sha256 over the contents of the given files (None entries are skipped)."""
    digest = hashlib.sha256()
    for path in paths:
        if path is None:
            continue
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def options_tag(**options: Any) -> str:
    """A short, stable tag for options that change the output (omitted when default)."""
    parts = [f"{k}={v}" for k, v in sorted(options.items()) if v not in (None, "", False)]
    if not parts:
        return ""
    return ":" + hashlib.sha256(";".join(parts).encode()).hexdigest()[:10]


def source_digest(fn: Callable[..., Any]) -> str:
    """A short digest of the file defining ``fn`` ("" when there is none)."""
    module = sys.modules.get(getattr(fn, "__module__", "") or "")
    source = getattr(module, "__file__", None)
    if source and os.path.isfile(source):
        return file_digest(Path(source))[:10]
    return ""
