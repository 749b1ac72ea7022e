"""Learned sparse retrieval (#25) on every server of the matrix: Elasticsearch 8.19/9.5
(``sparse_vector`` field and query) and OpenSearch 2.19/3.6 (``rank_features`` field,
``neural_sparse`` query with raw ``query_tokens``), on the whole of SciFact (5,183 abstracts,
300 test queries).

The vectors are made here, deterministically, from the corpus text: BM25-like document term
weights (k1 0.9, b 0.4) of a simple tokenizer that keeps dotted terms ("p.0.05", "e.g"), at
most 100 terms per document; query weights are the query's term counts x the non-negative
BM25 IDF over the document vectors (IDF applied query-side, as the plugin does). The exact
reference is computed here with scipy: score = Q @ D.T in float64.

Both engines keep document weights as Lucene FeatureField term frequencies: 9 significant
bits (``search_engine/sparse.py``). So the test checks two things:
a. the engine's scores are the exact dot products with the truncated document weights (the
   query is built right): every top-10 hit within 1e-5 relative, and the top 10 is the exact
   top 10 of the truncated weights (ties as sets);
b. what the truncation costs against the exact float scores: top-10 overlap, largest relative
   score error and nDCG@10 difference over the 300 queries, recorded as test properties
   (``--junitxml``) and printed; bounded loosely so a regression shows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np
import pytest

from pytest_retrieval.backends.base import SparseSpec
from pytest_retrieval.backends.search_engine.sparse import PRECISION_BITS
from pytest_retrieval.errors import ConfigError
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import DocSparseVectors, Query, Ranking, Run
from tests.engines.conftest import Instance, backend_class

pytestmark = pytest.mark.engines

K = 10
REL_TOL = 1e-5
MAX_TERMS = 100
ENCODER = "bm25-like test vectors"
SPEC = SparseSpec(encoder_id=ENCODER)
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[a-z0-9]+)*")


@dataclass
class SparseCollection:
    doc_ids: List[str]
    doc_vectors: List[Dict[str, float]]
    queries: List[Query]
    qrels: Dict[str, Dict[str, int]]
    exact: np.ndarray  # (queries, docs) float64 scores with the weights sent
    truncated: np.ndarray  # the same with document weights as FeatureField keeps them


def truncate(weights: np.ndarray) -> np.ndarray:
    """FeatureField's stored value: float32 with the low 15 mantissa bits cleared."""
    bits = np.asarray(weights, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF8000)
    return bits.view(np.float32).astype(np.float64)


def _doc_vectors(texts: List[str]) -> List[Dict[str, float]]:
    counts = [Counter(_TOKEN.findall(t.lower())) for t in texts]
    lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
    avg = float(lengths.mean())
    k1, b = 0.9, 0.4
    out = []
    for c, dl in zip(counts, lengths):
        w = {t: tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avg)) for t, tf in c.items()}
        top = sorted(w.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TERMS]
        out.append(dict(top))
    return out


def _matrix(vectors: List[Dict[str, float]], vocab: Dict[str, int]):
    from scipy.sparse import csr_matrix

    rows, cols, vals = [], [], []
    for i, v in enumerate(vectors):
        for t, w in v.items():
            if t in vocab:
                rows.append(i)
                cols.append(vocab[t])
                vals.append(w)
    return csr_matrix((vals, (rows, cols)), shape=(len(vectors), len(vocab)), dtype=np.float64)


@pytest.fixture(scope="module")
def sparse_scifact(scifact_full) -> SparseCollection:
    docs = scifact_full.documents
    doc_ids = [str(d.doc_id) for d in docs]
    vectors = _doc_vectors([f"{d.fields.get('title', '')} {d.fields.get('text', '')}" for d in docs])
    df = Counter(t for v in vectors for t in v)
    n = len(vectors)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    queries = []
    for q in scifact_full.queries:
        counts = Counter(_TOKEN.findall(q.text.lower()))
        weights = {t: float(np.float32(c * idf[t])) for t, c in counts.items() if t in idf}
        queries.append(Query(q.qid, q.text, sparse=weights))
    vocab = {t: i for i, t in enumerate(sorted(df))}
    d = _matrix(vectors, vocab)
    q = _matrix([x.sparse for x in queries], vocab)
    exact = (q @ d.T).toarray()
    d_trunc = d.copy()
    d_trunc.data = truncate(d_trunc.data)
    truncated = (q @ d_trunc.T).toarray()
    return SparseCollection(doc_ids, vectors, queries, scifact_full.qrels, exact, truncated)


@pytest.fixture(scope="module")
def sparse_index(sparse_scifact: SparseCollection, scifact_full):
    """``sparse_index(instance)``: a throwaway SciFact index with the sparse field (no dense
    vectors: not needed here), built once per instance for the module."""
    built = {}

    def get(instance: Instance):
        if instance.key not in built:
            # sparse: true (execution.plan's hint): one build, with the vectors
            backend = backend_class(instance.name)(
                {"hosts": [instance.url]}, {"suite": "sparse parity", "sparse": True}
            )
            built[instance.key] = backend
            backend.prepare(scifact_full.documents, None)
            backend.prepare_sparse(
                DocSparseVectors(sparse_scifact.doc_ids, sparse_scifact.doc_vectors, ENCODER)
            )
        return built[instance.key]

    yield get
    for backend in built.values():
        backend.close()


def _exact_run(scores: np.ndarray, doc_ids: List[str], queries: List[Query], k: int) -> Run:
    run: Run = {}
    for i, q in enumerate(queries):
        row = scores[i]
        top = np.argsort(-row, kind="stable")[:k]
        run[q.qid] = Ranking.from_pairs([(doc_ids[j], float(row[j])) for j in top if row[j] > 0])
    return run


def _check_exact_with_truncation(
    run: Run, data: SparseCollection, row_of: Dict[str, int]
) -> Tuple[float, int]:
    """a. every hit's score is the truncated dot product (1e-5 relative) and the hits are the
    truncated top 10 (ties as sets); returns (max relative error, queries checked)."""
    worst = 0.0
    for i, q in enumerate(data.queries):
        ref = data.truncated[i]
        ranking = run[q.qid]
        expected_hits = min(K, int((ref > 0).sum()))
        assert len(ranking.doc_ids) == expected_hits, (q.qid, len(ranking.doc_ids), expected_hits)
        if not expected_hits:
            continue
        tenth = np.sort(ref)[::-1][expected_hits - 1]
        for doc, score in zip(ranking.doc_ids, ranking.scores):
            want = ref[row_of[doc]]
            rel = abs(score - want) / max(abs(want), 1e-12)
            worst = max(worst, rel)
            assert rel <= REL_TOL, (q.qid, doc, score, want)
            assert want >= tenth * (1 - REL_TOL), (q.qid, doc, "not in the exact top 10")
    return worst, len(data.queries)


def _against_exact(run: Run, data: SparseCollection, row_of: Dict[str, int]) -> Dict[str, float]:
    """b. what the 9-bit document weights cost against exact float scores."""
    exact = _exact_run(data.exact, data.doc_ids, data.queries, K)
    overlaps, rel_errors = [], []
    for i, q in enumerate(data.queries):
        got, want = run[q.qid].doc_ids[:K], exact[q.qid].doc_ids[:K]
        if want:
            overlaps.append(len(set(got) & set(want)) / len(want))
        for doc, score in zip(run[q.qid].doc_ids, run[q.qid].scores):
            e = data.exact[i][row_of[doc]]
            rel_errors.append(abs(score - e) / e)
    n_engine = evaluate(data.qrels, run, ["ndcg@10"]).aggregate["ndcg@10"]
    n_exact = evaluate(data.qrels, exact, ["ndcg@10"]).aggregate["ndcg@10"]
    identical = sum(1 for q in data.queries if run[q.qid].doc_ids[:K] == exact[q.qid].doc_ids[:K])
    return {
        "top10_overlap": float(np.mean(overlaps)),
        "top10_identical_queries": identical,
        "max_rel_score_error": float(max(rel_errors)),
        "ndcg10_engine": float(n_engine),
        "ndcg10_exact": float(n_exact),
        "ndcg10_diff": float(n_engine - n_exact),
    }


def test_sparse_parity_scifact(engine: Instance, sparse_index, sparse_scifact, record_property):
    backend = sparse_index(engine)
    data = sparse_scifact
    row_of = {d: i for i, d in enumerate(data.doc_ids)}
    run = backend.search_batch(SPEC, data.queries, K)
    assert set(run) == {q.qid for q in data.queries}

    worst, n = _check_exact_with_truncation(run, data, row_of)
    figures = _against_exact(run, data, row_of)
    figures["max_rel_error_vs_truncated"] = worst
    for name, value in figures.items():
        record_property(f"sparse_{name}", value)
        print(f"{engine.id} sparse {name} = {value}")
    # the truncation: < 2^-8 per weight; rankings nearly unchanged (measured: see the docs)
    assert figures["max_rel_score_error"] < 2.0**-8
    assert figures["top10_overlap"] > 0.97
    assert abs(figures["ndcg10_diff"]) < 0.01

    facts = backend.describe()["sparse"]
    assert facts == {
        "sparse_embedding": {
            "type": "sparse_vector" if engine.name == "elasticsearch" else "rank_features",
            "score_precision": facts["sparse_embedding"]["score_precision"],
            "precision_bits": PRECISION_BITS,
        }
    }
    assert f"({PRECISION_BITS} bits)" in facts["sparse_embedding"]["score_precision"]


def test_sparse_search_one_empty_and_large_weights(engine: Instance, sparse_index, sparse_scifact):
    """search_one sends the same query; a query without weights is a zero-hit query; weights
    above OpenSearch's linear-query limit (64) give the same ranking, scores scaled."""
    backend = sparse_index(engine)
    q = sparse_scifact.queries[0]
    batch = backend.search_batch(SPEC, [q], K)[q.qid]
    one = backend.search_one(SPEC, q, K).ranking
    assert one.doc_ids == batch.doc_ids and one.scores == batch.scores

    empty = Query("empty", "", sparse={"zz-no-such-term": 0.0})
    assert backend.search_batch(SPEC, [empty], K)["empty"].doc_ids == []

    big = Query(q.qid, q.text, sparse={t: w * 100.0 for t, w in q.sparse.items()})
    scaled = backend.search_batch(SPEC, [big], K)[q.qid]
    assert scaled.doc_ids == batch.doc_ids
    assert np.allclose(scaled.scores, [s * 100.0 for s in batch.scores], rtol=1e-5)

    dotted = next(t for v in sparse_scifact.doc_vectors for t in v if "." in t)
    hits = backend.search_batch(SPEC, [Query("dot", dotted, sparse={dotted: 1.0})], K)["dot"]
    holders = {d for d, v in zip(sparse_scifact.doc_ids, sparse_scifact.doc_vectors) if dotted in v}
    assert hits.doc_ids and set(hits.doc_ids) <= holders

    with pytest.raises(ConfigError, match="negative"):
        backend.search_batch(SPEC, [Query("neg", "", sparse={"cell": -1.0})], K)
    with pytest.raises(ConfigError, match="no sparse vector"):
        backend.search_batch(SPEC, [Query("none", "x")], K)
    with pytest.raises(ConfigError, match="other encoder"):
        backend.search_batch(SparseSpec(encoder_id="other encoder"), [q], K)


def test_sparse_existing_index(engine: Instance, sparse_index, sparse_scifact):
    """An existing index is only read: its field must exist and be of the engine's sparse
    type (a clear ConfigError otherwise); prepare_sparse writes nothing to it."""
    built = sparse_index(engine)
    q = sparse_scifact.queries[1]
    mine = built.search_batch(SPEC, [q], K)[q.qid]
    backend = backend_class(engine.name)({"hosts": [engine.url]}, {"name": built.index_name})
    try:
        backend.prepare(None, None)
        backend.prepare_sparse(DocSparseVectors(["x"], [{"never": 1.0}], "e"))  # ignored: read-only
        theirs = backend.search_batch(SparseSpec(field="sparse_embedding"), [q], K)[q.qid]
        assert theirs.doc_ids == mine.doc_ids and theirs.scores == mine.scores
        assert "sparse_embedding" in backend.describe()["sparse"]
        with pytest.raises(ConfigError, match=r"field 'title' .* is text: a sparse retriever needs"):
            backend.search_batch(SparseSpec(field="title"), [q], K)
        with pytest.raises(ConfigError, match="has no field 'nope'"):
            backend.search_batch(SparseSpec(field="nope"), [q], K)
        assert backend.existing_ids(["x"]) == set()
    finally:
        backend.close()


def test_sparse_two_encoders_and_rebuilds(engine: Instance):
    """Each encoder's vectors get their own field; odd term names work; a BM25 stop-word change (which rebuilds the
    throwaway index) keeps them; vectors of documents outside the corpus are refused."""
    from pytest_retrieval.backends.base import BM25Spec
    from pytest_retrieval.types import Document

    docs = [Document(f"d{i}", {"title": f"doc {i}", "text": "the cell and the gene"}) for i in range(20)]
    backend = backend_class(engine.name)({"hosts": [engine.url]}, {"suite": "sparse encoders"})
    try:
        backend.prepare(docs, None)
        ids = [d.doc_id for d in docs]
        odd = ["p.q", "x y", "##s", "c/d", "\u03a9", "a..b", ".lead", "trail.", "*", "_id"]
        vectors_a = [{"a": 1.0 + i, **({odd[i]: 2.0} if i < len(odd) else {})} for i in range(20)]
        backend.prepare_sparse(DocSparseVectors(ids, vectors_a, "enc-a"))
        backend.prepare_sparse(DocSparseVectors(ids, [{"a": 20.0 - i} for i in range(20)], "enc-b"))
        q = Query("q", "", sparse={"a": 1.0})
        a = backend.search_batch(SparseSpec(encoder_id="enc-a"), [q], 3)["q"]
        b = backend.search_batch(SparseSpec(encoder_id="enc-b"), [q], 3)["q"]
        assert a.doc_ids == ["d19", "d18", "d17"] and a.scores == [20.0, 19.0, 18.0]
        assert b.doc_ids == ["d0", "d1", "d2"] and b.scores == [20.0, 19.0, 18.0]
        assert set(backend.describe()["sparse"]) == {"sparse_embedding", "sparse_embedding-2"}
        # terms a field path could not hold are plain terms (dots, spaces, '#', '/', '*')
        odd_queries = [Query(f"odd{i}", "", sparse={t: 1.0}) for i, t in enumerate(odd)]
        found = backend.search_batch(SparseSpec(encoder_id="enc-a"), odd_queries, 3)
        assert {q: r.doc_ids for q, r in found.items()} == {f"odd{i}": [f"d{i}"] for i in range(len(odd))}
        with pytest.raises(ConfigError, match=r"encoder 'enc-c'"):
            backend.search_batch(SparseSpec(encoder_id="enc-c"), [q], 3)

        before = backend.index_name
        backend.search_batch(BM25Spec(stopwords="english"), [Query("t", "cell")], 3)
        assert backend.index_name != before  # rebuilt: the vectors came along
        assert backend.search_batch(SparseSpec(encoder_id="enc-b"), [q], 3)["q"].doc_ids == b.doc_ids

        with pytest.raises(ConfigError, match=r"1 document\(s\) with a sparse vector are not in the corpus"):
            backend.prepare_sparse(DocSparseVectors(["d1", "ghost"], [{"a": 1.0}, {"a": 1.0}], "enc-d"))
    finally:
        backend.close()


def test_sparse_announced_index_is_built_once(engine: Instance, caplog):
    """With ``sparse: true`` the throwaway index is built once, at first use after
    prepare_sparse, with every encoder's vectors; without prepare_sparse it is built at first
    use too; closed before, never built."""
    import logging

    from pytest_retrieval.backends.base import BM25Spec
    from pytest_retrieval.types import Document

    docs = [Document(f"d{i}", {"title": f"doc {i}", "text": "cell"}) for i in range(5)]
    make = backend_class(engine.name)
    caplog.set_level(logging.INFO, logger="pytest_retrieval.backends")
    with make({"hosts": [engine.url]}, {"suite": "sparse once", "sparse": True}) as backend:
        backend.prepare(docs, None)
        backend.prepare_sparse(DocSparseVectors([d.doc_id for d in docs], [{"t": 1.0}] * 5, "e"))
        backend.prepare_sparse(DocSparseVectors([d.doc_id for d in docs], [{"u": 1.0}] * 5, "e2"))
        assert not [r for r in caplog.records if "created throwaway index" in r.getMessage()]
        assert backend.describe()["doc_count"] == 5  # built at first use, with both fields
        created = [r for r in caplog.records if "created throwaway index" in r.getMessage()]
        assert len(created) == 1 and not [r for r in caplog.records if "rebuilding" in r.getMessage()]
        assert set(backend.describe()["sparse"]) == {"sparse_embedding", "sparse_embedding-2"}
        hits = backend.search_batch(SparseSpec(encoder_id="e"), [Query("q", "", sparse={"t": 2.0})], 10)
        assert sorted(hits["q"].doc_ids) == [d.doc_id for d in docs] and set(hits["q"].scores) == {2.0}
    with make({"hosts": [engine.url]}, {"suite": "sparse once", "sparse": True}) as backend:
        backend.prepare(docs, None)  # no sparse vectors after all: built when first searched
        assert backend.search_batch(BM25Spec(), [Query("q", "cell")], 10)["q"].doc_ids
    caplog.clear()
    with make({"hosts": [engine.url]}, {"suite": "sparse once", "sparse": True}) as backend:
        backend.prepare(docs, None)
    assert not [r for r in caplog.records if "created throwaway index" in r.getMessage()]
