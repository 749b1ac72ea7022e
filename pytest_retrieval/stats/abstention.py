"""Abstention on unanswerable queries: did a retriever return nothing, or nothing it was
sure of (pure, no I/O)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional

__all__ = ["AbstentionResult", "abstention"]


@dataclass
class AbstentionResult:
    """Unanswerable queries: did the retriever abstain (no hits, or top score < threshold)?"""

    threshold: Optional[float]
    abstained: Dict[str, bool]  # unanswerable qid -> abstained
    top_scores: Dict[str, Optional[float]]  # None: no hits
    rate: float  # share of unanswerable queries abstained on (NaN if none)
    # Over answerable queries, when given: wrongly abstained on (they had an answer)
    false_abstained: Dict[str, bool] = field(default_factory=dict)
    false_rate: float = math.nan

    @property
    def per_query(self) -> Dict[str, float]:
        """1.0 / 0.0 per unanswerable query: a metric to gate or compare with a baseline."""
        return {q: 1.0 if a else 0.0 for q, a in self.abstained.items()}

    @property
    def answered(self) -> List[str]:
        """Unanswerable queries the retriever did answer (the failures), sorted."""
        return sorted(q for q, a in self.abstained.items() if not a)


def _top_score(ranking) -> Optional[float]:
    if ranking is None or len(ranking.doc_ids) == 0:
        return None
    return float(max(ranking.scores))


def abstention(
    run: Mapping[str, object],
    unanswerable_qids: Iterable[str],
    threshold: Optional[float] = None,
    answerable_qids: Optional[Iterable[str]] = None,
) -> AbstentionResult:
    """Score unanswerable queries by abstention.

    A query abstains when its ranking has no hits (or it is absent from ``run``), or when
    ``threshold`` is set and its top score (the maximum score, whatever the order) is
    below it. ``rate`` = abstained / unanswerable. With ``answerable_qids`` the same rule
    is applied to them: ``false_rate`` is the share of answerable queries abstained on,
    the other side of a threshold's trade-off."""
    if threshold is not None and not (isinstance(threshold, (int, float)) and math.isfinite(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")

    def decide(qids: Iterable[str]):
        flags: Dict[str, bool] = {}
        tops: Dict[str, Optional[float]] = {}
        for q in sorted(set(qids)):
            top = _top_score(run.get(q))
            tops[q] = top
            flags[q] = top is None or (threshold is not None and top < threshold)
        return flags, tops

    flags, tops = decide(unanswerable_qids)
    rate = (sum(flags.values()) / len(flags)) if flags else math.nan
    result = AbstentionResult(threshold, flags, tops, rate)
    if answerable_qids is not None:
        f_flags, _ = decide(answerable_qids)
        result.false_abstained = f_flags
        result.false_rate = (sum(f_flags.values()) / len(f_flags)) if f_flags else math.nan
    return result
