"""OpenSearch 2.x and 3.x backend: BM25 (match/multi_match), kNN (``knn`` query on a ``knn_vector``
field, Lucene HNSW engine), query templates with an optional search pipeline, and a
server-side ``hybrid`` query through a normalization / score-ranker (RRF) search pipeline.

    OpenSearchBackend(connection={"hosts": ["https://search:9200"], "username": ..., "password": ...},
                      index={"name": "products"})          # an existing index, read-only
    OpenSearchBackend(connection={...}, index={})          # a throwaway index per run

kNN: the query's ``k`` is the number of HNSW candidates (``KnnSpec.num_candidates``,
default max(2k, 100)) and ``size`` is k, which is what Elasticsearch's ``num_candidates``
does, so both engines search the same way.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ..errors import ConfigError, cleanup_after_failure
from ..types import Query, Run
from .base import BM25Spec, KnnSpec, TemplateSpec
from .search_engine import (
    INDEX_PREFIX,
    META_CREATOR,
    ConnectionSettings,
    EngineHTTPError,
    EngineUnreachable,
    SearchEngineBackend,
    request_headers,
    versions,
)
from .search_engine.dsl import bm25_query, default_num_candidates, vector_to_list
from .search_engine.http import connect, describe_answer, import_client, not_json
from .search_engine.index import creation_meta, is_stale
from .search_engine.retry import RETRY_STATUSES

log = logging.getLogger("pytest_retrieval.backends")

_SPACE_TYPES = {
    "cosine": "cosinesimil",
    "dot_product": "innerproduct",
    "l2_norm": "l2",
    "max_inner_product": "innerproduct",
}
_PIPELINE_DESCRIPTION_PREFIX = f"{META_CREATOR} "
_MAX_FEATURE_WEIGHT = 64.0  # Lucene FeatureField.newLinearQuery: weight in (0, 64]
_ANY_STATUS = tuple(range(100, 600))  # a connection that raises on none: statuses are read here


def normalization_pipeline(
    technique: str = "min_max",
    combination: str = "arithmetic_mean",
    weights: Optional[Sequence[float]] = None,
) -> Dict[str, Any]:
    """A search pipeline body with a ``normalization-processor`` (score fusion).

    technique: min_max | l2 (| z_score on newer engines); combination: arithmetic_mean |
    geometric_mean | harmonic_mean; weights: one per hybrid sub-query."""
    comb: Dict[str, Any] = {"technique": combination}
    if weights is not None:
        comb["parameters"] = {"weights": [float(w) for w in weights]}
    return {
        "phase_results_processors": [
            {"normalization-processor": {"normalization": {"technique": technique}, "combination": comb}}
        ]
    }


def rrf_pipeline(rank_constant: int = 60) -> Dict[str, Any]:
    """A search pipeline body with a ``score-ranker-processor`` doing reciprocal rank fusion.

    ``rank_constant`` goes under ``combination.parameters``, the form OpenSearch up to 3.0
    applies: measured on 2.19.6, a ``rank_constant`` written directly in ``combination``
    (the form in the 2.19 docs) is accepted and silently ignored (hits score 1/(60 + rank)).
    OpenSearch 3.1+ reads it directly in ``combination`` and refuses it under
    ``parameters``: ``create_search_pipeline`` moves it for the server it talks to
    (``versions.os_search_pipeline``). ``tests/engines/test_parity_scifact.py`` checks a
    non-default constant on 2.19 and 3.6."""
    return {
        "phase_results_processors": [
            {
                "score-ranker-processor": {
                    "combination": {"technique": "rrf", "parameters": {"rank_constant": int(rank_constant)}}
                }
            }
        ]
    }


class OpenSearchBackend(SearchEngineBackend):
    name = "opensearch"
    vector_field_types = ("knn_vector",)
    sparse_field_types = ("rank_features",)
    distribution = "opensearch"
    product = "OpenSearch"
    min_version = (2,)
    min_version_for = "lucene k-NN engine"

    def __init__(self, connection, index, *, suite: Optional[str] = None):
        self._pipelines: List[str] = []
        self._bulk: Any = None
        super().__init__(connection, index, suite=suite)

    # ---- adapter -------------------------------------------------------------------------

    def _make_client(self, conn: ConnectionSettings, retries: bool = False) -> Any:
        client_class = import_client(self.name, "opensearchpy", "OpenSearch", "opensearch-py")
        if conn.api_key:
            raise ConfigError("OpenSearch has no API keys: use username/password", key="connection.api_key")
        kwargs: Dict[str, Any] = {
            "hosts": conn.hosts,
            "timeout": conn.request_timeout,
            # retried by the plugin's one policy (search_engine/retry.py), never by the
            # client, except bulk indexing (see _bulk_client)
            "max_retries": conn.max_retries if retries else 0,
            "retry_on_timeout": conn.retry_on_timeout and retries,
            "retry_on_status": tuple(sorted(RETRY_STATUSES)),
            "verify_certs": conn.verify_certs,
            "ssl_show_warn": conn.verify_certs,
            # one pooled connection per concurrent search, or urllib3 discards and reconnects
            "pool_maxsize": max(10, conn.concurrency + 2),
        }
        if conn.ca_certs:
            kwargs["ca_certs"] = conn.ca_certs
        if conn.username is not None:
            kwargs["http_auth"] = (conn.username, conn.password or "")
        return client_class(**kwargs)

    def _raw_request(
        self, method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool
    ) -> Any:
        # One connection of the pool, not the client's transport: the transport drops the
        # headers of an error answer (Retry-After) and retries by its own rules.
        from opensearchpy.exceptions import ConnectionTimeout, TransportError

        transport = self._client.transport
        body = _encoded(body, transport.serializer)
        try:
            status, headers, raw = transport.get_connection().perform_request(
                method,
                path,
                dict(params or {}),
                body,
                headers=request_headers(body, ndjson),
                ignore=_ANY_STATUS,
            )
        except TransportError as exc:
            raise EngineUnreachable(
                f"{type(exc).__name__}: {exc.error}", timeout=isinstance(exc, ConnectionTimeout)
            ) from None
        content_type = str(headers.get("content-type") or "").split(";")[0].strip()
        data = _json_or_none(raw, content_type)
        if not 200 <= status < 300:
            body = data if data is not None else describe_answer(raw, self._conn.hosts)
            raise EngineHTTPError(status, body, dict(headers))
        if data is None:
            raise not_json(status, content_type, raw)
        return data

    def _bulk_client(self) -> Any:
        if self._bulk is None:
            self._bulk = connect(self.name, self._conn, lambda conn: self._make_client(conn, retries=True))
        return self._bulk

    def _close_extras(self) -> None:
        if self._bulk is not None:
            self._bulk.close()
            self._bulk = None
        for name in list(self._pipelines):
            self.delete_search_pipeline(name)

    def _helpers(self) -> Any:
        from opensearchpy import helpers

        return helpers

    def _extra_index_settings(self) -> Dict[str, Any]:
        return {"index.knn": True}

    def _vector_mapping(self, dims: int, similarity: str) -> Dict[str, Any]:
        if similarity not in _SPACE_TYPES:
            raise ConfigError(f"similarity must be one of {', '.join(_SPACE_TYPES)}, not {similarity!r}")
        quant = self._config.quantization
        return versions.os_vector_mapping(dims, _SPACE_TYPES[similarity], quant, self.engine_info()[1])

    def knn_query(self, spec: KnnSpec, vector: List[float], k: int) -> Dict[str, Any]:
        """The ``knn`` query clause (also a hybrid sub-query)."""
        candidates = default_num_candidates(spec, k)
        clause: Dict[str, Any] = {"vector": vector, "k": candidates}
        clause.update(versions.os_knn_search_parameters(candidates, self.engine_info()[1]))
        if spec.filter:
            clause["filter"] = spec.filter
        return {"knn": {spec.field: clause}}

    def _exact_knn_body(self, spec: KnnSpec, vector: List[float], k: int, similarity: str) -> Dict[str, Any]:
        # the k-NN plugin's exact search: a script_score with its knn_score script
        space = _SPACE_TYPES.get(similarity, similarity)
        query = spec.filter or {"exists": {"field": spec.field}}
        script = {
            "source": "knn_score",
            "lang": "knn",
            "params": {"field": spec.field, "query_value": vector, "space_type": space},
        }
        return {"query": {"script_score": {"query": query, "script": script}}, "size": k, "_source": False}

    def _knn_body(self, spec: KnnSpec, vector: List[float], k: int) -> Dict[str, Any]:
        return {"query": self.knn_query(spec, vector, k)}

    def _sparse_clause(self, field: str, weights: Dict[str, float]) -> Dict[str, Any]:
        # neural_sparse with raw query_tokens (the neural-search plugin): one linear
        # FeatureField clause per token, summed, which takes any term (a rank_feature query
        # names "field.term" and splits a term with a dot). FeatureField.newLinearQuery refuses
        # weights above 64, so larger ones are scaled into range and the query boosted back.
        scale = max(weights.values()) / _MAX_FEATURE_WEIGHT
        clause: Dict[str, Any] = {"query_tokens": weights}
        if scale > 1:
            clause = {"query_tokens": {t: w / scale for t, w in weights.items()}, "boost": scale}
        return {"neural_sparse": {field: clause}}

    def _search_params(self, spec: Any) -> Dict[str, Any]:
        if isinstance(spec, TemplateSpec) and spec.pipeline:
            return {"search_pipeline": spec.pipeline}
        return {}

    # ---- search pipelines ----------------------------------------------------------------

    def create_search_pipeline(self, body: Mapping[str, Any], name: Optional[str] = None) -> str:
        """Create a search pipeline (e.g. ``normalization_pipeline()``, ``rrf_pipeline()``);
        it is deleted by ``close()``. Returns its name."""
        name = name or f"{INDEX_PREFIX}{self._config.suite_slug}-{secrets.token_hex(4)}"
        if not name.startswith(INDEX_PREFIX):
            raise ConfigError(f"pipelines this backend creates are named {INDEX_PREFIX}*, not {name!r}")
        body = versions.os_search_pipeline(body, self.engine_info()[1])  # RRF rank_constant placement
        body.setdefault(
            "description", _PIPELINE_DESCRIPTION_PREFIX + json.dumps(creation_meta(self._config.suite_slug))
        )
        self._http.request(
            "PUT", f"/_search/pipeline/{name}", body=body, what=f"creating search pipeline {name!r}"
        )
        self._pipelines.append(name)
        log.info("opensearch: created search pipeline %s", name)
        return name

    def delete_search_pipeline(self, name: str) -> None:
        """Delete a search pipeline this backend created (never another one)."""
        if name not in self._pipelines:
            raise RuntimeError(f"refusing to delete search pipeline {name!r}: not created by this backend")
        self._http.request(
            "DELETE", f"/_search/pipeline/{name}", what=f"deleting search pipeline {name!r}", ok_status=(404,)
        )
        self._pipelines.remove(name)

    def reap_leftovers(self) -> List[str]:
        reaped = super().reap_leftovers()
        found = self._http.request(
            "GET", "/_search/pipeline", what="listing search pipelines", ok_status=(401, 403, 404)
        )
        if isinstance(found, EngineHTTPError) or not isinstance(found, Mapping):
            return reaped
        now = time.time()
        for name, body in sorted(found.items()):
            if name in self._pipelines or not name.startswith(INDEX_PREFIX):
                continue
            why = is_stale(_pipeline_stamp(body), now, self._config.reap_after_s)
            if why is None:
                continue
            resp = self._http.request(
                "DELETE",
                f"/_search/pipeline/{name}",
                what=f"reaping search pipeline {name!r}",
                ok_status=(404,),
            )
            if not isinstance(resp, EngineHTTPError):
                log.warning("opensearch: deleted leftover search pipeline %s (%s)", name, why)
                reaped.append(name)
        return reaped

    # ---- server-side hybrid ---------------------------------------------------------------

    def hybrid_body(
        self, bm25: BM25Spec, knn: KnnSpec, query: Query, k: int, pagination_depth: Optional[int] = None
    ) -> Dict[str, Any]:
        if query.vector is None:
            raise ConfigError(f"query {query.qid!r} has no vector: a hybrid query needs query embeddings")
        # Each sub-query keeps its top ``pagination_depth`` (else ``size``) hits per shard
        # (neural-search HybridCollectorManager#getSubqueryResultsRetrievalSize), so the kNN
        # sub-query's k follows that window, exactly as a kNN leaf searched to that depth.
        window = max(k, int(pagination_depth)) if pagination_depth is not None else k
        hybrid: Dict[str, Any] = {
            "queries": [
                bm25_query(bm25, query.text),
                self.knn_query(knn, vector_to_list(query.vector), window),
            ]
        }
        if pagination_depth is not None:
            hybrid["pagination_depth"] = int(pagination_depth)
        return {"query": {"hybrid": hybrid}, "size": k, "_source": False}

    def search_hybrid(
        self,
        bm25: BM25Spec,
        knn: KnnSpec,
        queries: Sequence[Query],
        k: int,
        pipeline: Union[str, Mapping[str, Any]],
        pagination_depth: Optional[int] = None,
    ) -> Run:
        """Server-side hybrid: a ``hybrid`` query (BM25 + kNN sub-queries) fused by a search
        pipeline, given by name or as a body (then created for this call and deleted after)."""
        index = self._ready(k, bm25, knn)
        bodies = [(q.qid, self.hybrid_body(bm25, knn, q, k, pagination_depth)) for q in queries]
        temporary = None
        if isinstance(pipeline, str):
            name = pipeline
        elif isinstance(pipeline, Mapping):
            name = temporary = self.create_search_pipeline(pipeline)
        else:
            raise ConfigError("search_hybrid needs a pipeline name or a pipeline body")
        try:
            run = self._searcher.each(index, bodies, {"search_pipeline": name}, k)
        except BaseException as exc:
            if temporary is not None:
                cleanup_after_failure(lambda: self.delete_search_pipeline(temporary), exc)
            raise
        if temporary is not None:
            self.delete_search_pipeline(temporary)
        return run


def _encoded(body: Any, serializer: Any) -> Any:
    """A request body as bytes (JSON through the client's serializer), or None."""
    if body is not None and not isinstance(body, (str, bytes)):
        body = serializer.dumps(body)
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    return body


def _json_or_none(raw: Any, content_type: str) -> Any:
    """The JSON of an ``application/json`` answer; None for any other or unreadable one."""
    try:
        return json.loads(raw) if raw and content_type == "application/json" else None
    except ValueError:
        return None


def _pipeline_stamp(body: Any) -> Any:
    """The creation stamp a search pipeline carries in its description ({} when none: a
    pipeline without it is not ours)."""
    desc = (body or {}).get("description") or ""
    if not desc.startswith(_PIPELINE_DESCRIPTION_PREFIX):
        return {}
    try:
        return json.loads(desc[len(_PIPELINE_DESCRIPTION_PREFIX) :])
    except ValueError:
        return {}
