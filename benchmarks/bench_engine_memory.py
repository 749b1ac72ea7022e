"""Benchmark: the in-memory metric engine against pytrec_eval and ranx, warm and with construction.

    python benchmarks/bench_engine_memory.py [--queries 10000] [--hits 1000] [--repeat 3] [--no-ranx]

Input: ``bench_metrics.build_input`` (fixed seed; N queries x H hits, 3-decimal scores so
ties happen, 1-20 judged docs a query). Metrics: ndcg@10, mrr@10, recall@100, map (trec_eval
ndcg_cut_10, recip_rank, recall_100, map), linear gain, trec_eval's tie order.

Contenders (best of ``--repeat``, taking turns inside each round, GC off while timed; wall
time and CPU time of the whole process, all threads -- ranx runs numba in parallel):

* ours, with construction: ``evaluate(qrels, run)`` from the dicts of ``Ranking`` (qrels
  and run become columns each time);
* ours, warm: ``evaluate(QrelsColumns, RunColumns)`` on columns built beforehand (what a
  suite or a sweep holds once the engines' rankings are columns);
* pytrec_eval, with construction: ``RelevanceEvaluator(qrels, measures).evaluate(run)``
  on ``{qid: {doc: score}}`` built beforehand; warm: ``evaluate(run)`` on an evaluator
  built beforehand (it still converts the run dict at every call);
* ranx (if installed), with construction: ``Qrels(qrels)``, ``Run(run)``, ``evaluate``;
  warm: ``evaluate`` on ``Qrels``/``Run`` built beforehand, after one untimed call that
  compiles its numba kernels.

Every per-query value of ours is checked against pytrec_eval (1e-9); ranx orders ties its
own way, so its numbers are only timed.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from typing import Callable, Dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy

from bench_metrics import build_input, to_trec_run  # noqa: E402

from pytest_retrieval.measures.columnar import QrelsColumns, RunColumns  # noqa: E402
from pytest_retrieval.measures.metrics import evaluate  # noqa: E402

OURS = ["ndcg@10", "mrr@10", "recall@100", "map"]
TREC = {"ndcg_cut.10", "recip_rank", "recall.100", "map"}
RANX = ["ndcg@10", "mrr@10", "recall@100", "map"]


def timed(fn: Callable[[], object]):
    gc.collect()
    gc.disable()
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        return time.perf_counter() - w0, time.process_time() - c0, out
    finally:
        gc.enable()


def build_contenders(qrels, run, trec_run, *, with_ranx: bool):
    """(name -> timed callable, a note when ranx is not compared)."""
    import pytrec_eval

    qc = QrelsColumns.from_qrels(qrels)
    rc = RunColumns.from_run(run, qc, ties="trec")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC)
    contenders: Dict[str, Callable[[], object]] = {
        "ours, with construction": lambda: evaluate(qrels, run, OURS, gain="linear", ties="trec"),
        "ours, warm (columns)": lambda: evaluate(qc, rc, OURS, gain="linear", ties="trec"),
        "pytrec_eval, with construction": lambda: pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(
            trec_run
        ),
        "pytrec_eval, warm": lambda: evaluator.evaluate(trec_run),
    }
    ranx_note = None
    if with_ranx:
        try:
            import ranx
        except ImportError:
            ranx_note = "ranx not installed (pip install ranx): not compared"
        else:
            rq, rr = ranx.Qrels(qrels), ranx.Run(trec_run)
            ranx.evaluate(rq, rr, RANX)  # compile the numba kernels, untimed

            def ranx_construct():
                return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(trec_run), RANX)

            def ranx_warm():
                return ranx.evaluate(rq, rr, RANX)

            contenders["ranx, with construction"] = ranx_construct
            contenders["ranx, warm"] = ranx_warm

    return contenders, ranx_note


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--hits", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--no-ranx", action="store_true")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    qrels, run = build_input(args.queries, args.hits, args.seed)
    trec_run = to_trec_run(run)
    print(f"input: {len(run)} queries x {args.hits} hits (built in {time.perf_counter() - t0:.0f}s)")

    contenders, ranx_note = build_contenders(qrels, run, trec_run, with_ranx=not args.no_ranx)
    best = {name: (float("inf"), float("inf")) for name in contenders}
    results = {}
    for _ in range(args.repeat):
        for name, fn in contenders.items():
            wall, cpu, results[name] = timed(fn)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))

    ours = results["ours, with construction"]
    trec = results["pytrec_eval, with construction"]
    worst = 0.0
    compared = 0
    for metric, measure in (("ndcg@10", "ndcg_cut_10"), ("recall@100", "recall_100"), ("map", "map")):
        for q in ours.evaluated:
            worst = max(worst, abs(ours.per_query[metric][q] - trec[q][measure]))
            compared += 1
    warm = results["ours, warm (columns)"]
    same = warm.per_query == ours.per_query

    print(f"best of {args.repeat} (wall / CPU of all threads):")
    for name, (wall, cpu) in best.items():
        print(f"  {name:<32} {wall:7.3f}s / {cpu:7.3f}s")
    if ranx_note:
        print(f"  {ranx_note}")
    print(
        f"{compared} per-query values vs pytrec_eval: max |diff| = {worst:.1e} {'ok' if worst <= 1e-9 else 'MISMATCH'}"
    )
    print(f"warm columns give the same values: {same}")

    def ratio(a: str, b: str) -> str:
        return f"{best[a][0] / best[b][0]:.1f}x wall, {best[a][1] / best[b][1]:.1f}x CPU"

    print("ratios (peer / ours):")
    print(
        f"  pytrec_eval / ours, both with construction: {ratio('pytrec_eval, with construction', 'ours, with construction')}"
    )
    print(
        f"  pytrec_eval / ours, both warm:              {ratio('pytrec_eval, warm', 'ours, warm (columns)')}"
    )
    print(
        f"  pytrec_eval with construction / ours warm:  {ratio('pytrec_eval, with construction', 'ours, warm (columns)')}"
    )
    if "ranx, warm" in best:
        print(
            f"  ranx / ours, both with construction:        {ratio('ranx, with construction', 'ours, with construction')}"
        )
        print(f"  ranx / ours, both warm:                     {ratio('ranx, warm', 'ours, warm (columns)')}")
    return 0 if worst <= 1e-9 and same else 1


if __name__ == "__main__":
    sys.exit(main())
