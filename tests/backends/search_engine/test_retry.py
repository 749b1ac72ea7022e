"""The one retry policy (no engine: a fake send, a fake clock)."""

from __future__ import annotations

from typing import List

import pytest

from pytest_retrieval.backends.search_engine.http import (
    ConnectionSettings,
    EngineBadAnswer,
    EngineHTTP,
    EngineHTTPError,
    EngineUnreachable,
)
from pytest_retrieval.backends.search_engine.retry import RetryPolicy, parse_retry_after
from pytest_retrieval.errors import InfrastructureError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: List[float] = []

    def sleep(self, s: float) -> None:
        self.waits.append(s)
        self.now += s


def http_with(answers: list, clock: Clock, **conn) -> EngineHTTP:
    def send(*_request):
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    settings = ConnectionSettings(conn)
    policy = RetryPolicy(
        settings.max_retries,
        settings.retry_deadline,
        sleep=clock.sleep,
        clock=lambda: clock.now,
        rand=lambda: 1.0,
    )
    return EngineHTTP("fake", settings, send, policy)


@pytest.mark.parametrize("status", [429, 502, 503, 504])
def test_shed_load_statuses_are_retried_with_growing_waits(status: int) -> None:
    clock = Clock()
    http = http_with([EngineHTTPError(status, "busy")] * 3 + [{"ok": 1}], clock)
    assert http.request("GET", "/x") == {"ok": 1}
    assert clock.waits == [0.5, 1.0, 2.0]


def test_retry_after_is_a_lower_bound_of_the_wait() -> None:
    clock = Clock()
    busy = EngineHTTPError(429, "busy", {"Retry-After": "7"})
    assert http_with([busy, {"ok": 1}], clock).request("GET", "/x") == {"ok": 1}
    assert clock.waits == [7.0]


def test_connection_errors_are_retried_timeouts_only_when_asked() -> None:
    clock = Clock()
    reset = EngineUnreachable("ConnectionError: reset by peer")
    assert http_with([reset, {"ok": 1}], clock).request("GET", "/x") == {"ok": 1}
    timeout = EngineUnreachable("ConnectionTimeout", timeout=True)
    with pytest.raises(InfrastructureError, match=r"cannot be reached \(GET /x\): ConnectionTimeout"):
        http_with([timeout, {"ok": 1}], Clock(), retry_on_timeout=False).request("GET", "/x")


@pytest.mark.parametrize(
    "failure", [EngineHTTPError(400, "bad"), EngineHTTPError(500, "boom"), EngineBadAnswer("html")]
)
def test_other_failures_are_not_retried(failure: Exception) -> None:
    clock = Clock()
    with pytest.raises(InfrastructureError) as err:
        http_with([failure, {"ok": 1}], clock).request("GET", "/x")
    assert clock.waits == [] and "retr" not in str(err.value)


def test_retries_stop_at_max_retries_and_say_so() -> None:
    clock = Clock()
    with pytest.raises(InfrastructureError, match=r"failed \(HTTP 503\) \(after 2 retries in 1.5 s\)"):
        http_with([EngineHTTPError(503, "busy")] * 5, clock, max_retries=2).request("GET", "/x")


def test_a_give_up_names_the_other_failures_its_earlier_attempts_met() -> None:
    """A 2-node cluster that lost its master node: one host refuses connections, the other
    answers 503 "no master"; the final line names both, not only the last attempt's."""
    refused = EngineUnreachable("ConnectionError: [Errno 111] Connection refused")
    no_master = EngineHTTPError(503, {"error": {"type": "master_not_discovered_exception", "reason": None}})
    with pytest.raises(InfrastructureError) as err:
        http_with([no_master, refused, no_master, refused], Clock()).request(
            "DELETE", "/i", what="deleting index 'i'"
        )
    line = str(err.value)
    assert "cannot be reached (deleting index 'i') (after 3 retries" in line
    assert "(earlier attempts: HTTP 503: master_not_discovered_exception)" in line
    assert line.count("Connection refused") == 1  # the last failure, not repeated as an earlier one


def test_no_retry_starts_after_the_deadline() -> None:
    clock = Clock()
    busy = EngineHTTPError(429, "busy", {"retry-after": "30"})
    with pytest.raises(InfrastructureError, match="retry deadline is reached"):
        http_with([busy] * 5, clock, retry_deadline=45).request("GET", "/x")
    assert clock.waits == [30.0]


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_the_jitter_spreads_waits_below_the_exponential_cap() -> None:
    policy = RetryPolicy(rand=lambda: 0.25, cap_s=4.0)
    assert [policy.delay(n, None) for n in range(5)] == [0.125, 0.25, 0.5, 1.0, 1.0]


def test_a_version_check_answer_without_nodes_is_one_error_line() -> None:
    """GET / refused (404), then GET /_nodes/_local answered by something that is not the
    engine (a proxy's own JSON): an InfrastructureError naming the answer, not a KeyError."""
    http = http_with([EngineHTTPError(404, "no root"), {"status": "ok"}], Clock())
    with pytest.raises(InfrastructureError, match=r"version check failed: no version in the answer"):
        http.engine_info()
