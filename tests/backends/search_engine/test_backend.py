"""SearchEngineBackend composed over a fake engine adapter: the engine check, an existing
index, the life cycle and describe()."""

from __future__ import annotations

from typing import Any, Dict, List, Optional
from unittest import mock

import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec, TemplateSpec
from pytest_retrieval.backends.search_engine import SearchEngineBackend
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Document, Query

from .fake import FakeEngine


class FakeClient:
    def close(self) -> None:
        pass


class FakeBackend(SearchEngineBackend):
    name = "fakesearch"
    vector_field_types = ("vec",)
    distribution = "fakesearch"
    product = "FakeSearch"
    min_version = (3, 1)
    min_version_for = "the fake k-NN"

    def __init__(self, engine: FakeEngine, index: Optional[Dict[str, Any]] = None):
        self.engine = engine
        super().__init__({"hosts": ["http://fake:1"]}, index or {}, suite="unit")

    def _make_client(self, conn):
        return FakeClient()

    def _raw_request(self, method, path, params, body, ndjson):
        return self.engine.send(method, path, params, body, ndjson)

    def _knn_body(self, spec, vector: List[float], k: int) -> Dict[str, Any]:
        return {"knn": {"field": spec.field, "vector": vector, "k": k}}


def _engine(version: str = "3.2.0", distribution: str = "fakesearch") -> FakeEngine:
    return FakeEngine(
        {
            ("GET", "/"): {"version": {"distribution": distribution, "number": version}},
            ("GET", "/products/_count"): {"count": 42},
            ("GET", "/products/_settings/.*"): {
                "products-v2": {"settings": {"index.number_of_shards": "2", "index.number_of_replicas": "1"}}
            },
            ("GET", "/products/_mapping/field/.*"): {
                "products": {"mappings": {"text": {"mapping": {"text": {"type": "text"}}}}}
            },
            # an existing index's definition (the baseline fingerprint's)
            ("GET", "/products/_settings"): {"products-v2": {"settings": {"index.number_of_shards": "2"}}},
            ("GET", "/products/_mapping"): {
                "products-v2": {"mappings": {"properties": {"text": {"type": "text"}}}}
            },
            ("POST", "/products/_search"): {"hits": {"hits": [{"_id": "p1", "_score": 2.5}]}, "took": 4},
        }
    )


@pytest.mark.parametrize(
    "distribution,version,message",
    [
        (
            "elasticsearch",
            "8.15.0",
            "fakesearch backend: http://fake:1 is elasticsearch 8.15.0, not FakeSearch",
        ),
        (
            "fakesearch",
            "3.0.9",
            "fakesearch backend needs FakeSearch >= 3.1 (the fake k-NN), the server is 3.0.9",
        ),
        ("fakesearch", "2", "needs FakeSearch >= 3.1"),
    ],
)
def test_wrong_or_old_engine_is_refused(distribution: str, version: str, message: str) -> None:
    backend = FakeBackend(_engine(version, distribution), {"name": "products"})
    with pytest.raises(InfrastructureError) as err:
        backend.prepare(None, None)
    assert message in str(err.value)


def test_unparsable_versions_are_let_through() -> None:
    backend = FakeBackend(_engine("3.x-snapshot"), {"name": "products"})
    backend.prepare(None, None)
    assert backend.describe()["doc_count"] == 42


TEXT = BM25Spec(fields=(("text", 1.0),))


def test_existing_index_is_only_read() -> None:
    engine = _engine()
    engine.routes[("POST", "/products/_msearch")] = {
        "responses": [{"hits": {"hits": [{"_id": "p1", "_score": 1.0}]}}] * 2
    }
    with FakeBackend(engine, {"name": "products"}) as backend:
        assert repr(backend) == "<FakeBackend hosts=['http://fake:1'] index='products'>"
        backend.prepare([Document("d", {"text": "x"})], None)  # documents are not indexed
        assert backend.describe() == {
            "backend": "fakesearch",
            "engine": "fakesearch",
            "version": "3.2.0",
            "index": "products",
            "doc_count": 42,
            "index_mode": "existing",
            "search": {"preference": "pytest-retrieval-unit"},
            "shards": 2,
            "replicas": 1,
            "index_target": "products-v2",
            "index_definition_sha256": mock.ANY,
        }
        run = backend.search_batch(TEXT, [Query("q1", "x"), Query("q2", "y")], 5)
        assert list(run) == ["q1", "q2"] and run["q2"].doc_ids == ["p1"]
        # every search reads the shard copies the suite's preference picks
        headers = engine.calls[-1][3].splitlines()[::2]
        assert headers == ['{"preference":"pytest-retrieval-unit"}'] * 2
    writes = [
        (m, p) for m, p, *_ in engine.calls if m in ("PUT", "DELETE") or p.endswith(("_bulk", "_close"))
    ]
    assert writes == [] and engine.paths("POST") == ["/products/_msearch"]


def test_throwaway_backend_before_prepare() -> None:
    backend = FakeBackend(_engine(), {"bm25": {"k1": 1.1}})
    assert repr(backend) == "<FakeBackend hosts=['http://fake:1'] index='pytest-retrieval-unit-*'>"
    with pytest.raises(InfrastructureError, match="used before prepare"):
        backend.search_batch(TEXT, [Query("q", "x")], 3)
    backend.close()  # nothing created, nothing to delete
    assert [m for m, *_ in backend.engine.calls] == []


def test_search_one_and_errors_before_any_request() -> None:
    engine = _engine()
    backend = FakeBackend(engine, {"name": "products"})
    backend.prepare(None, None)
    result = backend.search_one(TEXT, Query("q1", "solar"), 3)
    assert result.ranking.doc_ids == ["p1"] and result.server_took_ms == 4.0
    assert engine.calls[-1][2] == {"request_cache": "false", "preference": "pytest-retrieval-unit"}
    calls = len(engine.calls)
    with pytest.raises(ConfigError, match="positive int"):
        backend.search_batch(TEXT, [Query("q", "x")], 0)
    with pytest.raises(ConfigError, match="no search pipelines"):
        backend.search_batch(TemplateSpec(body={}, pipeline="p"), [Query("q", "x")], 3)
    with pytest.raises(ConfigError, match="has no vector"):
        backend.build_body(KnnSpec(field="text"), Query("q", "x"), 3)
    assert backend.build_body(TEXT, Query("q", "x"), 3) == {
        "query": {"match": {"text": {"query": "x"}}},
        "size": 3,
        "_source": False,
    }
    assert len(engine.calls) == calls  # no request for any of these
    backend.close()
    with pytest.raises(InfrastructureError, match="is closed"):
        backend.search_one(TEXT, Query("q1", "solar"), 3)
    with pytest.raises(InfrastructureError, match="is closed"):
        backend.prepare(None, None)


def test_describe_names_the_vector_index_and_the_client_warning() -> None:
    """An existing index's vector field, read once from its mapping (e.g. an unpinned field
    that Elasticsearch 9 built as bbq_hnsw), and the adapter's client/server warning."""
    engine = _engine()
    field = {"type": "dense_vector", "dims": 384, "index_options": {"type": "bbq_hnsw"}}
    engine.routes[("GET", "/products/_mapping/field/.*")] = {
        "products": {"mappings": {"embedding": {"mapping": {"embedding": field}}}}
    }

    class Warned(FakeBackend):
        name = "elasticsearch"  # the facts name the vector options in Elasticsearch's terms

        def _check_client(self, version: str) -> Optional[str]:
            return f"client 8 against server {version}"

    with Warned(engine, {"name": "products"}) as backend:
        backend.prepare(None, None)
        facts = backend.describe()
        assert backend.describe() == facts
    assert facts["vector_index"] == {
        "field": "embedding",
        "type": "dense_vector",
        "index_options": "bbq_hnsw",
        "similarity": None,
        "quantization": "bbq",
    }
    assert facts["warnings"] == ["client 8 against server 3.2.0"]
    assert facts["client"].startswith("elasticsearch-py ")
    assert engine.paths("GET").count("/products/_mapping/field/embedding") == 1  # read once
