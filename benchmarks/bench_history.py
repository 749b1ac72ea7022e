"""What the run history costs (issue #37).

1. The write: a pytest session over a synthetic suite of 10,000 judged queries x 3 retrievers
   (two BM25 leaves and their RRF on the embedded engine, 20,000 documents) with
   ``--retrieval-history`` and nothing else to write, so the session's end does the history's work
   only: the record (the JSON report document with its run section and fingerprints) and its
   append to a SQLite file. Printed: the time of that work (``RetrievalSession.write_outputs``,
   timed around the call) against the time of the rest of the same session. Budget: under 10%.
2. The reads: ``runs()`` and ``points()`` (all of them, and one series) over 1,000 stored runs of
   a SciFact-sized suite (300 queries x 3 retrievers x 6 metrics, each with per-query values).
   Budget: under a second each.

Run: ``python benchmarks/bench_history.py [--queries 10000] [--runs 1000]``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List

SUITE = """\
suite: history-bench
judgments:
  queries: queries.jsonl
  qrels: qrels.tsv
  corpus: corpus.jsonl
evaluation:
  metrics: [ndcg@10, mrr@10, recall@100, map@100, P@10, judged@10]
latency:
  warmup: 5
  max_queries: 1000
retrievers:
  bm25:
    type: bm25
    fields: [title, text]
  text:
    type: bm25
    fields: [text]
  rrf:
    type: rrf
    of: [bm25, text]
floors:
  rrf:
    ndcg@10: 0.0
"""


def _write_suite(folder: Path, n_queries: int, n_docs: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    with open(folder / "corpus.jsonl", "w") as fh:
        for d in range(n_docs):
            words = rng.choices(vocab, k=40)
            fh.write(
                json.dumps({"_id": f"d{d}", "title": " ".join(words[:5]), "text": " ".join(words)}) + "\n"
            )
    with open(folder / "queries.jsonl", "w") as q, open(folder / "qrels.tsv", "w") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for i in range(n_queries):
            docs = rng.sample(range(n_docs), 2)
            q.write(
                json.dumps(
                    {
                        "_id": f"q{i}",
                        "text": f"w{docs[0] % 5000} w{rng.randrange(5000)} w{rng.randrange(5000)}",
                    }
                )
                + "\n"
            )
            for d in docs:
                r.write(f"q{i}\td{d}\t1\n")
    (folder / "retrieval_bench.yaml").write_text(SUITE)


def bench_write(n_queries: int, n_docs: int) -> float:
    import pytest

    from pytest_retrieval.pytest_plugin.session import RetrievalSession

    timed: Dict[str, float] = {}
    original = RetrievalSession.write_outputs

    def write_outputs(self: Any, session: Any) -> None:
        t0 = time.perf_counter()
        try:
            original(self, session)
        finally:
            timed["history"] = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        _write_suite(folder, n_queries, n_docs)
        store = folder / "history.sqlite"
        RetrievalSession.write_outputs = write_outputs  # type: ignore[method-assign]
        try:
            t0 = time.perf_counter()
            code = pytest.main(
                [
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--rootdir",
                    str(folder),
                    str(folder),
                    f"--retrieval-history={store}",
                ]
            )
            total = time.perf_counter() - t0
        finally:
            RetrievalSession.write_outputs = original  # type: ignore[method-assign]
        size = store.stat().st_size
    rest = total - timed["history"]
    ratio = timed["history"] / rest
    print(
        f"\nwrite: {n_queries:,} queries x 3 retrievers (exit {int(code)}): the history's work at the session's end "
        f"{timed['history']:.2f} s, the rest of the session {rest:.2f} s: ratio {ratio:.3f} "
        f"({ratio:.1%}; budget 10%); stored {size / 1e6:.1f} MB"
    )
    return ratio


def _record(i: int, t0: datetime, n_queries: int, rng: random.Random) -> Dict[str, Any]:
    metrics = ["ndcg@10", "mrr@10", "recall@100", "map@100", "P@10", "judged@10"]
    retrievers = []
    for name in ("bm25", "dense", "rrf"):
        per_query = {f"q{q}": {m: rng.random() for m in metrics} for q in range(n_queries)}
        agg = {m: sum(v[m] for v in per_query.values()) / n_queries for m in metrics}
        retrievers.append(
            {
                "name": name,
                "metrics": agg,
                "latency_ms": {"p50": rng.random() * 5, "p95": rng.random() * 20, "p99": 30.0},
                "per_query": per_query,
            }
        )
    return {
        "version": 2,
        "run": {
            "id": uuid.uuid4().hex,
            "time": (t0 + timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "host": "bench",
            "commit": f"{i:040x}",
            "branch": "main",
            "tags": [],
            "partial": False,
            "exitstatus": 0,
        },
        "suites": [
            {
                "suite": "scifact",
                "fingerprint": {"corpus": {"sha256": "x"}},
                "gated": [{"retriever": "rrf", "metric": "ndcg@10", "kind": "floor"}],
                "gates": [{"retriever": "rrf", "metric": "ndcg@10", "passed": True}],
                "retrievers": retrievers,
            }
        ],
    }


def bench_reads(n_runs: int, n_queries: int = 300) -> Dict[str, float]:
    from pytest_retrieval.history import open_store

    rng = random.Random(3)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out: Dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        store = open_store(Path(d) / "history.sqlite")
        start = time.perf_counter()
        for i in range(n_runs):
            store.append(_record(i, t0, n_queries, rng))
        fill = time.perf_counter() - start
        store.close()
        store = open_store(Path(d) / "history.sqlite")  # a fresh reader, as `pytest-retrieval history` is
        calls = {
            "runs()": lambda: store.runs(),
            "points()": lambda: store.points(),
            "points(suite, retriever, metric)": lambda: store.points(
                suite="scifact", retriever="rrf", metric="ndcg@10"
            ),
        }
        for name, call in calls.items():
            best: List[float] = []
            for _ in range(3):
                s = time.perf_counter()
                got = call()
                best.append(time.perf_counter() - s)
            out[name] = min(best)
            print(
                f"reads over {n_runs:,} runs: {name:34} {len(got):6,} rows in {min(best) * 1000:7.1f} ms (budget 1000 ms)"
            )
        store.close()
    print(f"  (filling the store: {n_runs:,} appends in {fill:.1f} s, {fill / n_runs * 1000:.1f} ms each)")
    return out


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=20_000)
    p.add_argument("--runs", type=int, default=1_000)
    args = p.parse_args(argv)
    ratio = bench_write(args.queries, args.docs)
    reads = bench_reads(args.runs)
    ok = ratio < 0.10 and all(v < 1.0 for v in reads.values())
    print(
        f"\n{'within' if ok else 'OVER'} budget: write {ratio:.1%} of the rest of the session; slowest read {max(reads.values()) * 1000:.0f} ms"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
