"""A change-point test over a series of per-run values (issue #37: drift on scheduled runs). Pure
(numpy), deterministic given ``seed``.

Method: the CUSUM change-point analysis with a permutation test of Taylor (2000), "Change-Point
Analysis: A Powerful New Tool For Detecting Changes" (Taylor Enterprises), after Page (1954),
"Continuous inspection schemes", Biometrika 41. For values ``x_1..x_n`` with mean ``m``, the
cumulative sums ``S_k = sum_{i<=k} (x_i - m)`` drift away from 0 when the mean shifts; the
statistic is ``T = max |S_k|`` over the split points that leave at least ``min_segment`` runs on
each side (a shift must be sustained: a single odd run is no drift), and the shift is estimated
at the ``k`` that attains it (the least-squares split of a single mean shift).

Its p-value is a permutation test: ``T`` of ``n_permutations`` random reorderings of the same
values, ``p = (1 + #{T_perm >= T}) / (1 + n_permutations)`` (never 0). Under "no change" the
runs are exchangeable and the test is exact: **the false-alarm rate of one series is at most
``alpha``** (a flag when ``p <= alpha``), whatever the values' distribution. Runs of an unchanged
system that are not exchangeable (a trend, or values correlated from run to run) break that
promise; ``tests/stats/test_changepoint.py`` and ``benchmarks/history_slide.py`` measure the rate
on simulated runs of an unchanged system. ``min_shift`` adds a practical bound: a shift smaller
than it is never flagged, however significant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

import numpy as np

__all__ = ["ChangePoint", "change_point", "MIN_RUNS"]

#: fewer runs than this cannot show a sustained shift (min_segment runs on each side)
MIN_RUNS = 6


@dataclass(frozen=True)
class ChangePoint:
    """The most likely single shift of a series and whether it is significant."""

    n: int  # runs in the series
    index: Optional[int]  # the first run after the shift (0-based), None when not testable
    before: float  # mean of the runs before it
    after: float  # mean of the runs from it on
    statistic: float  # max |CUSUM| over the allowed split points
    p_value: float  # permutation p of "no change" (1.0 when not testable)
    alpha: float
    min_shift: float
    permutations: int
    min_segment: int = 3

    @property
    def shift(self) -> float:
        return self.after - self.before

    @property
    def flagged(self) -> bool:
        """A sustained shift: significant at ``alpha`` and at least ``min_shift``."""
        return self.index is not None and self.p_value <= self.alpha and abs(self.shift) >= self.min_shift

    def as_dict(self) -> Dict[str, Any]:
        return {
            "runs": self.n,
            "index": self.index,
            "before": self.before,
            "after": self.after,
            "shift": self.shift,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "min_shift": self.min_shift,
            "permutations": self.permutations,
            "flagged": self.flagged,
        }


def _max_cusum(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """max over split points ``k`` in [lo, hi] of ``|S_k|`` per row of ``x`` (rows: series)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    s = np.cumsum(centred, axis=-1)[..., lo - 1 : hi]  # S_k for k = lo..hi (k runs before the split)
    return np.abs(s).max(axis=-1)


def change_point(
    values: Sequence[float],
    *,
    alpha: float = 0.05,
    min_segment: int = 3,
    min_shift: float = 0.0,
    n_permutations: int = 2000,
    seed: int = 0,
) -> ChangePoint:
    """The CUSUM change-point test of ``values`` (oldest first; see the module doc)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if min_segment < 1:
        raise ValueError(f"min_segment must be at least 1, got {min_segment!r}")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be at least 1, got {n_permutations!r}")
    x = np.asarray([float(v) for v in values], dtype=float)
    if not np.all(np.isfinite(x)):
        raise ValueError("every value of the series must be a finite number")
    n = len(x)
    lo, hi = min_segment, n - min_segment
    if n < 2 * min_segment or hi < lo:
        mean = float(x.mean()) if n else math.nan
        return ChangePoint(n, None, mean, mean, 0.0, 1.0, alpha, min_shift, 0, min_segment)
    centred = x - x.mean()
    s = np.cumsum(centred)[lo - 1 : hi]
    k = int(np.argmax(np.abs(s))) + lo  # runs before the split
    t = float(np.abs(s).max())
    p = _permutation_p(x, t, lo, hi, n_permutations, seed)
    return ChangePoint(
        n, k, float(x[:k].mean()), float(x[k:].mean()), t, p, alpha, min_shift, n_permutations, min_segment
    )


def _permutation_p(x: np.ndarray, t: float, lo: int, hi: int, n_permutations: int, seed: int) -> float:
    """``(1 + #{T_perm >= T}) / (1 + B)`` over ``B`` random orders of ``x``, in chunks."""
    if t == 0.0:  # a constant series (an unchanged system on fixed data): nothing moved
        return 1.0
    rng = np.random.Generator(np.random.PCG64(seed))
    hits = 0
    chunk = max(1, 2_000_000 // len(x))
    tolerance = 1e-12 * max(1.0, t)  # the same order up to summation rounding counts as a hit
    for start in range(0, n_permutations, chunk):
        m = min(chunk, n_permutations - start)
        perms = rng.permuted(np.tile(x, (m, 1)), axis=1)
        hits += int(np.count_nonzero(_max_cusum(perms, lo, hi) >= t - tolerance))
    return (hits + 1) / (n_permutations + 1)
