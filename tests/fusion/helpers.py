"""Shared helpers of the fusion tests: float32 rounding done independently of the code under
test (struct round-trips, exact rationals), and short Ranking builders."""

from __future__ import annotations

import struct
from fractions import Fraction

from pytest_retrieval.types import Ranking


def f32(x: float) -> float:
    """Round a double to the nearest float32 (ties to even), returned as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_exact(x: Fraction) -> float:
    """Correctly rounded float32 of an exact positive rational (normal range only)."""
    assert x > 0
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    # now 2**e <= x < 2**(e+1): 24-bit significand, round half to even (Python round)
    m = round(x * Fraction(2) ** (23 - e))
    return float(Fraction(m) * Fraction(2) ** (e - 23))


def R(*pairs) -> Ranking:
    return Ranking([d for d, _ in pairs], [float(s) for _, s in pairs])


def ids(r: Ranking):
    return list(r.doc_ids)
