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
