"""The measures that compare two rankings of one query, needing no judgments (issue #33),
declared as every measure is (:mod:`.registry` holds them in ``MEASURES``): relevance
``comparison``, no ``formula`` (their functions are :data:`.stability.COMPARISONS`), so the
scoring against judgments (``evaluate``) never computes them and ``evaluate -m`` refuses them.
Declarations only: parsing a metric name imports no numpy.
"""

from __future__ import annotations

from typing import Tuple

from .declaration import Measure, Param

__all__ = ["COMPARISON_MEASURES", "COMPARISON_P"]

#: RBO's persistence: ``rbo@10`` is ``rbo(0.9)@10`` (stability.DEFAULT_P).
COMPARISON_P = Param("p", 0.9, 0.0, 1.0, low_open=True, high_open=True)

_RBO = "(Webber, Moffat and Zobel 2010)"

COMPARISON_MEASURES: Tuple[Measure, ...] = (
    Measure(
        "rbo",
        cutoff="required",
        relevance="comparison",
        formula=None,
        aliases=("rbo_ext",),
        param=COMPARISON_P,
        doc=(
            f"rank-biased overlap {_RBO}, the extrapolated point estimate RBO_ext (eq. 32) of the "
            "two top k: agreement X_d / d at each depth d weighted (1 - p) p^(d-1), the agreement "
            "at depth k carried past it; 1 for identical top k, 0 for disjoint ones; uneven "
            "lengths as the paper's section 4.3"
        ),
    ),
    Measure(
        "rbo_min",
        cutoff="required",
        relevance="comparison",
        formula=None,
        param=COMPARISON_P,
        doc=(
            f"RBO's lower bound on the compared depth {_RBO}, eq. 11: the documents past the top "
            "k assumed disjoint (0.856 for two identical top 10 at p = 0.9)"
        ),
    ),
    Measure(
        "rbo_res",
        cutoff="required",
        relevance="comparison",
        formula=None,
        param=COMPARISON_P,
        doc=(
            f"RBO's residual {_RBO}, eq. 30: how much the documents past the top k could still "
            "add; the full rankings' RBO lies in [rbo_min, rbo_min + rbo_res]"
        ),
    ),
    Measure(
        "jaccard",
        cutoff="required",
        relevance="comparison",
        formula=None,
        doc="documents in both top k / documents in either (1 for two empty rankings)",
    ),
    Measure(
        "overlap",
        cutoff="required",
        relevance="comparison",
        formula=None,
        doc=(
            "documents in both top k / the longer top k (k when both hold k documents: the RBO "
            "paper's agreement A_k); 1 for two empty rankings"
        ),
    ),
    Measure(
        "top1_changed",
        cutoff="none",
        relevance="comparison",
        formula=None,
        doc="1 if the first document changed (one ranking empty, the other not, included), else 0: its mean is the share of queries",
    ),
    Measure(
        "topk_changed",
        cutoff="required",
        relevance="comparison",
        formula=None,
        doc="1 if the top k changed as an ordered list (a document came, went or moved), else 0",
    ),
    Measure(
        "kendall_tau",
        cutoff="required",
        relevance="comparison",
        formula=None,
        bounds=(-1.0, 1.0),
        doc=(
            "Kendall's tau between the two ranks of the documents in both top k (no ties: "
            "tau-a = tau-b); undefined (NaN, counted apart) with fewer than 2 shared"
        ),
    ),
    Measure(
        "rank_change",
        cutoff="required",
        relevance="comparison",
        formula=None,
        bounds=(0.0, float("inf")),
        doc=(
            "mean absolute rank change (rank now - rank before) of the documents in both top k (ranks, "
            "not a share); "
            "undefined (NaN, counted apart) when none is shared"
        ),
    ),
)
