"""Benchmark: our metric engine against pytrec_eval on the same in-memory run.

    python benchmarks/bench_metrics.py [--queries 10000] [--hits 1000] [--repeat 3]

Input (fixed seed): N queries x H hits, doc ids drawn from an 8.8M-doc collection,
scores descending with 3 decimals (so ties happen, ~25 tied pairs a query), qrels of
1-20 judged docs a query (grades 0-3), ~70% of them retrieved: half at a uniform random
rank, half near the top (rank = H * u^3, u uniform), so top-10 metrics are not all 0.

Timed, best of ``--repeat`` rounds (the contenders take turns in each round), GC off
during a timing as ``timeit`` does:

* ours: ``evaluate(qrels, run, [ndcg@10, mrr@10, recall@100, map], gain="linear",
  ties="trec")`` straight from the ``Ranking`` objects;
* pytrec_eval: ``RelevanceEvaluator(qrels, {ndcg_cut_10, recip_rank, recall_100, map})``
  construction + ``evaluate`` on ``{qid: {doc: score}}`` built beforehand from the same
  Run; and once more including that dict conversion.

Like with like: linear gain and trec_eval's tie order. pytrec_eval's recip_rank has no
cutoff, so it is checked against our ``mrr`` (full depth), and our ``mrr@10`` against
recip_rank on the run cut to its trec-ordered top 10 (both checks untimed). Reading
depth is the same for both sides: MAP reads every hit. Every per-query value must agree
to 1e-9, on every query we evaluate.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import sys
import time
from typing import Callable, Dict, List, Tuple

import numpy as np

from pytest_retrieval.measures.metrics import evaluate
from pytest_retrieval.types import Ranking

OURS = ["ndcg@10", "mrr@10", "recall@100", "map"]
TREC = {"ndcg_cut_10", "recip_rank", "recall_100", "map"}
COLLECTION = 8_800_000
TOL = 1e-9


def build_input(n_queries: int, n_hits: int, seed: int):
    rng = np.random.default_rng(seed)
    qrels: Dict[str, Dict[str, int]] = {}
    run: Dict[str, Ranking] = {}
    for i in range(n_queries):
        qid = f"q{i}"
        drawn = rng.integers(0, COLLECTION, size=n_hits + n_hits // 10 + 10).tolist()
        doc_ids = [f"D{d}" for d in dict.fromkeys(drawn)][:n_hits]
        scores = np.round(np.sort(rng.uniform(5.0, 25.0, size=len(doc_ids)))[::-1], 3)
        run[qid] = Ranking(doc_ids, scores.tolist())
        judged: Dict[str, int] = {}
        n_judged = int(rng.integers(1, 21))
        grades = rng.choice(4, size=n_judged, p=[0.4, 0.3, 0.2, 0.1]).tolist()
        for g in grades:
            if rng.random() < 0.7:  # retrieved: half anywhere, half near the top
                u = rng.random()
                doc = doc_ids[int(len(doc_ids) * (u if rng.random() < 0.5 else u**3))]
            else:
                doc = f"D{int(rng.integers(COLLECTION))}"
            judged[doc] = g
        qrels[qid] = judged
    return qrels, run


def to_trec_run(run: Dict[str, Ranking]) -> Dict[str, Dict[str, float]]:
    return {qid: dict(zip(r.doc_ids, r.scores)) for qid, r in run.items()}


def trec_top(run: Dict[str, Ranking], k: int) -> Dict[str, Dict[str, float]]:
    """The top k in trec_eval's order: score descending, then doc id descending."""
    return {qid: {d: s for s, d in heapq.nlargest(k, zip(r.scores, r.doc_ids))} for qid, r in run.items()}


def timed(fn: Callable[[], object]) -> Tuple[float, object]:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def best_of(repeat: int, contenders: Dict[str, Callable[[], object]]):
    """Best wall time of each contender over ``repeat`` rounds. The contenders take turns
    inside a round, so that load from elsewhere on the machine hits them alike."""
    best = {name: float("inf") for name in contenders}
    results: Dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in contenders.items():
            elapsed, results[name] = timed(fn)
            best[name] = min(best[name], elapsed)
    return best, results


def compare(
    ours: Dict[str, float], trec: Dict[str, Dict[str, float]], measure: str, qids: List[str], label: str
) -> float:
    worst = 0.0
    for qid in qids:
        if qid in trec:  # every query is in the run: a row is missing only on error
            worst = max(worst, abs(ours[qid] - trec[qid][measure]))
    status = "ok" if worst <= TOL else "MISMATCH"
    print(f"  {label:<32} max |diff| = {worst:.1e}  {status}")
    return worst


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--hits", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20240607)
    args = ap.parse_args(argv)

    import pytrec_eval

    t0 = time.perf_counter()
    qrels, run = build_input(args.queries, args.hits, args.seed)
    n_hits = sum(len(r) for r in run.values())
    print(
        f"input: {len(run)} queries, {n_hits} hits, "
        f"{sum(len(j) for j in qrels.values())} judgments "
        f"(built in {time.perf_counter() - t0:.1f}s)"
    )

    def ours():
        return evaluate(qrels, run, OURS, gain="linear", ties="trec")

    def ours_engine_ties():  # the default tie rule; timed for information only
        return evaluate(qrels, run, OURS, gain="linear", ties="engine")

    trec_run = to_trec_run(run)

    def pytrec():
        return pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(trec_run)

    def pytrec_with_conversion():
        return pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(to_trec_run(run))

    best, results = best_of(
        args.repeat,
        {
            "ours": ours,
            "pytrec": pytrec,
            "pytrec_with_conversion": pytrec_with_conversion,
            "ours_engine": ours_engine_ties,
        },
    )
    t_ours, t_trec, t_conv = best["ours"], best["pytrec"], best["pytrec_with_conversion"]
    ev, trec = results["ours"], results["pytrec"]
    del results

    print(f"best of {args.repeat}:")
    for label, seconds in [
        ("pytest_retrieval.evaluate", t_ours),
        ("pytrec_eval construct + evaluate", t_trec),
        ("pytrec_eval dict conversion + construct + eval", t_conv),
        ("(pytest_retrieval.evaluate, ties='engine')", best["ours_engine"]),
    ]:
        print(f"  {label:<48}{seconds:7.3f}s")
    print(
        "  (ties='engine' is the default tie rule: no score-order check; timed for information, not compared)"
    )

    print(
        f"equality on the {len(ev.evaluated)} evaluated queries "
        f"({len(ev.no_relevant)} without a relevant judgment left out):"
    )
    qids = ev.evaluated
    worst = [
        compare(ev.per_query["ndcg@10"], trec, "ndcg_cut_10", qids, "ndcg@10 / ndcg_cut_10"),
        compare(ev.per_query["recall@100"], trec, "recall_100", qids, "recall@100 / recall_100"),
        compare(ev.per_query["map"], trec, "map", qids, "map / map"),
    ]
    full_mrr = evaluate(qrels, run, ["mrr"], ties="trec").per_query["mrr"]
    worst.append(compare(full_mrr, trec, "recip_rank", qids, "mrr / recip_rank"))
    top10 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(trec_top(run, 10))
    worst.append(compare(ev.per_query["mrr@10"], top10, "recip_rank", qids, "mrr@10 / recip_rank on top 10"))
    for metric, measure in (("ndcg@10", "ndcg_cut_10"), ("map", "map")):
        mean = float(np.mean([trec[q][measure] for q in qids]))
        print(f"  mean {metric:<10} ours {ev.aggregate[metric]:.12f}  pytrec_eval {mean:.12f}")

    missing = [q for q in qids if q not in trec]
    if missing:
        print(f"  pytrec_eval has no row for {len(missing)} evaluated queries")
        worst.append(float("inf"))
    print(f"pytrec_eval / pytest_retrieval = {t_trec / t_ours:.1f}x")
    print(f"pytrec_eval incl. dict conversion / pytest_retrieval = {t_conv / t_ours:.1f}x")
    if max(worst) > TOL:
        print("FAILED: results differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
