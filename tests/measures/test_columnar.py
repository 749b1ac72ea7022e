"""The columnar engine at scale against trec_eval, trec_eval's float32 score ties, and
evaluation from prebuilt columns (``measures/columnar.py``)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import pytrec_eval

from pytest_retrieval.measures.columnar import QrelsColumns, RunColumns
from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking

from .test_metrics_trec_eval import OUR_METRICS, PAIRS, TREC_MEASURES, assert_matches, random_case, trec_input


def test_ten_thousand_random_queries_match_trec_eval():
    # ties, zero-hit rankings, queries missing from the run, unjudged run queries, short runs
    qrels, run = random_case(1013, 10_000, 3)
    assert sum(1 for q in qrels if q not in run) > 300
    assert sum(1 for r in run.values() if len(r) == 0) > 200
    ours = evaluate(qrels, run, OUR_METRICS, gain="linear", ties="trec")
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES).evaluate(tr)
    assert assert_matches(ours, trec, PAIRS, "10k") > 8_000 * len(PAIRS)
    assert set(ours.missing) == {q for q in tq if q not in run or len(run[q]) == 0}


def _float32_ties_case(seed: int, n_queries: int):
    """Scores that differ as float64 but often round to the same float32."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        qid = f"q{i}"
        docs = [f"d{j}" for j in rng.sample(range(200), rng.randint(2, 40))]
        base = [rng.choice([1.0, 3.5, 17.25, 1234.5, rng.uniform(0, 50)]) for _ in docs]
        # a relative step of 1e-9 (below float32's 6e-8) or 1e-6 (above it)
        scores = [b * (1 + rng.choice([0, 1e-9, 2e-9, -1e-9, 1e-6])) for b in base]
        if rng.random() < 0.7:
            pairs = sorted(zip(docs, scores), key=lambda p: -p[1])
            docs, scores = [d for d, _ in pairs], [s for _, s in pairs]
        run[qid] = Ranking(docs, scores)
        qrels[qid] = {d: rng.choice([0, 1, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, len(docs)))}
        if not any(g > 0 for g in qrels[qid].values()):
            qrels[qid][docs[0]] = 1
    return qrels, run


def test_scores_equal_as_float32_are_tied_like_trec_eval():
    qrels, run = _float32_ties_case(7, 3000)
    # the case exercises the rule: many pairs differ as float64, equal as float32
    pairs = 0
    for r in run.values():
        s = np.asarray(r.scores)
        pairs += int(
            (
                (s[:, None] != s[None, :]) & (s.astype(np.float32)[:, None] == s.astype(np.float32)[None, :])
            ).sum()
        )
    assert pairs > 1000
    ours = evaluate(qrels, run, OUR_METRICS, gain="linear", ties="trec")
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES).evaluate(tr)
    assert assert_matches(ours, trec, PAIRS, "float32") == len(ours.evaluated) * len(PAIRS)


def test_float32_tie_worked_example():
    qrels = {"q": {"a": 1}}
    run = {"q": Ranking(["a", "b"], [1.0000000001, 1.0])}
    # tied as float32: trec_eval orders by doc id descending, so b comes first
    assert evaluate(qrels, run, ["mrr"], ties="trec").aggregate["mrr"] == 0.5
    assert (
        pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": {"a": 1.0000000001, "b": 1.0}})[
            "q"
        ]["recip_rank"]
        == 0.5
    )
    assert evaluate(qrels, run, ["mrr"], ties="engine").aggregate["mrr"] == 1.0
    # a float32 step apart: not tied
    run = {"q": Ranking(["a", "b"], [1.0000001, 1.0])}
    assert evaluate(qrels, run, ["mrr"], ties="trec").aggregate["mrr"] == 1.0


@pytest.mark.parametrize("ties", ["engine", "trec"])
def test_prebuilt_columns_give_the_same_evaluation(ties):
    qrels, run = random_case(77, 800, 3, duplicates=True)
    metrics = ["ndcg@10", "map", "recall@20", "judged@5", "r-precision"]
    direct = evaluate(qrels, run, metrics, ties=ties)
    qc = QrelsColumns.from_qrels(qrels)
    rc = RunColumns.from_run(run, qc, ties=ties)
    warm = evaluate(qc, rc, metrics, ties=ties)
    assert warm.per_query == direct.per_query
    assert warm.aggregate == direct.aggregate
    assert (warm.evaluated, warm.missing, warm.no_relevant, warm.unjudged_queries) == (
        direct.evaluated,
        direct.missing,
        direct.no_relevant,
        direct.unjudged_queries,
    )
    # the same columns evaluated twice (cached ideal ranking): same numbers
    assert evaluate(qc, rc, metrics, ties=ties).per_query == direct.per_query


def test_columns_built_for_engine_ties_refuse_trec_ties():
    qrels, run = random_case(5, 50, 3)
    qc = QrelsColumns.from_qrels(qrels)
    rc = RunColumns.from_run(run, qc, ties="engine")
    with pytest.raises(ValueError, match="trec_sorted"):
        evaluate(qc, rc, ["map"], ties="trec")
