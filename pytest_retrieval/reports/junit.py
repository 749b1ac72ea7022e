"""JUnit XML properties of a gate item (``record_property`` style ``user_properties``), so that
CI dashboards can chart a gate's value without parsing messages."""

from __future__ import annotations

from typing import Any, List, Tuple

__all__ = ["expectation_properties", "floor_properties", "regression_properties"]

Properties = List[Tuple[str, str]]


def floor_properties(outcome: Any) -> Properties:
    """A floor's ``gates.GateOutcome``: suite, retriever, metric, value, op and threshold."""
    floor = outcome.floor
    return [
        ("retrieval_suite", outcome.suite),
        ("retrieval_retriever", floor.retriever),
        ("retrieval_metric", floor.metric),
        ("retrieval_value", repr(outcome.value)),
        ("retrieval_op", floor.op),
        ("retrieval_threshold", repr(floor.threshold)),
        ("retrieval_origin", floor.origin),
    ] + _ownership(floor)


def _ownership(floor: Any) -> Properties:
    """A floor's team, owners and the stricter value a later file replaced, when it has them."""
    out: Properties = [("retrieval_team", floor.team)] if floor.team else []
    if floor.owners:
        out.append(("retrieval_owner", " ".join(floor.owners)))
    if floor.lowered:
        out.append(("retrieval_lowered_from", floor.lowered))
    return out


def regression_properties(outcome: Any, kind: str = "baseline") -> Properties:
    """A baseline (or reference) gate's ``gates.regression.RegressionOutcome``: the mean
    difference, its lower confidence bound and the allowed drop."""
    return [
        ("retrieval_suite", outcome.suite),
        ("retrieval_retriever", outcome.retriever),
        ("retrieval_metric", f"{kind}:{outcome.metric}"),
        ("retrieval_mean_diff", repr(outcome.overall.mean_diff)),
        ("retrieval_ci_low", repr(outcome.overall.ci_low)),
        ("retrieval_max_drop", repr(outcome.max_drop)),
    ] + _regression_ownership(outcome)


def _regression_ownership(outcome: Any) -> Properties:
    """A baseline gate's origin (file:line of its max_drop), team and owners, when it has them."""
    out: Properties = [("retrieval_origin", outcome.origin)] if getattr(outcome, "origin", "") else []
    if getattr(outcome, "team", ""):
        out.append(("retrieval_team", outcome.team))
    if getattr(outcome, "owners", ()):
        out.append(("retrieval_owner", " ".join(outcome.owners)))
    return out


def expectation_properties(expectation: Any, hits: Any, broken: List[str]) -> Properties:
    """A golden query's item: the query, what was expected, the top doc ids and what broke."""
    checks = expectation.checks
    wanted = []
    if checks.contains:
        wanted.append(f"contains {','.join(checks.contains)} in top {checks.k}")
    if checks.excludes:
        wanted.append(f"excludes {','.join(checks.excludes)} from top {checks.k}")
    if checks.first is not None:
        wanted.append(f"first {checks.first}")
    if checks.above:
        wanted.append(f"{checks.above[0]} above {checks.above[1]}")
    if checks.min_hits is not None:
        wanted.append(f"min_hits {checks.min_hits}")
    return [
        ("retrieval_suite", getattr(hits, "suite", "")),
        ("retrieval_retriever", getattr(hits, "retriever", "")),
        ("retrieval_query", str(getattr(hits, "query", ""))),
        ("retrieval_expectation", "; ".join(wanted)),
        ("retrieval_top", " ".join(h.doc_id for h in list(hits)[: expectation.shown_k])),
        ("retrieval_broken", " | ".join(broken)),
    ]
