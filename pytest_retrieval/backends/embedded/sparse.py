"""Learned sparse retrieval on the embedded backend (``SparseSpec``): exact, with scipy.sparse.

The documents' vectors become one CSR matrix (documents x terms, float64), in corpus order; a
batch of queries (their IDF already applied by the runner) becomes another over the same
columns (a query term no document holds matches nothing and is dropped). Their sparse product
gives each query's score of the documents sharing a term with it, ``sum_t q_t d_t``, one block
of queries at a time: the block's scores never exceed ``SPARSE_BLOCK_BYTES`` (256 MiB, counting
16 bytes per query-document cell, what a cell costs at most in the sparse product; a dense copy
is never made), so memory stays bounded whatever the number of queries. Only documents scoring
> 0 are hits (a document sharing no term with the query is not returned, as on the engines); an
empty query has no hits. The top k of a query's row is :func:`~.backend.top_k_indices`
(``np.partition`` then a stable sort) over its documents in corpus order: score descending,
ties by corpus position, as every embedded retriever.

scipy is imported on first use (``pip install pytest-retrieval[sparse]``)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ...errors import ConfigError
from ...types import DocSparseVectors, Query, Ranking, Run

#: the scores of a block of queries stay under this many bytes: a block holds at most
#: SPARSE_BLOCK_BYTES / (BYTES_PER_CELL x documents) queries, BYTES_PER_CELL being what one
#: (query, document) score costs at most in the sparse product (float64 + int64 index)
SPARSE_BLOCK_BYTES = 256 * 1024 * 1024
BYTES_PER_CELL = 16


def import_scipy_sparse() -> Any:
    try:
        import scipy.sparse as sp
    except ImportError:
        raise ConfigError(
            "sparse retrievers on the embedded backend need scipy: pip install pytest-retrieval[sparse]"
        ) from None
    return sp


def csr_of(vectors: Sequence[Mapping[str, float]], columns: Dict[str, int], grow: bool) -> Any:
    """The vectors as a CSR matrix over ``columns`` (term -> column); ``grow`` adds new terms,
    else terms without a column are dropped."""
    import numpy as np

    sp = import_scipy_sparse()
    indptr = [0]
    indices: List[int] = []
    data: List[float] = []
    for vector in vectors:
        for term, weight in vector.items():
            column = columns.setdefault(term, len(columns)) if grow else columns.get(term)
            if column is not None and weight > 0:
                indices.append(column)
                data.append(float(weight))
        indptr.append(len(indices))
    matrix = sp.csr_matrix(
        (
            np.asarray(data, dtype=np.float64),
            np.asarray(indices, dtype=np.int64),
            np.asarray(indptr, dtype=np.int64),
        ),
        shape=(len(vectors), max(1, len(columns))),
    )
    matrix.sum_duplicates()
    return matrix


class SparseIndex:
    """One encoder's document vectors as a CSR matrix (rows in corpus order)."""

    def __init__(self, doc_sparse: DocSparseVectors, corpus_ids: Sequence[str]):
        ids = [str(d) for d in doc_sparse.doc_ids]
        if len(ids) != len(doc_sparse.vectors):
            raise ConfigError(f"{len(doc_sparse.vectors)} sparse document vectors for {len(ids)} ids")
        position = {d: i for i, d in enumerate(ids)}
        missing = [d for d in corpus_ids if d not in position]
        if missing:
            more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
            raise ConfigError(
                f"sparse document vectors are missing for {len(missing)} of {len(corpus_ids)} corpus "
                f"documents, e.g. {', '.join(map(repr, missing[:5]))}{more}"
            )
        vectors = [doc_sparse.vectors[position[d]] for d in corpus_ids]  # corpus order
        self.columns: Dict[str, int] = {}
        self.matrix_t = csr_of(vectors, self.columns, grow=True).T.tocsr()  # terms x documents
        self.encoder_id = doc_sparse.encoder_id
        self.n_docs = len(corpus_ids)

    def search(
        self, queries: List[Query], k: int, doc_id: Callable[[int], str], top_k: Callable[..., Any]
    ) -> Run:
        for q in queries:
            if q.sparse is None:
                raise ConfigError(f"query {q.qid!r} has no sparse vector for the sparse stage")
        run: Run = {}
        step = max(1, SPARSE_BLOCK_BYTES // (BYTES_PER_CELL * max(1, self.n_docs)))
        for start in range(0, len(queries), step):
            block = queries[start : start + step]
            scores = csr_of([q.sparse for q in block], self.columns, grow=False) @ self.matrix_t
            scores.sort_indices()  # each row's documents in corpus order: ties by position
            for j, query in enumerate(block):
                lo, hi = scores.indptr[j], scores.indptr[j + 1]
                docs, values = scores.indices[lo:hi], scores.data[lo:hi]
                chosen = top_k(values, k, _positive(values))
                run[query.qid] = Ranking(
                    [doc_id(int(docs[i])) for i in chosen], [float(values[i]) for i in chosen]
                )
        return run


def _positive(values: Any) -> Any:
    import numpy as np

    return np.flatnonzero(values > 0)


def sparse_index(indexes: Dict[str, SparseIndex], encoder_id: str) -> SparseIndex:
    """The index of ``encoder_id`` (the only one when the spec names none)."""
    if not indexes:
        raise ConfigError("sparse retrieval on the embedded backend needs the documents' sparse vectors")
    index: Optional[SparseIndex] = indexes.get(encoder_id)
    if index is None and not encoder_id and len(indexes) == 1:
        index = next(iter(indexes.values()))
    if index is None:
        raise ConfigError(
            f"no sparse document vectors of encoder {encoder_id!r} (prepared: {', '.join(indexes)})"
        )
    return index
