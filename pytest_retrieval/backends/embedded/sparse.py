"""Learned sparse retrieval on the embedded backend (``SparseSpec``): exact, with scipy.sparse.

The documents' vectors become one CSR matrix (documents x terms, float64), in corpus order; a
batch of queries (their IDF already applied by the runner) becomes another over the same
columns (a query term no document holds matches nothing and is dropped). Their product gives
each query's score of every document, ``sum_t q_t d_t``, which is densified one block of
queries at a time: a block holds at most ``SPARSE_BLOCK_BYTES`` (256 MiB) of float64 scores,
so memory stays bounded whatever the number of queries. Only documents scoring > 0 are hits
(a document sharing no term with the query is not returned, as on the engines); an empty
query has no hits. The top k is :func:`~.backend.top_k_indices` (``np.partition`` then a
stable sort): score descending, ties by corpus position, as every embedded retriever.

scipy is imported on first use (``pip install pytest-retrieval[sparse]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence

from ...errors import ConfigError
from ...types import DocSparseVectors, Query, Ranking, Run

if TYPE_CHECKING:  # pragma: no cover
    pass

#: the dense score block of a query batch stays under this many bytes (float64 cells)
SPARSE_BLOCK_BYTES = 256 * 1024 * 1024


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
        import numpy as np

        for q in queries:
            if q.sparse is None:
                raise ConfigError(f"query {q.qid!r} has no sparse vector for the sparse stage")
        run: Run = {}
        step = max(1, SPARSE_BLOCK_BYTES // (8 * max(1, self.n_docs)))
        for start in range(0, len(queries), step):
            block = queries[start : start + step]
            q_matrix = csr_of([q.sparse for q in block], self.columns, grow=False)
            scores = (q_matrix @ self.matrix_t).toarray()  # (block, documents) float64
            for j, query in enumerate(block):
                row = scores[j]
                chosen = top_k(row, k, np.flatnonzero(row > 0))
                run[query.qid] = Ranking([doc_id(i) for i in chosen], [float(row[i]) for i in chosen])
        return run


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
