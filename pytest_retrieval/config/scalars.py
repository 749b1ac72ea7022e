"""How the suite types the plain (unquoted) YAML scalars where it expects an id or a grade,
instead of YAML's own resolver.

YAML 1.1 (PyYAML) reads ``0123`` as the octal 83, ``1_0`` as 10, ``0x1F`` as 31, ``1:30`` as 90,
``yes`` as true and ``2024-01-01`` as a date; YAML 1.2 reads ``1e3`` as 1000 where PyYAML keeps
the text. An id is text, so:

* a plain decimal (``0``, ``1``, ``42``) is the id as written, the string ``"42"`` (trec qrels
  and BEIR ids are often numbers; they read the same in every YAML version);
* any other plain scalar that some YAML version reads as a number, a boolean or a date
  (leading zero, underscore, exponent, sign, decimal point, hex, octal, sexagesimal, ``yes``)
  is refused: quote it;
* ``null`` / ``~`` stay null (an override file unsets a key with them).

A grade is a decimal integer: plain ``2`` / ``-1`` (and ``2.0``) as written; ``010``, ``1_0``,
``0x1F``, ``1:30``, ``yes`` are refused instead of being read as 8, 10, 31, 90, 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Tuple

__all__ = ["ANY", "ScalarRules", "typed_scalar"]

ANY = "*"  # in a key path pattern: any list index or mapping key

_TAG = "tag:yaml.org,2002:"
_DECIMAL_ID = re.compile(r"0|[1-9][0-9]*")
_DECIMAL_GRADE = re.compile(r"[+-]?(0|[1-9][0-9]*)(\.0*)?")
# what YAML 1.1 or 1.2 reads as a number (ints, floats, exponents, hex, octal, sexagesimal, inf, nan)
_NUMBER_LIKE = re.compile(
    r"[-+]?(\.[0-9_]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?"
    r"|[-+]?0[xob][0-9a-fA-F_]+|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?"
    r"|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)


@dataclass(frozen=True)
class ScalarRules:
    """Key path patterns (``ANY`` for any index or key) of the values, and of the mappings whose
    keys, that are ids or grades."""

    ids: Tuple[Tuple[Any, ...], ...] = ()
    id_keys: Tuple[Tuple[Any, ...], ...] = ()  # mappings whose keys are ids
    grades: Tuple[Tuple[Any, ...], ...] = ()
    grade_keys: Tuple[Tuple[Any, ...], ...] = ()

    def value_kind(self, key: Tuple[Any, ...]) -> Optional[str]:
        return _kind(key, self.ids, self.grades)

    def key_kind(self, mapping: Tuple[Any, ...]) -> Optional[str]:
        return _kind(mapping, self.id_keys, self.grade_keys)


def _kind(key: Tuple[Any, ...], ids: Tuple[Tuple[Any, ...], ...], grades: Tuple[Tuple[Any, ...], ...]):
    if any(_matches(key, p) for p in ids):
        return "id"
    if any(_matches(key, p) for p in grades):
        return "grade"
    return None


def _matches(key: Tuple[Any, ...], pattern: Tuple[Any, ...]) -> bool:
    return len(key) == len(pattern) and all(p == ANY or p == k for k, p in zip(key, pattern))


def typed_scalar(kind: str, text: str, tag: str, value: Any) -> Any:
    """The value of a plain scalar (source ``text``, YAML ``tag``, YAML's ``value``) where the
    suite expects an id or a grade; ``ValueError`` (one line) for an ambiguous one."""
    if tag == _TAG + "null":
        return None
    if kind == "id":
        return _id(text, tag, value)
    return _grade(text, tag, value)


def _reading(tag: str, value: Any) -> str:
    """How YAML reads a plain scalar, in words."""
    if tag in (_TAG + "int", _TAG + "float"):
        return f"YAML reads it as the number {value!r}"
    if tag == _TAG + "bool":
        return f"YAML reads it as the boolean {str(value).lower()}"
    if tag == _TAG + "timestamp":
        return "YAML reads it as a date"
    return "YAML 1.2 reads it as a number"


def _id(text: str, tag: str, value: Any) -> Any:
    if _DECIMAL_ID.fullmatch(text):
        return text
    if tag != _TAG + "str" or _NUMBER_LIKE.fullmatch(text):
        raise ValueError(
            f"unquoted id {text} is ambiguous ({_reading(tag, value)}): ids are strings, quote it: '{text}'"
        )
    return value


def _grade(text: str, tag: str, value: Any) -> Any:
    if _DECIMAL_GRADE.fullmatch(text) or tag == _TAG + "str":
        return value  # a decimal as written; text is read by the grade rule (io.grades)
    raise ValueError(f"relevance grade {text} is ambiguous ({_reading(tag, value)}): write a decimal integer")
