#!/usr/bin/env python3
"""Smoke test of the engines that `scripts/engines up` started (stdlib only).

Elasticsearch: dense_vector (hnsw, cosine) index, one doc, top-level knn search.
OpenSearch: knn_vector (lucene hnsw, cosinesimil) index, one doc, knn query, a hybrid query
through a normalization-processor pipeline and through a score-ranker-processor (RRF) pipeline.
Everything it creates is deleted at the end. Exit 0 when every step worked.

    python scripts/engines_smoke.py [--es URL] [--os URL]
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request

INDEX = "pytest-retrieval-smoke"


def call(base: str, method: str, path: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        base.rstrip("/") + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"{method} {path} -> HTTP {exc.code}: {exc.read().decode()[:500]}") from None


def top_ids(resp):
    return [h["_id"] for h in resp["hits"]["hits"]]


def smoke_es(url: str) -> None:
    call(url, "DELETE", f"/{INDEX}?ignore_unavailable=true")
    call(
        url,
        "PUT",
        f"/{INDEX}",
        {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {
                "properties": {
                    "text": {"type": "text"},
                    "embedding": {
                        "type": "dense_vector",
                        "dims": 3,
                        "index": True,
                        "similarity": "cosine",
                        "index_options": {"type": "hnsw"},
                    },
                }
            },
        },
    )
    call(url, "PUT", f"/{INDEX}/_doc/d1?refresh=true", {"text": "hello vector world", "embedding": [1, 0, 0]})
    call(url, "PUT", f"/{INDEX}/_doc/d2?refresh=true", {"text": "another doc", "embedding": [0, 1, 0]})
    r = call(
        url,
        "POST",
        f"/{INDEX}/_search",
        {
            "knn": {"field": "embedding", "query_vector": [0.9, 0.1, 0], "k": 2, "num_candidates": 10},
            "_source": False,
        },
    )
    assert top_ids(r) == ["d1", "d2"], r
    print(f"elasticsearch: knn ok {top_ids(r)} scores {[h['_score'] for h in r['hits']['hits']]}")
    call(url, "DELETE", f"/{INDEX}")


def smoke_os(url: str) -> None:
    call(url, "DELETE", f"/{INDEX}?ignore_unavailable=true")
    call(
        url,
        "PUT",
        f"/{INDEX}",
        {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0, "index.knn": True},
            "mappings": {
                "properties": {
                    "text": {"type": "text"},
                    "embedding": {
                        "type": "knn_vector",
                        "dimension": 3,
                        "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
                    },
                }
            },
        },
    )
    call(url, "PUT", f"/{INDEX}/_doc/d1?refresh=true", {"text": "hello vector world", "embedding": [1, 0, 0]})
    call(url, "PUT", f"/{INDEX}/_doc/d2?refresh=true", {"text": "another doc", "embedding": [0, 1, 0]})
    knn = {"knn": {"embedding": {"vector": [0.9, 0.1, 0], "k": 2}}}
    r = call(url, "POST", f"/{INDEX}/_search", {"query": knn, "_source": False})
    assert top_ids(r) == ["d1", "d2"], r
    print(f"opensearch: knn ok {top_ids(r)}")
    hybrid = {"query": {"hybrid": {"queries": [{"match": {"text": "another"}}, knn]}}, "_source": False}
    pipelines = {
        "pytest-retrieval-smoke-norm": {
            "phase_results_processors": [
                {
                    "normalization-processor": {
                        "normalization": {"technique": "min_max"},
                        "combination": {
                            "technique": "arithmetic_mean",
                            "parameters": {"weights": [0.5, 0.5]},
                        },
                    }
                }
            ]
        },
        "pytest-retrieval-smoke-rrf": {
            "phase_results_processors": [
                {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 60}}}
            ]
        },
    }
    for name, body in pipelines.items():
        call(url, "PUT", f"/_search/pipeline/{name}", body)
        r = call(url, "POST", f"/{INDEX}/_search?search_pipeline={name}", hybrid)
        ids = top_ids(r)
        assert sorted(ids) == ["d1", "d2"], r
        print(f"opensearch: hybrid via {name} ok {ids} scores {[h['_score'] for h in r['hits']['hits']]}")
        call(url, "DELETE", f"/_search/pipeline/{name}")
    call(url, "DELETE", f"/{INDEX}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--es", default="http://127.0.0.1:19200")
    ap.add_argument("--os", default="http://127.0.0.1:19201")
    args = ap.parse_args()
    smoke_es(args.es)
    smoke_os(args.os)
    print("smoke: all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
