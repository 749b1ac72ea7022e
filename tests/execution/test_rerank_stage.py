"""A ``type: rerank`` retriever end to end through pytest: the reranked ranking, its lift and
verdict in the summary and the JSON report, lift floors, and failures that are errors."""

from __future__ import annotations

import json
import textwrap

import pytest

pytest_plugins = ["pytester"]

SUITE = """\
suite: rr
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 2, d2: 1}}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
    - {id: q3, text: "wind turbines", relevant: {d4: 1}}
  documents:
    - {id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}
    - {id: d2, title: "Panels", text: "solar solar solar efficiency measured"}
    - {id: d3, title: "Floods", text: "river flood defences in cities"}
    - {id: d4, title: "Wind", text: "wind turbines and solar farms"}
    - {id: d5, title: "Rivers", text: "river river river wind"}
latency:
  warmup: 1
  repetitions: 3
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
  reranked:
    type: rerank
    of: [bm25]
    window: 20
    reranker: {type: callable, function: "myrerank:score"}
floors:
  reranked:
    ndcg@10: 0.5
    lift@ndcg@10: -1
"""

# Prefers short documents: an order unrelated to BM25 that costs q2 its relevant document's
# first place (the 29-character d5 "Rivers river river river wind" goes above d3).
RERANKER = """\
CALLS = []

def score(query, docs):
    CALLS.append(len(docs))
    return [-float(len(d)) for d in docs]

def broken(query, docs):
    raise RuntimeError("model server said no")

def short(query, docs):
    return [1.0]
"""


@pytest.fixture
def make(pytester: pytest.Pytester):
    pytester.makepyfile(myrerank=RERANKER)

    def make_(text: str = SUITE):
        return pytester.makefile(".yaml", retrieval_rr=textwrap.dedent(text))

    return make_


def test_rerank_stage_reorders_and_reports_lift_and_verdict(pytester, make) -> None:
    make()
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess("-q", f"--retrieval-report={report}")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert "stages (deltas against bm25" in out
    assert "reranked: " in out and "earning its cost" in out
    suite = json.loads(report.read_text())["suites"][0]
    (row,) = [s for s in suite["stages"] if s["name"] == "reranked"]
    assert row["kind"] == "rerank" and row["builds_on"] == ["bm25"] and row["window"] == 20
    assert row["verdict"].startswith(("earning its cost", "not earning its cost"))
    assert row["p95_ms"] is not None and "bm25" in row["candidate_recall"]
    assert row["delta_vs_input"] < 0 and row["verdict"].startswith("not earning its cost")


def test_min_lift_and_budget_decide_the_verdict(pytester, make) -> None:
    make(SUITE.replace("    window: 20\n", "    window: 20\n    min_lift: 0.5\n    p95_budget_ms: 100000\n"))
    result = pytester.runpytest_subprocess("-q")
    out = result.stdout.str()
    assert "reranked: not earning its cost (lift " in out and "< 0.5" in out
    assert "budget 100000 ms" in out


def test_failing_reranker_is_an_error_not_a_failure(pytester, make) -> None:
    make(SUITE.replace("myrerank:score", "myrerank:broken"))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(errors=2)
    out = result.stdout.str()
    assert "model server said no" in out and "Traceback" not in out


def test_reranker_returning_wrong_shape_is_reported(pytester, make) -> None:
    make(SUITE.replace("myrerank:score", "myrerank:short"))
    result = pytester.runpytest_subprocess("-q")
    assert result.ret != 0
    out = result.stdout.str()
    assert "scores for" in out and "expected one score per candidate" in out
    assert "passed" not in out.splitlines()[-1]


@pytest.mark.parametrize(
    "change, message",
    [
        ('reranker: {type: callable, function: "myrerank:score"}', "reranker: {type: magic}"),
        (
            'reranker: {type: callable, function: "myrerank:score"}',
            'reranker: {type: callable, function: "myrerank:missing"}',
        ),
        (
            'reranker: {type: callable, function: "myrerank:score"}',
            "reranker: {type: onnx-cross-encoder, model: nowhere}",
        ),
        ("of: [bm25]", "of: [bm25, bm25x]"),
    ],
)
def test_bad_rerank_config_is_one_line_with_file_and_key(pytester, make, change, message) -> None:
    make(SUITE.replace(change, message))
    result = pytester.runpytest_subprocess("-q")
    assert result.ret != 0
    out = result.stdout.str()
    assert "retrieval_rr.yaml" in out and "retrievers.reranked" in out
    assert "Traceback" not in out


def test_rerank_window_beyond_200_warns(pytester, make) -> None:
    make(SUITE.replace("window: 20", "window: 300"))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=2)
    assert "rerank window 300 > 200" in result.stdout.str()
