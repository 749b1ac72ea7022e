"""Aggregates as trec_eval takes them (``average_over``, measures/aggregate.py), checked against
pytrec_eval per query and averaged: random runs with ties, zero-hit and missing queries, queries
judged without a relevant document, -1 grades, graded qrels, long and unicode ids."""

from __future__ import annotations

import math
from typing import Dict

import pytest
import pytrec_eval

from pytest_retrieval.measures.aggregate import averaging_note
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking

from .test_metrics_trec_eval import random_case, trec_order

MEASURES = {
    "map": "map",
    "ndcg@10": "ndcg_cut_10",
    "precision@5": "P_5",
    "mrr": "recip_rank",
    "recall@10": "recall_10",
}
TOL = 1e-12


def _unicode(qrels, run):
    """Every id made long and non-ASCII (the order of ids kept: a prefix shared by all)."""
    pre = "ünïcødé-" + "x" * 200 + "-"
    q = {pre + k: {pre + d: g for d, g in j.items()} for k, j in qrels.items()}
    r = {pre + k: Ranking([pre + d for d in v.doc_ids], list(v.scores)) for k, v in run.items()}
    return q, r


def _pytrec(qrels, run, level):
    judged = {q: dict(j) for q, j in qrels.items() if j}  # every judged query, relevant or not
    scores = {q: dict(trec_order(r)) for q, r in run.items()}
    return judged, pytrec_eval.RelevanceEvaluator(
        judged, set(MEASURES.values()) | {"ndcg_cut.10", "P.5", "recall.10"}, relevance_level=level
    ).evaluate(scores)


@pytest.mark.parametrize(
    "seed,max_grade,level,unicode", [(1, 3, 1, False), (2, 3, 2, True), (4, 1, 1, False)]
)
def test_run_and_judged_match_pytrec_eval_and_trec_eval_c(seed, max_grade, level, unicode):
    qrels, run = random_case(seed, 500, max_grade)
    if unicode:
        qrels, run = _unicode(qrels, run)
    judged, trec = _pytrec(qrels, run, level)
    for mode in ("run", "judged"):
        ev = evaluate(
            qrels,
            run,
            list(MEASURES),
            gain="linear",
            ties="trec",
            relevance_threshold=level,
            average_over=mode,
        )
        # run: the judged queries of the run (pytrec_eval's own set, empty rankings included);
        # judged: every judged query, one absent from the run scoring 0 (trec_eval -c)
        expected_set = set(trec) if mode == "run" else set(judged)
        assert set(ev.evaluated) == expected_set and ev.judged == len(judged)
        assert set(ev.not_in_run) == set(judged) - set(run)
        for ours, theirs in MEASURES.items():
            for q in ev.evaluated:
                want = trec[q][theirs] if q in trec else 0.0
                assert abs(ev.per_query[ours][q] - want) <= TOL, (mode, ours, q)
            total = math.fsum(trec[q][theirs] for q in trec)  # absent queries add 0
            assert abs(ev.aggregate[ours] - total / len(expected_set)) <= TOL, (mode, ours)
    # the plugin's default leaves out the queries without a relevant judgment, and says so
    ev = evaluate(qrels, run, ["map"], ties="trec", relevance_threshold=level)
    assert ev.average_over == "relevant" and not set(ev.no_relevant) & set(ev.evaluated)
    assert f"{len(ev.no_relevant)} judged without a relevant document left out" in averaging_note(ev)


def test_trec_eval_repro_num_q_2_map_half():
    # issue #24: qrels 1 0 a 1 / 2 0 b 0, run 1 Q0 a 1 1 t / 2 Q0 b 1 1 t: trec_eval num_q 2, map 0.5
    qrels = {"1": {"a": 1}, "2": {"b": 0}}
    run = {"1": Ranking(["a"], [1.0]), "2": Ranking(["b"], [1.0])}
    for mode in ("run", "judged"):
        ev = evaluate(qrels, run, ["map"], average_over=mode)
        assert len(ev.evaluated) == 2 and ev.aggregate["map"] == 0.5
    ev = evaluate(qrels, run, ["map"])
    assert ev.evaluated == ["1"] and ev.aggregate["map"] == 1.0
    assert averaging_note(ev) == (
        "averaged over 1 of 2 judged queries: 1 judged without a relevant document left out (average_over: relevant)"
    )


def test_missing_query_skipped_by_run_counted_by_judged():
    qrels: Dict[str, Dict[str, int]] = {"1": {"a": 1}, "2": {"b": 1}, "3": {"c": 1}}
    run = {"1": Ranking(["a"], [1.0]), "3": Ranking([], [])}  # 2 absent, 3 in the run without hits
    by_mode = {m: evaluate(qrels, run, ["mrr"], average_over=m) for m in ("relevant", "judged", "run")}
    assert by_mode["run"].evaluated == ["1", "3"] and by_mode["run"].aggregate["mrr"] == 0.5
    assert by_mode["judged"].aggregate["mrr"] == pytest.approx(1 / 3)
    assert by_mode["relevant"].aggregate["mrr"] == pytest.approx(1 / 3)
    assert by_mode["run"].missing == ["2", "3"] and by_mode["run"].not_in_run == ["2"]
    assert "1 absent from the run left out (average_over: run" in averaging_note(by_mode["run"])


def test_depth_is_trec_eval_M_and_gains_are_ir_measures_ndcg_gains():
    import ir_measures  # a test extra: a broken install fails, never skips

    qrels, run = random_case(7, 300, 3)
    qrels = {q: {d: max(g, 0) for d, g in j.items()} for q, j in qrels.items() if j}
    judged, _ = _pytrec(qrels, run, 1)
    cut = {q: dict(trec_order(r)[:5]) for q, r in run.items()}
    trec = pytrec_eval.RelevanceEvaluator(judged, {"map", "P_10"}).evaluate(cut)
    ev = evaluate(qrels, run, ["map", "precision@10"], ties="trec", depth=5, average_over="run")
    for q in ev.evaluated:
        assert abs(ev.per_query["map"][q] - trec[q]["map"]) <= TOL
        assert abs(ev.per_query["precision@10"][q] - trec[q]["P_10"]) <= TOL
    gains = {0: 0, 1: 1, 2: 3, 3: 9}  # ir_measures hands them to pytrec_eval as grades: integers
    measure = ir_measures.nDCG(gains=gains) @ 10
    scored = {q: dict(trec_order(r)) for q, r in run.items()}
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], judged, scored)}
    ev = evaluate(qrels, run, ["ndcg@10"], ties="trec", gains=gains, average_over="run")
    shared = [q for q in theirs if q in ev.per_query["ndcg@10"]]
    assert len(shared) > 200
    for q in shared:
        assert abs(ev.per_query["ndcg@10"][q] - theirs[q]) <= 1e-9, q


def test_threshold_0_counts_grade_0_relevant_and_negative_not():
    qrels = {"1": {"a": 0, "b": -1, "c": 2}}
    run = {"1": Ranking(["b", "a", "x", "c"], [4.0, 3.0, 2.0, 1.0])}
    ev = evaluate(qrels, run, ["mrr", "precision@4", "recall@4"], relevance_threshold=0)
    assert ev.per_query["mrr"]["1"] == 0.5  # a (grade 0) at rank 2; b (-1) is not relevant
    assert ev.per_query["precision@4"]["1"] == 0.5 and ev.per_query["recall@4"]["1"] == 1.0


def test_suite_default_follows_the_profile(tmp_path):
    from pytest_retrieval.config.schema import EvaluationConfig
    from pytest_retrieval.measures.aggregate import average_over_of

    assert average_over_of(EvaluationConfig()) == "relevant"
    assert average_over_of(EvaluationConfig(profile="trec")) == "run"  # trec_eval 9.0.8's num_q and means
    assert average_over_of(EvaluationConfig(profile="trec", average_over="judged")) == "judged"
    assert average_over_of(EvaluationConfig(average_over="run")) == "run"
