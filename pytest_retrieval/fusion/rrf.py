"""Reciprocal rank fusion arithmetic: ``sum 1/(rank_constant + rank)`` over the sub-rankings,
1-based ranks, a document absent from a list adding nothing.

- ``elasticsearch`` / ``elasticsearch_legacy`` (ES x-pack/plugin/rank-rrf/.../rrf/
  RRFRetrieverBuilder.java, RRFQueryPhaseRankCoordinatorContext.java): a Java ``float`` sum of
  ``1.0f / (k + rank)`` in retriever order.
- ``opensearch`` (neural-search 2.19 processor/normalization/RRFNormalizationTechnique.java,
  processor/combination/RRFScoreCombinationTechnique.java): each ``1/(k + rank)`` rounded
  HALF_UP to 10 decimals (BigDecimal), made a float, and the floats summed in sub-query order.
- ``reference``: exact rational sums, rounded once to double (embedded engine).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Dict, Sequence

import numpy as np

from ..types import Ranking
from .javafloat import fraction_to_float32

__all__ = ["exact_rrf", "opensearch_rrf_score", "rrf_sum", "rrf_table"]


@lru_cache(maxsize=65536)
def opensearch_rrf_score(rank_constant: int, rank: int) -> float:
    """OpenSearch 2.19 per-list RRF score for a 1-based ``rank``.

    ``BigDecimal.ONE.divide(BigDecimal.valueOf(k + rank), 10, RoundingMode.HALF_UP).floatValue()``
    (RRFNormalizationTechnique#calculateNormalizedScore): 1/(k+rank) rounded HALF_UP to
    10 decimals, then correctly rounded to a float.
    """
    n = rank_constant + rank
    q = (2 * 10**10 + n) // (2 * n)  # round_half_up(10**10 / n), exact integers
    return fraction_to_float32(Fraction(q, 10**10))


@lru_cache(maxsize=1024)
def rrf_table(semantics: str, rank_constant: int, depth: int) -> np.ndarray:
    """float32 contribution of 1-based rank r at index r, r <= ``depth`` (index 0 = absent = 0.0)."""
    table = np.zeros(depth + 1, dtype=np.float32)
    if semantics == "opensearch":
        table[1:] = [opensearch_rrf_score(rank_constant, r) for r in range(1, depth + 1)]
    else:  # elasticsearch: 1.0f / (float)(k + rank), the int made a float as Java does
        denominators = [float(rank_constant + r) for r in range(1, depth + 1)]
        table[1:] = np.float32(1.0) / np.array(denominators, dtype=np.float64).astype(np.float32)
    table.flags.writeable = False
    return table


def rrf_sum(table: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """(Q, U) float32 fused scores from the 1-based ranks ``rank`` (n, Q, U) (0 = absent): the
    float sum in sub-ranking order (an absent document adds 0.0f, which changes no sum)."""
    total = np.zeros(rank.shape[1:], dtype=np.float32)
    for j in range(rank.shape[0]):
        total = (total + table[rank[j]]).astype(np.float32)
    return total


def exact_rrf(rankings: Sequence[Ranking], rank_constant: int) -> Dict[str, Fraction]:
    """``reference`` semantics: exact rational sums (so equal rank profiles tie exactly,
    whatever the list order), per document in first-seen order."""
    exact: Dict[str, Fraction] = {}
    for r in rankings:
        for pos, d in enumerate(r.doc_ids):
            exact[d] = exact.get(d, Fraction(0)) + Fraction(1, rank_constant + pos + 1)
    return exact
