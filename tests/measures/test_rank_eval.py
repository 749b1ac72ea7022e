"""``measures/rank_eval.py``: the ``_rank_eval`` metric bodies and the mapping of its answers
onto the plugin's values, checked against ``evaluate`` on hand-made rankings. The engine's side
is transcribed here from OpenSearch's module (``PrecisionAtK``, ``RecallAtK``,
``MeanReciprocalRank``, ``DiscountedCumulativeGain``, ``ExpectedReciprocalRank``), so each
difference of definition is visible: precision over the hits returned, nDCG's ideal cut at the
hits returned, ERR's ``maximum_relevance``, negative grades. ``tests/engines/test_rank_eval_parity.py``
checks the same against the real module on SciFact and NFCorpus."""

from __future__ import annotations

import math
from typing import Dict, List, Optional

import pytest

from pytest_retrieval.measures import rank_eval
from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.types import Ranking

GRADES = {"a": 2, "b": 0, "c": 1, "d": 2, "n": -1}


def _ratings(hits: List[str], grades: Dict[str, int], k: int) -> List[Optional[int]]:
    sent = {r["_id"]: r["rating"] for r in rank_eval.ratings("i", grades)}
    return [sent.get(h) for h in hits[:k]]


def _engine_detail(metric: str, hits: List[str], grades: Dict[str, int], k: int, max_rel: int) -> dict:
    """What the module computes for one query (``details.<id>``), transcribed from its sources."""
    rated = _ratings(hits, grades, k)
    sent = [max(0, g) for g in grades.values()]
    out: dict = {"hits": [{"hit": {"_index": "i", "_id": h}} for h in hits[:k]]}
    if metric == "precision":  # relevant / retrieved, unrated retrieved (ignore_unlabeled: false)
        rel = sum(1 for r in rated if r is not None and r >= 1)
        out |= {"metric_score": rel / len(rated) if rated else 0.0}
        out["metric_details"] = {"precision": {"relevant_docs_retrieved": rel, "docs_retrieved": len(rated)}}
    elif metric == "recall":
        relevant = sum(1 for g in sent if g >= 1)
        out["metric_score"] = sum(1 for r in rated if r is not None and r >= 1) / relevant
    elif metric == "mrr":
        first = next((i for i, r in enumerate(rated, 1) if r is not None and r >= 1), None)
        out["metric_score"] = 1.0 / first if first else 0.0
    elif metric == "ndcg":

        def dcg(rs):
            return sum(
                (2**r - 1) / (math.log(i + 1) / math.log(2)) for i, r in enumerate(rs, 1) if r is not None
            )

        d = dcg(rated)
        ideal = dcg(sorted(sent, reverse=True)[: min(len(rated), len(sent))])  # cut at the hits
        out["metric_score"] = d / ideal if ideal else 0.0
        out["metric_details"] = {"dcg": {"dcg": d, "ideal_dcg": ideal, "unrated_docs": rated.count(None)}}
    else:  # err
        p, err = 1.0, 0.0
        for i, r in enumerate(rated, 1):
            if r is not None:
                prob = (2**r - 1) / 2**max_rel
                err += p * prob / i
                p *= 1 - prob
        out["metric_score"] = err
    return out


RANKINGS = {
    "full": ["x", "a", "b", "y", "c", "n", "z", "w", "v", "u", "d"],  # more hits than k
    "short": ["c", "a"],  # fewer hits than k (and than relevant documents): precision, nDCG ideal
    "none": ["x", "y"],
}


@pytest.mark.parametrize("shape", list(RANKINGS))
@pytest.mark.parametrize(
    "name", ["precision@10", "recall@10", "mrr@10", "ndcg@10", "err@10", "ndcg@2", "err@3"]
)
def test_mapping_gives_the_plugins_value(name, shape):
    metric = parse_metric(name)
    hits = RANKINGS[shape]
    body, why = rank_eval.metric_body(metric, rank_eval.RankEvalOptions(1, "exp", max(GRADES.values())))
    assert body is not None and not why
    plugin = evaluate({"q": GRADES}, {"q": Ranking(hits, [float(-i) for i in range(len(hits))])}, [metric])
    detail = _engine_detail(metric.name, hits, GRADES, metric.k, 2)
    assert rank_eval.ranked_ids(detail) == hits[: metric.k]
    assert rank_eval.plugin_value(metric, detail, GRADES) == pytest.approx(
        plugin.per_query[name]["q"], abs=1e-12
    )
    if shape == "short" and metric.name in ("precision", "ndcg") and metric.k == 10:
        assert detail["metric_score"] != pytest.approx(plugin.per_query[name]["q"])  # the difference is real


def test_metric_bodies_carry_the_suites_choices():
    opts = rank_eval.RankEvalOptions(relevance_threshold=2, gain="exp", max_grade=3)
    body, _ = rank_eval.metric_body(parse_metric("precision@5"), opts)
    assert body == {"precision": {"k": 5, "relevant_rating_threshold": 2, "ignore_unlabeled": False}}
    assert rank_eval.metric_body(parse_metric("err@10"), opts)[0] == {
        "expected_reciprocal_rank": {"k": 10, "maximum_relevance": 3}
    }
    assert rank_eval.metric_body(parse_metric("ndcg@10"), opts)[0] == {"dcg": {"k": 10, "normalize": True}}


@pytest.mark.parametrize(
    "name, options, words",
    [
        ("ndcg@10", rank_eval.RankEvalOptions(gain="linear"), "profile trec"),
        ("ndcg@10", rank_eval.RankEvalOptions(custom_gains=True), "judgments.gains"),
        ("ndcg'@10", rank_eval.RankEvalOptions(), "judged-documents-only"),
        ("recall", rank_eval.RankEvalOptions(), "always cuts at k"),
        ("map@10", rank_eval.RankEvalOptions(), "no such measure"),
        ("err@10", rank_eval.RankEvalOptions(max_grade=0), "maximum_relevance"),
    ],
)
def test_what_has_no_rank_eval_form_is_named(name, options, words):
    body, why = rank_eval.metric_body(parse_metric(name), options)
    assert body is None and words in why and name in why


def test_request_body_and_negative_grades():
    body = rank_eval.request_body(
        [("q1", {"query": {"match_all": {}}, "size": 100}, {"a": 2, "n": -3})], "idx", {"m": 1}
    )
    (req,) = body["requests"]
    assert req["request"] == {"query": {"match_all": {}}}  # the metric's k is the size
    assert req["ratings"] == [
        {"_index": "idx", "_id": "a", "rating": 2},
        {"_index": "idx", "_id": "n", "rating": 0},
    ]
    assert body["metric"] == {"m": 1}


def test_an_answer_without_the_details_maps_to_none():
    assert rank_eval.plugin_value(parse_metric("precision@10"), {"metric_score": 0.5}, {}) is None
    assert rank_eval.plugin_value(parse_metric("mrr@10"), {"metric_score": "x"}, {}) is None
    assert (
        rank_eval.plugin_value(
            parse_metric("ndcg@10"), {"metric_score": 1.0, "metric_details": {"dcg": {}}}, {}
        )
        is None
    )
