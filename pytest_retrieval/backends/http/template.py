"""The request template of the ``http`` backend, filled per query (pure, no I/O).

Placeholders are ``{name}``, a name of letters, digits and ``_``: ``{query}`` (the query text),
``{k}`` (hits asked for), ``{query_id}``, and the ``params`` of the ``service`` retriever.

* In the URL every value is percent-encoded (RFC 3986: nothing left unescaped, so a query
  holding ``&``, ``#`` or ``/`` stays one parameter value).
* In the JSON body a string that is exactly one placeholder (``"{k}"``) becomes the value
  itself as JSON (the number 10, the text, a param's number or boolean); placeholders inside a
  longer string are replaced by the value's text. Keys are left as written.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Mapping, Set
from urllib.parse import quote

__all__ = [
    "BUILT_IN_PLACEHOLDERS",
    "PLACEHOLDER",
    "fill_body",
    "fill_url",
    "placeholders_in",
    "whole_placeholders",
]

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
BUILT_IN_PLACEHOLDERS = ("query", "k", "query_id")


def placeholders_in(template: Any) -> Set[str]:
    """Every placeholder name in a URL or body template (strings inside lists and maps)."""
    out: Set[str] = set()
    for text in _strings(template):
        out.update(PLACEHOLDER.findall(text))
    return out


def whole_placeholders(template: Any, name: str) -> int:
    """How many strings of a body template are exactly ``{name}`` (a value that becomes JSON);
    -1 when ``{name}`` also stands inside a longer string (it would become text)."""
    whole = inside = 0
    for text in _strings(template):
        if text == "{" + name + "}":
            whole += 1
        elif name in PLACEHOLDER.findall(text):
            inside += 1
    return -1 if inside else whole


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _strings(value)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fill_url(template: str, values: Mapping[str, Any]) -> str:
    """The URL with each placeholder replaced by its percent-encoded value."""
    return PLACEHOLDER.sub(lambda m: quote(_text(values[m.group(1)]), safe=""), template)


def fill_body(template: Any, values: Mapping[str, Any]) -> Any:
    """The JSON body with placeholders substituted as JSON values (see the module's text)."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole is not None:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: _text(values[m.group(1)]), template)
    if isinstance(template, Mapping):
        return {key: fill_body(value, values) for key, value in template.items()}
    if isinstance(template, (list, tuple)):
        return [fill_body(value, values) for value in template]
    return template


def values_of(query_text: str, k: int, query_id: str, params: Mapping[str, Any]) -> Dict[str, Any]:
    """The placeholders' values of one request."""
    return {**params, "query": query_text, "k": int(k), "query_id": query_id}
