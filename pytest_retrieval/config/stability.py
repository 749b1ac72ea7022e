"""A suite's ``stability`` block (issue #33): one gate per (retriever, stability measure) against
the baseline's stored rankings, each measure refused in one line when it is unknown, its cut-off
out of range or its threshold outside what the measure can take."""

from __future__ import annotations

from typing import Any, Dict, List

from ..gates.stability import StabilityGate, parse_stability_measure
from .yamlio import locate

__all__ = ["parse_stability"]


def parse_stability(suite: Any) -> List[StabilityGate]:
    """The ``stability`` block -> typed gates, in the suite's order (every mistake a one-line
    ``ConfigError`` naming the key)."""
    out: List[StabilityGate] = []
    retrievers = suite.model.retrievers
    for r_name, per_measure in suite.model.stability.items():
        if r_name not in retrievers:
            raise suite.error(
                ("stability", r_name),
                f"unknown retriever {suite.shown(r_name)} (defined: {', '.join(retrievers)})",
            )
        if not per_measure:
            raise suite.error(("stability", r_name), "no stability measure listed (e.g. {rbo@10: 0.9})")
        seen: Dict[str, str] = {}
        for m, threshold in per_measure.items():
            key = ("stability", r_name, m)
            try:
                canon, op, k = parse_stability_measure(str(m))
            except ValueError as exc:
                raise suite.error(key, str(exc)) from None
            if canon in seen:
                raise suite.error(key, f"{m!r} and {seen[canon]!r} are the same measure: keep one")
            seen[canon] = str(m)
            _check_range(suite, key, canon, float(threshold))
            file, line = locate(suite.positions, key)
            origin = f"{file}:{line}" if file else ""
            out.append(StabilityGate(r_name, canon, op, float(threshold), k, origin))
    return out


def _check_range(suite: Any, key: Any, canon: str, threshold: float) -> None:
    """A threshold the measure can reach: within its bounds (a share or a similarity in [0, 1],
    Kendall's tau in [-1, 1], a rank change >= 0; measures/comparison_registry.py)."""
    from ..measures.metrics import parse_metric
    from ..measures.registry import BY_NAME

    low, high = BY_NAME[parse_metric(canon).name].bounds
    if not low <= threshold <= high:
        span = f"[{low:g}, {high:g}]" if high != float("inf") else f">= {low:g}"
        raise suite.error(key, f"{canon} lies in {span}; threshold {threshold:g} is outside it")
