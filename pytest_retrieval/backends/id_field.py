"""``backend.index.id_field``: the judgments' document id read from a field of each document
(a SKU, a URL) instead of the engine's ``_id``. One reading for every built-in backend that
holds documents: a search engine's hit (its ``fields`` entry, else its ``_source``) and the
embedded engine's corpus documents go through :meth:`IdField.of_hit` / :meth:`IdField.of_document`,
and every ranking through :func:`unique_ids`. A hit without the field, with a value that is not
one id (an object, a list of several values, an empty text) or two hits of one ranking with the
same id are a ``ConfigError`` naming the field, the hit and the query, never a ranking of
``_id``s scored against judgments of SKUs.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ..errors import ConfigError
from ..safe_names import one_line
from ..types import Document

__all__ = ["ID_FIELD_KEY", "IdField", "asking_for_id", "ranked_ids", "unique_ids"]

ID_FIELD_KEY = "backend.index.id_field"

_ID_TYPES = (str, int)  # a float or bool id would be read as another text ("1.0", "True")


class IdField:
    """The field the judgments' ids are read from (``name``, a dotted path for an object field)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"IdField({self.name!r})"

    def request(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``body`` asking every hit for the field: ``fields`` (read from doc values or the
        source, and the one way to a multi-field such as ``sku.keyword``) and ``_source``
        restricted to it (a template's own ``_source`` is for display, it changes no ranking)."""
        out = dict(body)
        fields = list(out.get("fields") or [])
        if self.name not in fields:
            fields.append(self.name)
        out["fields"] = fields
        out["_source"] = {"includes": [self.name]}
        return out

    def of_hit(self, hit: Mapping[str, Any], where: str) -> str:
        """The id of a search hit: ``fields[name]``, else the value at ``name`` in ``_source``."""
        found = hit.get("fields")
        value: Any = _MISSING
        if isinstance(found, Mapping) and self.name in found:
            value = found[self.name]
        if value is _MISSING:
            value = _at_path(hit.get("_source"), self.name)
        engine_id = hit.get("_id", "?")
        return self._checked(value, f"{where}: hit {one_line(str(engine_id))!r}")

    def of_document(self, doc: Document, where: str = "the corpus") -> str:
        """The id of a corpus document: its field ``name``."""
        value = doc.fields.get(self.name, _MISSING)
        return self._checked(value, f"{where}: document {one_line(str(doc.doc_id))!r}")

    def _checked(self, value: Any, what: str) -> str:
        if value is _MISSING or value is None:
            raise ConfigError(f"{what} has no field {self.name!r} to read its id from", key=ID_FIELD_KEY)
        if isinstance(value, list):
            if len(value) != 1:
                raise ConfigError(
                    f"{what} has {len(value)} values in {self.name!r} "
                    f"({_shown(value)}); an id field holds one value",
                    key=ID_FIELD_KEY,
                )
            value = value[0]
        if isinstance(value, bool) or not isinstance(value, _ID_TYPES):
            raise ConfigError(
                f"{what}: {self.name!r} is {type(value).__name__} {_shown(value)}, not a text or integer id",
                key=ID_FIELD_KEY,
            )
        text = str(value)
        if not text.strip():
            raise ConfigError(f"{what}: {self.name!r} is empty", key=ID_FIELD_KEY)
        return text


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _at_path(source: Any, path: str) -> Any:
    """The value at a dotted ``path`` of a ``_source`` (a literal key with dots first)."""
    if not isinstance(source, Mapping):
        return _MISSING
    if path in source:
        return source[path]
    head, dot, rest = path.partition(".")
    if not dot or head not in source:
        return _MISSING
    inner = source[head]
    if isinstance(inner, list) and len(inner) == 1:
        inner = inner[0]
    return _at_path(inner, rest)


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def asking_for_id(body: Dict[str, Any], field: Optional[IdField]) -> Dict[str, Any]:
    """``body`` asking for ``field`` (:meth:`IdField.request`), as it is without one."""
    return field.request(body) if field is not None else body


def ranked_ids(
    documents: Optional[Sequence[Document]], field: Optional[IdField], own: List[str]
) -> List[str]:
    """What rankings name corpus documents by: ``own`` (their ids) without ``field``, else
    each document's ``field`` value (every document has one, no two the same)."""
    if field is None:
        return own
    if documents is None:
        raise ConfigError(
            f"id field {field.name!r} needs the corpus (its documents' fields)", key=ID_FIELD_KEY
        )
    ids = [field.of_document(d) for d in documents]
    unique_ids(ids, field, "the corpus")
    return ids


def unique_ids(ids: Iterable[str], field: Optional[IdField], where: str) -> None:
    """Two hits of one ranking with the same id (read from ``field``) are a ConfigError: the
    index holds two documents with one judgment id, and a ranking of them cannot be scored."""
    seen: Dict[str, int] = {}
    for rank, doc_id in enumerate(ids, 1):
        if doc_id in seen:
            name = f"id field {field.name!r}" if field is not None else "id"
            raise ConfigError(
                f"{where}: hits {seen[doc_id]} and {rank} share the {name} value {one_line(doc_id)!r} "
                "(two documents of the index hold one judgment id)",
                key=ID_FIELD_KEY if field is not None else None,
            )
        seen[doc_id] = rank
