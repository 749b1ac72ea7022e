"""The embedded backend: BM25, exact kNN and learned sparse in-process, no server needed.

This is the default backend, so ``pytest example_suite`` works on a fresh machine. It answers
the same leaf specs as the engine backends and scores them the way Elasticsearch does, so a
gate tuned on one backend means roughly the same on the other.

BM25 (``BM25Spec``)
    Text is analysed with :mod:`pytest_retrieval.backends.embedded.analyzer` (Elasticsearch's ``standard``
    analyzer: UAX#29 words, lower-cased, optional English stop words) and indexed with
    ``bm25s`` (``method="lucene"``) from our own token ids, so bm25s never re-tokenises.
    Like Lucene, every field is its own index with its own statistics: ``N`` and ``avgdl``
    count only the documents that have at least one term in that field, and a document
    without the field gets no score from it. Per field, a query scores like a ``match``
    query with ``operator: or``: the sum over the query's terms (a repeated term counts
    twice, as in Lucene) of ``(k1 + 1) * idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with
    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``. The ``(k1 + 1)`` factor is what both engines
    apply on top of Lucene's ``BM25Similarity`` (``LegacyBM25Similarity``; ``_explain`` shows it
    as a ``boost`` of 2.2 for k1 = 1.2), so scores are on the engines' scale. Fields combine like ``multi_match``:
    ``best_fields`` = max over fields of ``boost * score`` + ``tie_breaker`` * the sum of the
    other fields' ``boost * score``; ``most_fields`` = the sum of ``boost * score``. Only
    documents scoring > 0 are hits (a document matching no query term is not returned; a
    field with boost 0 makes no hits of its own, where Elasticsearch would return them with
    score 0). A query with no terms after analysis returns no hits.

    Differences from Lucene's scores: Lucene stores each document's field length in one byte
    (``SmallFloat.intToByte4``: exact up to 23 terms, then 3 significant bits, so a
    200-term abstract counts as 192..200) while bm25s uses the exact length; bm25s computes
    each term's contribution in float32 as Lucene does, but the sum here is float64.
    Scores therefore differ from Elasticsearch's in the 2nd-3rd significant digit for long
    documents and rankings can swap near-ties; idf and the formula are the same.

kNN (``KnnSpec``)
    Exact brute force over the document vectors with numpy (one matrix product per batch of
    queries), reporting scores the way Elasticsearch's ``dense_vector`` similarities do, so
    fused scores behave the same on both backends:
    ``cosine`` -> ``(1 + cos) / 2``; ``dot_product`` -> ``(1 + dot) / 2`` (Elasticsearch
    requires unit vectors for it); ``l2_norm`` -> ``1 / (1 + l2_distance**2)``;
    ``max_inner_product`` -> ``1 / (1 - dot)`` if ``dot < 0`` else ``dot + 1`` (Elasticsearch 8
    ``DenseVectorFieldMapper.VectorSimilarity.score``; the ``dense_vector`` reference page
    gives the same formulas). OpenSearch's k-NN plugin scores differently (e.g. ``l2`` as
    ``1 / (1 + distance)``), so these match Elasticsearch, not OpenSearch. ``num_candidates``
    is ignored (the search is exact) and ``field`` is ignored (there is one vector set);
    ``filter`` is not supported and raises :class:`ConfigError`.

Learned sparse (``SparseSpec``)
    ``sum_t q_t d_t`` over the terms a query and a document share (the query's weights with
    IDF applied by the runner), exact, with scipy.sparse: see :mod:`.sparse`.

Ties (every kind): score descending, then the document's position in the corpus given to
:meth:`EmbeddedBackend.prepare` (Elasticsearch on a single shard breaks ties by internal doc
id, which for a freshly bulk-loaded index is also load order).

numpy and bm25s are imported on first use so that importing the plugin stays cheap.
"""

from __future__ import annotations

import contextlib
import logging
import math
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ...errors import ConfigError, InfrastructureError, RetrievalError
from ...types import DocSparseVectors, Document, DocVectors, Query, Ranking, Run
from ..base import AnalyzerNotes, Backend, BM25Spec, KnnSpec, LeafSpec, SearchResult, SparseSpec, TemplateSpec
from ..id_field import IdField, ranked_ids
from .keys import analyzer_key, analyzer_of_key, stopword_key

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["EmbeddedBackend", "top_k_indices"]

MULTI_MATCH_TYPES = ("best_fields", "most_fields")
SIMILARITIES = ("cosine", "dot_product", "l2_norm", "max_inner_product")
TEMPLATE_MESSAGE = "raw query templates need an Elasticsearch or OpenSearch backend"

# Score matrices of a kNN batch are computed this many cells (query x doc) at a time.
_KNN_CELLS_PER_CHUNK = 16_000_000


def top_k_indices(scores: np.ndarray, k: int, candidates: Optional[np.ndarray] = None) -> np.ndarray:
    """Indices of the ``k`` best ``scores``: score descending, ties by ascending index.

    ``candidates`` (ascending indices) restricts the choice. A linear-time ``np.partition``
    finds the k-th best score; every candidate scoring at least that much (so all ties at
    the boundary, which ``argpartition`` alone would pick among arbitrarily) is then sorted
    with a stable sort, which keeps index order among equal scores."""
    import numpy as np

    if candidates is None:
        candidates = np.arange(len(scores))
        values = scores
    else:
        values = scores[candidates]
    n = len(candidates)
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.int64)
    if n > k:
        kth = np.partition(values, n - k)[n - k]  # the k-th largest value
        keep = values >= kth
        candidates = candidates[keep]
        values = values[keep]
    order = np.argsort(-values, kind="stable")[:k]
    return candidates[order]


class _AnalyzedField:
    """One field of the corpus after analysis, as term ids (strings are not kept: about 8
    bytes per token instead of ~60). ``rows`` are the documents with at least one term."""

    def __init__(self, documents: Sequence[Document], field: str, analyzer: Any):
        self.n_docs = len(documents)
        self.rows: List[int] = []
        self.term_ids: List[List[int]] = []
        vocab: Dict[str, int] = {}
        add = vocab.setdefault
        for i, doc in enumerate(documents):
            value = doc.fields.get(field)
            if value is None:
                continue
            if isinstance(value, (list, tuple)):  # a multi-valued field
                terms = [t for v in value if v is not None for t in analyzer.tokens(str(v))]
            else:
                terms = analyzer.tokens(str(value))
            if terms:
                self.rows.append(i)
                self.term_ids.append([add(t, len(vocab)) for t in terms])
        self.vocab = vocab


class _FieldIndex:
    """One field's BM25 index (its own N, avgdl, idf) over the documents that have terms."""

    def __init__(self, rows: np.ndarray, model: Any, vocab: Dict[str, int], n_docs: int):
        self.rows = rows  # global document index of each indexed document
        self.model = model  # bm25s.BM25, or None when no document has the field
        self.vocab = vocab
        self.n_docs = n_docs

    @classmethod
    def build(cls, analyzed: _AnalyzedField, k1: float, b: float) -> _FieldIndex:
        import numpy as np

        model = None
        if analyzed.rows:
            bm25s = _import_bm25s()
            model = bm25s.BM25(
                k1=k1,
                b=b,
                method="lucene",
                idf_method="lucene",
                dtype="float32",
                backend="numpy",
                csc_backend="numpy",
            )
            # Our own term ids + vocab: bm25s builds the index without tokenising anything.
            with _bm25s_warnings_only():
                model.index(
                    (analyzed.term_ids, analyzed.vocab), create_empty_token=False, show_progress=False
                )
        return cls(np.asarray(analyzed.rows, dtype=np.int64), model, analyzed.vocab, analyzed.n_docs)

    def scores(self, terms: Sequence[str]) -> Optional[np.ndarray]:
        """BM25 score of every corpus document (0 where absent), or None if no term occurs."""
        import numpy as np

        if self.model is None:
            return None
        ids = [self.vocab[t] for t in terms if t in self.vocab]
        if not ids:
            return None
        matrix = self.model.scores  # bm25s' CSC index: column = term, row = document
        indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
        if len(ids) == 1:
            lo, hi = indptr[ids[0]], indptr[ids[0] + 1]
            rows, weights = indices[lo:hi], data[lo:hi]
        else:
            rows = np.concatenate([indices[indptr[t] : indptr[t + 1]] for t in ids])
            weights = np.concatenate([data[indptr[t] : indptr[t + 1]] for t in ids])
        local = np.bincount(rows, weights=weights, minlength=len(self.rows))  # float64 sums
        out = np.zeros(self.n_docs, dtype=np.float64)
        out[self.rows] = local
        return out


class EmbeddedBackend(Backend):
    """In-process BM25 (bm25s) and exact kNN (numpy). See the module docstring."""

    name = "embedded"

    def __init__(self, id_field: Optional[str] = None) -> None:
        self._documents: Optional[List[Document]] = None
        self._doc_ids: List[str] = []
        # the ids a ranking names: the documents' ids, or their ``id_field`` values (id_field.py)
        self._id_field = IdField(id_field) if id_field else None
        self._ranked: List[str] = []
        self._has_field: set = set()  # BM25 fields some document has (checked once)
        self.empty_fields: set = set()  # BM25 fields no document has (the summary names them)
        self._analyzed: Dict[Tuple[str, Optional[str]], _AnalyzedField] = {}
        self._indexes: Dict[Tuple[str, Optional[str], float, float], _FieldIndex] = {}
        self._vectors: Any = None  # float32 (n_vec, dim), rows in corpus order
        self._vector_rows: Any = None  # global doc index of each vector row
        self._normalized: Any = None  # unit-length copy, for cosine
        self._embedder_id = ""
        self._sparse: Dict[str, Any] = {}  # encoder id -> .sparse.SparseIndex
        self.analyzer_notes = AnalyzerNotes()  # the analyzers BM25 searched each field with

    # ---- life cycle -------------------------------------------------------------------

    def prepare(self, documents: Optional[Sequence[Document]], doc_vectors: Optional[DocVectors]) -> None:
        """Keep the corpus (BM25 indexes are built lazily, per field, on first use) and line
        the document vectors up with it. Without ``documents`` only kNN is possible, over
        the vectors' own ids in their own order."""
        self.close()
        if documents is not None:
            self._documents = list(documents)
            self._doc_ids = [str(d.doc_id) for d in self._documents]
            seen: Dict[str, int] = {}
            for doc_id in self._doc_ids:
                if doc_id in seen:
                    raise ConfigError(f"duplicate document id {doc_id!r} in the corpus")
                seen[doc_id] = 1
        elif doc_vectors is not None:
            self._doc_ids = [str(d) for d in doc_vectors.doc_ids]
        self._ranked = ranked_ids(self._documents, self._id_field, self._doc_ids)
        if doc_vectors is not None:
            self._set_vectors(doc_vectors)

    def _set_vectors(self, doc_vectors: DocVectors) -> None:
        import numpy as np

        matrix = np.asarray(doc_vectors.matrix, dtype=np.float32)
        ids = [str(d) for d in doc_vectors.doc_ids]
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ConfigError(
                f"document vectors: matrix shape {tuple(matrix.shape)} does not match {len(ids)} document ids"
            )
        if not np.isfinite(matrix).all():
            raise ConfigError("document vectors contain NaN or infinite values")
        self._embedder_id = doc_vectors.embedder_id
        if ids == self._doc_ids:
            rows = np.arange(len(ids), dtype=np.int64)
        else:
            matrix = _in_corpus_order(matrix, ids, self._doc_ids)
            rows = np.arange(len(self._doc_ids), dtype=np.int64)
        self._vectors = np.ascontiguousarray(matrix)
        self._vector_rows = rows

    def prepare_sparse(self, doc_sparse: DocSparseVectors) -> None:
        """The documents' learned sparse vectors as a CSR matrix in corpus order (one per
        encoder; see :mod:`.sparse`)."""
        from .sparse import SparseIndex

        self._sparse[doc_sparse.encoder_id] = SparseIndex(doc_sparse, self._doc_ids)

    def close(self) -> None:
        self._sparse = {}
        self._documents = None
        self._doc_ids = []
        self._ranked = []
        self._has_field = set()
        self.empty_fields = set()
        self._analyzed.clear()
        self._indexes.clear()
        self._vectors = self._vector_rows = self._normalized = None
        self._embedder_id = ""

    def describe(self) -> Dict[str, Any]:
        try:
            from importlib.metadata import version

            bm25s_version = version("bm25s")
        except Exception:  # pragma: no cover - not installed
            bm25s_version = "?"
        info: Dict[str, Any] = {
            "backend": "embedded",
            "engine": f"bm25s {bm25s_version} + numpy",
            "doc_count": len(self._doc_ids),
        }
        if self._id_field is not None:
            info["id_field"] = self._id_field.name
        if self._sparse:
            info["sparse_terms"] = {e: len(ix.columns) for e, ix in self._sparse.items()}
        if self._vectors is not None:
            info["vector_dims"] = int(self._vectors.shape[1])
            if self._embedder_id:
                info["embedder"] = self._embedder_id
        return info

    # ---- searching ---------------------------------------------------------------------

    def search_batch(self, spec: LeafSpec, queries: Sequence[Query], k: int) -> Run:
        return self._guard(self._search, spec, list(queries), k)

    def search_one(self, spec: LeafSpec, query: Query, k: int) -> SearchResult:
        run = self._guard(self._search, spec, [query], k)
        return SearchResult(ranking=run.get(query.qid, Ranking()), server_took_ms=None)

    @staticmethod
    def _guard(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except RetrievalError:
            raise
        except Exception as exc:  # a bug or resource problem: the gate cannot be judged
            raise InfrastructureError(f"embedded backend failed: {type(exc).__name__}: {exc}") from exc

    def _search(self, spec: LeafSpec, queries: List[Query], k: int) -> Run:
        if isinstance(spec, TemplateSpec):
            raise ConfigError(TEMPLATE_MESSAGE)
        if isinstance(spec, BM25Spec):
            return self._search_bm25(spec, queries, k)
        if isinstance(spec, KnnSpec):
            return self._search_knn(spec, queries, k)
        if isinstance(spec, SparseSpec):
            from .sparse import sparse_index

            index = sparse_index(self._sparse, spec.encoder_id)
            return index.search(queries, k, self._ranked.__getitem__, top_k_indices)
        raise ConfigError(f"the embedded backend cannot run a {type(spec).__name__} stage")

    # ---- BM25 --------------------------------------------------------------------------

    def _search_bm25(self, spec: BM25Spec, queries: List[Query], k: int) -> Run:
        import numpy as np

        from .analyzer import check_fields

        if self._documents is None:
            raise ConfigError("BM25 on the embedded backend needs the corpus documents")
        _check_bm25_spec(spec)
        self.empty_fields.update(check_fields(self._documents, spec.fields, self._has_field))
        stop_key = stopword_key(spec.stopwords)
        fields = [
            (field, float(boost), analyzer_key(spec.analyzer_of(field), stop_key))
            for field, boost in spec.fields
        ]
        indexes = [
            (self._field_index(field, key, spec.k1, spec.b), boost, key) for field, boost, key in fields
        ]
        analyzers = {key: analyzer_of_key(key) for _f, _b, key in fields}
        for field, _b in spec.fields:
            self.analyzer_notes.add(field, spec.analyzer_of(field))
        tie = float(spec.tie_breaker)
        best = spec.multi_match_type == "best_fields"
        scale = 1.0 + float(spec.k1)

        run: Run = {}
        for query in queries:
            terms = {key: analyzer.tokens(query.text) for key, analyzer in analyzers.items()}
            per_field = _field_scores(terms, indexes, scale)
            if not per_field:
                run[query.qid] = Ranking()
                continue
            total = _multi_match(per_field, best, tie)
            hits = np.flatnonzero(total > 0)
            chosen = top_k_indices(total, k, hits)
            run[query.qid] = Ranking([self._ranked[i] for i in chosen], [float(total[i]) for i in chosen])
        return run

    def _field_index(self, field: str, key: Optional[str], k1: float, b: float) -> _FieldIndex:
        index_key = (field, key, float(k1), float(b))
        index = self._indexes.get(index_key)
        if index is None:
            if not (k1 >= 0 and 0 <= b <= 1):
                raise ConfigError(f"BM25 needs k1 >= 0 and 0 <= b <= 1 (got k1={k1}, b={b})")
            index = self._indexes[index_key] = _FieldIndex.build(self._analyze(field, key), k1, b)
        return index

    def _analyze(self, field: str, key: Optional[str]) -> _AnalyzedField:
        cache_key = (field, key)
        analyzed = self._analyzed.get(cache_key)
        if analyzed is None:
            analyzed = self._analyzed[cache_key] = _AnalyzedField(
                self._documents or (), field, analyzer_of_key(key)
            )
        return analyzed

    # ---- kNN ---------------------------------------------------------------------------

    def _search_knn(self, spec: KnnSpec, queries: List[Query], k: int) -> Run:
        import numpy as np

        similarity = _knn_similarity(spec)
        if self._vectors is None:
            raise ConfigError("kNN on the embedded backend needs document vectors (configure an embedder)")
        docs = self._vectors
        if not queries:
            return {}
        matrix = _query_matrix(queries, docs.shape[1])
        if similarity == "cosine":
            docs = self._unit_documents()
            matrix = _unit_rows(matrix, "query", [q.qid for q in queries])
        doc_sq = None
        if similarity == "l2_norm":
            doc_sq = np.einsum("ij,ij->i", docs, docs, dtype=np.float64)

        run: Run = {}
        step = max(1, _KNN_CELLS_PER_CHUNK // max(1, docs.shape[0]))
        for start in range(0, len(queries), step):
            block = matrix[start : start + step]
            scores = _knn_block_scores(similarity, block, docs, doc_sq)
            for j in range(block.shape[0]):
                row = scores[j]
                chosen = top_k_indices(row, k)
                query = queries[start + j]
                run[query.qid] = Ranking(
                    [self._ranked[self._vector_rows[i]] for i in chosen],
                    [float(row[i]) for i in chosen],
                )
        return run

    def _unit_documents(self) -> np.ndarray:
        """The document vectors scaled to unit length (for cosine), computed once."""
        if self._normalized is None:
            doc_ids = [self._doc_ids[r] for r in self._vector_rows]
            self._normalized = _unit_rows(self._vectors, "document", doc_ids)
        return self._normalized


def _knn_similarity(spec: KnnSpec) -> str:
    """The similarity of a kNN stage the embedded backend can run (it has no filter)."""
    if spec.filter:
        raise ConfigError(
            "kNN filter is not supported by the embedded backend; use an Elasticsearch "
            "or OpenSearch backend, or drop the filter"
        )
    if spec.similarity not in SIMILARITIES:
        raise ConfigError(f"unknown kNN similarity {spec.similarity!r} (known: {', '.join(SIMILARITIES)})")
    return spec.similarity


def _in_corpus_order(matrix: np.ndarray, ids: List[str], corpus_ids: List[str]) -> np.ndarray:
    """The rows of ``matrix`` (one per id of ``ids``) for the corpus documents, in corpus order;
    a ConfigError naming corpus documents without a vector."""
    import numpy as np

    position = {doc_id: i for i, doc_id in enumerate(ids)}
    missing = [d for d in corpus_ids if d not in position]
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise ConfigError(
            f"document vectors are missing for {len(missing)} of {len(corpus_ids)}"
            f" corpus documents, e.g. {', '.join(map(repr, missing[:5]))}{more}"
        )
    # Vectors for ids outside the corpus are ignored; rows follow corpus order.
    order = np.fromiter((position[d] for d in corpus_ids), dtype=np.int64, count=len(corpus_ids))
    return matrix[order]


def _check_bm25_spec(spec: BM25Spec) -> None:
    """The multi_match type, fields and boosts the embedded BM25 can score."""
    if spec.multi_match_type not in MULTI_MATCH_TYPES:
        raise ConfigError(
            f"multi_match type {spec.multi_match_type!r} is not supported by the embedded "
            f"backend (supported: {', '.join(MULTI_MATCH_TYPES)})"
        )
    if not spec.fields:
        raise ConfigError("BM25 needs at least one field")
    for field, boost in spec.fields:
        if not (isinstance(boost, (int, float)) and math.isfinite(boost) and boost >= 0):
            raise ConfigError(f"field {field!r}: boost must be a number >= 0, got {boost!r}")


def _field_scores(
    terms: Dict[Optional[str], List[str]],
    indexes: List[Tuple[_FieldIndex, float, Optional[str]]],
    scale: float,
) -> List[np.ndarray]:
    """Each field's boosted BM25 scores of the query's terms under that field's analyzer (fields
    with no hit are left out)."""
    per_field = []
    for index, boost, key in indexes:
        scores = index.scores(terms[key]) if terms[key] else None
        if scores is not None:
            # (k1 + 1): Elasticsearch/OpenSearch score with LegacyBM25Similarity, which
            # multiplies Lucene's BM25 by (k1 + 1) (their explain shows it as "boost")
            scores *= boost * scale
            per_field.append(scores)
    return per_field


def _multi_match(per_field: List[np.ndarray], best: bool, tie: float) -> np.ndarray:
    """Field scores combined like ``multi_match``: ``best_fields`` (max + ``tie_breaker`` * the
    others) or ``most_fields`` (sum)."""
    import numpy as np

    if len(per_field) == 1:
        return per_field[0]
    if best:
        stacked = np.vstack(per_field)
        top = stacked.max(axis=0)
        return top + tie * (stacked.sum(axis=0) - top) if tie else top
    return np.sum(per_field, axis=0)


def _query_matrix(queries: List[Query], dim: int) -> np.ndarray:
    """The query vectors as a float32 matrix: every query has one, of ``dim`` dimensions, finite."""
    import numpy as np

    matrix = np.empty((len(queries), dim), dtype=np.float32)
    for i, query in enumerate(queries):
        if query.vector is None:
            raise ConfigError(f"query {query.qid!r} has no vector for the kNN stage")
        vec = np.asarray(query.vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != dim:
            raise ConfigError(
                f"query {query.qid!r}: vector has {vec.shape[0]} dimensions, the document vectors have {dim}"
            )
        matrix[i] = vec
    if not np.isfinite(matrix).all():
        raise ConfigError("query vectors contain NaN or infinite values")
    return matrix


def _knn_block_scores(
    similarity: str, block: np.ndarray, docs: np.ndarray, doc_sq: Optional[np.ndarray]
) -> np.ndarray:
    """The scores of a block of queries against every document; overflow is a ConfigError."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked just below
        raw = block @ docs.T  # (queries, docs) float32
        scores = _es_knn_scores(similarity, raw, block, doc_sq)
    if not np.isfinite(scores).all():
        raise ConfigError(
            f"kNN scores ({similarity}) overflow float32: the vectors are too large "
            "(Elasticsearch and OpenSearch score in float32 too); scale them down or use cosine"
        )
    return scores


def _unit_rows(matrix: np.ndarray, what: str, ids: Sequence[str]) -> np.ndarray:
    """Rows scaled to unit length, computed in float64 (a float32 norm overflows to inf for
    entries above ~1.8e19 and every cosine would come out 0). A zero vector has no
    direction and no cosine: a ConfigError naming the ids (Elasticsearch and OpenSearch
    refuse zero-magnitude vectors under cosine too)."""
    import numpy as np

    wide = matrix.astype(np.float64)
    norms = np.linalg.norm(wide, axis=1, keepdims=True)
    zero = np.flatnonzero(norms[:, 0] == 0.0)
    if zero.size:
        shown = ", ".join(repr(str(ids[i])) for i in zero[:5])
        more = f" and {zero.size - 5} more" if zero.size > 5 else ""
        raise ConfigError(
            f"{zero.size} {what} vector(s) are all zeros and have no cosine similarity: {shown}{more} "
            f"(an empty text embedded? Elasticsearch and OpenSearch refuse them too)"
        )
    return (wide / norms).astype(np.float32)


def _es_knn_scores(
    similarity: str, raw: np.ndarray, queries: np.ndarray, doc_sq: Optional[np.ndarray]
) -> np.ndarray:
    """Elasticsearch's ``_score`` for each similarity, from the raw dot products."""
    import numpy as np

    if similarity in ("cosine", "dot_product"):
        return (1.0 + raw.astype(np.float64)) / 2.0
    if similarity == "l2_norm":
        assert doc_sq is not None  # the squared norms of the documents, computed for l2_norm
        q_sq = np.einsum("ij,ij->i", queries, queries, dtype=np.float64)
        dist_sq = np.maximum(q_sq[:, None] + doc_sq[None, :] - 2.0 * raw, 0.0)
        return 1.0 / (1.0 + dist_sq)
    dots = raw.astype(np.float64)  # max_inner_product
    return np.where(dots < 0, 1.0 / (1.0 - np.minimum(dots, 0.0)), dots + 1.0)


def _import_bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise InfrastructureError(
            f"the embedded backend needs the 'bm25s' package ({exc}); pip install bm25s"
        ) from exc
    return bm25s


@contextlib.contextmanager
def _bm25s_warnings_only() -> Iterator[None]:
    """bm25s logs DEBUG/INFO records while indexing ("Building index from IDs"): they would fill
    the logs pytest captures under ``--log-level=DEBUG`` (issue #26). Its warnings still show."""
    lg = logging.getLogger("bm25s")
    level = lg.level
    lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        lg.setLevel(level)
