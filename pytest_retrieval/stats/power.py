"""Power of the paired non-inferiority gate: how small a drop a query set can detect, how
many queries a drop needs (pure: numpy, no I/O).

Power (:func:`minimum_detectable_drop`)
    Normal approximation for a one-sided paired test.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy as np

from .distributions import normal_cdf, normal_ppf
from .resampling import alpha_of

__all__ = [
    "DEFAULT_RHO",
    "minimum_detectable_drop",
    "queries_needed",
    "estimate_sd_diff",
    "noninferiority_pass_probability",
]


#: Default correlation between the per-query values of two pipeline versions, used by
#: :func:`estimate_sd_diff` when no baseline exists. Measured on BEIR SciFact (300 queries,
#: nDCG@10, embedded engine): BM25 vs dense MiniLM 0.67, BM25 vs RRF(BM25, dense) 0.88,
#: BM25 title^2 vs title 0.81, best_fields vs most_fields 0.88, k1/b 1.2/0.75 vs 0.9/0.4
#: 0.97, + English stop words 0.99. 0.8 stands for "a meaningful change" and errs on the
#: large side for small tweaks (it over-estimates their noise, so the MDD is pessimistic).
DEFAULT_RHO = 0.8


def _sd_and_n(sd_diff: Union[float, Sequence[float]], n: Optional[int]) -> Tuple[float, int]:
    """(sd of the differences, number of queries): as given, or from the differences."""
    if isinstance(sd_diff, (int, float)) and not isinstance(sd_diff, bool):
        if n is None:
            raise ValueError("give n (the number of queries) with a standard deviation")
        sd = float(sd_diff)
    else:
        sd, n = _sd_of_differences(cast(Sequence[float], sd_diff), n)
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd of the differences must be >= 0, got {sd!r}")
    return sd, _positive_count(n)


def _sd_of_differences(diffs: Sequence[float], n: Optional[int]) -> Tuple[float, Optional[int]]:
    """The sample sd of per-query differences, and ``n`` (their count unless given)."""
    d = np.asarray(list(diffs), dtype=np.float64)
    if len(d) < 2:
        raise ValueError("need at least 2 per-query differences to estimate their sd")
    return float(np.std(d, ddof=1)), len(d) if n is None else n


def _positive_count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def minimum_detectable_drop(
    sd_diff: Union[float, Sequence[float]],
    n: Optional[int] = None,
    *,
    confidence: float = 0.95,
    power: float = 0.8,
    max_drop: float = 0.0,
) -> float:
    """Smallest true mean drop that a one-sided paired test at ``alpha = 1 - confidence``
    flags as "a drop larger than ``max_drop``" with probability ``power``:
    ``max_drop + (z_{1-alpha} + z_power) * sd_diff / sqrt(n)`` (normal approximation;
    optimistic below ~30 queries).

    ``sd_diff``: the sd of the per-query differences (current - baseline), or the
    differences themselves (then ``n`` defaults to their count). Without a baseline use
    :func:`estimate_sd_diff`.

    For the non-inferiority gate read it the other way: with ``max_drop = 0`` it is the
    resolution of the query set; a change whose true drop is ``delta`` passes the gate
    with probability ``power`` only when its margin is at least ``delta`` + this value.
    An unchanged-but-noisy pipeline (true drop 0) needs ``max_drop >=`` this value."""
    sd, n = _sd_and_n(sd_diff, n)
    alpha_of(confidence)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    z = normal_ppf(confidence) + normal_ppf(power)
    return float(max_drop) + z * sd / math.sqrt(n)


def queries_needed(
    drop: float, sd_diff: float, *, confidence: float = 0.95, power: float = 0.8, max_drop: float = 0.0
) -> int:
    """Queries needed for :func:`minimum_detectable_drop` to reach ``drop``."""
    gap = float(drop) - float(max_drop)
    if gap <= 0:
        raise ValueError("drop must be larger than max_drop")
    z = normal_ppf(confidence) + normal_ppf(power)
    return max(2, math.ceil((z * float(sd_diff) / gap) ** 2 - 1e-9))


def estimate_sd_diff(values: Union[Sequence[float], Mapping[str, float]], rho: float = DEFAULT_RHO) -> float:
    """sd of per-query differences expected between two versions of a pipeline, from one
    version's per-query values: ``sd * sqrt(2 * (1 - rho))`` (equal variances, correlation
    ``rho`` between the versions' per-query values; see :data:`DEFAULT_RHO`)."""
    if isinstance(values, Mapping):
        values = list(values.values())
    x = np.asarray(list(values), dtype=np.float64)
    if len(x) < 2:
        raise ValueError("need at least 2 per-query values")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
    return float(np.std(x, ddof=1)) * math.sqrt(2.0 * (1.0 - rho))


def noninferiority_pass_probability(
    true_drop: float, sd_diff: float, n: int, *, max_drop: float, confidence: float = 0.95
) -> float:
    """Probability (normal approximation) that the non-inferiority gate passes a change
    whose true mean drop is ``true_drop``: ``Phi((max_drop - true_drop) / se - z_{1-alpha})``."""
    if sd_diff <= 0:
        return 1.0 if true_drop <= max_drop else 0.0
    se = float(sd_diff) / math.sqrt(n)
    return normal_cdf((float(max_drop) - float(true_drop)) / se - normal_ppf(confidence))
