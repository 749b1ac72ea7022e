"""Ids: every id is a ``str``; ids of two files that match only after normalising are re-keyed
with a warning."""

from __future__ import annotations

import warnings
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple, TypeVar

V = TypeVar("V")


class IdNormalisationWarning(UserWarning):
    """Ids of two files matched only after normalising (e.g. ``7`` vs ``007``)."""


def as_id(value: object) -> str:
    """Ids are strings: ``1`` (an integer in JSON, a plain decimal in YAML) and ``"1"`` are the
    same id; a float (JSON ``1e3``, ``1.0``) is refused, its text being lost."""
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{value!r} is not a valid id")
    if isinstance(value, float):  # JSON 1e3, 1.0, 1.10: the text written is gone
        raise ValueError(f"{value!r} is a number with a fraction or an exponent: write the id as a string")
    text = str(value).strip()
    if not text:
        raise ValueError("empty id")
    return text


def internal_query_id(kind: str, n: int) -> str:
    """The id of a query the plugin makes up (a golden query's text, a fixture's free text):
    ``" expect:0"``. It starts with a space, and ``as_id`` strips every id read from a file or
    a suite, so it is never the id of a judged query (whose ranking, grades or precomputed
    vector it would otherwise take)."""
    return f" {kind}:{n}"


def _canonical(i: str) -> str:
    """A looser key used only to detect near-misses: ``007`` ~ ``7``, ``Q1`` ~ ``q1``."""
    s = i.strip().lower()
    if s.isdigit():
        return str(int(s))
    return s


def _rekeyed(ref: Set[str], other: Mapping[str, V]) -> Tuple[Dict[str, V], List[Tuple[str, str]]]:
    """``other`` with each id absent from ``ref`` moved to the ``ref`` id it matches loosely
    (unless ``other`` has that id too), and the (id, matched id) pairs moved."""
    loose: Dict[str, str] = {}
    for r in ref:
        loose.setdefault(_canonical(r), r)
    out: Dict[str, V] = {}
    remapped: List[Tuple[str, str]] = []
    for k, v in other.items():
        target = None if k in ref else loose.get(_canonical(k))
        if target is not None and target not in other:
            out[target] = v
            remapped.append((k, target))
        else:
            out[k] = v
    return out, remapped


def reconcile_ids(
    reference: Iterable[str],
    other: Mapping[str, V],
    *,
    reference_name: str,
    other_name: str,
    remapped_out: Optional[List[Tuple[str, str]]] = None,
) -> Dict[str, V]:
    """Re-key ``other`` onto ``reference`` ids; warn for ids that only match loosely (and
    append the (id, matched id) pairs to ``remapped_out`` when given)."""
    ref = set(reference)
    missing = [k for k in other if k not in ref]
    if not missing:
        return dict(other)
    out, remapped = _rekeyed(ref, other)
    if remapped_out is not None:
        remapped_out.extend(remapped)
    if remapped:
        examples = ", ".join(f"{a!r}->{b!r}" for a, b in remapped[:3])
        warnings.warn(
            IdNormalisationWarning(
                f"{len(remapped)} id(s) of {other_name} match {reference_name} only after "
                f"normalising ({examples}); fix the files so ids are identical strings"
            ),
            stacklevel=1,
        )
    return out
