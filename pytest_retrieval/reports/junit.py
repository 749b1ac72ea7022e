"""JUnit XML properties of a gate item (``record_property`` style ``user_properties``), so that
CI dashboards can chart a gate's value without parsing messages."""

from __future__ import annotations

from typing import Any, List, Tuple

__all__ = ["floor_properties", "regression_properties"]

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
    ]


def regression_properties(outcome: Any) -> Properties:
    """A baseline gate's ``gates.regression.RegressionOutcome``: the mean difference, its lower
    confidence bound and the allowed drop."""
    return [
        ("retrieval_suite", outcome.suite),
        ("retrieval_retriever", outcome.retriever),
        ("retrieval_metric", f"baseline:{outcome.metric}"),
        ("retrieval_mean_diff", repr(outcome.overall.mean_diff)),
        ("retrieval_ci_low", repr(outcome.overall.ci_low)),
        ("retrieval_max_drop", repr(outcome.max_drop)),
    ]
