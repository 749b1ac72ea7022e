"""The engine store's URL (issue #37): ``elasticsearch+https://host:9200/index``, credentials from
``${VAR}``, never in ``location``; a bad URL and an unreachable cluster are one line each."""

from __future__ import annotations

import socket

import pytest

from pytest_retrieval.errors import HistoryError
from pytest_retrieval.history import open_store
from pytest_retrieval.history.engine_store import parse_store_url

from .records import record


def test_the_url_gives_engine_index_connection_and_a_location_without_credentials() -> None:
    env = {"U": "ci", "P": "pa:ss@/w", "K": "key=="}
    engine, index, conn, location = parse_store_url(
        "elasticsearch+https://${U}:${P}@search.example:9243/retrieval-history?verify_certs=false&request_timeout=5",
        env,
    )
    assert (engine, index) == ("elasticsearch", "retrieval-history")
    assert (
        conn["hosts"] == ["https://search.example:9243"]
        and conn["username"] == "ci"
        and conn["password"] == "pa:ss@/w"
    )
    assert conn["verify_certs"] is False and conn["request_timeout"] == 5.0
    assert location == "elasticsearch+https://search.example:9243/retrieval-history"
    _e, _i, conn, location = parse_store_url("opensearch+http://h/idx?api_key=${K}", env)
    assert conn["api_key"] == "key==" and "key" not in location


@pytest.mark.parametrize(
    "url,fragment",
    [
        ("elasticsearch+https://host:9200", "expected one index name"),
        ("elasticsearch+https://host:9200/a/b", "expected one index name"),
        ("elasticsearch+https://host:9200/Upper", "expected one index name"),
        ("elasticsearch+https://host:9200/logs-*", "expected one index name"),
        ("elasticsearch+https://host:9200/a,b", "expected one index name"),
        ("elasticsearch+https://host:9200/_hidden", "expected one index name"),
        ("elasticsearch+https://host:notaport/i", "Port could not be cast"),
        ("elasticsearch+https:///i", "no host"),
        ("elasticsearch+https://host/i?password=x", "unknown URL key 'password'"),
        ("elasticsearch+https://host/i?verify_certs=maybe", "verify_certs must be true or false"),
        ("elasticsearch+https://host/i?request_timeout=-1", "request_timeout must be"),
        (
            "elasticsearch+https://u:${NOT_SET_ANYWHERE}@host/i",
            "${NOT_SET_ANYWHERE} is not set in the environment",
        ),
        ("elasticsearch+https://host/i\u202e", "control or format characters"),
    ],
)
def test_a_bad_url_is_one_line(url: str, fragment: str) -> None:
    with pytest.raises(HistoryError) as err:
        open_store(url)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_cluster_is_one_line() -> None:
    store = open_store(f"opensearch+http://127.0.0.1:{_closed_port()}/history?request_timeout=2")
    with pytest.raises(HistoryError) as err:
        store.append(record())
    line = str(err.value)
    assert line.startswith(f"history {store.location}: ") and "cannot be reached" in line and "\n" not in line
    store.close()
