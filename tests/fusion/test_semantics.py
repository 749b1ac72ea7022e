"""Tests for pytest_retrieval.fusion.semantics (``fuse`` and its wrappers).

Two layers:
* hand-computed cases for every engine rule (the one-list normalisations, combination, RRF
  rounding and the configuration rules are in test_normalize, test_combine, test_rrf and
  test_config) (values worked out on paper / with exact
  rationals, not by calling the code under test);
* an independent reference implementation (below) that transcribes the Java code paths
  literally - plain loops over dicts, float32 emulated with ``struct`` round-trips,
  OpenSearch's BigDecimal rounding with ``decimal`` - compared on thousands of seeded
  random cases: same document order and bit-identical scores.
"""

from __future__ import annotations

import decimal
import math
import random
from fractions import Fraction
from functools import cmp_to_key

import pytest

from pytest_retrieval.fusion.config import FusionConfig
from pytest_retrieval.fusion.semantics import fuse, fuse_runs, linear_fusion, rrf, weighted_fusion
from pytest_retrieval.types import Ranking

from .helpers import R, f32, f32_exact, ids

# =========================================================================== float32 helpers


JAVA_FLOAT_MIN_VALUE = f32(2.0**-149)
JAVA_FLOAT_MAX_VALUE = 3.4028234663852886e38


# =========================================================================== reference implementation


def ref_tie(tie_break, lists):
    seen = {}
    for lst in lists:
        for d, _ in lst:
            if d not in seen:
                seen[d] = len(seen)

    def cmp(a, b):
        if tie_break == "doc_id":
            return -1 if a < b else (1 if a > b else 0)
        return seen[a] - seen[b]

    return cmp


def ref_sort(scores, lists, tie_break, legacy_cmp=None):
    tie = ref_tie(tie_break, lists)

    def cmp(a, b):
        if scores[a] != scores[b]:
            return -1 if scores[a] > scores[b] else 1
        if legacy_cmp is not None:
            c = legacy_cmp(a, b)
            if c != 0:
                return c
        return tie(a, b)

    return sorted(scores, key=cmp_to_key(cmp))


def ref_os_round(k, rank):
    # BigDecimal.ONE.divide(BigDecimal.valueOf(k + rank), 10, RoundingMode.HALF_UP).floatValue()
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        q = (decimal.Decimal(1) / decimal.Decimal(k + rank)).quantize(
            decimal.Decimal("1E-10"), rounding=decimal.ROUND_HALF_UP
        )
    return f32_exact(Fraction(q))


def ref_rrf(lists, k, window, semantics, tie_break):
    lists = [lst[:window] for lst in lists]
    if semantics == "reference":
        exact = {}
        for lst in lists:
            rank = 1
            for d, _ in lst:
                exact[d] = exact.get(d, Fraction(0)) + Fraction(1, k + rank)
                rank += 1
        order = ref_sort(exact, lists, tie_break)
        return [(d, float(exact[d])) for d in order]
    if semantics == "opensearch":
        n = len(lists)
        arrays = {}
        for j in range(n):
            for pos in range(len(lists[j])):
                d = lists[j][pos][0]
                if d not in arrays:
                    arrays[d] = [0.0] * n
                arrays[d][j] = ref_os_round(k, pos + 1)
        combined = {}
        for d in arrays:
            total = 0.0
            for s in arrays[d]:
                total = f32(total + s)
            combined[d] = total
        order = ref_sort(combined, lists, tie_break)
        return [(d, combined[d]) for d in order]
    # elasticsearch + legacy: value.score += 1.0f / (rankConstant + frank)
    score = {}
    positions = {}
    originals = {}
    for qi in range(len(lists)):
        rank = 1
        for d, s in lists[qi]:
            score[d] = f32(score.get(d, 0.0) + f32(1.0 / f32(k + rank)))
            positions.setdefault(d, {})[qi] = rank - 1
            originals.setdefault(d, {})[qi] = f32(s)
            rank += 1
    if semantics == "elasticsearch":
        order = ref_sort(score, lists, tie_break)
        return [(d, score[d]) for d in order[:window]]

    def legacy(a, b):  # RRFQueryPhaseRankCoordinatorContext comparator, after the score test
        for qi in range(len(lists)):
            pa, pb = qi in positions[a], qi in positions[b]
            if pa and pb:
                if originals[a][qi] != originals[b][qi]:
                    return 1 if originals[a][qi] < originals[b][qi] else -1
            elif pa:
                return -1
            elif pb:
                return 1
        return 0

    order = ref_sort(score, lists, tie_break, legacy)
    return [(d, score[d]) for d in order]


def ref_os_min_max(scores):
    min_score = JAVA_FLOAT_MAX_VALUE
    max_score = JAVA_FLOAT_MIN_VALUE
    for s in scores:
        if s < min_score:
            min_score = s
        if s > max_score:
            max_score = s
    out = []
    for s in scores:
        if max_score == min_score and max_score == s:
            out.append(1.0)
        else:
            v = f32(f32(s - min_score) / f32(max_score - min_score))
            out.append(f32(0.001) if v == 0.0 else v)
    return out


def ref_os_l2(scores):
    acc = 0.0
    for s in scores:
        acc = f32(acc + f32(s * s))
    norm = f32(math.sqrt(acc))
    return [0.0 if norm == 0 else f32(s / norm) for s in scores]


def ref_os_combine(scores, technique, weights):
    def weight(i):
        return f32(weights[i]) if weights else 1.0

    sum_w = 0.0
    if technique == "arithmetic_mean":
        total = 0.0
        for i, s in enumerate(scores):
            if s >= 0.0:
                total = f32(total + f32(s * weight(i)))
                sum_w = f32(sum_w + weight(i))
        return 0.0 if sum_w == 0.0 else f32(total / sum_w)
    if technique == "geometric_mean":
        ln_sum = 0.0
        for i, s in enumerate(scores):
            if s <= 0:
                continue
            sum_w = f32(sum_w + weight(i))
            ln_sum = f32(ln_sum + weight(i) * math.log(s))
        return 0.0 if sum_w == 0 else f32(math.exp(f32(ln_sum / sum_w)))
    harm = 0.0
    for i, s in enumerate(scores):
        if s <= 0:
            continue
        sum_w = f32(sum_w + weight(i))
        harm = f32(harm + f32(weight(i) / s))
    return f32(sum_w / harm) if harm > 0 else 0.0


def ref_weighted(lists, normalization, combination, weights, window, tie_break):
    lists = [[(d, f32(s)) for d, s in lst[:window]] for lst in lists]
    n = len(lists)
    arrays = {}
    for j in range(n):
        raw = [s for _, s in lists[j]]
        normed = ref_os_min_max(raw) if normalization == "min_max" else ref_os_l2(raw)
        for (d, _), v in zip(lists[j], normed):
            if d not in arrays:
                arrays[d] = [0.0] * n
            arrays[d][j] = v
    combined = {d: ref_os_combine(arr, combination, weights) for d, arr in arrays.items()}
    order = ref_sort(combined, lists, tie_break)
    return [(d, combined[d]) for d in order]


def ref_es_normalize(scores, name):
    if name in ("none", "identity") or not scores:
        return list(scores)
    if name in ("minmax", "min_max"):
        lo, hi = JAVA_FLOAT_MAX_VALUE, JAVA_FLOAT_MIN_VALUE
        for s in scores:
            if s > hi:
                hi = s
            if s < lo:
                lo = s
        if abs(f32(lo - hi)) < f32(1e-6):
            return [1.0 for _ in scores]
        return [f32(f32(s - lo) / f32(hi - lo)) for s in scores]
    sum_sq = 0.0
    for s in scores:
        sum_sq += f32(s * s)
    norm = math.sqrt(sum_sq)
    if norm < f32(1e-6):
        return list(scores)
    return [f32(s / norm) for s in scores]


def ref_linear(lists, normalizers, weights, window, tie_break):
    lists = [[(d, f32(s)) for d, s in lst[:window]] for lst in lists]
    total = {}
    for j, lst in enumerate(lists):
        w = f32(weights[j]) if weights else 1.0
        normed = ref_es_normalize([s for _, s in lst], normalizers[j])
        for (d, _), v in zip(lst, normed):
            total[d] = f32(total.get(d, 0.0) + f32(w * v))
    order = ref_sort(total, lists, tie_break)
    return [(d, total[d]) for d in order[:window]]


# =========================================================================== random cases


def random_list(rng: random.Random, pool):
    size = rng.choice([0, 1, 1, 2, 3, 4, 6, 8, 12, 20, 30])
    docs = rng.sample(pool, min(size, len(pool)))
    kind = rng.random()
    if kind < 0.12:
        c = rng.choice([0.0, 1.0, 2.5, 13.7, 0.333])
        scores = [c] * len(docs)
    elif kind < 0.35:
        scores = [rng.choice([0.25, 0.5, 1.0, 1.5, 2.0]) for _ in docs]
    elif kind < 0.6:
        scores = [round(rng.uniform(0.0, 25.0), rng.choice([1, 3, 7])) for _ in docs]
    elif kind < 0.85:
        scores = [rng.random() for _ in docs]
    elif kind < 0.93:
        scores = [rng.choice([0.0, 0.0, rng.random()]) for _ in docs]
    else:
        scores = [rng.uniform(-5.0, 5.0) for _ in docs]
    scores.sort(reverse=True)  # engine order; equal scores keep the random doc order
    return list(zip(docs, scores))


def random_lists(rng: random.Random):
    pool = [f"d{i:02d}" for i in range(rng.randint(1, 25))]
    n = rng.choice([0, 1, 2, 2, 2, 3, 3])
    return [random_list(rng, pool) for _ in range(n)]


def random_os_weights(rng, n):
    if n == 0 or rng.random() < 0.35:
        return None
    raw = [rng.choice([0.0, rng.random(), rng.random()]) for _ in range(n)]
    if sum(raw) == 0:
        raw[0] = 1.0
    total = sum(raw)
    return tuple(w / total for w in raw)


def as_rankings(lists):
    return [R(*lst) for lst in lists]


def check_same(got: Ranking, expected):
    assert ids(got) == [d for d, _ in expected]
    assert got.scores == [s for _, s in expected]  # bit-identical


N_RANDOM = 3000


def test_random_rrf_matches_reference():
    rng = random.Random(20240611)
    for case in range(N_RANDOM):
        lists = random_lists(rng)
        k = rng.choice([1, 2, 10, 60, 60, 100, 1000])
        window = rng.choice([1, 2, 3, 5, 10, 100])
        tie = rng.choice(["doc_id", "input_order"])
        for sem in ("reference", "elasticsearch", "elasticsearch_legacy", "opensearch"):
            got = rrf(as_rankings(lists), rank_constant=k, window=window, semantics=sem, tie_break=tie)
            try:
                check_same(got, ref_rrf(lists, k, window, sem, tie))
            except AssertionError:
                pytest.fail(f"case {case} sem={sem} k={k} window={window} tie={tie} lists={lists}")


def test_random_weighted_matches_reference():
    rng = random.Random(7)
    for case in range(N_RANDOM):
        lists = random_lists(rng)
        norm = rng.choice(["min_max", "l2"])
        comb = rng.choice(["arithmetic_mean", "geometric_mean", "harmonic_mean"])
        weights = random_os_weights(rng, len(lists))
        window = rng.choice([1, 3, 5, 10, 100])
        tie = rng.choice(["doc_id", "input_order"])
        got = weighted_fusion(
            as_rankings(lists),
            normalization=norm,
            combination=comb,
            weights=weights,
            window=window,
            tie_break=tie,
        )
        try:
            check_same(got, ref_weighted(lists, norm, comb, weights, window, tie))
        except AssertionError:
            pytest.fail(f"case {case} {norm}/{comb} w={weights} window={window} lists={lists}")


def test_random_linear_matches_reference():
    rng = random.Random(99)
    for case in range(N_RANDOM):
        lists = random_lists(rng)
        n = len(lists)
        if rng.random() < 0.5:
            single = rng.choice(["minmax", "l2_norm", "none"])
            norms, norm_arg = [single] * n, single
        else:
            norms = [rng.choice(["minmax", "l2_norm", "none"]) for _ in range(n)]
            norm_arg = tuple(norms) if n else "none"
        weights = (
            None
            if rng.random() < 0.3 or n == 0
            else tuple(rng.choice([0.0, 0.5, 1.0, 2.0, rng.uniform(0, 3)]) for _ in range(n))
        )
        window = rng.choice([1, 3, 5, 10, 100])
        tie = rng.choice(["doc_id", "input_order"])
        got = linear_fusion(
            as_rankings(lists), normalization=norm_arg, weights=weights, window=window, tie_break=tie
        )
        try:
            check_same(got, ref_linear(lists, norms, weights, window, tie))
        except AssertionError:
            pytest.fail(f"case {case} norms={norms} w={weights} window={window} lists={lists}")


def test_reference_self_check_float32_helpers():
    # the two float32 routes of the reference agree with each other
    rng = random.Random(3)
    for _ in range(2000):
        num, den = rng.randint(1, 10**12), rng.randint(1, 10**12)
        x = Fraction(num, den)
        a = f32_exact(x)
        assert abs(Fraction(a) - x) <= abs(Fraction(f32(float(x))) - x)


# =========================================================================== RRF by hand


def test_rrf_reference_values_and_absent_documents():
    a = R(("x", 9), ("y", 5))
    b = R(("y", 0.9), ("z", 0.1))
    got = rrf([a, b], rank_constant=60, semantics="reference")
    assert ids(got) == ["y", "x", "z"]
    assert got.scores[0] == float(Fraction(1, 62) + Fraction(1, 61))  # y: rank 2 + rank 1
    assert got.scores[1] == 1 / 61  # x: absent from b adds 0
    assert got.scores[2] == 1 / 62


def test_rrf_elasticsearch_is_java_float():
    got = rrf([R(("a", 1.0)), R(("a", 1.0))], rank_constant=60, semantics="elasticsearch")
    one = f32(1 / 61)
    assert one == 0.016393441706895828 and one != 1 / 61
    assert got.scores == [f32(one + one)]


def test_rrf_rank_is_position_in_cut_list():
    lst = R(("a", 3), ("b", 2), ("c", 1))
    got = rrf([lst], rank_constant=1, window=2, semantics="reference")
    assert got.pairs() == [("a", 1 / 2), ("b", 1 / 3)]  # c is outside the window


def test_rrf_opensearch_sums_rounded_floats():
    a = R(*[(f"a{i}", 1.0) for i in range(98)], ("x", 0.5))  # x at rank 99 in list 1
    b = R(("x", 1.0))  # x at rank 1 in list 2
    got = rrf([a, b], rank_constant=60, semantics="opensearch")
    x = dict(got.pairs())["x"]
    # 1/159 = 0.006289308176... -> 0.0062893082 ; 1/61 = 0.016393442622... -> 0.0163934426
    assert x == f32(f32_exact(Fraction("0.0062893082")) + f32_exact(Fraction("0.0163934426")))
    es = dict(rrf([a, b], rank_constant=60, semantics="elasticsearch").pairs())["x"]
    assert es == f32(f32(1 / 159) + f32(1 / 61))
    assert x == 0.02268275059759617 and es == 0.02268274873495102  # one float ulp apart


def test_rrf_ties_elasticsearch_use_tie_break_but_legacy_uses_original_scores():
    # "z" is rank 1 of query 1 only, "a" rank 1 of query 2 only: equal rrf scores.
    q1 = R(("z", 5.0), ("m", 1.0))
    q2 = R(("a", 0.9), ("n", 0.1))
    for sem in ("elasticsearch", "opensearch", "reference"):
        assert ids(rrf([q1, q2], semantics=sem))[:2] == ["a", "z"]  # doc_id tie-break
        assert ids(rrf([q1, q2], semantics=sem, tie_break="input_order"))[:2] == ["z", "a"]
    # RRFQueryPhaseRankCoordinatorContext: present in query 1 beats absent from it
    assert ids(rrf([q1, q2], semantics="elasticsearch_legacy"))[:2] == ["z", "a"]
    # both in query 1 with equal rrf score -> higher query-1 score first
    q1 = R(("b", 7.0), ("c", 3.0))
    q2 = R(("c", 0.8), ("b", 0.2))
    assert ids(rrf([q1, q2], semantics="elasticsearch_legacy")) == ["b", "c"]
    q1 = R(("c", 7.0), ("b", 3.0))
    q2 = R(("b", 0.8), ("c", 0.2))
    assert ids(rrf([q1, q2], semantics="elasticsearch_legacy")) == ["c", "b"]
    assert ids(rrf([q1, q2], semantics="elasticsearch")) == ["b", "c"]


def test_rrf_output_size_per_semantics():
    q1 = R(*[(f"a{i}", 10 - i) for i in range(5)])
    q2 = R(*[(f"b{i}", 10 - i) for i in range(5)])
    # ES retriever: top min(rank_window_size, n) (RRFRetrieverBuilder)
    assert len(rrf([q1, q2], window=3, semantics="elasticsearch")) == 3
    # legacy coordinator and OpenSearch ScoreCombiner keep every unique doc of the windows
    assert len(rrf([q1, q2], window=3, semantics="elasticsearch_legacy")) == 6
    assert len(rrf([q1, q2], window=3, semantics="opensearch")) == 6
    assert len(rrf([q1, q2], window=3, semantics="reference")) == 6


def test_rrf_empty_inputs():
    assert len(rrf([], semantics="elasticsearch")) == 0
    assert len(rrf([Ranking(), Ranking()], semantics="opensearch")) == 0
    got = rrf([Ranking(), R(("a", 1.0))], semantics="elasticsearch")
    assert got.pairs() == [("a", f32(1 / 61))]


# =========================================================================== OpenSearch normalisation by hand


def test_os_weighted_pipeline_by_hand():
    a = R(("x", 4.0), ("y", 3.0), ("z", 2.0))  # -> x 1.0, y 0.5, z 0.001
    b = R(("y", 10.0), ("w", 0.0))  # -> y 1.0, w 0.001
    arith = weighted_fusion([a, b], combination="arithmetic_mean")
    assert arith.pairs() == [("y", 0.75), ("x", 0.5), ("w", f32(f32(0.001) / 2)), ("z", f32(f32(0.001) / 2))]
    geo = weighted_fusion([a, b], combination="geometric_mean")
    assert ids(geo) == ["x", "y", "w", "z"]
    assert geo.scores[0] == 1.0
    assert abs(geo.scores[1] - math.sqrt(0.5)) < 1e-7
    assert abs(geo.scores[2] - 0.001) < 1e-9 and geo.scores[2] == geo.scores[3]
    harm = weighted_fusion([a, b], combination="harmonic_mean")
    assert ids(harm) == ["x", "y", "w", "z"]
    assert harm.scores[:2] == [1.0, f32(f32(2.0) / f32(3.0))]
    assert harm.scores[2] == harm.scores[3] == f32(f32(1.0) / f32(1.0 / f32(0.001)))


def test_os_weights_apply_and_divide_by_float_weight_sum():
    a = R(("x", 4.0), ("y", 3.0), ("z", 2.0))
    b = R(("y", 10.0), ("w", 0.0))
    got = dict(weighted_fusion([a, b], weights=[0.3, 0.7]).pairs())
    w1, w2 = f32(0.3), f32(0.7)
    assert got["y"] == f32(f32(f32(f32(0.5) * w1) + f32(1.0 * w2)) / f32(w1 + w2))
    assert abs(got["y"] - 0.85) < 1e-6
    assert got["x"] == f32(f32(1.0 * w1) / f32(w1 + w2))  # missing in b: 0 * 0.7 counted


def test_os_single_list_and_empty():
    assert weighted_fusion([R(("a", 3.0))]).pairs() == [("a", 1.0)]
    assert len(weighted_fusion([Ranking(), Ranking()])) == 0


# =========================================================================== Elasticsearch linear by hand


def test_es_linear_missing_documents_add_nothing():
    a = R(("x", 4.0), ("y", 3.0), ("z", 2.0))  # minmax -> 1.0, 0.5, 0.0
    b = R(("y", 10.0), ("w", 5.0))  # minmax -> 1.0, 0.0
    got = linear_fusion([a, b], normalization="minmax", weights=[2.0, 1.0])
    assert got.pairs() == [("x", 2.0), ("y", 2.0), ("w", 0.0), ("z", 0.0)]  # ties by doc id
    raw = linear_fusion([a, b])  # default: none, weight 1
    assert raw.pairs() == [("y", 13.0), ("w", 5.0), ("x", 4.0), ("z", 2.0)]


def test_es_linear_per_retriever_normalizer_and_window_cut():
    a = R(("x", 4.0), ("y", 3.0))
    b = R(("y", 3.0), ("z", 4.0))
    got = linear_fusion([a, b], normalization=("minmax", "l2_norm"), window=2)
    assert len(got) == 2  # top rank_window_size
    full = dict(linear_fusion([a, b], normalization=("minmax", "l2_norm")).pairs())
    assert full["y"] == f32(0.0 + f32(f32(3.0 / 5.0)))
    assert full["x"] == 1.0


def test_linear_count_mismatch():
    with pytest.raises(ValueError, match="2 weights given for 1 sub-rankings"):
        linear_fusion([R(("a", 1.0))], weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="2 normalizers given for 1"):
        linear_fusion([R(("a", 1.0))], normalization=("minmax", "none"))


# =========================================================================== input checks, runs, warnings


def test_bad_inputs():
    with pytest.raises(ValueError, match="twice"):
        rrf([R(("a", 2.0), ("a", 1.0))])
    with pytest.raises(ValueError, match="non-finite"):
        weighted_fusion([R(("a", float("nan")))])
    with pytest.raises(ValueError, match="not a Ranking"):
        rrf([[("a", 1.0)]])
    with pytest.raises(ValueError, match="fusion method"):
        FusionConfig(method="borda")
    # duplicates beyond the window are cut before the check
    assert ids(rrf([R(("a", 2.0), ("b", 1.5), ("a", 1.0))], window=2)) == ["a", "b"]


def test_fuse_runs_per_query_missing_query_is_empty_list():
    run1 = {"q1": R(("a", 3.0), ("b", 2.0)), "q2": R(("c", 1.0))}
    run2 = {"q1": R(("b", 0.9), ("d", 0.5)), "q3": R(("e", 0.7), ("f", 0.6))}
    cfg = FusionConfig(method="rrf", semantics="elasticsearch", rank_constant=60)
    out = fuse_runs([run1, run2], cfg)
    assert list(out) == ["q1", "q2", "q3"]
    assert ids(out["q1"]) == ["b", "a", "d"]
    assert out["q2"].pairs() == [("c", f32(1 / 61))]
    assert ids(out["q3"]) == ["e", "f"]
    top1 = fuse_runs([run1, run2], cfg, k=1)
    assert [len(r) for r in top1.values()] == [1, 1, 1]
    assert fuse(list(run1.values())[:1], cfg).pairs() == rrf([run1["q1"]], semantics="elasticsearch").pairs()
    with pytest.raises(ValueError, match="k must be"):
        fuse_runs([run1], cfg, k=0)
