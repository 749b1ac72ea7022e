"""The stage interface every backend implements (embedded, Elasticsearch, OpenSearch, and
third-party ones): the :class:`Backend` protocol and the leaf retriever specs it answers."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Protocol, Sequence, Set, Tuple, runtime_checkable

from pydantic import Field
from typing_extensions import Annotated

from ..types import DocSparseVectors, Document, DocVectors, Query, Ranking, Run

# ---- leaf retriever specs (validated config turns into these) ----

# the values a suite may write; the suite schema takes these and the specs' defaults
MultiMatchType = Literal["best_fields", "most_fields"]
Stopwords = Literal["english"]
Similarity = Literal["cosine", "dot_product", "l2_norm"]
AnalyzerName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]  # a built-in analyzer


@dataclass(frozen=True)
class BM25Spec:
    """Lexical retrieval. ``fields`` maps field name -> boost (Elasticsearch ``field^boost``).

    ``multi_match_type`` follows Elasticsearch's multi_match: ``best_fields`` (max of
    the per-field scores + tie_breaker * the others) or ``most_fields`` (sum)."""

    fields: Tuple[Tuple[str, float], ...] = (("title", 1.0), ("text", 1.0))
    multi_match_type: MultiMatchType = "best_fields"
    tie_breaker: float = 0.0
    k1: float = 1.2
    b: float = 0.75
    stopwords: Optional[Stopwords] = None  # None = no stop words (ES standard analyzer default)
    # (field, built-in analyzer name) of each field; a field not named is "standard"
    analyzer: Tuple[Tuple[str, str], ...] = ()
    # which of k1/b/stopwords/analyzer the suite wrote (they belong to an index's settings, so an
    # existing index refuses them); empty: those that differ from the defaults above
    index_options: Tuple[str, ...] = field(default=(), compare=False)

    def analyzer_of(self, name: str) -> str:
        """The built-in analyzer of field ``name`` ("standard" unless the suite named another)."""
        return dict(self.analyzer).get(name, "standard")


class AnalyzerNotes:
    """The analyzers BM25 searched each text field with (a backend's ``analyzer_notes``; the
    summary shows them): what a suite named, or what an existing index's mapping holds."""

    def __init__(self) -> None:
        self.by_field: Dict[str, List[str]] = {}

    def add(self, field_name: str, analyzer: str) -> None:
        names = self.by_field.setdefault(field_name, [])
        if analyzer not in names:
            names.append(analyzer)

    def shown(self) -> Dict[str, str]:
        return {f: ", ".join(names) for f, names in self.by_field.items()}


@dataclass(frozen=True)
class KnnSpec:
    """Vector retrieval over document embeddings."""

    similarity: Similarity = "cosine"
    num_candidates: Optional[int] = None  # engines: HNSW candidates; embedded: exact, ignored
    field: str = "embedding"
    filter: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class SparseSpec:
    """Learned sparse retrieval (SPLADE-style): score(q, d) = sum over shared terms of
    q_weight x d_weight. The query's weights arrive in ``Query.sparse`` with any IDF already
    applied (query-side, so every backend ranks alike); documents' raw weights arrive in
    ``prepare`` as ``DocSparseVectors`` (``prepare_sparse``). ``field`` names the index field
    (throwaway indexes create it; existing indexes must have it)."""

    field: str = "sparse_embedding"
    idf: Literal["none", "bm25_plus1"] = "none"
    encoder_id: str = ""


@dataclass(frozen=True)
class TemplateSpec:
    """The team's own production query body with {{query_text}}, {{query_vector}}, {{k}}."""

    body: Any = None  # JSON-able dict (frozen dataclass holds it by reference)
    pipeline: Optional[str] = None


@dataclass(frozen=True)
class ServiceSpec:
    """Ask a whole-pipeline backend (``http``, ``python``, or a third-party one that answers
    it) for its own ranking: the service rewrites, filters, fuses and reranks as it does in
    production. ``params`` (name, value) pairs fill the request template's ``{name}``
    placeholders (http) or are passed as keyword arguments (python), so one suite can compare
    the service's modes."""

    params: Tuple[Tuple[str, Any], ...] = ()


LeafSpec = Any  # BM25Spec | KnnSpec | SparseSpec | TemplateSpec | ServiceSpec


@dataclass
class SearchResult:
    """One single-request search, for the latency pass."""

    ranking: Ranking
    server_took_ms: Optional[float] = None


@runtime_checkable
class Backend(Protocol):
    """A search engine that answers leaf retrievers: the extension point for other engines
    (registered by name in ``backends.registry``, or through the ``pytest_retrieval.backends``
    entry point group).

    Life cycle: ``prepare`` (build or attach the index) -> many ``search_batch`` /
    ``search_one`` -> ``close`` (delete what this backend created, nothing else).
    Every method raises ``InfrastructureError`` when the engine cannot answer;
    it never returns an empty ranking in place of an error.

    A class may implement it structurally, or subclass it to inherit the optional methods'
    defaults below (``existing_ids``, ``exact_knn``, ``describe``, ``close``).

    One capability is optional and outside the protocol (so backends written before it still
    satisfy ``isinstance(x, Backend)``): ``prepare_sparse(doc_sparse: DocSparseVectors)``, which
    adds the documents' learned sparse vectors after ``prepare`` when a suite has a sparse
    retriever. Call it through :func:`prepare_sparse`, which refuses a backend without it.
    """

    name: str = "abstract"

    @abc.abstractmethod
    def prepare(self, documents: Optional[Sequence[Document]], doc_vectors: Optional[DocVectors]) -> None:
        """Index the suite's corpus (throwaway) or check the existing index is there."""

    @abc.abstractmethod
    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        """Quality pass: every query, top ``k`` each, as fast as the engine allows."""

    @abc.abstractmethod
    def search_one(self, spec: LeafSpec, query: Query, k: int) -> SearchResult:
        """Latency pass: exactly one request for one query, as production would send it."""

    def existing_ids(self, doc_ids: Sequence[str]) -> Optional[Set[str]]:
        """Which of ``doc_ids`` the prepared index holds (read-only); None when this backend
        cannot tell (the runner then checks the suite's corpus)."""
        return None

    def exact_knn(self, spec: KnnSpec, queries: Sequence[Query], k: int) -> Optional[Run]:
        """The exact top ``k`` of a kNN spec (brute force), against which ``ann_recall@k``
        scores the approximate search; None when this backend's kNN is exact already."""
        return None

    def describe(self) -> Dict[str, Any]:
        """Engine name/version and index facts, for reports and baseline fingerprints."""
        return {"backend": self.name}

    def close(self) -> None:
        """Release resources and delete throwaway indexes this backend created."""


def prepare_sparse(backend: Backend, doc_sparse: DocSparseVectors) -> None:
    """Hand the documents' sparse vectors to ``backend`` (its optional ``prepare_sparse``); a
    backend without learned sparse retrieval is a ``ConfigError`` naming it, never a run that
    silently ignores the vectors."""
    from ..errors import ConfigError

    method = getattr(backend, "prepare_sparse", None)
    if method is None:
        raise ConfigError(f"backend {backend.name!r} has no learned sparse retrieval (type: sparse)")
    method(doc_sparse)
