"""What changed between two rankings of each query, per query: the documents that entered and
left the top k, which entered documents have no judgment, the ones that stayed and moved, and
the comparison measures of :mod:`.stability` (RBO and its bounds, Jaccard, top 1 changed,
Kendall's tau, rank change). Pure (no I/O): what a report, a stability gate's failure message and
``judge pool --from-diff`` read (issue #33).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

__all__ = ["QueryChange", "RankingChanges", "diff_rankings"]


@dataclass(frozen=True)
class QueryChange:
    """One query's change between its ``reference`` top k (before) and ``current`` top k (now).

    Ranks are 1-based. ``entered``: (document, rank now) of the documents in the current top k
    but not the reference's, best first; ``left``: (document, rank before) of those gone, in
    their old order; ``entered_unjudged``: the entered documents the query has no judgment for
    (grade 0 and negative grades are judgments), best first; ``moved``: (document, rank before,
    rank now) of the documents in both top k whose rank changed. The measures at depth k:
    ``rbo`` (RBO_ext), ``rbo_min``, ``rbo_res`` (the full rankings' RBO lies in [rbo_min,
    rbo_min + rbo_res]), ``jaccard``, ``top1_changed``, ``topk_changed``, ``kendall_tau`` and
    ``rank_change`` (NaN when too few documents are shared: :mod:`.stability`)."""

    query: str
    k: int
    reference: Tuple[str, ...]
    current: Tuple[str, ...]
    entered: Tuple[Tuple[str, int], ...]
    left: Tuple[Tuple[str, int], ...]
    entered_unjudged: Tuple[str, ...]
    moved: Tuple[Tuple[str, int, int], ...]
    rbo: float
    rbo_min: float
    rbo_res: float
    jaccard: float
    top1_changed: bool
    topk_changed: bool
    kendall_tau: float
    rank_change: float

    @property
    def changed(self) -> bool:
        """Whether the top k differ at all (a document came, went or moved)."""
        return self.topk_changed

    def as_dict(self) -> Dict[str, object]:
        """JSON-ready (NaN as None)."""
        out: Dict[str, object] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif isinstance(value, tuple):
                value = [list(v) if isinstance(v, tuple) else v for v in value]
            out[name] = value
        return out


@dataclass(frozen=True)
class RankingChanges:
    """Every compared query's :class:`QueryChange` (``queries``, in the order of ``current``),
    the depth ``k`` and persistence ``p``, and the queries only one side holds (never compared:
    ``only_reference``, ``only_current``), so none is dropped silently."""

    k: int
    p: float
    queries: Dict[str, QueryChange]
    only_reference: Tuple[str, ...] = ()
    only_current: Tuple[str, ...] = ()
    judged_queries: int = field(default=0)

    def most_changed(self, n: Optional[int] = None) -> List[QueryChange]:
        """The changed queries, most changed first: lowest RBO, then lowest Jaccard, then query id;
        the first ``n`` when given."""
        changed = [c for c in self.queries.values() if c.changed]
        changed.sort(key=lambda c: (c.rbo, c.jaccard, c.query))
        return changed if n is None else changed[:n]

    def unjudged_entered(self) -> Dict[str, Tuple[str, ...]]:
        """``{query: the entered documents without a judgment}``, for the queries that have any
        (what ``judge pool --from-diff`` pools)."""
        return {q: c.entered_unjudged for q, c in self.queries.items() if c.entered_unjudged}

    @property
    def unjudged_entered_count(self) -> int:
        """Documents that entered a top k without a judgment, over all compared queries."""
        return sum(len(c.entered_unjudged) for c in self.queries.values())

    @property
    def unchanged_share(self) -> float:
        """The share of compared queries whose top k is unchanged (NaN without a query)."""
        n = len(self.queries)
        return sum(not c.changed for c in self.queries.values()) / n if n else math.nan


def diff_rankings(
    reference: Mapping[str, Sequence[str]],
    current: Mapping[str, Sequence[str]],
    qrels: Optional[Mapping[str, Mapping[str, int]]] = None,
    *,
    k: int = 10,
    p: float = 0.9,
) -> RankingChanges:
    """Compare each query's ``reference`` ranking (before: a baseline's, a stored run's) with its
    ``current`` one (now), both ``{query id: document ids best first}``, at depth ``k`` with RBO
    persistence ``p``. ``qrels`` (``{query: {document: grade}}``, may be empty or None) tells which
    entered documents are unjudged; every entered document is unjudged without it. Queries in
    only one of the two are listed apart, never compared. ``ValueError`` for a document twice in
    one ranking (named with its query), a bad ``k`` or ``p``.

    >>> changes = diff_rankings(
    ...     {"q1": ["a", "b", "c"], "q2": ["x", "y"]},
    ...     {"q1": ["a", "d", "b"], "q2": ["x", "y"], "q3": ["z"]},
    ...     {"q1": {"a": 2, "b": 0}},
    ...     k=3,
    ... )
    >>> c = changes.queries["q1"]
    >>> c.entered, c.left, c.entered_unjudged, c.moved
    ((('d', 2),), (('c', 3),), ('d',), (('b', 2, 3),))
    >>> round(c.rbo, 4), c.top1_changed, changes.queries["q2"].changed, changes.only_current
    (0.685, False, False, ('q3',))
    >>> [q.query for q in changes.most_changed()], changes.unjudged_entered_count
    (['q1'], 1)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    both = [q for q in current if q in reference]
    qrels = qrels or {}
    refs = [_top(reference[q], k) for q in both]
    curs = [_top(current[q], k) for q in both]
    columns = _measures(refs, curs, both, k, p)
    queries = {}
    for n, q in enumerate(both):
        queries[q] = _one(
            q, k, refs[n], curs[n], qrels.get(q) or {}, {name: col[n] for name, col in columns.items()}
        )
    return RankingChanges(
        k=k,
        p=float(p),
        queries=queries,
        only_reference=_missing(reference, current),
        only_current=_missing(current, reference),
        judged_queries=sum(1 for q in both if qrels.get(q)),
    )


def _top(docs: Sequence[str], k: int) -> List[str]:
    return list(map(str, docs[:k]))


def _missing(some: Mapping[str, object], other: Mapping[str, object]) -> Tuple[str, ...]:
    """The queries of ``some`` that ``other`` lacks, in ``some`` 's order."""
    return tuple(q for q in some if q not in other)


def _measures(
    refs: List[List[str]], curs: List[List[str]], names: List[str], k: int, p: float
) -> Dict[str, List[float]]:
    """Each measure of :class:`QueryChange` for every query, computed on arrays."""
    from .stability import RankingPairs, jaccard, kendall_tau, rank_change, rbo, top1_changed, topk_changed

    pairs = RankingPairs.from_lists(refs, curs, names=names)
    r = rbo(pairs, k, p)
    measures = {
        "rbo": r.ext,
        "rbo_min": r.min,
        "rbo_res": r.res,
        "jaccard": jaccard(pairs, k),
        "top1_changed": top1_changed(pairs),
        "topk_changed": topk_changed(pairs, k),
        "kendall_tau": kendall_tau(pairs, k),
        "rank_change": rank_change(pairs, k),
    }
    return {name: values.tolist() for name, values in measures.items()}


def _one(
    q: str, k: int, before: List[str], now: List[str], judged: Mapping[str, int], values: Mapping[str, float]
) -> QueryChange:
    was = {d: i for i, d in enumerate(before, 1)}
    is_ = {d: i for i, d in enumerate(now, 1)}
    entered = tuple((d, i) for d, i in is_.items() if d not in was)
    return QueryChange(
        query=q,
        k=k,
        reference=tuple(before),
        current=tuple(now),
        entered=entered,
        left=tuple((d, i) for d, i in was.items() if d not in is_),
        entered_unjudged=tuple(d for d, _ in entered if d not in judged),
        moved=tuple((d, was[d], i) for d, i in is_.items() if was.get(d, i) != i),
        top1_changed=bool(values["top1_changed"]),
        topk_changed=bool(values["topk_changed"]),
        **{name: float(values[name]) for name in _FLOATS},
    )


_FLOATS = ("rbo", "rbo_min", "rbo_res", "jaccard", "kendall_tau", "rank_change")
