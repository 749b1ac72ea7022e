"""Latency: the summary of a timing pass, percentile confidence intervals and the A/B ratio
(pure: numpy, no I/O).

Percentiles are linear interpolation (numpy's default, Hyndman-Fan type 7) everywhere.

Latency (:func:`latency_percentile_ci`, :func:`latency_verdict`, :func:`ab_ratio`)
    Bootstrap CI of a percentile; the gate fails only when the lower confidence bound is
    above the ceiling (we are ``confidence`` sure it is slower). :func:`repetitions_needed`
    says how many samples a percentile needs. :func:`ab_ratio` compares two interleaved
    sample sets (same machine, same time) by the ratio of their percentiles.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .resampling import CHUNK_CELLS, alpha_of, generator, lower_bound, upper_bound

__all__ = [
    "percentile",
    "LatencySummary",
    "summarize_latency",
    "latency_percentile_ci",
    "repetitions_needed",
    "min_samples_to_judge",
    "not_enough_samples",
    "LatencyVerdict",
    "latency_verdict",
    "ABResult",
    "ab_ratio",
    "ab_schedule",
]


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default, 'linear' / Hyndman-Fan type 7)."""
    if not values:
        return math.nan
    xs = sorted(values)
    if len(xs) == 1:
        return float(xs[0])
    pos = (len(xs) - 1) * (q / 100.0)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


@dataclass
class LatencySummary:
    """Client wall time per request (ms), and the server's ``took`` where it reports one."""

    samples_ms: List[float]
    server_took_ms: List[float]
    p50: float
    p95: float
    p99: float
    mean: float
    warmup: int
    repetitions: int
    environment: Dict[str, str] = field(default_factory=dict)
    server_p50: Optional[float] = None
    server_p95: Optional[float] = None
    queries: Optional[int] = None  # queries timed (each ``repetitions`` times)
    of_queries: Optional[int] = None  # queries of the suite (a sample may time fewer)

    def as_dict(self) -> Dict[str, object]:
        out: Dict[str, object] = {
            "p50": self.p50,
            "p95": self.p95,
            "p99": self.p99,
            "mean": self.mean,
            "n": len(self.samples_ms),
            "warmup": self.warmup,
            "repetitions": self.repetitions,
        }
        if self.queries is not None:
            out["queries_timed"] = self.queries
            out["queries"] = self.of_queries
        if self.server_took_ms:
            out["server_took_p50"] = self.server_p50
            out["server_took_p95"] = self.server_p95
        out["environment"] = self.environment
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def environment() -> Dict[str, str]:
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "system": platform.system(),
        "cpus": str(os.cpu_count()),
    }


def summarize_latency(
    wall_ms: Sequence[float],
    took_ms: Sequence[float],
    *,
    warmup: int,
    repetitions: int,
    queries: Optional[int] = None,
    of_queries: Optional[int] = None,
) -> LatencySummary:
    wall = list(wall_ms)
    took = list(took_ms)
    return LatencySummary(
        samples_ms=wall,
        server_took_ms=took,
        p50=percentile(wall, 50),
        p95=percentile(wall, 95),
        p99=percentile(wall, 99),
        mean=(sum(wall) / len(wall)) if wall else math.nan,
        warmup=warmup,
        repetitions=repetitions,
        environment=environment(),
        server_p50=percentile(took, 50) if took else None,
        server_p95=percentile(took, 95) if took else None,
        queries=queries,
        of_queries=of_queries,
    )


# =========================================================================== intervals


def _row_percentiles(x: np.ndarray, q: float) -> np.ndarray:
    """Linear-interpolation percentile (numpy's default) of each row of ``x``."""
    n = x.shape[1]
    pos = (n - 1) * (q / 100.0)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    part = np.partition(x, (lo, hi) if hi != lo else (lo,), axis=1)
    return part[:, lo] + (part[:, hi] - part[:, lo]) * frac


def _point_percentile(x: np.ndarray, q: float) -> float:
    return float(_row_percentiles(x.reshape(1, -1), q)[0])


def _bootstrap_percentiles(
    x: np.ndarray,
    q: float,
    n_resamples: int,
    rng: np.random.Generator,
    paired_with: Optional[np.ndarray] = None,
) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    n = len(x)
    out = np.empty(n_resamples)
    out2 = np.empty(n_resamples) if paired_with is not None else None
    rows = max(1, CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        out[start : start + m] = _row_percentiles(x[idx], q)
        if paired_with is not None and out2 is not None:
            out2[start : start + m] = _row_percentiles(paired_with[idx], q)
    return out, out2


def _samples(samples: Iterable[float], what: str = "latency samples") -> np.ndarray:
    x = np.asarray(list(samples), dtype=np.float64)
    if x.ndim != 1 or len(x) == 0:
        raise ValueError(f"no {what}")
    if not np.isfinite(x).all():
        raise ValueError(f"{what} contain NaN or infinite values")
    return x


def _check_q(q: float) -> float:
    if not (isinstance(q, (int, float)) and 0 < q < 100):
        raise ValueError(f"percentile q must be in (0, 100), got {q!r}")
    return float(q)


def latency_percentile_ci(
    samples_ms: Iterable[float],
    q: float = 95,
    confidence: float = 0.95,
    n_resamples: int = 5000,
    seed: int = 0,
) -> Tuple[float, float, float]:
    """``(point, lo, hi)``: the ``q``-th percentile (linear interpolation, as
    ``stats.percentile``) and its bootstrap bounds: ``lo`` is the one-sided lower
    confidence bound at ``confidence`` (the ``1 - confidence`` quantile of the resampled
    percentiles) and ``hi`` the one-sided upper bound."""
    q = _check_q(q)
    alpha = alpha_of(confidence)
    x = _samples(samples_ms)
    point = _point_percentile(x, q)
    if len(x) == 1:
        return point, point, point
    boot, _ = _bootstrap_percentiles(x, q, n_resamples, generator(seed))
    boot.sort()
    return point, lower_bound(boot, alpha), upper_bound(boot, alpha)


def repetitions_needed(q: float, min_tail_samples: int = 20) -> int:
    """Samples needed so that at least ``min_tail_samples`` lie above the ``q``-th
    percentile: ``ceil(min_tail_samples / (1 - q/100))``. p50: 40, p95: 400, p99: 2000.

    Divide by the number of queries in the latency pass to get ``latency.repetitions``."""
    q = _check_q(q)
    if isinstance(min_tail_samples, bool) or not isinstance(min_tail_samples, int) or min_tail_samples < 1:
        raise ValueError(f"min_tail_samples must be a positive integer, got {min_tail_samples!r}")
    tail = 1 - Fraction(str(q)) / 100
    return math.ceil(min_tail_samples / tail)


def min_samples_to_judge(q: float) -> int:
    """The fewest samples a gate on the ``q``-th percentile is judged on: ``ceil(1 / (1 - q/100))``
    (p50: 2, p95: 20, p99: 100), i.e. :func:`repetitions_needed` with a tail of one sample.
    Below it the sample does not expect a single observation beyond the percentile, so the
    estimate is an interpolation between the largest values and its bootstrap bounds are the
    spread of the maximum: the gate would be judged on a tail it never saw (issue #28)."""
    return repetitions_needed(q, min_tail_samples=1)


def not_enough_samples(n: int, q: float) -> Optional[str]:
    """Why ``n`` samples cannot judge the ``q``-th percentile (one line), else None."""
    needed = min_samples_to_judge(q)
    if n >= needed:
        return None
    return (
        f"not enough samples to judge p{q:g}: {n} timed request{'' if n == 1 else 's'}, p{q:g} needs "
        f"at least {needed} (one beyond the percentile); raise latency.repetitions or latency.max_queries"
    )


@dataclass
class LatencyVerdict:
    q: float
    point: float
    lo: float  # one-sided lower confidence bound of the percentile
    hi: float
    ceiling_ms: float
    confidence: float
    n: int
    needed: int  # repetitions_needed(q, min_tail_samples)
    passed: bool  # lo <= ceiling: fail only when confidently slower

    @property
    def enough_samples(self) -> bool:
        return self.n >= self.needed

    def describe(self, label: str = "") -> str:
        head = f"{label}: " if label else ""
        from ..wording import word

        verdict = word("met" if self.passed else "above_ceiling")
        s = (
            f"{head}p{self.q:g} = {self.point:.2f} ms ({self.confidence:.0%} bounds "
            f"{self.lo:.2f} .. {self.hi:.2f} ms, n={self.n}) vs ceiling {self.ceiling_ms:g} ms:"
            f" {verdict}"
        )
        if not self.passed:
            s += f" (even the {self.confidence:.0%} lower bound {self.lo:.2f} ms is above it)"
        if not self.enough_samples:
            s += (
                f"\n  only {self.n} samples: p{self.q:g} needs >= {self.needed} for its CI to"
                f" mean much (raise latency.repetitions)"
            )
        return s

    def as_dict(self) -> Dict[str, object]:
        out: Dict[str, object] = asdict(self)
        passed = out.pop("passed")
        return {**out, "enough_samples": self.enough_samples, "passed": passed}


def latency_verdict(
    samples_ms: Sequence[float],
    ceiling_ms: float,
    *,
    q: float = 95,
    confidence: float = 0.95,
    n_resamples: int = 5000,
    seed: int = 0,
    min_tail_samples: int = 20,
) -> LatencyVerdict:
    """Latency gate on a percentile's CI: **passes unless the lower confidence bound is
    above the ceiling** (fails only when we are ``confidence`` sure the percentile is
    above it). Noise alone then rarely fails the gate; the price is that a slowdown must
    clear the CI width to be caught, so give it enough samples (``needed``)."""
    x = _samples(samples_ms)
    point, lo, hi = latency_percentile_ci(x, q, confidence, n_resamples, seed)
    return LatencyVerdict(
        q=float(q),
        point=point,
        lo=lo,
        hi=hi,
        ceiling_ms=float(ceiling_ms),
        confidence=float(confidence),
        n=len(x),
        needed=repetitions_needed(q, min_tail_samples),
        passed=lo <= float(ceiling_ms),
    )


@dataclass
class ABResult:
    q: float
    baseline: float  # percentile of the baseline samples
    current: float
    ratio: float  # current / baseline
    lo: float  # one-sided lower confidence bound of the ratio
    hi: float
    confidence: float
    paired: bool
    max_ratio: Optional[float] = None

    @property
    def passed(self) -> Optional[bool]:
        """``lo <= max_ratio`` (fail only when confidently slower by more than it)."""
        return None if self.max_ratio is None else self.lo <= self.max_ratio

    def describe(self, label: str = "") -> str:
        head = f"{label}: " if label else ""
        s = (
            f"{head}p{self.q:g} {self.current:.2f} ms vs {self.baseline:.2f} ms (A/B, same "
            f"machine): ratio {self.ratio:.3f} ({self.confidence:.0%} bounds {self.lo:.3f} .. "
            f"{self.hi:.3f})"
        )
        if self.max_ratio is not None:
            from ..wording import word

            s += f" vs allowed {self.max_ratio:g}: {word('met' if self.passed else 'above_ceiling')}"
        return s


def ab_ratio(
    baseline_samples: Sequence[float],
    current_samples: Sequence[float],
    *,
    q: float = 95,
    confidence: float = 0.95,
    n_resamples: int = 5000,
    seed: int = 0,
    paired: bool = False,
    max_ratio: Optional[float] = None,
) -> ABResult:
    """Ratio of the ``q``-th percentiles current / baseline with bootstrap bounds.

    For an interleaved A/B run on one machine (see :func:`ab_schedule`). ``paired=True``
    when sample ``i`` of both lists comes from the same (query, round): the two are then
    resampled together, which keeps the per-query correlation and narrows the interval.
    Otherwise each side is resampled on its own."""
    q = _check_q(q)
    alpha = alpha_of(confidence)
    a = _samples(baseline_samples, "baseline latency samples")
    b = _samples(current_samples, "current latency samples")
    if paired and len(a) != len(b):
        raise ValueError(f"paired A/B needs as many baseline as current samples ({len(a)} vs {len(b)})")
    pa, pb = _point_percentile(a, q), _point_percentile(b, q)
    if pa <= 0:
        raise ValueError("baseline percentile is <= 0 ms")
    seq_a, seq_b = np.random.SeedSequence(seed).spawn(2)
    if paired:
        boot_b, boot_a = _bootstrap_percentiles(b, q, n_resamples, generator(seq_a), paired_with=a)
    else:
        boot_a, _ = _bootstrap_percentiles(a, q, n_resamples, generator(seq_a))
        boot_b, _ = _bootstrap_percentiles(b, q, n_resamples, generator(seq_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.sort(boot_b / boot_a)
    return ABResult(
        q=q,
        baseline=pa,
        current=pb,
        ratio=pb / pa,
        lo=lower_bound(ratios, alpha),
        hi=upper_bound(ratios, alpha),
        confidence=float(confidence),
        paired=paired,
        max_ratio=None if max_ratio is None else float(max_ratio),
    )


def ab_schedule(n_queries: int, repetitions: int = 1, seed: int = 0) -> List[Tuple[int, str]]:
    """Order of an interleaved A/B latency pass: ``[(query index, "A" | "B"), ...]``.

    Every round visits the queries in a fresh seeded random order; each query runs A then
    B or B then A (alternating by round and position), so slow drift, warm caches and
    the order effect hit both arms equally."""
    rng = generator(seed)
    out: List[Tuple[int, str]] = []
    for r in range(repetitions):
        for pos, qi in enumerate(rng.permutation(n_queries).tolist()):
            first, second = ("A", "B") if (r + pos) % 2 == 0 else ("B", "A")
            out.append((qi, first))
            out.append((qi, second))
    return out
