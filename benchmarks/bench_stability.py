"""What the judgment-free comparison of two rankings costs (issue #33, section 1).

100,000 queries x top 100: a reference ranking and a current one per query (the current one the
reference with a few swaps, a few documents replaced, some queries untouched, some disjoint),
as int arrays. Timed, on the same data in the same run:

1. ours: :meth:`RankingPairs.from_arrays` (matching each document across the two rankings) and
   :func:`compare` of every comparison measure at k = 100 (rbo, rbo_min, rbo_res, jaccard,
   overlap, top1_changed, topk_changed, kendall_tau, rank_change): the target is under 2 s;
2. the peer: a plain Python loop computing the same measures per query (the RBO paper's
   formulas with sets and dicts, Kendall's tau by counting discordant pairs), timed on a
   subsample and scaled to all queries (said in the output);
3. the encoding from document-id strings (:meth:`RankingPairs.from_lists`), apart: what reading
   rankings from a baseline's JSON adds before the arrays exist.

The values of ours and of the loop are checked to agree (1e-12) on the subsample.

Run: ``python benchmarks/bench_stability.py [--queries 100000] [--k 100] [--sample 2000]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_retrieval.measures.stability import RankingPairs, compare  # noqa: E402

P = 0.9


def make_rankings(n: int, k: int, seed: int = 1) -> tuple:
    """(reference, current) int arrays (n, k): ids are ints up to 10 * k per query."""
    rng = np.random.default_rng(seed)
    ref = np.argsort(rng.random((n, 10 * k)), axis=1)[:, :k].astype(np.int64)
    cur = ref.copy()
    kind = rng.random(n)
    rows = np.arange(n)
    swaps = (kind > 0.3) & (kind < 0.9)  # a few swaps and replacements
    for _ in range(3):
        a, b = rng.integers(0, k, n), rng.integers(0, k, n)
        va, vb = cur[rows, a].copy(), cur[rows, b].copy()
        cur[rows[swaps], a[swaps]], cur[rows[swaps], b[swaps]] = vb[swaps], va[swaps]
    new = 10 * k + rng.integers(0, 5 * k, (n, 5))  # ids no reference holds
    for c in range(5):
        at = rng.integers(0, k, n)
        keep = swaps & (rng.random(n) < 0.5)
        cur[rows[keep], at[keep]] = new[keep, c] + c * 5 * k  # distinct per column
    disjoint = kind >= 0.9
    cur[disjoint] = ref[disjoint] + 100 * k
    return ref, cur


def python_loop(refs: Sequence[List[int]], curs: Sequence[List[int]], k: int) -> Dict[str, List[float]]:
    """The peer: the same measures, one query at a time in plain Python."""
    out: Dict[str, List[float]] = {m: [] for m in ("rbo", "rbo_min", "rbo_res", "jaccard", "tau")}
    for a, b in zip(refs, curs):
        a, b = a[:k], b[:k]
        s_, l_ = (a, b) if len(a) <= len(b) else (b, a)
        s, ln = len(s_), len(l_)
        seen_s, seen_l, x, X = set(), set(), 0, []
        for d in range(ln):
            if d < s:
                x += (s_[d] == l_[d]) + (s_[d] in seen_l) + (l_[d] in seen_s)
                seen_s.add(s_[d])
            else:
                x += l_[d] in seen_s
            seen_l.add(l_[d])
            X.append(x)
        c = (1 - P) / P
        x_l, x_s = X[-1], X[s - 1]
        w = [P**d / d for d in range(1, 2 * ln + 1)]
        out["rbo_min"].append(c * (sum((X[d] - x_l) * w[d] for d in range(ln)) - x_l * math.log(1 - P)))
        f = ln + s - x_l
        out["rbo_res"].append(
            P**s
            + P**ln
            - P**f
            - c * (s * sum(w[s:f]) + ln * sum(w[ln:f]) + x_l * (math.log(1 / (1 - P)) - sum(w[:f])))
        )
        ext = sum(X[d] * w[d] for d in range(ln)) + sum(x_s * (d + 1 - s) / s * w[d] for d in range(s, ln))
        out["rbo"].append(c * ext + ((x_l - x_s) / ln + x_s / s) * P**ln)
        out["jaccard"].append(x_l / (len(a) + len(b) - x_l))
        where = {doc: j for j, doc in enumerate(b)}
        js = [where[doc] for doc in a if doc in where]
        m = len(js)
        disc = sum(1 for u in range(m) for v in range(u + 1, m) if js[u] > js[v])
        out["tau"].append((m * (m - 1) / 2 - 2 * disc) / (m * (m - 1) / 2) if m >= 2 else math.nan)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--sample", type=int, default=2000)
    args = ap.parse_args()
    n, k = args.queries, args.k
    ref, cur = make_rankings(n, k)
    metrics = [
        f"rbo@{k}",
        f"rbo_min@{k}",
        f"rbo_res@{k}",
        f"jaccard@{k}",
        f"overlap@{k}",
        "top1_changed",
        f"topk_changed@{k}",
        f"kendall_tau@{k}",
        f"rank_change@{k}",
    ]
    c0, t0 = time.process_time(), time.perf_counter()
    pairs = RankingPairs.from_arrays(ref, cur)
    t1 = time.perf_counter()
    ours = compare(pairs, metrics)
    t2, c2 = time.perf_counter(), time.process_time()

    sample = min(args.sample, n)
    refs, curs = ref[:sample].tolist(), cur[:sample].tolist()
    c3, t3 = time.process_time(), time.perf_counter()
    loop = python_loop(refs, curs, k)
    t4, c4 = time.perf_counter(), time.process_time()
    loop_scaled = (t4 - t3) * n / sample
    loop_cpu_scaled = (c4 - c3) * n / sample
    names = {"rbo": f"rbo(0.9)@{k}", "rbo_min": f"rbo_min(0.9)@{k}", "rbo_res": f"rbo_res(0.9)@{k}"}
    names.update({"jaccard": f"jaccard@{k}", "tau": f"kendall_tau@{k}"})
    worst = max(float(np.nanmax(np.abs(ours[names[m]][:sample] - np.asarray(loop[m])))) for m in loop)

    strings_ref = [[f"doc{d}" for d in row] for row in refs]
    strings_cur = [[f"doc{d}" for d in row] for row in curs]
    t5 = time.perf_counter()
    RankingPairs.from_lists(strings_ref, strings_cur)
    t6 = time.perf_counter()
    encode_scaled = (t6 - t5) * n / sample

    ours_s = t2 - t0
    print(f"stability: {n:,} queries x top {k}, {len(metrics)} measures ({', '.join(metrics)})")
    print(
        f"  ours (numpy): {ours_s:.2f} s wall = matching {t1 - t0:.2f} s + measures {t2 - t1:.2f} s "
        f"(target < 2 s); CPU time {c2 - c0:.2f} s (wall time counts other work on a shared machine)"
    )
    print(
        f"  plain Python loop (rbo, rbo_min, rbo_res, jaccard, kendall_tau only): {t4 - t3:.2f} s on "
        f"{sample:,} queries, scaled x{n / sample:g} to {loop_scaled:.1f} s"
    )
    print(
        f"  ratio: the loop takes {loop_scaled / ours_s:.0f}x ours in wall time, "
        f"{loop_cpu_scaled / max(c2 - c0, 1e-9):.0f}x in CPU time (ours does more measures)"
    )
    print(f"  largest difference ours vs the loop on the {sample:,} queries: {worst:.1e}")
    print(
        f"  encoding document-id strings to arrays (from_lists): {encode_scaled:.1f} s for {n:,} "
        f"queries (timed on {sample:,}, scaled), before the arrays exist"
    )


if __name__ == "__main__":
    main()
