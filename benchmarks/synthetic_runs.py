"""Synthetic TREC run and qrels files for the benchmarks (not a benchmark itself).

    python benchmarks/synthetic_runs.py --queries 10000 --hits 1000 --out /tmp/bench

Same shape as ``bench_metrics.py``'s in-memory input: doc ids ``D<n>`` drawn from an
8.8M-doc collection, scores descending with 3 decimals (so ties happen, ~25 tied pairs a
query), 1-20 judged docs a query (grades 0-3), ~70% of them retrieved: half at a uniform
random rank, half near the top (rank = H * u^3). Written a block of queries at a time, so
a 100,000-query file needs no more memory than a 1,000-query one. Files are cached: the
same arguments reuse the files already written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Tuple

import numpy as np

COLLECTION = 8_800_000
BLOCK = 500


def paths(out: Path, n_queries: int, n_hits: int, seed: int) -> Tuple[Path, Path]:
    stem = f"q{n_queries}_h{n_hits}_s{seed}"
    return out / f"{stem}.qrels", out / f"{stem}.run"


def write(out: Path, n_queries: int, n_hits: int, seed: int = 20240607) -> Tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = paths(out, n_queries, n_hits, seed)
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    tmp_q, tmp_r = Path(f"{qrels_path}.tmp"), Path(f"{run_path}.tmp")
    ranks = [str(r) for r in range(1, n_hits + 1)]
    with open(tmp_q, "w") as fq, open(tmp_r, "w") as fr:
        for start in range(0, n_queries, BLOCK):
            run_lines = []
            qrel_lines = []
            for i in range(start, min(start + BLOCK, n_queries)):
                qid = f"q{i}"
                drawn = rng.integers(0, COLLECTION, size=n_hits + n_hits // 10 + 10)
                docs = np.unique(drawn, return_index=True)[1]
                docs = drawn[np.sort(docs)][:n_hits]
                scores = np.sort(rng.uniform(5.0, 25.0, size=len(docs)))[::-1]
                score_text = [f"{s:.3f}" for s in scores.tolist()]
                prefix = f"{qid} Q0 D"
                run_lines.append(
                    "".join(
                        f"{prefix}{d} {r} {s} bench\n" for d, r, s in zip(docs.tolist(), ranks, score_text)
                    )
                )
                n_judged = int(rng.integers(1, 21))
                grades = rng.choice(4, size=n_judged, p=[0.4, 0.3, 0.2, 0.1]).tolist()
                judged = {}
                for g in grades:
                    if rng.random() < 0.7:  # retrieved: half anywhere, half near the top
                        u = rng.random()
                        doc = int(docs[int(len(docs) * (u if rng.random() < 0.5 else u**3))])
                    else:
                        doc = int(rng.integers(COLLECTION))
                    judged[doc] = g
                qrel_lines.append("".join(f"{qid} 0 D{d} {g}\n" for d, g in judged.items()))
            fr.write("".join(run_lines))
            fq.write("".join(qrel_lines))
    os.replace(tmp_q, qrels_path)
    os.replace(tmp_r, run_path)
    return qrels_path, run_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--hits", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--out", type=Path, default=Path("/tmp/pytest-retrieval-bench"))
    args = ap.parse_args(argv)
    q, r = write(args.out, args.queries, args.hits, args.seed)
    print(q)
    print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
