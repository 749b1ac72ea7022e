"""The reference gate (issue #37): the baseline gate's paired comparison against a pinned stored
run, on hand-made records with exact values; a missing, partial or other-suite reference, one
whose inputs changed or with too few unchanged queries is an error, never a skip; the queries
left out are named."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Dict

import pytest

from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.fingerprint import fingerprint_from_result
from pytest_retrieval.gates.reference import (
    comparable_reference,
    judge_against_reference,
    reference_from_record,
)

from ..tiny import TINY_SUITE, run_tiny

SUITE = TINY_SUITE + (
    "regression:\n  max_drop: {ndcg@10: 0.05}\n  resamples: 200\n"
    "  reference: {run: v1, max_total_drop: {ndcg@10: 0.02}}\n"
)
RUN_ID = "0123456789abcdef0123456789abcdef"


def _record(result: Any, shift: float = 0.0, **run: Any) -> Dict[str, Any]:
    """A stored run of ``result``'s suite whose per-query nDCG@10 is this run's plus ``shift``."""
    retrievers = []
    for name, rr in result.retrievers.items():
        per_query: Dict[str, Dict[str, float]] = {}
        for metric, values in rr.evaluation.per_query.items():
            for q, v in values.items():
                per_query.setdefault(q, {})[metric] = v + shift if metric == "ndcg@10" else v
        retrievers.append({"name": name, "per_query": per_query, "metrics": {}})
    return {
        "version": 2,
        "plugin_version": "0.0",
        "run": {"id": RUN_ID, "time": "2026-01-01T00:00:00Z", "partial": False, **run},
        "suites": [
            {
                "suite": result.suite.name,
                "fingerprint": fingerprint_from_result(result),
                "retrievers": retrievers,
                "rankings": {},
            }
        ],
    }


def _judge(result: Any, record: Dict[str, Any], max_drop: float = 0.02, retriever: str = "bm25") -> Any:
    ref = reference_from_record(record, result.suite.name, ref="v1")
    ref, _ = comparable_reference(ref, result, ref="v1", run_id=RUN_ID)
    gate = next(g for g in result.suite.reference if g.retriever == retriever)
    return judge_against_reference(result, ref, gate._replace(max_drop=max_drop), ref="v1", run_id=RUN_ID)


def test_the_suite_collects_one_reference_gate_per_retriever_and_metric(tmp_path: Path) -> None:
    result = run_tiny(tmp_path, SUITE)
    assert [(g.retriever, g.name, g.max_drop) for g in result.suite.reference] == [
        ("bm25", "reference:ndcg@10", 0.02),
        ("text_only", "reference:ndcg@10", 0.02),
        ("rrf", "reference:ndcg@10", 0.02),
    ]


def test_a_drop_within_the_total_budget_passes_and_beyond_it_fails_exactly(tmp_path: Path) -> None:
    result = run_tiny(tmp_path, SUITE)
    record = _record(result, shift=0.01)  # the reference was 0.01 better on every query
    out = _judge(result, record, max_drop=0.02)
    # every paired difference is exactly -0.01: the bootstrap's bound is that value, no noise
    assert out.overall.mean_diff == pytest.approx(-0.01, abs=1e-15)
    assert out.overall.ci_low == pytest.approx(-0.01, abs=1e-15)
    assert out.passed and out.overall.n == 3
    assert out.message.startswith("tiny :: bm25 :: ndcg@10 vs reference run 0123456789ab (v1)")
    assert out.as_dict()["reference"] == {"run": RUN_ID, "ref": "v1", "created": "2026-01-01T00:00:00Z"}
    failed = _judge(result, record, max_drop=0.005)
    assert not failed.passed and failed.max_drop == 0.005
    # the baseline's margin of 0 and identical values: passes (>=), as the baseline gate does
    assert _judge(result, _record(result), max_drop=0.0).passed


def test_a_missing_suite_partial_run_or_not_a_record_is_an_error(tmp_path: Path) -> None:
    result = run_tiny(tmp_path, SUITE)
    record = _record(result)
    other = copy.deepcopy(record)
    other["suites"][0]["suite"] = "another"
    with pytest.raises(
        ConfigError, match=r"has no suite 'tiny' \(its suites: 'another'\): a run of another suite"
    ):
        reference_from_record(other, "tiny", ref="v1")
    partial = _record(result, partial=True)
    with pytest.raises(ConfigError, match="stored as partial.*allow_partial is true"):
        reference_from_record(partial, "tiny", ref="v1")
    assert reference_from_record(partial, "tiny", ref="v1", allow_partial=True).suite == "tiny"
    with pytest.raises(ConfigError, match="no 'run' section"):
        reference_from_record({"suites": record["suites"]}, "tiny", ref="v1")
    broken = copy.deepcopy(record)
    broken["suites"][0]["error"] = "engine unreachable"
    with pytest.raises(ConfigError, match="did not run in it .engine unreachable."):
        reference_from_record(broken, "tiny", ref="v1")
    nofp = copy.deepcopy(record)
    del nofp["suites"][0]["fingerprint"]
    with pytest.raises(ConfigError, match="has no fingerprint"):
        reference_from_record(nofp, "tiny", ref="v1")
    nan = copy.deepcopy(record)
    nan["suites"][0]["retrievers"][0]["per_query"]["q1"]["ndcg@10"] = None
    with pytest.raises(ConfigError, match=r"bm25 :: ndcg@10 of query 'q1' is None, not a finite number"):
        reference_from_record(nan, "tiny", ref="v1")


def test_a_retriever_missing_from_the_reference_is_an_error_not_a_skip(tmp_path: Path) -> None:
    result = run_tiny(tmp_path, SUITE)
    record = _record(result)
    record["suites"][0]["retrievers"] = [r for r in record["suites"][0]["retrievers"] if r["name"] != "rrf"]
    with pytest.raises(ConfigError, match="run 'v1': has no retriever 'rrf' .added since it was stored"):
        _judge(result, record, retriever="rrf")


def test_changed_judgments_leave_those_queries_out_named_or_refuse(tmp_path: Path) -> None:
    before = run_tiny(tmp_path, SUITE)
    record = _record(before)
    changed = SUITE.replace("relevant: {d3: 1}", "relevant: {d3: 2}")
    result = run_tiny(tmp_path, changed)
    ref = reference_from_record(record, "tiny", ref="v1")
    ref, note = comparable_reference(ref, result, ref="v1", run_id=RUN_ID)
    assert ref.left_out == {"q2": "judgments changed"}
    assert "compared on 3 of 4 reference queries; left out: 1 judgments changed (q2)" in note
    assert note.startswith("compared with reference run 0123456789ab (v1)")
    # 2 of 3 valued queries remain: fewer than min_compared 0.8 -> an error, never a skip
    with pytest.raises(ConfigError, match="texts or judgments changed since it: only 2 of the baseline's 3"):
        _judge(result, record)
    result.suite.model.regression.min_compared = 0.5
    out = _judge(result, record)
    assert out.left_out == {"q2": "judgments changed"} and out.overall.n == 2
    assert "compared on 2 of 3 reference queries; left out: 1 judgments changed (q2)" in out.message


def test_inputs_that_changed_are_an_error_naming_the_reference(tmp_path: Path) -> None:
    before = run_tiny(tmp_path, SUITE)
    record = _record(before)
    result = run_tiny(tmp_path, SUITE.replace("suite: tiny\n", "suite: tiny\nevaluation: {profile: trec}\n"))
    ref = reference_from_record(record, "tiny", ref="v1")
    with pytest.raises(
        ConfigError, match="inputs changed since regression.reference run 'v1'.*pin another run"
    ):
        comparable_reference(ref, result, ref="v1", run_id=RUN_ID)
