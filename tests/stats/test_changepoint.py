"""The change-point test of drift (issue #37): its false-alarm rate measured on simulated runs of
an unchanged system, its detection of a sustained shift, and its edge cases (fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_retrieval.stats.changepoint import change_point

#: simulated nightly runs of an unchanged system: nDCG@10 around 0.65, run-to-run noise sd 0.004
#: (a live index's small day-to-day differences), 30 runs per series
MEAN, SD, RUNS = 0.65, 0.004, 30


def _unchanged(rng: np.random.Generator) -> np.ndarray:
    return MEAN + SD * rng.standard_normal(RUNS)


def test_the_false_alarm_rate_on_an_unchanged_system_is_at_most_alpha() -> None:
    rng = np.random.default_rng(2026)
    series = 300
    alarms = sum(
        change_point(_unchanged(rng), alpha=0.05, n_permutations=499, seed=i).flagged for i in range(series)
    )
    rate = alarms / series
    print(f"measured false-alarm rate on {series} unchanged series of {RUNS} runs: {rate:.3f} (alpha 0.05)")
    # exact under exchangeability: binomial(300, 0.05) stays below 0.09 with probability > 0.999
    assert rate <= 0.09
    heavy = sum(
        change_point(MEAN + SD * rng.standard_t(2, RUNS), alpha=0.05, n_permutations=499, seed=i).flagged
        for i in range(series)
    )
    assert heavy / series <= 0.09  # heavy-tailed noise: still exact (a permutation test)


def test_a_sustained_shift_is_found_where_it_happened() -> None:
    rng = np.random.default_rng(7)
    x = _unchanged(rng)
    x[20:] -= 4 * SD  # the corpus lost documents at run 20
    r = change_point(x, alpha=0.05, seed=1)
    assert r.flagged and r.index == 20
    assert r.shift == pytest.approx(x[20:].mean() - x[:20].mean())
    found = 0
    for i in range(100):
        y = _unchanged(rng)
        y[20:] -= 2 * SD
        found += change_point(y, alpha=0.05, n_permutations=499, seed=i).flagged
    print(f"detection of a 2-sd shift after 20 of 30 runs: {found / 100:.2f}")
    assert found >= 60


def test_a_single_odd_run_at_the_end_is_no_sustained_shift() -> None:
    x = [0.65] * 20 + [0.55]
    r = change_point(x, alpha=0.05, min_segment=3)
    assert r.index is not None and r.index <= 18 and not r.flagged


def test_constant_series_short_series_and_min_shift() -> None:
    assert change_point([0.5] * 12).p_value == 1.0 and not change_point([0.5] * 12).flagged
    short = change_point([0.5, 0.4, 0.3, 0.2, 0.1])
    assert short.index is None and short.p_value == 1.0 and not short.flagged
    step = [0.5] * 10 + [0.49] * 10
    r = change_point(step)
    assert r.flagged and r.index == 10 and r.p_value < 0.01
    assert not change_point(step, min_shift=0.02).flagged  # significant, but smaller than asked
    assert change_point(step, seed=3).p_value == change_point(step, seed=3).p_value  # deterministic


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"min_segment": 0}, "min_segment"),
        ({"n_permutations": 0}, "n_permutations"),
    ],
)
def test_bad_arguments_are_refused(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        change_point([0.1] * 10, **kw)


def test_a_non_finite_value_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        change_point([0.1] * 9 + [float("nan")])
