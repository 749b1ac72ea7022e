"""A baseline file is checked before it is trusted (issue #28): the checksums written with its
values, every per-query value in its metric's range, the per-query coverage its fingerprint
and counts claim, and aggregates that are the means of their per-query values. A hand-edited
or truncated baseline is one ``ConfigError`` line naming what does not add up. Pure, no I/O.

``checksums`` (written by ``--retrieval-baseline-update``): the sha256 of the canonical JSON
(:func:`.fingerprint.sha256_json`) of the fingerprint and of each retriever's entry, as written.
A baseline written before checksums (a pytest-retrieval 0.1 development version) is accepted
with a note; one written by a version that always writes them (its fingerprint has
``query_hashes``, written since the same change, or its ``plugin_version`` is later than 0.1.0)
and missing them is refused: the checksums were lost (a bad merge, a hand edit), not never there.
A retriever the fingerprint names but whose values are missing is refused too: the baseline was
written with it (a retriever added since is not in the fingerprint).

What the checksums protect against: accidents (a hand edit, a truncated file, a bad merge that
kept one side's values and the other's fingerprint). Not a deliberate forgery: anyone who can
edit the file can recompute the checksums (sha256 of canonical JSON, no secret key); review of
the baseline's diff in the pull request is that protection.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..errors import ConfigError
from .fingerprint import sha256_json

__all__ = ["checksums", "verify_baseline", "NO_CHECKSUMS"]

#: the note of a baseline written before checksums
NO_CHECKSUMS = (
    "the baseline has no checksums (written by an older pytest-retrieval): accepted unchecked; "
    "re-create it with --retrieval-baseline-update to have its values checked"
)

#: how far an aggregate may be from the mean of its per-query values (summation order)
_MEAN_TOLERANCE = 1e-9

Err = Callable[..., ConfigError]


def checksums(data: Mapping[str, Any]) -> Dict[str, Any]:
    """``{"fingerprint": sha256, "retrievers": {name: sha256}}`` of a baseline's JSON data
    (NaN already written as null)."""
    return {
        "fingerprint": sha256_json(data.get("fingerprint")),
        "retrievers": {str(n): sha256_json(e) for n, e in sorted((data.get("retrievers") or {}).items())},
    }


def verify_baseline(data: Mapping[str, Any], retrievers: Mapping[str, Dict[str, Any]], err: Err) -> List[str]:
    """Check a parsed baseline (``data`` as read, ``retrievers`` as checked); raise ``err(...)``
    for what does not add up; return the notes of an older file."""
    notes = _verify_checksums(data, err)
    _verify_fingerprint_retrievers(data, err)
    hashes = (data.get("fingerprint") or {}).get("query_hashes")
    if hashes is not None and not _is_query_hashes(hashes):
        raise err("expected an object {query id: hash}", key="fingerprint.query_hashes")
    for name, entry in retrievers.items():
        _verify_retriever(f"retrievers.{name}", entry, hashes, err)
    return notes


def _verify_fingerprint_retrievers(data: Mapping[str, Any], err: Err) -> None:
    """Every retriever the fingerprint names has its values (it was written with them)."""
    named = (data.get("fingerprint") or {}).get("retrievers")
    values = data.get("retrievers") or {}
    if not isinstance(named, dict):
        return  # an older fingerprint, without the retrievers' configurations
    missing = sorted(str(n) for n in named if n not in values)
    if missing:
        raise err(
            f"the fingerprint names {missing[0]!r} but the baseline has no values for it (removed by "
            "hand, or a bad merge?); re-create the baseline with --retrieval-baseline-update",
            key=f"retrievers.{missing[0]}",
        )


def _always_has_checksums(data: Mapping[str, Any]) -> bool:
    """Written by a version that always writes checksums: its fingerprint has ``query_hashes``
    (written since the same change) or its version is later than 0.1.0."""
    if (data.get("fingerprint") or {}).get("query_hashes") is not None:
        return True
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", str(data.get("plugin_version", "")))
    return match is not None and tuple(int(g) for g in match.groups()) > (0, 1, 0)


def _verify_checksums(data: Mapping[str, Any], err: Err) -> List[str]:
    written = data.get("checksums")
    if written is None and _always_has_checksums(data):
        raise err(
            f"no checksums, though pytest-retrieval {data.get('plugin_version')} always writes them "
            "(removed by hand, or a bad merge?); re-create the baseline with --retrieval-baseline-update",
            key="checksums",
        )
    if written is None:
        return [NO_CHECKSUMS]
    if not _is_checksums(written):
        raise err('expected {"fingerprint": sha256, "retrievers": {name: sha256}}', key="checksums")
    now = checksums(data)
    if written["fingerprint"] != now["fingerprint"]:
        raise err(_EDITED, key="fingerprint")
    for name in sorted(set(written["retrievers"]) | set(now["retrievers"])):
        key = f"retrievers.{name}"
        if name not in now["retrievers"]:
            raise err("missing, though its checksum was written (removed by hand, or a bad merge?)", key=key)
        if name not in written["retrievers"]:
            raise err("has no checksum (added by hand, or a bad merge?)", key=key)
        if written["retrievers"][name] != now["retrievers"][name]:
            raise err(_EDITED, key=key)
    return []


_EDITED = (
    "its values do not match the checksum written with them (hand-edited, truncated or a bad merge?); "
    "re-create the baseline with --retrieval-baseline-update"
)


def _is_checksums(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("fingerprint"), str)
        and isinstance(value.get("retrievers"), dict)
        and all(isinstance(v, str) for v in value["retrievers"].values())
    )


def _is_query_hashes(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) and ":" in v for v in value.values())


def _verify_retriever(
    base: str, entry: Mapping[str, Any], hashes: Optional[Mapping[str, str]], err: Err
) -> None:
    """Ranges, coverage and means of one retriever's metrics."""
    count = entry.get("queries")
    for metric, column in entry["per_query"].items():
        key = f"{base}.per_query.{metric}"
        _verify_range(key, metric, column, err)
        if isinstance(count, int) and not isinstance(count, bool) and len(column) != count:
            raise err(
                f"{len(column)} queries, the retriever's count says {count} (truncated or hand-edited?)",
                key=key,
            )
        if hashes is not None:
            stray = next((q for q in column if q not in hashes), None)
            if stray is not None:
                raise err(f"query {stray!r} is not among the fingerprint's {len(hashes)} queries", key=key)
        _verify_mean(f"{base}.aggregate.{metric}", entry["aggregate"].get(metric), column, err)


def _verify_range(key: str, metric: str, column: Mapping[str, float], err: Err) -> None:
    """Every value of a known metric within [0, 1] (every measure of measures/registry.py is a share)."""
    if not _is_share(metric):
        return
    for qid, v in column.items():
        if not 0.0 <= v <= 1.0:
            raise err(f"{v!r} is out of range for {metric} (0 to 1)", key=f"{key}.{qid}")


def _is_share(metric: str) -> bool:
    from ..measures.metrics import is_share, parse_metric

    try:
        parse_metric(metric)
    except ValueError:
        return False
    return is_share(metric)


def _verify_mean(key: str, aggregate: Optional[float], column: Mapping[str, float], err: Err) -> None:
    """An aggregate that is not the mean (or the metric's own aggregate: ``gm_map``'s geometric
    mean, a count's sum) of its per-query values: one of them was edited."""
    from ..measures.metrics import aggregate_of, parse_metric

    if aggregate is None or math.isnan(aggregate) or not column:
        return
    metric = key.rsplit(".aggregate.", 1)[-1]
    try:
        parse_metric(metric)
    except ValueError:  # not a measure of the registry: the arithmetic mean
        mean, what = math.fsum(column.values()) / len(column), "mean"
    else:
        mean, what = aggregate_of(metric, column.values()), "figure"
    if abs(mean - aggregate) > _MEAN_TOLERANCE * max(1.0, abs(mean)):
        raise err(
            f"{aggregate!r} is not the {what} of its {len(column)} per-query values ({mean!r}): one of them was edited?",
            key=key,
        )
