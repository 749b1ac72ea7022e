"""distributions.py against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.stats.distributions import betainc, normal_cdf, normal_ppf, t_cdf, t_ppf, t_sf


def test_normal_ppf_matches_scipy_to_1e9():
    ps = np.concatenate(
        [
            np.logspace(-300, -1, 400),
            np.linspace(0.001, 0.999, 999),
            1 - np.logspace(-16, -1, 200),
            [0.02425, 1 - 0.02425, 0.5],
        ]
    )
    for p in ps:
        ours, ref = normal_ppf(float(p)), stats.norm.ppf(p)
        assert abs(ours - ref) <= 1e-9 * max(1.0, abs(ref)), (p, ours, ref)
        assert abs(ours - ref) <= 1e-12 * max(1.0, abs(ref)), (p, ours, ref)
    assert normal_ppf(0.0) == -math.inf and normal_ppf(1.0) == math.inf
    assert normal_ppf(0.95) == pytest.approx(1.6448536269514722, abs=1e-15)
    with pytest.raises(ValueError):
        normal_ppf(1.5)


def test_normal_cdf_matches_scipy():
    for x in np.linspace(-38, 9, 500):
        ref = stats.norm.cdf(x)
        assert abs(normal_cdf(float(x)) - ref) <= 1e-14 * max(ref, 1e-300) + 1e-16


def test_betainc_matches_scipy():
    rng = np.random.default_rng(3)
    for _ in range(300):
        a, b = rng.uniform(0.1, 60, 2)
        x = rng.random()
        assert betainc(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 7, 10, 29, 100, 299, 1000, 1e5])
def test_t_cdf_matches_scipy_to_1e8(df):
    for t in np.concatenate(
        [np.linspace(-50, 50, 401), np.linspace(-3, 3, 121), [1e-8, -1e-8, 0.0, 1.0, -1.0, 200.0]]
    ):
        ref = stats.t.cdf(t, df)
        assert abs(t_cdf(float(t), df) - ref) <= 1e-8, (t, df)
        assert abs(t_sf(float(t), df) - stats.t.sf(t, df)) <= 1e-8
    for p in (1e-6, 0.001, 0.025, 0.05, 0.2, 0.5, 0.8, 0.95, 0.999):
        assert t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9, abs=1e-12)


def test_t_cdf_tails_are_relatively_accurate():
    for df in (5, 30, 299):
        for t in (-8.0, -15.0, -40.0):
            assert t_cdf(t, df) == pytest.approx(stats.t.cdf(t, df), rel=1e-9)
