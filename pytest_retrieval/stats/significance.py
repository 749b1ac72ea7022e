"""Paired significance gates, latency confidence intervals and power (pure: numpy, no I/O).

Everything here is deterministic given ``seed`` (numpy ``Generator(PCG64)``) and vectorised.
scipy is not needed: the normal and Student t distributions are implemented below and are
checked against scipy by ``tests/test_significance.py``.

Regression gate on a metric (:func:`paired_comparison`)
    The baseline and the current run are compared query by query on the queries present in
    both: ``d_i = current_i - baseline_i``. Reported:

    * ``mean_diff`` (= mean of ``d``), ``sd_diff`` and the effect size Cohen's
      ``d_z = mean_diff / sd_diff``; queries won / lost / tied.
    * A paired **bootstrap** of the mean difference (``n_resamples`` resamples of the queries
      with replacement). ``ci_low`` is the ``1 - confidence`` quantile of the resample means
      (the one-sided lower confidence bound at ``confidence``) and ``ci_high`` the
      ``confidence`` quantile (the one-sided upper bound). Together they form a two-sided
      interval at level ``2 * confidence - 1`` (90% for the default 0.95), the usual
      convention of non-inferiority and equivalence testing (Schuirmann's TOST): each end
      is a one-sided test at ``alpha = 1 - confidence``. Quantiles are order statistics
      (``ci_low`` is the ``ceil(alpha * n_resamples)``-th smallest resample mean), which
      makes the verdicts below agree exactly with the bootstrap p-values.
      ``ci_method="bca"`` gives the bias-corrected and accelerated interval instead
      (Efron 1987; better coverage for skewed differences in small strata).
    * ``p_randomization``: two-sided paired randomization (sign-flip permutation) test of
      ``mean_diff = 0``: exact enumeration of all ``2^n`` sign vectors when ``n <= 16``,
      else ``n_resamples`` random sign vectors with the +1 correction
      (``(hits + 1) / (n_resamples + 1)``, never 0).
    * ``p_ttest``: two-sided paired t-test (as ``scipy.stats.ttest_rel``; when every
      difference is equal the t statistic is 0/0 or +-inf: we report p = 1 or 0, where scipy
      gives NaN or 0).

    Verdicts (all from the bootstrap; the two-sided p-values are reported alongside):

    * ``non_inferior``: ``ci_low >= -max_drop``, i.e. we are ``confidence`` sure the mean
      drop is at most ``max_drop``. ``>=`` so that identical per-query values pass even with
      ``max_drop = 0``. **The gate fails (``regressed``) when non-inferiority is not
      shown**: a drop larger than the margin, or too few / too noisy queries to tell
      (see :func:`minimum_detectable_drop` for how small a margin a query set supports).
    * ``improved``: ``ci_low > 0`` (confidently better). ``significant_drop``:
      ``ci_high < 0`` (confidently worse, possibly still within the margin).
    * ``p_noninferiority``: one-sided bootstrap p-value of H0 ``mean_diff <= -max_drop``:
      the share of resample means below ``-max_drop`` (percentile method; for BCa the
      inverted BCa level). ``p_noninferiority < alpha`` exactly when ``non_inferior``
      (percentile method). Strata use it with Holm's correction (:func:`stratified_comparison`).

Strata (:func:`stratified_comparison`)
    One paired comparison per stratum (query tag); the strata's non-inferiority p-values
    are Holm-adjusted (:func:`holm`) and a stratum passes when its adjusted p-value is
    ``< alpha``. This bounds by ``alpha`` the chance of passing *any* stratum whose true drop
    exceeds its margin (family-wise). With one stratum it is exactly the CI verdict.

Latency (:func:`latency_percentile_ci`, :func:`latency_verdict`, :func:`ab_ratio`)
    Bootstrap CI of a percentile; the gate fails only when the lower confidence bound is
    above the ceiling (we are ``confidence`` sure it is slower). :func:`repetitions_needed`
    says how many samples a percentile needs. :func:`ab_ratio` compares two interleaved
    sample sets (same machine, same time) by the ratio of their percentiles.

Power (:func:`minimum_detectable_drop`)
    Normal approximation for a one-sided paired test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = [
    "normal_cdf",
    "normal_ppf",
    "t_cdf",
    "t_sf",
    "t_ppf",
    "betainc",
    "PairedResult",
    "QueryDelta",
    "paired_comparison",
    "holm",
    "StratumVerdict",
    "stratified_comparison",
    "strata_from_tags",
    "latency_percentile_ci",
    "repetitions_needed",
    "LatencyVerdict",
    "latency_verdict",
    "ABResult",
    "ab_ratio",
    "ab_schedule",
    "minimum_detectable_drop",
    "queries_needed",
    "estimate_sd_diff",
    "DEFAULT_RHO",
    "noninferiority_pass_probability",
    "AbstentionResult",
    "abstention",
]

#: Above this many paired queries the randomization test samples sign vectors instead of
#: enumerating all 2^n of them.
EXACT_PERMUTATION_MAX_N = 16

#: Cells (resamples x queries) handled per vectorised chunk: bounds memory (~64 MB of
#: float64 + indices) whatever n_resamples and n are.
_CHUNK_CELLS = 4_000_000

#: Default correlation between the per-query values of two pipeline versions, used by
#: :func:`estimate_sd_diff` when no baseline exists. Measured on BEIR SciFact (300 queries,
#: nDCG@10, embedded engine): BM25 vs dense MiniLM 0.67, BM25 vs RRF(BM25, dense) 0.88,
#: BM25 title^2 vs title 0.81, best_fields vs most_fields 0.88, k1/b 1.2/0.75 vs 0.9/0.4
#: 0.97, + English stop words 0.99. 0.8 stands for "a meaningful change" and errs on the
#: large side for small tweaks (it over-estimates their noise, so the MDD is pessimistic).
DEFAULT_RHO = 0.8


# =========================================================================== distributions

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


def _t_tail2(t: float, df: float) -> float:
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
    half = 0.5 * _t_tail2(t, df)
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
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        raise ValueError(f"t_ppf needs 0 <= p <= 1, got {p!r}")
    if p > 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
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


# =========================================================================== helpers


def _alpha(confidence: float) -> float:
    """``1 - confidence``, rounded to 12 decimals so that 1 - 0.95 is exactly 0.05."""
    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1.0):
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}")
    return round(1.0 - float(confidence), 12)


def _rng(seed: Union[int, np.random.SeedSequence]) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(seed))


def _cut(alpha: float, b: int) -> int:
    """Order-statistic index (1-based) of the alpha-quantile of b resamples."""
    return min(b, max(1, math.ceil(alpha * b - 1e-9)))


def _lower(sorted_values: np.ndarray, level: float) -> float:
    """The ``ceil(level * B)``-th smallest value (inverted-CDF quantile)."""
    return float(sorted_values[_cut(level, len(sorted_values)) - 1])


def _upper(sorted_values: np.ndarray, level: float) -> float:
    """The ``ceil(level * B)``-th largest value."""
    return float(sorted_values[len(sorted_values) - _cut(level, len(sorted_values))])


def _bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``d``.

    Computed as ``mean + mean(d - mean)[resample]`` so that a constant ``d`` gives exactly
    its value (no rounding in the sum), which keeps the verdicts exact on ties."""
    n = len(d)
    center = math.fsum(d.tolist()) / n
    dc = d - center
    out = np.empty(n_resamples)
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        out[start : start + m] = dc[idx].mean(axis=1)
    return center + out


def _sign_flip_p(
    d: np.ndarray, n_resamples: int, rng: np.random.Generator, exact_max: int = EXACT_PERMUTATION_MAX_N
) -> Tuple[float, bool]:
    """Two-sided paired randomization test of mean(d) = 0: ``(p, exact)``.

    The statistic is ``|sum(s_i * d_i)|`` over sign vectors ``s``; ties with the observed
    value (up to 1e-12 relative rounding) count as at least as extreme."""
    n = len(d)
    observed = abs(float(np.sum(d)))
    tol = 1e-12 * float(np.sum(np.abs(d)))
    if n <= exact_max:
        sums = np.zeros(1)
        for x in d.tolist():
            sums = np.concatenate((sums + x, sums - x))
        hits = int(np.count_nonzero(np.abs(sums) >= observed - tol))
        return hits / float(len(sums)), True
    total = float(np.sum(d))
    hits = 0
    rows = max(1, _CHUNK_CELLS // n)
    buf = np.empty((min(rows, n_resamples), n))
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        # one random bit per (resample, query): 1 = this query's difference changes sign
        raw = np.frombuffer(rng.bytes((m * n + 7) // 8), dtype=np.uint8)
        flips = buf[:m]
        np.copyto(flips, np.unpackbits(raw, count=m * n).reshape(m, n))
        sums = total - 2.0 * (flips @ d)
        hits += int(np.count_nonzero(np.abs(sums) >= observed - tol))
    return (hits + 1) / (n_resamples + 1), False


def _ttest(d: np.ndarray, mean: float) -> Tuple[float, float, float]:
    """Paired t: ``(t, df, two-sided p)``; NaN p when n < 2."""
    n = len(d)
    if n < 2:
        return math.nan, float(n - 1), math.nan
    sd = float(np.std(d, ddof=1))
    df = float(n - 1)
    if sd == 0.0:
        if mean == 0.0:
            return 0.0, df, 1.0
        return math.copysign(math.inf, mean), df, 0.0
    t = mean / (sd / math.sqrt(n))
    return t, df, _t_tail2(t, df)


# =========================================================================== paired test


@dataclass(frozen=True)
class QueryDelta:
    qid: str
    baseline: float
    current: float

    @property
    def diff(self) -> float:
        return self.current - self.baseline


@dataclass
class PairedResult:
    """Current vs baseline on one metric, over the queries in both. See the module doc."""

    n: int
    mean_baseline: float
    mean_current: float
    mean_diff: float  # current - baseline
    sd_diff: float  # sample sd (ddof=1) of the differences; NaN when n < 2
    effect_size: float  # Cohen's d_z = mean_diff / sd_diff (0 when both are 0)
    ci_low: float  # one-sided lower confidence bound of mean_diff at `confidence`
    ci_high: float  # one-sided upper confidence bound
    p_randomization: float  # two-sided, mean_diff = 0
    randomization_exact: bool
    p_ttest: float  # two-sided paired t-test, mean_diff = 0
    t_statistic: float
    df: float
    p_noninferiority: float  # one-sided bootstrap p of H0: mean_diff <= -max_drop
    p_improvement: float  # one-sided bootstrap p of H0: mean_diff <= 0
    p_ttest_noninferiority: float  # the same H0 by the shifted t-test (cross-check)
    won: int
    lost: int
    tied: int
    max_drop: float
    confidence: float
    ci_method: str
    n_resamples: int
    seed: int
    only_in_baseline: Tuple[str, ...] = ()
    only_in_current: Tuple[str, ...] = ()
    qids: Tuple[str, ...] = field(default=(), repr=False)
    baseline_values: np.ndarray = field(default=None, repr=False, compare=False)
    current_values: np.ndarray = field(default=None, repr=False, compare=False)

    # ---- verdicts
    @property
    def alpha(self) -> float:
        return _alpha(self.confidence)

    @property
    def non_inferior(self) -> bool:
        """Shown, with `confidence`, that the mean drop is at most ``max_drop``."""
        return self.ci_low >= -self.max_drop

    @property
    def regressed(self) -> bool:
        """The gate fails: non-inferiority within ``max_drop`` was not shown."""
        return not self.non_inferior

    @property
    def improved(self) -> bool:
        return self.ci_low > 0.0

    @property
    def significant_drop(self) -> bool:
        return self.ci_high < 0.0

    @property
    def unpaired(self) -> int:
        return len(self.only_in_baseline) + len(self.only_in_current)

    @property
    def diffs(self) -> np.ndarray:
        return self.current_values - self.baseline_values

    # ---- queries
    def worst(self, n: int = 5) -> List[QueryDelta]:
        """Up to ``n`` queries that dropped, largest drop first (ties by qid)."""
        return self._ranked(n, lambda d: d < 0, sign=1.0)

    def best(self, n: int = 5) -> List[QueryDelta]:
        """Up to ``n`` queries that gained, largest gain first (ties by qid)."""
        return self._ranked(n, lambda d: d > 0, sign=-1.0)

    def _ranked(self, n: int, keep, sign: float) -> List[QueryDelta]:
        if n <= 0 or self.baseline_values is None:
            return []
        d = self.diffs
        order = sorted((i for i in range(self.n) if keep(d[i])), key=lambda i: (sign * d[i], self.qids[i]))
        return [
            QueryDelta(self.qids[i], float(self.baseline_values[i]), float(self.current_values[i]))
            for i in order[:n]
        ]

    # ---- output
    def as_dict(self, worst: int = 10) -> Dict[str, object]:
        out: Dict[str, object] = {
            k: getattr(self, k)
            for k in (
                "n",
                "mean_baseline",
                "mean_current",
                "mean_diff",
                "sd_diff",
                "effect_size",
                "ci_low",
                "ci_high",
                "p_randomization",
                "randomization_exact",
                "p_ttest",
                "t_statistic",
                "p_noninferiority",
                "p_improvement",
                "p_ttest_noninferiority",
                "won",
                "lost",
                "tied",
                "max_drop",
                "confidence",
                "ci_method",
                "n_resamples",
                "seed",
                "non_inferior",
                "regressed",
                "improved",
                "significant_drop",
            )
        }
        out["only_in_baseline"] = list(self.only_in_baseline)
        out["only_in_current"] = list(self.only_in_current)
        out["worst"] = [
            {"qid": q.qid, "baseline": q.baseline, "current": q.current, "diff": q.diff}
            for q in self.worst(worst)
        ]
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}

    def verdict_text(self, passed: Optional[bool] = None, improved: Optional[bool] = None) -> str:
        """``passed`` / ``improved`` override the CI verdicts (e.g. Holm-corrected strata)."""
        passed = self.non_inferior if passed is None else passed
        improved = self.improved if improved is None else improved
        if not passed:
            if self.ci_high < -self.max_drop:
                return f"FAIL, regressed by more than {self.max_drop:g}"
            if self.significant_drop:
                return f"FAIL, significantly worse; a drop larger than {self.max_drop:g} is not ruled out"
            return f"FAIL, a drop larger than {self.max_drop:g} is not ruled out"
        return "pass, improved" if improved else "pass, non-inferior"

    def describe(
        self,
        label: str = "",
        *,
        query_text: Optional[Mapping[str, str]] = None,
        n_worst: int = 5,
        passed: Optional[bool] = None,
        improved: Optional[bool] = None,
    ) -> str:
        """A few lines for a failure message or the summary."""
        conf = f"{self.confidence:.0%}"
        head = f"{label}: " if label else ""
        lines = [
            f"{head}{self.verdict_text(passed, improved)}: mean {self.mean_current:.4f} vs "
            f"baseline {self.mean_baseline:.4f} (diff {self.mean_diff:+.4f}, allowed drop "
            f"{self.max_drop:g})",
            f"  {conf} lower bound of the diff {self.ci_low:+.4f}"
            f" (upper {self.ci_high:+.4f}; {self.ci_method} bootstrap, {self.n_resamples}"
            f" resamples, seed {self.seed})",
            f"  n={self.n} queries: {self.won} better, {self.lost} worse, {self.tied} tied;"
            f" effect size d_z={self.effect_size:+.3f}",
            f"  p(no difference): randomization {_fmt_p(self.p_randomization)}"
            f"{' (exact)' if self.randomization_exact else ''}, paired t {_fmt_p(self.p_ttest)};"
            f" p(drop > {self.max_drop:g}) {_fmt_p(self.p_noninferiority, self.n_resamples)}",
        ]
        if self.unpaired:
            lines.append(
                f"  not compared: {len(self.only_in_baseline)} queries only in the"
                f" baseline, {len(self.only_in_current)} only in this run"
            )
        worst = self.worst(n_worst)
        if worst:
            lines.append("  largest drops:")
            for q in worst:
                text = (query_text or {}).get(q.qid, "")
                text = (text[:67] + "...") if len(text) > 70 else text
                lines.append(
                    f"    {q.diff:+.4f}  ({q.baseline:.4f} -> {q.current:.4f})  {q.qid}  {text}".rstrip()
                )
        return "\n".join(lines)


def _fmt_p(p: float, resamples: Optional[int] = None) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    if p == 0.0 and resamples:
        return f"< {1 / resamples:.2g}"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def paired_comparison(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    *,
    max_drop: float,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    ci_method: str = "percentile",
    tie_tolerance: float = 0.0,
) -> PairedResult:
    """Compare per-query values (``{qid: value}``) of the current run with the baseline.

    Only queries in both are compared (sorted by qid, so the mapping order does not
    matter); the others are listed in ``only_in_baseline`` / ``only_in_current`` for the
    caller to report. ``tie_tolerance``: |difference| at most this counts as a tie in the
    won/lost/tied counts (the statistics always use the exact differences).
    Raises ``ValueError`` when no query is in both.
    """
    if not (isinstance(max_drop, (int, float)) and math.isfinite(max_drop) and max_drop >= 0):
        raise ValueError(f"max_drop must be a number >= 0, got {max_drop!r}")
    alpha = _alpha(confidence)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an integer >= 100, got {n_resamples!r}")
    if ci_method not in ("percentile", "bca"):
        raise ValueError(f"ci_method must be 'percentile' or 'bca', got {ci_method!r}")
    qids = tuple(sorted(set(baseline).intersection(current)))
    only_b = tuple(sorted(set(baseline).difference(current)))
    only_c = tuple(sorted(set(current).difference(baseline)))
    if not qids:
        raise ValueError(
            f"no query is in both the baseline ({len(baseline)} queries) and the "
            f"current run ({len(current)} queries)"
        )
    b = np.array([float(baseline[q]) for q in qids], dtype=np.float64)
    c = np.array([float(current[q]) for q in qids], dtype=np.float64)
    if not (np.isfinite(b).all() and np.isfinite(c).all()):
        bad = [q for q, x, y in zip(qids, b, c) if not (math.isfinite(x) and math.isfinite(y))]
        raise ValueError(f"non-finite per-query values for {len(bad)} queries, e.g. {bad[0]!r}")
    d = c - b
    n = len(d)
    mean_diff = math.fsum(d.tolist()) / n
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if n > 1 and sd == 0.0:
        effect = 0.0 if mean_diff == 0.0 else math.copysign(math.inf, mean_diff)
    else:
        effect = mean_diff / sd if n > 1 else math.nan

    boot_seq, perm_seq = np.random.SeedSequence(seed).spawn(2)
    boot = np.sort(_bootstrap_means(d, n_resamples, _rng(boot_seq)))
    margin = -float(max_drop)
    if ci_method == "bca":
        ci_low, ci_high, p_ni, p_imp = _bca(d, mean_diff, boot, alpha, margin)
    else:
        ci_low, ci_high = _lower(boot, alpha), _upper(boot, alpha)
        p_ni = int(np.searchsorted(boot, margin, side="left")) / n_resamples  # share < margin
        p_imp = int(np.searchsorted(boot, 0.0, side="right")) / n_resamples  # share <= 0
    p_rand, exact = _sign_flip_p(d, n_resamples, _rng(perm_seq))
    t, df, p_t = _ttest(d, mean_diff)
    if n > 1 and sd > 0:
        p_t_ni = t_sf((mean_diff - margin) / (sd / math.sqrt(n)), df)
    elif n > 1:
        p_t_ni = 0.0 if mean_diff >= margin else 1.0
    else:
        p_t_ni = math.nan

    tol = float(tie_tolerance)
    won = int(np.count_nonzero(d > tol))
    lost = int(np.count_nonzero(d < -tol))
    return PairedResult(
        n=n,
        mean_baseline=math.fsum(b.tolist()) / n,
        mean_current=math.fsum(c.tolist()) / n,
        mean_diff=mean_diff,
        sd_diff=sd,
        effect_size=effect,
        ci_low=ci_low,
        ci_high=ci_high,
        p_randomization=p_rand,
        randomization_exact=exact,
        p_ttest=p_t,
        t_statistic=t,
        df=df,
        p_noninferiority=p_ni,
        p_improvement=p_imp,
        p_ttest_noninferiority=p_t_ni,
        won=won,
        lost=lost,
        tied=n - won - lost,
        max_drop=float(max_drop),
        confidence=float(confidence),
        ci_method=ci_method,
        n_resamples=n_resamples,
        seed=seed,
        only_in_baseline=only_b,
        only_in_current=only_c,
        qids=qids,
        baseline_values=b,
        current_values=c,
    )


def _bca(
    d: np.ndarray, theta: float, boot: np.ndarray, alpha: float, margin: float
) -> Tuple[float, float, float, float]:
    """BCa interval ends and inverted one-sided p-values (falls back to percentile when
    the bootstrap distribution is degenerate)."""
    B = len(boot)
    below = int(np.searchsorted(boot, theta, side="left"))
    n = len(d)
    frac = below / B
    if boot[0] == boot[-1] or frac <= 0.0 or frac >= 1.0 or n < 3:
        p_ni = int(np.searchsorted(boot, margin, side="left")) / B
        p_imp = int(np.searchsorted(boot, 0.0, side="right")) / B
        return _lower(boot, alpha), _upper(boot, alpha), p_ni, p_imp
    z0 = normal_ppf(frac)
    total = math.fsum(d.tolist())
    jack = (total - d) / (n - 1)
    dev = jack.mean() - jack
    den = 6.0 * float(np.sum(dev**2)) ** 1.5
    a = float(np.sum(dev**3)) / den if den > 0 else 0.0

    def level(z: float) -> float:
        w = z0 + z
        return normal_cdf(z0 + w / (1.0 - a * w))

    za = normal_ppf(alpha)
    lo = _lower(boot, level(za))
    hi = _upper(boot, 1.0 - level(-za))

    def invert(value: float, side: str) -> float:
        # BCa level at which `value` is the lower bound: solve level(z) = F(value)
        f = int(np.searchsorted(boot, value, side=side)) / B
        if f <= 0.0:
            return 0.0
        if f >= 1.0:
            return 1.0
        u = normal_ppf(f) - z0
        w = u / (1.0 + a * u)
        return normal_cdf(w - z0)

    return lo, hi, invert(margin, "left"), invert(0.0, "right")


# =========================================================================== strata, Holm


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


@dataclass
class StratumVerdict:
    stratum: str
    result: Optional[PairedResult]  # None: no query of the stratum is in both runs
    p_adjusted: float  # Holm-adjusted p_noninferiority across the strata (NaN if no result)
    passed: bool  # p_adjusted < alpha
    p_improvement_adjusted: float
    improved: bool
    error: str = ""

    def describe(self, label: str = "", **kw) -> str:
        if self.result is None:
            return f"{label}: {self.error}" if label else self.error
        head = self.result.describe(label, passed=self.passed, improved=self.improved, **kw).split("\n")
        head.insert(
            1,
            f"  Holm-adjusted p(drop > {self.result.max_drop:g}) across strata "
            f"{_fmt_p(self.p_adjusted, self.result.n_resamples)}, pass when < "
            f"{self.result.alpha:g}",
        )
        return "\n".join(head)


def strata_from_tags(
    tags: Mapping[str, Iterable[str]], qids: Optional[Iterable[str]] = None
) -> Dict[str, List[str]]:
    """``{qid: (tag, ...)}`` -> ``{tag: [qid, ...]}`` (tags sorted, qids sorted), optionally
    only over ``qids``."""
    keep = None if qids is None else set(qids)
    out: Dict[str, List[str]] = {}
    for qid, ts in tags.items():
        if keep is not None and qid not in keep:
            continue
        for t in ts:
            out.setdefault(str(t), []).append(qid)
    return {t: sorted(set(v)) for t, v in sorted(out.items())}


def stratified_comparison(
    baseline: Mapping[str, float],
    current: Mapping[str, float],
    strata: Mapping[str, Iterable[str]],
    *,
    max_drop: Union[float, Mapping[str, float]],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    ci_method: str = "percentile",
) -> Dict[str, StratumVerdict]:
    """One :func:`paired_comparison` per stratum, Holm-corrected across strata.

    A stratum passes when its Holm-adjusted non-inferiority p-value is ``< alpha``
    (``alpha = 1 - confidence``); ``improved`` likewise from the Holm-adjusted
    improvement p-values. ``max_drop`` may be one number or ``{stratum: margin}``. A
    stratum with no query in both runs gets ``result=None``, ``passed=False`` and an
    ``error``, and is not part of the Holm family."""
    alpha = _alpha(confidence)
    results: Dict[str, Optional[PairedResult]] = {}
    errors: Dict[str, str] = {}
    for name, members in strata.items():
        members = set(members)
        margin = max_drop[name] if isinstance(max_drop, Mapping) else max_drop
        b = {q: v for q, v in baseline.items() if q in members}
        c = {q: v for q, v in current.items() if q in members}
        try:
            results[name] = paired_comparison(
                b,
                c,
                max_drop=margin,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
                ci_method=ci_method,
            )
        except ValueError as exc:
            results[name] = None
            errors[name] = f"stratum {name!r}: {exc}"
    family = {k: r.p_noninferiority for k, r in results.items() if r is not None}
    adj = holm(family, alpha)
    adj_imp = holm({k: r.p_improvement for k, r in results.items() if r is not None}, alpha)
    out: Dict[str, StratumVerdict] = {}
    for name, r in results.items():
        if r is None:
            out[name] = StratumVerdict(name, None, math.nan, False, math.nan, False, errors[name])
            continue
        pa, pi = adj[name][0], adj_imp[name][0]
        out[name] = StratumVerdict(name, r, pa, pa < alpha, pi, pi < alpha)
    return out


# =========================================================================== latency


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
):
    n = len(x)
    out = np.empty(n_resamples)
    out2 = np.empty(n_resamples) if paired_with is not None else None
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = rng.integers(0, n, size=(m, n))
        out[start : start + m] = _row_percentiles(x[idx], q)
        if paired_with is not None:
            out2[start : start + m] = _row_percentiles(paired_with[idx], q)
    return out, out2


def _samples(samples: Sequence[float], what: str = "latency samples") -> np.ndarray:
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
    samples_ms: Sequence[float],
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
    alpha = _alpha(confidence)
    x = _samples(samples_ms)
    point = _point_percentile(x, q)
    if len(x) == 1:
        return point, point, point
    boot, _ = _bootstrap_percentiles(x, q, n_resamples, _rng(seed))
    boot.sort()
    return point, _lower(boot, alpha), _upper(boot, alpha)


def repetitions_needed(q: float, min_tail_samples: int = 20) -> int:
    """Samples needed so that at least ``min_tail_samples`` lie above the ``q``-th
    percentile: ``ceil(min_tail_samples / (1 - q/100))``. p50: 40, p95: 400, p99: 2000.

    Divide by the number of queries in the latency pass to get ``latency.repetitions``."""
    q = _check_q(q)
    if isinstance(min_tail_samples, bool) or not isinstance(min_tail_samples, int) or min_tail_samples < 1:
        raise ValueError(f"min_tail_samples must be a positive integer, got {min_tail_samples!r}")
    tail = 1 - Fraction(str(q)) / 100
    return math.ceil(min_tail_samples / tail)


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
        verdict = "ok" if self.passed else "ABOVE the ceiling"
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
        return {
            "q": self.q,
            "point": self.point,
            "lo": self.lo,
            "hi": self.hi,
            "ceiling_ms": self.ceiling_ms,
            "confidence": self.confidence,
            "n": self.n,
            "needed": self.needed,
            "enough_samples": self.enough_samples,
            "passed": self.passed,
        }


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
            s += f" vs allowed {self.max_ratio:g}: {'ok' if self.passed else 'SLOWER'}"
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
    alpha = _alpha(confidence)
    a = _samples(baseline_samples, "baseline latency samples")
    b = _samples(current_samples, "current latency samples")
    if paired and len(a) != len(b):
        raise ValueError(f"paired A/B needs as many baseline as current samples ({len(a)} vs {len(b)})")
    pa, pb = _point_percentile(a, q), _point_percentile(b, q)
    if pa <= 0:
        raise ValueError("baseline percentile is <= 0 ms")
    seq_a, seq_b = np.random.SeedSequence(seed).spawn(2)
    if paired:
        boot_b, boot_a = _bootstrap_percentiles(b, q, n_resamples, _rng(seq_a), paired_with=a)
    else:
        boot_a, _ = _bootstrap_percentiles(a, q, n_resamples, _rng(seq_a))
        boot_b, _ = _bootstrap_percentiles(b, q, n_resamples, _rng(seq_b))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.sort(boot_b / boot_a)
    return ABResult(
        q=q,
        baseline=pa,
        current=pb,
        ratio=pb / pa,
        lo=_lower(ratios, alpha),
        hi=_upper(ratios, alpha),
        confidence=float(confidence),
        paired=paired,
        max_ratio=None if max_ratio is None else float(max_ratio),
    )


def ab_schedule(n_queries: int, repetitions: int = 1, seed: int = 0) -> List[Tuple[int, str]]:
    """Order of an interleaved A/B latency pass: ``[(query index, "A" | "B"), ...]``.

    Every round visits the queries in a fresh seeded random order; each query runs A then
    B or B then A (alternating by round and position), so slow drift, warm caches and
    the order effect hit both arms equally."""
    rng = _rng(seed)
    out: List[Tuple[int, str]] = []
    for r in range(repetitions):
        for pos, qi in enumerate(rng.permutation(n_queries).tolist()):
            first, second = ("A", "B") if (r + pos) % 2 == 0 else ("B", "A")
            out.append((qi, first))
            out.append((qi, second))
    return out


# =========================================================================== power


def _sd_and_n(sd_diff: Union[float, Sequence[float]], n: Optional[int]) -> Tuple[float, int]:
    if isinstance(sd_diff, (int, float)) and not isinstance(sd_diff, bool):
        if n is None:
            raise ValueError("give n (the number of queries) with a standard deviation")
        sd = float(sd_diff)
    else:
        d = np.asarray(list(sd_diff), dtype=np.float64)
        if len(d) < 2:
            raise ValueError("need at least 2 per-query differences to estimate their sd")
        sd = float(np.std(d, ddof=1))
        n = len(d) if n is None else n
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd of the differences must be >= 0, got {sd!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return sd, int(n)


def minimum_detectable_drop(
    sd_diff: Union[float, Sequence[float]],
    n: Optional[int] = None,
    *,
    confidence: float = 0.95,
    power: float = 0.8,
    max_drop: float = 0.0,
) -> float:
    """Smallest true mean drop that a one-sided paired test at ``alpha = 1 - confidence``
    flags as "a drop larger than ``max_drop``" with probability ``power``:
    ``max_drop + (z_{1-alpha} + z_power) * sd_diff / sqrt(n)`` (normal approximation;
    optimistic below ~30 queries).

    ``sd_diff``: the sd of the per-query differences (current - baseline), or the
    differences themselves (then ``n`` defaults to their count). Without a baseline use
    :func:`estimate_sd_diff`.

    For the non-inferiority gate read it the other way: with ``max_drop = 0`` it is the
    resolution of the query set; a change whose true drop is ``delta`` passes the gate
    with probability ``power`` only when its margin is at least ``delta`` + this value.
    An unchanged-but-noisy pipeline (true drop 0) needs ``max_drop >=`` this value."""
    sd, n = _sd_and_n(sd_diff, n)
    _alpha(confidence)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    z = normal_ppf(confidence) + normal_ppf(power)
    return float(max_drop) + z * sd / math.sqrt(n)


def queries_needed(
    drop: float, sd_diff: float, *, confidence: float = 0.95, power: float = 0.8, max_drop: float = 0.0
) -> int:
    """Queries needed for :func:`minimum_detectable_drop` to reach ``drop``."""
    gap = float(drop) - float(max_drop)
    if gap <= 0:
        raise ValueError("drop must be larger than max_drop")
    z = normal_ppf(confidence) + normal_ppf(power)
    return max(2, math.ceil((z * float(sd_diff) / gap) ** 2 - 1e-9))


def estimate_sd_diff(values: Union[Sequence[float], Mapping[str, float]], rho: float = DEFAULT_RHO) -> float:
    """sd of per-query differences expected between two versions of a pipeline, from one
    version's per-query values: ``sd * sqrt(2 * (1 - rho))`` (equal variances, correlation
    ``rho`` between the versions' per-query values; see :data:`DEFAULT_RHO`)."""
    if isinstance(values, Mapping):
        values = list(values.values())
    x = np.asarray(list(values), dtype=np.float64)
    if len(x) < 2:
        raise ValueError("need at least 2 per-query values")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
    return float(np.std(x, ddof=1)) * math.sqrt(2.0 * (1.0 - rho))


def noninferiority_pass_probability(
    true_drop: float, sd_diff: float, n: int, *, max_drop: float, confidence: float = 0.95
) -> float:
    """Probability (normal approximation) that the non-inferiority gate passes a change
    whose true mean drop is ``true_drop``: ``Phi((max_drop - true_drop) / se - z_{1-alpha})``."""
    if sd_diff <= 0:
        return 1.0 if true_drop <= max_drop else 0.0
    se = float(sd_diff) / math.sqrt(n)
    return normal_cdf((float(max_drop) - float(true_drop)) / se - normal_ppf(confidence))


# =========================================================================== abstention


@dataclass
class AbstentionResult:
    """Unanswerable queries: did the retriever abstain (no hits, or top score < threshold)?"""

    threshold: Optional[float]
    abstained: Dict[str, bool]  # unanswerable qid -> abstained
    top_scores: Dict[str, Optional[float]]  # None: no hits
    rate: float  # share of unanswerable queries abstained on (NaN if none)
    # Over answerable queries, when given: wrongly abstained on (they had an answer)
    false_abstained: Dict[str, bool] = field(default_factory=dict)
    false_rate: float = math.nan

    @property
    def per_query(self) -> Dict[str, float]:
        """1.0 / 0.0 per unanswerable query: a metric to gate or compare with a baseline."""
        return {q: 1.0 if a else 0.0 for q, a in self.abstained.items()}

    @property
    def answered(self) -> List[str]:
        """Unanswerable queries the retriever did answer (the failures), sorted."""
        return sorted(q for q, a in self.abstained.items() if not a)


def _top_score(ranking) -> Optional[float]:
    if ranking is None or len(ranking.doc_ids) == 0:
        return None
    return float(max(ranking.scores))


def abstention(
    run: Mapping[str, object],
    unanswerable_qids: Iterable[str],
    threshold: Optional[float] = None,
    answerable_qids: Optional[Iterable[str]] = None,
) -> AbstentionResult:
    """Score unanswerable queries by abstention.

    A query abstains when its ranking has no hits (or it is absent from ``run``), or when
    ``threshold`` is set and its top score (the maximum score, whatever the order) is
    below it. ``rate`` = abstained / unanswerable. With ``answerable_qids`` the same rule
    is applied to them: ``false_rate`` is the share of answerable queries abstained on,
    the other side of a threshold's trade-off."""
    if threshold is not None and not (isinstance(threshold, (int, float)) and math.isfinite(threshold)):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")

    def decide(qids: Iterable[str]):
        flags: Dict[str, bool] = {}
        tops: Dict[str, Optional[float]] = {}
        for q in sorted(set(qids)):
            top = _top_score(run.get(q))
            tops[q] = top
            flags[q] = top is None or (threshold is not None and top < threshold)
        return flags, tops

    flags, tops = decide(unanswerable_qids)
    rate = (sum(flags.values()) / len(flags)) if flags else math.nan
    result = AbstentionResult(threshold, flags, tops, rate)
    if answerable_qids is not None:
        f_flags, _ = decide(answerable_qids)
        result.false_abstained = f_flags
        result.false_rate = (sum(f_flags.values()) / len(f_flags)) if f_flags else math.nan
    return result
