"""Requests and their failures, the version check, the client (no engine needed)."""

from __future__ import annotations

import pytest

from pytest_retrieval.backends.search_engine.http import (
    ConnectionSettings,
    EngineHTTPError,
    EngineUnreachable,
    connect,
    import_client,
    request_headers,
)
from pytest_retrieval.errors import ConfigError, InfrastructureError

from .fake import FakeEngine, engine_http

SECRET = "pw-very-secret"
CONN = {"hosts": ["http://elastic:pw-very-secret@127.0.0.1:1"]}


def test_http_error_names_what_failed_and_hides_the_password() -> None:
    reason = {"error": {"type": "index_not_found_exception", "reason": f"no such index (auth {SECRET})"}}
    http = engine_http(FakeEngine({("GET", "/x"): EngineHTTPError(404, reason)}), CONN)
    with pytest.raises(InfrastructureError) as err:
        http.request("GET", "/x", what="reading x")
    text = str(err.value)
    assert text.startswith("fake reading x failed (HTTP 404): index_not_found_exception")
    assert SECRET not in text and "***" in text


def test_allowed_statuses_come_back_as_objects() -> None:
    http = engine_http(FakeEngine({("DELETE", "/x"): EngineHTTPError(404, "gone")}))
    resp = http.request("DELETE", "/x", ok_status=(404,))
    assert isinstance(resp, EngineHTTPError) and resp.status == 404 and resp.body == "gone"


def test_unreachable_and_client_bugs_become_infrastructure_errors() -> None:
    http = engine_http(
        FakeEngine(
            {
                ("GET", "/down"): EngineUnreachable(f"refused http://elastic:{SECRET}@127.0.0.1:1"),
                ("GET", "/bug"): KeyError("boom"),
                ("GET", "/bad"): ConfigError("bad input"),
            }
        ),
        CONN,
    )
    with pytest.raises(
        InfrastructureError, match=r"fake at http://127.0.0.1:1 cannot be reached \(GET /down\)"
    ) as err:
        http.request("GET", "/down")
    assert SECRET not in str(err.value)
    with pytest.raises(InfrastructureError, match="fake GET /bug failed: KeyError: 'boom'"):
        http.request("GET", "/bug")
    with pytest.raises(ConfigError, match="bad input"):
        http.request("GET", "/bad")


def test_engine_info_asks_once_and_falls_back_to_nodes() -> None:
    engine = FakeEngine({("GET", "/"): {"version": {"distribution": "opensearch", "number": "2.19.0"}}})
    http = engine_http(engine)
    assert http.engine_info() == ("opensearch", "2.19.0") == http.engine_info()
    assert engine.paths() == ["/"]
    no_root = FakeEngine(
        {
            ("GET", "/"): EngineHTTPError(404, "no rest-root"),
            ("GET", "/_nodes/_local"): {"nodes": {"n1": {"version": "8.15.0"}}},
        }
    )
    assert engine_http(no_root).engine_info() == ("elasticsearch", "8.15.0")
    unprivileged = FakeEngine(
        {
            ("GET", "/"): EngineHTTPError(403, "denied"),
            ("GET", "/_nodes/_local"): EngineHTTPError(403, "denied"),
        }
    )
    assert engine_http(unprivileged).engine_info() == ("fake", "unknown")


def test_request_headers() -> None:
    assert request_headers(None, False) == {"accept": "application/json"}
    assert request_headers({}, False)["content-type"] == "application/json"
    assert request_headers("{}\n", True)["content-type"] == "application/x-ndjson"


def test_client_construction_errors_are_config_errors() -> None:
    with pytest.raises(
        ConfigError,
        match=r"the fake backend needs the 'fake-py' client: pip install 'pytest-retrieval\[fake\]'",
    ):
        import_client("fake", "no_such_client_module", "Client", "fake-py")
    conn = ConnectionSettings(CONN)

    def refuses(settings: ConnectionSettings):
        raise TypeError(f"bad argument for {settings.password}")

    with pytest.raises(ConfigError) as err:
        connect("fake", conn, refuses)
    assert "fake connection: bad argument for ***" in str(err.value) and SECRET not in str(err.value)
    assert connect("fake", conn, lambda settings: "client") == "client"
