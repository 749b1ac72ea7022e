"""``backend.index.id_field`` (issue #36): the judgments' ids read from a document field, one
reading for the engines' hits and the embedded engine's corpus; a hit without the field, a
value that is not one id, or two hits of one ranking with one id are one ConfigError line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_retrieval.backends.id_field import IdField, unique_ids
from pytest_retrieval.backends.search_engine.search import read_hits
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Document


def _fail(what, detail):
    return InfrastructureError(f"{what}: {detail}")


def _answer(*hits):
    return {"took": 1, "hits": {"hits": [{"_score": 10.0 - i, **h} for i, h in enumerate(hits)]}}


def test_the_id_is_read_from_fields_then_from_the_source_path() -> None:
    field = IdField("meta.sku")
    answer = _answer(
        {"_id": "1", "fields": {"meta.sku": ["A-1"]}},
        {"_id": "2", "_source": {"meta": {"sku": "B-2"}}},
        {"_id": "3", "_source": {"meta.sku": 33}},
    )
    ranking, _ = read_hits(answer, "q1", 10, _fail, field)
    assert ranking.doc_ids == ["A-1", "B-2", "33"]


def test_the_request_asks_every_hit_for_the_field_whatever_the_template_says() -> None:
    body = IdField("sku").request({"query": {"match_all": {}}, "_source": False, "fields": ["title"]})
    assert body["fields"] == ["title", "sku"] and body["_source"] == {"includes": ["sku"]}


@pytest.mark.parametrize(
    "hit, said",
    [
        ({"_id": "7", "_source": {}}, "hit '7' has no field 'sku'"),
        ({"_id": "7", "fields": {"sku": ["a", "b"]}}, "has 2 values in 'sku'"),
        ({"_id": "7", "_source": {"sku": {"x": 1}}}, "'sku' is dict"),
        ({"_id": "7", "_source": {"sku": True}}, "'sku' is bool"),
        ({"_id": "7", "_source": {"sku": 1.5}}, "'sku' is float"),
        ({"_id": "7", "_source": {"sku": " "}}, "'sku' is empty"),
    ],
)
def test_a_hit_without_one_id_is_one_config_error(hit, said) -> None:
    with pytest.raises(ConfigError) as info:
        read_hits(_answer(hit), "q1", 10, _fail, IdField("sku"))
    assert said in str(info.value) and "backend.index.id_field" in str(info.value)
    assert "query 'q1'" in str(info.value)


def test_two_hits_of_one_ranking_sharing_an_id_are_refused() -> None:
    answer = _answer({"_id": "1", "_source": {"sku": "A"}}, {"_id": "2", "_source": {"sku": "A"}})
    with pytest.raises(ConfigError, match=r"hits 1 and 2 share the id field 'sku' value 'A'"):
        read_hits(answer, "q1", 10, _fail, IdField("sku"))
    with pytest.raises(ConfigError, match="share the id value 'x'"):
        unique_ids(["x", "y", "x"], None, "here")


def test_a_corpus_document_without_the_field_is_named() -> None:
    with pytest.raises(ConfigError, match="document 'd1' has no field 'sku'"):
        IdField("sku").of_document(Document("d1", {"text": "t"}), "corpus.jsonl")


CORPUS = [
    {"_id": "1", "sku": "A-100", "title": "Solar panels", "text": "efficiency of solar panels in winter"},
    {"_id": "2", "sku": "A-200", "title": "Panels", "text": "solar efficiency measured"},
    {"_id": "3", "sku": "B-300", "title": "Floods", "text": "river flood defences in cities"},
]

SUITE = """\
suite: ids
judgments:
  corpus: corpus.jsonl
  inline:
    - {id: q1, text: "solar panels efficiency", relevant: {A-100: 2, A-200: 1}}
    - {id: q2, text: "river flood defences", relevant: {B-300: 1}}
backend:
  type: embedded
  index: {id_field: sku}
latency: {enabled: false}
retrievers:
  bm25: {type: bm25}
  text: {type: bm25, fields: [text]}
  rrf: {type: rrf, of: [bm25, text]}
  reranked: {type: rerank, of: [bm25], window: 3, reranker: {type: callable, function: "rr:score"}}
expectations:
  - {query_id: q1, first: A-100, retrievers: [rrf]}
floors:
  bm25: {ndcg@10: 0.99}
  rrf: {ndcg@10: 0.99}
  reranked: {ndcg@10: 0.99}
"""

RERANKER = """\
def score(query, texts):
    return [float("solar panels in winter" in t) + float("flood" in t) for t in texts]
"""


def _write(tmp_path: Path, suite: str = SUITE, corpus=CORPUS) -> Path:
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (tmp_path / "rr.py").write_text(RERANKER)
    path = tmp_path / "retrieval_ids.yaml"
    path.write_text(suite)
    return path


def test_embedded_rankings_fusion_rerank_and_exports_name_the_id_field(tmp_path) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    result = SuiteRunner(load_suite(_write(tmp_path))).run()
    for name in ("bm25", "text", "rrf", "reranked"):
        assert result.retrievers[name].run["q1"].doc_ids[0] == "A-100", name
        assert result.retrievers[name].metrics["ndcg@10"] == pytest.approx(1.0), name
    assert result.backend_info["id_field"] == "sku"
    assert result.missing_documents.missing == {} or not result.missing_documents.missing
    hits = result.expectation_hits(result.suite.expectations[0], "rrf")
    assert hits.doc_ids[0] == "A-100" and hits[0].title == "Solar panels"


def test_a_plugin_run_exports_runs_golden_and_unjudged_by_the_id_field(pytester_ids) -> None:
    runs, unjudged = pytester_ids
    assert "A-100" in runs and "Q0 1 " not in runs
    docs = [json.loads(line) for line in unjudged if line.strip()]
    assert docs and "C-400" in unjudged[0] and '"4"' not in "".join(unjudged), docs[:2]


@pytest.fixture
def pytester_ids(pytester):
    extra = {"_id": "4", "sku": "C-400", "title": "Wind", "text": "wind farms and solar"}
    _write(pytester.path, SUITE.replace("0.99", "0.1"), CORPUS + [extra])
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--retrieval-runs", "runs", "--retrieval-export-unjudged", "unjudged.jsonl"
    )
    result.assert_outcomes(passed=4)
    runs = "".join(p.read_text() for p in sorted((pytester.path / "runs").rglob("*")) if p.is_file())
    unjudged = (pytester.path / "unjudged.jsonl").read_text().splitlines()
    return runs, unjudged


def test_a_corpus_without_the_field_or_with_a_shared_value_is_one_line(tmp_path) -> None:
    from pytest_retrieval.config.load import load_suite
    from pytest_retrieval.execution.runner import SuiteRunner

    lacking = [dict(CORPUS[0]), {k: v for k, v in CORPUS[1].items() if k != "sku"}, CORPUS[2]]
    with pytest.raises(ConfigError, match="document '2' has no field 'sku'"):
        SuiteRunner(load_suite(_write(tmp_path, corpus=lacking))).run()
    shared = [CORPUS[0], {**CORPUS[1], "sku": "A-100"}, CORPUS[2]]
    with pytest.raises(ConfigError, match="share the id field 'sku' value 'A-100'"):
        SuiteRunner(load_suite(_write(tmp_path, corpus=shared))).run()


@pytest.mark.parametrize("kind", ["http", "python"])
def test_a_pipeline_backend_refuses_the_id_field(tmp_path, kind) -> None:
    from pytest_retrieval.config.load import load_suite

    backend = (
        "  type: python\n  function: 'rr:score'\n"
        if kind == "python"
        else "  type: http\n  request: {url: 'http://x/{query}'}\n  response: {hits: hits, id: id, score: s}\n"
    )
    text = SUITE.replace("  type: embedded\n", backend).split("retrievers:")[0]
    text += "retrievers:\n  svc: {type: service}\nfloors:\n  svc: {ndcg@10: 0.1}\n"
    with pytest.raises(ConfigError, match=f"backend.index.id_field: .*not by '{kind}'"):
        load_suite(_write(tmp_path, textwrap.dedent(text)))


pytest_plugins = ["pytester"]
