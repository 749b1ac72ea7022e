"""The reference gate end to end through pytest with a SQLite history (issue #37): the run tagged
with the reference's name pins it (compared with itself, stored complete); an accepted drop
passes the baseline gate and fails the reference gate, in the terminal summary, the JSON report
and the Markdown; a missing reference is an error, never a skip."""

from __future__ import annotations

import json
from typing import Any, Dict, Tuple

import pytest

from pytest_retrieval.history import open_store

from ..tiny import TINY_SUITE

pytest_plugins = ["pytester"]

SUITE = TINY_SUITE + (
    "regression:\n  max_drop: {ndcg@10: 0.5}\n  resamples: 200\n  retrievers: [bm25]\n"
    "  reference: {run: v1, max_total_drop: {ndcg@10: 0.02}}\n"
)
WORSE = SUITE.replace(  # d1 loses q1's terms: q1's nDCG@10 0.6885 -> 0.5213
    '{id: d1, title: "Solar panels", text: "efficiency of solar panels in winter"}',
    '{id: d1, title: "Winter", text: "winter"}',
)


def _pytest(pytester: pytest.Pytester, *args: str) -> Tuple[Any, Dict[str, Any], str]:
    report, markdown = pytester.path / "report.json", pytester.path / "summary.md"
    result = pytester.runpytest_subprocess(
        "-q",
        "-p",
        "no:cacheprovider",
        f"--retrieval-report={report}",
        f"--retrieval-markdown={markdown}",
        "--retrieval-no-step-summary",
        *args,
    )
    return result, json.loads(report.read_text()), markdown.read_text()


def test_a_pinned_reference_catches_what_the_moving_baseline_accepted(pytester: pytest.Pytester) -> None:
    suite = pytester.makefile(".yaml", retrieval_tiny=SUITE)
    history = str(pytester.path / "history.sqlite")
    result, _, _ = _pytest(pytester, "--retrieval-baseline-update")
    assert result.ret == 0, result.stdout.str()

    # the run tagged v1 pins the reference: compared with itself, stored complete
    result, report, _ = _pytest(pytester, f"--retrieval-history={history}", "--retrieval-history-tag=v1")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "against the reference run: this run is pinned as the reference 'v1'" in out
    (ref,) = report["suites"][0]["references"]
    assert ref["passed"] and ref["comparison"]["mean_diff"] == 0.0 and ref["reference"]["run"] == "(this run)"
    store = open_store(history)
    try:
        (entry,) = store.runs()
        assert not entry.partial and "v1" in entry.tags
    finally:
        store.close()

    # a drop, accepted: the baseline moves to it
    suite.write_text(WORSE)
    result, _, _ = _pytest(pytester, "--retrieval-baseline-update")
    assert result.ret == 0, result.stdout.str()
    result, report, markdown = _pytest(pytester, f"--retrieval-history={history}", "-rA")
    out = result.stdout.str()
    assert result.ret == 1, out
    result.stdout.fnmatch_lines(["*FAILED retrieval_tiny.yaml::bm25::reference:ndcg@10*"])
    assert "tiny :: bm25 :: ndcg@10 vs reference run " in out and "(v1)" in out
    assert "against the reference run: compared with reference run " in out
    (ref,) = report["suites"][0]["references"]
    assert not ref["passed"] and ref["comparison"]["mean_diff"] < -0.02
    assert ref["reference"]["run"] == entry.id and ref["reference"]["ref"] == "v1"
    (reg,) = report["suites"][0]["regressions"]
    assert reg["passed"] and reg["comparison"]["mean_diff"] == 0.0
    assert "reference:ndcg@10" in markdown and "vs reference run" in markdown
    items = {i["gate"]: i["outcome"] for i in report["suites"][0]["items"] if i["retriever"] == "bm25"}
    assert items["baseline:ndcg@10"] == "passed" and items["reference:ndcg@10"] == "failed"


def test_a_missing_reference_or_history_is_an_error_never_a_skip(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=SUITE.replace("run: v1", "run: v9"))
    history = str(pytester.path / "history.sqlite")
    result, report, _ = _pytest(pytester)  # no history configured
    assert result.ret == 1
    (item,) = [i for i in report["suites"][0]["items"] if i["gate"] == "reference:ndcg@10"]
    assert item["outcome"] == "error" and "no run history to read it from" in item["message"]
    assert "--retrieval-history" in item["message"] and "Traceback" not in item["message"]
    result, report, _ = _pytest(pytester, f"--retrieval-history={history}")  # no such file yet
    (item,) = [i for i in report["suites"][0]["items"] if i["gate"] == "reference:ndcg@10"]
    assert item["outcome"] == "error" and "no run history at" in item["message"]
    _pytest(pytester, f"--retrieval-history={history}", "--retrieval-history-tag=other")
    result, report, _ = _pytest(pytester, f"--retrieval-history={history}")  # a history without v9
    (item,) = [i for i in report["suites"][0]["items"] if i["gate"] == "reference:ndcg@10"]
    assert result.ret == 1 and item["outcome"] == "error"
    assert "no run, tag or commit 'v9'" in item["message"] and "\n" not in item["message"].strip()
