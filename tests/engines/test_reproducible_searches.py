"""Reproducible searches: every search carries a preference (the same shard copies answer
every query of a run and every rerun), and dfs_query_then_fetch scores BM25 with the whole
index's statistics.

The multi-node identity test runs on every cluster in ``clusters``: the single-node
engines always, and a 2-node cluster when ``PYTEST_RETRIEVAL_ES_CLUSTER_URL`` /
``PYTEST_RETRIEVAL_OS_CLUSTER_URL`` name one (``scripts/engines up --nodes 2``). On a single
node the replica is unassigned, so there the test only shows reruns agree.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

import pytest

from pytest_retrieval.backends.base import BM25Spec
from pytest_retrieval.types import Run

from .conftest import CLUSTERS, ENGINE_URLS, INSTANCES, Collection, Instance, backend_class, http, random_name

SPEC = BM25Spec(fields=(("title", 1.0), ("text", 1.0)))
RUNS = 5


def _scores(run: Run) -> Dict[str, Dict[str, float]]:
    return {q: dict(rk.pairs()) for q, rk in run.items()}


def _throwaway_run(engine: str, collection: Collection, shards: int, **connection) -> Run:
    backend = backend_class(engine)(
        {"hosts": [ENGINE_URLS[engine]], **connection},
        {"suite": "dfs", "settings": {"number_of_shards": shards}},
    )
    try:
        backend.prepare(collection.documents, None)
        assert backend.describe()["shards"] == shards
        return backend.search_batch(SPEC, collection.queries, 10)
    finally:
        backend.close()


def test_dfs_query_then_fetch_scores_two_shards_like_one(engine: str, scifact_small: Collection) -> None:
    one = _scores(_throwaway_run(engine, scifact_small, 1))
    per_shard = _scores(_throwaway_run(engine, scifact_small, 2))
    dfs = _scores(_throwaway_run(engine, scifact_small, 2, search_type="dfs_query_then_fetch"))
    assert per_shard != one  # each shard's own statistics: other scores
    for qid, scores in one.items():
        assert set(dfs[qid]) == set(scores), qid
        assert dfs[qid] == pytest.approx(scores, rel=1e-6), qid


def _clusters() -> List[Any]:
    """Every single-node instance, the 2-node clusters of ``scripts/engines up --nodes 2`` when
    opted in (``PYTEST_RETRIEVAL_CLUSTERS=1``), and any cluster named by URL (as Instances, so
    the items of a server the installed client does not test are deselected like the rest)."""
    out = [
        pytest.param(i, id=i.id if i in INSTANCES else f"{i.key}-{i.version}") for i in INSTANCES + CLUSTERS
    ]
    for engine, var in (
        ("elasticsearch", "PYTEST_RETRIEVAL_ES_CLUSTER_URL"),
        ("opensearch", "PYTEST_RETRIEVAL_OS_CLUSTER_URL"),
    ):
        if os.environ.get(var):
            base = next(i for i in INSTANCES + CLUSTERS if i.name == engine)
            out.append(pytest.param(Instance("url", engine, base.version, os.environ[var]), id=var))
    return out


@pytest.mark.parametrize("target", _clusters())
def test_reruns_on_copies_that_differ_are_identical(target: Instance, scifact_small: Collection) -> None:
    """2 shards, 1 replica; a third of the documents updated and a tenth deleted, refreshed
    but not merged (copies merge on their own, so their deleted-document statistics differ):
    5 runs give bit-identical rankings and scores."""
    from tests.engines.conftest import _require

    if target.key != "url":
        _require(target)
    engine_name, url = target.name, target.url
    name = random_name("copies")
    status, body = http(
        url, "PUT", f"/{name}", {"settings": {"number_of_shards": 2, "number_of_replicas": 1}}
    )
    assert status == 200, body
    try:
        docs = scifact_small.documents
        lines = []
        for doc in docs:
            lines.append({"index": {"_index": name, "_id": doc.doc_id}})
            lines.append(dict(doc.fields))
        for i, doc in enumerate(docs):
            if i % 3 == 0:
                lines.append({"index": {"_index": name, "_id": doc.doc_id}})
                lines.append(dict(doc.fields, title=str(doc.fields.get("title", "")) + " revised"))
            elif i % 10 == 1:
                lines.append({"delete": {"_index": name, "_id": doc.doc_id}})
        _bulk(url, lines)
        http(url, "POST", f"/{name}/_refresh")
        runs = []
        for _ in range(RUNS):
            backend = backend_class(engine_name)({"hosts": [url]}, {"name": name, "suite": "copies"})
            try:
                backend.prepare(None, None)
                runs.append(_scores(backend.search_batch(SPEC, scifact_small.queries, 10)))
            finally:
                backend.close()
        assert all(r == runs[0] for r in runs[1:])
    finally:
        http(url, "DELETE", f"/{name}")


def _bulk(url: str, lines: list) -> None:
    import json
    import urllib.request

    data = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
    req = urllib.request.Request(
        url + "/_bulk", data=data, method="POST", headers={"Content-Type": "application/x-ndjson"}
    )
    with urllib.request.urlopen(req, timeout=120) as resp:
        assert not json.loads(resp.read())["errors"]
