"""The request template of the ``http`` backend, filled per query (pure, no I/O).

Placeholders are ``{name}``, a name of letters, digits and ``_``: ``{query}`` (the query text),
``{k}`` (hits asked for), ``{query_id}``, and the ``params`` of the ``service`` retriever.

* In the URL every value is percent-encoded (RFC 3986: nothing left unescaped, so a query
  holding ``&``, ``#`` or ``/`` stays one parameter value); in the path its dots too
  (``%2E``), so a value ``..`` or ``.`` is never a dot-segment that clients and servers remove
  with the segment before it (RFC 3986 section 5.2.4: ``/s/{query}/hits`` stays under
  ``/s/``). Placeholders stand in the path and the query string only, never in the scheme or
  the host (:func:`misplaced_placeholder`).
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
    "misplaced_placeholder",
    "placeholders_in",
    "unfilled",
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


def _path_start(template: str) -> int:
    """Where the path of a URL template starts (after ``scheme://host:port``)."""
    rest = template.find("://")
    start = rest + 3 if rest >= 0 else 0
    ends = [i for i in (template.find(c, start) for c in "/?#") if i >= 0]
    return min(ends) if ends else len(template)


def misplaced_placeholder(template: str) -> str:
    """A placeholder in the scheme or host of a URL template ('' when there is none): query
    text must never choose where a request goes."""
    found = PLACEHOLDER.search(template[: _path_start(template)])
    return found.group(0) if found else ""


def unfilled(template: Any, values: Mapping[str, Any]) -> Set[str]:
    """The placeholders of a URL or body template that ``values`` has no value for."""
    return placeholders_in(template) - set(values)


def fill_url(template: str, values: Mapping[str, Any]) -> str:
    """The URL with each placeholder replaced by its percent-encoded value (dots too in the
    path). KeyError for a placeholder without a value (:func:`unfilled` tells first)."""
    start = _path_start(template)
    query = template.find("?", start)
    query = len(template) if query < 0 else query

    def fill(m: re.Match[str]) -> str:
        encoded = quote(_text(values[m.group(1)]), safe="")
        return encoded.replace(".", "%2E") if m.start() < query else encoded

    return PLACEHOLDER.sub(fill, template)


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
