"""The JSON report's ``stability`` section of a suite (issue #33): the stability gates' outcomes,
and per retriever how far its top 10 moved from the baseline's (or a stored run's: ``against``), canary and judged queries apart,
how many documents entered the top 10 unjudged, and the most changed queries with what came and
went (what ``judge pool --from-diff`` pools). Every renderer reads this section."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional

__all__ = ["SHOWN_K", "MOST_CHANGED", "stability_report"]

#: the summary's cut-off: "94% top 10 unchanged"
SHOWN_K = 10
#: the most changed queries kept per retriever (the pool's candidates)
MOST_CHANGED = 50


def stability_report(state: Any) -> Optional[Dict[str, Any]]:
    """The section, or None for a suite without canary queries or stability gates."""
    from ..errors import RetrievalError

    result = state.result
    suite = result.suite
    if not suite.stability and not result.canary:
        return None
    out: Dict[str, Any] = {
        "k": SHOWN_K,
        "canary_queries": len(result.canary),
        "outcomes": [o.as_dict() for o in getattr(state, "stabilities", [])],
        "retrievers": {},
        "note": "",
        "against": "the baseline"
        if state.stability.against is None
        else f"stored run {state.stability.against}",
    }
    try:
        out["against"] = state.stability.reference(suite)  # the baseline, or a stored run
    except RetrievalError as exc:  # none, or one that does not add up: said, never a figure
        out["note"] = str(exc)
        return out
    for name in result.retrievers:
        try:
            compared = state.stability.compared(suite, result, name)
        except RetrievalError as exc:  # e.g. a retriever added since the baseline: said
            out["retrievers"][name] = {"note": str(exc)}
            continue
        out["retrievers"][name] = _retriever(compared, result)
    return out


def _retriever(compared: Any, result: Any) -> Dict[str, Any]:
    from ..gates.stability import entered_unjudged
    from ..gates.stability_measures import per_query_values

    k = min(SHOWN_K, compared.depth) if compared.depth else SHOWN_K
    rbo = per_query_values(f"rbo@{k}", compared.before, compared.now)
    same = {q: compared.before[q][:k] == compared.now[q][:k] for q in compared.before}
    qrels = result.judgments.qrels
    entered = entered_unjudged(compared, qrels, k)
    groups = {"canary": sorted(compared.canary), "judged": compared.judged}
    entry: Dict[str, Any] = {
        g: {
            "queries": len(qs),
            "unchanged": _share([same[q] for q in qs]),
            f"rbo@{k}": _mean([rbo[q] for q in qs]),
        }
        for g, qs in groups.items()
    }
    entry.update(
        left_out=len(compared.left_out),
        new=compared.new,
        system=list(compared.system),
        entered_unjudged=sum(len(v) for v in entered.values()),
        most_changed=_most_changed(compared, rbo, k, result),
    )
    return entry


def _most_changed(compared: Any, rbo: Mapping[str, float], k: int, result: Any) -> List[Dict[str, Any]]:
    texts = {**result.judgments.queries, **result.canary}
    qrels = result.judgments.qrels
    titles = result.titles()
    moved = sorted((v, q) for q, v in rbo.items() if compared.before[q][:k] != compared.now[q][:k])
    out = []
    for v, q in moved[:MOST_CHANGED]:
        before, now = compared.before[q][:k], compared.now[q][:k]
        judged = qrels.get(q, {})
        out.append(
            {
                "query": q,
                "text": texts.get(q, ""),
                "kind": "canary" if q in compared.canary else "judged",
                "rbo": v,
                "entered": [
                    {"doc": d, "rank": r, "grade": judged.get(d), "title": titles.get(d)}
                    for r, d in enumerate(now, 1)
                    if d not in before
                ],
                "left": [{"doc": d, "was": r} for r, d in enumerate(before, 1) if d not in now],
            }
        )
    return out


def _share(flags: List[bool]) -> Optional[float]:
    return sum(flags) / len(flags) if flags else None


def _mean(values: List[float]) -> Optional[float]:
    return math.fsum(values) / len(values) if values else None
