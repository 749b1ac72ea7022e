"""ERR, RBP, NCG, judged_ret and the condensed (judged-only) metrics against reference
implementations written here from the papers' definitions, one query at a time, and against
ir_measures where it has the measure (ERR@k: its gdeval provider; RBP: cwl_eval; Judged@k:
its judged provider; nDCG(judged_only=True): pytrec_eval)."""

from __future__ import annotations

import math
import random
from typing import Dict, List

import ir_measures
import pytest

from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking

from .test_metrics_trec_eval import random_case, trec_order

TOL = 1e-9


def _ranked(qrels, run, qid) -> List[str]:
    """trec_eval's order of the run's first occurrences (ties: doc id descending)."""
    return [d for d, _ in trec_order(run[qid])] if qid in run else []


def _evaluated(qrels) -> List[str]:
    return [q for q, j in qrels.items() if any(g > 0 for g in j.values())]


# --------------------------------------------------------------------------- references


def ref_err(grades: List[int], k, gmax: int) -> float:
    """Chapelle et al. 2009, Algorithm 2: p = 1; for r: R = (2^g - 1) / 2^gmax;
    ERR += p R / r; p *= 1 - R."""
    p, err = 1.0, 0.0
    for r, g in enumerate(grades[:k] if k else grades, 1):
        stop = (2 ** max(g, 0) - 1) / 2**gmax
        err += p * stop / r
        p *= 1 - stop
    return err


def ref_rbp(rels: List[bool], k, p: float) -> float:
    """Moffat and Zobel 2008, eq. 5: (1 - p) sum_{i=1}^{d} r_i p^(i-1)."""
    return (1 - p) * sum(p ** (i - 1) for i, rel in enumerate(rels[:k] if k else rels, 1) if rel)


def ref_ncg(grades: List[int], ideal: List[int], k, gain) -> float:
    """Jarvelin and Kekalainen 2002: CG[k] / ideal CG[k]."""
    cut = (lambda x: x[:k]) if k else (lambda x: x)
    icg = sum(gain(g) for g in cut(ideal) if g > 0)
    return sum(gain(g) for g in cut(grades) if g > 0) / icg if icg else 0.0


def ref_ndcg(grades: List[int], ideal: List[int], k) -> float:
    def dcg(gs):
        return sum(g / math.log2(i + 2) for i, g in enumerate(gs[:k]) if g > 0)

    return dcg(grades) / dcg(ideal)


def ref_ap(rels: List[bool], num_rel: int) -> float:
    hits, total = 0, 0.0
    for i, rel in enumerate(rels, 1):
        if rel:
            hits += 1
            total += hits / i
    return total / num_rel


def condense(ranked: List[str], judged: Dict[str, int]) -> List[str]:
    """Sakai 2007: the ranked list with every document without a judgment removed (and the
    negative grades, trec_eval's pooled-but-unjudged)."""
    return [d for d in ranked if judged.get(d, -1) >= 0]


# --------------------------------------------------------------------------- against them


@pytest.mark.parametrize("seed,max_grade", [(91, 3), (92, 1), (93, 4)])
def test_err_rbp_ncg_match_the_papers(seed, max_grade):
    qrels, run = random_case(seed, 400, max_grade)
    ks = (None, 1, 5, 10, 20)
    ps = (0.5, 0.8, 0.95)
    metrics = [f"err@{k}" if k else "err" for k in ks] + [f"ncg@{k}" if k else "ncg" for k in ks]
    metrics += [f"rbp({p})@{k}" if k else f"rbp({p})" for p in ps for k in ks]
    for gain, gain_of in (("linear", lambda g: g), ("exp", lambda g: 2**g - 1)):
        ours = evaluate(qrels, run, metrics, gain=gain, ties="trec")
        gmax = max(g for j in qrels.values() for g in j.values() if _evaluated({0: j}))
        for qid in _evaluated(qrels):
            judged = qrels[qid]
            grades = [judged.get(d, 0) for d in _ranked(qrels, run, qid)]
            ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
            for k in ks:
                suffix = f"@{k}" if k else ""
                assert ours.per_query[f"err{suffix}"][qid] == pytest.approx(ref_err(grades, k, gmax), abs=TOL)
                want = ref_ncg(grades, ideal, k, gain_of)
                assert ours.per_query[f"ncg{suffix}"][qid] == pytest.approx(want, abs=TOL)
                for p in ps:
                    want = ref_rbp([g >= 1 for g in grades], k, p)
                    assert ours.per_query[f"rbp({p}){suffix}"][qid] == pytest.approx(want, abs=TOL)


def test_condensed_metrics_match_sakai_s_definition():
    qrels, run = random_case(94, 400, 3)
    metrics = ["ndcg'@10", "map'", "precision'@5", "err'@10", "rbp(0.8)'"]
    ours = evaluate(qrels, run, metrics, gain="linear", ties="trec")
    gmax = max(g for q in _evaluated(qrels) for g in qrels[q].values())
    differs = 0
    for qid in _evaluated(qrels):
        judged = qrels[qid]
        kept = condense(_ranked(qrels, run, qid), judged)
        grades = [judged[d] for d in kept]
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
        num_rel = sum(g >= 1 for g in judged.values())
        want = {
            "ndcg'@10": ref_ndcg(grades, ideal, 10),
            "map'": ref_ap([g >= 1 for g in grades], num_rel),
            "precision'@5": sum(g >= 1 for g in grades[:5]) / 5,
            "err'@10": ref_err(grades, 10, gmax),
            "rbp(0.8)'": ref_rbp([g >= 1 for g in grades], None, 0.8),
        }
        for metric, value in want.items():
            assert ours.per_query[metric][qid] == pytest.approx(value, abs=TOL), (metric, qid)
        differs += len(kept) < len(_ranked(qrels, run, qid))
    assert differs > 100


def test_condensed_spellings_and_a_run_of_unjudged_documents():
    qrels = {"q": {"a": 2, "b": 0}}
    run = {"q": Ranking(["new1", "new2", "a", "b"], [4.0, 3.0, 2.0, 1.0])}
    ours = evaluate(qrels, run, ["ndcg@10", "condensed(ndcg@10)", "NDCG'@10", "judged@10"])
    assert list(ours.per_query) == ["ndcg@10", "ndcg'@10", "judged@10"]
    assert ours.per_query["ndcg'@10"]["q"] == 1.0 > ours.per_query["ndcg@10"]["q"]
    only_new = evaluate(qrels, {"q": Ranking(["new1"], [1.0])}, ["ndcg'@10", "precision'"])
    assert only_new.per_query["ndcg'@10"]["q"] == 0.0 and only_new.per_query["precision'"]["q"] == 0.0


# --------------------------------------------------------------------------- ir_measures


def _distinct_scores_case(seed: int, n: int, max_grade: int):
    """Numeric query ids (gdeval reads only those) and distinct scores (each tool breaks ties
    its own way)."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(n):
        qid = str(i + 1)
        pool = [f"d{j}" for j in rng.sample(range(200), rng.randint(2, 40))]
        qrels[qid] = {d: rng.choice(range(max_grade + 1)) for d in pool if rng.random() < 0.6}
        if not any(g > 0 for g in qrels[qid].values()):
            qrels[qid][pool[0]] = max_grade
        candidates = pool + [f"u{j}" for j in range(30)]
        docs = rng.sample(candidates, rng.randint(1, min(50, len(candidates))))
        scores = rng.sample(range(10_000), len(docs))
        run[qid] = Ranking(docs, [s / 7.0 for s in scores])
    return qrels, run


def _ir_measures(measures, qrels, run):
    qr = [ir_measures.Qrel(q, d, g) for q, j in qrels.items() for d, g in j.items()]
    rn = [ir_measures.ScoredDoc(q, d, s) for q, r in run.items() for d, s in zip(r.doc_ids, r.scores)]
    out: Dict[str, Dict[str, float]] = {}
    for m in ir_measures.iter_calc(measures, qr, rn):
        out.setdefault(str(m.measure), {})[m.query_id] = float(m.value)
    return out


def test_err_is_ir_measures_gdeval_with_grades_up_to_4():
    # gdeval.pl fixes gmax = 4 and prints 5 decimals
    qrels, run = _distinct_scores_case(101, 300, 4)
    ours = evaluate(qrels, run, ["err@10", "err@20"], ties="trec")
    theirs = _ir_measures([ir_measures.ERR @ 10, ir_measures.ERR @ 20], qrels, run)
    for k in (10, 20):
        got = theirs[f"ERR@{k}"]
        assert len(got) == 300
        for qid, value in got.items():
            assert abs(ours.per_query[f"err@{k}"][qid] - value) <= 5e-6 + TOL, (k, qid)


@pytest.mark.parametrize("level", [1, 2])
def test_rbp_and_judged_ret_are_ir_measures(level):
    qrels, run = _distinct_scores_case(102, 300, 3)
    ours = evaluate(
        qrels,
        run,
        ["rbp(0.8)", "rbp(0.5)", "judged_ret@10", "judged_ret@30"],
        ties="trec",
        relevance_threshold=level,
    )
    rbp08, rbp05 = ir_measures.RBP(rel=level, p=0.8), ir_measures.RBP(rel=level, p=0.5)
    theirs = _ir_measures([rbp08, rbp05, ir_measures.Judged @ 10, ir_measures.Judged @ 30], qrels, run)
    pairs = {
        "rbp(0.8)": str(rbp08),
        "rbp(0.5)": str(rbp05),
        "judged_ret@10": "Judged@10",
        "judged_ret@30": "Judged@30",
    }
    for metric, name in pairs.items():
        assert len(theirs[name]) == 300, name
        for qid, value in theirs[name].items():
            assert abs(ours.per_query[metric][qid] - value) <= TOL, (metric, qid)
    # judged@k divides by k: different from Judged@k on the rankings shorter than k
    short = [q for q, r in run.items() if len(r) < 30]
    assert short and all(
        ours.per_query["judged_ret@30"][q] * len(run[q]) / 30
        == pytest.approx(evaluate(qrels, run, ["judged@30"]).per_query["judged@30"][q])
        for q in short
    )


def test_condensed_ndcg_is_ir_measures_judged_only():
    qrels, run = _distinct_scores_case(103, 300, 3)
    ours = evaluate(qrels, run, ["ndcg'@10", "ndcg'"], gain="linear", ties="trec")
    theirs = _ir_measures(
        [ir_measures.nDCG(judged_only=True) @ 10, ir_measures.nDCG(judged_only=True)], qrels, run
    )
    for metric, name in (("ndcg'@10", "nDCG(judged_only=True)@10"), ("ndcg'", "nDCG(judged_only=True)")):
        assert len(theirs[name]) == 300
        for qid, value in theirs[name].items():
            assert abs(ours.per_query[metric][qid] - value) <= TOL, (metric, qid)


# --------------------------------------------------------------------------- exported names


def _examples(m) -> List[str]:
    param = "" if m.param is None else ("(0.5)" if m.param.default is None else f"({m.param.default:g})")
    ks = {"none": [""], "optional": ["", "@10"], "required": ["@10"]}[m.cutoff]
    return [m.name + param + k for k in ks]


def test_every_ir_measures_name_computes_the_same_values():
    from pytest_retrieval.measures.metrics import parse_metric
    from pytest_retrieval.measures.registry import MEASURES

    qrels, run = _distinct_scores_case(104, 200, 4)
    pairs = []
    for m in MEASURES:
        for text in _examples(m) if m.ir_measures else []:
            name = parse_metric(text).external_names()["ir_measures"]
            if name:
                pairs.append((str(parse_metric(text)), name))
    assert len(pairs) >= 23
    ours = evaluate(qrels, run, [p for p, _ in pairs], gain="linear", ties="trec")
    theirs = _ir_measures([ir_measures.parse_measure(n) for _, n in pairs], qrels, run)
    for metric, name in pairs:
        got = theirs[str(ir_measures.parse_measure(name))]
        tol = 5e-6 + TOL if name.startswith("ERR") else TOL  # gdeval prints 5 decimals
        assert len(got) == len(qrels), name
        for qid, value in got.items():
            assert abs(ours.per_query[metric][qid] - value) <= tol, (metric, name, qid)


def test_every_ranx_name_computes_the_same_values():
    import numpy as np
    import ranx

    from pytest_retrieval.measures.metrics import parse_metric
    from pytest_retrieval.measures.registry import MEASURES

    qrels, run = _distinct_scores_case(105, 200, 3)
    pairs = []
    for m in MEASURES:
        for text in _examples(m) if m.ranx else []:
            name = parse_metric(text).external_names()["ranx"]
            if name:
                pairs.append((str(parse_metric(text)), name))
    assert len(pairs) >= 8
    ours = evaluate(qrels, run, [p for p, _ in pairs], gain="linear", ties="trec")
    rq = ranx.Qrels.from_dict({q: {d: g for d, g in j.items()} for q, j in qrels.items()})
    rr = ranx.Run.from_dict({q: dict(zip(r.doc_ids, r.scores)) for q, r in run.items()})
    for metric, name in pairs:
        values = ranx.evaluate(rq, rr, name, return_mean=False)
        mine = np.array([ours.per_query[metric][q] for q in rq.keys()])
        assert np.abs(mine - np.asarray(values)).max() <= TOL, (metric, name)
