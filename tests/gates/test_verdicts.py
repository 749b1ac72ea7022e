"""verdicts.py and floors.py: every gate kind measured and judged by ``gates.evaluate`` on a real
run of the tiny suite (no pytest in between). Timings vary: no assertion depends on them."""

from __future__ import annotations

import math

import pytest

from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.gates import BaselineGate, Floor, GateKind, GateOutcome, evaluate
from pytest_retrieval.gates.baseline import baseline_from_result
from pytest_retrieval.gates.floors import ab_percentiles, floor_key, kind_of
from pytest_retrieval.gates.regression import RegressionOutcome
from pytest_retrieval.gates.verdicts import measure, metric_value, point_verdict

from ..tiny import RICH_SUITE, TINY_SUITE, run_tiny


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return run_tiny(tmp_path_factory.mktemp("rich"), RICH_SUITE)


def floor(result, retriever, name):
    (f,) = [f for f in result.suite.floors if f.retriever == retriever and f.name == name]
    return f


# ------------------------------------------------------------------ declaring


def test_kinds_and_parameters_of_floor_keys():
    assert [kind_of(k) for k in ("ndcg@10", "p95_ms", "p99_ratio", "lift@ndcg@10", "abstention")] == [
        GateKind.QUALITY,
        GateKind.LATENCY,
        GateKind.LATENCY_RATIO,
        GateKind.LIFT,
        GateKind.ABSTENTION,
    ]
    assert floor_key("nDCG@10[multi-hop]") == ("ndcg@10", ">=", "multi-hop")
    assert floor_key("p95_ms") == ("p95_ms", "<=", None)
    f = Floor("r", "p99_ratio", "<=", 1.2)
    assert f.percentile == 99 and f.kind is GateKind.LATENCY_RATIO and f.name == "p99_ratio"
    assert Floor("r", "lift@mrr@10", ">=", 0.0).lifted_metric == "mrr@10"
    with pytest.raises(ValueError, match="not a latency floor"):
        _ = Floor("r", "ndcg@10", ">=", 0.5).percentile
    gate = BaselineGate("bm25", "ndcg@10", 0.01)
    assert gate.kind is GateKind.BASELINE and gate.name == "baseline:ndcg@10"
    assert tuple(gate)[:3] == ("bm25", "ndcg@10", 0.01)  # (retriever, metric, drop), then its origin and team
    assert (gate.origin, gate.team, gate.owners, gate.mention) == ("", "", (), False)


def test_suite_floors_are_typed(result):
    kinds = {(f.retriever, f.name): f.kind for f in result.suite.floors}
    assert kinds[("bm25", "ndcg@10[energy]")] is GateKind.QUALITY
    assert (
        kinds[("rrf", "lift@ndcg@10")] is GateKind.LIFT
        and kinds[("rrf", "abstention")] is GateKind.ABSTENTION
    )
    assert ab_percentiles(result.suite.floors, "bm25") == [50, 95]
    assert ab_percentiles(result.suite.floors, "rrf") == [95]  # no ratio floor: reported at p95


# ------------------------------------------------------------------ judging


def test_quality_floor(result):
    out = evaluate(result, floor(result, "bm25", "ndcg@10"))
    assert isinstance(out, GateOutcome) and out.passed
    assert (
        out.value
        == result.value("bm25", "ndcg@10")
        == result.retrievers["bm25"].evaluation.aggregate["ndcg@10"]
    )
    assert out.message == f"tiny :: bm25 :: ndcg@10 = {out.value:.4f} (>= 0.5000: ok)"


def test_stratum_floor_is_the_mean_over_the_tagged_queries(result):
    out = evaluate(result, floor(result, "bm25", "ndcg@10[energy]"))
    per_query = result.retrievers["bm25"].evaluation.per_query["ndcg@10"]
    assert out.value == per_query["q1"] and not out.passed
    assert "averaged over 1 judged queries tagged 'energy'" in out.message
    assert "worst 1 queries for ndcg@10[energy]:" in out.message and "solar panels efficiency" in out.message
    with pytest.raises(
        ConfigError, match="no judged query is tagged 'nope'; tags seen: energy, unanswerable"
    ):
        evaluate(result, Floor("bm25", "ndcg@10", ">=", 0.1, stratum="nope"))


def test_lift_floor_is_the_stage_minus_its_best_input(result):
    out = evaluate(result, floor(result, "rrf", "lift@ndcg@10"))
    inputs = max(result.value(n, "ndcg@10") for n in ("bm25", "text_only"))
    assert out.value == result.value("rrf", "ndcg@10") - inputs and not out.passed
    value, worst = measure(result, floor(result, "rrf", "lift@ndcg@10"))
    assert value == out.value and worst == sorted(worst, key=lambda w: (w[1], w[0]))


def test_abstention_floor_lists_the_unanswerable_queries_answered(result):
    out = evaluate(result, floor(result, "rrf", "abstention"))
    assert out.value == 0.5 and not out.passed  # u1 has no hit (abstains), u2 matches 'solar'
    assert "tiny :: rrf :: abstention = 0.5000, below the floor >= 0.9000" in out.message
    assert "u2  solar" in out.message


def test_latency_ceiling_on_its_interval_or_its_point(result):
    f = floor(result, "bm25", "p95_ms")
    out = evaluate(result, f)
    assert out.passed and out.value == result.retrievers["bm25"].latency.p95
    assert "95% lower bound" in out.message and "<= ceiling 10000 ms" in out.message
    latency = result.suite.model.latency
    latency.verdict = "point"
    try:
        point = evaluate(result, f)
    finally:
        latency.verdict = "ci"
    assert (
        point.passed and point.message == f"tiny :: bm25 :: p95_ms = {point.value:.2f} ms (<= 10000 ms: ok)"
    )


def test_latency_ratio_against_the_ab_baseline(result):
    out = evaluate(result, floor(result, "bm25", "p95_ratio"))
    assert out.passed and out.value == result.value("bm25", "p95_ratio") > 0
    assert "vs text_only" in out.message and "interleaved, 4 rounds" in out.message


def test_point_verdict_is_what_assert_floor_checks(result):
    f = floor(result, "bm25", "ndcg@10[energy]")
    out = point_verdict(result, f)
    assert not out.passed and "averaged over" not in out.message
    assert out.value == evaluate(result, f).value


def test_baseline_gate_needs_the_baseline(result):
    gate = result.suite.regression[0]
    assert tuple(gate)[:3] == ("bm25", "ndcg@10", 0.0) and len(result.suite.regression) == 3
    assert gate.origin.endswith("retrieval_tiny.yaml:34")  # where its max_drop was written
    with pytest.raises(ValueError, match="needs the baseline"):
        evaluate(result, gate)
    out = evaluate(result, gate, baseline=baseline_from_result(result))
    assert isinstance(out, RegressionOutcome) and out.passed and out.overall.mean_diff == 0.0


def test_unmeasured_latency_is_an_error_never_a_pass(tmp_path):
    text = TINY_SUITE.replace("    p95_ms: 10000\n", "")
    result = run_tiny(tmp_path, text, cli={"latency.enabled": False})
    with pytest.raises(InfrastructureError, match="no latency was measured"):
        evaluate(result, Floor("bm25", "p95_ms", "<=", 10.0))
    with pytest.raises(InfrastructureError, match="no A/B latency was measured"):
        metric_value(result, "bm25", "p95_ratio")
    assert math.isfinite(metric_value(result, "rrf", "recall@10"))


@pytest.mark.parametrize("verdict", ["ci", "point"])
def test_a_latency_gate_on_too_few_samples_is_an_error_never_a_pass(tmp_path, verdict):
    text = TINY_SUITE.replace(
        "latency:\n  warmup: 1\n", f"latency:\n  warmup: 1\n  repetitions: 1\n  verdict: {verdict}\n"
    )
    result = run_tiny(tmp_path, text)  # 4 queries timed once: 4 samples
    why = "tiny :: bm25 :: p95_ms: not enough samples to judge p95: 4 timed requests, p95 needs at least 20"
    with pytest.raises(InfrastructureError, match=why):
        evaluate(result, floor(result, "bm25", "p95_ms"))
    with pytest.raises(InfrastructureError, match=why):
        point_verdict(result, floor(result, "bm25", "p95_ms"))
    assert evaluate(result, Floor("bm25", "p50_ms", "<=", 10000.0)).passed  # p50 needs 2
    from pytest_retrieval.gates.verdicts import latency_sample_notes

    assert [n.split(" (")[0] for n in latency_sample_notes(result)] == [why]


# ------------------------------------------------------------------ worst queries against a baseline


def test_drops_first_prefers_the_largest_drops_over_ties_at_zero():
    from pytest_retrieval.gates.verdicts import drops_first

    before = {"a": 0.0, "b": 0.0, "c": 0.0, "x": 0.9, "y": 0.5, "z": 0.3}
    now = {"a": 0.0, "b": 0.0, "c": 0.0, "x": 0.1, "y": 0.4, "z": 0.3}
    assert drops_first(now, before, 3) == ["x", "y", "a"]  # then the lowest, ties by id
    assert drops_first(now, {}, 3) == ["a", "b", "c"]  # no baseline: the lowest values
    assert drops_first(now, before, 1) == ["x"]


class _Baseline:
    def __init__(self, values, left_out=None):
        self.values, self.left_out = values, left_out or {}

    def per_query(self, retriever, metric):
        return self.values


def test_a_failed_floor_lists_the_drops_against_the_baseline_first(result):
    f = Floor("bm25", "ndcg@10", ">=", 0.999)
    now = result.retrievers["bm25"].evaluation.per_query["ndcg@10"]
    lowest = [q for q, _ in result.retrievers["bm25"].evaluation.worst("ndcg@10", len(now))]
    dropped = lowest[-1]  # the best query now: in the baseline it was perfect, it dropped by a hair
    was = {q: v for q, v in now.items()}
    was[dropped] = now[dropped] + 1e-3
    out = evaluate(result, f, baseline=_Baseline(was))
    assert not out.passed
    assert "(largest drops against the baseline first)" in out.message
    first = out.message.split("first):\n")[1].splitlines()[0]
    assert dropped in first and "(baseline " in first
    # a query left out of the comparison (its text changed) is not a drop
    out = evaluate(result, f, baseline=_Baseline(was, left_out={dropped: "text changed"}))
    assert "largest drops" not in out.message
