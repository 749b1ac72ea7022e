"""A pydantic validation error of a suite file (or a team file) in the suite's words: one
``ConfigError`` line naming the file, the key path, the line and the problem, with a "did you
mean" hint from the keys of that place."""

from __future__ import annotations

import difflib
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, get_args

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .schema import SuiteFile
from .yamlio import KeyPath, Positions, conceal, format_path, interpolated_values, locate, shown

__all__ = ["pydantic_error"]

_ALL_KEYS: Optional[List[str]] = None


def _known_keys() -> List[str]:
    """Every key the schema knows (for "did you mean" hints), read off the schema itself."""
    global _ALL_KEYS
    if _ALL_KEYS is None:
        keys: Set[str] = {"include"}
        for model in _models_in(SuiteFile):
            keys.update(model.model_fields)
        _ALL_KEYS = sorted(keys)
    return _ALL_KEYS


def _models_in(root: Any) -> List[Any]:
    """The pydantic models a value of type ``root`` can hold, ``root`` included (through
    Optional, List, Dict, Annotated and unions)."""
    found: List[Any] = []
    stack = [root]
    while stack:
        t = stack.pop()
        if isinstance(t, type) and issubclass(t, BaseModel):
            if t not in found:
                found.append(t)
                stack.extend(f.annotation for f in t.model_fields.values())
        else:
            stack.extend(get_args(t))
    return found


def _data_path(data: Any, loc: Tuple[Any, ...]) -> KeyPath:
    """Map a pydantic error location onto the data's key path (dropping union tags)."""
    out: List[Any] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
    return tuple(out)


def pydantic_error(exc: ValidationError, data: Any, positions: Positions, path: Any) -> ConfigError:
    errors = exc.errors(include_url=False)
    # the most telling problem first: a misspelt key also shows up as a missing one
    order = {"extra_forbidden": 0, "union_tag_invalid": 1, "union_tag_not_found": 2, "missing": 9}
    # then the one reaching deepest into the data: of a union's branches, the one the value's
    # shape matched ({title: -1} is a bad boost, not "not a list")
    errors.sort(
        key=lambda e: (order.get(e.get("type", ""), 5), -len(_data_path(data, tuple(e.get("loc", ())))))
    )
    key, msg = _problem(errors[0], data)
    more = f" (+{len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    file, line = locate(positions, key)
    msg = conceal(msg, interpolated_values(data))
    return ConfigError(msg + more, file=file or str(path), key=format_path(key) or None, line=line)


_TOTAL_DROP = ("regression", "reference", "max_total_drop")


def _problem(err: Any, data: Any) -> Tuple[KeyPath, str]:
    """(where, what) of one pydantic error, in the suite's words."""
    key = _data_path(data, tuple(err.get("loc", ())))
    described = _BY_TYPE.get(err.get("type", ""))
    if described is not None:
        return described(err, data, key)
    if (
        key[:1] in (("floors",), ("stability",))
        or key[:2] == ("regression", "max_drop")
        or key[:3] == _TOTAL_DROP
    ):
        return key, _not_a_gate_number(err.get("input"))
    if "input" in err and not isinstance(err.get("input"), (dict, list)):
        return key, f"{err['msg']} (got {shown(err.get('input'))})"
    return key, err["msg"]


def _unknown_key(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    loc = tuple(err.get("loc", ())) or ("?",)
    bad = str(loc[-1])
    here = _keys_at(loc[:-1])
    # the suggestion comes from the keys of this place, never the bad key itself (``query_id``
    # is a key elsewhere, not of an inline query: suggesting it back said nothing)
    close = difflib.get_close_matches(bad, [k for k in (here or _known_keys()) if k != bad], n=1)
    if close:
        return key, f"unknown key {bad!r} (did you mean {close[0]!r}?)"
    if here and len(here) <= 8:
        return key, f"unknown key {bad!r} (keys here: {', '.join(sorted(here))})"
    return key, f"unknown key {bad!r}"


def _direct_models(t: Any) -> List[Any]:
    """The pydantic models a value of type ``t`` is (through Optional, List, Dict, unions)."""
    if isinstance(t, type) and issubclass(t, BaseModel):
        return [t]
    return [m for arg in get_args(t) for m in _direct_models(arg)]


def _keys_at(loc: Tuple[Any, ...]) -> List[str]:
    """The keys of the model(s) at a pydantic error location (list indexes and union tags are
    steps that name no field); empty when the place cannot be told."""
    types: List[Any] = [SuiteFile]
    for part in loc:
        if not isinstance(part, str):
            continue
        fields = [
            m.model_fields[part].annotation
            for t in types
            for m in _direct_models(t)
            if part in m.model_fields
        ]
        types = fields or types
    return sorted({k for t in types for m in _direct_models(t) for k in m.model_fields})


def _missing_key(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    return key, f"missing required key {err['loc'][-1]!r}"


def _unknown_type(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    ctx = err.get("ctx", {})
    node = _get(data, key)
    key = key + ("type",) if isinstance(node, dict) and "type" in node else key
    return key, f"unknown type {ctx.get('tag')!r} (expected one of: {ctx.get('expected_tags')})"


def _missing_type(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    return key, "missing 'type' (which kind of retriever/embedder is this?)"


def _not_allowed(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    return (
        key,
        f"{shown(err.get('input'))} is not allowed: {err['msg'].replace('Input should be ', 'expected ')}",
    )


def _value_error(err: Any, data: Any, key: KeyPath) -> Tuple[KeyPath, str]:
    """A validator's own sentence, without pydantic's "Value error, " prefix."""
    return key, str(err["msg"]).removeprefix("Value error, ")


# pydantic error type -> the suite's words for it
_BY_TYPE: Dict[str, Callable[[Any, Any, KeyPath], Tuple[KeyPath, str]]] = {
    "value_error": _value_error,
    "extra_forbidden": _unknown_key,
    "missing": _missing_key,
    "union_tag_invalid": _unknown_type,
    "union_tag_not_found": _missing_type,
    "literal_error": _not_allowed,
}


def _not_a_gate_number(value: Any) -> str:
    return f"a gate number is a finite number written as a number, got {shown(value)}" + (
        " (YAML reads yes/no/on/off/true/false as booleans)" if isinstance(value, bool) else ""
    )


def _get(data: Any, key: KeyPath) -> Any:
    for k in key:
        data = data[k]
    return data
