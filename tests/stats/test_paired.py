"""paired.py against scipy, brute force and hand computations."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from scipy import stats  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.stats.paired import _sign_flip_p, paired_comparison
from pytest_retrieval.stats.resampling import generator

from .values import as_map, ndcg_like

# =========================================================================== paired test


@pytest.mark.parametrize("n,seed", [(2, 1), (5, 2), (30, 3), (300, 4), (1000, 5)])
def test_paired_t_matches_scipy_ttest_rel(n, seed):
    rng = np.random.default_rng(seed)
    b = ndcg_like(rng, n)
    c = np.clip(b + rng.normal(-0.01, 0.1, n), 0, 1)
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.01, n_resamples=1000)
    ref = stats.ttest_rel(c, b)
    assert r.t_statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert r.p_ttest == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-12)
    assert r.df == n - 1
    # the non-inferiority t cross-check is the one-sided test of the shifted differences
    one = stats.ttest_1samp(c - b + 0.01, 0.0, alternative="greater")
    assert r.p_ttest_noninferiority == pytest.approx(one.pvalue, rel=1e-8, abs=1e-12)


def brute_force_sign_flip(d):
    obs = abs(sum(d))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


@pytest.mark.parametrize("n,seed", [(1, 0), (4, 1), (9, 2), (12, 3)])
def test_exact_randomization_matches_brute_force(n, seed):
    rng = np.random.default_rng(seed)
    b = ndcg_like(rng, n)
    c = np.clip(b + rng.normal(0.05, 0.2, n), 0, 1)
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.01, n_resamples=1000)
    assert r.randomization_exact
    assert r.p_randomization == pytest.approx(brute_force_sign_flip((c - b).tolist()), abs=1e-15)


def test_exact_randomization_matches_scipy_permutation_test():
    rng = np.random.default_rng(11)
    b = ndcg_like(rng, 14)
    c = np.clip(b + rng.normal(0.08, 0.15, 14), 0, 1)
    ref = stats.permutation_test(
        (c, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
        alternative="two-sided",
    )
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.0)
    assert r.p_randomization == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_randomization_close_to_exact():
    rng = np.random.default_rng(12)
    n = 14
    b = ndcg_like(rng, n)
    c = np.clip(b + rng.normal(0.06, 0.15, n), 0, 1)
    d = c - b
    ref = stats.permutation_test(
        (c, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
        alternative="two-sided",
    ).pvalue
    p, exact = _sign_flip_p(d, 20000, generator(0), exact_max=0)  # force Monte Carlo
    assert not exact
    se = math.sqrt(ref * (1 - ref) / 20000)
    assert abs(p - ref) < 4 * se + 1e-4
    # n = 20 through paired_comparison (Monte Carlo) vs our exact enumeration of 2^20
    b = ndcg_like(rng, 20)
    c = np.clip(b + rng.normal(0.05, 0.2, 20), 0, 1)
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.0, n_resamples=20000)
    exact_p, was_exact = _sign_flip_p(c - b, 0, generator(0), exact_max=20)
    assert was_exact and not r.randomization_exact
    se = math.sqrt(exact_p * (1 - exact_p) / 20000)
    assert abs(r.p_randomization - exact_p) < 4 * se + 1e-4 and 0 < r.p_randomization <= 1


def test_bootstrap_ci_close_to_scipy_bootstrap():
    rng = np.random.default_rng(21)
    n = 200
    b = ndcg_like(rng, n)
    c = np.clip(b + rng.normal(-0.01, 0.15, n), 0, 1)
    d = c - b
    se = d.std(ddof=1) / math.sqrt(n)
    for ours_method, scipy_method in (("percentile", "percentile"), ("bca", "BCa")):
        r = paired_comparison(as_map(b), as_map(c), max_drop=0.01, ci_method=ours_method)
        # our (ci_low, ci_high) = the two-sided 2*0.95-1 = 90% interval
        ref = stats.bootstrap(
            (d,),
            np.mean,
            confidence_level=0.90,
            method=scipy_method,
            n_resamples=10000,
            random_state=np.random.default_rng(0),
        )
        assert r.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.1 * se)
        assert r.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.1 * se)
        # and both close to the t interval
        tq = stats.t.ppf(0.95, n - 1)
        assert r.ci_low == pytest.approx(d.mean() - tq * se, abs=0.15 * se)


def test_bca_p_values_invert_the_interval():
    rng = np.random.default_rng(5)
    b = ndcg_like(rng, 60)
    c = np.clip(b + rng.normal(0.0, 0.2, 60), 0, 1)
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.0, ci_method="bca")
    # the margin at which the BCa lower bound sits has p_noninferiority ~ alpha
    r2 = paired_comparison(as_map(b), as_map(c), max_drop=-r.ci_low + 1e-12, ci_method="bca")
    assert r2.p_noninferiority == pytest.approx(0.05, abs=0.002)


def test_percentile_p_value_agrees_exactly_with_ci_verdict():
    rng = np.random.default_rng(8)
    for i in range(60):
        n = int(rng.integers(5, 80))
        b = ndcg_like(rng, n)
        c = np.clip(b + rng.normal(rng.uniform(-0.05, 0.05), 0.15, n), 0, 1)
        for margin in (0.0, 0.01, 0.03):
            r = paired_comparison(as_map(b), as_map(c), max_drop=margin, n_resamples=2000, seed=i)
            assert r.non_inferior == (r.p_noninferiority < r.alpha)
            assert r.improved == (r.p_improvement < r.alpha)


def test_determinism_and_order_independence():
    rng = np.random.default_rng(9)
    b = as_map(ndcg_like(rng, 200))
    c = {q: min(1.0, v + rng.normal(0, 0.1)) for q, v in b.items()}
    r1 = paired_comparison(b, c, max_drop=0.01, seed=7)
    r2 = paired_comparison(dict(reversed(list(b.items()))), dict(sorted(c.items())), max_drop=0.01, seed=7)
    assert r1.as_dict() == r2.as_dict()
    r3 = paired_comparison(b, c, max_drop=0.01, seed=8)
    assert (r3.ci_low, r3.p_randomization) != (r1.ci_low, r1.p_randomization)
    assert r3.mean_diff == r1.mean_diff and r3.p_ttest == r1.p_ttest


def test_unchanged_pipeline_passes():
    rng = np.random.default_rng(1)
    values = as_map(ndcg_like(rng, 300))
    for margin in (0.0, 0.01):
        r = paired_comparison(values, dict(values), max_drop=margin)
        assert r.non_inferior and not r.regressed and not r.improved
        assert (r.ci_low, r.ci_high, r.mean_diff) == (0.0, 0.0, 0.0)
        assert r.p_randomization == 1.0 and r.p_ttest == 1.0
        assert (r.won, r.lost, r.tied) == (0, 0, 300) and r.effect_size == 0.0
        assert r.worst(5) == [] and r.p_noninferiority == 0.0


def test_real_drop_of_005_over_300_queries_fails():
    rng = np.random.default_rng(2)
    b = rng.uniform(0.3, 1.0, 300)
    # ~40% of the queries lose ~0.125 each, the rest are unchanged: mean drop exactly 0.05
    hit = rng.random(300) < 0.4
    c = b + np.where(hit, -0.05 * 300 / hit.sum(), 0.0)
    r = paired_comparison(as_map(b), as_map(c), max_drop=0.01)
    assert r.mean_diff == pytest.approx(-0.05)
    assert r.regressed and r.significant_drop and r.ci_high < -0.01
    assert r.p_randomization < 1e-3 and r.p_ttest < 1e-10
    assert r.lost == hit.sum() and r.won == 0
    assert "FAIL, regressed: a drop larger than 0.01 is not ruled out" in r.describe("bm25 ndcg@10")


def test_small_drop_within_margin_passes():
    rng = np.random.default_rng(4)
    b = rng.uniform(0.2, 0.8, 300)
    d = np.zeros(300)
    d[:20] = 0.1  # 20 queries gain 0.1, 26 lose 0.1: mean drop exactly 0.002
    d[20:46] = -0.1
    rng.shuffle(d)
    r = paired_comparison(as_map(b), as_map(b + d), max_drop=0.01)
    assert r.mean_diff == pytest.approx(-0.002)
    assert r.non_inferior and not r.improved
    assert (r.won, r.lost, r.tied) == (20, 26, 254)
    assert [q.diff for q in r.worst(3)] == pytest.approx([-0.1] * 3)
    assert len(r.worst(100)) == 26 and len(r.best(100)) == 20


def test_worst_queries_order_and_unpaired():
    b = {"a": 0.9, "b": 0.5, "c": 0.4, "d": 0.3, "x": 1.0}
    c = {"a": 0.1, "b": 0.4, "c": 0.5, "d": 0.2, "y": 0.0}
    r = paired_comparison(b, c, max_drop=0.0, n_resamples=1000)
    assert r.n == 4 and r.only_in_baseline == ("x",) and r.only_in_current == ("y",)
    assert r.unpaired == 2
    worst = r.worst(5)
    assert [q.qid for q in worst] == ["a", "b", "d"]  # b and d tie at -0.1: by qid
    assert worst[0].diff == pytest.approx(-0.8) and r.best(1)[0].qid == "c"
    assert "not compared: 1 queries only in the baseline, 1 only in this run" in r.describe()


def test_constant_shift_and_edge_cases():
    b = as_map([0.5] * 20)
    c = as_map([0.49] * 20)
    r = paired_comparison(b, c, max_drop=0.01)
    assert r.ci_low == r.ci_high == r.mean_diff == pytest.approx(-0.01)
    assert r.p_ttest == 0.0 and r.effect_size == -math.inf
    one = paired_comparison({"q": 0.5}, {"q": 0.7}, max_drop=0.0, n_resamples=100)
    assert one.n == 1 and one.p_randomization == 1.0 and math.isnan(one.p_ttest)
    assert one.improved  # a single query is taken at face value: see minimum_detectable_drop
    with pytest.raises(ValueError, match="no query is in both"):
        paired_comparison({"a": 1.0}, {"b": 1.0}, max_drop=0.01)
    with pytest.raises(ValueError, match="max_drop"):
        paired_comparison(b, c, max_drop=-0.01)
    with pytest.raises(ValueError, match="non-finite"):
        paired_comparison({"a": math.nan}, {"a": 1.0}, max_drop=0.01)
    with pytest.raises(ValueError, match="confidence"):
        paired_comparison(b, c, max_drop=0.01, confidence=95)


def test_speed_10000_resamples_1000_queries():
    rng = np.random.default_rng(0)
    b = as_map(ndcg_like(rng, 1000))
    c = {q: v + rng.normal(0, 0.1) for q, v in b.items()}
    paired_comparison(b, c, max_drop=0.01, n_resamples=200)  # warm up
    t0 = time.perf_counter()
    paired_comparison(b, c, max_drop=0.01)
    assert time.perf_counter() - t0 < 3.0  # ~0.2 s typically; generous for busy CI hosts
