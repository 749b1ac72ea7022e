"""Per-grade nDCG gains (trec_eval ``-m ndcg.1=3,2=9``, ir_measures ``nDCG(gains={...})``).

trec_eval 9.0.8 ``m_ndcg.c`` (``setup_gains``): a grade without a given gain gains its own
value; a given gain may be 0 or negative, and grade 0 may be given one; the ideal ranking is
the judged documents by gain, best first, those with a gain > 0 only. Here a grade without a
given gain gains what the profile gives it (``exp``: 2^g - 1; ``trec``: g, as trec_eval); a
negative grade gains 0 (trec_eval reads it as unjudged). ``--gains`` applies to ``ndcg`` and
``ndcg@k`` alike (trec_eval's ``ndcg_cut`` has no gain parameter; ir_measures' nDCG@k has).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Dict, Mapping, Optional, Tuple

if TYPE_CHECKING:
    import numpy as np

    from .columnar import QrelsColumns

__all__ = ["GainTable", "parse_gains", "ideal_by_gain", "gain_overflow"]


class GainTable:
    """Gains of the grades: ``table`` where given, else the profile's (``default``)."""

    def __init__(self, table: Mapping[int, float], default: str):
        self.table = dict(table)
        self.default = default

    def of(self, grades: np.ndarray) -> np.ndarray:
        import numpy as np

        g = np.asarray(grades, dtype=np.float64)
        out = np.where(g > 0, np.exp2(g) - 1.0 if self.default == "exp" else g, 0.0)
        for grade, gain in self.table.items():
            out[g == grade] = gain
        return out

    def __repr__(self) -> str:
        return ",".join(f"{k}:{v:g}" for k, v in sorted(self.table.items()))


_GRADE = re.compile(r"[+-]?[0-9]+")
# nan and inf are read, then refused as not finite by name
_GAIN = re.compile(r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|nan|inf|infinity)", re.IGNORECASE)


def parse_gains(text: str) -> Dict[int, float]:
    """``"0:0,1:1,2:3"`` -> ``{0: 0.0, 1: 1.0, 2: 3.0}``; ``ValueError`` (one line) otherwise.
    ``=`` is accepted for ``:`` (trec_eval's ``1=3``)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"gains: expected GRADE:GAIN,... (e.g. 0:0,1:1,2:3), got {text!r}")
    out: Dict[int, float] = {}
    for part in text.split(","):
        grade_text, sep, gain_text = part.replace("=", ":").partition(":")
        try:  # ASCII only: int() and float() also read '١' (Arabic-Indic) and '1_0'
            if not sep or not _GRADE.fullmatch(grade_text.strip()) or not _GAIN.fullmatch(gain_text.strip()):
                raise ValueError
            grade, gain = int(grade_text.strip()), float(gain_text.strip())
        except ValueError:
            raise ValueError(f"gains: {part.strip()!r} is not GRADE:GAIN (e.g. 2:3)") from None
        if grade < 0:
            raise ValueError(f"gains: grade {grade} is negative (a negative grade gains 0: it is unjudged)")
        if not math.isfinite(gain) or abs(gain) > 1e12:
            raise ValueError(
                f"gains: the gain of grade {grade} must be a finite number, got {gain_text.strip()!r}"
            )
        if grade in out:
            raise ValueError(f"gains: grade {grade} is given twice")
        out[grade] = gain
    return out


def ideal_by_gain(qrels: QrelsColumns, gains: GainTable) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, 0-based rank, grade) of the ideal rankings: the judged docs with a gain > 0,
    by gain descending (``QrelsColumns.ideal`` orders by grade: the same for monotone gains)."""
    import numpy as np

    gain = gains.of(qrels.grades)
    pos = gain > 0
    iq, ig, igain = qrels.judged_q[pos], qrels.grades[pos], gain[pos]
    order = np.lexsort((-igain, iq))
    iq, ig = iq[order], ig[order]
    ir = np.arange(len(iq), dtype=np.int64) - np.searchsorted(iq, iq, side="left")
    return iq.astype(np.intp), ir.astype(np.intp), ig.astype(np.float64)


#: the largest grade whose exp gain (2^g - 1) a float holds is 1023; the sum of a query's gains
#: must stay finite too, or its ideal DCG is inf and nDCG inf/inf = NaN
def gain_overflow(grades: np.ndarray, query: np.ndarray, gain: object, with_err: bool) -> Optional[str]:
    """Why the judgments' grades (``query``: each one's query) cannot be scored, or None: a
    grade whose gain (``"exp"``: 2^g - 1, ``"linear"``, or a :class:`GainTable`), or a query's
    sum of gains, is too large for a float (its nDCG would be inf / inf = NaN), and for ERR
    (which divides 2^g by 2^max-grade whatever the profile) a grade of 1024 or more."""
    import numpy as np

    if not len(grades):
        return None
    fix = "map the grades onto a smaller scale (judgments.grades.map, --grade-map)"
    g = grades.astype(np.float64)
    with np.errstate(over="ignore"):
        if isinstance(gain, GainTable):
            gains = gain.of(g)
        else:
            gains = np.where(g > 0, np.exp2(g) - 1.0 if gain == "exp" else g, 0.0)
        sums = np.bincount(query, weights=np.maximum(gains, 0.0)) if np.isfinite(gains).all() else gains
    if not np.isfinite(sums).all():
        bad = int(grades[~np.isfinite(gains)].min()) if not np.isfinite(gains).all() else int(grades.max())
        exp = isinstance(gain, GainTable) and gain.default == "exp" or gain == "exp"
        shown = f"gains 2^{bad} - 1 under the exp profile" if exp else "gains"
        summed = "" if not np.isfinite(gains).all() else " once a query's gains are summed"
        return f"relevance grade {bad} {shown}, too large for a float{summed} (nDCG would be NaN): {fix}" + (
            ", or use the trec profile (gain = grade)" if exp else ""
        )
    top = int(grades.max())
    if with_err and top >= 1024:
        return f"relevance grade {top}: ERR divides 2^grade by 2^{top}, too large for a float: {fix}"
    return None
