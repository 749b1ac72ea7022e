"""The metric engine on small cases computed by hand."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from math import log2

import numpy as np
import pytest

from pytest_retrieval.measures.metrics import Evaluation, Metric, evaluate, parse_metric
from pytest_retrieval.types import Ranking


def ranking(*doc_ids: str, scores=None) -> Ranking:
    if scores is None:
        scores = [float(len(doc_ids) - i) for i in range(len(doc_ids))]
    return Ranking(list(doc_ids), [float(s) for s in scores])


def one(qrels_q, rank, metric, **kw) -> float:
    ev = evaluate({"q": qrels_q}, {"q": rank}, [metric], **kw)
    return ev.per_query[str(parse_metric(metric))]["q"]


# --------------------------------------------------------------------------- worked example


def test_design_worked_example_ndcg_at_5():
    # grades in ranked order 3, 2, 0, 0, 1; exp gain 2^rel - 1 -> 7, 3, 0, 0, 1
    qrels = {"q": {"a": 3, "b": 2, "c": 0, "d": 0, "e": 1}}
    run = {"q": ranking("a", "b", "c", "d", "e")}
    value = evaluate(qrels, run, ["nDCG@5"]).per_query["ndcg@5"]["q"]
    dcg = 7 / log2(2) + 3 / log2(3) + 0 + 0 + 1 / log2(6)  # 9.279642...
    idcg = 7 / log2(2) + 3 / log2(3) + 1 / log2(4)  # ideal order 3, 2, 1: 9.392789...
    assert round(value, 3) == 0.988
    assert value == pytest.approx(0.98796, abs=1e-5)
    assert abs(value - dcg / idcg) <= 1e-15
    assert abs(dcg - 9.279642) < 1e-6 and abs(idcg - 9.392789) < 1e-6


def test_linear_gain_on_the_worked_example():
    qrels = {"a": 3, "b": 2, "c": 0, "d": 0, "e": 1}
    value = one(qrels, ranking("a", "b", "c", "d", "e"), "ndcg@5", gain="linear")
    expected = (3 + 2 / log2(3) + 1 / log2(6)) / (3 + 2 / log2(3) + 1 / log2(4))
    assert abs(value - expected) <= 1e-15


# --------------------------------------------------------------------------- each metric

# d1..d6 retrieved in that order; relevant: d2 (1), d4 (2) and dX (1, not retrieved);
# d6 judged non-relevant. R = 3 at threshold 1, R = 1 (only d4) at threshold 2.
QRELS = {"d2": 1, "d4": 2, "d6": 0, "dX": 1}
RUN = ranking("d1", "d2", "d3", "d4", "d5", "d6")

HAND = {
    "mrr": 1 / 2,
    "mrr@1": 0.0,
    "mrr@2": 1 / 2,
    "recall@1": 0.0,
    "recall@2": 1 / 3,
    "recall@5": 2 / 3,
    "recall@100": 2 / 3,
    "precision@2": 1 / 2,
    "p@5": 2 / 5,
    "precision@10": 2 / 10,  # past the end: padded with non-relevant docs
    "map": (1 / 2 + 2 / 4) / 3,
    "map@3": (1 / 2) / 3,
    "map@4": (1 / 2 + 2 / 4) / 3,
    "r-precision": 1 / 3,  # top R = 3: only d2
    "hit@1": 0.0,
    "success@2": 1.0,
    "judged@4": 2 / 4,  # d2, d4
    "judged@6": 3 / 6,  # d6 (grade 0) counts as judged
    "judged@10": 3 / 10,
    # exp gains: d2 -> 1, d4 -> 3; ideal 3, 1, 1 (dX counts in the ideal ordering)
    "ndcg@1": 0.0,
    "ndcg@3": (1 / log2(3)) / (3 + 1 / log2(3) + 1 / log2(4)),
    "ndcg": (1 / log2(3) + 3 / log2(5)) / (3 + 1 / log2(3) + 1 / log2(4)),
}

HAND_THRESHOLD_2 = {  # only d4 is relevant, R = 1; nDCG ignores the threshold
    "mrr": 1 / 4,
    "mrr@3": 0.0,
    "recall@3": 0.0,
    "recall@4": 1.0,
    "precision@4": 1 / 4,
    "map": 1 / 4,
    "r-precision": 0.0,
    "hit@3": 0.0,
    "hit@4": 1.0,
    "judged@4": 2 / 4,
    "ndcg": HAND["ndcg"],
}


@pytest.mark.parametrize("metric,expected", sorted(HAND.items()))
def test_metric_by_hand(metric, expected):
    assert abs(one(QRELS, RUN, metric) - expected) <= 1e-15


@pytest.mark.parametrize("metric,expected", sorted(HAND_THRESHOLD_2.items()))
def test_metric_by_hand_with_relevance_threshold_2(metric, expected):
    assert abs(one(QRELS, RUN, metric, relevance_threshold=2) - expected) <= 1e-15


def test_all_metrics_in_one_call_equal_one_at_a_time():
    ev = evaluate({"q": QRELS}, {"q": RUN}, list(HAND))
    for metric, expected in HAND.items():
        assert abs(ev.per_query[str(parse_metric(metric))]["q"] - expected) <= 1e-15


def test_r_precision_reads_past_the_other_cutoffs():
    # R = 3, the third relevant doc is at rank 3: r-precision must look beyond @1
    qrels = {"a": 1, "b": 1, "c": 1}
    ev = evaluate({"q": qrels}, {"q": ranking("x", "a", "c", "b")}, ["r-precision", "p@1"])
    assert ev.per_query["r-precision"]["q"] == 2 / 3
    assert ev.per_query["precision@1"]["q"] == 0.0


def test_negative_grades_are_judged_but_not_relevant():
    qrels = {"a": -1, "b": 1}
    rank = ranking("a", "b")
    assert one(qrels, rank, "mrr") == 1 / 2
    assert one(qrels, rank, "ndcg") == (1 / log2(3)) / 1
    assert one(qrels, rank, "judged@2") == 1.0


def test_exp_and_linear_gain_differ_on_grades_above_one():
    qrels = {"a": 1, "b": 3}
    rank = ranking("a", "b")
    assert one(qrels, rank, "ndcg") == pytest.approx((1 + 7 / log2(3)) / (7 + 1 / log2(3)))
    assert one(qrels, rank, "ndcg", gain="linear") == pytest.approx((1 + 3 / log2(3)) / (3 + 1 / log2(3)))


# --------------------------------------------------------------------------- which queries count


def test_missing_and_zero_hit_queries_score_zero_and_count():
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    run = {"q1": ranking("a"), "q3": ranking()}
    ev = evaluate(qrels, run, ["ndcg@10", "mrr", "map", "recall@5", "judged@1"])
    assert ev.evaluated == ["q1", "q2", "q3"]
    assert ev.missing == ["q2", "q3"]
    for metric in ("ndcg@10", "mrr", "map", "recall@5", "judged@1"):
        assert ev.per_query[metric] == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
        assert ev.aggregate[metric] == 1 / 3


def test_queries_without_relevant_judgments_are_left_out_and_listed():
    qrels = {"q1": {"a": 1}, "zeros": {"a": 0, "b": 0}, "empty": {}, "negative": {"a": -1}}
    run = {
        "q1": ranking("a"),
        "zeros": ranking("a"),
        "negative": ranking("x"),
        "stray": ranking("a"),
        "stray2": ranking(),
    }
    ev = evaluate(qrels, run, ["mrr"])
    assert ev.evaluated == ["q1"]
    assert ev.no_relevant == ["zeros", "empty", "negative"]
    assert ev.unjudged_queries == ["stray", "stray2"]
    assert ev.per_query["mrr"] == {"q1": 1.0}
    assert ev.aggregate["mrr"] == 1.0
    assert ev.missing == []


def test_a_query_with_grades_below_the_threshold_is_evaluated_and_scores_zero():
    # evaluated = has a grade > 0; binary metrics then find R = 0 and give 0
    ev = evaluate({"q": {"a": 1}}, {"q": ranking("a")}, ["recall@5", "map", "ndcg"], relevance_threshold=2)
    assert ev.evaluated == ["q"]
    assert ev.per_query["recall@5"]["q"] == 0.0
    assert ev.per_query["map"]["q"] == 0.0
    assert ev.per_query["ndcg"]["q"] == 1.0


def test_nothing_to_evaluate_gives_nan_aggregates():
    ev = evaluate({"q": {"a": 0}}, {"q": ranking("a")}, ["mrr"])
    assert ev.evaluated == [] and ev.per_query["mrr"] == {}
    assert math.isnan(ev.aggregate["mrr"])


# --------------------------------------------------------------------------- duplicates


def test_duplicates_keep_the_first_occurrence():
    qrels = {"a": 1, "b": 1}
    rank = ranking("a", "x", "a", "b")  # read as a, x, b
    assert one(qrels, rank, "map") == (1 / 1 + 2 / 3) / 2
    assert one(qrels, rank, "p@3") == 2 / 3
    assert one(qrels, rank, "judged@4") == 2 / 4


def test_a_repeated_unjudged_doc_does_not_push_later_docs_down():
    qrels = {"a": 1}
    assert one(qrels, ranking("x", "x", "a"), "mrr") == 1 / 2
    assert one(qrels, ranking("x", "x", "a"), "mrr@2") == 1 / 2  # head-only read
    assert one(qrels, ranking("x", "x", "a"), "mrr@2", ties="trec") == 1 / 2


def test_duplicates_under_trec_ties_keep_the_first_score():
    # a first scored 1.0, repeated with 3.0: trec order of (a 1.0, b 2.0) is b, a
    qrels = {"a": 1}
    rank = ranking("a", "b", "a", scores=[1.0, 2.0, 3.0])
    assert one(qrels, rank, "mrr", ties="trec") == 1 / 2


# --------------------------------------------------------------------------- ties


def test_engine_ties_keep_the_given_order_trec_ties_sort_doc_ids_descending():
    qrels = {"d1": 1}
    rank = ranking("d1", "d2", "d3", scores=[1.0, 1.0, 1.0])
    assert one(qrels, rank, "mrr") == 1.0
    assert one(qrels, rank, "mrr", ties="trec") == 1 / 3  # d3, d2, d1


def test_trec_ties_compare_doc_ids_as_strings():
    qrels = {"d10": 1}
    rank = ranking("d10", "d9", scores=[5.0, 5.0])
    assert one(qrels, rank, "mrr", ties="trec") == 1 / 2  # "d9" > "d10"


def test_trec_ties_sort_by_score_first():
    qrels = {"a": 1}
    rank = ranking("a", "b", "c", scores=[1.0, 3.0, 2.0])  # not in score order
    assert one(qrels, rank, "mrr") == 1.0
    assert one(qrels, rank, "mrr", ties="trec") == 1 / 3
    assert one(qrels, rank, "hit@2", ties="trec") == 0.0


def test_trec_ties_at_the_cutoff_can_pull_a_later_doc_into_the_top_k():
    # scores 3, 2, 2, 2: at @2 the tie group {b, c, d} is ordered d, c, b
    qrels = {"d": 1}
    rank = ranking("a", "b", "c", "d", scores=[3.0, 2.0, 2.0, 2.0])
    assert one(qrels, rank, "hit@2") == 0.0
    assert one(qrels, rank, "hit@2", ties="trec") == 1.0
    assert one(qrels, rank, "ndcg@2", ties="trec") == pytest.approx(1 / log2(3))


# --------------------------------------------------------------------------- aggregate, worst


def test_aggregate_is_the_exact_unrounded_mean():
    qrels = {f"q{i}": {"r": 1} for i in range(1, 4)}
    run = {
        "q1": ranking("r"),
        "q2": ranking("x1", "x2", "r"),
        "q3": ranking("x1", "x2", "x3", "x4", "x5", "x6", "r"),
    }
    ev = evaluate(qrels, run, ["mrr"])
    assert ev.per_query["mrr"] == {"q1": 1.0, "q2": 1 / 3, "q3": 1 / 7}
    assert ev.aggregate["mrr"] == math.fsum([1.0, 1 / 3, 1 / 7]) / 3  # 0.492063...
    assert ev.aggregate["mrr"] != round(ev.aggregate["mrr"], 4)


def test_worst_lists_the_lowest_queries_first_ties_by_qid():
    qrels = {q: {"r": 1} for q in ("b", "a", "c", "d")}
    run = {"b": ranking("x", "r"), "a": ranking("x", "r"), "c": ranking("r"), "d": ranking("x")}
    ev = evaluate(qrels, run, ["mrr"])
    assert ev.worst("mrr") == [("d", 0.0), ("a", 0.5), ("b", 0.5), ("c", 1.0)]
    assert ev.worst("MRR", n=2) == [("d", 0.0), ("a", 0.5)]
    assert ev.worst(Metric("mrr"), n=0) == []
    with pytest.raises(ValueError, match="not evaluated"):
        ev.worst("map")


def test_metric_keys_are_canonical_and_deduplicated():
    ev = evaluate(
        {"q": QRELS}, {"q": RUN}, ["P@5", "precision@5", "nDCG@3", "success@2", "RPrec", Metric("map")]
    )
    assert list(ev.per_query) == ["precision@5", "ndcg@3", "hit@2", "r-precision", "map"]
    assert ev.metrics == (
        Metric("precision", 5),
        Metric("ndcg", 3),
        Metric("hit", 2),
        Metric("r-precision"),
        Metric("map"),
    )
    assert isinstance(ev, Evaluation)


def test_a_single_metric_string_is_accepted():
    assert list(evaluate({"q": QRELS}, {"q": RUN}, "map").aggregate) == ["map"]


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text,name,k,canonical",
    [
        ("nDCG@10", "ndcg", 10, "ndcg@10"),
        ("ndcg", "ndcg", None, "ndcg"),
        ("MRR@10", "mrr", 10, "mrr@10"),
        ("mrr", "mrr", None, "mrr"),
        ("Recall@100", "recall", 100, "recall@100"),
        ("P@5", "precision", 5, "precision@5"),
        ("precision@5", "precision", 5, "precision@5"),
        ("MAP", "map", None, "map"),
        ("map@1000", "map", 1000, "map@1000"),
        ("R-Precision", "r-precision", None, "r-precision"),
        ("rprec", "r-precision", None, "r-precision"),
        ("hit@3", "hit", 3, "hit@3"),
        ("success@1", "hit", 1, "hit@1"),
        ("judged@10", "judged", 10, "judged@10"),
        (" ndcg @ 10 ", "ndcg", 10, "ndcg@10"),
    ],
)
def test_parse_metric(text, name, k, canonical):
    metric = parse_metric(text)
    assert metric == Metric(name, k)
    assert (metric.name, metric.k, str(metric)) == (name, k, canonical)
    assert parse_metric(str(metric)) == metric
    assert parse_metric(metric) is metric


@pytest.mark.parametrize(
    "text,message",
    [
        ("ndgc@10", r"unknown metric 'ndgc@10' \(did you mean 'ndcg'\?\); known metrics: ndcg"),
        ("precison@5", r"did you mean 'precision'"),
        ("sucess@5", r"did you mean 'hit'"),
        ("bpreff", r"unknown metric 'bpreff' \(did you mean 'bpref'\?\); known metrics: .*judged@k"),
        ("xyzzy", r"unknown metric 'xyzzy'; known metrics: .*judged@k"),
        ("@10", r"unknown metric"),
        ("ndcg@0", r"'ndcg@0'.*positive integer, got 0"),
        ("map@0", r"'map@0'.*positive integer"),
        ("p@-1", r"'precision@-1'.*positive integer"),
        ("ndcg@x", r"'ndcg@x'.*positive integer, got 'x'"),
        ("ndcg@1.5", r"positive integer, got '1.5'"),
        ("ndcg@", r"positive integer, got ''"),
        ("recall@ten", r"positive integer"),
        ("r-precision@5", r"'r-precision' takes no cutoff"),
        ("rprec@10", r"takes no cutoff"),
        ("hit", r"'hit' needs a cutoff, e.g. hit@10"),
        ("rbp(2)", r"'rbp': p in \(0, 1\), got 2.0"),
        ("rbp(0)@10", r"p in \(0, 1\)"),
        ("rbp(nan)", r"p must be a number, got 'nan'"),
        ("rbp(q=0.5)", r"rbp's parameter is p, got 'q'"),
        ("iprec", r"'iprec' needs its parameter recall, e.g. iprec\(0.5\)"),
        ("iprec(1.5)", r"recall in \[0, 1\]"),
        ("ndcg(0.5)@10", r"ndcg takes no parameter"),
        ("judged'@10", r"'judged' cannot be scored on judged documents only"),
        ("condensed(judged_ret@10)", r"cannot be scored on judged documents only"),
        ("condensed(ndcg'@10)", r"condensed twice"),
        ("ndcg'@x", r"positive integer, got 'x'"),
        ("judged", r"needs a cutoff"),
    ],
)
def test_parse_errors_are_one_line_value_errors(text, message):
    with pytest.raises(ValueError, match=message) as info:
        parse_metric(text)
    assert "\n" not in str(info.value)


def test_metric_validates_when_built_directly():
    assert Metric("p", 5) == Metric("precision", 5)
    assert Metric("NDCG", 3) == parse_metric("ndcg@3")
    assert str(Metric("ndcg", np.int64(10))) == "ndcg@10"
    for bad in (("ndcg", 0), ("ndcg", 2.0), ("ndcg", True), ("nope", None), ("rprec", 3)):
        with pytest.raises(ValueError):
            Metric(*bad)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Metric("map").k = 3  # frozen
    assert len({Metric("map"), parse_metric("MAP")}) == 1


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"gain": "log"}, "gain must be one of exp, linear"),
        ({"ties": "random"}, "ties must be one of engine, trec"),
        ({"relevance_threshold": -1}, "relevance_threshold must be an integer >= 0"),
        ({"average_over": "all"}, "average_over must be one of relevant, judged, run"),
        ({"depth": 0}, "depth must be an integer >= 1"),
        ({"relevance_threshold": 1.5}, "relevance_threshold"),
    ],
)
def test_evaluate_rejects_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        evaluate({"q": QRELS}, {"q": RUN}, ["map"], **kwargs)


def test_evaluate_needs_a_metric():
    with pytest.raises(ValueError, match="no metrics"):
        evaluate({"q": QRELS}, {"q": RUN}, [])


def test_parsing_metric_names_does_not_import_numpy():
    code = (
        "import sys, pytest_retrieval.measures.metrics as m; m.parse_metric('ndcg@10'); "
        "assert 'numpy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_evaluate_takes_the_suites_profile_words() -> None:
    """``profile="trec"`` is ``gain="linear"`` and ``profile="exp"`` is ``gain="exp"``, as in a
    suite's ``evaluation.profile`` and the commands' ``--profile`` (issue #26)."""
    import pytest

    from pytest_retrieval.measures.metrics import evaluate
    from pytest_retrieval.types import Ranking

    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": Ranking(["b", "a"], [2.0, 1.0])}
    linear = evaluate(qrels, run, "ndcg@10", gain="linear").aggregate
    assert evaluate(qrels, run, "ndcg@10", profile="trec").aggregate == linear
    assert (
        evaluate(qrels, run, "ndcg@10", profile="exp").aggregate == evaluate(qrels, run, "ndcg@10").aggregate
    )
    assert evaluate(qrels, run, "ndcg@10", profile="exp").aggregate != linear
    with pytest.raises(ValueError, match="profile must be 'exp' or 'trec'"):
        evaluate(qrels, run, "ndcg@10", profile="linear")
    with pytest.raises(ValueError, match="disagree"):
        evaluate(qrels, run, "ndcg@10", profile="exp", gain="linear")
