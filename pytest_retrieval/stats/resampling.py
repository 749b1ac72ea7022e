"""What every bootstrap here shares: the seeded generator, ``alpha`` from a confidence level,
order-statistic quantiles and the chunk size that bounds memory (pure: numpy, no I/O).

Everything is deterministic given ``seed`` (numpy ``Generator(PCG64)``).
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

__all__ = ["CHUNK_CELLS", "alpha_of", "generator", "lower_bound", "upper_bound"]

#: Cells (resamples x queries) handled per vectorised chunk: bounds memory (~64 MB of
#: float64 + indices) whatever n_resamples and n are.
CHUNK_CELLS = 4_000_000


def alpha_of(confidence: float) -> float:
    """``1 - confidence``, rounded to 12 decimals so that 1 - 0.95 is exactly 0.05."""
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1.0):
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}")
    return round(1.0 - float(confidence), 12)


def generator(seed: Union[int, np.random.SeedSequence]) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _cut(alpha: float, b: int) -> int:
    """Order-statistic index (1-based) of the alpha-quantile of b resamples."""
    return min(b, max(1, math.ceil(alpha * b - 1e-9)))


def lower_bound(sorted_values: np.ndarray, level: float) -> float:
    """The ``ceil(level * B)``-th smallest value (inverted-CDF quantile)."""
    return float(sorted_values[_cut(level, len(sorted_values)) - 1])


def upper_bound(sorted_values: np.ndarray, level: float) -> float:
    """The ``ceil(level * B)``-th largest value."""
    return float(sorted_values[len(sorted_values) - _cut(level, len(sorted_values))])
