"""json_report.py: the JSON report of a real run and of a suite that errored."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

from pytest_retrieval import __version__
from pytest_retrieval.reports.json_report import REPORT_VERSION, suite_report, write_json_report


def test_report_of_a_run(state, tmp_path):
    errored = SimpleNamespace(suite=state.suite, result=None, error=RuntimeError("engine down"), outcomes=[])
    path = tmp_path / "out" / "report.json"
    path.parent.mkdir()
    write_json_report(path, [state, errored])
    text = path.read_text()
    assert text.endswith("}\n") and "NaN" not in text
    doc = json.loads(text)
    assert doc["version"] == REPORT_VERSION and doc["plugin_version"] == __version__
    run, error = doc["suites"]
    assert {k: error[k] for k in ("suite", "file", "error")} == {
        "suite": "tiny",
        "file": str(state.suite.path),
        "error": "engine down",
    }
    assert "retrievers" not in error  # an errored suite reports no numbers
    assert run["suite"] == "tiny" and run["profile"] == "exp" and run["backend"]["backend"] == "embedded"
    assert run["queries"] == {"judged": 3, "no_relevant": ["q4"], "average_over": "relevant", "of_judged": 4}
    assert run["gates"] == [json.loads(json.dumps(o.as_dict())) for o in state.outcomes]
    assert [r["passed"] for r in run["regressions"]] == [True, True, True]
    assert [s["name"] for s in run["stages"]] == ["bm25", "text_only", "rrf"]


def test_retrievers_per_query_and_ab_latency(state):
    report = suite_report(state)
    bm25, text_only, rrf = report["retrievers"]
    ev = state.result.retrievers["bm25"].evaluation
    assert bm25["name"] == "bm25" and bm25["type"] == "bm25" and bm25["metrics"] == dict(ev.aggregate)
    assert bm25["per_query"]["q1"]["ndcg@10"] == ev.per_query["ndcg@10"]["q1"]  # query -> metric -> value
    assert set(bm25["latency_ms"]) >= {"p50", "p95", "p99", "n"}
    ab = bm25["latency_ab"]
    assert ab["baseline"] == "text_only" and ab["rounds"] == 4 and ab["samples"] == 4 * ab["queries"]
    assert set(ab) >= {"p50", "p95"} and ab["p95"]["ratio"] > 0 and ab["p95"]["confidence"] == 0.95
    assert text_only["latency_ab"] is None and rrf["latency_ab"] is None
    assert not any(isinstance(v, float) and math.isnan(v) for v in bm25["metrics"].values())


def test_a_suite_not_run_says_so(state):
    idle = SimpleNamespace(suite=state.suite, result=None, error=None)
    assert suite_report(idle)["error"] == "not run"
