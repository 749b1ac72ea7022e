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
3. the encoding from document-id strings (:meth:`RankingPairs.from_lists`: what reading
   rankings from a baseline's JSON or a stored run adds before the arrays exist), on all the
   queries, and beside it the former encoding (a dict per query filled in a Python loop, then
   a scatter: :func:`former_from_lists`, kept here as the peer) on the same subsample.

Times are CPU time of this process (``time.process_time``), the least of ``--repeat`` runs
(default 3): the machine is shared, and wall time counts the other work on it (printed too).
The values of ours and of the loop are checked to agree (1e-12) on the subsample, and the two
encodings to give the same ``reference_in_current``.

Run: ``python benchmarks/bench_stability.py [--queries 100000] [--k 100] [--sample 2000]
[--encode-sample 20000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

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


def former_from_lists(reference: Sequence[List[str]], current: Sequence[List[str]]) -> np.ndarray:
    """The peer of the encoding: ``from_lists`` before it was vectorised (a dict per query, a
    Python loop over every document, then ids below the row's width matched by a scatter and a
    gather): its ``reference_in_current``."""
    ref_flat: List[int] = []
    cur_flat: List[int] = []
    ref_lens: List[int] = []
    cur_lens: List[int] = []
    for r, c in zip(reference, current):
        ids: Dict[str, int] = {}
        for docs in (r, c):
            if len(set(docs)) != len(docs):
                raise ValueError("a document twice")
        ref_flat.extend([ids.setdefault(d, len(ids)) for d in r])
        cur_flat.extend([ids.setdefault(d, len(ids)) for d in c])
        ref_lens.append(len(r))
        cur_lens.append(len(c))
    ref, cur = _former_padded(ref_flat, ref_lens), _former_padded(cur_flat, cur_lens)
    n, a = ref.shape
    where = np.full((n, a + cur.shape[1] + 1), -1, dtype=np.int64)
    rows = np.arange(n)[:, None]
    ranks = np.broadcast_to(np.arange(cur.shape[1]), cur.shape)
    real = cur != -1
    where[np.broadcast_to(rows, cur.shape)[real], cur[real]] = ranks[real]
    out = np.full(ref.shape, -1, dtype=np.int64)
    has = ref != -1
    out[has] = where[np.broadcast_to(rows, ref.shape)[has], ref[has]]
    return out


def _former_padded(flat: List[int], lens: List[int]) -> np.ndarray:
    lengths = np.asarray(lens, dtype=np.int64)
    out = np.full((len(lens), int(lengths.max())), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(lens)), lengths)
    cols = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[rows, cols] = np.asarray(flat, dtype=np.int64)
    return out


def timed(repeat: int, fn: Callable[[], Any]) -> Tuple[float, float, Any]:
    """(least CPU seconds, least wall seconds, the last result) of ``repeat`` calls."""
    cpu, wall, out = math.inf, math.inf, None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - t0)
    return cpu, wall, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--encode-sample", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n, k, rep = args.queries, args.k, max(1, args.repeat)
    ref, cur = make_rankings(n, k)
    metrics = [f"{m}@{k}" for m in ("rbo", "rbo_min", "rbo_res", "jaccard", "overlap")]
    metrics += ["top1_changed", f"topk_changed@{k}", f"kendall_tau@{k}", f"rank_change@{k}"]
    match_c, match_w, pairs = timed(rep, lambda: RankingPairs.from_arrays(ref, cur))
    meas_c, meas_w, ours = timed(rep, lambda: compare(pairs, metrics))
    ours_c, ours_w = match_c + meas_c, match_w + meas_w

    sample = min(args.sample, n)
    refs, curs = ref[:sample].tolist(), cur[:sample].tolist()
    loop_c, loop_w, loop = timed(1, lambda: python_loop(refs, curs, k))
    scale = n / sample
    names = {"rbo": f"rbo(0.9)@{k}", "rbo_min": f"rbo_min(0.9)@{k}", "rbo_res": f"rbo_res(0.9)@{k}"}
    names.update({"jaccard": f"jaccard@{k}", "tau": f"kendall_tau@{k}"})
    worst = max(float(np.nanmax(np.abs(ours[names[m]][:sample] - np.asarray(loop[m])))) for m in loop)

    print(f"stability: {n:,} queries x top {k}, {len(metrics)} measures ({', '.join(metrics)})")
    print(f"  CPU time (time.process_time), the least of {rep} runs; wall time beside it (a shared machine)")
    print(
        f"  ours (numpy): {ours_c:.2f} s CPU = matching {match_c:.2f} s + measures {meas_c:.2f} s "
        f"(target < 2 s); wall {ours_w:.2f} s"
    )
    print(
        f"  plain Python loop (rbo, rbo_min, rbo_res, jaccard, kendall_tau only): {loop_c:.2f} s CPU on "
        f"{sample:,} queries, scaled x{scale:g} to {loop_c * scale:.1f} s"
    )
    print(
        f"  ratio: the loop takes {loop_c * scale / max(ours_c, 1e-9):.0f}x ours in CPU time, "
        f"{loop_w * scale / max(ours_w, 1e-9):.0f}x in wall time (ours does more measures)"
    )
    print(f"  largest difference ours vs the loop on the {sample:,} queries: {worst:.1e}")
    encoding(ref, cur, min(args.encode_sample, n), rep)


def encoding(ref: np.ndarray, cur: np.ndarray, sample: int, rep: int) -> None:
    """Ours (``from_lists``) on every query and on the sample, the former encoding on the sample."""
    n = ref.shape[0]
    strings_ref = [[f"doc{d}" for d in row] for row in ref.tolist()]
    strings_cur = [[f"doc{d}" for d in row] for row in cur.tolist()]
    all_c, all_w, _ = timed(rep, lambda: RankingPairs.from_lists(strings_ref, strings_cur))
    part_ref, part_cur = strings_ref[:sample], strings_cur[:sample]
    new_c, _, new = timed(rep, lambda: RankingPairs.from_lists(part_ref, part_cur))
    old_c, _, old = timed(rep, lambda: former_from_lists(part_ref, part_cur))
    same = np.array_equal(new.reference_in_current, old)
    print(
        f"  encoding document-id strings (from_lists, matching included): {all_c:.2f} s CPU for all "
        f"{n:,} queries (wall {all_w:.2f} s)"
    )
    print(
        f"  on {sample:,} queries: ours {new_c:.2f} s, the former per-query dict loop {old_c:.2f} s: "
        f"{old_c / max(new_c, 1e-9):.1f}x faster (same reference_in_current: {same})"
    )


if __name__ == "__main__":
    main()
