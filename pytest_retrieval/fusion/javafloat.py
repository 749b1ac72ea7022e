"""Java ``float`` arithmetic on numpy float32: the engines' constants and the conversions that
must round exactly as the JVM does (one rounding, libm's ``exp`` / ``log``)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence, Tuple

import numpy as np

__all__ = [
    "FLOAT_MAX_VALUE",
    "FLOAT_MIN_VALUE",
    "checked_float32_scores",
    "exp_to_float32",
    "float32_scores",
    "fraction_to_float32",
    "is_finite_number",
    "logs",
]

F32 = np.float32
FLOAT_MIN_VALUE = F32(2.0**-149)  # java.lang.Float.MIN_VALUE (smallest positive, not most negative!)
FLOAT_MAX_VALUE = F32(np.finfo(np.float32).max)

# Score types whose float64 value rounds to float32 as ``np.float32(score)`` does (numpy converts
# a Python int through a double too); an np.int64 beyond 2**53 would be rounded twice that way.
_VIA_DOUBLE = frozenset({float, int, np.float64, np.float32, np.int32})


def float32_scores(scores: Sequence[Any]) -> np.ndarray:
    """``np.float32(s)`` of every score, as one float32 array (``(float) score`` in Java: beyond
    the float range, an infinity, silently)."""
    with np.errstate(over="ignore"):
        if set(map(type, scores)) <= _VIA_DOUBLE:
            return np.array(scores, dtype=np.float64).astype(np.float32)
        return np.array([F32(s) for s in scores], dtype=np.float32).reshape(len(scores))


def checked_float32_scores(scores: Sequence[Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(the scores as float32, 0.0 where not a finite number; which ones are)."""
    if set(map(type, scores)) <= _VIA_DOUBLE:
        vals = np.array(scores, dtype=np.float64)
        ok = np.isfinite(vals)
        return np.where(ok, vals, 0.0).astype(np.float32), ok
    ok = np.array([is_finite_number(x) for x in scores], dtype=bool).reshape(len(scores))
    return float32_scores([x if good else 0.0 for x, good in zip(scores, ok)]), ok


def is_finite_number(x: object) -> bool:
    return (
        isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)  # type: ignore[arg-type]
    )


def logs(x: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``Math.log((double) x)`` (float64) where ``where``, else 0.0. ``math.log``, not ``np.log``:
    the engine (java.lang.Math.log) uses the platform's libm; numpy's SIMD log may differ in the
    last bit of the double."""
    out = np.zeros(x.shape, dtype=np.float64)
    out[where] = list(map(math.log, x[where].astype(np.float64).tolist()))
    return out


def exp_to_float32(x: np.ndarray) -> np.ndarray:
    """``(float) Math.exp((double) x)`` for a float32 array, bit-identical to
    ``np.float32(math.exp(float(x)))``: numpy's exp may differ from libm's in the last bit of
    the double, which only matters when the double lies within a few ulps of a float32
    rounding boundary; those elements are recomputed with ``math.exp``."""
    with np.errstate(all="ignore"):
        d = np.exp(x.astype(np.float64))
        out = d.astype(np.float32)
        # exp > 0: d * (1 -/+ 2**-49) brackets every double within ~8 ulps of d
        lo = (d * (1.0 - 2.0**-49)).astype(np.float32)
        hi = (d * (1.0 + 2.0**-49)).astype(np.float32)
        unsure = (lo != hi) | ~np.isfinite(d) | (d == 0.0)
    if unsure.any():
        idx = np.nonzero(unsure)
        vals = x[idx].astype(np.float64).tolist()
        exact = []
        for v in vals:
            try:
                exact.append(math.exp(v))
            except OverflowError:
                exact.append(math.inf)
        with np.errstate(over="ignore"):
            out[idx] = np.asarray(exact, dtype=np.float64).astype(np.float32)
    return out


def fraction_to_float32(x: Fraction) -> float:
    """Correctly rounded (ties-to-even) float32 of an exact rational."""
    approx = F32(float(x))  # float(Fraction) is correctly rounded to double
    candidates = (np.nextafter(approx, F32(-np.inf)), approx, np.nextafter(approx, F32(np.inf)))
    # the smallest error; on a tie, the even mantissa (min keeps the first of equal keys)
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))
    return float(best)
