"""Paired comparisons of per-query values: bootstrap, randomization and t tests (pure:
numpy, no I/O). Per stratum with Holm's correction: :mod:`.strata`.

Everything here is deterministic given ``seed`` (numpy ``Generator(PCG64)``) and vectorised.
scipy is not needed: the distributions are in :mod:`.distributions`, checked against scipy
by ``tests/stats/test_paired.py`` and ``tests/stats/test_distributions.py``.

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
      (percentile method). Strata use it with Holm's correction
      (:func:`.strata.stratified_comparison`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Literal, Mapping, Optional, Tuple, TypedDict

import numpy as np

from .distributions import normal_cdf, normal_ppf, t_sf, t_two_sided_p
from .resampling import CHUNK_CELLS, alpha_of, generator, lower_bound, upper_bound

__all__ = ["EXACT_PERMUTATION_MAX_N", "PairedResult", "QueryDelta", "format_p", "paired_comparison"]

#: Above this many paired queries the randomization test samples sign vectors instead of
#: enumerating all 2^n of them.
EXACT_PERMUTATION_MAX_N = 16


def _bootstrap_means(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``d``.

    Computed as ``mean + mean(d - mean)[resample]`` so that a constant ``d`` gives exactly
    its value (no rounding in the sum), which keeps the verdicts exact on ties."""
    n = len(d)
    center = math.fsum(d.tolist()) / n
    dc = d - center
    out = np.empty(n_resamples)
    rows = max(1, CHUNK_CELLS // n)
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
    rows = max(1, CHUNK_CELLS // n)
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
    return t, df, t_two_sided_p(t, df)


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
    baseline_values: Optional[np.ndarray] = field(default=None, repr=False, compare=False)
    current_values: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    # ---- verdicts
    @property
    def alpha(self) -> float:
        return alpha_of(self.confidence)

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
        if self.current_values is None or self.baseline_values is None:
            raise ValueError("this comparison holds no per-query values")
        return self.current_values - self.baseline_values

    # ---- queries
    def worst(self, n: int = 5) -> List[QueryDelta]:
        """Up to ``n`` queries that dropped, largest drop first (ties by qid)."""
        return self._ranked(n, lambda d: d < 0, sign=1.0)

    def best(self, n: int = 5) -> List[QueryDelta]:
        """Up to ``n`` queries that gained, largest gain first (ties by qid)."""
        return self._ranked(n, lambda d: d > 0, sign=-1.0)

    def _ranked(self, n: int, keep, sign: float) -> List[QueryDelta]:
        b, c = self.baseline_values, self.current_values
        if n <= 0 or b is None or c is None:
            return []
        d = self.diffs
        order = sorted((i for i in range(self.n) if keep(d[i])), key=lambda i: (sign * d[i], self.qids[i]))
        return [QueryDelta(self.qids[i], float(b[i]), float(c[i])) for i in order[:n]]

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
        from ..wording import phrase

        if not passed:  # one phrase however far the bounds lie: they are printed beside it
            return f"FAIL, {phrase('regressed', self.max_drop)}"
        if improved:
            return f"pass, {phrase('improved')}"
        kind = "dropped_within_margin" if self.significant_drop else "no_drop"
        return f"pass, {phrase(kind, self.max_drop)}"

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
            f"  p(no difference): randomization {format_p(self.p_randomization)}"
            f"{' (exact)' if self.randomization_exact else ''}, paired t {format_p(self.p_ttest)};"
            f" p(drop > {self.max_drop:g}) {format_p(self.p_noninferiority, self.n_resamples)}",
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


def format_p(p: float, resamples: Optional[int] = None) -> str:
    """A p-value for people: ``n/a`` (NaN), ``< 1/resamples`` (none of the resamples), 2 or 3
    significant digits."""
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
    alpha = _check_arguments(max_drop, confidence, n_resamples, ci_method)
    qids, only_b, only_c, b, c = _align(baseline, current)
    d = c - b
    n = len(d)
    mean_diff = math.fsum(d.tolist()) / n
    sd, effect = _spread(d, mean_diff)
    margin = -float(max_drop)
    return PairedResult(
        n=n,
        mean_baseline=math.fsum(b.tolist()) / n,
        mean_current=math.fsum(c.tolist()) / n,
        mean_diff=mean_diff,
        sd_diff=sd,
        effect_size=effect,
        **_resampling_tests(d, mean_diff, margin, alpha, n_resamples, seed, ci_method),
        **_t_tests(d, mean_diff, sd, margin),
        **_won_lost_tied(d, tie_tolerance),
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


class _Resampling(TypedDict):
    """The fields of :class:`PairedResult` that come from resampling the differences."""

    ci_low: float
    ci_high: float
    p_noninferiority: float
    p_improvement: float
    p_randomization: float
    randomization_exact: bool


def _resampling_tests(
    d: np.ndarray, mean_diff: float, margin: float, alpha: float, n_resamples: int, seed: int, ci_method: str
) -> _Resampling:
    """The bootstrap bounds and one-sided p-values, and the randomization test; the two
    draw from independent streams spawned from ``seed``."""
    boot_seq, perm_seq = np.random.SeedSequence(seed).spawn(2)
    boot = np.sort(_bootstrap_means(d, n_resamples, generator(boot_seq)))
    if ci_method == "bca":
        ci_low, ci_high, p_ni, p_imp = _bca(d, mean_diff, boot, alpha, margin)
    else:
        ci_low, ci_high = lower_bound(boot, alpha), upper_bound(boot, alpha)
        p_ni = int(np.searchsorted(boot, margin, side="left")) / n_resamples  # share < margin
        p_imp = int(np.searchsorted(boot, 0.0, side="right")) / n_resamples  # share <= 0
    p_rand, exact = _sign_flip_p(d, n_resamples, generator(perm_seq))
    return _Resampling(
        ci_low=ci_low,
        ci_high=ci_high,
        p_noninferiority=p_ni,
        p_improvement=p_imp,
        p_randomization=p_rand,
        randomization_exact=exact,
    )


class _TTests(TypedDict):
    """The fields of :class:`PairedResult` that come from the paired t-test."""

    p_ttest: float
    t_statistic: float
    df: float
    p_ttest_noninferiority: float


def _t_tests(d: np.ndarray, mean_diff: float, sd: float, margin: float) -> _TTests:
    t, df, p_t = _ttest(d, mean_diff)
    return _TTests(
        p_ttest=p_t,
        t_statistic=t,
        df=df,
        p_ttest_noninferiority=_t_noninferiority_p(mean_diff, sd, len(d), margin, t, df),
    )


class _WonLostTied(TypedDict):
    won: int
    lost: int
    tied: int


def _won_lost_tied(d: np.ndarray, tie_tolerance: float) -> _WonLostTied:
    """Queries better, worse and tied; |difference| at most ``tie_tolerance`` is a tie."""
    tol = float(tie_tolerance)
    won = int(np.count_nonzero(d > tol))
    lost = int(np.count_nonzero(d < -tol))
    return _WonLostTied(won=won, lost=lost, tied=len(d) - won - lost)


def _check_arguments(max_drop: float, confidence: float, n_resamples: int, ci_method: str) -> float:
    """``alpha``, once every argument of :func:`paired_comparison` is known to be valid."""
    if not (isinstance(max_drop, (int, float)) and math.isfinite(max_drop) and max_drop >= 0):
        raise ValueError(f"max_drop must be a number >= 0, got {max_drop!r}")
    alpha = alpha_of(confidence)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an integer >= 100, got {n_resamples!r}")
    if ci_method not in ("percentile", "bca"):
        raise ValueError(f"ci_method must be 'percentile' or 'bca', got {ci_method!r}")
    return alpha


def _align(
    baseline: Mapping[str, float], current: Mapping[str, float]
) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...], np.ndarray, np.ndarray]:
    """(queries in both, only in the baseline, only in the current run, baseline values,
    current values), sorted by qid; every compared value must be finite."""
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
    return qids, only_b, only_c, b, c


def _spread(d: np.ndarray, mean_diff: float) -> Tuple[float, float]:
    """(sample sd of the differences, Cohen's d_z); NaN for a single query."""
    n = len(d)
    sd = float(np.std(d, ddof=1)) if n > 1 else math.nan
    if n > 1 and sd == 0.0:
        effect = 0.0 if mean_diff == 0.0 else math.copysign(math.inf, mean_diff)
    else:
        effect = mean_diff / sd if n > 1 else math.nan
    return sd, effect


def _t_noninferiority_p(mean_diff: float, sd: float, n: int, margin: float, t: float, df: float) -> float:
    """One-sided p of H0 ``mean_diff <= margin`` by the shifted paired t-test."""
    if n > 1 and sd > 0:
        return t_sf((mean_diff - margin) / (sd / math.sqrt(n)), df)
    if n > 1:
        return 0.0 if mean_diff >= margin else 1.0
    return math.nan


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
        return lower_bound(boot, alpha), upper_bound(boot, alpha), p_ni, p_imp
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
    lo = lower_bound(boot, level(za))
    hi = upper_bound(boot, 1.0 - level(-za))

    def invert(value: float, side: Literal["left", "right"]) -> float:
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
