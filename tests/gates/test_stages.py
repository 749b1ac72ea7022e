"""stages.py: the stage table, on hand-built results (every number known)."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest

from pytest_retrieval.gates.floors import Floor
from pytest_retrieval.gates.stages import stage_rows


def _retriever(kind, ndcg, mrr=None, p95=None, of=(), window=None, recall=None):
    agg = {"ndcg@10": ndcg}
    if mrr is not None:
        agg["mrr@10"] = mrr
    latency = NS(p95=p95, samples_ms=[p95]) if p95 is not None else None
    return NS(
        kind=kind,
        evaluation=NS(aggregate=agg),
        latency=latency,
        candidate_recall=dict(recall or {}),
        window=window,
        of=list(of),
    )


def _result(retrievers, floors=(), configs=None, metrics=("ndcg@10", "mrr@10")):
    configs = configs or {}
    model = NS(retrievers={n: configs.get(n, NS(type=r.kind, of=r.of)) for n, r in retrievers.items()})
    suite = NS(metrics=list(metrics), floors=list(floors), model=model)
    return NS(suite=suite, retrievers=retrievers, inputs=lambda name: list(retrievers[name].of))


def test_a_single_retriever_has_no_stage_table():
    assert stage_rows(_result({"bm25": _retriever("bm25", 0.5)})) == []


def test_deltas_against_bm25_and_against_the_best_input():
    rs = {
        "bm25": _retriever("bm25", 0.50, mrr=0.40, p95=2.0),
        "dense": _retriever("knn", 0.60, mrr=0.55, p95=1.0),
        "rrf": _retriever(
            "rrf",
            0.65,
            mrr=0.60,
            p95=4.0,
            of=("bm25", "dense"),
            window=100,
            recall={"bm25": 0.9, "dense": 1.0},
        ),
    }
    bm25, dense, rrf = stage_rows(_result(rs))
    assert (bm25.delta_vs_bm25, bm25.delta_vs_input, bm25.best_input) == (None, None, None)
    assert dense.delta_vs_bm25 == pytest.approx(0.10) and dense.builds_on == []
    assert rrf.builds_on == ["bm25", "dense"] and rrf.best_input == "dense"  # the better input by ndcg@10
    assert rrf.delta_vs_input == pytest.approx(0.05) and rrf.delta_vs_bm25 == pytest.approx(0.15)
    assert rrf.delta_p95_ms == pytest.approx(3.0) and rrf.p95_ms == 4.0  # against dense's p95
    assert rrf.candidate_recall == {"bm25": 0.9, "dense": 1.0} and rrf.window == 100
    assert rrf.metric == "ndcg@10" and rrf.mrr == 0.60 and rrf.verdict is None  # verdicts: rerankers only


def test_headline_metric_falls_back_to_the_first_and_no_bm25_means_no_bm25_delta():
    rs = {"a": _retriever("knn", 0.5), "b": _retriever("rrf", 0.7, of=("a",))}
    for r in rs.values():
        r.evaluation.aggregate = {"recall@100": r.evaluation.aggregate["ndcg@10"]}
    a, b = stage_rows(_result(rs, metrics=("recall@100",)))
    assert b.metric == "recall@100" and b.mrr is None
    assert a.delta_vs_bm25 is None and b.delta_vs_bm25 is None
    assert b.delta_vs_input == pytest.approx(0.2)


def test_a_reranker_earns_its_cost_with_enough_lift_within_its_p95_budget():
    rs = {
        "bm25": _retriever("bm25", 0.50, p95=1.0),
        "rerank": _retriever("rerank", 0.53, p95=20.0, of=("bm25",)),
    }
    floors = [Floor("rerank", "p95_ms", "<=", 50.0)]
    _, row = stage_rows(_result(rs, floors=floors))
    assert row.verdict == "earning its cost (lift +0.0300 >= 0.01, p95 20.0 ms <= budget 50 ms)"
    cfg = {"rerank": NS(type="rerank", of=["bm25"], min_lift=0.05, p95_budget_ms=10.0)}
    _, row = stage_rows(_result(rs, floors=floors, configs=cfg))  # the config's own budget wins
    assert row.verdict == "not earning its cost (lift +0.0300 < 0.05, p95 20.0 ms > budget 10 ms)"
    rs["rerank"].latency = None
    _, row = stage_rows(_result(rs, floors=floors))
    assert row.verdict == (
        "not earning its cost (lift +0.0300 >= 0.01, p95 not measured against budget 50 ms)"
    )
    _, row = stage_rows(_result(rs), min_lift=0.04)  # no budget anywhere: lift alone
    assert row.verdict == "not earning its cost (lift +0.0300 < 0.04)"


def test_as_dict_writes_nan_as_null():
    rs = {"bm25": _retriever("bm25", math.nan), "x": _retriever("knn", 0.5)}
    row = stage_rows(_result(rs))[0].as_dict()
    assert row["value"] is None and row["name"] == "bm25" and row["builds_on"] == []
