"""Benchmark: does a p95 latency gate flake under CPU contention, and does it catch a 30% slowdown?

    python benchmarks/latency_gate_flakiness.py [--runs 100] [--queries 200] [--rounds 2]
                                                [--slowdown 0.30] [--ceiling-factor 1.15]

What it does (everything is printed):

* A real embedded BM25 retriever (``EmbeddedBackend``, ``BM25Spec`` over title + text) on
  BEIR SciFact (``../shared/data/scifact`` beside the repo root: 5,183 abstracts; the 300
  test queries, then train queries, the first ``--queries`` of them). Without ../shared it falls
  back to ``example_suite/data`` (671 abstracts, 100 queries).
* A second process busy-loops on one core for the whole benchmark (it stops by itself
  after a time bound, and is also ended at exit).
* Three arms are timed in every pass, interleaved query by query so that the load on the
  machine hits them alike: ``base`` (the unchanged pipeline), ``base2`` (the same pipeline
  again, for the A/B null) and ``slow`` (the same pipeline wrapped so that every query does
  ``--slowdown`` more work: after each search it busy-waits for 30% of that search's own
  thread CPU time). Each pass: 5 warm-up searches per arm, then ``--rounds`` rounds over
  the queries in a fresh seeded order, the arms rotating inside each query. Per sample:
  wall time (``perf_counter``, what the plugin measures today) and thread CPU time.
* Calibration: ``--calibration-passes`` passes first; a gate's ceiling is
  ``--ceiling-factor`` x the median of their p95 (how a team would write its ``p95_ms``).
* Then ``--runs`` passes. Each gate below judges the ``base`` arm (should pass) and the
  ``slow`` arm (should fail) of every pass with that ceiling; the A/B gates judge
  base2/base (should pass) and slow/base (should fail) against ``--max-ratio``.

Gates compared (p95; CIs: ``stats.latency.latency_percentile_ci`` / ``ab_ratio``,
``--resamples`` (2,000) bootstrap resamples, one-sided 95% bounds):

1. point:      p95 of the wall samples <= ceiling (the plugin's floors today)
2. CI:         the 95% lower bound of the wall p95 <= ceiling (fail only when confidently
               above it)
3. CI, min-of-r: as 2, over each query's fastest of its ``--rounds`` wall times (one value
               per query: the query's cost without the scheduler's stalls)
4. CI, CPU:    as 2, over thread CPU time instead of wall time (in-process engines only)
5. A/B ratio:  the 95% lower bound of p95(candidate) / p95(base) <= max ratio, samples
               paired by (query, round) (``stats.latency.ab_ratio(paired=True)``)
6. A/B ratio, min-of-r: as 5 over the per-query fastest times

Gate 5 is what the plugin's ``p95_ratio`` ceilings do (``latency.baseline``; 4 rounds under
``repetitions: auto``). Measured on this 2-core machine with the busy loop (100 passes each):
``--rounds 2``: gate 5 passed 100/100 unchanged and failed 95/100 slowed, gate 6 100/100 and
78/100; ``--rounds 4``: gate 5 100/100 and 100/100, gate 6 100/100 and 95/100; the fixed
ceilings (gates 1-4) passed 87-99/100 unchanged and caught 18-100/100 slowed, depending on
how the calibration passes happened to run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_retrieval.backends.base import BM25Spec  # noqa: E402
from pytest_retrieval.backends.embedded.backend import EmbeddedBackend  # noqa: E402
from pytest_retrieval.stats.latency import ab_ratio, latency_percentile_ci, repetitions_needed  # noqa: E402
from pytest_retrieval.types import Document, Query  # noqa: E402

SPEC = BM25Spec(fields=(("title", 1.0), ("text", 1.0)))
K = 100
WARMUP = 5


# ----------------------------------------------------------------------------- data


def load_data(max_queries: int) -> Tuple[str, List[Document], List[Query]]:
    shared = Path(os.environ.get("PYTEST_RETRIEVAL_SHARED", ROOT.parent / "shared"))
    scifact = shared / "data" / "scifact"
    if (scifact / "corpus.jsonl").exists():
        from pytest_retrieval.io.beir import load_beir
        from pytest_retrieval.io.qrels import load_qrels

        js = load_beir(scifact, "test")
        qids = list(js.qrels)
        train = load_qrels(scifact / "qrels" / "train.tsv")
        qids += [q for q in train if q not in js.qrels and q in js.queries]
        qids = qids[:max_queries]
        queries = [Query(q, js.queries[q]) for q in qids]
        return f"BEIR SciFact ({scifact})", list(js.corpus), queries
    from pytest_retrieval.io.corpus import load_corpus
    from pytest_retrieval.io.queries import load_queries

    data = ROOT / "example_suite" / "data"
    texts = load_queries(data / "queries.jsonl")
    queries = [Query(q, t) for q, t in list(texts.items())[:max_queries]]
    corpus = load_corpus(data / "corpus.jsonl")
    return "example_suite/data (../shared not found)", corpus, queries


# ----------------------------------------------------------------------------- arms


class Slowed:
    """The same backend doing ``extra`` more work per query: after each search, busy-wait
    until ``extra`` x that search's thread CPU time has been burnt."""

    def __init__(self, inner: EmbeddedBackend, extra: float):
        self.inner = inner
        self.extra = extra

    def search_one(self, spec, query, k):
        c0 = time.thread_time()
        res = self.inner.search_one(spec, query, k)
        target = time.thread_time() + self.extra * (time.thread_time() - c0)
        while time.thread_time() < target:
            pass
        return res


def one_pass(
    arms: Dict[str, object], queries: Sequence[Query], rounds: int, rng: np.random.Generator
) -> Dict[str, Dict[str, np.ndarray]]:
    """Interleaved latency pass: wall and CPU ms per arm, shaped (rounds, queries)."""
    names = list(arms)
    for name in names:  # warm-up, as the plugin's latency.warmup
        for q in queries[:WARMUP]:
            arms[name].search_one(SPEC, q, K)
    n = len(queries)
    wall = {a: np.empty((rounds, n)) for a in names}
    cpu = {a: np.empty((rounds, n)) for a in names}
    for r in range(rounds):
        for pos, qi in enumerate(rng.permutation(n).tolist()):
            shift = (r + pos) % len(names)
            for name in names[shift:] + names[:shift]:
                c0 = time.thread_time()
                t0 = time.perf_counter()
                arms[name].search_one(SPEC, queries[qi], K)
                t1 = time.perf_counter()
                c1 = time.thread_time()
                wall[name][r, qi] = (t1 - t0) * 1000.0
                cpu[name][r, qi] = (c1 - c0) * 1000.0
    return {"wall": wall, "cpu": cpu}


# ----------------------------------------------------------------------------- gates

STATS = {
    "wall": lambda m: m["wall"].ravel(),
    "wall, min-of-r": lambda m: m["wall"].min(axis=0),
    "cpu": lambda m: m["cpu"].ravel(),
}
GATES = [  # (label, statistic, rule)
    ("1 point p95 <= ceiling       (wall, all samples)", "wall", "point"),
    ("2 CI lower bound <= ceiling  (wall, all samples)", "wall", "ci"),
    ("3 CI lower bound <= ceiling  (wall, min-of-r per query)", "wall, min-of-r", "ci"),
    ("4 CI lower bound <= ceiling  (thread CPU, all samples)", "cpu", "ci"),
]
AB_GATES = [
    ("5 A/B ratio lower bound <= max (wall, paired samples)", "wall"),
    ("6 A/B ratio lower bound <= max (wall, min-of-r per query)", "wall, min-of-r"),
]


def arm(measure: Dict[str, Dict[str, np.ndarray]], name: str) -> Dict[str, np.ndarray]:
    return {kind: measure[kind][name] for kind in measure}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--slowdown", type=float, default=0.30)
    ap.add_argument("--ceiling-factor", type=float, default=1.15)
    ap.add_argument("--max-ratio", type=float, default=1.15)
    ap.add_argument("--calibration-passes", type=int, default=3)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples per CI")
    ap.add_argument("--no-load", action="store_true", help="skip the busy-loop process")
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--json", metavar="PATH", help="also write the per-pass numbers here")
    args = ap.parse_args(argv)

    t_start = time.perf_counter()
    source, corpus, queries = load_data(args.queries)
    backend = EmbeddedBackend()
    backend.prepare(corpus, None)
    backend.search_one(SPEC, queries[0], K)  # builds the BM25 index
    arms = {"base": backend, "base2": backend, "slow": Slowed(backend, args.slowdown)}
    n_samples = len(queries) * args.rounds
    print(f"data: {source}: {len(corpus)} documents, {len(queries)} queries")
    print(f"retriever: embedded BM25 {dict(SPEC.fields)}, top {K}, one query per request")
    print(
        f"pass: {WARMUP} warm-up searches per arm, then {args.rounds} rounds x "
        f"{len(queries)} queries = {n_samples} samples per arm (p95 needs >= "
        f"{repetitions_needed(95)} for 20 samples in its tail; min-of-r gives "
        f"{len(queries)} values), arms interleaved query by query"
    )
    print(f"slow arm: +{args.slowdown:.0%} work per query (busy-wait on thread CPU time)")
    print(f"CIs: one-sided {args.confidence:.0%} bounds, {args.resamples} bootstrap resamples")

    budget = 3600
    load = None
    if not args.no_load:
        code = f"import time\nend = time.monotonic() + {budget:d}\nwhile time.monotonic() < end:\n    pass\n"
        load = subprocess.Popen([sys.executable, "-c", code])
        print(
            f"load: busy-loop process pid {load.pid} on one core (stops by itself after "
            f"{budget} s); machine: {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f} before start"
        )
        time.sleep(0.5)

    rng = np.random.default_rng(args.seed)
    records: List[dict] = []
    try:
        # ---- calibration
        cal_p95 = {s: [] for s in STATS}
        for _ in range(args.calibration_passes):
            m = arm(one_pass(arms, queries, args.rounds, rng), "base")
            for s, f in STATS.items():
                cal_p95[s].append(float(np.percentile(f(m), 95)))
        ceilings = {s: args.ceiling_factor * float(np.median(v)) for s, v in cal_p95.items()}
        print(
            f"calibration ({args.calibration_passes} passes, base arm): p95 "
            + "; ".join(f"{s} {', '.join(f'{x:.3f}' for x in v)} ms" for s, v in cal_p95.items())
        )
        print(
            f"ceilings = {args.ceiling_factor} x median calibrated p95: "
            + "; ".join(f"{s} {c:.3f} ms" for s, c in ceilings.items())
        )

        # ---- the runs
        counts = {g[0]: [0, 0] for g in GATES + AB_GATES}  # [unchanged passed, slowed failed]
        t_runs = time.perf_counter()
        for i in range(args.runs):
            measure = one_pass(arms, queries, args.rounds, rng)
            base, base2, slow = (arm(measure, a) for a in ("base", "base2", "slow"))
            rec = {"pass": i}
            cis = {
                (stat, which): latency_percentile_ci(
                    STATS[stat](m), 95, args.confidence, args.resamples, seed=i
                )
                for stat in STATS
                for which, m in (("unchanged", base), ("slowed", slow))
            }
            for label, stat, rule in GATES:
                c = ceilings[stat]
                for which in ("unchanged", "slowed"):
                    point, lo, hi = cis[stat, which]
                    ok = (point if rule == "point" else lo) <= c
                    rec[f"{stat}/{which}"] = [point, lo, hi]
                    if which == "unchanged" and ok:
                        counts[label][0] += 1
                    if which == "slowed" and not ok:
                        counts[label][1] += 1
            for label, stat in AB_GATES:
                f = STATS[stat]
                for which, m in (("unchanged", base2), ("slowed", slow)):
                    r = ab_ratio(
                        f(base),
                        f(m),
                        q=95,
                        confidence=args.confidence,
                        seed=i,
                        n_resamples=args.resamples,
                        paired=True,
                        max_ratio=args.max_ratio,
                    )
                    rec[f"ab {stat}/{which}"] = [r.ratio, r.lo, r.hi]
                    if which == "unchanged" and r.passed:
                        counts[label][0] += 1
                    if which == "slowed" and not r.passed:
                        counts[label][1] += 1
            records.append(rec)
            if (i + 1) % 10 == 0:
                print(f"  {i + 1}/{args.runs} passes ({time.perf_counter() - t_runs:.0f} s)", flush=True)
    finally:
        if load is not None:
            load.terminate()
            load.wait(timeout=10)

    # ---- report
    def spread(key: str) -> str:
        v = np.array([r[key][0] for r in records])
        return f"{np.median(v):.3f} [{v.min():.3f} .. {v.max():.3f}]"

    print()
    print(
        f"{args.runs} passes; ceiling factor {args.ceiling_factor}, A/B max ratio "
        f"{args.max_ratio}, confidence {args.confidence}"
    )
    print("p95 per pass, median [min .. max] ms:")
    for s in STATS:
        print(
            f"  {s:<16} unchanged {spread(s + '/unchanged')}   slowed {spread(s + '/slowed')}"
            f"   (ceiling {ceilings[s]:.3f})"
        )
    for _, s in AB_GATES:
        print(
            f"  A/B ratio {s:<16} unchanged {spread('ab ' + s + '/unchanged')}   slowed "
            f"{spread('ab ' + s + '/slowed')}"
        )
    print()
    print(f"{'gate':<60} {'unchanged passes':>17} {'slowed fails':>13}")
    for label, (passed, failed) in counts.items():
        print(f"{label:<60} {passed:>11}/{args.runs:<5} {failed:>7}/{args.runs:<5}")
    print(f"\ntotal time {time.perf_counter() - t_start:.0f} s")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"args": vars(args), "ceilings": ceilings, "counts": counts, "passes": records}, indent=1
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
