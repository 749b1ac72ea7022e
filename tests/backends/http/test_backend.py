"""``backend: {type: http}`` against a small real service (``service.py``: http.server in front
of the embedded engine): the same rankings as the engine itself, the request template filled
and encoded, the engines' retry policy (429/503 retried and counted, 500 and 4xx at once,
timeouts), answers that are not rankings refused, and the token never shown."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

from pytest_retrieval.backends.base import BM25Spec, ServiceSpec
from pytest_retrieval.backends.http.backend import HttpBackend
from pytest_retrieval.backends.http.config import HttpBatchConfig, HttpRequestConfig, HttpResponseConfig
from pytest_retrieval.backends.search_engine.retry import RetryPolicy
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.execution.runner import run_suite
from pytest_retrieval.types import Document, Query

from .service import TOKEN, SearchService

DOCS = [
    Document("d1", {"title": "Solar panels", "text": "efficiency of solar panels in winter"}),
    Document("d2", {"title": "Panels", "text": "solar efficiency measured"}),
    Document("d3", {"title": "Floods", "text": "river flood defences in cities"}),
    Document("d4", {"title": "Wind", "text": "wind turbines and solar farms"}),
    Document("d5", {"title": "Physics", "text": "loop gravity theories"}),
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


def backend(
    service: SearchService,
    retries: int = 3,
    timeout: float = 5.0,
    took: Optional[str] = None,
    batch: Optional[Dict[str, Any]] = None,
    **request: Any,
) -> HttpBackend:
    req = {
        "url": service.url + "/search?q={query}&k={k}&qid={query_id}",
        "headers": {"Authorization": f"Bearer {TOKEN}"},
        "timeout": timeout,
        "max_retries": retries,
        **request,
    }
    return HttpBackend(
        HttpRequestConfig.model_validate(req),
        HttpResponseConfig(hits="results", id="doc.id", score="score", took=took),
        max_concurrency=4,
        retry=RetryPolicy(max_retries=retries, sleep=lambda s: None),
        batch=None if batch is None else HttpBatchConfig.model_validate(batch),
    )


def ask(b: HttpBackend, text: str = "solar panels", k: int = 10) -> Any:
    return b.search_one(ServiceSpec(), Query("q1", text), k).ranking


def failure(b: HttpBackend, text: str = "solar panels") -> str:
    with pytest.raises(InfrastructureError) as err:
        ask(b, text)
    message = str(err.value)
    assert TOKEN not in message and "Bearer" not in message, message
    assert "\n" not in message and "Traceback" not in message
    return message


# --- what the service answers, as the engine answers it


def test_the_rankings_are_the_engines(service: SearchService) -> None:
    queries = [Query("q1", "solar panels"), Query("q2", "river flood"), Query("q3", "wind solar farms")]
    got = backend(service).search_batch(ServiceSpec(), queries, 3)
    want = service.engine.search_batch(BM25Spec(), queries, 3)
    assert {q: r.doc_ids for q, r in got.items()} == {q: r.doc_ids for q, r in want.items()}
    assert {q: r.scores for q, r in got.items()} == {q: r.scores for q, r in want.items()}
    assert len(service.requests) == 3  # one request per query


def test_the_url_is_percent_encoded_and_the_body_typed(service: SearchService) -> None:
    text = "a&b=c #x/y ?é"
    b = backend(service)
    ask(b, text + " solar", k=2)
    assert service.requests[-1]["request"]["q"] == text + " solar"
    assert service.requests[-1]["request"]["k"] == "2"
    post = backend(
        service,
        method="POST",
        url=service.url + "/search",
        body={"query": "{query}", "size": "{k}", "id": "{query_id}", "note": "k={k}", "mode": "{mode}"},
    )
    ranking = post.search_one(
        ServiceSpec(params=(("mode", "reversed"),)), Query("q 7", "solar panels"), 3
    ).ranking
    sent = service.requests[-1]["request"]
    assert sent == {"query": "solar panels", "size": 3, "id": "q 7", "note": "k=3", "mode": "reversed"}
    assert ranking.scores == sorted(ranking.scores)  # the service's order kept, as it answered


def test_only_service_retrievers_are_answered(service: SearchService) -> None:
    with pytest.raises(
        ConfigError,
        match="answers only .type: service. retrievers .the service runs its own pipeline.; got a bm25 retriever",
    ):
        backend(service).search_batch(BM25Spec(), [Query("q1", "solar")], 3)


# --- the retry policy of the engines


def test_429_then_success_is_retried_and_counted(service: SearchService) -> None:
    b = backend(service)
    service.faults.extend([("status", (429, {"Retry-After": "0"})), ("status", 503)])
    assert ask(b).doc_ids[:1] == ["d1"]
    assert b.retries() == {"HTTP 429": 1, "HTTP 503": 1}


def test_500_fails_at_once(service: SearchService) -> None:
    b = backend(service)
    service.always = ("status", 500)
    message = failure(b)
    assert message.startswith(f"http backend GET {service.url}/search (query 'q1') failed (HTTP 500): ")
    assert len(service.requests) == 1 and b.retries() == {}


def test_a_4xx_fails_at_once_and_the_token_is_never_shown(service: SearchService) -> None:
    b = backend(service)
    service.always = ("echo", 400)  # the service echoes the Authorization header back
    message = failure(b)
    assert "HTTP 400" in message and "***" in message
    assert len(service.requests) == 1
    assert TOKEN not in repr(b) and TOKEN not in json.dumps(b.describe())


def test_retries_exhausted_says_how_many(service: SearchService) -> None:
    service.always = ("status", 502)
    message = failure(backend(service, retries=2))
    assert "failed (HTTP 502) (after 2 retries in" in message
    assert len(service.requests) == 3


def test_a_timeout_is_retried_then_an_error(service: SearchService) -> None:
    b = backend(service, retries=1, timeout=0.2)
    service.always = ("sleep", 1.0)
    message = failure(b)
    assert "timed out after 0.2 s" in message and "after 1 retry" in message
    assert b.retries() == {"a timeout": 1}


def test_an_unreachable_service_is_an_error(service: SearchService) -> None:
    b = backend(service, retries=0, url="http://127.0.0.1:9/search?q={query}")
    assert "cannot be reached" in failure(b)


# --- answers that are not rankings


def test_an_html_page_is_an_error_not_zero_hits(service: SearchService) -> None:
    service.always = ("html", None)
    message = failure(backend(service))
    assert "HTTP 200 text/html, not JSON: got an HTML page" in message and "Please log in" in message


@pytest.mark.parametrize(
    "answer, fragment",
    [
        ({"hits": []}, "the answer has no 'results' (response.hits)"),
        ({"results": {"doc": 1}}, "response.hits 'results' is a object, not a list of hits"),
        ({"results": [{"score": 1.0}]}, "hit 0 has no 'doc.id' (response.id)"),
        ({"results": [{"doc": {"id": "d1"}}]}, "hit 0 has no 'score' (response.score)"),
        ({"results": [{"doc": {"id": "d1"}, "score": "high"}]}, "hit 0 ('d1') has score str 'high'"),
        ({"results": [{"doc": {"id": 1.5}, "score": 1}]}, "hit 0 has doc id float 1.5"),
        ({"results": [{"doc": {"id": True}, "score": 1}]}, "hit 0 has doc id bool True"),
        (
            {"results": [{"doc": {"id": "d1"}, "score": 2}, {"doc": {"id": "d1"}, "score": 1}]},
            "'d1' is listed twice",
        ),
    ],
)
def test_an_answer_of_the_wrong_shape_is_an_error(service: SearchService, answer: Any, fragment: str) -> None:
    service.always = ("json", answer)
    assert fragment in failure(backend(service))


def test_integer_ids_are_text_and_empty_hits_are_an_answer(service: SearchService) -> None:
    service.always = ("json", {"results": [{"doc": {"id": 7}, "score": 1}]})
    assert ask(backend(service)).doc_ids == ["7"]
    service.always = ("json", {"results": []})
    assert ask(backend(service)).doc_ids == []  # the service found nothing: a real answer


# --- whole suites


SUITE = """\
suite: svc
judgments:
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {d1: 1, d4: 2}}
    - {id: q2, text: "river flood defences", relevant: {d3: 1}}
    - {id: q3, text: "quantum gravity", relevant: {d5: 1}}
latency:
  warmup: 0
  repetitions: 1
  max_queries: all
"""


def http_suite(tmp_path: Path, service: SearchService, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SEARCH_TOKEN", TOKEN)
    path = tmp_path / "retrieval_svc.yaml"
    path.write_text(
        SUITE
        + textwrap.dedent(
            f"""\
            backend:
              type: http
              request:
                url: "{service.url}/search?q={{query}}&k={{k}}"
                headers: {{Authorization: "Bearer ${{SEARCH_TOKEN}}"}}
                max_retries: 2
              response: {{hits: results, id: doc.id, score: score}}
            retrievers:
              svc: {{type: service}}
            floors:
              svc: {{ndcg@10: 0.1}}
            """
        )
    )
    return path


def test_a_suite_on_the_service_scores_as_the_engine(
    tmp_path: Path, service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = tmp_path / "retrieval_engine.yaml"
    documents = "  documents:\n" + "".join(
        f"    - {{id: {d.doc_id}, title: {d.fields['title']!r}, text: {d.fields['text']!r}}}\n" for d in DOCS
    )
    engine.write_text(
        SUITE.replace("latency:", documents + "latency:")
        + "retrievers:\n  bm25: {type: bm25}\nfloors:\n  bm25: {ndcg@10: 0.1}\n"
    )
    service.faults.append(("status", (429, {"Retry-After": "0"})))
    on_service = run_suite(http_suite(tmp_path, service, monkeypatch))
    on_engine = run_suite(engine)
    assert on_service.retrievers["svc"].metrics == on_engine.retrievers["bm25"].metrics
    assert on_service.retries["quality"] == {"HTTP 429": 1}
    assert on_service.backend_info["endpoint"] == f"GET {service.url}/search"
    assert "documents: judged documents not checked: backend 'http' cannot tell which documents it holds" in (
        on_service.check_lines()
    )


pytest_plugins = ["pytester"]


def test_a_failing_service_is_an_error_item_and_no_output_shows_the_token(
    pytester: pytest.Pytester, service: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = http_suite(pytester.path, service, monkeypatch)
    service.always = ("echo", 500)
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", f"--retrieval-report={report}", suite
    )
    out = result.stdout.str() + result.stderr.str()
    result.assert_outcomes(errors=1)
    assert "failed (HTTP 500)" in out
    assert TOKEN not in out and TOKEN not in report.read_text()
