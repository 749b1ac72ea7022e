"""Multiple-testing correction: Holm's step-down adjustment of a family of p-values (pure,
no I/O). The strata of the baseline gate use it (:mod:`.strata`).

Holm (1979), "A simple sequentially rejective multiple test procedure": controls the
family-wise error rate at ``alpha`` under any dependence between the tests, and rejects
at least what Bonferroni rejects.
"""

from __future__ import annotations

import math
from typing import Dict, Mapping, Tuple

__all__ = ["holm"]


def holm(pvalues: Mapping[str, float], alpha: float = 0.05) -> Dict[str, Tuple[float, bool]]:
    """Holm-Bonferroni step-down: ``{name: (adjusted_p, reject)}``.

    ``adjusted_p(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))`` over the p-values sorted
    ascending (monotone, capped at 1); ``reject`` when ``adjusted_p <= alpha`` (as
    statsmodels' ``multipletests(method="holm")``)."""
    items = []
    for k, p in pvalues.items():
        p = float(p)
        if math.isnan(p) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p-value of {k!r} must be in [0, 1], got {p!r}")
        items.append((p, str(k), k))
    items.sort()
    m = len(items)
    out: Dict[str, Tuple[float, bool]] = {}
    running = 0.0
    for i, (p, _, k) in enumerate(items):
        running = min(1.0, max(running, (m - i) * p))
        out[k] = (running, running <= alpha)
    return out
