"""Paths relative to pytest's rootdir (issue #26): a PR comment, the HTML report, the JSON report,
the terminal summary and a failed gate's message name ``example_suite/retrieval_x.yaml:12``, not
the CI runner's checkout folder, and read the same on every machine (as pytest's node ids)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

__all__ = ["relative_in_place", "relative_json", "relative_text", "relative_to_root"]


def relative_to_root(doc: Any, root: Path) -> Any:
    """``doc`` with every ``<root>/`` at the start of a path in its strings removed (values only,
    not keys). A root of ``/`` (or a drive) is left alone: every absolute path would lose its
    leading slash."""
    pattern = _root_pattern(root)
    return doc if pattern is None else _walk(doc, pattern)


def relative_in_place(doc: Any, root: Path) -> Any:
    """:func:`relative_to_root` of a document just decoded from JSON (dicts, lists, strings,
    numbers), changed in place and returned: one walk without a copy, and the pattern only run
    on the strings holding the root (a report of 10,000 queries has hundreds of thousands)."""
    pattern = _root_pattern(root)
    if pattern is None or type(doc) not in (dict, list):
        return doc if pattern is None else _walk(doc, pattern)
    prefix, sub = _prefix(Path(root)), pattern.sub
    stack = [doc]
    while stack:
        node = stack.pop()
        pairs = node.items() if type(node) is dict else enumerate(node)
        for k, v in pairs:
            t = type(v)
            if t is str:
                if prefix in v:
                    node[k] = sub("", v)
            elif t is dict or t is list:
                stack.append(v)
    return doc


def relative_json(text: str, root: Path) -> Optional[str]:
    """The JSON text ``text`` (``json.dumps`` with ``ensure_ascii``) with the root removed as
    :func:`relative_to_root` removes it from the decoded document: one pass of the pattern over
    the text, no walk. None when the text cannot be sure to give the same (the root in a key,
    after an escaped character such as ``\\n``, or a root JSON writes escaped): then walk."""
    pattern = _root_pattern(root)
    if pattern is None:
        return text
    prefix = _prefix(Path(root))
    if not prefix.startswith("/") or json.dumps(prefix)[1:-1] != prefix:
        return None  # only an absolute POSIX root that JSON writes as it is is inside strings only
    at = text.find(prefix)
    while at >= 0:  # every occurrence: after an escape (\n, \u00e9) the pattern reads another character
        if text[at - 1].isalnum() and "\\" in text[max(0, at - 6) : at]:
            return None
        at = text.find(prefix, at + 1)
    for m in pattern.finditer(text):
        end = _STRING_END.match(text, m.end())
        if end is None or end.group(1):  # a key: relative_to_root leaves keys alone
            return None
    return pattern.sub("", text)


#: the rest of a JSON string from inside it, and the colon that makes it a key
_STRING_END = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?')


def relative_text(text: str, root: Optional[Path]) -> str:
    """``text`` (a message, a summary line) with ``<root>/`` removed where a path starts."""
    pattern = _root_pattern(root) if root is not None else None
    return text if pattern is None else pattern.sub("", text)


def _root_pattern(root: Path) -> Optional[re.Pattern]:
    root = Path(root)
    if root.parent == root:
        return None
    prefix = _prefix(root)
    # at the start of the text or after a character that cannot be inside a path
    return re.compile(r"(?<![\w.~/\\-])" + re.escape(prefix))


def _prefix(root: Path) -> str:
    return str(root).rstrip("/\\") + ("\\" if "\\" in str(root) else "/")


def _walk(value: Any, pattern: re.Pattern) -> Any:
    if isinstance(value, str):
        return pattern.sub("", value)
    if isinstance(value, dict):
        return {k: _walk(v, pattern) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, pattern) for v in value]
    return value
