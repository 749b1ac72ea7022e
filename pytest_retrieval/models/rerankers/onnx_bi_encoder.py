"""Bi-encoder rerankers: cosine between the query's and each candidate's embedding, from any
embedder (:class:`EmbedderReranker`) or from an ONNX sentence-embedding model
(:class:`OnnxBiEncoderReranker`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Literal, Sequence, Tuple

from pydantic import Field

from ...errors import ConfigError
from ..embedders.onnx import OnnxEmbedder, OnnxEmbeddingOptions
from ..files import PathLike, resolve
from ..outputs import as_matrix, normalize_rows
from .base import Candidate, Reranker


class EmbedderReranker:
    """Cosine similarity between the query embedding and each candidate's embedding, from any
    :class:`~pytest_retrieval.models.embedders.Embedder`. Document vectors are kept in memory per
    ``(doc_id, text)`` (``cache_documents``), so a document shared by several queries is
    embedded once."""

    def __init__(self, embedder: Any, cache_documents: bool = True):
        self.embedder = embedder
        self.cache_documents = bool(cache_documents)
        self._cache: Dict[Tuple[str, str], Any] = {}

    @property
    def id(self) -> str:
        return f"bi-encoder:{self.embedder.id}"

    def rerank(self, query_text: str, candidates: Sequence[Candidate]) -> List[float]:
        import numpy as np

        if not candidates:
            return []
        query = as_matrix(
            self.embedder.embed_queries(["query"], [query_text or ""]), 1, f"embedder {self.embedder.id!r}"
        )
        docs = self._document_vectors([(str(d), t or "") for d, t in candidates])
        if docs.shape[1] != query.shape[1]:
            raise ConfigError(
                f"embedder {self.embedder.id!r}: query vectors have "
                f"{query.shape[1]} dimensions, document vectors {docs.shape[1]}"
            )
        q = normalize_rows(query)[0]
        return (docs.astype(np.float64) @ q.astype(np.float64)).tolist()

    def _document_vectors(self, keys: Sequence[Tuple[str, str]]) -> Any:
        """Normalised vectors of ``(doc_id, text)`` keys, one row per key: the cached ones,
        the others embedded in one call (and cached when ``cache_documents``)."""
        import numpy as np

        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        fresh: Dict[Tuple[str, str], Any] = {}
        if todo:
            vectors = as_matrix(
                self.embedder.embed_documents([k[0] for k in todo], [k[1] for k in todo]),
                len(todo),
                f"embedder {self.embedder.id!r}",
            )
            vectors = normalize_rows(vectors)
            fresh = dict(zip(todo, vectors))
            if self.cache_documents:
                self._cache.update(fresh)
        return np.stack([self._cache[k] if k in self._cache else fresh[k] for k in keys])

    def clear_cache(self) -> None:
        self._cache.clear()


class OnnxBiEncoderReranker(EmbedderReranker):
    """Cosine between query and document embeddings of an ONNX sentence-embedding model
    (:class:`~pytest_retrieval.models.embedders.OnnxEmbedder`; same options: ``max_length``,
    ``batch_size``, ``max_batch_tokens``, ``pooling``, ``query_prefix``, ``document_prefix``,
    ``threads``). Useful to rerank a cheap first stage with a stronger embedding model without
    indexing its vectors."""

    def __init__(self, model_dir: PathLike, cache_documents: bool = True, **options: Any):
        super().__init__(OnnxEmbedder(model_dir, normalize=True, **options), cache_documents=cache_documents)

    @property
    def id(self) -> str:
        return f"onnx-bi-encoder:{self.embedder.id}"

    def __repr__(self) -> str:
        return f"OnnxBiEncoderReranker({str(self.embedder.model_dir)!r})"


class OnnxBiEncoderRerankerConfig(OnnxEmbeddingOptions):
    type: Literal["onnx-bi-encoder"]
    aliases = ("bi-encoder", "onnx_bi_encoder")
    cache_documents: bool = Field(True, description="Keep document vectors in memory across queries.")

    def build(self, base_dir: Path) -> Reranker:
        return OnnxBiEncoderReranker(resolve(base_dir, self.model), **self.options("model"))
