"""Fusion sweeps end to end: tuning scores equal to metrics.evaluate on the fused ranking, the
selection on ties, input errors and warnings, and a full sweep on SciFact (BM25 from the
embedded engine + kNN from the shared MiniLM vectors, tuned on the BEIR ``train`` qrels,
evaluated on ``test``)."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from pytest_retrieval.fusion.semantics import fuse_runs
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.tuning.grid import SweepGrid
from pytest_retrieval.tuning.selection import restrict_qrels, split_queries, yaml_block
from pytest_retrieval.tuning.sweep import sweep
from pytest_retrieval.types import Ranking

from .helpers import random_runs, toy


def test_all_tied_variants_pick_the_rrf_default():
    same = {f"q{i}": Ranking(["a", "b", "c"], [3.0, 2.0, 1.0]) for i in range(4)}
    qrels = {f"q{i}": {"a": 1, "c": 1} for i in range(4)}
    res = sweep(
        {"x": same, "y": same}, restrict_qrels(qrels, ["q0", "q1"]), restrict_qrels(qrels, ["q2", "q3"])
    )
    assert len({v.tune for v in res.variants}) == 1
    assert res.best.label == "rrf k=60 window=3" and res.best.is_default
    assert res.comparison.keys() == {"weighted min_max arithmetic_mean [0.5, 0.5] window=3"}


def test_sweep_is_deterministic_and_tuning_scores_equal_evaluate():
    runs, qrels = toy()
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=1)
    tq, eq = restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids)
    for objective, kwargs in (
        ("ndcg@10", {}),
        ("ndcg@5", {"gain": "linear"}),
        ("mrr@10", {"relevance_threshold": 2}),
        ("recall@20", {}),
        ("map@10", {}),
        ("precision@3", {}),
        ("hit@1", {}),
        ("ndcg@10", {"depth": 5}),
    ):
        a = sweep(runs, tq, eq, objective=objective, **kwargs)
        b = sweep(runs, tq, eq, objective=objective, **kwargs)
        assert [v.tune for v in a.variants] == [v.tune for v in b.variants], objective
        assert a.best.label == b.best.label
        # the reported tuning score is evaluate() on the replayed variant
        run = fuse_runs(list(runs.values()), a.best.config, k=kwargs.get("depth", 100))
        g = kwargs.get("gain", "exp")
        assert (
            a.best.tune
            == evaluate(
                tq, run, [objective], gain=g, relevance_threshold=kwargs.get("relevance_threshold", 1)
            ).aggregate[objective]
        )


def test_objectives_without_a_cut_off_and_trec_ties():
    runs, qrels = toy(seed=3)
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=0)
    tq, eq = restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids)
    for objective, ties in (
        ("map", "engine"),
        ("r-precision", "engine"),
        ("judged@10", "engine"),
        ("ndcg@10", "trec"),
    ):
        res = sweep(runs, tq, eq, objective=objective, ties=ties, grid=SweepGrid(weight_step=0.5))
        best_run = fuse_runs(list(runs.values()), res.best.config, k=100)
        assert res.best.tune == evaluate(tq, best_run, [objective], ties=ties).aggregate[objective]


def test_sweep_input_errors():
    runs, qrels = toy()
    tq, eq = restrict_qrels(qrels, ["q1", "q2"]), restrict_qrels(qrels, ["q3", "q4"])
    with pytest.raises(ValueError, match="at least two"):
        sweep({"a": runs["lex"]}, tq, eq)
    with pytest.raises(ValueError, match="no candidates"):
        sweep([{}, {}], tq, eq)
    with pytest.raises(ValueError, match="tuning split has no query"):
        sweep(runs, {"q1": {"x": 0}}, eq)
    with pytest.raises(ValueError, match="depth"):
        sweep(runs, tq, eq, depth=0)
    with pytest.raises(ValueError, match="unknown metric"):
        sweep(runs, tq, eq, objective="ndgc@10")


def test_sweep_warns_about_unretrieved_queries_and_shallow_candidates():
    runs, qrels = toy()
    qrels["ghost"] = {"d1": 1}
    res = sweep(
        runs,
        restrict_qrels(qrels, ["q1", "q2", "ghost"]),
        restrict_qrels(qrels, ["q5", "q6"]),
        grid=SweepGrid(windows=(10, 500)),
    )
    assert any("'ghost'" in w for w in res.warnings)
    assert any("window 500" in w for w in res.warnings)
    assert res.grid_size == 2 * 74
    assert {d.config.window for d in res.defaults} == {500}


@pytest.fixture(scope="module")
def scifact_candidates(scifact_dir):
    SCIFACT = scifact_dir
    from pytest_retrieval.backends.base import BM25Spec, KnnSpec
    from pytest_retrieval.backends.embedded.backend import EmbeddedBackend
    from pytest_retrieval.io.beir import load_beir
    from pytest_retrieval.io.qrels import load_qrels
    from pytest_retrieval.models.embedders import PrecomputedEmbedder
    from pytest_retrieval.types import DocVectors, Query

    js = load_beir(SCIFACT, "test")
    train = load_qrels(SCIFACT / "qrels" / "train.tsv")
    vec = SCIFACT / "embeddings" / "all-MiniLM-L6-v2"
    emb = PrecomputedEmbedder(
        vec / "queries.npy", vec / "query_ids.txt", vec / "corpus.npy", vec / "corpus_ids.txt"
    )
    qids = [q for q in js.queries if q in js.qrels or q in train]
    qv = emb.embed_queries(qids, [js.queries[q] for q in qids])
    queries = [Query(q, js.queries[q], qv[i]) for i, q in enumerate(qids)]
    doc_ids = [d.doc_id for d in js.corpus]
    backend = EmbeddedBackend()
    backend.prepare(js.corpus, DocVectors(doc_ids, emb.embed_documents(doc_ids, []), emb.id))
    try:
        runs = {
            "bm25": backend.search_batch(BM25Spec(fields=(("title", 1.0), ("text", 1.0))), queries, 100),
            "dense": backend.search_batch(KnnSpec(similarity="cosine"), queries, 100),
        }
    finally:
        backend.close()
    return runs, train, js.qrels


def test_scifact_sweep_tune_on_train_evaluate_on_test(scifact_candidates):
    runs, train, test = scifact_candidates
    assert not set(train) & set(test)
    res = sweep(runs, train, test, metrics=("ndcg@10", "mrr@10", "recall@100"))
    assert res.grid_size == 74 and len(res.variants) == 74  # both defaults are in the grid
    assert res.tune_queries == 809 and res.eval_queries == 300
    assert all(0.0 < v.tune <= 1.0 for v in res.variants)
    assert {d.label for d in res.defaults} == {
        "rrf k=60 window=100",
        "weighted min_max arithmetic_mean [0.5, 0.5] window=100",
    }
    for d in res.defaults:
        assert res.best.tune >= d.tune
        assert set(res.evaluation[d.label].aggregate) == {"ndcg@10", "mrr@10", "recall@100"}
    assert res.ranked()[0] is res.best
    # the best variant's evaluation numbers are plain evaluate() on the fused test run
    run = fuse_runs([runs["bm25"], runs["dense"]], res.best.config, k=100)
    assert res.eval_metrics() == evaluate(test, run, ["ndcg@10", "mrr@10", "recall@100"]).aggregate
    text = res.summary()
    assert res.best.label in text and "evaluation split" in text
    doc = json.loads(json.dumps(res.as_dict()))
    assert len(doc["variants"]) == 74 and doc["best"] == res.best.label
    assert yaml.safe_load(doc["yaml"])["hybrid"]["of"] == ["bm25", "dense"]
    assert "phase_results_processors" in doc["opensearch_pipeline"]


def test_scifact_sweep_on_a_seeded_half_of_test(scifact_candidates):
    runs, _, test = scifact_candidates
    tune_ids, eval_ids = split_queries(list(test), 0.5, seed=0)
    res = sweep(
        runs,
        restrict_qrels(test, tune_ids),
        restrict_qrels(test, eval_ids),
        grid=SweepGrid(windows=(50, 100)),
    )
    assert res.grid_size == 148 and res.tune_queries == 150 and res.eval_queries == 150
    assert all(res.best.tune >= d.tune for d in res.defaults)
    again = sweep(
        runs,
        restrict_qrels(test, tune_ids),
        restrict_qrels(test, eval_ids),
        grid=SweepGrid(windows=(50, 100)),
    )
    assert again.best.label == res.best.label and [v.tune for v in again.variants] == [
        v.tune for v in res.variants
    ]


def test_three_sub_retrievers_simplex_grid_with_elasticsearch_rrf():
    rng = random.Random(11)
    runs = random_runs(rng, 3, n_queries=40, pool=30, max_len=15)
    runs = [{q: r for q, r in run.items() if max(map(abs, r.scores), default=0) < 1e18} for run in runs]
    qrels = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2]) for j in rng.sample(range(30), 5)} for i in range(40)}
    t, e = split_queries(list(qrels), 0.5, seed=2)
    grid = SweepGrid(rrf_semantics="elasticsearch", weight_step=0.25)
    res = sweep(
        {"a": runs[0], "b": runs[1], "c": runs[2]},
        restrict_qrels(qrels, t),
        restrict_qrels(qrels, e),
        grid=grid,
    )
    assert res.grid_size == grid.size(3) == 8 + 6 * 15
    assert len(res.variants) == grid.size(3) + 1  # equal thirds are not on the 0.25 grid
    assert res.defaults[1].config.weights == (1 / 3, 1 / 3, 1 / 3)
    assert yaml.safe_load(res.yaml_block())["hybrid"]["of"] == ["a", "b", "c"]
    block = yaml.safe_load(yaml_block(res.defaults[1].config, ["a", "b", "c"]))["hybrid"]
    assert tuple(block["weights"]) == (1 / 3, 1 / 3, 1 / 3)  # exact round trip


@pytest.mark.parametrize("average_over", ["relevant", "judged", "run"])
def test_the_sweep_averages_queries_as_the_suite_does(average_over):
    """A suite under ``average_over: run`` (profile trec's default) or ``judged`` gets its sweep's
    tuning scores and evaluation means over the same queries as its gates: a query judged
    without a relevant document counts (as 0) under ``judged`` and ``run``; one in no run
    counts (as 0) under ``relevant`` and ``judged``, not under ``run`` (trec_eval)."""
    runs, qrels = toy()
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=1)
    tq, eq = restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids)
    doc = next(iter(next(iter(runs.values()))[tune_ids[0]].doc_ids))
    tq = {
        **tq,
        tune_ids[0]: {doc: 0},
    }  # judged, nothing relevant: 0 under judged/run, left out under relevant
    eq = {**eq, eval_ids[0]: {doc: 0}}
    res = sweep(runs, tq, eq, objective="ndcg@10", average_over=average_over)
    best = fuse_runs(list(runs.values()), res.best.config, k=100)  # a query in no run: absent
    assert res.best.tune == evaluate(tq, best, ["ndcg@10"], average_over=average_over).aggregate["ndcg@10"]
    assert (
        res.evaluation[res.best.label].aggregate["ndcg@10"]
        == evaluate(eq, best, ["ndcg@10"], average_over=average_over).aggregate["ndcg@10"]
    )
    relevant = evaluate(eq, best, ["ndcg@10"]).aggregate["ndcg@10"]
    if average_over == "relevant":
        assert res.evaluation[res.best.label].aggregate["ndcg@10"] == relevant
    elif average_over == "judged":  # one more query, at 0 (under run, q31 in no run leaves instead)
        assert res.evaluation[res.best.label].aggregate["ndcg@10"] < relevant


def test_an_unknown_average_over_is_refused_before_any_work():
    runs, qrels = toy()
    tune_ids, eval_ids = split_queries(list(qrels), 0.5, seed=1)
    with pytest.raises(ValueError, match="average_over must be one of relevant, judged, run; got 'all'"):
        sweep(runs, restrict_qrels(qrels, tune_ids), restrict_qrels(qrels, eval_ids), average_over="all")
