"""The session's gate count (``pytest_plugin/coverage.py``) and the verdict it gives the
headline (``reports/view.py``): a partial run never reads as "passed" (issue #28)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from pytest_retrieval.pytest_plugin.coverage import GATE_OUTCOME, GateCoverage, is_gate_nodeid
from pytest_retrieval.reports.view import verdict
from tests.tiny import TINY_SUITE

pytest_plugins = ["pytester"]


def _report(nodeid: str, outcome: Any = None, failed: bool = False) -> Any:
    rep = SimpleNamespace(nodeid=nodeid, failed=failed)
    if outcome is not None:
        setattr(rep, GATE_OUTCOME, outcome)
    return rep


def test_only_the_items_of_suite_files_are_gates() -> None:
    assert is_gate_nodeid("a/retrieval_x.yaml::bm25::ndcg@10")
    assert is_gate_nodeid("x.retrieval.yml::rrf::expect[q1]")
    assert not is_gate_nodeid("a/test_x.py::test_one")
    assert not is_gate_nodeid("a/retrieval_x.yaml")  # the file itself


def test_each_gate_counts_once_with_its_worst_outcome() -> None:
    cov = GateCoverage()
    cov.define("/s/retrieval_x.yaml", 6)
    cov.collect(["retrieval_x.yaml::a::m1", "retrieval_x.yaml::a::m2", "retrieval_x.yaml::a::m3", "t.py::x"])
    cov.deselect(["retrieval_x.yaml::b::m4", "test_x.py::y"])
    cov.record(_report("retrieval_x.yaml::a::m1", "passed"))
    cov.record(_report("retrieval_x.yaml::a::m1", failed=True))  # its teardown failed: an error
    cov.record(_report("retrieval_x.yaml::a::m2", "failed"))
    cov.record(_report("retrieval_x.yaml::a::m2", failed=False))  # a teardown that passed says nothing
    cov.record(_report("t.py::x", "failed"))  # not a gate
    assert cov.as_dict() == {
        "total": 6,
        "ran": 1,
        "passed": 0,
        "failed": 1,
        "errored": 1,
        "skipped": 0,
        "deselected": 1,
        "not_reached": 1,  # m3: collected, never reported
        "not_collected": 2,  # the suite defines 6: 3 collected, 1 deselected
    }


def test_a_crashed_worker_reports_an_error_and_a_worker_hands_what_the_controller_cannot_see() -> None:
    worker = GateCoverage()
    worker.define("/s/retrieval_x.yaml", 3)
    worker.deselect(["retrieval_x.yaml::a::m3"])
    controller = GateCoverage()
    controller.collect(["retrieval_x.yaml::a::m1", "retrieval_x.yaml::a::m2"])
    controller.record(_report("retrieval_x.yaml::a::m1", failed=True))  # xdist's crash report: no outcome
    controller.merge(json.loads(json.dumps(worker.handed())))
    got = controller.as_dict()
    assert (got["total"], got["ran"], got["errored"], got["deselected"], got["not_reached"]) == (
        3,
        0,
        1,
        1,
        1,
    )


def test_the_total_is_never_below_what_the_session_saw() -> None:
    cov = GateCoverage()  # no suite handed over (its only worker crashed)
    cov.collect(["retrieval_x.yaml::a::m1", "retrieval_x.yaml::a::m2"])
    assert cov.as_dict()["total"] == 2 and cov.as_dict()["not_reached"] == 2


def _doc(**gates: int) -> Any:
    counts = {"passed": 0, "failed": 0, "errored": 0, "skipped": 0, "deselected": 0}
    counts.update({"not_reached": 0, "not_collected": 0, **gates})
    counts["ran"] = counts["passed"] + counts["failed"]
    suite = {"suite": "s", "baseline": {"retrievers": {}}, "regressions": []}
    return {"suites": [suite], "session": {"gates": counts}}


def test_the_headline_of_a_partial_run_says_how_many_gates_ran() -> None:
    v = verdict(_doc(total=17, passed=3, deselected=12, not_reached=2))
    assert v.status == "partial"
    assert v.headline() == (
        "⏸️ Partial retrieval run: 3 of 17 gates ran (14 not judged: 12 deselected, 2 not reached); "
        "3 passed; no verdict on the gates that did not run"
    )
    full = verdict(_doc(total=3, passed=3))  # every gate ran: the verdict of the whole
    assert full.headline() == (
        "✅ Retrieval gates passed: 0 failed, 0 errored, 3 passed; no regression against the baseline"
    )
    none = verdict(_doc(total=0))
    assert none.status == "partial" and "no gate ran" in none.headline()


def test_a_deselected_suite_is_not_an_error_but_a_suite_that_failed_is() -> None:
    doc = _doc(total=6, passed=3, deselected=3)
    doc["suites"].append({"suite": "other", "error": "not run"})
    assert verdict(doc).status == "partial" and verdict(doc).suite_errors == []
    doc["suites"].append({"suite": "down", "error": "InfrastructureError: engine down"})
    assert verdict(doc).status == "error"
    older = {"suites": [{"suite": "x", "error": "not run"}]}  # a report without the gate counts
    assert verdict(older).status == "error"


def test_the_json_report_counts_the_gates(pytester) -> None:
    pytester.makefile(".yaml", retrieval_tiny=TINY_SUITE)
    report = pytester.path / "r.json"
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "bm25", f"--retrieval-report={report}")
    gates = json.loads(report.read_text())["session"]["gates"]
    assert gates == {
        "total": 3,
        "ran": 2,
        "passed": 2,
        "failed": 0,
        "errored": 0,
        "skipped": 0,
        "deselected": 1,
        "not_reached": 0,
        "not_collected": 0,
    }
