"""Our metric engine against trec_eval (via pytrec_eval) on thousands of random queries.

trec_eval conventions this file relies on (source files of usnistgov/trec_eval, as
bundled by pytrec_eval-terrier, and pytrec_eval's own binding):

* Ordering (form_res_rels.c, ``comp_sim_docno``): score descending, then doc id
  descending by ``strcmp`` -- our ``ties="trec"``. strcmp on UTF-8 bytes orders like
  Python's code-point comparison of ``str``. (pytrec_eval.cpp first std::sorts each
  run by score, doc id *ascending*, but trec_eval's qsort then decides; the comparator
  is total for distinct ids, so the order is comp_sim_docno's.)
* Duplicate doc ids in a ranking are an error in trec_eval (form_res_rels.c, "duplicate
  docs") and cannot exist in pytrec_eval's ``{doc: score}`` dict: we feed it the first
  occurrence of each id, which is the occurrence we keep.
* Which queries appear (pytrec_eval src/pytrec_eval.cpp, ``RelevanceEvaluator_evaluate``):
  it loops over the *run's* queries and skips those without qrels. A qrels query absent
  from the run is absent from its output, so our 0 for such a query (counted, listed in
  ``missing``) is checked on its own. pytrec_eval/__init__.py also drops queries whose
  qrels dict is empty (cvangysel/pytrec_eval#57).
* Queries with no grade > 0: trec_eval still reports them (all 0: m_map.c divides only
  when ``rel_so_far``, m_recall.c / m_Rprec.c return 0 for ``num_rel == 0``). We leave
  them out of the averages (``no_relevant``), so they are not compared. They are not
  even given to pytrec_eval: when every grade of a query is negative, form_res_rels.c
  sizes ``rel_levels`` by that negative maximum and m_ndcg_cut.c starts its ideal-DCG
  loop at level -1 -- undefined ground.
* Negative grades (form_res_rels.c): ``rel < 0`` is "in the pool but unjudged"
  (RELVALUE_UNJUDGED), never relevant and not counted in ``rel_levels``: the same
  results as our "negative = non-relevant".
* nDCG (m_ndcg.c, m_ndcg_cut.c): gain = the grade (our ``gain="linear"``), discount
  log2(rank + 1), ideal ordering from all judged grades > 0; ``relevance_level`` is
  ignored, as by us. With a zero ideal DCG the value stays 0.
* Cutoffs past the end of the ranking (m_P.c, m_recall.c, m_map_cut.c, m_success.c):
  padded with non-relevant docs, so P_k divides by k.
* recip_rank (m_recip_rank.c) has no cutoff: it matches our ``mrr``; our ``mrr@k``
  matches recip_rank of the run truncated to k *after* trec ordering.
* ``relevance_level`` (trec_eval -l, the ``relevance_level`` argument of pytrec_eval;
  must be >= 1) is our ``relevance_threshold``: recall, P, map, map_cut, Rprec,
  recip_rank and success count grade >= level; num_rel too (form_res_rels.c).
"""

from __future__ import annotations

import math
import random
from typing import Dict, List, Tuple

import pytest
import pytrec_eval  # noqa: E402  (test dependency: the reference)

from pytest_retrieval.measures.metrics import evaluate, parse_metric
from pytest_retrieval.measures.registry import MEASURES
from pytest_retrieval.types import Ranking

KS = (1, 2, 3, 5, 10, 20, 100)
TOL = 1e-9

# our metric -> trec_eval measure (as named in pytrec_eval's output)
PAIRS: List[Tuple[str, str]] = [
    ("ndcg", "ndcg"),
    ("map", "map"),
    ("mrr", "recip_rank"),
    ("r-precision", "Rprec"),
]
for _k in KS:
    PAIRS += [
        (f"ndcg@{_k}", f"ndcg_cut_{_k}"),
        (f"recall@{_k}", f"recall_{_k}"),
        (f"precision@{_k}", f"P_{_k}"),
        (f"map@{_k}", f"map_cut_{_k}"),
        (f"hit@{_k}", f"success_{_k}"),
    ]
# the measures of measures/formulas_trec.py and the set/count ones (trec_eval's names as
# pytrec_eval prints them; gm_map per query is log(max(AP, 0.00001)), see assert_matches)
PAIRS += [
    ("precision", "set_P"),
    ("recall", "set_recall"),
    ("set_f(1)", "set_F"),
    ("set_map", "set_map"),
    ("num_ret", "num_ret"),
    ("num_rel", "num_rel"),
    ("num_rel_ret", "num_rel_ret"),
    ("bpref", "bpref"),
    ("infap", "infAP"),
    ("gm_map", "gm_map"),
    ("11pt_avg", "11pt_avg"),
    ("bing", "binG"),
    ("ndcg_rel", "ndcg_rel"),
    ("rndcg", "Rndcg"),
    ("g", "G"),
]
IPREC_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # m_iprec_at_recall.c
RPREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # m_Rprec_mult.c
PAIRS += [(f"iprec({x:g})", f"iprec_at_recall_{x:.2f}") for x in IPREC_LEVELS]
PAIRS += [(f"rprec_mult({x:g})", f"Rprec_mult_{x:.2f}") for x in RPREC_MULTS]
CUTS = ",".join(str(k) for k in KS)
TREC_MEASURES = {
    "set_P",
    "set_recall",
    "set_F",
    "set_map",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "bpref",
    "infAP",
    "gm_map",
    "11pt_avg",
    "binG",
    "ndcg_rel",
    "Rndcg",
    "G",
    "iprec_at_recall",
    "Rprec_mult",
    "ndcg",
    "map",
    "recip_rank",
    "Rprec",
    f"ndcg_cut.{CUTS}",
    f"recall.{CUTS}",
    f"P.{CUTS}",
    f"map_cut.{CUTS}",
    f"success.{CUTS}",
}


# --------------------------------------------------------------------------- random data


def _doc_id(rng: random.Random) -> str:
    n = rng.randrange(150)
    style = rng.random()
    if style < 0.75:
        return f"d{n}"  # "d1" < "d10" < "d2": order by string, not number
    if style < 0.85:
        return f"D{n}"
    if style < 0.95:
        return f"doc-{n}-x"
    return f"é{n}"  # non-ASCII: strcmp on UTF-8 bytes = code-point order


def _scores(rng: random.Random, n: int) -> List[float]:
    style = rng.random()
    if style < 0.4:
        return [float(rng.randrange(4)) for _ in range(n)]  # many ties
    if style < 0.7:
        return [round(rng.uniform(-1, 1), 1) for _ in range(n)]  # some ties
    return [rng.uniform(0, 30) for _ in range(n)]  # distinct


def random_case(seed: int, n_queries: int, max_grade: int, duplicates: bool = False):
    """qrels and Run with short runs, runs shorter than k, ties, unjudged docs,
    queries without relevant docs, missing queries, empty rankings, unjudged queries."""
    rng = random.Random(seed)
    qrels: Dict[str, Dict[str, int]] = {}
    run: Dict[str, Ranking] = {}
    grades = list(range(max_grade + 1))
    for i in range(n_queries):
        qid = f"q{i}"
        pool = list(dict.fromkeys(_doc_id(rng) for _ in range(rng.randint(1, 60))))
        judged: Dict[str, int] = {}
        no_relevant = rng.random() < 0.08
        for d in pool:
            if rng.random() < 0.5:
                g = 0 if no_relevant else rng.choice(grades + [0])
                if rng.random() < 0.04:
                    g = -1
                judged[d] = g
        qrels[qid] = judged
        kind = rng.random()
        if kind < 0.04:
            continue  # not in the run
        if kind < 0.07:
            run[qid] = Ranking([], [])
            continue
        candidates = pool + [f"u{j}" for j in range(rng.randint(0, 40))]
        length = rng.choice([rng.randint(1, 4), rng.randint(1, 25), rng.randint(10, 100)])
        docs = rng.sample(candidates, min(length, len(candidates)))
        scores = _scores(rng, len(docs))
        if duplicates:
            for _ in range(rng.randint(1, 5)):
                j = rng.randrange(len(docs))
                docs.insert(rng.randrange(len(docs) + 1), docs[j])
                scores.insert(0, _scores(rng, 1)[0])
        if rng.random() < 0.7:  # engines usually return descending scores, ties any order
            pairs = sorted(zip(docs, scores), key=lambda p: -p[1])
            docs, scores = [d for d, _ in pairs], [s for _, s in pairs]
        run[qid] = Ranking(docs, scores)
    for i in range(5):
        run[f"extra{i}"] = Ranking([f"d{i}"], [1.0])  # not judged: ignored
    return qrels, run


# --------------------------------------------------------------------------- helpers


def trec_order(ranking: Ranking) -> List[Tuple[str, float]]:
    """First occurrence of each doc, sorted as trec_eval sorts (written independently
    of the engine: one Python sort on (score, doc id), both descending)."""
    first: Dict[str, float] = {}
    for d, s in zip(ranking.doc_ids, ranking.scores):
        first.setdefault(d, s)
    return sorted(first.items(), key=lambda p: (p[1], p[0]), reverse=True)


def trec_input(qrels, run, depth=None):
    """pytrec_eval's inputs: qrels of evaluable queries only, {qid: {doc: score}} runs."""
    judged = {q: dict(j) for q, j in qrels.items() if any(g > 0 for g in j.values())}
    scores = {q: dict(trec_order(r)[:depth]) for q, r in run.items()}
    return judged, scores


def assert_matches(ours, trec, pairs, where=""):
    checked = 0
    for metric, measure in pairs:
        for qid in ours.evaluated:
            value = ours.per_query[metric][qid]
            if qid not in trec:  # absent from the run: trec_eval has no row
                # num_rel is the judgments' R whatever the run (trec_eval -c counts it so)
                assert qid in ours.missing and (value == 0.0 or metric == "num_rel"), (metric, qid, value)
                continue
            expected = trec[qid][measure]
            if math.isnan(expected) and qid in ours.missing:
                # an empty ranking: m_iprec_at_recall.c / m_11pt_avg.c divide 0 by num_ret = 0
                assert measure.startswith(("iprec_at_recall", "11pt_avg")), (measure, qid)
                expected = 0.0
            if measure == "gm_map":  # trec_eval keeps log(max(AP, MIN_GEO_MEAN)) per query
                value, expected = max(value, 0.00001), math.exp(expected)
            assert abs(value - expected) <= TOL, (
                f"{where} {metric} vs {measure} on {qid}: ours {value!r}, trec_eval {expected!r}"
            )
            checked += 1
    return checked


OUR_METRICS = [m for m, _ in PAIRS]


# --------------------------------------------------------------------------- tests


def test_every_measure_trec_eval_has_is_compared_with_it():
    # A measure declared with a trec_eval name has its cases in PAIRS; one whose name or
    # alias trec_eval knows must declare that name (and so get its cases).
    trec_names = {name.lower() for name in pytrec_eval.supported_measures}
    for m in MEASURES:
        if {m.name, *m.aliases} & trec_names:
            assert m.trec_eval or m.trec_eval_cut or m.trec_eval_param, (
                f"{m.name}: declare its trec_eval name"
            )
        if m.trec_eval:
            ours = str(parse_metric(m.trec_eval))
            assert (ours, m.trec_eval) in PAIRS, f"{m.name}: no parity case against {m.trec_eval}"
        if m.trec_eval_param:
            cases = [p for p in PAIRS if p[1].startswith(m.trec_eval_param + "_")]
            assert len(cases) >= 10, f"{m.name}: no parity cases against {m.trec_eval_param}"
        for k in KS if m.trec_eval_cut else ():
            assert (f"{m.name}@{k}", f"{m.trec_eval_cut}_{k}") in PAIRS, f"{m.name}@{k}: no parity case"
    for ours, measure in PAIRS:  # each trec_eval spelling parses to the metric compared with it
        assert parse_metric(measure) == parse_metric(ours), (ours, measure)
        family = measure.rsplit("_", 1)[0] if measure[-1].isdigit() and "_" in measure else measure
        assert family in TREC_MEASURES or f"{family}.{CUTS}" in TREC_MEASURES, measure


@pytest.mark.parametrize(
    "seed,max_grade,level",
    [
        (1, 3, 1),
        (2, 3, 2),
        (3, 3, 3),
        (4, 1, 1),
        (5, 2, 1),
    ],
)
def test_every_metric_matches_trec_eval(seed, max_grade, level):
    qrels, run = random_case(seed, 700, max_grade)
    ours = evaluate(qrels, run, OUR_METRICS, gain="linear", ties="trec", relevance_threshold=level)
    tq, tr = trec_input(qrels, run)
    # average_over: relevant (the default): the queries with a relevant judgment
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES, relevance_level=level).evaluate(tr)

    checked = assert_matches(ours, trec, PAIRS, f"seed={seed} level={level}")
    assert checked > 500 * len(PAIRS)
    # the query lists
    assert set(ours.evaluated) == set(tq)
    assert set(ours.no_relevant) == set(qrels) - set(tq)
    assert set(ours.missing) == {q for q in tq if q not in run or len(run[q]) == 0}
    assert ours.unjudged_queries == [f"extra{i}" for i in range(5)]
    # zero-hit rankings give 0 in trec_eval too
    for qid in ours.missing:
        if qid in trec:
            assert all(v == 0 or math.isnan(v) or m in ("num_rel", "gm_map") for m, v in trec[qid].items())


@pytest.mark.parametrize("k", [1, 3, 10])
def test_mrr_at_k_is_recip_rank_of_the_run_cut_at_k(k):
    qrels, run = random_case(11, 600, 3)
    for level in (1, 2):
        ours = evaluate(qrels, run, [f"mrr@{k}"], ties="trec", relevance_threshold=level)
        tq, tr = trec_input(qrels, run, depth=k)
        trec = pytrec_eval.RelevanceEvaluator(tq, {"recip_rank"}, relevance_level=level).evaluate(tr)
        assert assert_matches(ours, trec, [(f"mrr@{k}", "recip_rank")]) > 400


def test_exp_gain_is_linear_trec_ndcg_on_exponentiated_grades():
    # trec_eval's ndcg gain is the grade itself; grades mapped to 2^g - 1 give our
    # default "exp" gain.
    qrels, run = random_case(21, 700, 3)
    ours = evaluate(qrels, run, ["ndcg"] + [f"ndcg@{k}" for k in KS], ties="trec")
    exp_qrels = {q: {d: (2**g - 1 if g > 0 else g) for d, g in j.items()} for q, j in qrels.items()}
    tq, tr = trec_input(exp_qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, {"ndcg", f"ndcg_cut.{CUTS}"}).evaluate(tr)
    pairs = [("ndcg", "ndcg")] + [(f"ndcg@{k}", f"ndcg_cut_{k}") for k in KS]
    assert assert_matches(ours, trec, pairs) > 500 * len(pairs)


@pytest.mark.parametrize("ties", ["trec", "engine"])
@pytest.mark.parametrize("cut_only", [False, True])
def test_duplicates_keep_first_occurrence_like_trec_eval_on_deduplicated_run(ties, cut_only):
    # cut_only: with no full-depth metric only the head of each ranking is read, and a
    # repeat inside it must still pull later docs up.
    qrels, run = random_case(31, 700, 3, duplicates=True)
    assert sum(len(set(r.doc_ids)) < len(r) for r in run.values()) > 500
    if ties == "engine":  # trec order, duplicates kept where they are
        rng = random.Random(32)
        run = {q: _trec_sorted_with_duplicates(r, rng) for q, r in run.items()}
    pairs = [p for p in PAIRS if p[0].endswith(("@5", "@10", "r-precision"))] if cut_only else PAIRS
    for level in (1, 2):
        ours = evaluate(
            qrels, run, [m for m, _ in pairs], gain="linear", ties=ties, relevance_threshold=level
        )
        tq, tr = trec_input(qrels, run)
        trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES, relevance_level=level).evaluate(tr)
        assert assert_matches(ours, trec, pairs) > 500 * len(pairs)


def _trec_sorted_with_duplicates(ranking: Ranking, rng: random.Random) -> Ranking:
    """The first occurrences in trec order, then as many repeats as ``ranking`` had,
    each a copy of some doc put anywhere after that doc (so first occurrences keep
    their order)."""
    order = trec_order(ranking)
    docs, scores = [d for d, _ in order], [s for _, s in order]
    for _ in range(len(ranking) - len(order)):
        j = rng.randrange(len(docs))
        at = rng.randint(j + 1, len(docs))
        docs.insert(at, docs[j])
        scores.insert(at, scores[j])
    return Ranking(docs, scores)


def test_engine_order_matches_trec_eval_when_the_run_is_already_in_trec_order():
    # ties="engine" reads the ranking as given; given trec_eval's own order it must agree.
    qrels, run = random_case(41, 700, 3)
    ordered = {q: Ranking.from_pairs(trec_order(r)) for q, r in run.items()}
    ours = evaluate(qrels, ordered, OUR_METRICS, gain="linear", ties="engine")
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, TREC_MEASURES).evaluate(tr)
    assert assert_matches(ours, trec, PAIRS) > 500 * len(PAIRS)


def test_aggregate_is_the_mean_of_trec_eval_values_with_missing_queries_as_zero():
    qrels, run = random_case(51, 500, 3)
    ours = evaluate(qrels, run, ["map", "ndcg@10"], gain="linear", ties="trec")
    tq, tr = trec_input(qrels, run)
    trec = pytrec_eval.RelevanceEvaluator(tq, {"map", "ndcg_cut.10"}).evaluate(tr)
    for metric, measure in [("map", "map"), ("ndcg@10", "ndcg_cut_10")]:
        values = [trec[q][measure] if q in trec else 0.0 for q in ours.evaluated]
        assert abs(ours.aggregate[metric] - sum(values) / len(values)) <= TOL
