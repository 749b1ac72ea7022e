"""OpenSearch-only behaviour (2.19 and 3.6): knn_vector mapping, search pipelines, server-side
hybrid."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec, TemplateSpec
from pytest_retrieval.backends.opensearch import OpenSearchBackend, normalization_pipeline, rrf_pipeline
from pytest_retrieval.backends.search_engine.versions import os_search_pipeline
from pytest_retrieval.errors import ConfigError, InfrastructureError

from .conftest import http, random_name

pytestmark = pytest.mark.engines

K = 10


@pytest.fixture(scope="module")
def osb(os_instance, scifact_small):
    backend = OpenSearchBackend({"hosts": [os_instance.url]}, {"suite": "opensearch tests"})
    backend.prepare(scifact_small.documents, scifact_small.vectors)
    yield backend
    backend.close()


def test_throwaway_mapping(osb, os_instance):
    """Engine, space type and graph parameters pinned (3.0 refuses nmslib; an unpinned field
    takes the plugin's default engine), no encoder (no quantisation)."""
    name = osb.describe()["index"]
    _, body = http(os_instance.url, path=f"/{name}")
    mapping = body[name]["mappings"]["properties"]["embedding"]
    assert mapping["type"] == "knn_vector" and mapping["dimension"] == 384
    assert mapping["method"]["engine"] == "lucene" and mapping["method"]["space_type"] == "cosinesimil"
    assert mapping["method"]["parameters"] == {"m": 16, "ef_construction": 100}
    assert osb.describe()["vector_index"]["quantization"] == "none"
    settings = body[name]["settings"]["index"]
    assert settings["knn"] == "true" and settings["number_of_shards"] == "1"


def _client_rrf(runs, rank_constant=60):
    fused = {}
    for run in runs:
        for rank, doc in enumerate(run.doc_ids, start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (rank_constant + rank)
    return fused


def test_hybrid_rrf_matches_client_side_fusion(osb, scifact_small):
    queries = scifact_small.queries[:10]
    bm25 = osb.search_batch(BM25Spec(), queries, K)
    knn = osb.search_batch(KnnSpec(), queries, K)
    hybrid = osb.search_hybrid(BM25Spec(), KnnSpec(), queries, K, rrf_pipeline(60))
    for q in queries:
        expected = _client_rrf([bm25[q.qid], knn[q.qid]])
        got = hybrid[q.qid]
        assert len(got) == K
        for doc, score in got.pairs():
            assert score == pytest.approx(expected[doc], rel=1e-5), (q.qid, doc)
        best = sorted(expected.values(), reverse=True)[:K]
        assert got.scores == pytest.approx(best, rel=1e-5)


def test_hybrid_normalization_pipeline(osb, scifact_small, os_instance):
    queries = scifact_small.queries[:10]
    bm25 = osb.search_batch(BM25Spec(), queries, K)
    knn = osb.search_batch(KnnSpec(), queries, K)
    before = set((http(os_instance.url, path="/_search/pipeline")[1] or {}).keys())
    hybrid = osb.search_hybrid(
        BM25Spec(), KnnSpec(), queries, K, normalization_pipeline("min_max", "arithmetic_mean", [0.5, 0.5])
    )
    after = set((http(os_instance.url, path="/_search/pipeline")[1] or {}).keys())
    assert after == before  # the temporary pipeline is gone
    for q in queries:
        got = hybrid[q.qid]
        assert len(got) == K
        assert set(got.doc_ids) <= set(bm25[q.qid].doc_ids) | set(knn[q.qid].doc_ids)
        assert all(0.0 <= s <= 1.0 for s in got.scores)
        assert got.scores == sorted(got.scores, reverse=True)


def test_template_with_pipeline_equals_search_hybrid(osb, scifact_small):
    queries = scifact_small.queries[:5]
    name = osb.create_search_pipeline(rrf_pipeline())
    try:
        body = {
            "query": {
                "hybrid": {
                    "queries": [
                        {"multi_match": {"query": "{{query_text}}", "fields": ["title", "text"]}},
                        {"knn": {"embedding": {"vector": "{{query_vector}}", "k": 100}}},
                    ]
                }
            },
            "size": "{{k}}",
        }
        templ = osb.search_batch(TemplateSpec(body=body, pipeline=name), queries, K)
        hyb = osb.search_hybrid(BM25Spec(), KnnSpec(), queries, K, name)
        for q in queries:
            assert templ[q.qid].doc_ids == hyb[q.qid].doc_ids
        one = osb.search_one(TemplateSpec(body=body, pipeline=name), queries[0], K)
        assert one.ranking.doc_ids == hyb[queries[0].qid].doc_ids
        # without the pipeline the hybrid query's raw marker scores are refused, not ranked
        with pytest.raises(InfrastructureError, match="pipeline"):
            osb.search_batch(TemplateSpec(body=body), queries, K)
    finally:
        osb.delete_search_pipeline(name)
    with pytest.raises(RuntimeError):
        osb.delete_search_pipeline("some-production-pipeline")


def test_api_key_is_refused(os_instance):
    with pytest.raises(ConfigError, match="API keys"):
        OpenSearchBackend({"hosts": [os_instance.url], "api_key": "abc123"}, {})


def test_similarity_change_rebuilds(os_instance, scifact_small):
    os_url = os_instance.url
    docs = scifact_small.documents[:60]
    vecs = type(scifact_small.vectors)([d.doc_id for d in docs], scifact_small.vectors.matrix[:60])
    with OpenSearchBackend({"hosts": [os_url]}, {"suite": "similarity"}) as b:
        b.prepare(docs, vecs)
        first = b.describe()["index"]
        q = scifact_small.queries[0]
        run = b.search_batch(KnnSpec(similarity="l2_norm"), [q], 5)
        second = b.describe()["index"]
        assert second != first and http(os_url, path=f"/{first}")[0] == 404
        _, body = http(os_url, path=f"/{second}/_mapping")
        assert body[second]["mappings"]["properties"]["embedding"]["method"]["space_type"] == "l2"
        d2 = ((vecs.matrix - np.asarray(q.vector)) ** 2).sum(axis=1)
        assert run[q.qid].scores[0] == pytest.approx(1.0 / (1.0 + d2.min()), rel=1e-4)
    assert http(os_url, path=f"/{second}")[0] == 404


def test_stale_pipelines_are_reaped(os_instance, scifact_small):
    os_url = os_instance.url
    stale = random_name("reap-pipeline")
    foreign = random_name("foreign-pipeline")
    meta = {
        "created_by": "pytest-retrieval",
        "host": "another-host",
        "pid": 1,
        "created_at": time.time() - 48 * 3600,
    }
    rrf = os_search_pipeline(rrf_pipeline(), os_instance.version)  # where this version reads rank_constant
    status, body = http(
        os_url,
        "PUT",
        f"/_search/pipeline/{stale}",
        dict(rrf, description="pytest-retrieval " + json.dumps(meta)),
    )
    assert status == 200, body
    assert http(os_url, "PUT", f"/_search/pipeline/{foreign}", rrf)[0] == 200
    try:
        with OpenSearchBackend({"hosts": [os_url]}, {"suite": "pipeline reaper"}) as b:
            reaped = b.reap_leftovers()
        assert stale in reaped and foreign not in reaped
        assert http(os_url, path=f"/_search/pipeline/{stale}")[0] == 404
        assert http(os_url, path=f"/_search/pipeline/{foreign}")[0] == 200
    finally:
        http(os_url, "DELETE", f"/_search/pipeline/{stale}")
        http(os_url, "DELETE", f"/_search/pipeline/{foreign}")
