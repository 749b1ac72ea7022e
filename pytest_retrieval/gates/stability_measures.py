"""Per-query stability values of a stability gate's measure (pure): the bridge from the gate's
query ids and document lists to the vectorised comparison measures (measures/stability.py)."""

from __future__ import annotations

from typing import Dict, Mapping, Sequence

__all__ = ["per_query_values"]


def per_query_values(
    measure: str, before: Mapping[str, Sequence[str]], now: Mapping[str, Sequence[str]]
) -> Dict[str, float]:
    """``{qid: value}`` of a comparison measure (``rbo@10``, ``top1_changed``, ...) over the
    queries of ``before`` (each also in ``now``); NaN where the measure is undefined (Kendall's
    tau, the rank change with too few shared documents)."""
    from ..measures.stability import RankingPairs, compare

    qids = list(before)
    if not qids:
        return {}
    pairs = RankingPairs.from_lists([before[q] for q in qids], [now[q] for q in qids], names=qids)
    (values,) = compare(pairs, [measure]).values()
    return dict(zip(qids, values.tolist()))
