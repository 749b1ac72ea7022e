"""Behaviour both engine backends share, run against every real engine of the matrix
(parametrised over Elasticsearch 8.19/9.5 and OpenSearch 2.19/3.6)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import traceback

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec, TemplateSpec
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Document, Query

from .conftest import backend_class, http, peer, random_name, vector_mapping

pytestmark = pytest.mark.engines

K = 10


def test_prepare_throwaway(engine, prepared, scifact_small):
    info = prepared.describe()
    assert info["backend"] == engine.name and info["engine"] == engine.name
    assert info["version"] == engine.version
    assert (
        info["client"].split()[0]
        == {"elasticsearch": "elasticsearch-py", "opensearch": "opensearch-py"}[engine.name]
    )
    assert info["doc_count"] == len(scifact_small.documents)
    assert info["index"].startswith("pytest-retrieval-engine-tests-")
    assert info["index_mode"] == "throwaway"
    status, mapping = http(engine.url, path=f"/{info['index']}/_mapping")
    meta = mapping[info["index"]]["mappings"]["_meta"]
    assert meta["created_by"] == "pytest-retrieval" and meta["pid"] == os.getpid()


@pytest.mark.parametrize(
    "spec",
    [
        BM25Spec(),
        BM25Spec(fields=(("text", 1.0),)),
        BM25Spec(fields=(("title", 2.0), ("text", 1.0)), multi_match_type="most_fields"),
        KnnSpec(),
    ],
    ids=["bm25", "bm25-one-field", "bm25-most-fields", "knn"],
)
def test_batch_and_single_agree(prepared, scifact_small, spec):
    queries = scifact_small.queries
    run = prepared.search_batch(spec, queries, K)
    assert list(run) == [q.qid for q in queries]
    assert all(len(r) == K for r in run.values())
    for q in queries[:5]:
        one = prepared.search_one(spec, q, K)
        assert one.ranking.doc_ids == run[q.qid].doc_ids
        assert one.ranking.scores == pytest.approx(run[q.qid].scores, rel=1e-6)
        assert one.server_took_ms is not None and one.server_took_ms >= 0
    # the retrieval is real: most chosen queries find a relevant document in their top 10
    found = sum(bool(set(run[q].doc_ids) & set(scifact_small.qrels[q])) for q in run)
    assert found >= len(queries) // 2


def test_knn_matches_exact_search(prepared, scifact_small):
    """300 docs: HNSW finds the exact cosine top 10 (nearly always all of it)."""
    vecs = scifact_small.vectors
    run = prepared.search_batch(KnnSpec(), scifact_small.queries, K)
    overlap = []
    for q in scifact_small.queries:
        sims = vecs.matrix @ np.asarray(q.vector, dtype=np.float32)
        exact = [vecs.doc_ids[i] for i in np.argsort(-sims)[:K]]
        overlap.append(len(set(exact) & set(run[q.qid].doc_ids)) / K)
        top = int(np.argmax(sims))
        # both engines score cosine as (1 + cos) / 2
        assert run[q.qid].scores[0] == pytest.approx((1 + sims[top]) / 2, abs=1e-4)
    assert np.mean(overlap) >= 0.95


def test_templates_equal_builtin_specs(prepared, scifact_small):
    queries = scifact_small.queries[:10]
    bm25 = prepared.search_batch(BM25Spec(fields=(("title", 1.0), ("text", 1.0))), queries, K)
    tpl = TemplateSpec(
        body={
            "query": {
                "multi_match": {"query": "{{query_text}}", "type": "best_fields", "fields": ["title", "text"]}
            },
            "size": "{{k}}",
        }
    )
    assert {q: r.doc_ids for q, r in prepared.search_batch(tpl, queries, K).items()} == {
        q: r.doc_ids for q, r in bm25.items()
    }
    knn = prepared.search_batch(KnnSpec(), queries, K)
    if prepared.name == "elasticsearch":
        body = {
            "knn": {
                "field": "embedding",
                "query_vector": "{{query_vector}}",
                "k": "{{k}}",
                "num_candidates": 100,
            }
        }
    else:
        body = {"query": {"knn": {"embedding": {"vector": "{{query_vector}}", "k": 100}}}, "size": "{{k}}"}
    got = prepared.search_batch(TemplateSpec(body=body), queries, K)
    assert {q: r.doc_ids for q, r in got.items()} == {q: r.doc_ids for q, r in knn.items()}
    one = prepared.search_one(TemplateSpec(body=body), queries[0], K)
    assert one.ranking.doc_ids == knn[queries[0].qid].doc_ids


def test_failed_subsearch_raises(prepared, scifact_small):
    queries = scifact_small.queries[:5]
    with pytest.raises(InfrastructureError) as err:
        prepared.search_batch(KnnSpec(field="no_such_vector_field"), queries, K)
    assert "no_such_vector_field" in str(err.value)
    with pytest.raises(InfrastructureError):
        prepared.search_one(KnnSpec(field="no_such_vector_field"), queries[0], K)
    with pytest.raises(InfrastructureError, match="kNN retriever needs"):
        prepared.search_batch(KnnSpec(field="title"), queries, K)
    with pytest.raises(InfrastructureError, match="no field 'abstract'"):
        prepared.search_batch(BM25Spec(fields=(("title", 1.0), ("abstract", 1.0))), queries, K)

    # one bad query among good ones: only its sub-search fails, and it is the one named
    good = [
        Query(f"good-{i}", text)
        for i, text in enumerate(
            ["cancer cells", "vitamin D deficiency", "gene expression", "insulin resistance"]
        )
    ]
    bad = Query("bad-query", "title:(unclosed AND", None)
    tpl = TemplateSpec(body={"query": {"query_string": {"query": "{{query_text}}", "default_field": "text"}}})
    with pytest.raises(InfrastructureError) as err:
        prepared.search_batch(tpl, good[:2] + [bad] + good[2:], K)
    assert "'bad-query'" in str(err.value)
    assert "parse" in str(err.value).lower()
    assert "more" not in str(err.value)  # only that one failed
    assert len(prepared.search_batch(tpl, good, K)) == len(good)


def test_search_one_is_one_request(prepared, scifact_small, monkeypatch):
    calls = []
    original = prepared._raw_request

    def counting(method, path, params, body, ndjson):
        calls.append((method, path, dict(params or {})))
        return original(method, path, params, body, ndjson)

    monkeypatch.setattr(prepared, "_raw_request", counting)
    prepared.search_one(BM25Spec(), scifact_small.queries[0], K)
    assert len(calls) == 1
    method, path, params = calls[0]
    assert path.endswith("/_search") and params.get("request_cache") == "false"


def test_batches_run_through_msearch(engine, scifact_small):
    backend = backend_class(engine.name)(
        {"hosts": [engine.url], "batch_size": 7, "concurrency": 3}, {"suite": "msearch"}
    )
    docs = scifact_small.documents[:50]
    with backend:
        backend.prepare(docs, None)
        calls = []
        original = backend._raw_request

        def counting(method, path, params, body, ndjson):
            calls.append(path)
            return original(method, path, params, body, ndjson)

        backend._raw_request = counting
        run = backend.search_batch(BM25Spec(), scifact_small.queries, 5)
        assert list(run) == [q.qid for q in scifact_small.queries]
        searches = [p for p in calls if not p.split("/")[2].startswith("_mapping")]
        assert len(searches) == -(-len(scifact_small.queries) // 7)
        assert all(p.endswith("/_msearch") for p in searches)


def test_bm25_parameters_change_scores(engine, prepared, scifact_small):
    """k1/b of a BM25Spec reach the throwaway index (a fresh index built with them agrees)."""
    queries = scifact_small.queries[:5]
    spec = BM25Spec(k1=0.9, b=0.4)
    default = prepared.search_batch(BM25Spec(), queries, K)
    tuned = prepared.search_batch(spec, queries, K)
    assert any(default[q].scores != tuned[q].scores for q in default)
    fresh = backend_class(engine.name)(
        {"hosts": [engine.url]}, {"suite": "bm25 params", "bm25": {"k1": 0.9, "b": 0.4}}
    )
    with fresh:
        fresh.prepare(scifact_small.documents, None)
        again = fresh.search_batch(spec, queries, K)
    for q in queries:
        assert again[q.qid].doc_ids == tuned[q.qid].doc_ids
        assert again[q.qid].scores == pytest.approx(tuned[q.qid].scores, rel=1e-5)
    prepared.search_batch(BM25Spec(), queries[:1], K)  # back to defaults for other tests


def test_close_deletes_throwaway(engine, scifact_small):
    url = engine.url
    backend = backend_class(engine.name)({"hosts": [url]}, {"suite": "close"})
    backend.prepare(scifact_small.documents[:20], None)
    name = backend.describe()["index"]
    assert http(url, path=f"/{name}/_count")[1]["count"] == 20
    backend.close()
    assert http(url, path=f"/{name}")[0] == 404
    backend.close()  # idempotent
    with pytest.raises(InfrastructureError):
        backend.search_one(BM25Spec(), scifact_small.queries[0], K)


def test_existing_index_is_never_written(engine, scifact_small):
    url = engine.url
    name = random_name("existing")  # our prefix but no _meta stamp: also must survive reaping
    settings = {"number_of_shards": 1, "number_of_replicas": 0}
    if engine.name == "opensearch":
        settings["index.knn"] = True
    status, _ = http(
        url,
        "PUT",
        f"/{name}",
        {
            "settings": settings,
            "mappings": {
                "properties": {
                    "title": {"type": "text"},
                    "text": {"type": "text"},
                    "embedding": vector_mapping(engine.name, 384),
                }
            },
        },
    )
    assert status == 200
    try:
        for d, v in zip(scifact_small.documents[:40], scifact_small.vectors.matrix[:40]):
            http(url, "PUT", f"/{name}/_doc/{d.doc_id}", dict(d.fields, embedding=v.tolist()))
        http(url, "POST", f"/{name}/_refresh")
        before_map = http(url, path=f"/{name}/_mapping")[1]
        before_settings = http(url, path=f"/{name}/_settings")[1][name]["settings"]["index"]
        before_ops = http(url, path=f"/{name}/_stats/indexing")[1]["_all"]["total"]["indexing"]["index_total"]

        with pytest.raises(ConfigError):
            backend_class(engine.name)({"hosts": [url]}, {"name": name, "mappings": {"properties": {}}})

        backend = backend_class(engine.name)({"hosts": [url]}, {"name": name})
        backend.prepare(scifact_small.documents, scifact_small.vectors)  # documents are ignored
        assert backend.describe()["doc_count"] == 40
        assert backend.describe()["index_mode"] == "existing"
        assert name not in backend.reap_leftovers()
        with pytest.raises(ConfigError, match="belong to the index"):  # never set on the index
            backend.search_batch(BM25Spec(k1=0.5, b=0.3), scifact_small.queries[:5], K)
        run = backend.search_batch(BM25Spec(), scifact_small.queries[:5], K)
        assert all(set(r.doc_ids) <= {d.doc_id for d in scifact_small.documents[:40]} for r in run.values())
        backend.search_batch(KnnSpec(similarity="dot_product"), scifact_small.queries[:5], K)
        backend.close()

        status, _ = http(url, path=f"/{name}")
        assert status == 200
        assert http(url, path=f"/{name}/_count")[1]["count"] == 40
        assert http(url, path=f"/{name}/_mapping")[1] == before_map
        after_settings = http(url, path=f"/{name}/_settings")[1][name]["settings"]["index"]
        assert after_settings == before_settings
        after_ops = http(url, path=f"/{name}/_stats/indexing")[1]["_all"]["total"]["indexing"]["index_total"]
        assert after_ops == before_ops
    finally:
        http(url, "DELETE", f"/{name}")


def test_missing_existing_index(engine):
    backend = backend_class(engine.name)({"hosts": [engine.url]}, {"name": random_name("absent")})
    with pytest.raises(InfrastructureError, match="does not exist"):
        backend.prepare(None, None)
    backend.close()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_leftovers_are_reaped(engine, scifact_small):
    import socket

    url = engine.url
    host = socket.gethostname()
    now = time.time()
    metas = {
        "old": {
            "created_by": "pytest-retrieval",
            "host": "another-host",
            "pid": 1,
            "created_at": now - 48 * 3600,
        },
        "dead": {"created_by": "pytest-retrieval", "host": host, "pid": _dead_pid(), "created_at": now - 60},
        "alive": {
            "created_by": "pytest-retrieval",
            "host": host,
            "pid": os.getppid(),
            "created_at": now - 60,
        },
        "elsewhere": {
            "created_by": "pytest-retrieval",
            "host": "another-host",
            "pid": 1,
            "created_at": now - 60,
        },
        "foreign": {"created_by": "someone-else", "created_at": now - 48 * 3600},
        "nometa": None,
    }
    names = {}
    try:
        for tag, meta in metas.items():
            names[tag] = random_name(f"reap-{tag}")
            mappings = {"properties": {"text": {"type": "text"}}}
            if meta is not None:
                mappings["_meta"] = meta
            assert (
                http(
                    url,
                    "PUT",
                    f"/{names[tag]}",
                    {"settings": {"number_of_replicas": 0}, "mappings": mappings},
                )[0]
                == 200
            )
        backend = backend_class(engine.name)({"hosts": [url]}, {"suite": "reaper"})
        with backend:
            backend.prepare(scifact_small.documents[:10], None)  # reaps first
            assert http(url, path=f"/{backend.describe()['index']}")[0] == 200
        for tag in ("old", "dead"):
            assert http(url, path=f"/{names[tag]}")[0] == 404, tag
        for tag in ("alive", "elsewhere", "foreign", "nometa"):
            assert http(url, path=f"/{names[tag]}")[0] == 200, tag
    finally:
        for name in names.values():
            http(url, "DELETE", f"/{name}")


SECRET = "s3cr3t-Pa55word-never-shown"
API_KEY = "QUFBQUFBQUFBQUE6QkJCQkJCQkJCQg-never-shown"


def _assert_hidden(exc: BaseException, *objs, log_text: str = "") -> None:
    texts = [str(exc), repr(exc), "".join(traceback.format_exception(exc)), log_text]
    texts += [repr(o) for o in objs]
    for text in texts:
        assert SECRET not in text and API_KEY not in text, text


@pytest.mark.parametrize(
    "connection",
    [
        {"hosts": ["http://127.0.0.1:1"], "username": "alice", "password": SECRET},
        {"hosts": [f"http://alice:{SECRET}@127.0.0.1:1"]},
        {"hosts": ["http://127.0.0.1:1"], "api_key": API_KEY},
    ],
    ids=["basic-auth", "userinfo-url", "api-key"],
)
def test_credentials_never_shown(engine, connection, caplog):
    caplog.set_level(logging.DEBUG)
    conn = dict(connection, max_retries=0, request_timeout=2)
    cls = backend_class(engine.name)
    if engine.name == "opensearch" and "api_key" in conn:
        with pytest.raises(ConfigError) as err:
            cls(conn, {})
        _assert_hidden(err.value, log_text=caplog.text)
        return
    backend = cls(conn, {})
    with pytest.raises(InfrastructureError) as err:
        backend.prepare([Document("1", {"text": "x"})], None)
    assert "cannot be reached" in str(err.value)
    _assert_hidden(err.value, backend, log_text=caplog.text)
    backend.close()


def test_wrong_engine_is_refused(engine):
    other = peer(engine)
    backend = backend_class(engine.name)({"hosts": [other.url], "max_retries": 0}, {})
    with pytest.raises(InfrastructureError, match="not (Elasticsearch|OpenSearch)"):
        backend.prepare([Document("1", {"text": "x"})], None)
    backend.close()
