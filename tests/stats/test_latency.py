"""latency.py: percentile intervals and the A/B ratio against scipy and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.stats.latency import (
    ab_ratio,
    ab_schedule,
    latency_percentile_ci,
    latency_verdict,
    repetitions_needed,
)


def test_repetitions_needed():
    assert repetitions_needed(95) == 400
    assert repetitions_needed(99) == 2000
    assert repetitions_needed(50) == 40
    assert repetitions_needed(99.9) == 20000
    assert repetitions_needed(95, min_tail_samples=10) == 200
    assert repetitions_needed(90, 1) == 10
    with pytest.raises(ValueError):
        repetitions_needed(100)


def test_latency_percentile_ci_point_and_scipy():
    rng = np.random.default_rng(3)
    x = rng.lognormal(0.0, 0.5, 800)
    point, lo, hi = latency_percentile_ci(x, 95)
    assert point == pytest.approx(np.percentile(x, 95), rel=1e-12)
    assert lo < point < hi
    ref = stats.bootstrap(
        (x,),
        lambda s, axis: np.percentile(s, 95, axis=axis),
        confidence_level=0.90,
        method="percentile",
        n_resamples=5000,
        random_state=np.random.default_rng(1),
    )
    width = hi - lo
    assert lo == pytest.approx(ref.confidence_interval.low, abs=0.15 * width)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=0.15 * width)
    assert latency_percentile_ci(x, 95) == (point, lo, hi)  # seeded
    assert latency_percentile_ci([3.0], 95) == (3.0, 3.0, 3.0)


def test_latency_verdict_fails_only_when_confident():
    rng = np.random.default_rng(4)
    x = rng.lognormal(0.0, 0.3, 400)
    p95 = np.percentile(x, 95)
    assert latency_verdict(x, ceiling_ms=p95).passed  # point at the ceiling: not confident
    assert latency_verdict(x, ceiling_ms=p95 * 0.97).passed
    v = latency_verdict(x, ceiling_ms=p95 * 0.7)
    assert not v.passed and v.lo > 0.7 * p95 and "ABOVE" in v.describe("rrf p95_ms")
    assert v.enough_samples and v.needed == 400
    few = latency_verdict(x[:50], ceiling_ms=100.0)
    assert few.passed and not few.enough_samples and "needs >= 400" in few.describe()


def test_ab_ratio():
    rng = np.random.default_rng(5)
    a = rng.lognormal(0.0, 0.4, 500)
    r = ab_ratio(a, a * 1.3, paired=True, max_ratio=1.1)
    assert r.ratio == pytest.approx(1.3) and r.lo == pytest.approx(1.3)
    assert r.passed is False
    b = rng.lognormal(0.0, 0.4, 500) * 1.3
    r = ab_ratio(a, b, max_ratio=1.5)
    assert r.lo < 1.3 < r.hi or r.lo < r.ratio < r.hi
    assert r.passed is True and "ratio" in r.describe()
    assert ab_ratio(a, a).passed is None
    with pytest.raises(ValueError):
        ab_ratio(a, a[:10], paired=True)


def test_ab_schedule_is_balanced():
    sched = ab_schedule(7, repetitions=4, seed=1)
    assert len(sched) == 56
    assert sum(1 for _, arm in sched if arm == "A") == 28
    firsts = [sched[i][1] for i in range(0, len(sched), 2)]
    assert firsts.count("A") == 14  # A first half of the time
    assert sched == ab_schedule(7, repetitions=4, seed=1)
