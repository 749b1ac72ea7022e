"""The drop on judged documents only, beside a baseline verdict whose judged@10 fell (issue #24):
when new unjudged documents entered the top 10 (they count as not relevant), the verdict of a
rank metric M also gives M's condensed form (``ndcg@10`` -> ``ndcg'@10``: unjudged documents
removed before scoring, Sakai 2007; trec_eval ``-J``) in the baseline and now, both over the
current judgments. Information only: M's verdict is unchanged; ``ndcg'@10`` in
``regression.max_drop`` gates it.

The current side is this run's ``M'`` scored as the suite scores its metrics (the same ranking
depth, tie rule, gain and relevance threshold): equal to the suite's own ``M'`` per query. The
baseline keeps only its top-k lists (``top``, :func:`.rankings.ranking_depth` deep, in the
engine's order), re-scored against the current judgments. A condensed list draws judged
documents from below rank k, so a stored list gives the baseline's exact ``M'@k`` only when it
holds k judged documents, or every judged document of the query, or the whole ranking; the
other queries are left out of this comparison, on both sides, and counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence

__all__ = ["JudgedOnlyChange", "judged_only_metric", "judged_only_change", "current_values"]

_REWRITE = "rewrite it with --retrieval-baseline-update"


@dataclass(frozen=True)
class JudgedOnlyChange:
    """Mean ``metric`` (a condensed metric) over ``queries`` of the ``compared`` queries, in the
    baseline and now; or why it is ``unavailable``. ``drop``: the gated metric's mean diff
    (negative: it dropped), ``margin``: its allowed drop; ``depth``: the baseline's list depth."""

    metric: str
    before: float = math.nan
    now: float = math.nan
    queries: int = 0
    compared: int = 0
    drop: float = 0.0
    margin: float = 0.0
    depth: int = 0
    unavailable: str = ""

    @property
    def diff(self) -> float:
        return self.now - self.before

    def describe(self) -> str:
        if self.unavailable:
            return f"judged-only comparison unavailable: {self.unavailable}"
        line = (
            f"judged only ({self.metric} over the current judgments): "
            f"{self.before:.4f} -> {self.now:.4f} ({self.diff:+.4f})"
        )
        if self.queries < self.compared:
            line += (
                f" on {self.queries} of {self.compared} compared queries (the others have fewer than "
                f"{_k_of(self.metric)} judged documents in the baseline's top {self.depth})"
            )
        return line + self._reading()

    def _reading(self) -> str:
        """What the two values say about the gated metric's drop (none when it did not drop)."""
        if not self.drop < 0:
            return ""
        if self.diff >= 0:
            return ": the drop comes from unjudged documents"
        if self.diff < -self.margin:
            return ": the drop holds on judged documents"
        return f": on judged documents the drop is within the margin (-{self.margin:g})"

    def as_dict(self) -> Dict[str, Any]:
        if self.unavailable:
            return {"metric": self.metric, "unavailable": self.unavailable}
        return {
            "metric": self.metric,
            "baseline": self.before,
            "current": self.now,
            "queries": self.queries,
            "compared": self.compared,
            "depth": self.depth,
        }


def _k_of(metric: str) -> int:
    from ..measures.metrics import parse_metric

    return parse_metric(metric).k or 0


def judged_only_metric(metric: str) -> Optional[Any]:
    """The condensed form of ``metric`` (a ``measures.metrics.Metric``), or None when it has
    none: not a rank metric (latency, abstention, a lift), already condensed, or a measure of
    the judgments themselves (judged@k)."""
    from ..measures.metrics import Metric, parse_metric
    from ..measures.registry import BY_NAME

    try:
        m = parse_metric(metric)
    except ValueError:
        return None
    if m.condensed or not BY_NAME[m.name].condensable:
        return None
    return Metric(m.name, m.k, m.param, condensed=True)


def judged_only_change(
    result: Any, baseline: Any, retriever: str, condensed: Any, compared: Sequence[str], overall: Any
) -> JudgedOnlyChange:
    """``condensed`` (from :func:`judged_only_metric`) over the ``compared`` queries, baseline
    (its stored top lists re-scored) and now, both against this run's judgments. ``overall``:
    the gate's ``stats.paired.PairedResult`` (its mean diff and margin phrase the reading)."""
    name, k = str(condensed), condensed.k
    top = baseline.top(retriever)
    depth = max((len(docs) for docs in top.values()), default=0)
    base = JudgedOnlyChange(
        name, compared=len(compared), drop=overall.mean_diff, margin=overall.max_drop, depth=depth
    )
    why = _why_unavailable(top, depth, k, name)
    if why or k is None:
        return replace(base, unavailable=why)
    exact = _decided(top, result.judgments.qrels, compared, k, depth)
    if not exact:
        return replace(
            base, unavailable=f"no compared query has {k} judged documents in the baseline's top {depth}"
        )
    before = _score(result, {q: top[q] for q in exact}, condensed)
    now = current_values(result, retriever, condensed)
    shared = [q for q in exact if q in before and q in now]
    if not shared:
        return replace(base, unavailable=f"no compared query has {name} in both runs")
    return replace(base, before=_mean(before, shared), now=_mean(now, shared), queries=len(shared))


def _mean(values: Mapping[str, float], qids: Sequence[str]) -> float:
    return math.fsum(values[q] for q in qids) / len(qids)


def _decided(
    top: Mapping[str, List[str]],
    qrels: Mapping[str, Mapping[str, int]],
    qids: Sequence[str],
    k: int,
    depth: int,
) -> List[str]:
    """The queries whose stored list decides the condensed top k (:func:`_complete`); a query
    without a stored list does not."""
    return [q for q in qids if q in top and _complete(top[q], qrels.get(q, {}), k, depth)]


def _why_unavailable(top: Mapping[str, Any], depth: int, k: Optional[int], name: str) -> str:
    from .rankings import MAX_DEPTH

    if not top:
        return f"the baseline keeps no top-k lists ({_REWRITE})"
    if k is None:
        return f"{name} has no cut-off; the baseline keeps the top {depth} of each ranking"
    if k > depth:
        fix = _REWRITE if k <= MAX_DEPTH else f"a baseline keeps at most the top {MAX_DEPTH}"
        return f"the baseline keeps the top {depth} of each ranking, {name} needs the top {k} ({fix})"
    return ""


def _complete(docs: Sequence[str], grades: Mapping[str, int], k: int, depth: int) -> bool:
    """Whether a stored list decides the condensed top k of the whole ranking: it holds k judged
    documents, or every judged one of the query, or the ranking ended before ``depth``.
    Judged: grade >= 0 (a negative grade is dropped from a condensed list, as trec_eval -J)."""
    judged = sum(1 for d in set(docs) if grades.get(d, -1) >= 0)
    return judged >= k or len(docs) < depth or judged == sum(1 for g in grades.values() if g >= 0)


def _score(result: Any, lists: Mapping[str, List[str]], condensed: Any) -> Dict[str, float]:
    """``condensed`` of rankings given as doc ids in order (the engine's order: ties="engine")."""
    from ..types import Ranking

    run = {
        q: Ranking(list(docs), [float(len(docs) - i) for i in range(len(docs))]) for q, docs in lists.items()
    }
    return _evaluate(result, run, condensed, ties="engine")


def current_values(result: Any, retriever: str, condensed: Any) -> Dict[str, float]:
    """This run's per-query ``condensed`` of ``retriever``: the suite's own when it evaluates
    it, else scored as the suite scores its metrics (``execution.scoring``)."""
    rr = result.retrievers[retriever]
    own = rr.evaluation.per_query.get(str(condensed))
    if own is not None:
        return dict(own)
    run = {q: rk if rr.depth is None else rk.top(rr.depth) for q, rk in rr.run.items()}
    return _evaluate(result, run, condensed, ties=result.suite.scoring()["ties"])


def _evaluate(result: Any, run: Mapping[str, Any], condensed: Any, ties: str) -> Dict[str, float]:
    from ..measures.metrics import evaluate

    options = {**result.suite.scoring(), "ties": ties}  # as the suite scores, in the order given
    return dict(evaluate(result.judgments.qrels, run, [condensed], **options).per_query[str(condensed)])
