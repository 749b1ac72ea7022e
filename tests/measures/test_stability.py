"""The judgment-free comparison measures (measures/stability.py, issue #33): the RBO paper's worked
values, a plain-Python transcription of its formulas and the `rbo` package (changyaochen) on
10,000 random pairs to 1e-12, Kendall's tau against scipy, the refusals."""

from __future__ import annotations

import doctest
import math
import random

import numpy as np
import pytest

from pytest_retrieval.measures import stability, stability_diff
from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.measures.registry import BY_NAME, COMPARISON_METRICS
from pytest_retrieval.measures.stability import RankingPairs, compare, kendall_tau, rbo
from pytest_retrieval.types import Ranking

TOL = 1e-12


# --------------------------------------------------------------------------- the paper, in Python


def paper_rbo(S, T, p):
    """(min, res, ext) transcribed from Webber, Moffat and Zobel 2010: eq. 11 at depth l, eq. 30,
    eq. 32 (s <= l: S the shorter list); empty lists as stability.py's docstring says."""
    if not S and not T:
        return 1.0, 0.0, 1.0
    if not S or not T:
        return 0.0, 0.0, 0.0
    if len(S) > len(T):
        S, T = T, S
    s, l_ = len(S), len(T)
    X = [len(set(S[:d]) & set(T[:d])) for d in range(1, l_ + 1)]
    x_l, x_s = X[l_ - 1], X[s - 1]
    c = (1 - p) / p
    r_min = c * (sum((X[d - 1] - x_l) * p**d / d for d in range(1, l_ + 1)) - x_l * math.log(1 - p))
    f = l_ + s - x_l
    r_res = (
        p**s
        + p**l_
        - p**f
        - c
        * (
            s * sum(p**d / d for d in range(s + 1, f + 1))
            + l_ * sum(p**d / d for d in range(l_ + 1, f + 1))
            + x_l * (math.log(1 / (1 - p)) - sum(p**d / d for d in range(1, f + 1)))
        )
    )
    r_ext = (
        c
        * (
            sum(X[d - 1] / d * p**d for d in range(1, l_ + 1))
            + sum(x_s * (d - s) / (s * d) * p**d for d in range(s + 1, l_ + 1))
        )
        + ((x_l - x_s) / l_ + x_s / s) * p**l_
    )
    return r_min, r_res, r_ext


def random_pairs(seed, n, max_len=15, pool=25):
    rng = random.Random(seed)
    refs, curs = [], []
    for _ in range(n):
        refs.append(rng.sample(range(pool), rng.randint(0, max_len)))
        shape = rng.random()
        if shape < 0.1:
            curs.append(list(refs[-1]))  # identical
        elif shape < 0.2:
            curs.append([d + pool for d in rng.sample(range(pool), rng.randint(0, max_len))])  # disjoint
        else:
            curs.append(rng.sample(range(pool), rng.randint(0, max_len)))
    return refs, curs


# --------------------------------------------------------------------------- worked values


def test_identical_top_d_has_the_papers_top_weightness_as_rbo_min():
    # eq. 21: the first 10 ranks carry 86% of RBO's weight at p = 0.9 (the paper's example; the
    # first 50 at p = 0.98, 85.2%); for two identical top d, RBO_min is that weight and
    # RBO_min + RBO_res = RBO_ext = 1
    for p, d, share in ((0.9, 10, 0.86), (0.98, 50, 0.85)):
        docs = [str(i) for i in range(d)]
        r = rbo(RankingPairs.from_lists([docs], [docs]), d, p)
        weight = (
            1 - p ** (d - 1) + (1 - p) / p * d * (math.log(1 / (1 - p)) - sum(p**i / i for i in range(1, d)))
        )
        assert abs(r.min[0] - weight) <= TOL and round(weight, 2) == share
        assert abs(r.min[0] + r.res[0] - 1.0) <= TOL and abs(r.ext[0] - 1.0) <= TOL


def test_a_hand_computed_pair():
    # abc vs adb, p = 0.9, k = 3: X = 1, 1, 2
    p = 0.9
    r = rbo(RankingPairs.from_lists([list("abc")], [list("adb")]), 3, p)
    ext = (2 / 3) * p**3 + (1 - p) / p * (p + p**2 / 2 + 2 * p**3 / 3)  # eq. 23
    low = (1 - p) / p * (-p - p**2 / 2 + 2 * math.log(10))  # eq. 11
    w = [p**d / d for d in range(1, 5)]  # f = 3 + 3 - 2 = 4
    res = p**3 + p**3 - p**4 - (1 - p) / p * (3 * w[3] + 3 * w[3] + 2 * (math.log(10) - sum(w)))  # eq. 30
    assert abs(r.ext[0] - ext) <= TOL and abs(ext - 0.685) <= TOL
    assert abs(r.min[0] - low) <= TOL and abs(r.res[0] - res) <= TOL


def test_uneven_lists_a_prefix_extrapolates_to_one():
    # section 4.3: S = abc seen, L = abcdefgh: the observed agreement is perfect
    r = rbo(RankingPairs.from_lists([list("abc")], [list("abcdefgh")]), 10, 0.9)
    assert abs(r.ext[0] - 1.0) <= TOL and abs(r.min[0] + r.res[0] - 1.0) <= TOL


def test_empty_and_disjoint_rankings():
    pairs = RankingPairs.from_lists([[], [], ["a"], ["a", "b"]], [[], ["x"], [], ["c", "d"]])
    got = compare(
        pairs, ["rbo@5", "rbo_min@5", "rbo_res@5", "jaccard@5", "overlap@5", "top1_changed", "topk_changed@5"]
    )
    assert got["rbo(0.9)@5"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert got["rbo_min(0.9)@5"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert got["rbo_res(0.9)@5"][:3].tolist() == [0.0, 0.0, 0.0]
    assert abs(got["rbo_res(0.9)@5"][3] - paper_rbo(["a", "b"], ["c", "d"], 0.9)[1]) <= TOL
    assert got["jaccard@5"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert got["overlap@5"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert got["top1_changed"].tolist() == [0.0, 1.0, 1.0, 1.0]
    assert got["topk_changed@5"].tolist() == [0.0, 1.0, 1.0, 1.0]
    tau = compare(pairs, ["kendall_tau@5", "rank_change@5"])
    assert np.isnan(tau["kendall_tau@5"]).all() and np.isnan(tau["rank_change@5"]).all()


def test_overlap_jaccard_top_k_and_rank_change():
    pairs = RankingPairs.from_lists([list("abcd"), list("abcd")], [list("bacx"), list("abcd")])
    got = compare(pairs, ["jaccard@4", "overlap@4", "topk_changed@2", "rank_change@4", "kendall_tau@4"])
    assert got["jaccard@4"].tolist() == [3 / 5, 1.0]
    assert got["overlap@4"].tolist() == [3 / 4, 1.0]
    assert got["topk_changed@2"].tolist() == [1.0, 0.0]
    assert got["rank_change@4"].tolist() == [2 / 3, 0.0]  # a and b moved by one, c stayed
    assert got["kendall_tau@4"].tolist() == [1 / 3, 1.0]  # (2 - 1) / 3


# --------------------------------------------------------------------------- independent implementations


@pytest.mark.parametrize("k", [5, 10, 20])
def test_rbo_equals_the_papers_formulas_on_random_pairs(k):
    refs, curs = random_pairs(k, 3400)
    for p in (0.5, 0.9, 0.98):
        r = rbo(RankingPairs.from_arrays(*_arrays(refs, curs)), k, p)
        for n, (a, b) in enumerate(zip(refs, curs)):
            want = paper_rbo(a[:k], b[:k], p)
            got = (r.min[n], r.res[n], r.ext[n])
            assert max(abs(x - y) for x, y in zip(got, want)) <= TOL, (a, b, p, k, got, want)
            assert got[0] - TOL <= got[2] <= got[0] + got[1] + TOL  # min <= ext <= max


def test_rbo_ext_equals_the_rbo_package_on_10000_random_pairs():
    try:
        from rbo import RankingSimilarity
    except ImportError:
        from tests.ci import unavailable

        unavailable("the rbo package is not installed (scripts/test installs it)")
    refs, curs = random_pairs(7, 10_000, max_len=20, pool=30)
    for p in (0.9, 0.8):
        got = rbo(RankingPairs.from_lists(refs, curs), 20, p).ext
        for n, (a, b) in enumerate(zip(refs, curs)):
            want = RankingSimilarity(a, b).rbo_ext(p)
            assert abs(got[n] - want) <= TOL, (a, b, p, got[n], want)


def test_kendall_tau_equals_scipy_on_the_shared_documents():
    from scipy.stats import kendalltau

    refs, curs = random_pairs(11, 400, max_len=70, pool=80)
    for k in (10, 70):  # one and two 64-bit words of current ranks
        got = kendall_tau(RankingPairs.from_lists(refs, curs), k)
        for n, (a, b) in enumerate(zip(refs, curs)):
            a, b = a[:k], b[:k]
            shared = [d for d in a if d in b]
            if len(shared) < 2:
                assert np.isnan(got[n])
                continue
            want = kendalltau([a.index(d) for d in shared], [b.index(d) for d in shared]).statistic
            assert abs(got[n] - want) <= TOL, (a, b, k)


def test_the_two_builders_agree():
    refs, curs = random_pairs(3, 500, pool=40)
    by_lists = RankingPairs.from_lists(
        [[str(d) for d in r] for r in refs], [[str(d) for d in c] for c in curs]
    )
    by_arrays = RankingPairs.from_arrays(*_arrays(refs, curs))
    assert np.array_equal(by_lists.reference_in_current, by_arrays.reference_in_current)
    names = ["rbo@10", "jaccard@10", "top1_changed", "topk_changed@10", "kendall_tau@10", "rank_change@10"]
    one, two = compare(by_lists, names), compare(by_arrays, names)
    for m in one:
        assert np.array_equal(one[m], two[m], equal_nan=True), m


def _arrays(refs, curs):
    width = max(max(map(len, refs)), max(map(len, curs)), 1)
    pad = stability.PAD
    return (
        np.array([r + [pad] * (width - len(r)) for r in refs], dtype=np.int64),
        np.array([c + [pad] * (width - len(c)) for c in curs], dtype=np.int64),
    )


# --------------------------------------------------------------------------- refusals, registry


def test_a_document_twice_is_refused_by_name():
    with pytest.raises(ValueError, match=r"query 'q2': document 'b' is twice in the current ranking"):
        RankingPairs.from_lists([["a"], ["a"]], [["a"], ["b", "c", "b"]], names=["q1", "q2"])
    with pytest.raises(ValueError, match=r"reference: row 1 holds document 7 twice"):
        RankingPairs.from_arrays([[1, 2, -1], [7, 3, 7]], [[1, -1, -1], [3, -1, -1]])
    with pytest.raises(ValueError, match="document after its padding"):
        RankingPairs.from_arrays([[1, -1, 2]], [[1, 2, 3]])
    with pytest.raises(ValueError, match="negative document id"):
        RankingPairs.from_arrays([[1, -5]], [[1, 2]])
    with pytest.raises(ValueError, match="persistence p"):
        rbo(RankingPairs.from_lists([["a"]], [["a"]]), 10, 1.0)
    with pytest.raises(ValueError, match="scored against judgments"):
        compare(RankingPairs.from_lists([["a"]], [["a"]]), ["ndcg@10"])


def test_the_registry_declares_every_comparison_and_evaluate_leaves_them_out():
    assert set(COMPARISON_METRICS) == set(stability.COMPARISONS)
    for name in COMPARISON_METRICS:
        m = BY_NAME[name]
        assert m.compares_rankings and not m.needs_qrels and m.formula is None
    assert str(parse_metric("rbo@10")) == "rbo(0.9)@10" == str(parse_metric("rbo_ext(p=0.9)@10"))
    ev = evaluate({"q": {"a": 1}}, {"q": Ranking(["a"], [1.0])}, ["rbo@10", "top1_changed", "ndcg@10"])
    assert list(ev.per_query) == ["ndcg@10"]


def test_mean_defined_counts_the_undefined_values():
    assert stability.mean_defined([1.0, float("nan"), 0.5]) == (0.75, 2, 1)
    mean, n, missing = stability.mean_defined([float("nan")])
    assert math.isnan(mean) and (n, missing) == (0, 1)


def test_diff_rankings_names_what_came_and_went():
    changes = stability_diff.diff_rankings(
        {"q1": ["a", "b", "c"], "q2": ["x"], "gone": ["y"]},
        {"q1": ["d", "a", "e"], "q2": ["x"]},
        {"q1": {"e": 0}},
        k=3,
    )
    c = changes.queries["q1"]
    assert c.entered == (("d", 1), ("e", 3)) and c.left == (("b", 2), ("c", 3))
    assert c.entered_unjudged == ("d",) and c.moved == (("a", 1, 2),) and c.top1_changed
    assert changes.only_reference == ("gone",) and changes.unchanged_share == 0.5
    assert [q.query for q in changes.most_changed(5)] == ["q1"]
    assert c.as_dict()["kendall_tau"] is None  # one shared document: undefined


@pytest.mark.parametrize("module", [stability, stability_diff])
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0


def test_kendall_tau_without_numpy_bitwise_count(monkeypatch):
    # numpy < 2.0 has no bitwise_count: the bytes' table counts the bits
    refs, curs = random_pairs(5, 200, max_len=70, pool=80)
    pairs = RankingPairs.from_lists(refs, curs)
    want = kendall_tau(pairs, 70)
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert np.array_equal(kendall_tau(pairs, 70), want, equal_nan=True)
