"""Per-query values shaped like a retrieval metric's, for the statistics tests."""

from __future__ import annotations

import numpy as np


def ndcg_like(rng, n):
    """Per-query values shaped like nDCG@10: a lump at 0, a lump at 1, the rest between."""
    u = rng.random(n)
    v = rng.beta(2, 2, n)
    return np.where(u < 0.15, 0.0, np.where(u > 0.7, 1.0, v))


def as_map(values, prefix="q"):
    return {f"{prefix}{i}": float(v) for i, v in enumerate(values)}
