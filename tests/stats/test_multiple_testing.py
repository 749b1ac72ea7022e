"""multiple_testing.py: Holm's step-down adjustment by hand, against statsmodels' values and
against the step-down rule itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_retrieval.stats.multiple_testing import holm


def test_holm_by_hand():
    p = {"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005}
    out = holm(p, alpha=0.05)
    # sorted: d .005*4=.02, a .01*3=.03, c .03*2=.06, b .04*1=.04 -> monotone .06
    assert out["d"] == (pytest.approx(0.02), True)
    assert out["a"] == (pytest.approx(0.03), True)
    assert out["c"] == (pytest.approx(0.06), False)
    assert out["b"] == (pytest.approx(0.06), False)


def test_holm_statsmodels_like_expectations():
    # statsmodels.stats.multitest.multipletests([...], method="holm") gives these
    pv = [0.01, 0.02, 0.03, 0.04, 0.05, 0.2, 0.7]
    out = holm({str(i): p for i, p in enumerate(pv)}, alpha=0.05)
    assert [out[str(i)][0] for i in range(7)] == pytest.approx([0.07, 0.12, 0.15, 0.16, 0.16, 0.4, 0.7])
    assert not any(r for _, r in out.values())
    out = holm({"x": 0.9, "y": 0.8}, alpha=0.05)
    assert out["x"][0] == 1.0 and out["y"][0] == 1.0  # capped at 1
    out = holm({"x": 0.025, "y": 0.025}, alpha=0.05)  # ties: equal, boundary rejects (<=)
    assert out["x"] == out["y"] == (0.05, True)
    assert holm({}, 0.05) == {}
    with pytest.raises(ValueError):
        holm({"x": math.nan})


def test_holm_matches_sorted_bonferroni_steps_randomly():
    rng = np.random.default_rng(0)
    for _ in range(200):
        m = int(rng.integers(1, 9))
        p = {f"s{i}": float(x) for i, x in enumerate(rng.random(m) ** 3)}
        out = holm(p, 0.05)
        order = sorted(p, key=p.get)
        # step-down: reject while p_(i) <= alpha / (m - i)
        expected = set()
        for i, k in enumerate(order):
            if p[k] <= 0.05 / (m - i):
                expected.add(k)
            else:
                break
        assert {k for k, (_, r) in out.items() if r} == expected
        adj = [out[k][0] for k in order]
        assert adj == sorted(adj) and all(a <= 1 for a in adj)
