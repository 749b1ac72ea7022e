"""Elasticsearch-only behaviour (8.19 and 9.5): dense_vector mapping, top-level knn, no search
pipelines, and agreement with OpenSearch where both engines should give the same answer."""

from __future__ import annotations

import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec, TemplateSpec
from pytest_retrieval.backends.elasticsearch import ElasticsearchBackend
from pytest_retrieval.backends.opensearch import OpenSearchBackend
from pytest_retrieval.errors import ConfigError

from .conftest import http, peer

pytestmark = pytest.mark.engines

K = 10


@pytest.fixture(scope="module")
def esb(es_instance, scifact_small):
    backend = ElasticsearchBackend({"hosts": [es_instance.url]}, {"suite": "elasticsearch tests"})
    backend.prepare(scifact_small.documents, scifact_small.vectors)
    yield backend
    backend.close()


def test_throwaway_mapping(esb, es_instance):
    """Float HNSW pinned: without it 9.x builds bbq_hnsw (>= 384 dims) and 8.x int8_hnsw."""
    name = esb.describe()["index"]
    _, body = http(es_instance.url, path=f"/{name}")
    mapping = body[name]["mappings"]["properties"]["embedding"]
    assert mapping["type"] == "dense_vector" and mapping["dims"] == 384
    assert mapping["similarity"] == "cosine"
    assert mapping["index_options"] == {"type": "hnsw", "m": 16, "ef_construction": 100}
    assert body[name]["settings"]["index"]["number_of_shards"] == "1"
    facts = esb.describe()
    assert (
        facts["vector_index"]["index_options"] == "hnsw" and facts["vector_index"]["quantization"] == "none"
    )
    assert facts["client"].startswith(f"elasticsearch-py {es_instance.major}.")
    assert "warnings" not in facts


def test_knn_request_shape(esb, scifact_small):
    body = esb.build_body(KnnSpec(filter={"match": {"text": "cell"}}), scifact_small.queries[0], 7)
    assert body["size"] == 7 and body["_source"] is False
    assert body["knn"]["k"] == 7 and body["knn"]["num_candidates"] == 100
    assert body["knn"]["filter"] == {"match": {"text": "cell"}}
    filtered = esb.search_batch(KnnSpec(filter={"match": {"text": "cell"}}), scifact_small.queries[:5], 7)
    assert all(len(r) <= 7 for r in filtered.values())


def test_search_pipeline_is_opensearch_only(esb, scifact_small):
    with pytest.raises(ConfigError, match="pipeline"):
        esb.search_batch(
            TemplateSpec(body={"query": {"match_all": {}}}, pipeline="p"), scifact_small.queries[:1], K
        )


def test_same_answers_as_opensearch(esb, es_instance, scifact_small):
    """Same Lucene BM25 and HNSW on both (8.19 with OpenSearch 2.19 on Lucene 9, 9.5 with
    OpenSearch 3.6 on Lucene 10): same rankings, same scores (up to float noise)."""
    queries = scifact_small.queries
    with OpenSearchBackend({"hosts": [peer(es_instance).url]}, {"suite": "parity"}) as osb:
        osb.prepare(scifact_small.documents, scifact_small.vectors)
        for spec in (
            BM25Spec(),
            BM25Spec(fields=(("title", 2.0), ("text", 1.0)), tie_breaker=0.3),
            KnnSpec(),
        ):
            a = esb.search_batch(spec, queries, K)
            b = osb.search_batch(spec, queries, K)
            for q in queries:
                assert a[q.qid].scores == pytest.approx(b[q.qid].scores, rel=1e-5), (spec, q.qid)
                if len(set(a[q.qid].scores)) == len(a[q.qid].scores):  # no ties
                    assert a[q.qid].doc_ids == b[q.qid].doc_ids, (spec, q.qid)
