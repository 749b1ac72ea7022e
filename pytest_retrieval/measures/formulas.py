"""The measures' formulas, each vectorised over every judged hit of every query at once.

A formula takes the :class:`JudgedHits` of a run and the cutoff ``k`` (None: the whole
ranking), and a measure with a parameter (``rbp(p)``) that parameter, and returns one float64
value per evaluated query; :mod:`.registry` declares which measure each formula computes.
trec_eval's further measures are in :mod:`.formulas_trec`, the user-model ones (ERR, RBP,
NCG) in :mod:`.formulas_gain`; :data:`AGGREGATES` makes the figure over the queries. The conventions (grades, gains, relevance threshold, padding
past the end of a ranking) are in :mod:`.metrics`' docstring.

numpy is imported inside the functions: the registry refers to them, and parsing a metric
name must not import numpy.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

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
    "judged_ret",
    "set_f",
    "set_map",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "AGGREGATES",
    "nth_in_query",
    "segment_cumsum",
    "gain_of",
    "divide",
]


class JudgedHits:
    """Judged docs found in the rankings, sorted by (query, rank): ``q`` (index of the
    evaluated query), ``r`` (0-based rank), ``g`` (grade); with what the formulas read
    besides: R per query (``num_rel``), the ideal ranking (``ideal``: query, rank, grade),
    the nDCG gain (``"exp"``, ``"linear"`` or a :class:`~.gains.GainTable`), the ranking
    lengths (``n_ret``), the judged non-relevant documents per query (``num_nonrel``: grades
    0 to threshold - 1) and the highest grade of the judgments (``max_grade``)."""

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
        n_ret: Optional[np.ndarray] = None,
        num_nonrel: Optional[np.ndarray] = None,
        max_grade: float = 0.0,
    ):
        import numpy as np

        self.q, self.r, self.g = q, r, g
        self.n_q = n_q
        self.num_rel = num_rel
        self.threshold = threshold
        self.rel = g >= threshold
        self.ideal = ideal
        self.gain = gain
        self.n_ret = np.zeros(n_q) if n_ret is None else n_ret
        self.num_nonrel = np.zeros(n_q) if num_nonrel is None else num_nonrel
        self.max_grade = max_grade

    def condensed(self) -> JudgedHits:
        """The hits of the rankings with every document without a judgment removed (Sakai
        2007's condensed lists; trec_eval -J, form_res_rels.c ``judged_docs_only_flag``, which
        keeps grades >= 0 only): ranks renumbered, rankings as long as their judged part.
        Needs every judged hit (not only grades > 0)."""
        keep = self.g >= 0
        q = self.q[keep]
        return JudgedHits(
            q,
            nth_in_query(q) - 1,
            self.g[keep],
            n_q=self.n_q,
            num_rel=self.num_rel,
            threshold=self.threshold,
            ideal=self.ideal,
            gain=self.gain,
            n_ret=self.count_of(q),
            num_nonrel=self.num_nonrel,
            max_grade=self.max_grade,
        )

    def count_of(self, q: np.ndarray) -> np.ndarray:
        import numpy as np

        return np.bincount(q, minlength=self.n_q).astype(np.float64)

    def cut(self, k: Optional[int]) -> np.ndarray:
        import numpy as np

        return np.ones(len(self.r), dtype=bool) if k is None else self.r < k

    def count(self, mask: np.ndarray) -> np.ndarray:
        import numpy as np

        return np.bincount(self.q[mask], minlength=self.n_q).astype(np.float64)

    def per_rel(self, values: np.ndarray) -> np.ndarray:
        """values / R, 0 where R = 0 (threshold above every grade of the query)."""
        return divide(values, self.num_rel)


def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, 0 where b = 0."""
    import numpy as np

    out = np.zeros(len(a))
    np.divide(a, b, out=out, where=b > 0)
    return out


def nth_in_query(q: np.ndarray) -> np.ndarray:
    """1-based position of each element among those of its query (``q`` sorted)."""
    import numpy as np

    return np.arange(1, len(q) + 1) - np.searchsorted(q, q, side="left")


def segment_cumsum(q: np.ndarray, values: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Running sum of ``values`` within each query (``q`` sorted), with or without the
    element itself. One global cumsum less its value at the query's start: exact for
    integer counts, an absolute error of a few ulps of the global sum for floats."""
    import numpy as np

    total = np.cumsum(values)
    start = np.searchsorted(q, q, side="left")
    out = total - (total[start] - values[start])
    return out if inclusive else out - values


#: A measure's formula: (judged hits, cutoff or None[, parameter]) -> one value per evaluated
#: query.
Formula = Callable[..., "np.ndarray"]


def gain_of(grades: np.ndarray, gain: Any) -> np.ndarray:
    """The nDCG gain of each grade: ``"exp"`` (2^g - 1), ``"linear"`` (g), or a
    :class:`~.gains.GainTable` (per-grade gains); 0 for a grade <= 0 unless a table gives one."""
    import numpy as np

    if not isinstance(gain, str):
        return gain.of(grades)
    return np.where(grades > 0, np.exp2(grades) - 1.0 if gain == "exp" else grades, 0.0)


def ndcg(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    import numpy as np

    gains = gain_of(h.g, h.gain)
    mask = (gains != 0) & h.cut(k)
    r = h.r[mask]
    dcg = np.bincount(h.q[mask], weights=gains[mask] / np.log2(r + 2.0), minlength=h.n_q)
    iq, ir, ig = h.ideal
    imask = slice(None) if k is None else ir < k
    idcg = np.bincount(
        iq[imask], weights=gain_of(ig[imask], h.gain) / np.log2(ir[imask] + 2.0), minlength=h.n_q
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


def recall(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    # k None: trec_eval set_recall (m_set_recall.c), num_rel_ret / num_rel
    return h.per_rel(h.count(h.rel & h.cut(k)))


def precision(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    if k is None:  # trec_eval set_P (m_set_P.c): num_rel_ret / num_ret, 0 when nothing retrieved
        return divide(h.count(h.rel), h.n_ret)
    return h.count(h.rel & h.cut(k)) / k


def hit(h: JudgedHits, k: int) -> np.ndarray:
    import numpy as np

    return (h.count(h.rel & h.cut(k)) > 0).astype(np.float64)


def judged(h: JudgedHits, k: int) -> np.ndarray:
    return h.count(h.cut(k)) / k


def judged_ret(h: JudgedHits, k: int) -> np.ndarray:
    # ir_measures judged_provider.py: judged in the top k / len(top k), the run cut at k
    import numpy as np

    return divide(h.count(h.cut(k)), np.minimum(h.n_ret, k))


def num_ret(h: JudgedHits, k: None) -> np.ndarray:
    return h.n_ret.copy()  # m_num_ret.c


def num_rel(h: JudgedHits, k: None) -> np.ndarray:
    return h.num_rel.copy()  # m_num_rel.c: judged grade >= relevance level


def num_rel_ret(h: JudgedHits, k: None) -> np.ndarray:
    return h.count(h.rel)  # m_num_rel_ret.c


def set_f(h: JudgedHits, k: None, beta: float) -> np.ndarray:
    """m_set_F.c: (beta + 1) P R / (beta P + R) of set precision and recall; 0 when no
    relevant document is retrieved."""
    rel_ret = h.count(h.rel)
    p, r = divide(rel_ret, h.n_ret), h.per_rel(rel_ret)
    return divide((beta + 1.0) * p * r, (beta * p + r) * (rel_ret > 0))


def set_map(h: JudgedHits, k: None) -> np.ndarray:
    """m_set_map.c: num_rel_ret^2 / (num_ret * num_rel)."""
    rel_ret = h.count(h.rel)
    return divide(rel_ret * rel_ret, h.n_ret * h.num_rel)


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


# --------------------------------------------------------------------------- over the queries

#: trec_eval's geometric mean floors each value at MIN_GEO_MEAN (trec_eval.h)
MIN_GEO_MEAN = 0.00001


def _mean(values: List[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _geometric(values: List[float]) -> float:
    """te_calc_avg_meas_s_gm (meas_avg.c): exp(mean(log(max(v, MIN_GEO_MEAN))))."""
    if not values:
        return math.nan
    return math.exp(math.fsum(math.log(max(v, MIN_GEO_MEAN)) for v in values) / len(values))


def _sum(values: List[float]) -> float:
    return math.fsum(values) if values else math.nan


#: How a measure's per-query values make its figure (registry ``Measure.aggregate``).
AGGREGATES: Dict[str, Callable[[List[float]], float]] = {"mean": _mean, "geometric": _geometric, "sum": _sum}
