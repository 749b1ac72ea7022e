"""Stage comparison: how each stage does against BM25 and against what it builds on.

Pure over a ``SuiteResult``; the report writers only format these rows.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from .floors import GateKind


@dataclass
class StageRow:
    name: str
    kind: str
    builds_on: List[str]
    metric: str  # the headline quality metric (ndcg@10 when evaluated)
    value: float
    mrr: Optional[float]
    delta_vs_bm25: Optional[float]  # None for the BM25 reference itself / no BM25 in the suite
    delta_vs_input: Optional[float]  # against the best input by `metric`
    best_input: Optional[str]
    candidate_recall: Dict[str, float] = field(default_factory=dict)  # input -> recall@window
    window: Optional[int] = None
    p95_ms: Optional[float] = None
    delta_p95_ms: Optional[float] = None  # against the best input
    verdict: Optional[str] = None  # rerankers: "earning its cost" / "not earning its cost"
    reference: Optional[str] = None  # the BM25 retriever ``delta_vs_bm25`` is against (None: none)

    def as_dict(self) -> Dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def _headline(metrics: List[str], prefer: str) -> str:
    return prefer if prefer in metrics else metrics[0]


def stage_rows(
    result: Any, *, min_lift: float = 0.01, p95_budget_ms: Optional[Dict[str, float]] = None
) -> List[StageRow]:
    """One row per retriever, for suites with more than one retriever."""
    suite = result.suite
    if len(result.retrievers) < 2:
        return []
    metric = _headline(suite.metrics, "ndcg@10")
    budgets = p95_budget_ms or {
        f.retriever: f.threshold
        for f in suite.floors
        if f.kind is GateKind.LATENCY and f.percentile == 95 and not f.team  # the suite's own budget
    }
    rows: List[StageRow] = []
    for name, r in result.retrievers.items():
        row = _row(result, name, metric)
        if r.kind == "rerank" and row.delta_vs_input is not None:
            cfg = suite.model.retrievers.get(name)
            needed = getattr(cfg, "min_lift", min_lift)
            budget = getattr(cfg, "p95_budget_ms", None) or budgets.get(name)
            row.verdict = _rerank_verdict(row.delta_vs_input, needed, row.p95_ms, budget)
        rows.append(row)
    return rows


def _row(result: Any, name: str, metric: str) -> StageRow:
    """``name``'s values and its deltas against BM25 and against its best input."""
    r = result.retrievers[name]
    bm25 = next((n for n, rr in result.retrievers.items() if rr.kind == "bm25"), None)
    value = r.evaluation.aggregate[metric]
    inputs = result.inputs(name)
    best = max(inputs, key=lambda i: _value(result, i, metric)) if inputs else None
    p95 = _p95(r.latency)
    best_p95 = _p95(result.retrievers[best].latency) if best is not None else None
    return StageRow(
        name=name,
        kind=r.kind,
        builds_on=inputs,
        metric=metric,
        value=value,
        mrr=r.evaluation.aggregate.get("mrr@10") if "mrr@10" in result.suite.metrics else None,
        delta_vs_bm25=value - _value(result, bm25, metric) if bm25 and name != bm25 else None,
        delta_vs_input=value - _value(result, best, metric) if best else None,
        best_input=best,
        candidate_recall=dict(r.candidate_recall),
        window=r.window,
        p95_ms=p95,
        delta_p95_ms=_difference(p95, best_p95),
        reference=bm25,
    )


def _difference(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a - b if a is not None and b is not None else None


def _value(result: Any, retriever: str, metric: str) -> float:
    return result.retrievers[retriever].evaluation.aggregate[metric]


def _p95(latency: Any) -> Optional[float]:
    """The p95 of a latency summary that has samples, else None."""
    return latency.p95 if latency and latency.samples_ms else None


def _rerank_verdict(lift: float, needed: float, p95: Optional[float], budget: Optional[float]) -> str:
    """Whether a rerank stage earns its cost: its lift over its input at least ``needed``,
    within its p95 budget when it has one; and why."""
    within = budget is None or (p95 is not None and p95 <= budget)
    earning = lift >= needed and within
    why = f"lift {lift:+.4f} {'>=' if lift >= needed else '<'} {needed:g}" + _budget_why(p95, budget, within)
    return ("earning its cost" if earning else "not earning its cost") + f" ({why})"


def _budget_why(p95: Optional[float], budget: Optional[float], within: bool) -> str:
    if budget is None:
        return ""
    if p95 is None:
        return f", p95 not measured against budget {budget:g} ms"
    return f", p95 {p95:.1f} ms {'<=' if within else '>'} budget {budget:g} ms"
