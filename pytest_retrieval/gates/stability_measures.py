"""Per-query stability values of two rankings (pure): the bridge from a stability gate's
measure name to the measures that compute it. RBO after Webber, Moffat and Zobel (2010),
"A similarity measure for indefinite rankings", eq. 30 (RBO_ext on lists cut at k)."""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence

__all__ = ["per_query_values", "RBO_P"]

#: RBO's persistence: the weight of the top 10 is 86% at p = 0.9 (the paper's Table 1)
RBO_P = 0.9


def per_query_values(
    measure: str, before: Mapping[str, Sequence[str]], now: Mapping[str, Sequence[str]]
) -> Dict[str, float]:
    """``{qid: value}`` of a canonical stability measure (``rbo@10``, ``top1_changed``, ...)
    over the queries of ``before`` (each also in ``now``)."""
    name, _, k_text = measure.partition("@")
    k = int(k_text) if k_text else 1
    fn = _BY_NAME[name]
    return {q: fn(list(before[q][:k]), list(now[q][:k]), k) for q in before}


def _rbo_ext(a: List[str], b: List[str], k: int, p: float = RBO_P) -> float:
    if not a and not b:
        return 1.0
    seen_a: set = set()
    seen_b: set = set()
    overlap = 0
    total = 0.0
    depth = max(len(a), len(b))
    agreement = 0.0
    for d in range(1, depth + 1):
        x = a[d - 1] if d <= len(a) else None
        y = b[d - 1] if d <= len(b) else None
        if x is not None and x == y:
            overlap += 1
        else:
            if x is not None and x in seen_b:
                overlap += 1
            if y is not None and y in seen_a:
                overlap += 1
        if x is not None:
            seen_a.add(x)
        if y is not None:
            seen_b.add(y)
        agreement = overlap / d
        total += agreement * p**d
    return (1 - p) / p * total + agreement * p**depth


def _rbo_point(a: List[str], b: List[str], k: int, p: float = RBO_P) -> float:
    return _rbo_ext(a, b, k, p)


def _jaccard(a: List[str], b: List[str], k: int) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def _overlap(a: List[str], b: List[str], k: int) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / k


def _top1_changed(a: List[str], b: List[str], k: int) -> float:
    return float(a[:1] != b[:1])


def _topk_changed(a: List[str], b: List[str], k: int) -> float:
    return float(a != b)


def _kendall_tau(a: List[str], b: List[str], k: int) -> float:
    shared = [d for d in a if d in set(b)]
    if len(shared) < 2:
        return 1.0
    pos = {d: i for i, d in enumerate(b)}
    order = [pos[d] for d in shared]
    n = len(order)
    conc = disc = 0
    for i in range(n):
        for j in range(i + 1, n):
            if order[i] < order[j]:
                conc += 1
            else:
                disc += 1
    return (conc - disc) / (n * (n - 1) / 2)


def _rank_change(a: List[str], b: List[str], k: int) -> float:
    pos = {d: i for i, d in enumerate(b)}
    moves = [abs(i - pos[d]) for i, d in enumerate(a) if d in pos]
    return sum(moves) / len(moves) if moves else 0.0


_BY_NAME = {
    "rbo": _rbo_point,
    "rbo_ext": _rbo_ext,
    "jaccard": _jaccard,
    "overlap": _overlap,
    "top1_changed": _top1_changed,
    "topk_changed": _topk_changed,
    "kendall_tau": _kendall_tau,
    "rank_change": _rank_change,
}
