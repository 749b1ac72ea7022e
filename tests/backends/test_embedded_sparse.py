"""The embedded engine's learned sparse retrieval against a straightforward scipy reference:
identical rankings (ties by corpus position), whatever the block size; its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_retrieval.backends.base import SparseSpec
from pytest_retrieval.backends.embedded import sparse as sparse_module
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.types import DocSparseVectors, Document, Query


def random_vectors(rng, n: int, vocab: int, nnz: int):
    out = []
    for _ in range(n):
        terms = rng.choice(vocab, size=rng.integers(0, nnz + 1), replace=False)
        # small integer weights: many exact ties
        out.append({f"t{t}": float(rng.integers(1, 4)) for t in terms})
    return out


def reference(doc_vectors, query_vectors, k):
    """score = Q @ D.T with scipy, every document scoring > 0 sorted by (-score, position)."""
    import scipy.sparse as sp

    vocab = {t: i for i, t in enumerate(sorted({t for v in doc_vectors + query_vectors for t in v}))}

    def csr(vectors):
        rows, cols, vals = [], [], []
        for r, v in enumerate(vectors):
            for t, w in v.items():
                rows.append(r)
                cols.append(vocab[t])
                vals.append(w)
        return sp.csr_matrix((vals, (rows, cols)), shape=(len(vectors), len(vocab)))

    scores = (csr(query_vectors) @ csr(doc_vectors).T).toarray()
    out = []
    for row in scores:
        hits = [i for i in range(len(row)) if row[i] > 0]
        hits.sort(key=lambda i: (-row[i], i))
        out.append([(i, row[i]) for i in hits[:k]])
    return out


@pytest.mark.parametrize("block_bytes", [sparse_module.SPARSE_BLOCK_BYTES, 16 * 300 * 3])
def test_identical_rankings_to_the_scipy_reference(monkeypatch, block_bytes: int) -> None:
    monkeypatch.setattr(sparse_module, "SPARSE_BLOCK_BYTES", block_bytes)  # 3 queries per block
    rng = np.random.default_rng(11)
    docs = random_vectors(rng, 300, 40, 8)
    queries = random_vectors(rng, 25, 45, 5)  # some terms no document holds, some empty queries
    ids = [f"d{i}" for i in range(300)]
    backend = EmbeddedBackend()
    backend.prepare([Document(i, {"text": "x"}) for i in ids], None)
    backend.prepare_sparse(DocSparseVectors(ids[::-1], docs[::-1], "enc"))  # any order: by id
    qs = [Query(f"q{i}", "", sparse=v) for i, v in enumerate(queries)]
    run = backend.search_batch(SparseSpec(encoder_id="enc"), qs, 10)
    for q, want in zip(qs, reference(docs, queries, 10)):
        got = run[q.qid]
        assert got.doc_ids == [ids[i] for i, _ in want]
        assert got.scores == pytest.approx([s for _, s in want], rel=1e-12)
    assert any(not v for v in queries) and all(not run[q.qid].doc_ids for q in qs if not q.sparse)
    one = backend.search_one(SparseSpec(encoder_id="enc"), qs[1], 10)
    assert one.ranking.doc_ids == run["q1"].doc_ids
    assert backend.describe()["sparse_terms"] == {"enc": 40}


def test_refusals() -> None:
    backend = EmbeddedBackend()
    backend.prepare([Document("d1", {"text": "x"}), Document("d2", {"text": "y"})], None)
    with pytest.raises(ConfigError, match="needs the documents' sparse vectors"):
        backend.search_batch(SparseSpec(), [Query("q", "", sparse={"a": 1.0})], 10)
    with pytest.raises(
        ConfigError, match="sparse document vectors are missing for 1 of 2 corpus documents, e.g. 'd2'"
    ):
        backend.prepare_sparse(DocSparseVectors(["d1"], [{"a": 1.0}], "enc"))
    backend.prepare_sparse(DocSparseVectors(["d1", "d2"], [{"a": 1.0}, {}], "enc"))
    with pytest.raises(ConfigError, match="no sparse document vectors of encoder 'other'"):
        backend.search_batch(SparseSpec(encoder_id="other"), [Query("q", "", sparse={"a": 1.0})], 10)
    with pytest.raises(ConfigError, match="query 'q' has no sparse vector"):
        backend.search_batch(SparseSpec(encoder_id="enc"), [Query("q", "")], 10)
    assert backend.search_batch(SparseSpec(), [Query("q", "", sparse={"a": 2.0})], 10)["q"].doc_ids == ["d1"]
