"""2-node clusters (issue 16, item 1): ``scripts/engines up --nodes 2`` forms a 2-node
Elasticsearch 8.19 and OpenSearch 2.19 cluster on loopback (own ports 19210-11 / 19220-21, own
data folders). A throwaway index with 2 shards and 1 replica spreads its four copies over both
nodes, and a suite runs on it with every gate passing and every judged query evaluated.

Opt-in until CI has budgeted it: collected only with ``PYTEST_RETRIEVAL_CLUSTERS=1``, against
clusters started with ``scripts/engines up --nodes 2`` (``down --nodes 2`` stops them). The items
of a cluster whose Elasticsearch major the installed client does not test are deselected, as in
the rest of tests/engines.
"""

from __future__ import annotations

import json
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from pytest_retrieval.suite.load import load_suite
from pytest_retrieval.suite.runner import SuiteRunner
from pytest_retrieval.types import Document, DocVectors

from .conftest import CLUSTERS, Instance, _require, backend_class, http

pytestmark = pytest.mark.engines

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "example_suite" / "data"
SHARDED = {"number_of_shards": 2, "number_of_replicas": 1}


@pytest.fixture(scope="module", params=[pytest.param(c, id=f"{c.key}-{c.version}") for c in CLUSTERS])
def cluster(request) -> Instance:
    instance = _require(request.param)
    status, health = http(instance.url, path="/_cluster/health")
    assert status == 200 and health["number_of_nodes"] == 2, health
    return instance


def _hosts(cluster: Instance) -> list:
    """Both nodes' URLs (node 2 answers on node 1's port + 1)."""
    base, port = cluster.url.rsplit(":", 1)
    return [cluster.url, f"{base}:{int(port) + 1}"]


def _example() -> tuple:
    docs = []
    with open(DATA / "corpus.jsonl") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append(Document(d["_id"], {"title": d.get("title", ""), "text": d["text"]}))
    vec = DATA / "vectors"
    vectors = DocVectors((vec / "corpus_ids.txt").read_text().split(), np.load(vec / "corpus.npy"))
    return docs, vectors


def _green(url: str, index: str) -> None:
    status, body = http(url, path=f"/_cluster/health/{index}?wait_for_status=green&timeout=60s", timeout=70)
    assert status == 200 and body["status"] == "green", body


def test_two_shards_one_replica_spread_over_both_nodes(cluster: Instance) -> None:
    docs, vectors = _example()
    cls = backend_class(cluster.name)
    with cls({"hosts": _hosts(cluster)}, {"suite": "cluster", "settings": SHARDED}) as backend:
        backend.prepare(docs, vectors)
        index = backend.index_name
        _green(cluster.url, index)
        status, shards = http(cluster.url, path=f"/_cat/shards/{index}?format=json")
        assert status == 200
        copies = {(s["shard"], s["prirep"]): s for s in shards}
        assert sorted(copies) == [("0", "p"), ("0", "r"), ("1", "p"), ("1", "r")], shards
        assert all(s["state"] == "STARTED" for s in shards), shards
        for shard in ("0", "1"):  # a primary and its replica never share a node
            assert copies[(shard, "p")]["node"] != copies[(shard, "r")]["node"], shards
        assert len({s["node"] for s in shards}) == 2
        assert backend.describe()["doc_count"] == len(docs)


def _suite(tmp_path: Path, cluster: Instance) -> Path:
    vec = DATA / "vectors"
    hosts = json.dumps(_hosts(cluster))
    path = tmp_path / "retrieval_cluster.yaml"
    path.write_text(
        textwrap.dedent(
            f"""\
            suite: cluster-{cluster.key}
            judgments:
              queries: {DATA / "queries.jsonl"}
              qrels: {DATA / "qrels.tsv"}
              corpus: {DATA / "corpus.jsonl"}
            backend:
              type: {cluster.name}
              connection: {{hosts: {hosts}}}
              index: {{settings: {json.dumps(SHARDED)}}}
            embedder:
              type: precomputed
              queries: {vec / "queries.npy"}
              query_ids: {vec / "query_ids.txt"}
              documents: {vec / "corpus.npy"}
              document_ids: {vec / "corpus_ids.txt"}
            latency: {{enabled: false}}
            retrievers:
              bm25: {{type: bm25, fields: [title, text]}}
              dense: {{type: knn, similarity: cosine}}
              rrf: {{type: rrf, of: [bm25, dense], rank_constant: 60, window: 200}}
            floors:
              bm25: {{ndcg@10: 0.55}}
              dense: {{ndcg@10: 0.55}}
              rrf: {{ndcg@10: 0.60}}
            """
        )
    )
    return path


def test_a_suite_runs_on_the_cluster(cluster: Instance, tmp_path: Path, record_property) -> None:
    """The example suite's retrievers on a 2-shard, 1-replica throwaway index of the cluster:
    every gate passes, every judged query is evaluated, and the index is gone afterwards."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = SuiteRunner(load_suite(_suite(tmp_path, cluster))).run()
    took = time.perf_counter() - t0
    info = result.backend_info
    assert info["doc_count"] == 671 and info["index_mode"] == "throwaway"
    for name in ("bm25", "dense", "rrf"):
        ev = result.retrievers[name].evaluation
        assert len(ev.evaluated) == 100, name
        record_property(f"{name}_ndcg@10", ev.aggregate["ndcg@10"])
    for name, floor in (("bm25", 0.55), ("dense", 0.55), ("rrf", 0.60)):
        assert result.retrievers[name].evaluation.aggregate["ndcg@10"] >= floor, name
    record_property("suite_seconds", round(took, 1))
    status, leftovers = http(cluster.url, path="/_cat/indices/pytest-retrieval-cluster-*?format=json")
    assert status == 200 and leftovers == [], leftovers
