"""Qdrant's local mode as a pytest-retrieval backend (an example of the third-party contract).

pytest-retrieval finds this class through the entry point group ``pytest_retrieval.backends``
(see ``pyproject.toml``) when a suite says ``backend: {type: qdrant}``, and calls it as
``QdrantBackend(connection, index)``:

* ``connection``: the suite's ``backend.connection`` as plain values, or None (unused here);
* ``index``: the suite's ``backend.index`` values, plus ``suite`` (the suite's name),
  ``options`` (the suite's ``backend.options``, here ``location``: ``":memory:"`` or a folder)
  and ``base_dir`` (the suite file's folder, to resolve relative paths).

The life cycle is the ``Backend`` protocol's: ``prepare`` (index the suite's documents and their
vectors) -> ``search_batch`` (quality pass) / ``search_one`` (latency pass, one request) ->
``close``. Every failure to answer is an ``InfrastructureError``; a retriever this backend
cannot answer, or a missing input, is a ``ConfigError`` naming it. Never an empty ranking in
place of an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from pytest_retrieval.backends.base import Backend, KnnSpec, SearchResult
from pytest_retrieval.errors import ConfigError, InfrastructureError
from pytest_retrieval.types import Document, DocVectors, Query, Ranking, Run

__all__ = ["QdrantBackend"]

_BATCH = 256  # points per upsert, queries per query_batch_points


class QdrantBackend(Backend):
    """kNN retrievers (``type: knn``) over Qdrant's exact local search."""

    name = "qdrant"

    def __init__(self, connection: Optional[Mapping[str, Any]], index: Mapping[str, Any]) -> None:
        options = dict(index.get("options") or {})
        unknown = sorted(set(options) - {"location"})
        if unknown:
            raise ConfigError(f"qdrant backend: unknown option {unknown[0]!r} (known: location)")
        location = str(options.get("location", ":memory:"))
        if location != ":memory:" and not Path(location).is_absolute():
            location = str(Path(index.get("base_dir") or ".") / location)
        self.location = location
        self.collection = f"pytest-retrieval-{index.get('suite') or 'suite'}"
        self._client: Any = None
        self._doc_ids: List[str] = []
        self._distance: Optional[str] = None

    def prepare(self, documents: Optional[Sequence[Document]], doc_vectors: Optional[DocVectors]) -> None:
        if not documents or doc_vectors is None:
            raise ConfigError(
                "qdrant backend: indexes the suite's documents with their vectors "
                "(give judgments.corpus or beir, and an embedder)"
            )
        try:
            from qdrant_client import QdrantClient
        except ImportError:
            raise ConfigError("qdrant backend: pip install qdrant-client") from None
        self._client = (
            QdrantClient(location=self.location)
            if self.location == ":memory:"
            else QdrantClient(path=self.location)
        )
        self._doc_ids = [str(d) for d in doc_vectors.doc_ids]
        self._dim = int(doc_vectors.matrix.shape[1])
        self._vectors = doc_vectors.matrix

    def _collection_for(self, spec: KnnSpec) -> None:
        """(Re)create the collection with the spec's distance (a suite's kNN retrievers may differ)."""
        from qdrant_client import models

        distance = {
            "cosine": models.Distance.COSINE,
            "dot_product": models.Distance.DOT,
            "l2_norm": models.Distance.EUCLID,
        }[spec.similarity]
        if self._distance == distance:
            return
        if self._client.collection_exists(self.collection):
            self._client.delete_collection(self.collection)
        self._client.create_collection(
            self.collection, vectors_config=models.VectorParams(size=self._dim, distance=distance)
        )
        for start in range(0, len(self._doc_ids), _BATCH):
            rows = range(start, min(start + _BATCH, len(self._doc_ids)))
            self._client.upsert(
                self.collection,
                points=[models.PointStruct(id=i, vector=self._vectors[i].tolist()) for i in rows],
            )
        self._distance = distance

    def _knn(self, spec: Any) -> KnnSpec:
        if not isinstance(spec, KnnSpec):
            kind = type(spec).__name__.removesuffix("Spec").lower()
            raise ConfigError(f"qdrant backend answers knn retrievers only, not {kind}")
        if spec.filter:
            raise ConfigError("qdrant backend: knn filters are not supported by this example")
        if self._client is None:
            raise InfrastructureError("qdrant backend: search before prepare")
        self._collection_for(spec)
        return spec

    def search_batch(self, spec: Any, queries: Sequence[Query], k: int) -> Run:
        from qdrant_client import models

        knn = self._knn(spec)
        out: Run = {}
        for start in range(0, len(queries), _BATCH):
            chunk = queries[start : start + _BATCH]
            requests = [
                models.QueryRequest(query=self._vector(q), limit=k, with_payload=False) for q in chunk
            ]
            try:
                answers = self._client.query_batch_points(self.collection, requests=requests)
            except Exception as exc:  # noqa: BLE001 - whatever the client raises is an error item
                raise InfrastructureError(
                    f"qdrant backend: search failed: {type(exc).__name__}: {exc}"
                ) from None
            for q, answer in zip(chunk, answers):
                out[q.qid] = self._ranking(answer.points)
        del knn
        return out

    def search_one(self, spec: Any, query: Query, k: int) -> SearchResult:
        self._knn(spec)
        try:
            answer = self._client.query_points(
                self.collection, query=self._vector(query), limit=k, with_payload=False
            )
        except Exception as exc:  # noqa: BLE001
            raise InfrastructureError(f"qdrant backend: search failed: {type(exc).__name__}: {exc}") from None
        return SearchResult(self._ranking(answer.points))

    @staticmethod
    def _vector(query: Query) -> List[float]:
        if query.vector is None:
            raise ConfigError(
                f"qdrant backend: query {query.qid!r} has no vector (the suite needs an embedder)"
            )
        return [float(x) for x in query.vector]

    def _ranking(self, points: Sequence[Any]) -> Ranking:
        return Ranking([self._doc_ids[int(p.id)] for p in points], [float(p.score) for p in points])

    def describe(self) -> Dict[str, Any]:
        from importlib.metadata import version

        return {"backend": self.name, "engine": "qdrant-local", "version": version("qdrant-client")}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
