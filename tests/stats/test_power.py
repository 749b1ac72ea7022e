"""power.py: the detectable drop, by formula and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.stats.power import (
    estimate_sd_diff,
    minimum_detectable_drop,
    noninferiority_pass_probability,
    queries_needed,
)

from .values import as_map


def test_minimum_detectable_drop_formula_and_monotone():
    z = 1.6448536269514722 + 0.8416212335729143
    assert minimum_detectable_drop(0.2, 300) == pytest.approx(z * 0.2 / math.sqrt(300), rel=1e-12)
    assert minimum_detectable_drop(0.2, 300, max_drop=0.01) == pytest.approx(0.01 + z * 0.2 / math.sqrt(300))
    mdds = [minimum_detectable_drop(0.25, n) for n in (25, 50, 100, 300, 1000, 5000)]
    assert all(x > y for x, y in zip(mdds, mdds[1:]))
    d = np.random.default_rng(0).normal(0, 0.1, 400)
    assert minimum_detectable_drop(d) == pytest.approx(z * d.std(ddof=1) / 20)
    n = queries_needed(0.02, 0.2)
    assert minimum_detectable_drop(0.2, n) <= 0.02 < minimum_detectable_drop(0.2, n - 1)
    assert minimum_detectable_drop(0.2, 300, confidence=0.99) > minimum_detectable_drop(0.2, 300)


def test_mdd_power_is_what_it_says_by_simulation():
    """A true drop equal to the MDD is flagged by a one-sided t-test ~80% of the time."""
    rng = np.random.default_rng(0)
    n, sd = 300, 0.2
    mdd = minimum_detectable_drop(sd, n)
    d = rng.normal(-mdd, sd, (4000, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    flagged = (t < stats.t.ppf(0.05, n - 1)).mean()
    assert flagged == pytest.approx(0.8, abs=0.03)
    # the non-inferiority pass probability of an unchanged pipeline with margin = MDD
    assert noninferiority_pass_probability(0.0, sd, n, max_drop=mdd) == pytest.approx(0.8)


def test_estimate_sd_diff():
    x = np.random.default_rng(0).random(100)
    assert estimate_sd_diff(x, rho=0.5) == pytest.approx(x.std(ddof=1))
    assert estimate_sd_diff(as_map(x)) == pytest.approx(x.std(ddof=1) * math.sqrt(0.4))
    assert estimate_sd_diff(x, rho=1.0) == 0.0
