"""A/B latency ceilings (``p95_ratio``): the retriever and ``latency.baseline`` timed
interleaved in the same job, judged on the ratio's confidence bound. Verdicts are tested on
fixed samples; the pytest run checks the wiring (no assertion depends on how fast this
machine is)."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from pytest_retrieval.execution.results import ABLatency
from pytest_retrieval.gates.floors import Floor
from pytest_retrieval.gates.verdicts import latency_ratio_outcome

pytest_plugins = ["pytester"]


def _ab(base_ms, factor, rounds=3, noise=0.05, seed=0) -> ABLatency:
    rng = np.random.default_rng(seed)
    base = [[b * (1 + abs(rng.normal(0, noise))) for _ in range(rounds)] for b in base_ms]
    cur = [[b * factor * (1 + abs(rng.normal(0, noise))) for _ in range(rounds)] for b in base_ms]
    return ABLatency(baseline="old", baseline_ms=base, current_ms=cur, repetitions=rounds)


BASE = list(np.random.default_rng(1).lognormal(0.0, 0.5, 300))
FLOOR = Floor("new", "p95_ratio", "<=", 1.15, origin="retrieval_x.yaml:9")


def test_unchanged_pipeline_passes_and_30_percent_slower_fails() -> None:
    same = latency_ratio_outcome("s", FLOOR, _ab(BASE, 1.0))
    assert same.passed and "interleaved, 3 rounds, n=900 paired samples" in same.message
    slow = latency_ratio_outcome("s", FLOOR, _ab(BASE, 1.30))
    assert not slow.passed
    assert slow.value == pytest.approx(1.30, rel=0.05)
    assert "is above the ceiling its baseline allows" in slow.message
    assert "floor set at retrieval_x.yaml:9" in slow.message


def test_ci_verdict_does_not_fail_on_a_ratio_it_cannot_tell_apart() -> None:
    # 12 queries, each 0.8x..1.6x: the point ratio is above 1.15, its lower bound is not
    rng = np.random.default_rng(1)
    base = list(rng.lognormal(0, 0.5, 12))
    cur = [b * rng.uniform(0.8, 1.6) for b in base]
    few = ABLatency("old", [[b] for b in base], [[c] for c in cur], 1)
    assert latency_ratio_outcome("s", FLOOR, few, verdict="ci").passed
    assert not latency_ratio_outcome("s", FLOOR, few, verdict="point").passed


def test_samples_pair_by_query_and_round() -> None:
    ab = ABLatency("old", [[3.0, 1.0], [5.0, 4.0]], [[2.0, 9.0], [8.0, 6.0]], 2)
    assert ab.paired() == ([3.0, 1.0, 5.0, 4.0], [2.0, 9.0, 8.0, 6.0])


SUITE = """\
suite: ab
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 1}}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
  documents:
    - {id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}
    - {id: d3, title: "Floods", text: "river flood defences in cities"}
latency:
  warmup: 1
  repetitions: 2
  baseline: bm25_old
retrievers:
  bm25_old: {type: bm25, fields: [title, text]}
  bm25_new: {type: bm25, fields: [title^2, text]}
floors:
  bm25_new:
    ndcg@10: 0.5
    p95_ratio: 1000
"""


def test_ratio_item_summary_and_report(pytester) -> None:
    pytester.makefile(
        ".yaml", retrieval_ab=textwrap.dedent(SUITE.replace("repetitions: 2", "repetitions: 10"))
    )
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}")
    out = result.stdout.str()
    assert "latency A/B: bm25_new vs bm25_old: p95" in out and "(10 interleaved rounds)" in out
    (suite,) = json.loads(report.read_text())["suites"]
    (new,) = [r for r in suite["retrievers"] if r["name"] == "bm25_new"]
    ab = new["latency_ab"]
    assert ab["baseline"] == "bm25_old" and ab["rounds"] == 10 and ab["queries"] == 2
    assert ab["samples"] == 20  # p95 needs at least 20 (one beyond the percentile)
    assert ab["p95"]["ratio"] > 0
    assert {(g["metric"], g["op"]) for g in suite["gates"]} >= {("p95_ratio", "<=")}


def test_a_ratio_on_too_few_samples_is_an_error_and_the_summary_says_so(pytester) -> None:
    pytester.makefile(".yaml", retrieval_ab=textwrap.dedent(SUITE))  # 2 queries x 2 rounds
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}")
    assert result.ret != 0
    out = result.stdout.str()
    why = "ab :: bm25_new :: p95_ratio: not enough samples to judge p95: 4 timed requests, p95 needs at least 20"
    assert f"InfrastructureError: {why}" in out and f"latency ERROR: {why}" in out
    assert "Traceback" not in out
    (suite,) = json.loads(report.read_text())["suites"]
    (item,) = [i for i in suite["items"] if i["gate"] == "p95_ratio"]
    assert item["outcome"] == "error" and why in item["message"]


@pytest.mark.parametrize(
    "change, message",
    [
        ("  baseline: bm25_old\n", "compares with an A/B baseline: name it in latency.baseline"),
        ("  baseline: bm25_old\n", None),
    ],
)
def test_ratio_without_baseline_is_one_line(pytester, change, message) -> None:
    text = SUITE.replace(change, "" if message else "  baseline: bm25_olf\n")
    pytester.makefile(".yaml", retrieval_ab=textwrap.dedent(text))
    result = pytester.runpytest_subprocess("-q")
    assert result.ret != 0
    out = result.stdout.str()
    assert (message or "unknown retriever 'bm25_olf' (did you mean 'bm25_old'?)") in out
    assert "Traceback" not in out
