"""Paths in the report document relative to pytest's rootdir (issue #26): a PR comment, the HTML
report and the JSON report name ``example_suite/retrieval_x.yaml:12``, not the CI runner's
checkout folder, and read the same on every machine."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["relative_to_root"]


def relative_to_root(doc: Any, root: Path) -> Any:
    """``doc`` with every ``<root>/`` at the start of a path in its strings removed (values only,
    not keys). A root of ``/`` (or a drive) is left alone: every absolute path would lose its
    leading slash."""
    root = Path(root)
    if root.parent == root:
        return doc
    prefix = str(root).rstrip("/\\") + ("\\" if "\\" in str(root) else "/")
    # at the start of the text or after a character that cannot be inside a path
    pattern = re.compile(r"(?<![\w.~/\\-])" + re.escape(prefix))
    return _walk(doc, pattern)


def _walk(value: Any, pattern: re.Pattern) -> Any:
    if isinstance(value, str):
        return pattern.sub("", value)
    if isinstance(value, dict):
        return {k: _walk(v, pattern) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, pattern) for v in value]
    return value
