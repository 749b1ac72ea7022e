"""Elasticsearch 8.x and 9.x backend: BM25 (match/multi_match), kNN (top-level ``knn`` on a
``dense_vector`` HNSW field) and the team's own query templates.

    ElasticsearchBackend(connection={"hosts": ["http://localhost:9200"], "api_key": ...},
                         index={"name": "products"})          # an existing index, read-only
    ElasticsearchBackend(connection={...}, index={})          # a throwaway index per run

Everything shared with OpenSearch (msearch batching, error checks, templates, the
throwaway index life cycle, reaping) is in ``search_engine/``; what differs between
Elasticsearch 8 and 9 (client/server majors, vector index defaults) in
``search_engine/versions.py``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..errors import ConfigError, InfrastructureError
from .base import KnnSpec
from .search_engine import (
    ConnectionSettings,
    EngineHTTPError,
    EngineUnreachable,
    SearchEngineBackend,
    request_headers,
    versions,
)
from .search_engine.dsl import default_num_candidates
from .search_engine.http import EngineBadAnswer, describe_answer, import_client, not_json
from .search_engine.retry import RETRY_STATUSES
from .search_engine.versions import older_than

_SIMILARITIES = {
    "cosine": "cosine",
    "dot_product": "dot_product",
    "l2_norm": "l2_norm",
    "max_inner_product": "max_inner_product",
}


class ElasticsearchBackend(SearchEngineBackend):
    name = "elasticsearch"
    vector_field_types = ("dense_vector",)
    sparse_field_types = ("sparse_vector",)
    distribution = "elasticsearch"
    product = "Elasticsearch"
    min_version = (8, 4)
    min_version_for = "top-level knn search"
    _server_answered = False  # an HTTP error came back (engine_info probes who answered)

    def _make_client(self, conn: ConnectionSettings) -> Any:
        client_class = import_client(self.name, "elasticsearch", "Elasticsearch", "elasticsearch")
        kwargs: Dict[str, Any] = {
            "hosts": conn.hosts,
            "request_timeout": conn.request_timeout,
            # retried by the plugin's one policy (search_engine/retry.py), never by the client
            "max_retries": 0,
            "retry_on_timeout": False,
            "verify_certs": conn.verify_certs,
        }
        if conn.ca_certs:
            kwargs["ca_certs"] = conn.ca_certs
        if not conn.verify_certs:
            kwargs["ssl_show_warn"] = False
        if conn.api_key:
            kwargs["api_key"] = (
                tuple(conn.api_key) if isinstance(conn.api_key, (list, tuple)) else conn.api_key
            )
        elif conn.username is not None:
            kwargs["basic_auth"] = (conn.username, conn.password or "")
        return client_class(**kwargs)

    def _raw_request(
        self, method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool
    ) -> Any:
        from elastic_transport import ConnectionTimeout, SerializationError, TransportError
        from elasticsearch import ApiError

        try:
            resp = self._client.perform_request(
                method,
                path,
                params=dict(params or {}) or None,
                headers=request_headers(body, ndjson),
                body=body,
            )
        except ApiError as exc:
            self._server_answered = True  # (engine_info: a refusal, not an unreachable server)
            status = int(exc.meta.status)
            if 200 <= status < 300:  # e.g. an HTML page from a proxy: "not Elasticsearch"
                raise not_json(status, exc.meta.headers.get("content-type"), exc.body) from None
            body = exc.body if isinstance(exc.body, Mapping) else describe_answer(exc.body, self._conn.hosts)
            raise EngineHTTPError(status, body, dict(exc.meta.headers or {})) from None
        except SerializationError as exc:  # an answer, but not JSON (a TransportError too)
            raise EngineBadAnswer(describe_answer(exc.message, self._conn.hosts)) from None
        except TransportError as exc:
            raise EngineUnreachable(
                f"{type(exc).__name__}: {exc.message}", timeout=isinstance(exc, ConnectionTimeout)
            ) from None
        if not isinstance(resp.body, (dict, list)):  # text/* bodies come back as str
            raise not_json(resp.meta.status, resp.meta.headers.get("content-type"), resp.body)
        return resp.body

    def _bulk_client(self) -> Any:
        conn = self._conn
        return self._client.options(
            max_retries=conn.max_retries,
            retry_on_timeout=conn.retry_on_timeout,
            retry_on_status=tuple(sorted(RETRY_STATUSES)),
        )

    def _helpers(self) -> Any:
        from elasticsearch import helpers

        return helpers

    def engine_info(self) -> Tuple[str, str]:
        try:
            return super().engine_info()
        except InfrastructureError:
            # An 8.x server refuses the 9.x client's compatible-with=9 media types (HTTP 400
            # on every request), and OpenSearch fails the client's product check: ask who
            # answers, without them, and say which client to install or that it is OpenSearch.
            if self._server_answered:
                plain = self._plain_engine_info()
                if plain is not None:
                    self._check_engine(*plain)  # not Elasticsearch
                    self._check_client(plain[1])  # a client/server major mismatch
            raise

    def _plain_engine_info(self) -> Optional[Tuple[str, str]]:
        """(distribution, version) read once with plain JSON headers (no compatibility media
        type, no retries), or None."""
        try:
            transport = self._client.transport
            headers = {"accept": "application/json"}
            once = {"max_retries": 0, "request_timeout": self._conn.request_timeout}
            meta, body = transport.perform_request("GET", "/", headers=headers, **once)
            if meta.status == 200 and isinstance(body, Mapping):
                ver = body.get("version") or {}
                return str(ver.get("distribution", "elasticsearch")), str(ver.get("number"))
            meta, body = transport.perform_request(
                "GET", "/_nodes/_local?filter_path=nodes.*.version", headers=headers, **once
            )
            if meta.status == 200:
                return "elasticsearch", str(next(iter(body["nodes"].values()))["version"])
        except Exception:  # noqa: BLE001 - the caller raises its original error instead
            pass
        return None

    def _check_client(self, version: str) -> Optional[str]:
        return versions.check_elasticsearch_client(version)

    def _vector_mapping(self, dims: int, similarity: str) -> Dict[str, Any]:
        if similarity not in _SIMILARITIES:
            raise ConfigError(f"similarity must be one of {', '.join(_SIMILARITIES)}, not {similarity!r}")
        quant = self._config.quantization
        return versions.es_vector_mapping(dims, _SIMILARITIES[similarity], quant, self.engine_info()[1])

    def _exact_knn_body(self, spec: KnnSpec, vector: List[float], k: int, similarity: str) -> Dict[str, Any]:
        # brute force over every vector (the knn query's filter, if any); a score that is
        # monotonic in the similarity, as the script_score docs write them
        scripts = {
            "cosine": "cosineSimilarity(params.v, params.f) + 1.0",
            "dot_product": "double d = dotProduct(params.v, params.f); return d < 0 ? 1 / (1 - d) : d + 1;",
            "max_inner_product": "double d = dotProduct(params.v, params.f); return d < 0 ? 1 / (1 - d) : d + 1;",
            "l2_norm": "1 / (1 + l2norm(params.v, params.f))",
        }
        if similarity not in scripts:
            raise ConfigError(f"ann_recall: no exact search for the vector similarity {similarity!r}")
        query = spec.filter or {"exists": {"field": spec.field}}
        script = {"source": scripts[similarity], "params": {"v": vector, "f": spec.field}}
        return {"query": {"script_score": {"query": query, "script": script}}, "size": k, "_source": False}

    def _knn_body(self, spec: KnnSpec, vector: List[float], k: int) -> Dict[str, Any]:
        knn: Dict[str, Any] = {
            "field": spec.field,
            "query_vector": vector,
            "k": k,
            "num_candidates": default_num_candidates(spec, k),
        }
        if spec.filter:
            knn["filter"] = spec.filter
        return {"knn": knn}

    def _sparse_clause(self, field: str, weights: Dict[str, float]) -> Dict[str, Any]:
        # the sparse_vector query with raw weights (8.15+): one linear FeatureField clause per
        # term, summed. prune: false, because Elasticsearch 9.1+ prunes query terms by default
        # on new sparse_vector fields (index_options.prune), which is not the exact dot product.
        version = self.engine_info()[1]
        if older_than(version, (8, 15)):
            raise ConfigError(
                f"a sparse retriever needs the sparse_vector query with query_vector "
                f"(Elasticsearch >= 8.15), the server is {version}"
            )
        return {"sparse_vector": {"field": field, "query_vector": weights, "prune": False}}
