"""The measures of measures/formulas_trec.py (and the set and count ones) against trec_eval
through pytrec_eval, beyond the per-query cases of test_metrics_trec_eval.py: judged
documents only (condensed lists, trec_eval -J), the figures over the queries (gm_map's
geometric mean, the counts' sums), long and non-ASCII ids."""

from __future__ import annotations

import math

import pytest
import pytrec_eval

from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.types import Ranking

from .test_metrics_trec_eval import PAIRS, TOL, TREC_MEASURES, random_case, trec_input

CONDENSABLE = [(m, t) for m, t in PAIRS if parse_metric(m).name not in ("judged", "judged_ret")]
MIN_GEO_MEAN = 0.00001  # trec_eval.h


def _compare(ours, trec, pairs, metric_of=lambda m: m, where=""):
    """Per query: ours against trec_eval's value; NaN in trec_eval is its 0/0 of an empty
    (or, with -J, an all-unjudged) ranking, where we say 0."""
    checked = 0
    for metric, measure in pairs:
        for qid in ours.evaluated:
            value = ours.per_query[metric_of(metric)][qid]
            if qid not in trec:
                assert value == 0.0 or measure == "num_rel", (metric, qid, value)
                continue
            expected = trec[qid][measure]
            if math.isnan(expected):
                assert measure.startswith(("iprec_at_recall", "11pt_avg")), (measure, qid)
                expected = 0.0
            if measure == "gm_map":
                value, expected = max(value, MIN_GEO_MEAN), math.exp(expected)
            assert abs(value - expected) <= TOL, (
                f"{where} {metric_of(metric)} vs {measure} on {qid}: {value} {expected}"
            )
            checked += 1
    return checked


def _prime(metric: str) -> str:
    return str(parse_metric(f"condensed({metric})"))


@pytest.mark.parametrize("seed,level", [(61, 1), (62, 2)])
def test_condensed_metrics_are_trec_eval_judged_docs_only(seed, level):
    # trec_eval -J (form_res_rels.c judged_docs_only_flag): documents without a judgment, and
    # negative grades, leave the ranking before any measure is computed.
    qrels, run = random_case(seed, 600, 3)
    metrics = [_prime(m) for m, _ in CONDENSABLE]
    ours = evaluate(qrels, run, metrics, gain="linear", ties="trec", relevance_threshold=level)
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(
        tq, TREC_MEASURES, relevance_level=level, judged_docs_only_flag=True
    ).evaluate(tr)
    checked = _compare(ours, trec, CONDENSABLE, _prime, f"seed={seed} -J")
    assert checked > 400 * len(CONDENSABLE)
    # and they differ from the plain metrics where unjudged documents were ranked
    plain = evaluate(qrels, run, ["ndcg@10"], gain="linear", ties="trec")
    assert plain.aggregate["ndcg@10"] < ours.aggregate["ndcg'@10"]


def test_figures_over_the_queries_are_trec_eval_s():
    # gm_map: te_calc_avg_meas_s_gm (meas_avg.c), exp of the mean of log(max(AP, 0.00001)),
    # a missing query counted with log(MIN_GEO_MEAN) as trec_eval -c does; the counts: the sum.
    qrels, run = random_case(71, 500, 3)
    metrics = ["gm_map", "num_ret", "num_rel", "num_rel_ret", "map", "bpref"]
    ours = evaluate(qrels, run, metrics, gain="linear", ties="trec")
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, {"gm_map", "num_ret", "num_rel", "num_rel_ret"}).evaluate(tr)
    logs = [trec[q]["gm_map"] if q in trec else math.log(MIN_GEO_MEAN) for q in ours.evaluated]
    assert abs(ours.aggregate["gm_map"] - math.exp(math.fsum(logs) / len(logs))) <= TOL
    assert ours.aggregate["gm_map"] < ours.aggregate["map"]
    for count in ("num_ret", "num_rel_ret"):
        assert ours.aggregate[count] == sum(trec[q][count] for q in ours.evaluated if q in trec)
    assert ours.aggregate["num_rel"] == sum(sum(g >= 1 for g in tq[q].values()) for q in ours.evaluated)
    per_query = list(ours.per_query["bpref"].values())
    assert ours.aggregate["bpref"] == pytest.approx(sum(per_query) / len(per_query), abs=1e-12)


def _long_unicode(doc: str) -> str:
    # long ids, CJK, an emoji (4 UTF-8 bytes), a combining accent: strcmp order = code points
    return {0: "x" * 300 + doc, 1: "長い文書" + doc, 2: doc + "🙂", 3: "e\u0301" + doc}[len(doc) % 4]


@pytest.mark.parametrize("level", [1, 2])
def test_long_and_unicode_ids(level):
    qrels, run = random_case(81, 500, 3)
    qrels = {"ü-" + q: {_long_unicode(d): g for d, g in j.items()} for q, j in qrels.items()}
    run = {"ü-" + q: Ranking([_long_unicode(d) for d in r.doc_ids], list(r.scores)) for q, r in run.items()}
    ours = evaluate(qrels, run, [m for m, _ in PAIRS], gain="linear", ties="trec", relevance_threshold=level)
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES, relevance_level=level).evaluate(tr)
    assert _compare(ours, trec, PAIRS) > 400 * len(PAIRS)


def test_bpref_and_infap_read_negative_grades_as_pooled_unjudged():
    # form_res_rels.c: a negative grade is RELVALUE_UNJUDGED: bpref skips it, infAP counts it
    # in the pool (u), a document without a judgment is RELVALUE_NONPOOL.
    qrels = {"q": {"a": 1, "n": 0, "u": -1, "b": 2}}
    run = {"q": Ranking(["u", "x", "n", "a", "b"], [5.0, 4.0, 3.0, 2.0, 1.0])}
    ours = evaluate(qrels, run, ["bpref", "infap"], ties="trec")
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"bpref", "infAP"}).evaluate(
        {"q": dict(zip(run["q"].doc_ids, run["q"].scores))}
    )
    assert ours.per_query["bpref"]["q"] == pytest.approx(trec["q"]["bpref"], abs=TOL)
    assert ours.per_query["infap"]["q"] == pytest.approx(trec["q"]["infAP"], abs=TOL)
    assert ours.per_query["bpref"]["q"] == 0.0  # both relevant below the one judged non-relevant (N = 1)
