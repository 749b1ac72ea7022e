"""The normal and Student t distributions, without scipy (pure, no I/O).

Checked against scipy by ``tests/stats/test_distributions.py``.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

__all__ = ["normal_cdf", "normal_ppf", "betainc", "t_cdf", "t_sf", "t_ppf", "t_two_sided_p", "mean_interval"]

# Acklam's rational approximation of the normal quantile (relative error < 1.15e-9),
# refined by one Halley step on math.erfc, which brings it to double precision.
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)


def normal_cdf(x: float) -> float:
    """Standard normal CDF, ``0.5 * erfc(-x / sqrt(2))`` (accurate in both tails)."""
    return 0.5 * math.erfc(-x / _SQRT2)


def normal_ppf(p: float) -> float:
    """Standard normal quantile: Acklam's approximation + one Halley step (|error| ~1e-15).

    ``p`` in (0, 1); 0 and 1 give -inf and +inf."""
    p = float(p)
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"normal_ppf needs 0 <= p <= 1, got {p!r}")
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p > 0.5:  # 1 - p is exact here (Sterbenz), and the lower tail is the accurate one
        return -normal_ppf(1.0 - p)
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    else:
        q = p - 0.5
        r = q * q
        x = (
            (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
            * q
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
        )
    # Halley refinement (cubic convergence)
    e = 0.5 * math.erfc(-x / _SQRT2) - p
    u = e * _SQRT2PI * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = tiny if abs(d) < tiny else d
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float, y: Optional[float] = None) -> float:
    """Regularized incomplete beta ``I_x(a, b)``; ``y = 1 - x`` may be given exactly
    (avoids the cancellation of computing ``1 - x`` when ``x`` is close to 1)."""
    if y is None:
        y = 1.0 - x
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(y)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided tail P(|T| >= |t|) of Student's t with ``df`` degrees of freedom."""
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    t2 = t * t
    x = df / (df + t2)
    y = t2 / (df + t2)
    return betainc(0.5 * df, 0.5, x, y)


def t_cdf(t: float, df: float) -> float:
    """Student t CDF via the regularized incomplete beta function."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df!r}")
    half = 0.5 * t_two_sided_p(t, df)
    return half if t < 0 else 1.0 - half


def t_sf(t: float, df: float) -> float:
    """Student t survival function ``1 - t_cdf`` (accurate in the upper tail)."""
    return t_cdf(-t, df)


def _t_pdf(t: float, df: float) -> float:
    return math.exp(
        math.lgamma(0.5 * (df + 1))
        - math.lgamma(0.5 * df)
        - 0.5 * math.log(df * math.pi)
        - 0.5 * (df + 1) * math.log1p(t * t / df)
    )


def t_ppf(p: float, df: float) -> float:
    """Student t quantile: safeguarded Newton on :func:`t_cdf` (bisection fallback)."""
    if not 0.0 < p < 1.0:
        return _t_ppf_at_the_ends(p)
    if p > 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    return _t_ppf_lower_half(p, df)


def _t_ppf_at_the_ends(p: float) -> float:
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    raise ValueError(f"t_ppf needs 0 <= p <= 1, got {p!r}")


def _t_ppf_lower_half(p: float, df: float) -> float:
    """The t quantile of ``0 < p < 0.5``: Newton steps kept inside a shrinking bracket
    ``[lo, hi]`` of the root; a step that leaves it is a bisection instead."""
    # bracket [lo, 0] with cdf(lo) <= p
    lo = min(normal_ppf(p), -1.0)
    while t_cdf(lo, df) > p:
        lo *= 2.0
    hi = 0.0
    x = normal_ppf(p)
    x = x if lo < x < hi else 0.5 * (lo + hi)
    for _ in range(200):
        f = t_cdf(x, df) - p
        if f > 0:
            hi = x
        else:
            lo = x
        pdf = _t_pdf(x, df)
        nx = x - f / pdf if pdf > 0 else 0.5 * (lo + hi)
        if not lo < nx < hi:
            nx = 0.5 * (lo + hi)
        if abs(nx - x) <= 1e-14 * max(1.0, abs(x)):
            return nx
        x = nx
    return x


def mean_interval(
    values: Sequence[float], confidence: float = 0.95
) -> Tuple[Optional[float], Optional[float]]:
    """The Student t interval of the mean of ``values`` (mean +- t(1-a/2, n-1) * sd / sqrt(n)),
    the band a run history draws around each run's value; (None, None) for fewer than 2 values.
    Queries are the sampling unit, as in the paired gate (Sakai, "Statistical Reform in
    Information Retrieval?", SIGIR Forum 2014: t intervals over per-topic values)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    n = int(x.size)
    if n < 2:
        return None, None
    mean = float(x.mean())
    half = -t_ppf((1.0 - confidence) / 2.0, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return mean - half, mean + half
