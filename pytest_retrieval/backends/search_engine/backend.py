"""The Elasticsearch/OpenSearch backend logic, composed of one part per job:
:class:`~.http.EngineHTTP` (requests and their failures), :class:`~.index.ThrowawayIndex`
(the index life cycle), :class:`~.search.Searcher` and :class:`~.search.FieldCheck` (the
searches), and :mod:`.dsl` (the request bodies).

Subclasses are the engine adapters: ``_make_client``, ``_raw_request``, ``_helpers``,
``_vector_mapping``, ``_knn_body``, and the few hooks where the engines differ. What
differs between versions of one engine (client/server majors, pinned vector index
options, BM25 similarity type) is in :mod:`.versions`.

Guarantees, for both engines: every failure is an ``InfrastructureError`` (or
``ConfigError`` for bad input), never an empty ranking; credentials never appear in an
exception message, a ``repr`` or a log line; an existing index (``index.name``) is only
read; throwaway indices are deleted by ``close()``, and stale ones of crashed runs are
reaped at ``prepare`` (indices without the plugin's stamp are never touched).
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ...errors import ConfigError, InfrastructureError, cleanup_after_failure
from ...types import Document, DocVectors, Query, Run
from ..base import AnalyzerNotes, Backend, KnnSpec, SearchResult, TemplateSpec
from .dsl import check_k, search_body, vector_to_list
from .existing import check_index_options, existing_count, held_ids
from .facts import field_similarity, index_definition, searched_index_facts
from .http import ConnectionSettings, EngineHTTP, connect
from .index import INDEX_PREFIX, IndexPlan, ThrowawayIndex, reap_indices
from .search import FieldCheck, Searcher, json_answers
from .sparse import SparseFields, SparseSearch
from .versions import bm25_similarity_type, client_version, older_than

log = logging.getLogger("pytest_retrieval.backends")

__all__ = ["SearchEngineBackend", "engine_request"]


class SearchEngineBackend(SparseSearch, Backend):
    """Elasticsearch/OpenSearch backend logic; subclasses supply the engine adapter."""

    name = "search-engine"
    vector_field_types: Tuple[str, ...] = ()
    # the engine an adapter requires: its distribution, product name, minimum version and why
    distribution = ""
    product = ""
    min_version: Tuple[int, ...] = ()
    min_version_for = ""

    def __init__(
        self,
        connection: Optional[Mapping[str, Any]],
        index: Optional[Mapping[str, Any]],
        *,
        suite: Optional[str] = None,
    ):
        self._conn = ConnectionSettings(connection)
        self._config = IndexPlan.parse(index, suite)
        # late-bound, so the adapter's _raw_request may be wrapped on the instance
        # every answer checked to be a JSON object (a proxy's HTML page is named, not parsed)
        send = json_answers(lambda *request: self._raw_request(*request), self._conn.hosts)
        self._http = EngineHTTP(self.name, self._conn, send)
        self._index = ThrowawayIndex(
            self._http,
            self._config,
            vector_mapping=self._vector_mapping,
            extra_settings=self._extra_index_settings,
            bm25_type=lambda: bm25_similarity_type(self.name, self.engine_info()[1]),
            bulk=lambda actions, **options: self._helpers().streaming_bulk(
                self._bulk_client(), actions, **options
            ),
        )
        conn, settings = self._conn, self._search_settings()
        self._searcher = Searcher(
            self._http, conn.batch_size, conn.concurrency, settings, self._config.id_field
        )
        self._sparse = SparseFields(self._http, self._index, self._config, self.sparse_field_types)
        self._check_fields = FieldCheck(self._http, self.vector_field_types, self._sparse.check)
        self._existing_count: Optional[int] = None
        self._closed = False
        self._client_warning: Optional[str] = None  # set by _check_client
        self._index_facts: Dict[str, Dict[str, Any]] = {}  # per index searched, read once
        self.analyzer_notes = AnalyzerNotes()  # the analyzers BM25 searched each field with
        self._definitions: Dict[str, Dict[str, Any]] = {}  # an existing index's (fingerprint)
        self._client = connect(self.name, self._conn, self._make_client)

    def _search_settings(self) -> Dict[str, str]:
        """What every search carries: ``preference`` (``connection.preference``, default a string
        derived from the suite name, so every query of a run and every rerun of the suite read the
        same shard copies: copies of a shard may hold different deleted-document statistics, hence
        different BM25 scores) and ``search_type`` when set."""
        out = {"preference": self._conn.preference or f"{INDEX_PREFIX}{self._config.suite_slug}"}
        if self._conn.search_type:
            out["search_type"] = self._conn.search_type
        return out

    # ---- engine adapter (subclasses) -------------------------------------------------

    def _make_client(self, conn: ConnectionSettings) -> Any:
        raise NotImplementedError

    def _raw_request(
        self, method: str, path: str, params: Optional[Mapping[str, Any]], body: Any, ndjson: bool
    ) -> Any:
        """Send one request; return the decoded JSON body; raise EngineHTTPError / EngineUnreachable."""
        raise NotImplementedError

    def _helpers(self) -> Any:
        """The client's ``helpers`` module (``streaming_bulk``)."""
        raise NotImplementedError

    def _bulk_client(self) -> Any:
        """The client ``streaming_bulk`` indexes with. Bulk requests bypass ``EngineHTTP``, so
        adapters return a client retrying like the policy of retry.py (same ``max_retries``,
        the same statuses and connection errors); ``streaming_bulk`` retries 429 items."""
        return self._client

    def _vector_mapping(self, dims: int, similarity: str) -> Dict[str, Any]:
        raise NotImplementedError

    def _extra_index_settings(self) -> Dict[str, Any]:
        return {}

    def _knn_body(self, spec: KnnSpec, vector: List[float], k: int) -> Dict[str, Any]:
        raise NotImplementedError

    def _search_params(self, spec: Any) -> Dict[str, Any]:
        """Extra URL parameters of a search for this spec (OpenSearch: search_pipeline)."""
        if isinstance(spec, TemplateSpec) and spec.pipeline:
            raise ConfigError(
                f"{self.name} has no search pipelines; TemplateSpec.pipeline "
                f"({spec.pipeline!r}) is for OpenSearch"
            )
        return {}

    def _check_engine(self, engine: str, version: str) -> None:
        """Refuse the wrong engine (e.g. the Elasticsearch backend on OpenSearch) or one older
        than ``min_version`` (an unparsable version is let through)."""
        if not self.distribution:
            return
        if engine != self.distribution:
            raise InfrastructureError(
                f"{self.name} backend: {', '.join(self._conn.hosts)} is {engine} {version}, not {self.product}"
            )
        if older_than(version, self.min_version):
            needed = ".".join(map(str, self.min_version))
            raise InfrastructureError(
                f"{self.name} backend needs {self.product} >= {needed} ({self.min_version_for}), "
                f"the server is {version}"
            )

    def _check_client(self, version: str) -> Optional[str]:
        """Raise if the installed client cannot talk to this server version; return a
        one-line warning if it can only in a compatibility mode (Elasticsearch); else None."""
        return None

    def _close_extras(self) -> None:
        """Subclasses delete what else they created (OpenSearch: search pipelines)."""

    # ---- plumbing ---------------------------------------------------------------------

    def __repr__(self) -> str:
        where = self._config.existing or self._index.name or f"{INDEX_PREFIX}{self._config.suite_slug}-*"
        return f"<{type(self).__name__} hosts={self._conn.hosts!r} index={where!r}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def index_name(self) -> Optional[str]:
        """The index searched: the existing one, or the throwaway one once prepared."""
        return self._config.existing or self._index.built_name()

    def engine_info(self) -> Tuple[str, str]:
        """(distribution, version) of the engine."""
        return self._http.engine_info()

    def retries(self) -> Dict[str, int]:
        """Every retry this backend's requests made so far, by reason (the runner counts a
        pass's retries as the difference, ``execution/runner.py``)."""
        return self._http.retry.count.snapshot()

    def describe(self) -> Dict[str, Any]:
        engine, version = self.engine_info()
        existing = self._config.existing
        facts: Dict[str, Any] = {
            "backend": self.name,
            "engine": engine,
            "version": version,
            "index": self.index_name,
            "doc_count": self._existing_count if existing else self._index.doc_count,
            "index_mode": "existing" if existing else "throwaway",
            "search": dict(self._searcher.settings),
        }
        facts.update(_client_facts(self.name, self._client_warning))
        facts.update(self.index_facts(), **self._sparse.facts(self.index_name), **self._searcher.facts())
        if existing:  # the system under test: the alias's target, mapping and settings (read once)
            if existing not in self._definitions:
                self._definitions[existing] = index_definition(self._http, existing)
            facts.update(self._definitions[existing])
        return facts

    def index_facts(self) -> Dict[str, Any]:
        """The searched index's facts, read once per index (its settings and its vector field's
        mapping): shards, replicas, HNSW parameters (``facts.py``) and what the vector index is
        (``vector_index``: type, options, quantisation, e.g. that Elasticsearch 9 built an
        unpinned field as bbq_hnsw, ``versions.py``); empty before prepare and after close."""
        index = self.index_name
        if index is None or self._closed:
            return {}
        if index not in self._index_facts:
            self._index_facts[index] = searched_index_facts(
                self._http, self.name, index, self._config.vector_field
            )
        return self._index_facts[index]

    # ---- life cycle -------------------------------------------------------------------

    def prepare(self, documents: Optional[Sequence[Document]], doc_vectors: Optional[DocVectors]) -> None:
        if self._closed:
            raise InfrastructureError(f"{self.name} backend is closed")
        engine, version = self.engine_info()
        self._check_engine(engine, version)
        self._client_warning = self._check_client(version)
        existing = self._config.existing
        if existing is not None:
            self._existing_count = existing_count(self._http, existing, self._config.id_field)
            log.info(
                "%s: using existing index %s (%d docs, read-only)", self.name, existing, self._existing_count
            )
            return
        if self._index.name is not None:
            raise InfrastructureError(f"{self.name} backend already prepared ({self._index.name})")
        self.reap_leftovers()
        self._index.create(documents, doc_vectors)

    def reap_leftovers(self) -> List[str]:
        """Delete throwaway indices of crashed runs; returns the names deleted (see
        :func:`.index.reap_indices`)."""
        return reap_indices(self._http, self._config.reap_after_s, keep=self._index.name)

    def close(self) -> None:
        if self._closed:
            return
        try:
            try:
                self._close_extras()
            except Exception as exc:  # the index is deleted all the same
                cleanup_after_failure(self._index.delete, exc)
                raise
            self._index.delete()
        finally:
            self._closed = True
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing a pool never matters
                pass

    # ---- searching --------------------------------------------------------------------

    def _target(self) -> str:
        name = self.index_name
        if name is None:
            raise InfrastructureError(f"{self.name} backend used before prepare()")
        if self._closed:
            raise InfrastructureError(f"{self.name} backend is closed")
        return name

    def _ready(self, k: int, *specs: Any) -> str:
        """Check ``k``, tune the throwaway index to the specs (which may rebuild it under a
        new name) and check their fields; returns the index to search."""
        check_k(k)
        self._target()
        for spec in specs:
            self._index.ensure_variant(spec)
        index = self._target()
        for spec in specs:
            self._check_fields(index, spec)
            check_index_options(self._http, index, spec, self._config.existing, self.analyzer_notes)
        return self._target()

    def build_body(self, spec: Any, query: Query, k: int) -> Dict[str, Any]:
        """The search body for one query (what search_one sends), asking for the id field."""
        return self._searcher.asking_for_id(
            search_body(spec, query, k, self._knn_body, self.name, self._sparse_body)
        )

    def search_batch(self, spec: Any, queries: Sequence[Query], k: int) -> Run:
        index = self._ready(k, spec)
        params = self._search_params(spec)
        bodies = [(q.qid, self.build_body(spec, q, k)) for q in queries]
        if params:  # _msearch takes no search pipeline: one _search per query, concurrently
            return self._searcher.each(index, bodies, params, k)
        return self._searcher.msearch(index, bodies, k)

    def exact_knn(self, spec: KnnSpec, queries: Sequence[Query], k: int) -> Optional[Run]:
        """The exact top ``k``: client-side from a throwaway index's document vectors (no filter, no
        id field), else by the engine's brute-force ``script_score`` (:meth:`_exact_knn_body`)."""
        self._ready(k, spec)
        vectors = None if self._config.id_field else self._index.vectors  # by _id, not the id field
        if vectors is not None and spec.field == self._config.vector_field and not spec.filter:
            return _exact_top_k(queries, vectors, self._index.variant["similarity"], k)
        return self.exact_knn_on_engine(spec, queries, k)

    def exact_knn_on_engine(self, spec: KnnSpec, queries: Sequence[Query], k: int) -> Run:
        """The exact top ``k`` by the engine's brute-force ``script_score`` search, with the
        similarity the index's mapping gives the field."""
        index = self._ready(k, spec)
        similarity = self._field_similarity(index, spec.field)
        bodies = []
        for q in queries:
            if q.vector is None:
                raise ConfigError(f"query {q.qid!r} has no vector: ann_recall needs query embeddings")
            body = self._exact_knn_body(spec, vector_to_list(q.vector), k, similarity)
            bodies.append((q.qid, self._searcher.asking_for_id(body)))
        return self._searcher.msearch(index, bodies, k)

    def _field_similarity(self, index: str, field: str) -> str:
        """The vector similarity the index's mapping gives ``field``, in the adapter's terms."""
        own = index == self.index_name and field == self._config.vector_field
        return field_similarity(self._http, index, field, self.index_facts() if own else None)

    def _exact_knn_body(self, spec: KnnSpec, vector: List[float], k: int, similarity: str) -> Dict[str, Any]:
        raise NotImplementedError

    def existing_ids(self, doc_ids: Sequence[str], batch: int = 1000) -> Optional[Set[str]]:
        """Which of ``doc_ids`` the index (or alias) holds (:func:`.existing.held_ids`)."""
        return held_ids(self._http, self._target(), doc_ids, batch, self._config.id_field)

    def search_one(self, spec: Any, query: Query, k: int) -> SearchResult:
        index = self._ready(k, spec)
        params = self._search_params(spec)
        body = self.build_body(spec, query, k)
        ranking, took = self._searcher.one(index, query.qid, body, params, k)
        return SearchResult(ranking=ranking, server_took_ms=took)


def _client_facts(engine: str, warning: Optional[str]) -> Dict[str, Any]:
    """The installed client's version, and the warning about it (a major that does not match)."""
    client = client_version(engine)
    return {**({"client": client} if client else {}), **({"warnings": [warning]} if warning else {})}


def _exact_top_k(queries: Sequence[Query], vectors: DocVectors, similarity: str, k: int) -> Run:
    """The exact top ``k`` of the queries with a vector, client-side from the document vectors."""
    import numpy as np

    from ...measures.ann import exact_top_k

    with_vectors = [q for q in queries if q.vector is not None]
    matrix = np.stack([np.asarray(q.vector, dtype=np.float32) for q in with_vectors])
    qids = [q.qid for q in with_vectors]
    return exact_top_k(qids, matrix, vectors.doc_ids, vectors.matrix, similarity, k)


def search_options(backend: SearchEngineBackend, spec: Any) -> Dict[str, Any]:
    """What a search of ``spec`` carries beside its body: the settings of every search
    (``preference``, ``search_type``) and its URL parameters (a search pipeline)."""
    return {**backend._searcher.settings, **backend._search_params(spec)}


def engine_request(backend: SearchEngineBackend, method: str, path: str, **options: Any) -> Any:
    """One request to the engine through ``backend``'s connection, retry policy and redaction
    (``http.EngineHTTP.request``: ``params``, ``body``, ``what``, ``ok_status``): the run
    history's index store (``history/engine_store.py``) talks to the engine with it."""
    return backend._http.request(method, path, **options)
