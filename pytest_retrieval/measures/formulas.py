"""The measures' formulas, each vectorised over every judged hit of every query at once.

A formula takes the :class:`JudgedHits` of a run and the cutoff ``k`` (None: the whole
ranking) and returns one float64 value per evaluated query; :mod:`.registry` declares which
measure each formula computes. The conventions (grades, gains, relevance threshold, padding
past the end of a ranking) are in :mod:`.metrics`' docstring.

numpy is imported inside the functions: the registry refers to them, and parsing a metric
name must not import numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Formula",
    "JudgedHits",
    "ndcg",
    "mrr",
    "recall",
    "precision",
    "hit",
    "judged",
    "average_precision",
    "r_precision",
]


class JudgedHits:
    """Judged docs found in the rankings, sorted by (query, rank): ``q`` (index of the
    evaluated query), ``r`` (0-based rank), ``g`` (grade); with what the formulas read
    besides: R per query (``num_rel``), the ideal ranking (``ideal``: query, rank, grade)
    and the nDCG gain (``"exp"``, ``"linear"`` or a :class:`~.gains.GainTable`)."""

    def __init__(
        self,
        q: np.ndarray,
        r: np.ndarray,
        g: np.ndarray,
        n_q: int,
        num_rel: np.ndarray,
        threshold: int,
        ideal: Tuple[np.ndarray, np.ndarray, np.ndarray],
        gain: Any,
    ):
        self.q, self.r, self.g = q, r, g
        self.n_q = n_q
        self.num_rel = num_rel
        self.rel = g >= threshold
        self.ideal = ideal
        self.gain = gain

    def cut(self, k: Optional[int]) -> np.ndarray:
        import numpy as np

        return np.ones(len(self.r), dtype=bool) if k is None else self.r < k

    def count(self, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        return np.bincount(self.q[mask], minlength=self.n_q).astype(np.float64)

    def per_rel(self, values: np.ndarray) -> np.ndarray:
        """values / R, 0 where R = 0 (threshold above every grade of the query)."""
        import numpy as np

        out = np.zeros(self.n_q)
        np.divide(values, self.num_rel, out=out, where=self.num_rel > 0)
        return out


#: A measure's formula: (judged hits, cutoff or None) -> one value per evaluated query.
Formula = Callable[[JudgedHits, Any], "np.ndarray"]


def _gain(grades: np.ndarray, gain: Any) -> np.ndarray:
    """The nDCG gain of each grade: ``"exp"`` (2^g - 1), ``"linear"`` (g), or a
    :class:`~.gains.GainTable` (per-grade gains); 0 for a grade <= 0 unless a table gives one."""
    import numpy as np

    if not isinstance(gain, str):
        return gain.of(grades)
    return np.where(grades > 0, np.exp2(grades) - 1.0 if gain == "exp" else grades, 0.0)


def ndcg(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    import numpy as np

    gains = _gain(h.g, h.gain)
    mask = (gains != 0) & h.cut(k)
    r = h.r[mask]
    dcg = np.bincount(h.q[mask], weights=gains[mask] / np.log2(r + 2.0), minlength=h.n_q)
    iq, ir, ig = h.ideal
    imask = slice(None) if k is None else ir < k
    idcg = np.bincount(
        iq[imask], weights=_gain(ig[imask], h.gain) / np.log2(ir[imask] + 2.0), minlength=h.n_q
    )
    out = np.zeros(h.n_q)
    np.divide(dcg, idcg, out=out, where=idcg > 0)
    return out


def mrr(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    import numpy as np

    mask = h.rel & h.cut(k)
    q, r = h.q[mask], h.r[mask]
    out = np.zeros(h.n_q)
    queries, first = np.unique(q, return_index=True)  # q is sorted: first = best rank
    out[queries] = 1.0 / (r[first] + 1.0)
    return out


def recall(h: JudgedHits, k: int) -> np.ndarray:
    return h.per_rel(h.count(h.rel & h.cut(k)))


def precision(h: JudgedHits, k: int) -> np.ndarray:
    return h.count(h.rel & h.cut(k)) / k


def hit(h: JudgedHits, k: int) -> np.ndarray:
    import numpy as np

    return (h.count(h.rel & h.cut(k)) > 0).astype(np.float64)


def judged(h: JudgedHits, k: int) -> np.ndarray:
    return h.count(h.cut(k)) / k


def average_precision(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    import numpy as np

    mask = h.rel & h.cut(k)
    q, r = h.q[mask], h.r[mask]
    # i-th relevant doc of its query (1-based) = position - first position of the query
    nth = np.arange(1, len(q) + 1) - np.searchsorted(q, q, side="left")
    return h.per_rel(np.bincount(q, weights=nth / (r + 1.0), minlength=h.n_q))


def r_precision(h: JudgedHits, k: None) -> np.ndarray:
    mask = h.rel & (h.r < h.num_rel[h.q])
    return h.per_rel(h.count(mask))
