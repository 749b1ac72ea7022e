"""judged@10 beside every baseline verdict (issue #28): new documents nobody judged can make a
better pipeline look worse (an unjudged document counts as not relevant), so each verdict says
how much of the top 10 had a judgment in the baseline and now, over the queries compared.

The baseline keeps every retriever's per-query ``judged@10`` (written with the baseline even when
the suite does not gate it); a baseline written before that has it from its top-k lists (in the
engine's order: with ``ties: trec`` a tie across rank 10 may differ), else it is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence

__all__ = ["JUDGED", "JudgedChange", "current_judged", "baseline_judged", "judged_change"]

#: the metric reported beside every baseline verdict
JUDGED = "judged@10"
_K = 10


@dataclass(frozen=True)
class JudgedChange:
    """Mean judged@10 over the compared queries, in the baseline and now."""

    before: float
    now: float
    queries: int

    @property
    def diff(self) -> float:
        return self.now - self.before

    def describe(self) -> str:
        line = f"judged@10 {self.before:.4f} -> {self.now:.4f} ({self.diff:+.4f})"
        if self.diff < 0:
            line += (
                ": unjudged documents entered the top 10 and count as not relevant; judge them "
                "(--retrieval-export-unjudged) before reading a drop as a regression"
            )
        return line

    def as_dict(self) -> Dict[str, Any]:
        return {"baseline": self.before, "current": self.now, "queries": self.queries}


def current_judged(result: Any, retriever: str) -> Dict[str, float]:
    """This run's per-query judged@10 of ``retriever`` (evaluated here when the suite does not
    gate it, with the suite's tie rule)."""
    rr = result.retrievers[retriever]
    if JUDGED in rr.evaluation.per_query:
        return dict(rr.evaluation.per_query[JUDGED])
    from ..measures.metrics import evaluate

    options = result.suite.scoring()
    engine_order = options["ties"] == "engine"
    ev = evaluate(
        result.judgments.qrels,
        {q: rk.top(_K) if engine_order else rk for q, rk in rr.run.items()},
        [JUDGED],
        **options,
    )
    return dict(ev.per_query[JUDGED])


def baseline_judged(
    baseline: Any, retriever: str, qrels: Mapping[str, Mapping[str, int]]
) -> Optional[Dict[str, float]]:
    """The baseline's per-query judged@10 of ``retriever``: as written, else from its top-k
    lists (the judgments of a compared query are the baseline's), else None."""
    written = baseline.per_query(retriever, JUDGED)
    if written is not None:
        return dict(written)
    top = baseline.top(retriever)
    if not top:
        return None
    return {q: _share_judged(docs, qrels.get(q, {})) for q, docs in top.items()}


def _share_judged(docs: Sequence[str], judged: Mapping[str, int]) -> float:
    return sum(1 for d in docs[:_K] if d in judged) / _K


def judged_change(
    before: Optional[Mapping[str, float]], now: Mapping[str, float], qids: Iterable[str]
) -> Optional[JudgedChange]:
    """Mean judged@10 over ``qids`` (the queries compared) in the baseline and now; None when
    the baseline does not have it."""
    if before is None:
        return None
    shared = [q for q in qids if q in before and q in now]
    if not shared:
        return None
    import math

    mean_before = math.fsum(before[q] for q in shared) / len(shared)
    mean_now = math.fsum(now[q] for q in shared) / len(shared)
    return JudgedChange(mean_before, mean_now, len(shared))
