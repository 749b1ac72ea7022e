"""The index life cycle against a fake engine: configuration, the throwaway index
(create, load, re-tune, rebuild, delete) and reaping of stale leftovers."""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Dict, List

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec
from pytest_retrieval.backends.search_engine.http import EngineHTTPError
from pytest_retrieval.backends.search_engine.index import (
    DEFAULT_TEXT_ANALYZER,
    INDEX_PREFIX,
    META_CREATOR,
    IndexPlan,
    ThrowawayIndex,
    creation_meta,
    is_stale,
    reap_indices,
)
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Document, DocVectors

from .fake import FakeEngine, engine_http

DOCS = [Document("d1", {"title": "A", "text": "alpha"}), Document("d2", {"text": "beta"})]


def test_index_config_defaults_and_errors() -> None:
    c = IndexPlan.parse({"bm25": {"k1": 1.5}}, "My Suite")
    assert c.existing is None and c.suite_slug == "my-suite" and c.vector_field == "embedding"
    assert c.variant == {
        "k1": 1.5,
        "b": BM25Spec.b,
        "stopwords": None,
        "analyzer": (),
        "similarity": "cosine",
    }
    assert c.reap_after_s == 24 * 3600
    assert IndexPlan.parse({"suite": "x", "reap_after_hours": 0.5}, None).reap_after_s == 1800
    with pytest.raises(ConfigError, match="unknown index key"):
        IndexPlan.parse({"nmae": "x"}, None)
    with pytest.raises(ConfigError, match="non-empty string"):
        IndexPlan.parse({"name": ""}, None)
    with pytest.raises(ConfigError, match="throwaway index only"):
        IndexPlan.parse({"name": "products", "mappings": {"dynamic": False}}, None)
    assert c.quantization == "none" and IndexPlan.parse({"quantization": "bbq"}, None).quantization == "bbq"
    with pytest.raises(ConfigError, match="index.quantization must be one of none, int8, int4, bbq"):
        IndexPlan.parse({"quantization": "pq"}, None)
    with pytest.raises(ConfigError, match="throwaway index only"):  # an existing index is never changed
        IndexPlan.parse({"name": "products", "quantization": "int8"}, None)


def test_staleness() -> None:
    now = time.time()
    mine = creation_meta("s")
    assert mine["created_by"] == META_CREATOR and mine["pid"] == os.getpid()
    assert is_stale(mine, now, 3600) is None  # this process, fresh
    assert is_stale({**mine, "created_by": "someone"}, now, 3600) is None
    assert is_stale({**mine, "created_at": "yesterday"}, now, 3600) is None
    assert is_stale({**mine, "created_at": now - 7200}, now, 3600) == "created 2.0 h ago"
    dead = 2**22 + 12345  # above the usual pid_max
    gone = is_stale({**mine, "pid": dead}, now, 3600)
    assert gone == f"its creator (pid {dead} on this host) is gone"
    assert is_stale({**mine, "pid": dead, "host": socket.gethostname() + "-other"}, now, 3600) is None


def test_reaping_deletes_only_stale_stamped_indices() -> None:
    old = {**creation_meta("s"), "created_at": time.time() - 10 * 3600}
    listing = {
        f"{INDEX_PREFIX}old": {"mappings": {"_meta": old}},
        f"{INDEX_PREFIX}fresh": {"mappings": {"_meta": creation_meta("s")}},
        f"{INDEX_PREFIX}unstamped": {"mappings": {}},
        f"{INDEX_PREFIX}mine": {"mappings": {"_meta": old}},
    }
    engine = FakeEngine(
        {("GET", f"/{INDEX_PREFIX}\\*/_mapping"): listing, ("DELETE", "/.*"): {"acknowledged": True}}
    )
    assert reap_indices(engine_http(engine), 3600, keep=f"{INDEX_PREFIX}mine") == [f"{INDEX_PREFIX}old"]
    assert engine.paths("DELETE") == [f"/{INDEX_PREFIX}old"]
    denied = FakeEngine({("GET", f"/{INDEX_PREFIX}\\*/_mapping"): EngineHTTPError(403, "no")})
    assert reap_indices(engine_http(denied), 3600) == []


class Bulk:
    def __init__(self, fail: str = "") -> None:
        self.actions: List[Dict[str, Any]] = []
        self.options: Dict[str, Any] = {}
        self.fail = fail

    def __call__(self, actions, **options):
        self.options = options
        for a in actions:
            self.actions.append(a)
            if a["_id"] == self.fail:
                yield (
                    False,
                    {
                        "index": {
                            "_id": a["_id"],
                            "error": {"type": "mapper_parsing_exception", "reason": "bad"},
                        }
                    },
                )
            else:
                yield True, {"index": {"_id": a["_id"]}}


def _engine(count: int) -> FakeEngine:
    return FakeEngine(
        {
            ("PUT", f"/{INDEX_PREFIX}.*"): {"acknowledged": True},
            ("POST", ".*/_refresh|.*/_forcemerge|.*/_close|.*/_open"): {},
            ("PUT", ".*/_settings"): {"acknowledged": True},
            ("GET", "/_cluster/health/.*"): {"status": "green"},
            ("GET", ".*/_count"): {"count": count},
            ("DELETE", ".*"): {"acknowledged": True},
        }
    )


def _index(engine: FakeEngine, bulk: Bulk, **index: Any) -> ThrowawayIndex:
    return ThrowawayIndex(
        engine_http(engine),
        IndexPlan.parse(index, "suite"),
        vector_mapping=lambda dims, sim: {"type": "vec", "dims": dims, "similarity": sim},
        extra_settings=lambda: {"index": {"knn": True}},
        bm25_type=lambda: "LegacyBM25",  # what an OpenSearch 3 server is given
        bulk=bulk,
    )


def test_create_loads_documents_and_vectors() -> None:
    engine, bulk = _engine(3), Bulk()
    vectors = DocVectors(["d2", "d3"], np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    index = _index(engine, bulk, mappings={"properties": {"text": {"type": "keyword"}}})
    index.create(DOCS, vectors)
    name = index.name
    assert name is not None and name.startswith(f"{INDEX_PREFIX}suite-") and index.doc_count == 3
    put = next(body for m, p, _, body in engine.calls if m == "PUT" and p == f"/{name}")
    assert put["settings"]["index.knn"] is True and put["settings"]["index.refresh_interval"] == "-1"
    assert put["settings"]["index.similarity.default.type"] == "LegacyBM25"
    props = put["mappings"]["properties"]
    assert props["embedding"] == {"type": "vec", "dims": 2, "similarity": "cosine"}
    assert props["text"] == {"type": "keyword"}  # the suite's mapping wins
    assert put["mappings"]["_meta"]["created_by"] == META_CREATOR
    sources = {a["_id"]: a["_source"] for a in bulk.actions}
    assert sources == {
        "d1": {"title": "A", "text": "alpha"},
        "d2": {"text": "beta", "embedding": [1.0, 0.0]},
        "d3": {"embedding": [0.0, 1.0]},  # a vector without fields
    }
    assert bulk.options["chunk_size"] == 500 and bulk.options["raise_on_error"] is False
    assert engine.paths("POST") == [f"/{name}/_refresh", f"/{name}/_forcemerge"]
    index.delete()
    assert index.name is None and engine.paths("DELETE") == [f"/{name}"]


def test_failed_loads_delete_the_index() -> None:
    engine, bulk = _engine(1), Bulk()
    index = _index(engine, bulk)
    with pytest.raises(InfrastructureError, match="holds 1 documents after indexing 2"):
        index.create(DOCS, None)
    assert index.name is None and len(engine.paths("DELETE")) == 1
    engine = _engine(2)
    index = _index(engine, Bulk(fail="d2"))
    with pytest.raises(
        InfrastructureError, match="bulk indexing into .* failed: doc 'd2': mapper_parsing_exception: bad"
    ):
        index.create(DOCS, None)
    assert index.name is None and len(engine.paths("DELETE")) == 1
    with pytest.raises(ConfigError, match="needs documents"):
        _index(_engine(0), Bulk()).create([], None)


def test_variants_retune_in_place_or_rebuild() -> None:
    engine = _engine(2)
    vectors = DocVectors(["d1", "d2"], np.eye(2, dtype=np.float32))
    index = _index(engine, Bulk())
    index.create(DOCS, vectors)
    first = index.name
    index.ensure_variant(BM25Spec())  # the defaults: nothing to do
    assert engine.paths("POST") == [f"/{first}/_refresh", f"/{first}/_forcemerge"]
    index.ensure_variant(BM25Spec(k1=0.9, b=0.4))
    assert index.name == first and index.variant["k1"] == 0.9 and index.variant["b"] == 0.4
    assert engine.paths("POST")[-2:] == [f"/{first}/_close", f"/{first}/_open"]
    settings = next(body for m, p, _, body in engine.calls if p.endswith("/_settings"))
    assert settings["index.similarity.default.k1"] == 0.9
    assert settings["index.similarity.default.type"] == "LegacyBM25"
    index.ensure_variant(BM25Spec(k1=0.9, b=0.4, stopwords="english"))
    second = index.name
    assert second != first and engine.paths("DELETE") == [f"/{first}"]
    put = [body for m, p, _, body in engine.calls if m == "PUT" and p == f"/{second}"][0]
    assert put["settings"]["index.analysis.analyzer.pytest_retrieval_text.stopwords"] == "_english_"
    assert put["settings"]["index.similarity.default.k1"] == 0.9
    index.ensure_variant(KnnSpec(similarity="dot_product"))
    assert index.name not in (first, second) and index.variant["similarity"] == "dot_product"
    with pytest.raises(RuntimeError, match="refusing to modify"):
        index.assert_owned("products")


def test_a_default_analyzer_that_no_field_uses_is_refused_by_name() -> None:
    # title and text are mapped with DEFAULT_TEXT_ANALYZER: a "default" analyzer would change nothing
    default = {"analysis": {"analyzer": {"default": {"type": "english"}}}}
    with pytest.raises(ConfigError, match="never uses") as info:
        IndexPlan.parse({"settings": default}, None)
    assert info.value.key == "index.settings"
    with pytest.raises(ConfigError, match="never uses"):
        IndexPlan.parse({"settings": {"index.analysis.analyzer.default_search.type": "english"}}, None)
    mapped = {"properties": {f: {"type": "text", "analyzer": "english"} for f in ("title", "text")}}
    IndexPlan.parse({"settings": default, "mappings": mapped}, None)  # the suite maps the fields itself
    own = {"analysis": {"analyzer": {DEFAULT_TEXT_ANALYZER: {"type": "english"}}}}
    IndexPlan.parse({"settings": own}, None)
