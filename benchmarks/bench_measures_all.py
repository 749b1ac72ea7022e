"""Benchmark: every measure pytrec_eval computes that the registry declares, ours against
pytrec_eval on the same in-memory run (the input of ``bench_metrics.py``).

    python benchmarks/bench_measures_all.py [--queries 10000] [--hits 1000] [--repeat 2]

The metrics come from the registry (``measures/registry.py``): each measure with a trec_eval
name, at k = 10 when it takes a cutoff, at trec_eval's default parameters when it has one
(11 recall levels, 10 R multiples), and with judged documents only (trec_eval -J) when
``--condensed``. Timed, best of ``--repeat`` with the contenders taking turns: ours
(``evaluate(..., gain="linear", ties="trec")``) against pytrec_eval's construction +
evaluate on ``{qid: {doc: score}}`` built beforehand. Every per-query value must agree to 1e-9
(gm_map: trec_eval keeps log(max(AP, 0.00001)) per query).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_metrics import TOL, best_of, build_input, to_trec_run  # noqa: E402

from pytest_retrieval.measures.metrics import Metric, evaluate  # noqa: E402
from pytest_retrieval.measures.registry import MEASURES  # noqa: E402

IPREC = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)  # m_iprec_at_recall.c
RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # m_Rprec_mult.c


def pairs(condensed: bool) -> Tuple[List[Tuple[str, str]], set]:
    """(our metric, trec_eval's printed name) of every measure trec_eval has; its -m names."""
    out, families = [], set()
    for m in MEASURES:
        if m.trec_eval:
            param = m.param.default if m.param else None
            out.append((Metric(m.name, None, param, condensed), m.trec_eval))
            families.add(m.trec_eval)
        if m.trec_eval_cut:
            out.append((Metric(m.name, 10, None, condensed), f"{m.trec_eval_cut}_10"))
            families.add(f"{m.trec_eval_cut}.10")
        if m.trec_eval_param:
            values = IPREC if m.name == "iprec" else RPREC_MULT
            out += [(Metric(m.name, None, x, condensed), f"{m.trec_eval_param}_{x:.2f}") for x in values]
            families.add(m.trec_eval_param)
    return [(str(a), b) for a, b in out], families


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--hits", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--condensed", action="store_true", help="judged documents only (trec_eval -J)")
    args = ap.parse_args(argv)

    import pytrec_eval

    qrels, run = build_input(args.queries, args.hits, args.seed)
    judged = {q: j for q, j in qrels.items() if any(g > 0 for g in j.values())}
    trec_run = to_trec_run(run)
    todo, families = pairs(args.condensed)
    ours_metrics = [a for a, _ in todo]

    best, results = best_of(
        args.repeat,
        {
            "ours": lambda: evaluate(qrels, run, ours_metrics, gain="linear", ties="trec"),
            "pytrec": lambda: pytrec_eval.RelevanceEvaluator(
                judged, families, judged_docs_only_flag=args.condensed
            ).evaluate(trec_run),
        },
    )
    ev, trec = results["ours"], results["pytrec"]
    worst = 0.0
    for metric, measure in todo:
        for qid in ev.evaluated:
            ours, theirs = ev.per_query[metric][qid], trec[qid][measure]
            if measure == "gm_map":
                ours, theirs = max(ours, 0.00001), math.exp(theirs)
            if math.isnan(theirs):  # 0 / 0 of an empty (-J: all-unjudged) ranking in trec_eval
                theirs = 0.0
            worst = max(worst, abs(ours - theirs))
    print(
        f"{len(todo)} metrics ({len(families)} trec_eval -m names{', -J' if args.condensed else ''}) on "
        f"{args.queries} queries x {args.hits} hits, best of {args.repeat}:"
    )
    print(f"  pytest_retrieval.evaluate          {best['ours']:7.3f}s")
    print(f"  pytrec_eval construct + evaluate   {best['pytrec']:7.3f}s")
    print(f"  {len(todo) * len(ev.evaluated)} per-query values compared: max |diff| = {worst:.1e}")
    print(f"pytrec_eval / pytest_retrieval = {best['pytrec'] / best['ours']:.1f}x")
    if worst > TOL:
        print("FAILED: results differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
