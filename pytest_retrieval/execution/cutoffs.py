"""The cut-offs (``@k``) a suite's metrics and floors look at, and the depth a run retrieves to."""

from __future__ import annotations

from ..config.load import Suite

ANN_RECALL = "ann_recall@"


def metric_k(metric: str) -> int:
    """The cut-off of a metric or floor key (``ndcg@10`` -> 10), 0 when it names none."""
    _, _, k = metric.partition("@")
    return int(k) if k.isdigit() else 0


def gated_k(suite: Suite, retriever: str) -> int:
    """The deepest cut-off a floor of this retriever looks at (10 when none names one)."""
    ks = [metric_k(f.metric) for f in suite.floors if f.retriever == retriever]
    return max([k for k in ks if k] or [10])


def run_depth(suite: Suite, at_least: int) -> int:
    """How deep a run retrieves: ``evaluation.depth``, ``at_least``, or the deepest metric or
    stability cut-off."""
    ks = [metric_k(m) for m in suite.metrics] + [g.k for g in suite.stability]
    return max([suite.model.evaluation.depth, at_least] + ks)
