"""User-model measures over graded or binary gains, vectorised as :mod:`.formulas` is.

* ERR (Chapelle, Metzler, Zhang and Grinspan, "Expected Reciprocal Rank for Graded
  Relevance", CIKM 2009, eq. 3 and 4): the user stops at rank r with probability
  R_r = (2^g_r - 1) / 2^gmax; ERR = sum_r (1/r) R_r prod_{i<r} (1 - R_i).
* RBP (Moffat and Zobel, "Rank-Biased Precision for Measurement of Retrieval
  Effectiveness", TOIS 27(1), 2008, eq. 5): (1 - p) sum_i r_i p^(i-1), binary r_i. The
  value is the base of the paper's [base, base + residual] interval: unjudged documents
  count 0 and the residual is not added.
* NCG (Jarvelin and Kekalainen, "Cumulated Gain-Based Evaluation of IR Techniques", TOIS
  20(4), 2002): the cumulated gain of the top k over that of the ideal top k.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .formulas import divide, gain_of, segment_cumsum

if TYPE_CHECKING:
    import numpy as np

    from .formulas import JudgedHits

__all__ = ["err", "rbp", "ncg"]


def err(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    """gmax: the highest grade of the judgments (all queries); grades <= 0 and unjudged
    documents stop no user (R = 0) and leave the product unchanged."""
    import numpy as np

    mask = (h.g > 0) & h.cut(k)
    q, r = h.q[mask], h.r[mask]
    stop = (np.exp2(h.g[mask]) - 1.0) / np.exp2(h.max_grade)
    reach = np.exp(segment_cumsum(q, np.log1p(-stop), inclusive=False))  # prod_{i<r} (1 - R_i)
    return np.bincount(q, weights=stop * reach / (r + 1.0), minlength=h.n_q)


def rbp(h: JudgedHits, k: Optional[int], p: float) -> np.ndarray:
    import numpy as np

    mask = h.rel & h.cut(k)
    return (1.0 - p) * np.bincount(h.q[mask], weights=np.power(p, h.r[mask]), minlength=h.n_q)


def ncg(h: JudgedHits, k: Optional[int]) -> np.ndarray:
    import numpy as np

    mask = (h.g > 0) & h.cut(k)
    cg = np.bincount(h.q[mask], weights=gain_of(h.g[mask], h.gain), minlength=h.n_q)
    iq, ir, ig = h.ideal
    imask = slice(None) if k is None else ir < k
    icg = np.bincount(iq[imask], weights=gain_of(ig[imask], h.gain), minlength=h.n_q)
    return divide(cg, icg)
