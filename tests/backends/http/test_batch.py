"""``backend.batch`` and ``response.took`` of the ``http`` backend against the small real service
(``service.py``): the batched quality pass ranks as one request per query and as the engine, in
ceil(n / size) requests under the one retry policy; a batch answer that is not one answer per
query is an error naming the batch and the path; the service's own time reaches the latency
report, and a ``took`` that is not a number of milliseconds is an error."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

from pytest_retrieval.backends.base import BM25Spec, ServiceSpec
from pytest_retrieval.backends.http.backend import HttpBackend
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.types import Query

from .service import TOKEN, SearchService
from .test_backend import DOCS, SUITE, backend, failure

QUERIES = [
    Query("q1", "solar panels"),
    Query("q2", "river flood"),
    Query("q3", "wind solar farms"),
    Query("q4", "loop gravity"),
    Query("q5", "solar efficiency"),
]


@pytest.fixture(scope="module")
def service() -> Iterator[SearchService]:
    with SearchService(DOCS) as s:
        yield s


@pytest.fixture(autouse=True)
def _clean(service: SearchService) -> None:
    service.faults.clear()
    service.always = None
    service.requests.clear()


def batched(service: SearchService, size: int = 2, **batch: Any) -> HttpBackend:
    return backend(
        service,
        method="POST",
        url=service.url + "/search",
        body={"query": "{query}", "size": "{k}", "id": "{query_id}"},
        took="took",
        batch={
            "size": size,
            "url": service.url + "/msearch",
            "body": {"searches": "{requests}"},
            "answers": "responses",
            **batch,
        },
    )


def batch_failure(b: HttpBackend, queries: Any = QUERIES[:2]) -> str:
    with pytest.raises(InfrastructureError) as err:
        b.search_batch(ServiceSpec(), queries, 3)
    message = str(err.value)
    assert TOKEN not in message and "Bearer" not in message, message
    assert "\n" not in message and "Traceback" not in message
    return message


# --- the batched quality pass


@pytest.mark.parametrize("size", [1, 2, 5, 50])
def test_batches_rank_as_one_request_per_query_and_as_the_engine(service: SearchService, size: int) -> None:
    got = batched(service, size).search_batch(ServiceSpec(), QUERIES, 3)
    batches = list(service.requests)
    service.requests.clear()
    one_by_one = batched(service).search_one
    single = {q.qid: one_by_one(ServiceSpec(), q, 3).ranking for q in QUERIES}
    engine = service.engine.search_batch(BM25Spec(), QUERIES, 3)
    for want in (single, engine):
        assert {q: (r.doc_ids, r.scores) for q, r in got.items()} == {
            q: (r.doc_ids, r.scores) for q, r in want.items()
        }
    assert len(batches) == math.ceil(len(QUERIES) / size)
    assert {r["path"] for r in batches} == {"/msearch"}
    qids = [q.qid for q in QUERIES]
    sent = sorted([s["id"] for s in r["request"]["searches"]] for r in batches)
    assert sent == [qids[i : i + size] for i in range(0, len(qids), size)]  # each batch in order
    first = next(r for r in batches if r["request"]["searches"][0]["id"] == "q1")
    assert first["request"]["searches"][0] == {"query": "solar panels", "size": 3, "id": "q1"}
    assert first["headers"]["Authorization"] == f"Bearer {TOKEN}"


def test_a_bare_list_is_the_default_batch_body_and_answer(service: SearchService) -> None:
    service.always = ("json", [{"results": [{"doc": {"id": "d1"}, "score": 1}]}, {"results": []}])
    b = backend(
        service,
        method="POST",
        url=service.url + "/msearch",
        body={"query": "{query}", "size": "{k}"},
        batch={"size": 2},
    )
    got = b.search_batch(ServiceSpec(), QUERIES[:2], 3)
    assert service.requests[0]["request"] == [
        {"query": "solar panels", "size": 3},
        {"query": "river flood", "size": 3},
    ]
    assert got["q1"].doc_ids == ["d1"] and got["q2"].doc_ids == []


def test_a_503_then_success_is_retried_and_counted(service: SearchService) -> None:
    b = batched(service)
    service.faults.append(("status", 503))
    got = b.search_batch(ServiceSpec(), QUERIES, 3)
    assert set(got) == {q.qid for q in QUERIES}
    assert b.retries() == {"HTTP 503": 1}
    assert len(service.requests) == 3 + 1


def test_a_batch_answer_of_the_wrong_length_is_an_error(service: SearchService) -> None:
    service.faults.append(("short", None))
    message = batch_failure(batched(service), QUERIES[:2])
    assert message == (
        f"http backend POST {service.url}/msearch (batch of 2 from query 'q1'): batch.answers "
        "'responses' holds 1 answers for 2 queries (one per query, in order)"
    )


def test_an_html_page_is_an_error_naming_the_batch(service: SearchService) -> None:
    service.always = ("html", None)
    message = batch_failure(batched(service), QUERIES[2:4])
    assert "(batch of 2 from query 'q3') failed: HTTP 200 text/html, not JSON: got an HTML page" in message


@pytest.mark.parametrize(
    "answer, fragment",
    [
        ({"error": "x"}, "batch.answers 'responses' is nothing, not the list of answers"),
        ({"responses": {"q1": []}}, "batch.answers 'responses' is a object, not the list of answers"),
        (
            {"responses": [{"results": []}, {"hits": []}]},
            "answer 1 (query 'q2'): the answer has no 'results' (response.hits)",
        ),
        ({"responses": [{"results": []}, "busy"]}, "answer 1 (query 'q2'): the answer has no 'results'"),
        (
            {"responses": [{"results": [{"doc": {"id": "d1"}, "score": "x"}]}, {"results": []}]},
            "answer 0 (query 'q1'): hit 0 ('d1') has score str 'x'",
        ),
    ],
)
def test_a_batch_answer_of_the_wrong_shape_is_an_error(
    service: SearchService, answer: Any, fragment: str
) -> None:
    service.always = ("json", answer)
    message = batch_failure(batched(service))
    assert "(batch of 2 from query 'q1')" in message and fragment in message


def test_a_failing_batch_never_shows_the_token(service: SearchService) -> None:
    service.always = ("echo", 500)
    message = batch_failure(batched(service))
    assert "failed (HTTP 500)" in message and "***" in message
    assert len(service.requests) == 1


def test_a_batch_without_a_per_query_body_is_refused(service: SearchService) -> None:
    with pytest.raises(ConfigError, match=r"backend.batch: needs request.body"):
        backend(service, batch={"size": 2})
    with pytest.raises(
        ConfigError, match=r"backend.batch: request.url \(the default batch.url: give one\) holds \{query\}"
    ):
        backend(service, body={"q": "{query}"}, batch={"size": 2})


# --- the service's own time


def test_took_is_the_services_time(service: SearchService) -> None:
    one = backend(service, took="took").search_one(ServiceSpec(), Query("q1", "solar panels"), 3)
    assert one.ranking.doc_ids[:1] == ["d1"]
    assert isinstance(one.server_took_ms, float) and one.server_took_ms >= 0
    assert backend(service).search_one(ServiceSpec(), Query("q1", "solar"), 3).server_took_ms is None


@pytest.mark.parametrize(
    "took, fragment",
    [
        (None, "the answer has no 'took' (response.took)"),
        ("12", "response.took 'took' is string \"12\", not a finite number of milliseconds >= 0"),
        (-1, "response.took 'took' is number -1"),
        (True, "response.took 'took' is boolean true"),
        (float("nan"), "response.took 'took' is number NaN"),
        ({"ms": 3}, "response.took 'took' is object"),
    ],
)
def test_a_took_that_is_not_milliseconds_is_an_error(
    service: SearchService, took: Any, fragment: str
) -> None:
    answer: Dict[str, Any] = {"results": []}
    if took is not None:
        answer["took"] = took
    service.always = ("json", answer)
    message = failure(backend(service, took="took"))
    assert message.startswith(f"http backend GET {service.url}/search (query 'q1'): ") and fragment in message


# --- a whole suite


def test_a_batched_suite_scores_as_unbatched_and_reports_the_services_time(
    tmp_path: Path, service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)

    def suite(batch: str) -> Path:
        path = tmp_path / f"retrieval_svc{len(batch)}.yaml"
        path.write_text(
            SUITE
            + textwrap.dedent(
                f"""\
                backend:
                  type: http
                  request:
                    method: POST
                    url: "{service.url}/search"
                    body: {{query: "{{query}}", size: "{{k}}", id: "{{query_id}}"}}
                    headers: {{Authorization: "Bearer ${{SEARCH_TOKEN}}"}}
                  response: {{hits: results, id: doc.id, score: score, took: took}}
                """
            )
            + batch
            + "retrievers:\n  svc: {type: service}\nfloors:\n  svc: {ndcg@10: 0.1}\n"
        )
        return path

    unbatched = run_suite(suite(""))
    service.requests.clear()
    service.faults.append(("status", 503))
    on_batches = run_suite(
        suite(
            f'  batch: {{size: 2, url: "{service.url}/msearch", body: {{searches: "{{requests}}"}}, answers: responses}}\n'
        )
    )
    paths = [r["path"] for r in service.requests]
    assert on_batches.retrievers["svc"].metrics == unbatched.retrievers["svc"].metrics
    assert paths.count("/msearch") == 2 + 1  # ceil(3 / 2), one retried
    assert paths.count("/search") == 3  # the latency pass: one request per query
    assert on_batches.retries["quality"] == {"HTTP 503": 1}
    assert on_batches.backend_info["batch"] == f"2 queries per POST {service.url}/msearch"
    latency = on_batches.retrievers["svc"].latency
    assert latency is not None and len(latency.server_took_ms) == 3
    assert latency.as_dict()["server_took_p50"] is not None
    assert TOKEN not in json.dumps(on_batches.backend_info)
