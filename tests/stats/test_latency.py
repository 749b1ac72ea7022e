"""latency.py: percentile intervals and the A/B ratio against scipy and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.stats.latency import (
    LatencySummary,
    ab_ratio,
    ab_schedule,
    latency_percentile_ci,
    latency_verdict,
    percentile,
    repetitions_needed,
    summarize_latency,
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
    assert not v.passed and v.lo > 0.7 * p95 and "above the ceiling" in v.describe("rrf p95_ms")
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


# =========================================================================== the latency summary


def test_percentile_is_numpys_linear_interpolation():
    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 10, 101, 1000):
        x = list(rng.lognormal(0, 1, n))
        for q in (0, 1, 50, 95, 99, 100):
            assert percentile(x, q) == pytest.approx(float(np.percentile(x, q)), rel=1e-12)
    assert math.isnan(percentile([], 95))
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0  # order of the samples does not matter


def test_summarize_latency_keeps_samples_and_reports_server_took_only_when_given():
    wall = [4.0, 1.0, 3.0, 2.0]
    s = summarize_latency(wall, [], warmup=2, repetitions=1)
    assert s.samples_ms == wall and s.p50 == 2.5 and s.mean == 2.5
    assert (s.p95, s.p99) == (percentile(wall, 95), percentile(wall, 99))
    assert s.server_p50 is None and s.server_p95 is None
    d = s.as_dict()
    assert list(d) == ["p50", "p95", "p99", "mean", "n", "warmup", "repetitions", "environment"]
    assert d["n"] == 4 and d["warmup"] == 2 and d["repetitions"] == 1
    assert set(d["environment"]) == {"python", "machine", "system", "cpus"}
    took = summarize_latency(wall, [0.5, 1.5], warmup=0, repetitions=3).as_dict()
    assert took["server_took_p50"] == 1.0 and took["server_took_p95"] == pytest.approx(1.45)
    assert list(took)[-3:] == ["server_took_p50", "server_took_p95", "environment"]


def test_an_empty_latency_pass_is_written_as_nulls_not_nan():
    d = summarize_latency([], [], warmup=0, repetitions=1).as_dict()
    assert d["p50"] is None and d["p95"] is None and d["mean"] is None and d["n"] == 0
    one = summarize_latency([1.0], [], warmup=0, repetitions=1)
    assert isinstance(one, LatencySummary) and (one.p50, one.p95, one.p99) == (1.0, 1.0, 1.0)


def test_latency_verdict_as_dict_lists_every_field():
    d = latency_verdict([1.0, 2.0, 3.0, 4.0, 5.0] * 10, 4.0).as_dict()
    assert list(d) == [
        "q",
        "point",
        "lo",
        "hi",
        "ceiling_ms",
        "confidence",
        "n",
        "needed",
        "enough_samples",
        "passed",
    ]
    assert d["n"] == 50 and d["needed"] == 400 and d["enough_samples"] is False


def test_the_fewest_samples_a_percentile_is_judged_on() -> None:
    from pytest_retrieval.stats.latency import min_samples_to_judge, not_enough_samples

    assert [min_samples_to_judge(q) for q in (50, 90, 95, 99, 99.9)] == [2, 10, 20, 100, 1000]
    assert not_enough_samples(20, 95) is None
    assert not_enough_samples(19, 95).startswith("not enough samples to judge p95: 19 timed requests")
    assert "1 timed request, p99 needs at least 100" in not_enough_samples(1, 99)
