"""What every search carries (preference, search_type) and the index facts recorded in
the fingerprint (no engine needed)."""

from __future__ import annotations

import json

import pytest

from pytest_retrieval.backends.search_engine.facts import hnsw_parameters
from pytest_retrieval.backends.search_engine.http import ConnectionSettings
from pytest_retrieval.backends.search_engine.search import Searcher
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.gates.fingerprint import compare_fingerprints, fingerprint

from .fake import FakeEngine, engine_http

SETTINGS = {"preference": "pytest-retrieval-shop", "search_type": "dfs_query_then_fetch"}
HIT = {"hits": {"hits": [{"_id": "a", "_score": 1.0}]}}


def test_msearch_headers_search_and_latency_requests_all_carry_the_settings() -> None:
    engine = FakeEngine({("POST", "/i/_msearch"): {"responses": [HIT, HIT]}, ("POST", "/i/_search"): HIT})
    searcher = Searcher(engine_http(engine), batch_size=10, concurrency=1, settings=SETTINGS)
    searcher.msearch("i", [("q1", {"size": 1}), ("q2", {"size": 1})], 1)
    searcher.each("i", [("q1", {"size": 1})], {"search_pipeline": "p"}, 1)
    searcher.one("i", "q1", {"size": 1}, {}, 1)
    msearch, each, one = engine.calls
    assert [json.loads(line) for line in msearch[3].splitlines()[::2]] == [SETTINGS, SETTINGS]
    assert each[2] == dict(SETTINGS, search_pipeline="p")
    assert one[2] == dict(SETTINGS, request_cache="false")


def test_search_type_is_checked() -> None:
    with pytest.raises(ConfigError, match="search_type must be"):
        ConnectionSettings({"search_type": "dfs"})


def test_hnsw_parameters_of_both_engines() -> None:
    es = {"type": "dense_vector", "similarity": "cosine", "index_options": {"type": "int8_hnsw", "m": 32}}
    assert hnsw_parameters(es) == {"type": "int8_hnsw", "similarity": "cosine", "m": 32}
    opensearch = {
        "type": "knn_vector",
        "method": {
            "name": "hnsw",
            "engine": "lucene",
            "space_type": "l2",
            "parameters": {"ef_construction": 64},
        },
    }
    assert hnsw_parameters(opensearch) == {
        "name": "hnsw",
        "engine": "lucene",
        "space_type": "l2",
        "ef_construction": 64,
    }
    assert hnsw_parameters({"type": "text"}) is None


def test_the_fingerprint_names_changed_search_settings() -> None:
    base = {"queries": {}, "qrels": {}}
    old = fingerprint(**base, search={"shards": 1, "replicas": 0, "search": {"preference": "a"}})
    new = fingerprint(**base, search={"shards": 2, "replicas": 0, "search": {"preference": "a"}})
    diff = compare_fingerprints(old, new)
    assert diff.comparable and diff.system == ["search settings changed: shards 1 -> 2"]
