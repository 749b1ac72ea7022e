"""The power note of a suite: the smallest drop of its headline metric the suite's queries
can detect, shared by the terminal summary and the JSON report (``power``)."""

from __future__ import annotations

from typing import Any

__all__ = ["power_line"]


def power_line(result: Any) -> str:
    """The smallest drop of the headline metric the suite can detect (95%, power 0.8)."""
    from ..stats.power import estimate_sd_diff, minimum_detectable_drop

    metric = "ndcg@10" if "ndcg@10" in result.suite.metrics else result.suite.metrics[0]
    first = next(iter(result.retrievers.values()), None)
    if first is None or len(first.evaluation.evaluated) < 2:
        return ""
    values = first.evaluation.per_query[metric]
    reg = result.suite.model.regression
    confidence = reg.confidence if reg is not None else 0.95
    sd = estimate_sd_diff(values)
    if not sd > 0:
        return (
            f"  power: {first.name}'s {metric} has no per-query spread over {len(values)} "
            f"queries; the detectable drop cannot be estimated (add varied queries)"
        )
    mdd = minimum_detectable_drop(sd, len(values), confidence=confidence, power=0.8)
    caveat = " (a normal approximation: optimistic below 30 queries)" if len(values) < 30 else ""
    return (
        f"  power: with {len(values)} queries a {metric} drop of {mdd:.4f} is detected with "
        f"80% power at {confidence:.0%} confidence (estimated from {first.name}'s per-query "
        f"spread; more queries detect smaller drops){caveat}"
    )
