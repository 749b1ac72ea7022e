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
from typing import TYPE_CHECKING, Dict, Mapping, Tuple

if TYPE_CHECKING:
    import numpy as np

    from .columnar import QrelsColumns

__all__ = ["GainTable", "parse_gains", "ideal_by_gain"]


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
