"""Retries are counted (issue #28): the policy keeps how many retries it made and why, the
runner keeps a pass's count on the suite's result, and the JSON report and the warnings every
report shows carry it (not only the captured log lines)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.backends.search_engine.http import EngineHTTPError, EngineUnreachable
from pytest_retrieval.backends.search_engine.retry import (
    RetryCount,
    describe_retries,
    retries_since,
    retry_reason,
)
from pytest_retrieval.config.load import load_suite
from pytest_retrieval.execution.runner import SuiteRunner, retry_warnings
from pytest_retrieval.reports.json_report import suite_report
from tests.tiny import TINY_SUITE

from .test_retry import Clock, http_with


def test_each_retry_is_counted_by_its_reason() -> None:
    clock = Clock()
    answers = [
        EngineHTTPError(429, {}, {"retry-after": "1"}),
        EngineHTTPError(429, {}),
        EngineUnreachable("refused"),
        EngineUnreachable("slow", timeout=True),
        {"ok": True},
    ]
    http = http_with(answers, clock, max_retries=5)
    assert http.request("GET", "/") == {"ok": True}
    assert http.retry.count.snapshot() == {"HTTP 429": 2, "a lost connection": 1, "a timeout": 1}


def test_a_request_that_fails_at_once_is_no_retry() -> None:
    http = http_with([EngineHTTPError(400, {})], Clock())
    try:
        http.request("GET", "/")
    except Exception:  # noqa: BLE001 - the 400 is an error, and no retry
        pass
    assert http.retry.count.snapshot() == {}


def test_counts_between_two_snapshots_and_their_words() -> None:
    count = RetryCount()
    count.add("HTTP 429")
    before = count.snapshot()
    for reason in ("HTTP 429", "HTTP 429", "a node left mid-search"):
        count.add(reason)
    made = retries_since(before, count.snapshot())
    assert made == {"HTTP 429": 2, "a node left mid-search": 1}
    assert describe_retries(made) == "3 retries (HTTP 429: 2, a node left mid-search: 1)"
    assert describe_retries({"HTTP 503": 1}) == "1 retry (HTTP 503: 1)"
    assert retry_reason(ValueError("x")) == "ValueError"


class RetryingBackend(EmbeddedBackend):
    """The embedded engine, as if every search request of the quality pass had met one 429
    and every latency request one lost node."""

    def __init__(self) -> None:
        super().__init__()
        self.count = RetryCount()

    def search_batch(self, spec: Any, queries: Any, k: int) -> Any:
        self.count.add("HTTP 429")
        return super().search_batch(spec, queries, k)

    def search_one(self, spec: Any, query: Any, k: int) -> Any:
        self.count.add("a node left mid-search")
        return super().search_one(spec, query, k)

    def retries(self) -> Dict[str, int]:
        return self.count.snapshot()


def test_the_runs_retries_are_in_its_result_warnings_and_json_report(tmp_path: Path) -> None:
    path = tmp_path / "retrieval_tiny.yaml"
    path.write_text(
        TINY_SUITE.replace("latency:\n  warmup: 1\n", "latency:\n  warmup: 0\n  repetitions: 1\n")
    )
    backend = RetryingBackend()
    result = SuiteRunner(load_suite(path), backend=backend).run()
    backend.close()
    leaves = 2  # bm25 and text_only: one quality request each; rrf is fused client-side
    assert result.retries["quality"] == {"HTTP 429": leaves}
    latency = result.retries["latency"]["a node left mid-search"]
    assert latency == backend.count.snapshot()["a node left mid-search"] > 0
    assert retry_warnings(result.retries) == [w for w in result.warnings if "pass made" in w]
    assert any(w.startswith("the quality pass made 2 retries (HTTP 429: 2)") for w in result.warnings)
    state = type("State", (), {"result": result, "outcomes": [], "suite": result.suite})()
    report = json.loads(json.dumps(suite_report(state)))
    assert report["retries"] == {"total": leaves + latency, **result.retries}
    assert any("HTTP 429: 2" in w for w in report["warnings"])


def test_a_run_without_retries_says_none() -> None:
    assert retry_warnings({}) == []
