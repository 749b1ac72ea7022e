"""The shape checks of a tool's JSON: an object where one is expected, a list of objects, a
key that must be there. A wrong shape is one line naming the file and the key path
(``judgmentRatings[2].ratings``), never a ``KeyError`` or ``AttributeError``. Pure."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple, Union

from ..io.numeric import value_text
from .model import Builder

__all__ = ["items", "need", "obj"]

_MISSING = object()
_NAMES: Dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _kind(types: Union[type, Tuple[type, ...]]) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(_NAMES.get(t, t.__name__) for t in types)


def obj(b: Builder, value: Any, where: str) -> Dict[str, Any]:
    """``value``, which must be a JSON object."""
    if not isinstance(value, dict):
        raise b.error(f"expected an object, got {value_text(value)}", where)
    return value


def need(
    b: Builder,
    d: Dict[str, Any],
    key: str,
    where: str,
    types: Union[type, Tuple[type, ...], None] = None,
    default: Any = _MISSING,
) -> Any:
    """``d[key]`` (of ``types`` when given); missing: ``default``, or an error without one."""
    path = f"{where}.{key}" if where and where != "the file" else key
    if key not in d or (d[key] is None and default is not _MISSING):
        if default is _MISSING:
            raise b.error(f"missing key {key!r}", where if where != "the file" else None)
        return default
    value = d[key]
    if types is not None and not isinstance(value, types):
        raise b.error(f"expected {_kind(types)}, got {value_text(value)}", path)
    return value


def items(b: Builder, d: Dict[str, Any], key: str, where: str = "") -> Iterator[Tuple[int, Dict[str, Any]]]:
    """(index, object) of the list ``d[key]``; every element must be an object."""
    path = f"{where}.{key}" if where else key
    for i, value in enumerate(need(b, d, key, where or "the file", list)):
        yield i, obj(b, value, f"{path}[{i}]")
