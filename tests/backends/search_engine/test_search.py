"""The quality and latency passes against a fake engine: batching, concurrency, order,
every sub-response checked, the field check."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec, TemplateSpec
from pytest_retrieval.backends.search_engine.search import FieldCheck, Searcher, read_hits
from pytest_retrieval.errors import InfrastructureError

from .fake import FakeEngine, engine_http


def _fail(what: str, detail: Any) -> InfrastructureError:
    return InfrastructureError(f"{what}: {detail}")


def _answer(*hits: Any, **extra: Any) -> Dict[str, Any]:
    return {"hits": {"hits": [{"_id": d, "_score": s} for d, s in hits]}, **extra}


def test_read_hits() -> None:
    ranking, took = read_hits(_answer(("a", 2.0), ("b", 1.0), ("c", 0.5), took=7), "q", 2, _fail)
    assert ranking.doc_ids == ["a", "b"] and list(ranking.scores) == [2.0, 1.0] and took == 7.0
    assert read_hits(_answer(), "q", 2, _fail)[1] is None


@pytest.mark.parametrize(
    "resp,message",
    [
        ("nonsense", "instead of the engine's JSON"),
        ({"error": {"type": "parse_exception", "reason": "bad"}}, "parse_exception: bad"),
        ({"status": 400, "hits": {"hits": []}}, "HTTP 400"),
        ({"timed_out": True, "hits": {"hits": []}}, "timed out"),
        (
            {"_shards": {"total": 2, "failed": 1, "failures": [{"reason": "oops"}]}},
            "1 of 2 shards failed: oops",
        ),
        ({"took": 1}, "the answer has no hits"),
        ({"hits": {"hits": [{"_id": "a", "_score": None}]}}, "without _score"),
        (_answer(("a", -4.0e9)), "hybrid sub-query markers"),
    ],
)
def test_read_hits_fails_loudly(resp: Any, message: str) -> None:
    with pytest.raises(InfrastructureError, match="'q7'") as err:
        read_hits(resp, "q7", 10, _fail)
    assert message in str(err.value)


def _msearch_engine(bad: str = "") -> FakeEngine:
    def msearch(method, path, params, body):
        lines = body.strip().split("\n")
        bodies = [json.loads(x) for x in lines[1::2]]
        responses: List[Any] = []
        for b in bodies:
            qid = b["query"]["match"]["text"]["query"]
            if qid.startswith(bad) and bad:
                responses.append({"error": {"type": "parse_exception", "reason": "bad " + qid}})
            else:
                responses.append(_answer((f"doc-{qid}", 1.0)))
        return {"responses": responses}

    return FakeEngine({("POST", "/idx/_msearch"): msearch})


def _bodies(n: int) -> List[Any]:
    return [(f"q{i}", {"query": {"match": {"text": {"query": f"q{i}"}}}}) for i in range(n)]


def test_msearch_batches_run_concurrently_and_keep_the_order() -> None:
    engine = _msearch_engine()
    run = Searcher(engine_http(engine), batch_size=3, concurrency=2).msearch("idx", _bodies(8), 10)
    assert list(run) == [f"q{i}" for i in range(8)]
    assert run["q5"].doc_ids == ["doc-q5"]
    assert len(engine.calls) == 3  # 3 + 3 + 2
    assert all(c[3].count("\n") == 2 * n for c, n in zip(sorted(engine.calls, key=lambda c: c[3]), (3, 3, 2)))


def test_msearch_names_the_failed_query_and_counts_the_others() -> None:
    engine = _msearch_engine(bad="q1")  # q1, q10, q11 fail
    with pytest.raises(InfrastructureError) as err:
        Searcher(engine_http(engine), batch_size=20, concurrency=1).msearch("idx", _bodies(12), 10)
    text = str(err.value)
    assert "'q1'" in text and "bad q1" in text and "(and 2 more of this batch of 12)" in text


def test_msearch_answer_of_the_wrong_length() -> None:
    engine = FakeEngine({("POST", "/idx/_msearch"): {"responses": [_answer()]}})
    with pytest.raises(InfrastructureError, match="expected 2 responses, got 1"):
        Searcher(engine_http(engine), batch_size=5, concurrency=1).msearch("idx", _bodies(2), 10)


def test_each_and_one_send_single_searches() -> None:
    engine = FakeEngine({("POST", "/idx/_search"): _answer(("a", 1.0), took=3)})
    searcher = Searcher(engine_http(engine), batch_size=5, concurrency=3)
    run = searcher.each("idx", _bodies(4), {"search_pipeline": "p"}, 10)
    assert list(run) == ["q0", "q1", "q2", "q3"]
    assert all(c[2] == {"search_pipeline": "p"} for c in engine.calls)
    engine.calls.clear()
    ranking, took = searcher.one("idx", "q0", _bodies(1)[0][1], {"search_pipeline": "p"}, 10)
    assert ranking.doc_ids == ["a"] and took == 3.0
    assert engine.calls[0][2] == {"search_pipeline": "p", "request_cache": "false"}


def test_field_check_once_per_field() -> None:
    mapping = {
        "idx": {
            "mappings": {
                "text": {"mapping": {"text": {"type": "text"}}},
                "embedding": {"mapping": {"embedding": {"type": "dense_vector"}}},
            }
        }
    }
    engine = FakeEngine({("GET", "/idx/_mapping/field/.*"): mapping})
    check = FieldCheck(engine_http(engine), ("dense_vector",))
    check("idx", BM25Spec(fields=(("text", 1.0), ("*_title", 1.0))))
    check("idx", KnnSpec(field="embedding"))
    check("idx", BM25Spec(fields=(("text", 2.0),)))
    check("idx", TemplateSpec(body={}))
    assert engine.paths() == ["/idx/_mapping/field/text", "/idx/_mapping/field/embedding"]
    with pytest.raises(InfrastructureError, match="index 'idx' has no field 'title'"):
        check("idx", BM25Spec(fields=(("title", 1.0),)))
    with pytest.raises(
        InfrastructureError, match="field 'text' of index 'idx' is text: a kNN retriever needs a dense_vector"
    ):
        check("idx", KnnSpec(field="text"))


# ---- searches lost with a node (a node leaves mid-search): sent again, only they


def _lost(qid: str) -> Dict[str, Any]:
    """A partial answer: one of two shards failed because its copy's node left."""
    reason = {
        "type": "node_not_connected_exception",
        "reason": "[node-2][127.0.0.1:19321] Node not connected",
    }
    return {
        **_answer((f"half-{qid}", 1.0)),
        "_shards": {"total": 2, "failed": 1, "failures": [{"reason": reason}]},
    }


@pytest.mark.parametrize(
    "resp,lost",
    [
        (_lost("q"), True),
        (
            {
                "error": {
                    "root_cause": [{"type": "no_shard_available_action_exception"}],
                    "type": "x",
                    "failed_shards": [],
                }
            },
            True,
        ),
        (
            {
                "error": {
                    "root_cause": [{"type": "node_disconnected_exception"}],
                    "failed_shards": [{"reason": {"type": "node_closed_exception"}}],
                }
            },
            True,
        ),
        ({**_lost("q"), "timed_out": True}, False),  # a timeout is not healed here
        (
            {
                "_shards": {
                    "total": 2,
                    "failed": 1,
                    "failures": [{"reason": {"type": "query_shard_exception"}}],
                }
            },
            False,
        ),
        (
            {
                "_shards": {
                    "total": 2,
                    "failed": 2,
                    "failures": [
                        {"reason": {"type": "node_not_connected_exception"}},
                        {"reason": {"type": "circuit_breaking_exception"}},
                    ],
                }
            },
            False,
        ),
        ({"error": {"type": "parse_exception", "reason": "bad"}}, False),
        ({"error": "a string"}, False),
        (_answer(("a", 1.0)), False),
        ("<html>", False),
    ],
)
def test_lost_with_a_node(resp: Any, lost: bool) -> None:
    from pytest_retrieval.backends.search_engine.search import lost_with_a_node

    assert lost_with_a_node(resp) is lost


def _no_sleep_http(engine: FakeEngine, **connection: Any):
    from pytest_retrieval.backends.search_engine.http import ConnectionSettings, EngineHTTP
    from pytest_retrieval.backends.search_engine.retry import RetryPolicy

    conn = ConnectionSettings(connection or None)
    waits: List[float] = []
    policy = RetryPolicy(max_retries=conn.max_retries, deadline_s=conn.retry_deadline, sleep=waits.append)
    return EngineHTTP("fake", conn, engine.send, policy), waits


def _flaky_msearch(lost: Dict[str, int], bad: str = "") -> FakeEngine:
    """``lost[qid]``: how many more times that search's answer is partial (node gone)."""

    def msearch(method, path, params, body):
        responses: List[Any] = []
        for b in [json.loads(x) for x in body.strip().split("\n")[1::2]]:
            qid = b["query"]["match"]["text"]["query"]
            if bad and qid == bad:
                responses.append({"error": {"type": "parse_exception", "reason": "bad " + qid}})
            elif lost.get(qid, 0) > 0:
                lost[qid] -= 1
                responses.append(_lost(qid))
            else:
                responses.append(_answer((f"doc-{qid}", 1.0)))
        return {"responses": responses}

    return FakeEngine({("POST", "/idx/_msearch"): msearch})


def test_searches_lost_with_a_node_are_sent_again_and_only_they() -> None:
    engine = _flaky_msearch({"q1": 1, "q3": 2})
    http, waits = _no_sleep_http(engine)
    run = Searcher(http, batch_size=10, concurrency=1).msearch("idx", _bodies(5), 10)
    assert list(run) == [f"q{i}" for i in range(5)]  # every query, in order
    assert all(run[q].doc_ids == [f"doc-{q}"] for q in run)  # never the partial answers
    sent = [
        [json.loads(x)["query"]["match"]["text"]["query"] for x in c[3].strip().split("\n")[1::2]]
        for c in engine.calls
    ]
    assert sent == [["q0", "q1", "q2", "q3", "q4"], ["q1", "q3"], ["q3"]]
    assert len(waits) == 2


def test_a_node_that_stays_gone_is_an_error_with_the_retries() -> None:
    engine = _flaky_msearch({"q1": 99, "q2": 99})
    http, waits = _no_sleep_http(engine, max_retries=2)
    with pytest.raises(InfrastructureError) as err:
        Searcher(http, batch_size=10, concurrency=1).msearch("idx", _bodies(4), 10)
    text = str(err.value)
    assert "search for query 'q1' failed: 1 of 2 shards failed: node_not_connected_exception" in text
    assert "(after 2 retries in" in text and "(and 1 more of this batch of 4)" in text
    assert len(engine.calls) == 3 and len(waits) == 2


def test_a_batch_with_another_failure_is_not_sent_again() -> None:
    engine = _flaky_msearch({"q1": 1}, bad="q2")
    http, waits = _no_sleep_http(engine)
    with pytest.raises(InfrastructureError) as err:
        Searcher(http, batch_size=10, concurrency=1).msearch("idx", _bodies(4), 10)
    assert "'q1'" in str(err.value) and "(and 1 more of this batch of 4)" in str(err.value)
    assert "retries" not in str(err.value)
    assert len(engine.calls) == 1 and not waits


def test_single_searches_lost_with_a_node_are_sent_again() -> None:
    answers = [_lost("q0"), _answer(("a", 1.0))]
    engine = FakeEngine({("POST", "/idx/_search"): lambda *_: answers.pop(0)})
    http, waits = _no_sleep_http(engine)
    run = Searcher(http, batch_size=5, concurrency=1).each("idx", _bodies(1), {"search_pipeline": "p"}, 10)
    assert run["q0"].doc_ids == ["a"] and len(engine.calls) == 2 and len(waits) == 1
