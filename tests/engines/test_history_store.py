"""The run history in an Elasticsearch or OpenSearch index (issue #37), on the real servers: a
round trip, two processes writing 100 runs each at once into one index (200 records, no error:
create-only ids), an index the plugin did not create refused and left alone, credentials from
``${VAR}`` never shown."""

from __future__ import annotations

import multiprocessing
import secrets
import sys
from pathlib import Path
from typing import Any, Iterator, List

import pytest

from pytest_retrieval.errors import HistoryError
from pytest_retrieval.history import open_store

from .conftest import http

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "history"))
from records import record  # noqa: E402 - the history tests' records, shared

RUNS = 100


def _url(engine: Any, index: str, auth: str = "") -> str:
    scheme, _, rest = engine.url.partition("://")
    return f"{engine.name}+{scheme}://{auth}{rest.rstrip('/')}/{index}"


@pytest.fixture
def index(engine: Any) -> Iterator[str]:
    name = f"history-test-{secrets.token_hex(4)}"
    yield name
    http(engine.url, "DELETE", f"/{name}")


def test_round_trip(engine: Any, index: str) -> None:
    store = open_store(_url(engine, index))
    assert store.runs() == [] and store.points() == []  # a missing index is an empty history, not made
    assert http(engine.url, "GET", f"/{index}")[0] == 404
    recs = [record(h, ndcg=0.5 + h / 100, tags=["v1"] if h == 1 else [], partial=h == 3) for h in range(4)]
    for r in recs:
        store.append(r)
    assert [r.id for r in store.runs()] == [r["run"]["id"] for r in recs]
    assert [r.id for r in store.runs(include_partial=False, limit=2)] == [r["run"]["id"] for r in recs[1:3]]
    assert [p.value for p in store.points(metric="ndcg@10")] == [0.5, 0.51, 0.52]
    assert store.load(recs[0]["run"]["id"]) == recs[0]
    assert store.resolve("v1") == recs[1]["run"]["id"]
    with pytest.raises(HistoryError, match="stored already"):
        store.append(record(9, run_id=recs[0]["run"]["id"]))
    assert store.prune(keep_last=2) == 2 and len(store.runs()) == 2
    _status, mapping = http(engine.url, "GET", f"/{index}/_mapping")
    assert mapping[index]["mappings"]["_meta"]["pytest_retrieval"] == {"history": 1}
    store.close()


def _writer(url: str, first: int, start: Any, errors: Any) -> None:
    store = open_store(url)
    start.wait(60)
    try:
        for i in range(first, first + RUNS):
            store.append(record(i / 100, queries=20))
    except Exception as exc:  # noqa: BLE001 - reported to the test
        errors.put(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()


def test_two_processes_writing_100_runs_each_into_one_index(engine: Any, index: str) -> None:
    url = _url(engine, index)
    ctx = multiprocessing.get_context("spawn")
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, n * RUNS, start, errors)) for n in range(2)]
    for p in procs:
        p.start()
    start.set()  # both create the index at once: one makes it, the other finds it
    for p in procs:
        p.join(300)
    alive = [p for p in procs if p.is_alive()]
    for p in alive:
        p.kill()
    said: List[str] = []
    while not errors.empty():
        said.append(errors.get())
    assert not alive and not said and all(p.exitcode == 0 for p in procs), said
    store = open_store(url)
    assert len(store.runs()) == 2 * RUNS
    assert len({p.run_id for p in store.points(metric="ndcg@10")}) == 2 * RUNS
    store.close()


def test_an_index_the_plugin_did_not_create_is_refused_and_left_alone(engine: Any, index: str) -> None:
    http(engine.url, "PUT", f"/{index}", {"mappings": {"properties": {"x": {"type": "keyword"}}}})
    http(engine.url, "PUT", f"/{index}/_doc/1?refresh=true", {"x": "theirs"})
    store = open_store(_url(engine, index))
    for attempt in (lambda: store.append(record()), store.runs, lambda: store.prune(keep_last=0)):
        with pytest.raises(HistoryError, match="not created by pytest-retrieval's history") as err:
            attempt()
        assert "\n" not in str(err.value)
    assert http(engine.url, "GET", f"/{index}/_count")[1]["count"] == 1
    alias = f"{index}-alias"
    http(engine.url, "POST", "/_aliases", {"actions": [{"add": {"index": index, "alias": alias}}]})
    with pytest.raises(HistoryError, match="is an alias of"):
        open_store(_url(engine, alias)).append(record())


def test_credentials_come_from_the_environment_and_are_never_shown(
    engine: Any, index: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-" + secrets.token_hex(4)
    monkeypatch.setenv("HISTORY_TEST_PASSWORD", secret)
    http(engine.url, "PUT", f"/{index}", {"mappings": {"properties": {"x": {"type": "keyword"}}}})
    store = open_store(_url(engine, index, auth="ci:${HISTORY_TEST_PASSWORD}@"))
    assert secret not in store.location and "ci:" not in store.location
    with pytest.raises(HistoryError) as err:  # (the test servers run without security)
        store.append(record())
    assert secret not in str(err.value)
    monkeypatch.delenv("HISTORY_TEST_PASSWORD")
    with pytest.raises(HistoryError, match=r"\$\{HISTORY_TEST_PASSWORD\} is not set"):
        open_store(_url(engine, index, auth="ci:${HISTORY_TEST_PASSWORD}@"))
