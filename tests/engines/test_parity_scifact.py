"""Parity on the whole of SciFact (BEIR test split: 300 queries, 5,183 abstracts, MiniLM vectors),
on every server of the matrix (Elasticsearch 8.19 and 9.5, OpenSearch 2.19 and 3.6).

a. Client-side fusion (``pytest_retrieval.fusion.semantics``, semantics ``opensearch``) of the BM25 and
   kNN leaves equals OpenSearch's server-side ``hybrid`` query fused by a search pipeline:
   RRF (``score-ranker-processor``, rank constants 60 and 5) and every
   ``normalization-processor`` technique x combination, same top 10, scores to 1e-6, for all
   300 queries, on both OpenSearch majors.
b. Embedded BM25 agrees with each engine's BM25 on the same spec.
c. Embedded exact kNN agrees with each engine's HNSW kNN (float vectors: the throwaway
   index pins plain HNSW, see ``search_engine/versions.py``), scores on the engines' scale.

Each instance's index is built once per session (``scifact_index`` in conftest, 1 shard) and
deleted at the end. The measured numbers are printed and recorded as test properties
(``--junitxml``).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Tuple

import numpy as np
import pytest

from pytest_retrieval.backends.base import BM25Spec, KnnSpec
from pytest_retrieval.backends.opensearch import normalization_pipeline, rrf_pipeline
from pytest_retrieval.fusion.config import FusionConfig
from pytest_retrieval.fusion.semantics import fuse_runs
from pytest_retrieval.measures import parity
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking, Run

# one xdist group with the other users of the full SciFact index (conftest: scifact_index),
# so one worker builds it per engine
pytestmark = [pytest.mark.engines, pytest.mark.xdist_group("scifact_index")]

K = 10  # gated cut-off: top 10 compared
WINDOW = 100  # sub-query window: leaf depth = hybrid pagination_depth (kNN k follows it)
WEIGHTS = (0.3, 0.7)
SCORE_TOL = 1e-6
BM25 = BM25Spec(fields=(("title", 1.0), ("text", 1.0)), multi_match_type="best_fields")
# num_candidates left to the backend: max(2 x window, 100) both for the kNN leaf searched to
# WINDOW and for the hybrid's kNN sub-query with pagination_depth=WINDOW.
KNN = KnnSpec(similarity="cosine")


@pytest.fixture(scope="module")
def leaf_run(scifact_full) -> Callable:
    """Runs of a leaf spec on a backend, computed once per module: ``leaf_run(backend, spec)``."""
    cache: Dict[Tuple[int, object, int], Run] = {}

    def get(backend, spec, k: int = WINDOW) -> Run:
        key = (id(backend), spec, k)
        if key not in cache:
            cache[key] = backend.search_batch(spec, scifact_full.queries, k)
            assert len(cache[key]) == len(scifact_full.queries)
        return cache[key]

    return get


def _report(record_property, name: str, value) -> None:
    record_property(name, value)
    print(f"{name} = {value}")


# --------------------------------------------------------------------------- a. fusion parity


def compare_top(server: Ranking, client: Ranking, k: int) -> Tuple[float, int, int]:
    """``parity.compare_top`` (tie groups compared as sets), asserting agreement. Returns
    (max |score diff|, tie groups, tie groups in another order)."""
    c = parity.compare_top(server, client, k, score_tolerance=SCORE_TOL)
    assert c.mismatch is None, c.mismatch
    return c.max_score_diff, c.tie_groups, c.tie_groups_reordered


FUSIONS = [
    pytest.param(
        rrf_pipeline(k),
        FusionConfig(method="rrf", semantics="opensearch", rank_constant=k, window=WINDOW),
        id=f"rrf-{k}",
    )
    for k in (60, 5)
]  # a non-default constant: the server must apply it
FUSIONS += [
    pytest.param(
        normalization_pipeline(norm, comb, WEIGHTS),
        FusionConfig(
            method="weighted",
            semantics="opensearch",
            normalization=norm,
            combination=comb,
            weights=WEIGHTS,
            window=WINDOW,
        ),
        id=f"{norm}-{comb}",
    )
    for norm in ("min_max", "l2")
    for comb in ("arithmetic_mean", "geometric_mean", "harmonic_mean")
]


def test_hybrid_sub_queries_are_the_leaf_queries(os_instance, scifact_index, scifact_full):
    """The hybrid query's sub-queries are exactly the leaves' queries, each kept to the same
    window: pagination_depth = the leaves' depth, and the kNN sub-query's k (HNSW candidates,
    also the number of kNN hits) the one a kNN leaf searched to that depth uses."""
    scifact_os = scifact_index(os_instance)
    q = scifact_full.queries[0]
    hybrid = scifact_os.hybrid_body(BM25, KNN, q, K, pagination_depth=WINDOW)
    assert hybrid["size"] == K and hybrid["query"]["hybrid"]["pagination_depth"] == WINDOW
    bm25_sub, knn_sub = hybrid["query"]["hybrid"]["queries"]
    assert bm25_sub == scifact_os.build_body(BM25, q, WINDOW)["query"]
    assert knn_sub == scifact_os.build_body(KNN, q, WINDOW)["query"]


@pytest.mark.parametrize("pipeline, config", FUSIONS)
def test_client_fusion_equals_opensearch_hybrid(
    os_instance, scifact_index, scifact_full, leaf_run, pipeline, config, record_property
):
    scifact_os = scifact_index(os_instance)
    queries = scifact_full.queries
    bm25 = leaf_run(scifact_os, BM25)
    knn = leaf_run(scifact_os, KNN)
    client = fuse_runs([bm25, knn], config)
    server = scifact_os.search_hybrid(BM25, KNN, queries, K, pipeline, pagination_depth=WINDOW)
    assert list(server) == [q.qid for q in queries]

    max_diff, ties, reordered, failures = 0.0, 0, 0, []
    for q in queries:
        try:
            d, t, r = compare_top(server[q.qid], client[q.qid], K)
        except AssertionError as exc:
            failures.append(f"query {q.qid}: {exc}")
            continue
        max_diff, ties, reordered = max(max_diff, d), ties + t, reordered + r
    _report(record_property, "max_score_diff", max_diff)
    _report(record_property, "tie_groups_in_top10", ties)
    _report(record_property, "tie_groups_in_another_order", reordered)
    assert not failures, f"{len(failures)} of {len(queries)} queries differ; first: " + "\n".join(
        failures[:3]
    )
    # the comparison is not vacuous: the two sub-queries disagree, so fusion reorders them
    assert sum(server[q.qid].doc_ids != bm25[q.qid].doc_ids[:K] for q in queries) > len(queries) // 2


# --------------------------------------------------------------------------- b./c. leaf parity


def _ndcg10(qrels, run: Run) -> float:
    return evaluate(qrels, {q: r.top(K) for q, r in run.items()}, ["ndcg@10"]).aggregate["ndcg@10"]


def _overlap(a: Run, b: Run) -> float:
    return float(np.mean([len(set(a[q].doc_ids[:K]) & set(b[q].doc_ids[:K])) / K for q in a]))


def test_embedded_bm25_agrees_with_engine(
    engine, scifact_index, scifact_embedded, scifact_full, leaf_run, record_property
):
    engine_name = engine.name
    engine = scifact_index(engine)
    ours = leaf_run(scifact_embedded, BM25)
    theirs = leaf_run(engine, BM25)
    n_ours, n_theirs = _ndcg10(scifact_full.qrels, ours), _ndcg10(scifact_full.qrels, theirs)
    overlap = _overlap(ours, theirs)
    # same scale (the engines' LegacyBM25Similarity multiplies by k1 + 1); the rest is Lucene's
    # one-byte field length (SmallFloat) against bm25s' exact length
    rel: List[float] = []
    for q in theirs:
        mine = dict(ours[q].pairs())
        rel += [abs(s - mine[d]) / s for d, s in theirs[q].top(K).pairs() if d in mine]
    _report(record_property, "ndcg10_embedded", round(n_ours, 5))
    _report(record_property, f"ndcg10_{engine_name}", round(n_theirs, 5))
    _report(record_property, "ndcg10_delta", round(n_ours - n_theirs, 5))
    _report(record_property, "top10_overlap", round(overlap, 4))
    _report(record_property, "median_rel_score_diff", float(np.median(rel)))
    assert abs(n_ours - n_theirs) <= 0.005
    assert overlap >= 0.95
    assert np.median(rel) < 0.02


def test_embedded_knn_agrees_with_engine(
    engine, scifact_index, scifact_embedded, scifact_full, leaf_run, record_property
):
    engine_name = engine.name
    engine = scifact_index(engine)
    exact = leaf_run(scifact_embedded, KNN)
    hnsw = leaf_run(engine, KNN)
    n_exact, n_hnsw = _ndcg10(scifact_full.qrels, exact), _ndcg10(scifact_full.qrels, hnsw)
    overlap = _overlap(exact, hnsw)
    # both engines score cosine as (1 + cos) / 2: Elasticsearch's dense_vector cosine, and on
    # OpenSearch the lucene engine's Lucene VectorSimilarityFunction.COSINE (k-NN SpaceType
    # COSINESIMIL -> COSINE; the 1 / (1 + d) translation is for the native engines only)
    diffs: List[float] = []
    for q in hnsw:
        want = dict(exact[q].pairs())
        diffs += [abs(s - want[d]) for d, s in hnsw[q].top(K).pairs() if d in want]
    _report(record_property, "ndcg10_embedded_exact", round(n_exact, 5))
    _report(record_property, f"ndcg10_{engine_name}_hnsw", round(n_hnsw, 5))
    _report(record_property, "ndcg10_delta", round(n_exact - n_hnsw, 5))
    _report(record_property, "top10_overlap", round(overlap, 4))
    _report(record_property, "max_score_diff", max(diffs))
    assert abs(n_exact - n_hnsw) <= 0.005
    assert len(diffs) >= 0.95 * K * len(hnsw)
    assert max(diffs) <= 1e-5
