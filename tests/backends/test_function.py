"""``backend: {type: python}``: a team's function as the search, sync or async, with an optional
batch form and the service retriever's params; fusion over two service modes; the same
metrics as the embedded engine when the function is that engine."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.backends.base import ServiceSpec
from pytest_retrieval.backends.function import FunctionBackend
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.types import Query

from ..tiny import TINY_SUITE

MODULE = """
import asyncio, threading
from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.types import Document, Query

DOCS = [
    Document("d1", {"title": "Solar panels", "text": "efficiency of solar panels in winter"}),
    Document("d2", {"title": "Panels", "text": "solar efficiency measured"}),
    Document("d3", {"title": "Floods", "text": "river flood defences in cities"}),
    Document("d4", {"title": "Wind", "text": "wind turbines and solar farms"}),
    Document("d5", {"title": "Physics", "text": "loop gravity theories"}),
]
ENGINE = EmbeddedBackend()
ENGINE.prepare(DOCS, None)
CALLS = []
THREADS = set()

def search(text, k, qid, fields="title^2,text"):
    CALLS.append(("one", qid))
    THREADS.add(threading.get_ident())
    spec = BM25Spec(fields=tuple((f.split("^")[0], float(f.split("^")[1]) if "^" in f else 1.0) for f in fields.split(",")))
    r = ENGINE.search_one(spec, Query(qid, text), k).ranking
    return list(zip(r.doc_ids, r.scores))

async def asearch(text, k, qid):
    await asyncio.sleep(0)
    return search(text, k, qid)

def many(texts, k, ids):
    CALLS.append(("many", len(texts)))
    return {i: search(t, k, i) for t, i in zip(texts, ids)}
"""


@pytest.fixture
def module(tmp_path: Path) -> Path:
    (tmp_path / "team_search.py").write_text(MODULE)
    yield tmp_path
    import sys

    sys.modules.pop("team_search", None)


def suite(folder: Path, backend: str, retrievers: str) -> Path:
    text = TINY_SUITE.split("retrievers:")[0]
    text = text[: text.index("  documents:")] + text[text.index("latency:") :]
    path = folder / "retrieval_fn.yaml"
    path.write_text(
        text
        + textwrap.dedent(backend)
        + "retrievers:\n"
        + textwrap.indent(textwrap.dedent(retrievers), "  ")
        + "floors:\n  svc:\n    ndcg@10: 0.1\n"
    )
    return path


def test_the_function_scores_as_the_engine_it_wraps(module: Path, tmp_path: Path) -> None:
    (tmp_path / "engine.yaml").write_text(TINY_SUITE)
    on_engine = run_suite(tmp_path / "engine.yaml")
    path = suite(
        module,
        'backend:\n  type: python\n  function: "team_search:search"\n  max_concurrency: 3\n',
        """\
        svc: {type: service}
        text_only: {type: service, params: {fields: text}}
        rrf: {type: rrf, of: [svc, text_only]}
        """,
    )
    on_function = run_suite(path)
    for mine, theirs in (("svc", "bm25"), ("text_only", "text_only"), ("rrf", "rrf")):
        theirs_metrics = on_engine.retrievers[theirs].metrics
        assert on_function.retrievers[mine].metrics == {
            m: theirs_metrics[m] for m in ("ndcg@10", "mrr@10", "recall@100")
        }
        assert {q: r.doc_ids for q, r in on_function.retrievers[mine].run.items()} == {
            q: r.doc_ids for q, r in on_engine.retrievers[theirs].run.items()
        }
    assert on_function.backend_info["function"] == "team_search:search"


def test_async_and_batch_functions(module: Path) -> None:
    import sys

    queries = [Query("q1", "solar panels"), Query("q2", "river flood")]
    backend = FunctionBackend("team_search:search", base_dir=module)
    team_search = sys.modules[backend.function.__module__]  # the suite folder's own module
    sync = backend.search_batch(ServiceSpec(), queries, 3)
    asynchronous = FunctionBackend("team_search:asearch", base_dir=module, max_concurrency=2)
    assert asynchronous.search_batch(ServiceSpec(), queries, 3) == sync
    assert asynchronous.search_one(ServiceSpec(), queries[0], 3).ranking == sync["q1"]
    team_search.CALLS.clear()
    batched = FunctionBackend("team_search:search", "team_search:many", base_dir=module)
    assert batched.search_batch(ServiceSpec(), queries, 3) == sync
    assert team_search.CALLS[0] == ("many", 2)  # one call for the quality pass
    team_search.CALLS.clear()
    batched.search_one(ServiceSpec(), queries[0], 3)
    assert team_search.CALLS == [("one", "q1")]  # the latency pass times the function


def test_a_batch_answer_of_the_wrong_size_is_refused(module: Path) -> None:
    (module / "short.py").write_text("def many(texts, k, ids):\n    return [[]]\n")
    b = FunctionBackend("team_search:search", "short:many", base_dir=module)
    with pytest.raises(
        ConfigError, match=r"expected one ranking per query \(2, in order, or a mapping by query id\), got 1"
    ):
        b.search_batch(ServiceSpec(), [Query("q1", "a"), Query("q2", "b")], 3)


def test_hits_beyond_k_are_cut(module: Path) -> None:
    (module / "many_hits.py").write_text(
        "def f(text, k, qid):\n    return [(str(i), 1.0 / (i + 1)) for i in range(50)]\n"
    )
    ranking = (
        FunctionBackend("many_hits:f", base_dir=module).search_one(ServiceSpec(), Query("q", "x"), 5).ranking
    )
    assert ranking.doc_ids == ["0", "1", "2", "3", "4"]


ASYNC_CLIENT = """
import asyncio

LOOPS = set()
IN_FLIGHT = []
PEAK = [0]
_lock = None

async def search(text, k, qid):
    # an asyncio object made on the first call and used on every later one, as an async HTTP
    # client's connection pool is: it belongs to the loop of the first call
    global _lock
    if _lock is None:
        _lock = asyncio.Lock()
    async with _lock:
        pass
    LOOPS.add(id(asyncio.get_running_loop()))
    IN_FLIGHT.append(qid)
    PEAK[0] = max(PEAK[0], len(IN_FLIGHT))
    for _ in range(200):  # wait (bounded) for a second query to be in flight at the same time
        if PEAK[0] >= 2:
            break
        await asyncio.sleep(0.005)
    IN_FLIGHT.remove(qid)
    return [("d" + qid, 1.0)]
"""


def test_an_async_function_keeps_one_loop_across_queries_and_overlaps_them(tmp_path: Path) -> None:
    """A client the team's module keeps between calls is bound to the first call's loop: every
    later call meets the same loop (never 'bound to a different event loop'), and the quality
    pass's workers overlap their coroutines on it."""
    (tmp_path / "async_client.py").write_text(ASYNC_CLIENT)
    backend = FunctionBackend("async_client:search", base_dir=tmp_path, max_concurrency=2)
    try:
        queries = [Query(f"q{i}", "x") for i in range(6)]
        run = backend.search_batch(ServiceSpec(), queries, 3)
        assert [run[q.qid].doc_ids for q in queries] == [[f"dq{i}"] for i in range(6)]
        assert backend.search_one(ServiceSpec(), queries[0], 3).ranking.doc_ids == ["dq0"]
    finally:
        backend.close()
    team = backend.function.__globals__
    assert len(team["LOOPS"]) == 1 and team["PEAK"][0] == 2


def test_an_async_function_called_from_inside_a_running_loop(tmp_path: Path) -> None:
    """A suite run from code already inside an event loop (pytest-asyncio, a notebook), where
    ``asyncio.run`` refuses to start a second loop in the thread."""
    import asyncio

    (tmp_path / "async_client.py").write_text(ASYNC_CLIENT)
    backend = FunctionBackend("async_client:search", base_dir=tmp_path)

    async def inside() -> list:
        return backend.search_one(ServiceSpec(), Query("q1", "x"), 3).ranking.doc_ids

    try:
        assert asyncio.run(inside()) == ["dq1"]
    finally:
        backend.close()
    backend.close()  # twice is fine
